package approval_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/passkey"
	"github.com/signoff-dev/signoff/passkey/passkeytest"
)

// TestVerifyRecord: a stored approval verifies only when its row says what
// its envelope says and the envelope verifies under the key the row
// names, for an Ed25519 envelope and a passkey one alike; a key of the
// other kind, or another key, does not verify it.
func TestVerifyRecord(t *testing.T) {
	t.Parallel()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	pemPub, err := keys.EncodePublic(pub)
	if err != nil {
		t.Fatal(err)
	}
	edKey := signoff.ApproverKey{ID: keys.ID(pub), ActorID: "act_op", PublicKey: string(pemPub)}
	pk := passkeytest.New("signoff.example")
	pkKey := signoff.ApproverKey{ID: pk.Credential.KeyID(), ActorID: "act_op", PublicKey: pk.Credential.Encode()}

	st := approval.NewStatement("case_1", subj, approval.Approve, policy.Digest(), "act_op", now, policy.TTL())
	dsse, err := approval.Sign(st, priv)
	if err != nil {
		t.Fatal(err)
	}
	edEnv, _ := json.Marshal(dsse)
	body, err := st.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	pkEnv, err := pk.Assert(body, passkeytest.Options{}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	row := func(env []byte, keyID string) signoff.Approval {
		return signoff.Approval{ID: "apv_1", CaseID: st.Case, SubjectDigest: st.SubjectDigest, Decision: st.Decision, ApproverID: st.Approver,
			KeyID: keyID, Nonce: st.Nonce, PolicyDigest: st.PolicyDigest, IssuedAt: st.IssuedAt, ExpiresAt: st.ExpiresAt, Envelope: env}
	}
	for name, k := range map[string]struct {
		a   signoff.Approval
		key signoff.ApproverKey
	}{"ed25519": {row(edEnv, edKey.ID), edKey}, "passkey": {row(pkEnv, pkKey.ID), pkKey}} {
		if err := approval.VerifyRecord(k.a, k.key); err != nil {
			t.Fatalf("%s: a good record: %v", name, err)
		}
		for what, alter := range map[string]func(*signoff.Approval){
			"case":     func(a *signoff.Approval) { a.CaseID = "case_2" },
			"subject":  func(a *signoff.Approval) { a.SubjectDigest = strings.Repeat("b", 64) },
			"decision": func(a *signoff.Approval) { a.Decision = approval.Reject },
			"approver": func(a *signoff.Approval) { a.ApproverID = "act_other" },
			"nonce":    func(a *signoff.Approval) { a.Nonce = strings.Repeat("0", 32) },
			"policy":   func(a *signoff.Approval) { a.PolicyDigest = strings.Repeat("c", 64) },
			"expiry":   func(a *signoff.Approval) { a.ExpiresAt = a.ExpiresAt.Add(24 * 365 * policy.TTL()) },
			"key":      func(a *signoff.Approval) { a.KeyID = "0123456789abcdef" },
			"signature": func(a *signoff.Approval) {
				e := strings.Replace(string(a.Envelope), `"signature":"`, `"signature":"AA`, 1) // a passkey's
				a.Envelope = []byte(strings.Replace(e, `"sig":"`, `"sig":"AA`, 1))              // a DSSE one's
			},
		} {
			a := k.a
			a.Envelope = append([]byte{}, k.a.Envelope...)
			alter(&a)
			if err := approval.VerifyRecord(a, k.key); err == nil {
				t.Errorf("%s: a record with another %s verifies", name, what)
			}
		}
	}
	if approval.VerifyRecord(row(pkEnv, pkKey.ID), edKey) == nil || approval.VerifyRecord(row(edEnv, edKey.ID), pkKey) == nil {
		t.Fatal("a key of the other kind verifies a record")
	}
	other := passkeytest.New("signoff.example")
	if approval.VerifyRecord(row(pkEnv, pkKey.ID), signoff.ApproverKey{ID: pkKey.ID, PublicKey: other.Credential.Encode()}) == nil {
		t.Fatal("another passkey under the record's key id verifies it")
	}
	if !passkey.IsEnvelope(pkEnv) || passkey.IsEnvelope(edEnv) {
		t.Fatal("envelope kinds")
	}
}
