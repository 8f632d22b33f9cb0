package approval

import (
	"encoding/json"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/passkey"
)

// Ways an approval is given (signoff.Approval.Via).
const (
	ViaCLI        = "cli-signed"
	ViaCLIYes     = "cli-signed-yes"
	ViaWebPasskey = "web-passkey"
)

// MaxReason bounds the reason sent beside a signed rejection.
const MaxReason = 4000

// Received is an approval as it arrived: its statement verified under a
// key registered to the person who sent it.
type Received struct {
	Statement Statement
	Key       signoff.ApproverKey
	// Reason is the sender's reason, trimmed (required for a rejection).
	Reason string
}

// Receive opens an approval envelope sent by by and verifies it under the
// key it names, which lookup returns from the sender's registered keys:
// the checks every desk makes before it looks at the case. Only owners
// and operators approve; via says how the approver confirmed it
// (cli-signed or cli-signed-yes for a DSSE envelope, web-passkey for a
// passkey envelope); a rejection needs a reason, whose
// absence is explained by rejectHint. The case-specific checks (subject,
// policy, quorum) are Check's and the desk's.
func Receive(envelope []byte, by signoff.Actor, via, reason, rejectHint string, lookup func(keyID string) (signoff.ApproverKey, error)) (Received, error) {
	if by.Role != signoff.RoleOwner && by.Role != signoff.RoleOperator {
		return Received{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not approve", by.Role)
	}
	passkeyEnv := passkey.IsEnvelope(envelope)
	switch {
	case passkeyEnv && via != ViaWebPasskey:
		return Received{}, signoff.Errorf(signoff.EINVALID, "a passkey approval is given with via %s", ViaWebPasskey)
	case !passkeyEnv && via != ViaCLI && via != ViaCLIYes:
		return Received{}, signoff.Errorf(signoff.EINVALID, "via must be cli-signed or cli-signed-yes")
	}
	keyID, stmt, err := OpenAny(envelope)
	if err != nil {
		return Received{}, err
	}
	reason = strings.TrimSpace(reason)
	switch {
	case stmt.Decision == Reject && reason == "":
		return Received{}, signoff.Errorf(signoff.EINVALID, "a rejection needs a reason: %s", rejectHint)
	case len(reason) > MaxReason:
		return Received{}, signoff.Errorf(signoff.EINVALID, "reason is longer than %d bytes", MaxReason)
	}
	key, err := lookup(keyID)
	if err != nil || key.ActorID != by.ID || key.RevokedAt != nil {
		return Received{}, signoff.Errorf(signoff.EFORBIDDEN, "approval is signed with key %q, which is not a registered key of %s", keyID, by.ID)
	}
	if _, err := VerifyWith(envelope, key); err != nil {
		return Received{}, err
	}
	return Received{Statement: stmt, Key: key, Reason: reason}, nil
}

// OpenAny decodes an approval envelope of either kind, a DSSE envelope
// signed with an Ed25519 key or a passkey envelope, strictly, and returns
// the key id it names and its statement, without checking the signature.
func OpenAny(envelope []byte) (keyID string, st Statement, err error) {
	if !passkey.IsEnvelope(envelope) {
		env, st, err := Open(envelope)
		if err != nil {
			return "", st, err
		}
		return env.Signatures[0].KeyID, st, nil
	}
	env, err := passkey.Open(envelope)
	if err != nil {
		return "", st, signoff.Errorf(signoff.EINVALID, "approval: %v", err)
	}
	st, err = decodeStatement(env.Statement)
	return env.KeyID, st, err
}

// decodeStatement reads a statement that must be in canonical form: two
// encodings of one statement would let a signature be shown over other
// bytes.
func decodeStatement(payload []byte) (Statement, error) {
	var st Statement
	if err := json.Unmarshal(payload, &st); err != nil {
		return Statement{}, signoff.Errorf(signoff.EINVALID, "approval: statement: %v", err)
	}
	if want, err := canonical.Marshal(st); err != nil || string(want) != string(payload) {
		return Statement{}, signoff.Errorf(signoff.EINVALID, "approval: statement is not in canonical form (unknown fields or another encoding)")
	}
	return st, nil
}

// VerifyWith opens an approval envelope of either kind and verifies its
// signature under key, the registered key it names (an Ed25519 key's PEM,
// or a passkey credential, whose assertion is checked as an offline
// verifier can: challenge, origin on the RP id, rpIdHash, user presence
// and verification, signature). It does not look at revocation or the
// key's holder: callers do.
func VerifyWith(envelope []byte, key signoff.ApproverKey) (Statement, error) {
	if !passkey.IsEnvelope(envelope) {
		env, st, err := Open(envelope)
		if err != nil {
			return st, err
		}
		if env.Signatures[0].KeyID != key.ID {
			return st, signoff.Errorf(signoff.EFORBIDDEN, "approval: signed with key %s, not %s", env.Signatures[0].KeyID, key.ID)
		}
		pub, err := keys.ParsePublic([]byte(key.PublicKey))
		if err != nil {
			return st, signoff.Errorf(signoff.EFORBIDDEN, "approval: key %s is not an Ed25519 key", key.ID)
		}
		return st, Verify(env, st, pub)
	}
	env, err := passkey.Open(envelope)
	if err != nil {
		return Statement{}, signoff.Errorf(signoff.EINVALID, "approval: %v", err)
	}
	st, err := decodeStatement(env.Statement)
	if err != nil {
		return st, err
	}
	cred, err := passkey.ParseCredential(key.PublicKey)
	if err != nil || env.KeyID != key.ID || cred.KeyID() != key.ID {
		return st, signoff.Errorf(signoff.EFORBIDDEN, "approval: key %s is not the passkey this approval names", key.ID)
	}
	if _, err := passkey.Verify(env, cred, passkey.Expect{}); err != nil {
		return st, signoff.Errorf(signoff.EFORBIDDEN, "approval: the passkey assertion does not verify under the approver's registered credential: %v", err)
	}
	return st, nil
}
