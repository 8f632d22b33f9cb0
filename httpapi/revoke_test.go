package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
)

// recordApproval stores a valid approval of caseID by who under keyID, as
// the server does once it has verified the envelope.
func recordApproval(t *testing.T, w *workspace, caseID string, who signoff.Actor, keyID string) signoff.Approval {
	t.Helper()
	now := time.Now()
	a, err := w.store.RecordApproval(context.Background(), signoff.SystemActor(w.ws.ID), signoff.Approval{CaseID: caseID,
		SubjectDigest: strings.Repeat("ab", 32), Decision: "approve", ApproverID: who.ID, KeyID: keyID, Nonce: signoff.NewID("n"),
		IssuedAt: now, ExpiresAt: now.Add(time.Hour), Envelope: json.RawMessage(`{}`), Via: "cli-signed"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func approvalStatus(t *testing.T, w *workspace, a signoff.Approval) string {
	t.Helper()
	list, err := w.store.ListApprovals(context.Background(), w.owner, a.CaseID)
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range list {
		if got.ID == a.ID {
			return got.Status
		}
	}
	t.Fatalf("approval %s not listed", a.ID)
	return ""
}

// TestDisableActorStopsTokenAtOnce: an owner disables a person over the
// API; the person's very next request is refused and their approval no
// longer counts. Enabling lets the token in again, the approval stays
// void, and the last enabled owner cannot lock the workspace out.
func TestDisableActorStopsTokenAtOnce(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil)
	op := w.actor(t, "olga", signoff.RoleOperator)
	opTok := w.token(t, op)
	_, pemKey := newApproverKey(t)
	k, err := store.RegisterKey(context.Background(), op, pemKey)
	if err != nil {
		t.Fatal(err)
	}
	a := recordApproval(t, w, w.bug.ID, op, k.ID)
	if got := do(t, srv, request{method: "GET", path: "/api/v1/me", token: opTok}); got.status != http.StatusOK {
		t.Fatalf("before: GET /me = %d", got.status)
	}

	steps := []struct {
		name        string
		rq          request
		want        int
		meAfter     int    // the operator's GET /me right after
		approvalNow string // the approval's status right after
	}{
		{"operator may not disable", request{method: "POST", path: "/api/v1/actors/" + op.ID + "/disable", token: opTok}, 403, 200, signoff.ApprovalValid},
		{"owner disables", request{method: "POST", path: "/api/v1/actors/" + op.ID + "/disable", token: w.ownerToken}, 200, 401, signoff.ApprovalVoided},
		{"disabled twice", request{method: "POST", path: "/api/v1/actors/" + op.ID + "/disable", token: w.ownerToken}, 409, 401, signoff.ApprovalVoided},
		{"last owner", request{method: "POST", path: "/api/v1/actors/" + w.owner.ID + "/disable", token: w.ownerToken}, 409, 401, signoff.ApprovalVoided},
		{"owner enables", request{method: "POST", path: "/api/v1/actors/" + op.ID + "/enable", token: w.ownerToken}, 200, 200, signoff.ApprovalVoided},
		{"enabled twice", request{method: "POST", path: "/api/v1/actors/" + op.ID + "/enable", token: w.ownerToken}, 409, 200, signoff.ApprovalVoided},
	}
	for _, st := range steps {
		got := do(t, srv, st.rq)
		if got.status != st.want {
			t.Fatalf("%s: status %d, want %d (%s)", st.name, got.status, st.want, got.body)
		}
		checkShape(t, got)
		if st.name == "owner disables" {
			var body struct {
				Actor           signoff.Actor `json:"actor"`
				VoidedApprovals int           `json:"voided_approvals"`
			}
			got.decode(t, &body)
			if body.Actor.ID != op.ID || body.Actor.DisabledAt == nil || body.VoidedApprovals != 1 {
				t.Fatalf("disable answered %+v", body)
			}
		}
		if me := do(t, srv, request{method: "GET", path: "/api/v1/me", token: opTok}); me.status != st.meAfter {
			t.Fatalf("%s: the operator's GET /me = %d, want %d", st.name, me.status, st.meAfter)
		}
		if s := approvalStatus(t, w, a); s != st.approvalNow {
			t.Fatalf("%s: approval is %s, want %s", st.name, s, st.approvalNow)
		}
	}
}

// TestRevokeOwnKey: a person revokes their own key over the API, which
// voids their approval under it and shows as revoked in the key list;
// another person's key is not theirs to revoke.
func TestRevokeOwnKey(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil)
	op := w.actor(t, "olga", signoff.RoleOperator)
	opTok := w.token(t, op)
	ctx := context.Background()
	_, pemKey := newApproverKey(t)
	k, err := store.RegisterKey(ctx, op, pemKey)
	if err != nil {
		t.Fatal(err)
	}
	_, ownerPEM := newApproverKey(t)
	ownerKey, err := store.RegisterKey(ctx, w.owner, ownerPEM)
	if err != nil {
		t.Fatal(err)
	}
	a := recordApproval(t, w, w.bug.ID, op, k.ID)

	if got := do(t, srv, request{method: "POST", path: "/api/v1/keys/" + ownerKey.ID + "/revoke", token: opTok}); got.status != http.StatusNotFound {
		t.Fatalf("operator revokes the owner's key: %d %s", got.status, got.body)
	}
	got := do(t, srv, request{method: "POST", path: "/api/v1/keys/" + k.ID + "/revoke", token: opTok})
	if got.status != http.StatusOK {
		t.Fatalf("revoke own key: %d %s", got.status, got.body)
	}
	var body struct {
		Key             signoff.ApproverKey `json:"key"`
		VoidedApprovals int                 `json:"voided_approvals"`
	}
	got.decode(t, &body)
	if body.Key.ID != k.ID || body.Key.RevokedAt == nil || body.VoidedApprovals != 1 {
		t.Fatalf("revoke answered %+v", body)
	}
	if s := approvalStatus(t, w, a); s != signoff.ApprovalVoided {
		t.Fatalf("approval is %s after its key was revoked", s)
	}
	var list struct {
		Keys []signoff.ApproverKey `json:"keys"`
	}
	do(t, srv, request{method: "GET", path: "/api/v1/keys", token: w.ownerToken}).decode(t, &list)
	revoked := map[string]bool{}
	for _, key := range list.Keys {
		revoked[key.ID] = key.RevokedAt != nil
	}
	if len(revoked) != 2 || !revoked[k.ID] || revoked[ownerKey.ID] {
		t.Fatalf("key list revoked state %v", revoked)
	}
	if got := do(t, srv, request{method: "POST", path: "/api/v1/keys/" + k.ID + "/revoke", token: w.ownerToken}); got.status != http.StatusConflict {
		t.Fatalf("revoke twice: %d", got.status)
	}
}
