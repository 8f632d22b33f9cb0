package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/repair"
)

// The approval page shows what a person would sign: the complete subject
// (the candidate's card or the change plan, untruncated), its digest and
// the policy it is judged under. An owner or operator approves or rejects
// it with a passkey (passkey.go: the authenticator signs the digest of
// the exact statement, checked by the same desk and gate as a CLI
// signature) or with the signoff approve command, which recomputes the
// digest and signs it on their machine. Everything is read live on every
// request.

// policyRow is one line of the policy results: a rule that passed or
// failed (Class "ok" or "bad"), or a setting shown for information.
type policyRow struct {
	Rule   string
	Class  string
	Result string
	Detail string
}

func passClass(ok bool) string {
	if ok {
		return "ok"
	}
	return "bad"
}

// cardView is one approval card the outbox opened for the case.
type cardView struct {
	ID, Kind, Status, Digest, Addressee string
	Opened, Expires                     time.Time
}

// approvalView is the approval page.
type approvalView struct {
	Case signoff.Case
	// Closed, when set, says why there is nothing to approve here; the
	// page then offers nothing to act on.
	Closed       string
	SubjectKind  string
	Subject      string
	Diff         string
	Digest       string
	PolicyDigest string
	Policy       []policyRow
	Verdict      []repair.Row
	Fingerprint  string
	// Source is the harness's test source on a bug card, and Review who
	// approved it: the digest covers both.
	Source []repair.SourceFile
	Review *signoff.HarnessReview
	// Defences is what the verification did against a counterfeit verdict
	// (bug cards): discarded test edits, static findings, the witness.
	Defences  *repair.Defences
	Approvals []signoff.Approval
	Cards     []cardView
	// Command is signoff approve as it can be pasted (SIGNOFF_URL and the
	// key path set).
	Command    string
	CanApprove bool
	Expires    time.Time
	// Passkeys is how many live passkeys the signed-in person has for
	// this host; the passkey buttons need one.
	Passkeys int
	// Quorum is the policy's; Approvers who approved the digest on the
	// card (names), for the page after approval.
	Quorum    int
	Approvers []approverRow
	// Decided says the case moved past its approval; Waiting is the next
	// step then.
	Decided string
	Waiting *waitingView
	// CSRF is the session's token, for the passkey form.
	CSRF string
}

// approverRow is one person whose approval of the digest counts.
type approverRow struct {
	Name, ID, Via, Status string
	At                    time.Time
}

