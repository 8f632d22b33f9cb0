package httpapi

import (
	"context"
	"net/http"

	"github.com/signoff-dev/signoff"
)

// Revoking approval keys and disabling people. Each takes effect in the
// store's one transaction: the key's (or the person's) approvals that
// still count are voided there, and a disabled person's tokens and web
// sessions stop working with the next request.

// revokedKey is the answer to a key revocation.
type revokedKey struct {
	Key signoff.ApproverKey `json:"key"`
	// VoidedApprovals is how many approvals stopped counting.
	VoidedApprovals int `json:"voided_approvals"`
}

// revokeKey revokes an approval key: an owner any key of the workspace,
// an operator their own (the store decides which).
func (s *server) revokeKey(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	k, n, err := s.store.RevokeKey(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	s.settleVoided(r, by.WorkspaceID, n)
	writeJSON(w, http.StatusOK, revokedKey{Key: k, VoidedApprovals: n})
	return nil
}

// disabledActor is the answer to disabling an actor.
type disabledActor struct {
	Actor           signoff.Actor `json:"actor"`
	VoidedApprovals int           `json:"voided_approvals"`
}

func (s *server) disableActor(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	a, n, err := s.store.DisableActor(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	s.settleVoided(r, by.WorkspaceID, n)
	writeJSON(w, http.StatusOK, disabledActor{Actor: a, VoidedApprovals: n})
	return nil
}

func (s *server) enableActor(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	a, err := s.store.EnableActor(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

// settleVoided moves the approved changes whose quorum just lost an
// approval back to awaiting approval, so the case says what is next (a
// new signature) instead of sitting approved. The revocation itself is
// already stored: a failure here is logged, and the gate still refuses
// the voided approval and moves the case when it is next executed.
func (s *server) settleVoided(r *http.Request, ws string, voided int) {
	if voided == 0 || s.opts.change == nil {
		return
	}
	if err := s.opts.change.SettleVoided(context.WithoutCancel(r.Context()), ws); err != nil {
		s.log.ErrorContext(r.Context(), "move changes with voided approvals back to awaiting approval", "workspace_id", ws, "err", err)
	}
}
