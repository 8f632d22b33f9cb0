package bugdesk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/verify"
	"github.com/signoff-dev/signoff/workflow"
)

// Reverify moves a candidate that main has overtaken onto the current
// main and verifies it again: the frozen test files (the check the reporter
// confirmed) are put on the new base and must still fail there with the
// expected signature, the candidate's diff must apply unchanged, and the
// rebased candidate goes through verification, review and a new approval.
// Approvals of the old card are superseded. Nothing is carried over that
// was not checked again on the new base.
func (d *Desk) Reverify(ctx context.Context, by signoff.Actor, caseID string) (signoff.Candidate, error) {
	if by.Role != signoff.RoleOwner && by.Role != signoff.RoleOperator {
		return signoff.Candidate{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not ask for a re-verification", by.Role)
	}
	unlock := d.lock(caseID)
	defer unlock()
	c, l, err := d.loop(ctx, by, caseID)
	if err != nil {
		return signoff.Candidate{}, err
	}
	if c.State != workflow.BugApproved && c.State != workflow.BugAwaitingApproval {
		return signoff.Candidate{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s is %s: only a verified candidate awaiting approval or merge is re-verified", caseID, c.State)}
	}
	h, cand := repair.FrozenHarness(l.State), repair.LatestCandidate(l.State)
	if h == nil || cand == nil || cand.Status != signoff.CandidateVerified {
		return signoff.Candidate{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: "no verified candidate to re-verify"}
	}
	p, err := d.project(ctx, c.WorkspaceID, c.ProjectID)
	if err != nil {
		return signoff.Candidate{}, err
	}
	main, err := p.Repo.RevParse(ctx, "refs/heads/"+p.Settings.MainBranch)
	if err != nil {
		return signoff.Candidate{}, err
	}
	if main == h.Base {
		return signoff.Candidate{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: "main has not moved since the candidate's base: there is nothing to re-verify"}
	}
	hs, err := harnessOf(h)
	if err != nil {
		return signoff.Candidate{}, err
	}
	tf, err := verify.ReadTestFiles(ctx, p.Repo, hs)
	if err != nil {
		return signoff.Candidate{}, err
	}
	var files []FileArg
	for _, path := range slices.Sorted(maps.Keys(tf)) {
		files = append(files, FileArg{Path: path, Content: string(tf[path])})
	}
	n := len(l.State.Harnesses) + 1
	tests, tbranch, err := d.commitFiles(ctx, p, main, files, nil, fmt.Sprintf("signoff/%s/repro-%d-%d-rebased", c.ID, l.State.Round, n),
		fmt.Sprintf("repro (rebased): harness %s onto %s for case %s", h.ID, short(main), c.ID), by)
	if err != nil {
		return signoff.Candidate{}, err
	}
	hs2 := hs
	hs2.Base, hs2.TestsFrom, hs2.PassToPass = main, tests, nil
	rep, err := verify.Reproduce(ctx, verify.Options{RepoDir: p.Repo.Dir, Harness: hs2, Runner: d.Sandbox, CacheDir: d.cacheFor(p.ID)})
	if err != nil {
		return signoff.Candidate{}, fmt.Errorf("run the check on the current main: %w", err)
	}
	if rep.Verdict != verify.Reproduced {
		return signoff.Candidate{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: "on the current main the confirmed check no longer fails as it did (" + rep.Reason + "): the bug may be fixed there already; a person decides"}
	}
	hs2.PassToPass = passedOnBase(rep, hs2)
	tf2, err := verify.ReadTestFiles(ctx, p.Repo, hs2)
	if err != nil {
		return signoff.Candidate{}, err
	}
	// The rebased harness carries the staff review of the old one: that
	// holds only for the very bytes the reviewer read.
	if !maps.EqualFunc(tf, tf2, bytes.Equal) {
		return signoff.Candidate{}, fmt.Errorf("rebase harness %s: the test files on the current main differ from the reviewed ones", h.ID)
	}
	digest, err := verify.DigestHarness(hs2, tf2)
	if err != nil {
		return signoff.Candidate{}, err
	}
	spec, err := json.Marshal(hs2)
	if err != nil {
		return signoff.Candidate{}, err
	}
	guard := func(changed []string) error {
		return repair.CheckFixPaths(changed, hs2.TestFiles, p.Settings.HarnessPaths, p.Settings.FixPaths)
	}
	commit, branch, err := d.commitFiles(ctx, p, main, nil, []byte(cand.Diff), fmt.Sprintf("signoff/%s/fix-%d-%d-rebased-%d", c.ID, l.State.Round, cand.Attempt, n),
		fmt.Sprintf("fix attempt %d for case %s, rebased onto %s\n\nThe diff of candidate %s, unchanged.", cand.Attempt, c.ID, short(main), cand.ID), by, guard)
	if err != nil {
		if signoff.ErrorCode(err) == signoff.EINVALID {
			return signoff.Candidate{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: "the candidate does not apply unchanged on the current main: a new fix is needed (" + signoff.ErrorMessage(err) + ")"}
		}
		return signoff.Candidate{}, err
	}
	diff, err := p.Repo.Diff(ctx, main, commit)
	if err != nil {
		return signoff.Candidate{}, err
	}
	changed, err := p.Repo.DiffNames(ctx, main, commit)
	if err != nil {
		return signoff.Candidate{}, err
	}
	now := d.now()
	h2 := *h
	h2.ID, h2.Spec, h2.Digest, h2.Base, h2.Commit, h2.Branch, h2.RebasedFrom = signoff.NewID(signoff.PrefixHarness), spec, digest, main, tests, tbranch, h.ID
	h2.FailingOutput = repair.FailureWords(rep)
	c2 := signoff.Candidate{ID: signoff.NewID(signoff.PrefixCandidate), HarnessID: h2.ID, Attempt: cand.Attempt, Base: main, Commit: commit,
		Branch: branch, Diff: string(diff), DiffDigest: sha256Hex(diff), Changed: changed, SubmittedBy: cand.SubmittedBy,
		SubmitterRole: cand.SubmitterRole, TaskID: cand.TaskID, Evidence: cand.Evidence, Status: signoff.CandidateVerifying,
		SubmittedAt: now, RebasedFrom: cand.ID}
	st := l.State
	st.Harnesses = append([]signoff.HarnessRecord(nil), st.Harnesses...)
	st.Candidates = append([]signoff.Candidate(nil), st.Candidates...)
	for i := range st.Harnesses {
		if st.Harnesses[i].ID == h.ID {
			st.Harnesses[i].Status = signoff.HarnessSuperseded
		}
	}
	for i := range st.Candidates {
		if st.Candidates[i].ID == cand.ID {
			st.Candidates[i].Status = signoff.CandidateSuperseded
		}
	}
	st.Harnesses = append(st.Harnesses, h2)
	st.Candidates = append(st.Candidates, c2)
	_, _, err = d.Store.AdvanceLoop(ctx, by, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "reverify",
		Events: []signoff.LoopEvent{
			{Type: "harness.rebased", Payload: map[string]any{"from": h.ID, "to": h2.ID, "old_base": h.Base, "base": main,
				"old_digest": h.Digest, "harness_digest": digest, "base_run": rep.Reason, "run_evidence": signoff.EvidenceLive}},
			{Type: "candidate.rebased", Payload: map[string]any{"from": cand.ID, "candidate_id": c2.ID, "commit": commit, "branch": branch,
				"diff_digest": c2.DiffDigest, "changed": changed}},
		},
		Jobs: []signoff.JobRequest{{Args: signoff.VerifyJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID, CandidateID: c2.ID}}}})
	if err != nil {
		return signoff.Candidate{}, err
	}
	if _, err := d.Store.SupersedeApprovals(ctx, sys(c.WorkspaceID), c.ID, ""); err != nil {
		d.log().ErrorContext(ctx, "supersede approvals", "case_id", c.ID, "err", err)
	}
	return c2, nil
}