func (s *server) approvalPage(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx, by := r.Context(), sess.Actor
	c, err := s.store.GetCase(ctx, by, r.PathValue("id"))
	if err != nil {
		return notFoundCase(err)
	}
	v := approvalView{Case: c, CanApprove: identity.Can(by.Role, identity.OpApprove), CSRF: sess.CSRF}
	cards, _, err := s.store.ListCards(ctx, by, c.ID)
	if err != nil {
		return err
	}
	if !awaitingApproval(c) {
		// Past its approval (or not there yet): say who approved, the
		// quorum and what comes next, not only that nothing is to sign.
		if s.subject(r, by, c, &v) != nil {
			v.Digest, v.Subject = "", ""
		}
		if apvs, err := s.store.ListApprovals(ctx, by, c.ID); err == nil && v.Digest == "" {
			v.Approvals = apvs
		}
		v.Approvers = s.approverRows(ctx, by, v.Approvals, v.Digest)
		w := s.waitingOn(s.withWaitingURL(r), by, c)
		v.Waiting = &w
		v.Decided = fmt.Sprintf("This case is not waiting for an approval: it is %s.", c.State)
		v.Closed = v.Decided
	} else if err := s.subject(r, by, c, &v); err != nil {
		if code := signoff.ErrorCode(err); code != signoff.ECONFLICT && code != signoff.EUNAVAILABLE {
			return err
		}
		v.Closed = "There is no approval card for this case now: " + signoff.ErrorMessage(err)
	}
	// The cards the outbox opened for the case, newest first. An approval
	// card over another digest than the live subject's is superseded.
	now := s.o.Now()
	var current *signoff.Card // the newest approval card over the live subject
	for i := range cards {
		cd := cards[i].Effective(now)
		approvalKind := cd.Kind == card.CandidateApproval || cd.Kind == card.ChangeApproval
		cv := cardView{ID: cd.ID, Kind: cd.Kind, Status: cd.Status, Digest: cd.SubjectDigest, Addressee: cd.Addressee.String(), Opened: cd.OpenedAt, Expires: cd.ExpiresAt}
		switch {
		case !approvalKind || v.Digest == "":
		case cd.SubjectDigest != v.Digest:
			if cd.Status == signoff.CardOpen {
				cv.Status = "superseded"
			}
		case current == nil:
			current = &cd
		}
		v.Cards = append(v.Cards, cv)
	}
	switch {
	case v.Closed != "":
		// Say so when the last card sent is expired too.
		if len(v.Cards) > 0 && v.Cards[0].Status == signoff.CardExpired {
			v.Closed += fmt.Sprintf(" The last card sent (%s) expired at %s.", v.Cards[0].Kind, when(v.Cards[0].Expires))
		}
	case !v.Expires.IsZero() && !now.Before(v.Expires):
		v.Closed = fmt.Sprintf("This plan expired at %s: it can no longer be approved or executed. Plan the change again.", when(v.Expires))
	case current != nil && current.Status == signoff.CardExpired:
		v.Closed = fmt.Sprintf("The approval card for this digest expired at %s. Expired cards fail closed: nothing can be approved on it.", when(current.ExpiresAt))
	}
	if v.Closed == "" {
		v.Command = waitingCommand(s.baseURL(r), []string{"approve", "--case", c.ID, "--key", s.approvalKey()})
		v.Approvers = s.approverRows(ctx, by, v.Approvals, v.Digest)
		if rpID, _, err := s.relyingParty(r); err == nil && v.CanApprove {
			if ks, _, err := s.myPasskeys(ctx, by, rpID); err == nil {
				v.Passkeys = len(ks)
			}
		}
	}
	me := by
	script := ""
	if v.Closed == "" && v.CanApprove {
		script = "passkey.js"
	}
	s.render(w, r, http.StatusOK, "approval", page{Title: "Approval: " + c.Title, Me: &me, CSRF: sess.CSRF, Script: script, Body: v})
	return nil
}

// approverRows names the people whose approvals of digest count (valid,
// or consumed by the step they allowed); with no digest, every approval.
func (s *server) approverRows(ctx context.Context, by signoff.Actor, as []signoff.Approval, digest string) []approverRow {
	var out []approverRow
	seen := map[string]bool{}
	for _, a := range as {
		if a.Decision != approval.Approve || (digest != "" && a.SubjectDigest != digest) || seen[a.ApproverID] ||
			(a.Status != signoff.ApprovalValid && a.Status != signoff.ApprovalConsumed) {
			continue
		}
		seen[a.ApproverID] = true
		name := a.ApproverID
		if act, err := s.store.GetActor(ctx, by.WorkspaceID, a.ApproverID); err == nil {
			name = act.Name
		}
		out = append(out, approverRow{Name: name, ID: a.ApproverID, Via: a.Via, Status: a.Status, At: a.IssuedAt})
	}
	return out
}

