package web

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/evidence"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/workflow"
)

// The change section of a case page: the plan as its digest covers it
// (and the earlier plans of the case), the deterministic review of the
// current plan under the policy it names, the signed approvals, what the
// gate executed (outcome, health checks, the signed receipts, decoded),
// and, for an executed change, the form that asks for a compensating
// rollback. Everything is read from the store as the signed-in person;
// the rollback goes through the change desk, which decides.

// changeView is the change section of a case page.
type changeView struct {
	CaseID string
	// NoLoop: the case has no change loop yet (nothing was requested
	// through the desk), so there is nothing else to show.
	NoLoop bool
	// Links to the related cases.
	Incident, RevertOf, RevertedBy string

	Plan *planView
	// Earlier are the case's other plans, newest first.
	Earlier []planView

	// The deterministic review of the current plan.
	ReviewOK     bool
	Review       []reviewRow
	ReviewNote   string
	PolicyDigest string
	// ReviewWords is the review in a sentence.
	ReviewWords string

	ApprovedDigest, ApprovedPolicyDigest string
	Preapproved                          bool
	Bypass                               bool
	BypassUntil                          *time.Time
	Refusals                             int

	Approvals []changeApproval
	// ApprovalsHidden says why the approvals are not shown, if they are not.
	ApprovalsHidden string

	// Execution is the outcome of the newest receipt; Receipts are all of
	// them, oldest first.
	Execution *receiptView
	Receipts  []receiptView

	// CanRollback: the page offers the rollback form. RollbackNote says
	// why it does not, when the change is executed and the person may roll
	// back but something else stands in the way.
	CanRollback  bool
	RollbackNote string
	// RollbackMin is the policy's min_reason_length, which the desk
	// checks before it opens the compensating case.
	RollbackMin int
	// Compensation is the rollback rule's decision on a compensating
	// case; OverwrittenBy the rollbacks that wrote over this change.
	Compensation  *change.CompensationDecision
	OverwrittenBy []string

	// Actions are the forms a person may use on the case: plan it,
	// execute it (changeactions.go).
	Actions changeActions
}

// reviewRow is one rule of the review, named in words.
type reviewRow struct {
	policyRow
	Words string
}

// planView is one plan of the case.
type planView struct {
	ID, Digest, Proposer, Via string
	Created                   time.Time
	Current                   bool
	// JSON is the plan indented for reading; Canonical the exact bytes
	// stored, which the digest covers.
	JSON, Canonical string
	Kind, Target    string
	Expires         time.Time
	HasRollback     bool
	// Undecodable says why the stored plan does not decode, if it does not.
	Undecodable string
	// Words is the plan in words (changeplan.go).
	Words *planWords
}

// changeApproval is one signed approval of the case.
type changeApproval struct {
	signoff.Approval
	// Effective is the status as of now (a valid approval past its expiry
	// is expired); ForCurrent: it names the current plan's digest.
	Effective  string
	ForCurrent bool
}

// receiptView is one receipt, its statement decoded.
type receiptView struct {
	ID, Kind, Digest string
	Created          time.Time
	// Verified says whether the DSSE signature verifies under the
	// server's key: "yes", "no", or "" when the server has no key to check.
	Verified string
	// Body is the decoded predicate; Error why it could not be decoded.
	Body      changedesk.ReceiptBody
	Error     string
	Predicate string
	Before    stateView
	After     *stateView
	Restored  *stateView
	// Matches is the compensating rollback's proof: "yes", "no" or "".
	Matches string
}

// stateView is a target's state as a receipt records it.
type stateView struct {
	Digest, Content, Value string
}

func stateOf(s *changedesk.State) *stateView {
	if s == nil {
		return nil
	}
	v := &stateView{Digest: s.Digest, Content: s.Content}
	if len(s.Value) > 0 && string(s.Value) != "null" {
		v.Value = indentJSON(s.Value)
	}
	return v
}

// outcomeClass is the CSS class of an outcome: ok only for a change that
// applied with its health passing, or a compensation that did.
func outcomeClass(outcome string) string {
	switch outcome {
	case changedesk.OutcomeExecuted:
		return "ok"
	case changedesk.OutcomeRolledBack, changedesk.OutcomeDrifted:
		return "warn"
	}
	return "bad"
}

// OutcomeClass is the CSS class of the receipt's outcome.
func (r receiptView) OutcomeClass() string { return outcomeClass(r.Body.Outcome) }

