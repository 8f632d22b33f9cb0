package approval

import (
	"github.com/signoff-dev/signoff"
)

// VerifyRecord re-verifies a stored approval before it is relied on (a
// change's gate, a merge): its envelope, of either kind, opens; its
// statement is exactly what the row says (case, subject, decision,
// approver, nonce, policy, expiry, key), so a row altered in the database
// does not borrow another statement's signature; and the signature or
// passkey assertion verifies under key, the registered key the row names.
// Whether that key is revoked and its approver still active is the
// caller's to check.
func VerifyRecord(a signoff.Approval, key signoff.ApproverKey) error {
	keyID, st, err := OpenAny(a.Envelope)
	if err != nil {
		return err
	}
	if st.Case != a.CaseID || st.SubjectDigest != a.SubjectDigest || st.Decision != a.Decision || st.Approver != a.ApproverID ||
		st.Nonce != a.Nonce || st.PolicyDigest != a.PolicyDigest || !st.ExpiresAt.Equal(a.ExpiresAt) || keyID != a.KeyID || key.ID != a.KeyID {
		return signoff.Errorf(signoff.EFORBIDDEN, "approval %s: the stored record is not what its envelope says", a.ID)
	}
	if _, err := VerifyWith(a.Envelope, key); err != nil {
		return err
	}
	return nil
}
