package bugdesk

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/verify"
	"github.com/signoff-dev/signoff/workflow"
)

// fixInput is a fixer task's input. It carries the approved behaviour and
// the failing output, never the harness files.
type fixInput struct {
	CaseID      string     `json:"case_id"`
	Round       int        `json:"round"`
	Attempt     int        `json:"attempt"`
	MaxAttempts int        `json:"max_attempts"`
	Base        string     `json:"base"`
	AllowedPath []string   `json:"allowed_paths"`
	Subject     fixSubject `json:"subject"`
}

type fixSubject struct {
	Title  string `json:"title"`
	Report string `json:"report"`
	// Signals are the airlock's on the report and answers (reportText).
	Signals   []string `json:"signals,omitempty"`
	Confirmed string   `json:"confirmed"`
	Failing   string   `json:"failing_output"`
	// FailToPass are the frozen tests the fix must make pass, and
	// KeepPassing those that passed on base and must keep passing: by name
	// only, the harness files stay hidden.
	FailToPass  []string      `json:"fail_to_pass,omitempty"`
	KeepPassing []string      `json:"must_keep_passing,omitempty"`
	Previous    []prevAttempt `json:"previous_attempts,omitempty"`
}

// prevAttempt is an earlier candidate on the same frozen harness: what it
// changed and why it did not hold, so the next attempt does not repeat it.
type prevAttempt struct {
	Attempt int      `json:"attempt"`
	Verdict string   `json:"verdict"`
	Reason  string   `json:"reason"`
	Changed []string `json:"changed,omitempty"`
	Diff    string   `json:"diff,omitempty"`
}

// maxPrevDiff bounds the diff of an earlier attempt quoted to the fixer.
const maxPrevDiff = 6000

