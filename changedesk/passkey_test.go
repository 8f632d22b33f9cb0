package changedesk_test

import (
	"crypto/ed25519"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/evidence"
	"github.com/signoff-dev/signoff/passkey"
	"github.com/signoff-dev/signoff/passkey/passkeytest"
	"github.com/signoff-dev/signoff/workflow"
)

const passkeyRP = "signoff.test"

// passkeySign makes a passkey approval envelope as the web page gets it:
// the statement approval.NewStatement builds, asserted by the person's
// authenticator over its digest.
func passkeySign(t *testing.T, a *passkeytest.Authenticator, st approval.Statement) []byte {
	t.Helper()
	body, err := st.Canonical()
	must(t, err)
	raw, err := a.Assert(body, passkeytest.Options{}).Marshal()
	must(t, err)
	return raw
}

// TestPasskeyApprovalGate: a passkey approval goes through the same desk
// Approve and gate as a CLI signature: quorum across one CLI and one
// passkey approval of two people, self-approval, the proposer, a replayed
// nonce, an expired or stale statement, someone else's or a revoked
// passkey and an altered envelope are refused; the gate re-verifies the
// stored passkey approval at execution; evidence verify checks it offline
// and finds it altered.
func TestPasskeyApprovalGate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	carol := e.person("carol")
	group := []string{e.owner.ID, e.alice.ID, e.bob.ID, carol.ID}
	e.setPolicy(strings.Replace(policyYAML(group, ""), "required: 1", "required: 2", 1))
	register := func(by signoff.Actor) (*passkeytest.Authenticator, signoff.ApproverKey) {
		a := passkeytest.New(passkeyRP)
		k, err := e.store.RegisterPasskey(e.ctx, by, a.Credential, 0, "https://"+passkeyRP)
		must(t, err)
		return a, k
	}
	bobPK, bobKey := register(e.bob)
	ownerPK, _ := register(e.owner)
	carolPK, _ := register(carol)
	if !passkey.IsCredential(bobKey.PublicKey) || bobKey.ID != bobPK.Credential.KeyID() {
		t.Fatalf("registered key %+v", bobKey)
	}

	// The owner opens the request; carol proposes the plan.
	c, _, err := e.desk.Request(e.ctx, e.owner, changedesk.RequestInput{ProjectID: e.project, Reason: "checkout fails with 500s since the v2 flow went live"})
	must(t, err)
	c, _, err = e.desk.Propose(e.ctx, carol, c.ID, changedesk.Proposal{Target: "flag:prod/" + flagKey,
		Params: json.RawMessage(`{"value":false}`), HealthCheck: e.health(), Via: "human"})
	must(t, err)
	if c.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("state %s", c.State)
	}
	card, err := e.desk.Card(e.ctx, e.bob, c.ID)
	must(t, err)
	stmt := func(by signoff.Actor, digest string, issued time.Time) approval.Statement {
		return approval.NewStatement(c.ID, digest, approval.Approve, card.PolicyDigest, by.ID, issued, card.Policy.TTL())
	}
	now := e.clock.Now()
	refuse := func(name string, by signoff.Actor, raw []byte, via string, code string, says string) {
		t.Helper()
		_, _, err := e.desk.Approve(e.ctx, by, c.ID, raw, via, "")
		if signoff.ErrorCode(err) != code || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: got %v, want %s saying %q", name, err, code, says)
		}
	}
	refuse("self-approval", e.owner, passkeySign(t, ownerPK, stmt(e.owner, card.SubjectDigest, now)), approval.ViaWebPasskey, signoff.EFORBIDDEN, "no self-approval")
	refuse("proposer", carol, passkeySign(t, carolPK, stmt(carol, card.SubjectDigest, now)), approval.ViaWebPasskey, signoff.EFORBIDDEN, "proposer")
	refuse("stale digest", e.bob, passkeySign(t, bobPK, stmt(e.bob, strings.Repeat("a", 64), now)), approval.ViaWebPasskey, signoff.ECONFLICT, "stale")
	refuse("expired", e.bob, passkeySign(t, bobPK, stmt(e.bob, card.SubjectDigest, now.Add(-card.Policy.TTL()-time.Minute))), approval.ViaWebPasskey, signoff.ECONFLICT, "expired")
	refuse("passkey envelope sent as a CLI signature", e.bob, passkeySign(t, bobPK, stmt(e.bob, card.SubjectDigest, now)), "cli-signed", signoff.EINVALID, "web-passkey")
	refuse("someone else's passkey", e.alice, passkeySign(t, bobPK, stmt(e.alice, card.SubjectDigest, now)), approval.ViaWebPasskey, signoff.EFORBIDDEN, "not a registered key")
	altered := func() []byte {
		a := bobPK.Assert(mustCanonical(t, stmt(e.bob, card.SubjectDigest, now)), passkeytest.Options{})
		a.Statement = mustCanonical(t, stmt(e.bob, card.SubjectDigest, now)) // another nonce: not what was signed
		raw, _ := a.Marshal()
		return raw
	}()
	refuse("altered statement", e.bob, altered, approval.ViaWebPasskey, signoff.EFORBIDDEN, "challenge")
	lost, lostKey := register(e.bob)
	_, _, err = e.store.RevokeKey(e.ctx, e.bob, lostKey.ID)
	must(t, err)
	refuse("revoked passkey", e.bob, passkeySign(t, lost, stmt(e.bob, card.SubjectDigest, now)), approval.ViaWebPasskey, signoff.EFORBIDDEN, "not a registered key")
	if s := e.state(c.ID); s != workflow.ChangeAwaitingApproval {
		t.Fatalf("case %s after refusals", s)
	}

	// Bob approves with his passkey: recorded, one of two.
	good := passkeySign(t, bobPK, stmt(e.bob, card.SubjectDigest, now))
	a, c2, err := e.desk.Approve(e.ctx, e.bob, c.ID, good, approval.ViaWebPasskey, "")
	must(t, err)
	if a.Via != approval.ViaWebPasskey || a.KeyID != bobKey.ID || c2.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("passkey approval %+v, case %s", a, c2.State)
	}
	refuse("replayed nonce", e.bob, good, approval.ViaWebPasskey, signoff.ECONFLICT, "")
	// Alice signs with her Ed25519 key: the quorum of two is reached.
	if c2 = e.approve(e.alice, c.ID); c2.State != workflow.ChangeApproved {
		t.Fatalf("after a CLI and a passkey approval: %s", c2.State)
	}
	x, err := e.desk.Execute(e.ctx, e.alice, c.ID)
	must(t, err)
	if x.Outcome != changedesk.OutcomeExecuted || !slices.ContainsFunc(x.Predicate.Approvals, func(r changedesk.ReceiptApproval) bool { return r.Via == approval.ViaWebPasskey }) {
		t.Fatalf("execution %s, approvals %+v", x.Outcome, x.Predicate.Approvals)
	}

	// Offline: the bundle carries the passkey and its assertion.
	f := e.verifyExport(t, c.ID)
	item := "approval " + a.ID
	if !slices.ContainsFunc(f.Items, func(it evidence.Finding) bool {
		return it.Item == item && it.Status == evidence.StatusOK && strings.Contains(it.Detail, "passkey assertion")
	}) {
		t.Fatalf("no verified passkey approval:\n%s", f)
	}
	// An altered envelope in the store (a flipped signature bit) is
	// bundled and signed by the server as it is, and fails offline.
	var env passkey.Envelope
	must(t, json.Unmarshal(a.Envelope, &env))
	env.Signature[len(env.Signature)-2] ^= 1
	bad, _ := env.Marshal()
	_, err = e.store.SQL().ExecContext(e.ctx, `UPDATE approvals SET envelope = $1 WHERE id = $2`, string(bad), a.ID)
	must(t, err)
	f2, err := evidence.VerifyBundle(e.export(c.ID), []ed25519.PublicKey{e.serverKey.Public().(ed25519.PublicKey)})
	must(t, err)
	if f2.OK() || !slices.ContainsFunc(f2.With(evidence.StatusFailed), func(it evidence.Finding) bool {
		return it.Item == item && strings.Contains(it.Detail, "signature does not verify")
	}) {
		t.Fatalf("an altered passkey approval verified:\n%s", f2)
	}
}