// changeSection reads what a change case's page shows.
func (s *server) changeSection(ctx context.Context, by signoff.Actor, c signoff.Case) (*changeView, error) {
	v := &changeView{CaseID: c.ID}
	l, err := s.store.GetChangeLoop(ctx, by, c.ID)
	switch {
	case err == nil:
	case signoff.ErrorCode(err) == signoff.ENOTFOUND:
		v.NoLoop = true
		return v, nil
	default:
		return nil, fmt.Errorf("change loop: %w", err)
	}
	st := l.State
	v.Incident, v.RevertOf, v.RevertedBy = st.Incident, st.RevertOf, st.RevertedBy
	v.PolicyDigest, v.ReviewNote = st.PolicyDigest, st.ReviewNote
	v.ApprovedDigest, v.ApprovedPolicyDigest, v.Preapproved = st.ApprovedDigest, st.ApprovedPolicyDigest, st.Preapproved
	v.Bypass, v.BypassUntil, v.Refusals = st.Bypass, st.BypassUntil, st.Refusals
	v.OverwrittenBy = st.OverwrittenBy
	if len(st.Compensation) > 0 {
		var dec change.CompensationDecision
		if err := json.Unmarshal(st.Compensation, &dec); err == nil {
			v.Compensation = &dec
		}
	}

	// The plans: the current one in full, the others listed newest first.
	plans, err := s.store.ListPlans(ctx, by, c.ID)
	if err != nil {
		return nil, fmt.Errorf("plans: %w", err)
	}
	for i := len(plans) - 1; i >= 0; i-- {
		p := plans[i]
		pv := planOf(p)
		if p.ID == st.PlanID {
			pv.Current = true
			v.Plan = &pv
			continue
		}
		pv.JSON, pv.Canonical = "", ""
		v.Earlier = append(v.Earlier, pv)
	}

	// The review of the current plan, rule by rule.
	if len(st.Review) > 0 && string(st.Review) != "null" {
		var review change.Result
		if err := json.Unmarshal(st.Review, &review); err != nil {
			v.Review = []reviewRow{{policyRow{Rule: "review", Class: "bad", Result: "unreadable", Detail: "the stored review does not decode: " + err.Error()}, "The stored review"}}
		} else {
			v.ReviewOK, v.ReviewWords = review.OK, reviewWords(review)
			for _, rr := range review.Rules {
				v.Review = append(v.Review, reviewRow{policyRow{Rule: rr.Rule, Class: passClass(rr.OK), Result: passFail(rr.OK), Detail: rr.Detail}, ruleWord(rr.Rule)})
			}
		}
	}

	// The approvals, as the signed-in person may read them.
	apvs, err := s.store.ListApprovals(ctx, by, c.ID)
	switch {
	case err == nil:
		now := s.o.Now()
		for _, a := range apvs {
			ca := changeApproval{Approval: a, Effective: a.Status, ForCurrent: a.SubjectDigest != "" && a.SubjectDigest == st.PlanDigest}
			if a.Status == signoff.ApprovalValid && !now.Before(a.ExpiresAt) {
				ca.Effective = "expired"
			}
			v.Approvals = append(v.Approvals, ca)
		}
	case signoff.ErrorCode(err) == signoff.EFORBIDDEN:
		v.ApprovalsHidden = "Your role does not read approvals."
	default:
		return nil, fmt.Errorf("approvals: %w", err)
	}

	// The receipts, decoded, their signatures checked with the server's key.
	rs, err := s.store.ListReceipts(ctx, by, c.ID)
	if err != nil {
		return nil, fmt.Errorf("receipts: %w", err)
	}
	var trusted []ed25519.PublicKey
	for _, k := range s.trusted {
		trusted = append(trusted, k)
	}
	for _, r := range rs {
		v.Receipts = append(v.Receipts, receiptOf(r, trusted))
	}
	if n := len(v.Receipts); n > 0 {
		x := v.Receipts[n-1]
		v.Execution = &x
	}

	// Rollback: only of an executed change with no compensation yet, for
	// the people who run the desk. The desk checks all of it again.
	// A compensation that ended without executing (review failed,
	// rejected, drifted, expired, rolled back) no longer holds the change:
	// it can be rolled back again.
	open := st.RevertedBy == ""
	if !open {
		if rc, err := s.store.GetCase(ctx, by, st.RevertedBy); err == nil {
			switch rc.State {
			case workflow.ChangeRequested, workflow.ChangeReviewFailed, workflow.ChangeDrifted, workflow.ChangeExpired,
				workflow.ChangeSuperseded, workflow.ChangeRolledBack:
				open = true
			}
		}
	}
	if c.State == workflow.ChangeExecuted && open && identity.Can(by.Role, identity.OpChangeExecute) {
		v.RollbackMin = change.DefaultMinReasonLength
		if s.o.ChangeDesk != nil {
			if pol, _, err := s.o.ChangeDesk.Policy(ctx, c.WorkspaceID); err == nil && pol.MinReasonLength > 0 {
				v.RollbackMin = pol.MinReasonLength
			}
		}
		switch {
		case s.o.ChangeDesk == nil:
			v.RollbackNote = "The change desk is not running in this server, so no rollback can be started here."
		case v.Plan != nil && v.Plan.Undecodable == "" && !v.Plan.HasRollback:
			v.RollbackNote = "This plan has no rollback: a person must restore the target by a new change request."
		default:
			v.CanRollback = true
		}
	}
	v.Actions = s.changeActions(ctx, by, c, l, v)
	return v, nil
}

