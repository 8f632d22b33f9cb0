package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/sqlstore"
)

// decisionView is one human decision requested on the case.
type decisionView struct {
	signoff.Decision
	Subject string
	// CanDecide: the decision is pending and unexpired and the signed-in
	// role decides (owner, operator). Only then does the page offer its
	// form; the store checks all of it again.
	CanDecide bool
}

func (s *server) decisions(ctx context.Context, by signoff.Actor, c signoff.Case) ([]decisionView, error) {
	ds, err := s.store.ListDecisions(ctx, by, c.ID)
	if err != nil {
		if signoff.ErrorCode(err) == signoff.EFORBIDDEN {
			return nil, nil
		}
		return nil, err
	}
	now := s.o.Now()
	out := make([]decisionView, 0, len(ds))
	for _, d := range ds {
		if d.Status == signoff.DecisionPending && !now.Before(d.ExpiresAt) {
			d.Status = signoff.DecisionExpired
		}
		out = append(out, decisionView{Decision: d, Subject: indentJSON(d.Subject),
			CanDecide: d.Status == signoff.DecisionPending && identity.Can(by.Role, identity.OpDecisionDecide)})
	}
	return out, nil
}

// maxWebReason bounds a decision's reason typed on the page.
const maxWebReason = 2000

// decide answers a pending decision from its form on the case page. The
// form carries the digest of the subject the page showed: a decision
// superseded since (another subject) is refused by the store as a
// conflict, never applied to what the person did not see.
func (s *server) decide(w http.ResponseWriter, r *http.Request, sess sqlstore.WebSession) error {
	ctx, by := r.Context(), sess.Actor
	caseID, id := r.PathValue("id"), r.PathValue("decision")
	if !identity.Can(by.Role, identity.OpDecisionDecide) {
		return signoff.Errorf(signoff.EFORBIDDEN, "Your role (%s) does not decide.", by.Role)
	}
	d, err := s.store.GetDecision(ctx, by, id)
	if err != nil || d.CaseID != caseID {
		return signoff.Errorf(signoff.ENOTFOUND, "There is no such decision on this case.")
	}
	var approve bool
	switch r.PostFormValue("answer") {
	case "approve":
		approve = true
	case "reject":
	default:
		return signoff.Errorf(signoff.EINVALID, "Choose Approve or Reject.")
	}
	reason := strings.TrimSpace(r.PostFormValue("reason"))
	if !approve && reason == "" {
		return signoff.Errorf(signoff.EINVALID, "Say why you reject it: the reason goes to whoever asked.")
	}
	if len(reason) > maxWebReason {
		return signoff.Errorf(signoff.EINVALID, "The reason is too long (at most %d characters).", maxWebReason)
	}
	digest := r.PostFormValue("subject_digest")
	if digest == "" {
		return signoff.Errorf(signoff.EINVALID, "The form carries no subject digest: reload the page and decide on what it shows.")
	}
	if reason == "" {
		reason = "approved on the web desk"
	}
	if _, err := s.store.DecideAmended(ctx, by, id, digest, approve, reason, nil); err != nil {
		return fmt.Errorf("decide %s: %w", id, err)
	}
	http.Redirect(w, r, "/cases/"+caseID+"#decision-"+id, http.StatusSeeOther)
	return nil
}
