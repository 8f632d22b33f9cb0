package bugdesk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/verify"
	"github.com/signoff-dev/signoff/workflow"
)

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// VerifyCandidate verifies one candidate with the frozen harness in the
// sandbox and records the verdict: VERIFIED goes to the advisory reviewer
// and then awaits approval; REJECTED goes back to fixing while attempts
// are left (else to a person); INCONCLUSIVE goes to a person. It does
// nothing for a candidate that is no longer being verified.
func (d *Desk) VerifyCandidate(ctx context.Context, ws, caseID, candID string) error {
	c, l, err := d.loop(ctx, sys(ws), caseID)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(l.State.Candidates, func(x signoff.Candidate) bool { return x.ID == candID })
	if i < 0 {
		return fmt.Errorf("case %s has no candidate %s", caseID, candID)
	}
	cand := l.State.Candidates[i]
	if c.State != workflow.BugVerifying || cand.Status != signoff.CandidateVerifying {
		if c.State == workflow.BugVerifying && cand.Status == signoff.CandidateVerified {
			return d.review(ctx, ws, caseID, candID) // verified before a restart: go on from the review
		}
		return nil
	}
	h := repair.FrozenHarness(l.State)
	if h == nil || h.ID != cand.HarnessID {
		return d.recordVerdict(ctx, c, l, i, verify.Report{Verdict: verify.Inconclusive, Reason: "the harness this candidate was made for is no longer frozen"}, "")
	}
	p, err := d.project(ctx, ws, c.ProjectID)
	if err != nil {
		return err
	}
	hs, err := harnessOf(h)
	if err != nil {
		return err
	}
	rep, err := verify.Verify(ctx, verify.Options{RepoDir: p.Repo.Dir, Harness: hs, Candidate: cand.Commit, Runner: d.Sandbox,
		Allowlist: p.Settings.FixPaths, HarnessPaths: p.Settings.HarnessPaths, CacheDir: d.cacheFor(p.ID), Parallel: true, BaseCache: true})
	if err != nil {
		if ctx.Err() != nil {
			return err // shutting down: the job runs again
		}
		// Fail closed: a verification that cannot be set up is not a pass.
		rep = verify.Report{Verdict: verify.Inconclusive, Reason: "the verification could not run: " + err.Error()}
	}
	// The evidence is stored before the verdict, so a verdict on the
	// ledger always has its bundle (when the desk signs bundles).
	bundle, err := d.storeEvidence(ctx, c, candID, h, rep)
	if signoff.ErrorCode(err) == signoff.ECONFLICT {
		// An earlier attempt of this job stored its evidence and stopped
		// before recording the verdict: record that attempt's verdict,
		// the one its evidence shows, not this run's.
		var archive []byte
		if archive, bundle, err = d.Store.GetEvidence(ctx, sys(ws), caseID, candID); err == nil {
			rep, err = reportOfBundle(archive)
		}
	}
	if err != nil {
		return fmt.Errorf("evidence of %s: %w", candID, err)
	}
	// Record the verdict on the loop as it is now, compare-and-swap on its
	// version. Another process may be finishing the same job (a rescued
	// run whose first worker was only slow): when it records first, the
	// swap fails, and the loop read again says the candidate is no longer
	// verifying, so this run records nothing and the job is done.
	for range 4 {
		unlock := d.lock(caseID)
		c, l, err = d.loop(ctx, sys(ws), caseID)
		if err == nil {
			err = d.recordVerdict(ctx, c, l, i, rep, bundle)
		}
		unlock()
		if signoff.ErrorCode(err) != signoff.ECONFLICT || ctx.Err() != nil {
			break
		}
	}
	if signoff.ErrorCode(err) == signoff.EINVALID {
		// The store refused the record itself (e.g. the loop grew past
		// its limit): retrying the run cannot help. A person decides.
		return d.giveUp(ctx, ws, caseID, "", "the verdict could not be recorded: "+signoff.ErrorMessage(err))
	}
	if err != nil || rep.Verdict != verify.Verified {
		return err
	}
	return d.review(ctx, ws, caseID, candID)
}

// VerifyBudget is what a verification job may take besides the wall time
// of its sandbox runs, and the least timeout it gets.
type VerifyBudget struct {
	// Floor is the least timeout (default signoff.MinJobTimeout).
	Floor time.Duration
	// Setup is the verification's work outside its runs: reading the
	// loop and the repository, the diff, writing and storing the
	// evidence, recording the verdict (default 1 min).
	Setup time.Duration
	// PerRun is one run's overhead outside its wall time: starting and
	// stopping the sandbox, checking out its worktree (default 15 s).
	PerRun time.Duration
	// Review is the review's own work besides model calls: its tools,
	// its records; all of it for an offline reviewer (default 30 s).
	Review time.Duration
}