// planOf shows a stored plan. A plan that no longer decodes is still
// shown as stored; the gate refuses it.
func planOf(p signoff.ChangePlan) planView {
	pv := planView{ID: p.ID, Digest: p.Digest, Proposer: p.Proposer, Via: p.Via, Created: p.CreatedAt,
		JSON: indentJSON(p.Body), Canonical: string(p.Body)}
	plan, err := change.DecodePlan(p.Body)
	if err != nil {
		pv.Undecodable = signoff.ErrorMessage(err)
		return pv
	}
	pv.Kind, pv.Target, pv.Expires = plan.Kind, plan.Target, plan.ExpiresAt
	pv.Words = wordsOf(plan)
	pv.HasRollback = len(plan.Rollback) > 0 && strings.TrimSpace(string(plan.Rollback)) != "null"
	return pv
}

// receiptOf decodes a receipt's DSSE envelope and its predicate.
func receiptOf(r signoff.Receipt, trusted []ed25519.PublicKey) receiptView {
	rv := receiptView{ID: r.ID, Kind: r.Kind, Digest: r.Digest, Created: r.CreatedAt}
	env, payload, err := evidence.DecodeEnvelope(r.Envelope)
	if err != nil {
		rv.Error = "the envelope does not decode: " + err.Error()
		return rv
	}
	if len(trusted) > 0 {
		rv.Verified = "no"
		if _, err := env.Verify(payload, trusted); err == nil {
			rv.Verified = "yes"
		}
	}
	body, err := changedesk.OpenReceipt(r, nil)
	if err != nil {
		rv.Error = "the statement does not decode: " + err.Error()
		return rv
	}
	rv.Body = body
	if b, err := json.MarshalIndent(body, "", "  "); err == nil {
		rv.Predicate = string(b)
	}
	rv.Before, rv.After, rv.Restored = *stateOf(&body.Before), stateOf(body.After), stateOf(body.Restored)
	if m := body.RestoredMatchesOriginal; m != nil {
		rv.Matches = yesNo(*m)
	}
	return rv
}

func (s *server) changeRoutes() {
	s.mux.HandleFunc("POST /cases/{id}/rollback", s.signedInPost(s.rollback))
	s.mux.HandleFunc("POST /cases/{id}/plan", s.signedInPost(s.planChange))
	s.mux.HandleFunc("POST /cases/{id}/execute", s.signedInPost(s.executeChange))
	s.mux.HandleFunc("GET /changes/new", s.signedIn(s.changeNewPage))
	s.mux.HandleFunc("POST /changes/new", s.signedInPost(s.requestChange))
}

// rollback asks the change desk for a compensating change of an executed
// one and goes to the new case. The desk decides who may (owners and
// operators) and whether the case can be rolled back.
func (s *server) rollback(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx, by, caseID := r.Context(), sess.Actor, r.PathValue("id")
	if !signoff.ValidID(signoff.PrefixCase, caseID) {
		return signoff.Errorf(signoff.ENOTFOUND, "There is no such case in your workspace.")
	}
	if s.o.ChangeDesk == nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "The change desk is not running in this server, so no rollback can be started here.")
	}
	nc, x, err := s.o.ChangeDesk.Rollback(ctx, by, caseID, r.PostFormValue("reason"))
	if err != nil {
		// A pre-approved rollback that the gate refused, or whose health
		// check failed, still opened its case: its page says what happened.
		if x != nil && nc.ID != "" {
			http.Redirect(w, r, "/cases/"+nc.ID, http.StatusSeeOther)
			return nil
		}
		if signoff.ErrorCode(err) == signoff.ENOTFOUND {
			return notFoundCase(err)
		}
		return fmt.Errorf("roll back %s: %w", caseID, err)
	}
	http.Redirect(w, r, "/cases/"+nc.ID, http.StatusSeeOther)
	return nil
}
