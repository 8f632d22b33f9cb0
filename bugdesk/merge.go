package bugdesk

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/workflow"
)

// Merge merges the approved candidate into the project's main branch, as
// by (a person: merging is a human act). It refuses unless the approvals
// still hold for exactly the candidate on the card, and unless the merge
// result has exactly the candidate's tree: if main moved in a way that
// changes what would ship, the candidate must be verified again. The
// approvals are consumed in the same transaction that records the merge.
func (d *Desk) Merge(ctx context.Context, by signoff.Actor, caseID string) (signoff.MergeRecord, error) {
	if by.Role != signoff.RoleOwner && by.Role != signoff.RoleOperator {
		return signoff.MergeRecord{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not merge", by.Role)
	}
	unlock := d.lock(caseID)
	defer unlock()
	c, l, err := d.loop(ctx, by, caseID)
	if err != nil {
		return signoff.MergeRecord{}, err
	}
	if c.State != workflow.BugApproved {
		return signoff.MergeRecord{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s is %s: only an approved candidate is merged", caseID, c.State)}
	}
	_, digest, cand, err := d.card(ctx, c, l)
	if err != nil {
		return signoff.MergeRecord{}, err
	}
	p, err := d.project(ctx, c.WorkspaceID, c.ProjectID)
	if err != nil {
		return signoff.MergeRecord{}, err
	}
	all, err := d.Store.ListApprovals(ctx, sys(c.WorkspaceID), caseID)
	if err != nil {
		return signoff.MergeRecord{}, err
	}
	pol := Policy(p.Settings)
	ids, ok := approval.Quorum(d.activeApprovals(ctx, c.WorkspaceID, all), digest, pol, d.now())
	if !ok {
		return signoff.MergeRecord{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State,
			Message: fmt.Sprintf("the approvals of candidate %s (subject %s) no longer reach the quorum of %d: expired, used or superseded; approve again", cand.ID, short(digest), pol.Quorum)}
	}
	unlockRepo := d.lock("repo:" + p.ID)
	defer unlockRepo()
	ref := "refs/heads/" + p.Settings.MainBranch
	main, err := p.Repo.RevParse(ctx, ref)
	if err != nil {
		return signoff.MergeRecord{}, fmt.Errorf("main branch %s: %w", p.Settings.MainBranch, err)
	}
	candTree, err := p.Repo.Tree(ctx, cand.Commit)
	if err != nil {
		return signoff.MergeRecord{}, err
	}
	msg := fmt.Sprintf("Merge candidate %s for case %s\n\nApproved subject %s by %s; merged by %s.", cand.ID, caseID, digest, strings.Join(ids, ", "), by.ID)
	merge, before, err := d.mergeCommit(ctx, p, main, cand.Commit, candTree, msg, by)
	if err != nil {
		return signoff.MergeRecord{}, err
	}
	if merge != main {
		if err := p.Repo.UpdateRef(ctx, ref, merge, main); err != nil {
			return signoff.MergeRecord{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: "main moved while merging; try again: " + err.Error()}
		}
	}
	rec := signoff.MergeRecord{CandidateID: cand.ID, Approvals: ids, Commit: merge, MainBefore: before, Tree: candTree, By: by.ID, At: d.now()}
	st := l.State
	st.Merge = &rec
	for i := range st.Candidates {
		if st.Candidates[i].ID == cand.ID {
			st.Candidates[i].Status = signoff.CandidateMerged
		}
	}
	_, _, err = d.Store.AdvanceLoop(ctx, by, signoff.LoopUpdate{CaseID: caseID, Version: l.Version, State: st, Command: "merge", Consume: ids,
		Events: []signoff.LoopEvent{{Type: "merge.recorded", Payload: map[string]any{"candidate_id": cand.ID, "commit": merge,
			"main_before": before, "tree": candTree, "approvals": ids, "subject_digest": digest, "branch": p.Settings.MainBranch}}},
		Jobs: []signoff.JobRequest{{Args: signoff.ReconcileJob{WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID, Cause: "merge:" + merge}}}})
	if err != nil {
		// Before undoing anything, look at what is recorded: another
		// process may have recorded this very merge (it found main already
		// at it), or the write may have committed although we saw an
		// error. Main is put back only when nothing records the commit.
		if _, cur, gerr := d.loop(ctx, sys(c.WorkspaceID), caseID); gerr == nil && cur.State.Merge != nil && cur.State.Merge.Commit == merge {
			return *cur.State.Merge, nil
		} else if gerr != nil {
			d.log().ErrorContext(ctx, "merge: cannot tell whether the merge was recorded; main is left at the merge", "case_id", caseID, "merge", merge, "err", gerr)
			return signoff.MergeRecord{}, err
		}
		if merge != main {
			if rerr := p.Repo.UpdateRef(ctx, ref, main, merge); rerr != nil {
				d.log().ErrorContext(ctx, "merge: could not roll main back after a refused record", "case_id", caseID, "merge", merge, "err", rerr)
			}
		}
		return signoff.MergeRecord{}, err
	}
	return rec, nil
}

// activeApprovals keeps the approvals whose approver is still an active
// person with the key they signed with: a disabled approver or a revoked
// key no longer counts at the merge.
func (d *Desk) activeApprovals(ctx context.Context, ws string, list []signoff.Approval) []signoff.Approval {
	var out []signoff.Approval
	for _, a := range list {
		act, err := d.Store.GetActor(ctx, ws, a.ApproverID)
		if err != nil || act.DisabledAt != nil {
			continue
		}
		k, err := d.Store.GetKey(ctx, ws, a.KeyID)
		if err != nil || k.RevokedAt != nil || k.ActorID != a.ApproverID {
			continue
		}
		// The row must say what its envelope says, signed by that key: a
		// row written or altered in the database behind the desk does not
		// count toward a merge (the change gate checks the same).
		if approval.VerifyRecord(a, k) != nil {
			d.log().WarnContext(ctx, "stored approval does not verify: not counted", "case_id", a.CaseID, "approval_id", a.ID)
			continue
		}
		out = append(out, a)
	}
	return out
}

// mergeCommit makes the merge of cand into main in a scratch worktree and
// checks that its tree is the candidate's. A merge made earlier by an
// interrupted Merge (main's head already merges cand with this tree) is
// reused rather than made twice.
func (d *Desk) mergeCommit(ctx context.Context, p project, main, cand, candTree, msg string, by signoff.Actor) (merge, before string, err error) {
	if anc, err := p.Repo.IsAncestor(ctx, cand, main); err != nil {
		return "", "", err
	} else if anc {
		parents, err := p.Repo.Parents(ctx, main)
		if err != nil {
			return "", "", err
		}
		tree, err := p.Repo.Tree(ctx, main)
		if err != nil {
			return "", "", err
		}
		if len(parents) == 2 && parents[1] == cand && tree == candTree {
			return main, parents[0], nil
		}
		return "", "", signoff.Errorf(signoff.ECONFLICT, "main already contains candidate %s, but not as this merge: merge it by hand and record it, or verify a new candidate", short(cand))
	}
	wt, err := p.Repo.AddWorktree(ctx, main)
	if err != nil {
		return "", "", err
	}
	defer wt.Close()
	w := &gitx.Repo{Dir: wt.Dir}
	merge, err = w.Merge(ctx, cand, msg, gitx.Signature{Name: by.Name, Email: by.ID + "@signoff.invalid", When: d.now()})
	if errors.Is(err, gitx.ErrConflict) {
		return "", "", signoff.Errorf(signoff.ECONFLICT, "main (%s) has moved and no longer merges cleanly with the candidate: verify a new candidate on the current main", short(main))
	} else if err != nil {
		return "", "", err
	}
	tree, err := w.Tree(ctx, merge)
	if err != nil {
		return "", "", err
	}
	if tree != candTree {
		return "", "", signoff.Errorf(signoff.ECONFLICT, "main (%s) has moved since the candidate's base: the merge would ship tree %s, not the verified tree %s; verify the candidate again on the current main", short(main), short(tree), short(candTree))
	}
	return merge, main, nil
}