func (b VerifyBudget) withDefaults() VerifyBudget {
	if b.Floor <= 0 {
		b.Floor = signoff.MinJobTimeout
	}
	if b.Setup <= 0 {
		b.Setup = time.Minute
	}
	if b.PerRun <= 0 {
		b.PerRun = 15 * time.Second
	}
	if b.Review <= 0 {
		b.Review = 30 * time.Second
	}
	return b
}

// VerifyTimeout is the timeout of the job verifying candID: what the
// verification can take at most — 2 × runs sandbox runs (base, then
// candidate), each killed at the harness's timeout_seconds, plus PerRun
// each and Setup — plus the advisory review the job goes on to (the
// reviewer's turns × its model call timeout when a model runs it here),
// kept within signoff.BoundedTimeout's floor (Budget.Floor) and ceiling
// (signoff.LongJobTimeout). What it cannot read makes it answer the
// ceiling: too long a timeout only delays the rescue of a dead worker's
// job, too short a one would cancel, or rescue, a run still going.
func (d *Desk) VerifyTimeout(ctx context.Context, ws, caseID, candID string) time.Duration {
	b := d.Budget.withDefaults()
	l, err := d.Store.GetLoop(ctx, sys(ws), caseID)
	if err != nil {
		return signoff.LongJobTimeout
	}
	i := slices.IndexFunc(l.State.Candidates, func(x signoff.Candidate) bool { return x.ID == candID })
	if i < 0 {
		return signoff.LongJobTimeout
	}
	hid := l.State.Candidates[i].HarnessID
	j := slices.IndexFunc(l.State.Harnesses, func(h signoff.HarnessRecord) bool { return h.ID == hid })
	if j < 0 {
		return signoff.LongJobTimeout
	}
	h, err := harnessOf(&l.State.Harnesses[j])
	if err != nil {
		return signoff.LongJobTimeout
	}
	review, ok := d.reviewBound(ctx, ws, b)
	if !ok {
		return signoff.LongJobTimeout
	}
	return signoff.BoundedTimeout(verifyBound(h, b)+review, b.Floor)
}

// verifyBound is the longest verify.Verify can take with harness h.
func verifyBound(h verify.Harness, b VerifyBudget) time.Duration {
	run := time.Duration(h.TimeoutSeconds)*time.Second + b.PerRun
	return time.Duration(2*h.Runs)*run + b.Setup
}

// reviewBound is the longest the advisory review can take in this
// process, false when the role configuration cannot be read.
func (d *Desk) reviewBound(ctx context.Context, ws string, b VerifyBudget) (time.Duration, bool) {
	cfg, err := agent.LoadConfig(ctx, d.Store, ws, d.Tools)
	if err != nil {
		return 0, false
	}
	rc, ok := cfg.Roles[RoleReviewer]
	switch {
	case !ok || rc.Provider == agent.ProviderExternal:
		return 0, true // an outside agent reviews, on its own time
	case rc.Provider == agent.ProviderBuiltin || rc.Provider == agent.ProviderAuthored:
		return b.Review, true
	}
	return time.Duration(rc.MaxTurns)*rc.Timeout + b.Review, true
}

func (d *Desk) recordVerdict(ctx context.Context, c signoff.Case, l signoff.BugLoop, i int, rep verify.Report, bundle string) error {
	st := l.State
	cand := &st.Candidates[i]
	if cand.Status != signoff.CandidateVerifying {
		return nil
	}
	raw, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	now := d.now()
	cand.Verdict, cand.Reason, cand.Report, cand.Fingerprint, cand.VerifiedAt = rep.Verdict, rep.Reason, raw, rep.Fingerprint, &now
	cand.BundleDigest = bundle
	ev := signoff.LoopEvent{Type: "verification.completed", Payload: map[string]any{
		"candidate_id": cand.ID, "commit": cand.Commit, "verdict": rep.Verdict, "reason": rep.Reason,
		"fingerprint": rep.Fingerprint, "harness_digest": rep.HarnessDigest, "runner_digest": rep.RunnerDigest,
		"sandbox": rep.Environment.Sandbox, "isolated": rep.Environment.Isolated, "table": repair.Table(rep),
		"evidence": signoff.EvidenceLive, "report_digest": sha256Hex(raw), "bundle_digest": bundle}}
	u := signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Events: []signoff.LoopEvent{ev}}
	switch rep.Verdict {
	case verify.Verified:
		// The case stays verifying until the reviewer has noted it.
		cand.Status = signoff.CandidateVerified
	case verify.Rejected:
		cand.Status = signoff.CandidateRejected
		u.Command = "record_rejected"
		if c.FixAttempts < c.MaxFixAttempts {
			u.Jobs = []signoff.JobRequest{{Args: signoff.FixJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID, Round: st.Round, Attempt: c.FixAttempts + 1}}}
		}
	default:
		cand.Status = signoff.CandidateInconclusive
		u.Command = "record_inconclusive"
	}
	u.State = st
	_, _, err = d.Store.AdvanceLoop(ctx, sys(c.WorkspaceID), u)
	return err
}

