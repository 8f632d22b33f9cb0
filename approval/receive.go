package approval

import (
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/keys"
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
// (cli-signed or cli-signed-yes); a rejection needs a reason, whose
// absence is explained by rejectHint. The case-specific checks (subject,
// policy, quorum) are Check's and the desk's.
func Receive(envelope []byte, by signoff.Actor, via, reason, rejectHint string, lookup func(keyID string) (signoff.ApproverKey, error)) (Received, error) {
	if by.Role != signoff.RoleOwner && by.Role != signoff.RoleOperator {
		return Received{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not approve", by.Role)
	}
	if via != "cli-signed" && via != "cli-signed-yes" {
		return Received{}, signoff.Errorf(signoff.EINVALID, "via must be cli-signed or cli-signed-yes")
	}
	env, stmt, err := Open(envelope)
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
	keyID := env.Signatures[0].KeyID
	key, err := lookup(keyID)
	if err != nil || key.ActorID != by.ID || key.RevokedAt != nil {
		return Received{}, signoff.Errorf(signoff.EFORBIDDEN, "approval is signed with key %q, which is not a registered key of %s", keyID, by.ID)
	}
	pub, err := keys.ParsePublic([]byte(key.PublicKey))
	if err != nil {
		return Received{}, err
	}
	if err := Verify(env, stmt, pub); err != nil {
		return Received{}, err
	}
	return Received{Statement: stmt, Key: key, Reason: reason}, nil
}