// TestPasskeyApprovalAlteredBeforeExecution: the gate re-verifies stored
// passkey approvals; one altered in the database after it was recorded
// stops the execution.
func TestPasskeyApprovalAlteredBeforeExecution(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	bobPK := passkeytest.New(passkeyRP)
	_, err := e.store.RegisterPasskey(e.ctx, e.bob, bobPK.Credential, 0, "https://"+passkeyRP)
	must(t, err)
	c := e.request("false")
	card, err := e.desk.Card(e.ctx, e.bob, c.ID)
	must(t, err)
	st := approval.NewStatement(c.ID, card.SubjectDigest, approval.Approve, card.PolicyDigest, e.bob.ID, e.clock.Now(), card.Policy.TTL())
	a, c2, err := e.desk.Approve(e.ctx, e.bob, c.ID, passkeySign(t, bobPK, st), approval.ViaWebPasskey, "")
	must(t, err)
	if c2.State != workflow.ChangeApproved {
		t.Fatalf("state %s", c2.State)
	}
	var env passkey.Envelope
	must(t, json.Unmarshal(a.Envelope, &env))
	env.AuthenticatorData[32] &^= 0x04 // user verification flag cleared after signing
	bad, _ := env.Marshal()
	_, err = e.store.SQL().ExecContext(e.ctx, `UPDATE approvals SET envelope = $1 WHERE id = $2`, string(bad), a.ID)
	must(t, err)
	if _, err := e.desk.Execute(e.ctx, e.alice, c.ID); gateCheck(err) == "" {
		t.Fatalf("executed on an altered passkey approval: %v", err)
	}
	if s := e.state(c.ID); s == workflow.ChangeExecuted {
		t.Fatalf("state %s", s)
	}
}

func mustCanonical(t *testing.T, st approval.Statement) []byte {
	t.Helper()
	b, err := st.Canonical()
	must(t, err)
	return b
}