// review has the advisory reviewer note a verified candidate, then puts the
// case up for approval. The note is recorded as a note: whatever it says,
// the candidate goes to a person, and no reviewer can approve.
func (d *Desk) review(ctx context.Context, ws, caseID, candID string) error {
	c, l, err := d.loop(ctx, sys(ws), caseID)
	if err != nil || c.State != workflow.BugVerifying {
		return err
	}
	cand := repair.LatestCandidate(l.State)
	if cand == nil || cand.ID != candID || cand.Status != signoff.CandidateVerified {
		return nil
	}
	if cand.Review == nil {
		if err := d.ensureReviewTask(ctx, c, *cand); err != nil {
			return err
		}
		if err := d.Drive(ctx, ws, caseID, RoleReviewer); err != nil {
			d.log().ErrorContext(ctx, "reviewer", "case_id", caseID, "err", err)
		}
	}
	unlock := d.lock(caseID)
	defer unlock()
	c, l, err = d.loop(ctx, sys(ws), caseID)
	if err != nil || c.State != workflow.BugVerifying {
		return err
	}
	_, digest, cur, err := d.card(ctx, c, l)
	if err != nil {
		return err
	}
	noted := cur.Review != nil
	_, _, err = d.Store.AdvanceLoop(ctx, sys(ws), signoff.LoopUpdate{CaseID: caseID, Version: l.Version, State: l.State, Command: "record_verified",
		Events: []signoff.LoopEvent{{Type: "approval.requested", Payload: map[string]any{"candidate_id": cur.ID, "subject_digest": digest, "reviewed": noted}}}})
	if signoff.ErrorCode(err) == signoff.ECONFLICT {
		// Another process working the same job put the case up for
		// approval first: done. Anything else retries the job.
		if c, _, rerr := d.loop(ctx, sys(ws), caseID); rerr == nil && c.State != workflow.BugVerifying {
			return nil
		}
	}
	return err
}

type reviewInput struct {
	CaseID      string `json:"case_id"`
	CandidateID string `json:"candidate_id"`
	Subject     struct {
		Title   string   `json:"title"`
		Diff    string   `json:"diff"`
		Changed []string `json:"changed"`
		Verdict string   `json:"verdict"`
		Reason  string   `json:"reason"`
	} `json:"subject"`
}

func (d *Desk) ensureReviewTask(ctx context.Context, c signoff.Case, cand signoff.Candidate) error {
	open, err := d.openTasks(ctx, c, RoleReviewer)
	if err != nil || len(open) > 0 {
		return err
	}
	var in reviewInput
	in.CaseID, in.CandidateID = c.ID, cand.ID
	in.Subject.Title, in.Subject.Diff, in.Subject.Changed, in.Subject.Verdict, in.Subject.Reason = c.Title, cand.Diff, cand.Changed, cand.Verdict, cand.Reason
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	_, err = d.Store.CreateTask(ctx, sys(c.WorkspaceID), signoff.TaskInput{CaseID: c.ID, Kind: RoleReviewer, Role: signoff.RoleReviewer, Input: raw})
	if signoff.ErrorCode(err) == signoff.ENOTFOUND {
		// No reviewer agent: the review is advisory, so the case goes on
		// to a person without one, and the approval request says so.
		d.log().InfoContext(ctx, "no reviewer agent; the candidate goes to approval unreviewed", "case_id", c.ID)
		return nil
	}
	return err
}

// recordReview stores the reviewer's note on the candidate it reviewed.
func (d *Desk) recordReview(ctx context.Context, by signoff.Actor, caseID, candID, note, evidence string) error {
	unlock := d.lock(caseID)
	defer unlock()
	c, l, err := d.loop(ctx, sys(by.WorkspaceID), caseID)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(l.State.Candidates, func(x signoff.Candidate) bool { return x.ID == candID })
	if c.State != workflow.BugVerifying || i < 0 || l.State.Candidates[i].Status != signoff.CandidateVerified {
		return &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: "this candidate is not waiting for a review"}
	}
	note = strings.TrimSpace(note)
	if note == "" || len(note) > 4000 {
		return signoff.Errorf(signoff.EINVALID, "the note must be 1 to 4000 bytes")
	}
	st := l.State
	st.Candidates[i].Review = &signoff.Review{Note: note, By: by.ID, Evidence: evidence, At: d.now()}
	_, _, err = d.Store.AdvanceLoop(ctx, by, signoff.LoopUpdate{CaseID: caseID, Version: l.Version, State: st,
		Events: []signoff.LoopEvent{{Type: "review.noted", Payload: map[string]any{"candidate_id": candID, "note": note, "evidence": evidence, "advisory": true}}}})
	return err
}