// subject reads the case's live approval card from its desk into v.
func (s *server) subject(r *http.Request, by signoff.Actor, c signoff.Case, v *approvalView) error {
	ctx := r.Context()
	switch c.Kind {
	case signoff.KindBug:
		if s.o.BugDesk == nil {
			return signoff.Errorf(signoff.EUNAVAILABLE, "the bug desk is not running in this server.")
		}
		cv, err := s.o.BugDesk.Card(ctx, by, c.ID)
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(cv.Card, "", "  ")
		if err != nil {
			return err
		}
		v.SubjectKind, v.Subject, v.Diff, v.Digest = "candidate card", string(b), cv.Card.Diff, cv.SubjectDigest
		v.PolicyDigest, v.Approvals, v.Verdict, v.Fingerprint = cv.PolicyDigest, cv.Approvals, cv.Card.Table, cv.Card.Fingerprint
		v.Quorum = cv.Policy.Quorum
		v.Policy = approvalPolicyRows(cv.Policy.Quorum, cv.Policy.TTLHours, cv.Policy.NoSelfApproval, cv.Policy.ProposerCannotApprove)
		v.Policy = append(v.Policy, policyRow{Rule: "verdict", Class: passClass(cv.Card.Verdict == "VERIFIED"), Result: cv.Card.Verdict, Detail: cv.Card.Reason})
		review := cv.Card.HarnessReview
		v.Source, v.Review = cv.Card.HarnessSource, &review
		defences := cv.Card.Defences
		v.Defences = &defences
		v.Policy = append(v.Policy, policyRow{Rule: "harness reviewed by staff", Class: passClass(review.Decision == signoff.HarnessApprove),
			Result: review.Decision, Detail: fmt.Sprintf("%s approved the test source of reproduction %s over review digest %s", review.By, review.HarnessID, review.ReviewDigest)})
	case signoff.KindChange:
		if s.o.ChangeDesk == nil {
			return signoff.Errorf(signoff.EUNAVAILABLE, "the change desk is not running in this server.")
		}
		cd, err := s.o.ChangeDesk.Card(ctx, by, c.ID)
		if err != nil {
			return err
		}
		v.SubjectKind, v.Subject, v.Digest = "change plan", indentJSON(cd.Plan), cd.SubjectDigest
		v.PolicyDigest, v.Approvals, v.Quorum = cd.PolicyDigest, cd.Approvals, cd.Policy.Quorum
		var plan struct {
			ExpiresAt time.Time `json:"expires_at"`
		}
		if json.Unmarshal(cd.Plan, &plan) == nil {
			v.Expires = plan.ExpiresAt
		}
		var review change.Result
		if len(cd.Review) > 0 && json.Unmarshal(cd.Review, &review) == nil {
			for _, rr := range review.Rules {
				v.Policy = append(v.Policy, policyRow{Rule: rr.Rule, Class: passClass(rr.OK), Result: passFail(rr.OK), Detail: rr.Detail})
			}
		}
		v.Policy = append(v.Policy, approvalPolicyRows(cd.Policy.Quorum, cd.Policy.TTLHours, cd.Policy.NoSelfApproval, cd.Policy.ProposerCannotApprove)...)
		if len(cd.Approvers) > 0 {
			v.Policy = append(v.Policy, policyRow{Rule: "approvers", Result: "group", Detail: fmt.Sprint(cd.Approvers)})
		}
		if cd.ReviewNote != "" {
			v.Policy = append(v.Policy, policyRow{Rule: "review note (advisory)", Result: "note", Detail: cd.ReviewNote})
		}
	default:
		return signoff.Errorf(signoff.ECONFLICT, "cases of kind %s have no approval card.", c.Kind)
	}
	return nil
}

func passFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "fail"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// approvalPolicyRows are the approval rules of a policy.
func approvalPolicyRows(quorum, ttlHours int, noSelf, proposerNot bool) []policyRow {
	return []policyRow{
		{Rule: "quorum", Result: strconv.Itoa(quorum), Detail: "distinct approvers must sign this exact digest"},
		{Rule: "approval lifetime", Result: strconv.Itoa(ttlHours) + " h", Detail: "a signed approval expires after this"},
		{Rule: "no self-approval", Result: yesNo(noSelf), Detail: "whoever opened the case cannot approve it"},
		{Rule: "proposer cannot approve", Result: yesNo(proposerNot), Detail: "whoever proposed the subject cannot approve it"},
		{Rule: "web approval", Result: "passkey", Detail: "with a registered passkey, which signs this statement's digest on your authenticator; or the command below, which signs on your machine"},
	}
}
