package bugdesk

import (
	"context"
	"fmt"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/workflow"
)

// CardView is the approval card as the API returns it: the card, the
// digest an approval must name, and the policy it is checked under.
type CardView struct {
	Card          repair.Card        `json:"card"`
	SubjectDigest string             `json:"subject_digest"`
	Policy        approval.Policy    `json:"policy"`
	PolicyDigest  string             `json:"policy_digest"`
	State         string             `json:"state"`
	Approvals     []signoff.Approval `json:"approvals"`
}

// Policy is a project's approval policy. Self-approval and approval by
// the candidate's submitter are always refused for bug fixes.
func Policy(s signoff.RepoSettings) approval.Policy {
	s = s.WithDefaults()
	return approval.Policy{Quorum: s.Quorum, TTLHours: s.ApprovalTTLHours, NoSelfApproval: true, ProposerCannotApprove: true}
}

// Card returns the approval card of a case waiting for approval.
func (d *Desk) Card(ctx context.Context, by signoff.Actor, caseID string) (CardView, error) {
	if by.Role.IsAgent() || by.Role == signoff.RoleReporter {
		return CardView{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s does not approve", by.Role)
	}
	c, l, err := d.loop(ctx, by, caseID)
	if err != nil {
		return CardView{}, err
	}
	if c.State != workflow.BugAwaitingApproval && c.State != workflow.BugApproved {
		return CardView{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s is %s: there is no card to approve", caseID, c.State)}
	}
	card, digest, _, err := d.card(ctx, c, l)
	if err != nil {
		return CardView{}, err
	}
	s, err := d.Store.GetRepoSettings(ctx, sys(c.WorkspaceID), c.ProjectID)
	if err != nil {
		return CardView{}, err
	}
	pol := Policy(s)
	apvs, err := d.Store.ListApprovals(ctx, sys(c.WorkspaceID), caseID)
	if err != nil {
		return CardView{}, err
	}
	return CardView{Card: card, SubjectDigest: digest, Policy: pol, PolicyDigest: pol.Digest(), State: c.State, Approvals: apvs}, nil
}

// Approve checks a signed approval envelope from by and records it; once
// the policy's quorum of distinct approvers has approved the card's exact
// digest, the case is approved. A signed "reject" sends it back to fixing.
// Every refusal leaves the case where it was.
//
// A rejection is signed the same way and must say why (reason, the
// approver's own words, recorded beside the signed statement).
func (d *Desk) Approve(ctx context.Context, by signoff.Actor, caseID string, envelope []byte, via, reason string) (signoff.Approval, signoff.Case, error) {
	rcv, err := approval.Receive(envelope, by, via, reason, "what the fixer should do differently", func(id string) (signoff.ApproverKey, error) {
		return d.Store.GetKey(ctx, by.WorkspaceID, id)
	})
	if err != nil {
		return signoff.Approval{}, signoff.Case{}, err
	}
	stmt, key, reason := rcv.Statement, rcv.Key, rcv.Reason
	unlock := d.lock(caseID)
	defer unlock()
	c, l, err := d.loop(ctx, by, caseID)
	if err != nil {
		return signoff.Approval{}, signoff.Case{}, err
	}
	if c.State != workflow.BugAwaitingApproval && c.State != workflow.BugApproved {
		return signoff.Approval{}, c, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s is %s, not awaiting approval", caseID, c.State)}
	}
	_, digest, cand, err := d.card(ctx, c, l)
	if err != nil {
		return signoff.Approval{}, c, err
	}
	s, err := d.Store.GetRepoSettings(ctx, sys(c.WorkspaceID), c.ProjectID)
	if err != nil {
		return signoff.Approval{}, c, err
	}
	pol := Policy(s)
	switch c.State {
	case workflow.BugAwaitingApproval:
	case workflow.BugApproved:
		if stmt.Decision == approval.Reject {
			return signoff.Approval{}, c, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: "an approved case is not rejected by a signed rejection; escalate it to a person instead"}
		}
		// An approved case whose approvals lapsed (expired, or their
		// approver was disabled) before the merge takes new approvals of
		// the same card; while a quorum still holds there is nothing to add.
		all, err := d.Store.ListApprovals(ctx, sys(c.WorkspaceID), c.ID)
		if err != nil {
			return signoff.Approval{}, c, err
		}
		if _, ok := approval.Quorum(d.activeApprovals(ctx, c.WorkspaceID, all), digest, pol, d.now()); ok {
			return signoff.Approval{}, c, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s is approved and its approvals still hold: merge it", caseID)}
		}
	default:
		return signoff.Approval{}, c, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s is %s, not awaiting approval", caseID, c.State)}
	}
	if err := approval.Check(stmt, approval.Expect{Case: c.ID, SubjectDigest: digest, Policy: pol, Approver: by.ID,
		CaseOpener: c.CreatedBy, Proposer: cand.SubmittedBy, Now: d.now()}); err != nil {
		return signoff.Approval{}, c, err
	}
	a, err := d.Store.RecordApproval(ctx, by, signoff.Approval{CaseID: c.ID, SubjectDigest: stmt.SubjectDigest, Decision: stmt.Decision,
		ApproverID: by.ID, KeyID: key.ID, Nonce: stmt.Nonce, PolicyDigest: stmt.PolicyDigest, IssuedAt: stmt.IssuedAt,
		ExpiresAt: stmt.ExpiresAt, Envelope: envelope, Via: via})
	if err != nil {
		return signoff.Approval{}, c, err
	}
	if c.State == workflow.BugApproved {
		d.log().InfoContext(ctx, "renewed approval recorded", "case_id", c.ID, "approval_id", a.ID)
		return a, c, nil
	}
	if stmt.Decision == approval.Reject {
		st := l.State
		for i := range st.Candidates {
			if st.Candidates[i].ID == cand.ID {
				st.Candidates[i].Status, st.Candidates[i].Rejection = signoff.CandidateRejected, reason
			}
		}
		u := signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "reject",
			Events: []signoff.LoopEvent{{Type: "approval.rejected", Payload: map[string]any{"approval_id": a.ID, "candidate_id": cand.ID, "subject_digest": digest, "reason": reason}}}}
		if c.FixAttempts < c.MaxFixAttempts {
			u.Jobs = []signoff.JobRequest{{Args: signoff.FixJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID, Round: st.Round, Attempt: c.FixAttempts + 1}}}
		}
		_, c, err = d.Store.AdvanceLoop(ctx, by, u)
		return a, c, err
	}
	all, err := d.Store.ListApprovals(ctx, sys(c.WorkspaceID), c.ID)
	if err != nil {
		return a, c, err
	}
	ids, ok := approval.Quorum(d.activeApprovals(ctx, c.WorkspaceID, all), digest, pol, d.now())
	if !ok {
		return a, c, nil // recorded; more approvers are needed
	}
	_, c, err = d.Store.AdvanceLoop(ctx, by, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: "approve",
		Events: []signoff.LoopEvent{{Type: "approval.quorum", Payload: map[string]any{"approvals": ids, "candidate_id": cand.ID,
			"commit": cand.Commit, "subject_digest": digest, "quorum": pol.Quorum, "via": via}}}})
	return a, c, err
}