// StartFix moves a reproduced bug into fixing and gives the fixer a task
// for its next attempt. Idempotent like StartReproduction. It refuses
// (errNotFrozen) while the round has no frozen harness, one both the
// reporter and a member of staff accepted: a reproduced case waiting for
// its staff review stays where it is, and a case a person resumed into
// fixing without one goes back to a person.
func (d *Desk) StartFix(ctx context.Context, ws, caseID string) error {
	unlock := d.lock(caseID)
	defer unlock()
	c, l, err := d.loop(ctx, sys(ws), caseID)
	if err != nil {
		return err
	}
	if c.State != workflow.BugReproduced && c.State != workflow.BugFixing {
		return nil
	}
	h := repair.FrozenHarness(l.State)
	if h == nil {
		if c.State == workflow.BugFixing {
			d.log().WarnContext(ctx, "fixing without a frozen reproduction: back to a person", "case_id", caseID)
			if err := d.giveUp(ctx, ws, caseID, "", "the case is fixing, but no reproduction was accepted by both the reporter and a member of staff: resume the reproduction instead"); err != nil {
				return err
			}
		}
		return fmt.Errorf("start fix of %s: %w", caseID, errNotFrozen)
	}
	if c.State == workflow.BugReproduced {
		l, c, err = d.Store.AdvanceLoop(ctx, sys(ws), signoff.LoopUpdate{CaseID: caseID, Version: l.Version, State: l.State, Command: "start_fix",
			Events: []signoff.LoopEvent{{Type: "fix.started", Payload: map[string]any{"round": l.State.Round, "harness_id": h.ID,
				"harness_digest": h.Digest, "reviewed_by": h.StaffReview.By}}}})
		if err != nil {
			return fmt.Errorf("start fix of %s: %w", caseID, err)
		}
	}
	open, err := d.openTasks(ctx, c, RoleFixer)
	if err != nil || len(open) > 0 {
		return err
	}
	p, err := d.project(ctx, ws, c.ProjectID)
	if err != nil {
		return err
	}
	report, signals, err := d.reportText(ctx, c)
	if err != nil {
		return err
	}
	in := fixInput{CaseID: c.ID, Round: l.State.Round, Attempt: c.FixAttempts + 1, MaxAttempts: c.MaxFixAttempts, Base: h.Base,
		AllowedPath: p.Settings.FixPaths, Subject: fixSubject{Title: c.Title, Report: report, Signals: signals,
			Confirmed: "The reporter confirmed that the failing check below is the bug they saw, and a member of staff reviewed the test. Make it pass without changing any test.",
			Failing:   h.FailingOutput}}
	var spec verify.Harness
	if err := json.Unmarshal(h.Spec, &spec); err == nil {
		in.Subject.FailToPass, in.Subject.KeepPassing = spec.FailToPass, spec.PassToPass
	}
	for _, cand := range l.State.Candidates {
		if cand.HarnessID == h.ID && cand.Verdict != "" {
			prev := prevAttempt{Attempt: cand.Attempt, Verdict: cand.Verdict, Reason: attemptReason(cand), Changed: cand.Changed, Diff: clip(cand.Diff, maxPrevDiff)}
			if cand.Rejection != "" {
				// Verified, then rejected by a person: their reason is what
				// the next attempt must answer.
				prev.Verdict, prev.Reason = "REJECTED by the approver", cand.Rejection
			}
			in.Subject.Previous = append(in.Subject.Previous, prev)
		}
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	_, err = d.Store.CreateTask(ctx, sys(ws), signoff.TaskInput{CaseID: c.ID, Kind: RoleFixer, Role: signoff.RoleFixer, Input: raw})
	return err
}

// attemptReason is why an earlier candidate did not hold, as the fixer's
// next task shows it: the stage that decided the verdict, the frozen
// tests that did not pass (by name) and the tally. Never the runs'
// output: the candidate's code runs beside the frozen tests and can read
// them, and whatever it puts in a test's output (an error it returns, a
// panic) would otherwise carry the hidden test's source to the fixer.
func attemptReason(cand signoff.Candidate) string {
	var rep verify.Report
	if len(cand.Report) == 0 || json.Unmarshal(cand.Report, &rep) != nil {
		return "verdict " + cand.Verdict
	}
	if len(rep.Stages) == 0 {
		// A verdict the desk gave without running anything (the harness
		// was no longer frozen, the verification could not be set up):
		// the server's own words.
		return cand.Reason
	}
	for _, s := range rep.Stages {
		switch {
		case cand.Verdict == verify.Rejected && (s.Outcome == verify.Refused || s.Outcome == verify.Failed || s.Outcome == verify.Counterfeit),
			cand.Verdict == verify.Inconclusive && (s.Outcome == verify.NotReproduced || s.Outcome == verify.NotExecuted):
		default:
			continue
		}
		if s.Name == verify.StageDiff || s.Outcome == verify.Counterfeit {
			// The server's account of the candidate's own changes, or of
			// results the frozen tests did not write, by test name.
			return s.Detail
		}
		var failed []string
		var count [2][2]int // fail-to-pass, pass-to-pass: passed, all
		for _, t := range s.Tests {
			k := 0
			if t.Kind == verify.PassToPass {
				k = 1
			}
			count[k][1]++
			switch t.Outcome {
			case verify.Pass:
				count[k][0]++
			case verify.Fail:
				failed = append(failed, t.Name+" failed")
			case verify.Skip:
				failed = append(failed, t.Name+" was skipped")
			case verify.Missing:
				failed = append(failed, t.Name+" is missing from the results")
			default:
				failed = append(failed, t.Name+" did not run")
			}
		}
		what := s.Outcome
		switch s.Outcome {
		case verify.NotExecuted:
			what = "the run gave no usable results (the code did not build, the test process crashed or ran out of time)"
		case verify.NotReproduced:
			what = "the frozen test did not detect the bug on base in this run (not the candidate's doing)"
		}
		if len(failed) > 0 {
			what += ": " + strings.Join(failed, "; ")
		}
		return fmt.Sprintf("%s run %d: %s (fail-to-pass %d/%d passed, pass-to-pass %d/%d passed; the runs' output is not shown)",
			s.Name, s.Run, what, count[0][0], count[0][1], count[1][0], count[1][1])
	}
	return "verdict " + cand.Verdict
}

// proposal is a fix as files or as a patch.
type proposal struct {
	Files []FileArg
	Patch []byte
}

// SubmitCandidate records a fix proposed by by (the fixer through its
// tool, or a person through the API) for the case's next attempt. The fix
// is applied on the frozen harness base and refused, before anything runs,
// if it touches the harness or leaves the allowlist.
func (d *Desk) SubmitCandidate(ctx context.Context, by signoff.Actor, caseID string, prop proposal, taskID, evidence string) (signoff.Candidate, error) {
	unlock := d.lock(caseID)
	defer unlock()
	c, l, err := d.loop(ctx, by, caseID)
	if err != nil {
		return signoff.Candidate{}, err
	}
	if c.State != workflow.BugFixing {
		return signoff.Candidate{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s is %s: it takes candidates only while fixing", caseID, c.State)}
	}
	if c.FixAttempts >= c.MaxFixAttempts {
		return signoff.Candidate{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("no fix attempt left (%d of %d used)", c.FixAttempts, c.MaxFixAttempts)}
	}
	h := repair.FrozenHarness(l.State)
	if h == nil {
		return signoff.Candidate{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s: %s", caseID, errNotFrozen.Message)}
	}
	if len(prop.Files) > 0 {
		if err := checkFiles(prop.Files); err != nil {
			return signoff.Candidate{}, err
		}
	} else if len(prop.Patch) == 0 || len(prop.Patch) > maxPatch {
		return signoff.Candidate{}, signoff.Errorf(signoff.EINVALID, "give the fix as files or as a patch of at most %d bytes", maxPatch)
	}
	p, err := d.project(ctx, c.WorkspaceID, c.ProjectID)
	if err != nil {
		return signoff.Candidate{}, err
	}
	attempt := c.FixAttempts + 1
	guard := func(changed []string) error {
		if err := repair.CheckFixPaths(changed, h.TestFiles, p.Settings.HarnessPaths, p.Settings.FixPaths); err != nil {
			return err
		}
		if by.Role.IsAgent() {
			return noTestEdits(changed, h.Spec)
		}
		return nil
	}
	// Check the named paths before writing anything when they are known.
	if len(prop.Files) > 0 {
		var paths []string
		for _, f := range prop.Files {
			paths = append(paths, f.Path)
		}
		if err := guard(paths); err != nil {
			return signoff.Candidate{}, err
		}
	}
	commit, branch, err := d.commitFiles(ctx, p, h.Base, prop.Files, prop.Patch,
		// Attempts restart at 1 when a person resumes the fix, so the
		// branch is named for the submission, which never repeats.
		fmt.Sprintf("signoff/%s/fix-%d-%d-%d", c.ID, l.State.Round, attempt, len(l.State.Candidates)+1),
		fmt.Sprintf("fix attempt %d for case %s\n\nProposed by %s (%s evidence).", attempt, c.ID, by.Name, evidence), by, guard)
	if err != nil {
		return signoff.Candidate{}, err
	}
	diff, err := p.Repo.Diff(ctx, h.Base, commit)
	if err != nil {
		return signoff.Candidate{}, err
	}
	if len(diff) > maxDiff {
		return signoff.Candidate{}, signoff.Errorf(signoff.EINVALID, "the fix's diff is %d bytes, more than the %d a person can review on the card", len(diff), maxDiff)
	}
	changed, err := p.Repo.DiffNames(ctx, h.Base, commit)
	if err != nil {
		return signoff.Candidate{}, err
	}
	cand := signoff.Candidate{ID: signoff.NewID(signoff.PrefixCandidate), HarnessID: h.ID, Attempt: attempt, Base: h.Base,
		Commit: commit, Branch: branch, Diff: string(diff), DiffDigest: sha256Hex(diff), Changed: changed, SubmittedBy: by.ID,
		SubmitterRole: by.Role, TaskID: taskID, Evidence: evidence, Status: signoff.CandidateVerifying, SubmittedAt: d.now()}
	st := l.State
	for i := range st.Candidates {
		if st.Candidates[i].Status == signoff.CandidateVerified {
			st.Candidates[i].Status = signoff.CandidateSuperseded
		}
	}
	st.Candidates = append(st.Candidates, cand)
	_, _, err = d.Store.AdvanceLoop(ctx, by, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "submit_candidate",
		Events: []signoff.LoopEvent{{Type: "candidate.submitted", Payload: map[string]any{
			"candidate_id": cand.ID, "attempt": attempt, "base": h.Base, "commit": commit, "branch": branch,
			"diff_digest": cand.DiffDigest, "changed": changed, "evidence": evidence, "task_id": taskID, "harness_id": h.ID}}},
		Jobs: []signoff.JobRequest{{Args: signoff.VerifyJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID, CandidateID: cand.ID}}}})
	if err != nil {
		return signoff.Candidate{}, err
	}
	// A new candidate supersedes every approval of an earlier one.
	if _, err := d.Store.SupersedeApprovals(ctx, sys(c.WorkspaceID), c.ID, ""); err != nil {
		d.log().ErrorContext(ctx, "supersede approvals", "case_id", c.ID, "err", err)
	}
	return cand, nil
}

// SubmitPatch is a person's candidate (signoff fix submit): the same
// checks as the fixer's, labelled authored (written by a person).
func (d *Desk) SubmitPatch(ctx context.Context, by signoff.Actor, caseID string, patch []byte) (signoff.Candidate, error) {
	if !by.Role.IsHuman() || by.Role == signoff.RoleReporter || by.Role == signoff.RoleViewer {
		return signoff.Candidate{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not submit candidates", by.Role)
	}
	return d.SubmitCandidate(ctx, by, caseID, proposal{Patch: patch}, "", signoff.EvidenceAuthored)
}

func (d *Desk) proposeFix(ctx context.Context, env *agent.Env, files []FileArg, patch, summary string) (agent.Result, error) {
	var in fixInput
	if err := json.Unmarshal(env.Task.Input, &in); err != nil {
		return agent.Result{}, fmt.Errorf("task input: %w", err)
	}
	c, err := d.Store.GetCase(ctx, sys(env.Actor.WorkspaceID), in.CaseID)
	if err != nil {
		return agent.Result{}, err
	}
	if c.FixAttempts+1 != in.Attempt {
		return agent.Result{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("this task was for attempt %d; the case is past it", in.Attempt)}
	}
	switch {
	case len(files) > 0 && strings.TrimSpace(patch) != "":
		return agent.Result{}, signoff.Errorf(signoff.EINVALID, "give the fix either as files or as a unified diff in patch, not both")
	case len(files) == 0 && strings.TrimSpace(patch) == "":
		return agent.Result{}, signoff.Errorf(signoff.EINVALID, "the proposal holds no change: give files (each changed file's whole new content) or patch (a unified diff against base %s)", short(in.Base))
	}
	prop := proposal{Files: files}
	if patch != "" {
		prop.Patch = []byte(patch)
	}
	cand, err := d.SubmitCandidate(ctx, env.Actor, in.CaseID, prop, env.Task.ID, env.Evidence)
	if err != nil {
		return agent.Result{}, err
	}
	return agent.Result{Text: fmt.Sprintf("Accepted as candidate %s (attempt %d, commit %s). It is verified with the frozen harness; your task is done.", cand.ID, cand.Attempt, short(cand.Commit)),
		Output: map[string]any{"candidate_id": cand.ID, "commit": cand.Commit, "summary": summary}, Final: true}, nil
}

// noTestEdits refuses an agent's fix that changes a test file (any path
// the frozen harness protects: *_test.go, testdata and the like). The
// verifier restores those files before it runs anything, so such an edit
// could never count; refusing it up front tells the fixer so without
// spending one of the case's attempts. A person's patch is not refused
// here: the verifier restores it and the card shows the edit.
func noTestEdits(changed []string, spec json.RawMessage) error {
	var h verify.Harness
	if err := json.Unmarshal(spec, &h); err != nil {
		return fmt.Errorf("frozen harness: %w", err)
	}
	var tests []string
	for _, p := range changed {
		for _, g := range h.ProtectedGlobs() {
			if p == g || verify.MatchGlob(g, p) {
				tests = append(tests, p)
				break
			}
		}
	}
	if len(tests) > 0 {
		return signoff.Errorf(signoff.EFORBIDDEN, "the fix changes test files (%s): every test is restored from the frozen harness before verification, so a fix changes only non-test code; propose it again without them", strings.Join(tests, ", "))
	}
	return nil
}
