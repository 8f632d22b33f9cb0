// Package approval is the signed human approval of SPEC section 5: a DSSE
// envelope over {case, subject_digest, decision, nonce, issued_at,
// expires_at, policy_digest, approver}, signed with the approver's Ed25519
// key on their own machine. It is pure: the caller supplies the registered
// key, the digest now on the card, the policy and the clock, and Check says
// whether the approval holds. Storage makes it single use.
package approval

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/evidence"
)

// PayloadType is the DSSE payload type of an approval.
const PayloadType = "application/vnd.signoff.approval+json"

// Decisions an approval may carry.
const (
	Approve = signoff.ApprovalApprove
	Reject  = signoff.ApprovalReject
)

// Statement is what the approver signs.
type Statement struct {
	Case          string    `json:"case"`
	SubjectDigest string    `json:"subject_digest"`
	Decision      string    `json:"decision"`
	Nonce         string    `json:"nonce"`
	IssuedAt      time.Time `json:"issued_at"`
	ExpiresAt     time.Time `json:"expires_at"`
	PolicyDigest  string    `json:"policy_digest"`
	Approver      string    `json:"approver"`
}

// Policy is what an approval is checked against. Its digest is in every
// statement, so approving under one policy does not carry over to another.
type Policy struct {
	// Quorum is how many distinct approvers must approve.
	Quorum int `json:"quorum"`
	// TTLHours bounds expires_at - issued_at.
	TTLHours int `json:"ttl_hours"`
	// NoSelfApproval: the person who opened the case cannot approve it.
	NoSelfApproval bool `json:"no_self_approval"`
	// ProposerCannotApprove: whoever submitted the subject (the candidate)
	// cannot approve it.
	ProposerCannotApprove bool `json:"proposer_cannot_approve"`
	// Of, when set, is the digest of the fuller policy this one is taken
	// from (a workspace's change policy), and Digest returns it: approvals
	// then name the policy people wrote, and any edit of it, not only of
	// these four rules, voids them.
	Of string `json:"-"`
}

// Digest is the SHA-256 of the policy's canonical JSON, or Of when set.
func (p Policy) Digest() string {
	if p.Of != "" {
		return p.Of
	}
	d, err := canonical.Digest(p)
	if err != nil {
		panic("approval: policy digest: " + err.Error()) // a struct of ints and bools always encodes
	}
	return d
}

// TTL is the policy's bound on an approval's lifetime.
func (p Policy) TTL() time.Duration { return time.Duration(p.TTLHours) * time.Hour }

// ClockSkew is how far in the future issued_at may be, for clocks that
// disagree a little.
const ClockSkew = 2 * time.Minute

// NewStatement builds a statement issued now that expires after ttl.
func NewStatement(caseID, subject, decision, policyDigest, approver string, now time.Time, ttl time.Duration) Statement {
	var n [16]byte
	if _, err := rand.Read(n[:]); err != nil {
		panic("approval: crypto/rand: " + err.Error())
	}
	now = now.UTC().Truncate(time.Second)
	return Statement{Case: caseID, SubjectDigest: subject, Decision: decision, Nonce: hex.EncodeToString(n[:]),
		IssuedAt: now, ExpiresAt: now.Add(ttl), PolicyDigest: policyDigest, Approver: approver}
}

// Canonical is the statement's canonical JSON: what an Ed25519 key signs,
// and what a passkey's challenge is the SHA-256 of.
func (st Statement) Canonical() ([]byte, error) {
	b, err := canonical.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("approval: encode: %w", err)
	}
	return b, nil
}

// Sign encodes st canonically and signs it.
func Sign(st Statement, key ed25519.PrivateKey) (evidence.Envelope, error) {
	payload, err := canonical.Marshal(st)
	if err != nil {
		return evidence.Envelope{}, fmt.Errorf("approval: encode: %w", err)
	}
	return evidence.Sign(PayloadType, payload, key), nil
}

// Open decodes an envelope strictly and returns its statement and the key
// ids of its signatures, without checking them: the caller looks the keys
// up and calls Verify.
func Open(raw []byte) (evidence.Envelope, Statement, error) {
	env, payload, err := evidence.DecodeEnvelope(raw)
	if err != nil {
		return env, Statement{}, signoff.Errorf(signoff.EINVALID, "approval: %v", err)
	}
	if env.PayloadType != PayloadType {
		return env, Statement{}, signoff.Errorf(signoff.EINVALID, "approval: payload type is %q, want %q", env.PayloadType, PayloadType)
	}
	if len(env.Signatures) != 1 {
		return env, Statement{}, signoff.Errorf(signoff.EINVALID, "approval: want exactly one signature, got %d", len(env.Signatures))
	}
	st, err := decodeStatement(payload)
	return env, st, err
}

// Verify checks the envelope's signature under pub.
func Verify(env evidence.Envelope, st Statement, pub ed25519.PublicKey) error {
	payload, err := canonical.Marshal(st)
	if err != nil {
		return err
	}
	if _, err := env.Verify(payload, []ed25519.PublicKey{pub}); err != nil {
		return signoff.Errorf(signoff.EFORBIDDEN, "approval: the signature does not verify under the approver's registered key")
	}
	return nil
}

var (
	hexDigest = regexp.MustCompile(`^[0-9a-f]{64}$`)
	hexNonce  = regexp.MustCompile(`^[0-9a-f]{32,64}$`)
)

// Expect is what the server knows when an approval arrives.
type Expect struct {
	Case          string
	SubjectDigest string
	Policy        Policy
	// Approver is the authenticated caller's actor id.
	Approver string
	// CaseOpener and Proposer are refused as approvers when the policy
	// says so.
	CaseOpener, Proposer string
	Now                  time.Time
}

// ErrStale is wrapped in the refusal of an approval for a digest that is
// no longer the one on the card.
var ErrStale = errors.New("stale subject")

// Check applies every rule to a statement whose signature verified. Its
// errors carry the code the caller answers with: EINVALID for a malformed
// statement, ECONFLICT for one that no longer applies (another digest,
// another policy, expired), EFORBIDDEN for an approver the policy refuses.
func Check(st Statement, e Expect) error {
	switch {
	case st.Case != e.Case:
		return signoff.Errorf(signoff.EINVALID, "approval is for case %q, not %s", st.Case, e.Case)
	case st.Decision != Approve && st.Decision != Reject:
		return signoff.Errorf(signoff.EINVALID, "approval decision must be %q or %q", Approve, Reject)
	case !hexDigest.MatchString(st.SubjectDigest) || !hexDigest.MatchString(st.PolicyDigest):
		return signoff.Errorf(signoff.EINVALID, "approval digests must be 64 lower-case hex digits")
	case !hexNonce.MatchString(st.Nonce):
		return signoff.Errorf(signoff.EINVALID, "approval nonce must be 32 to 64 lower-case hex digits")
	case st.Approver != e.Approver:
		return signoff.Errorf(signoff.EFORBIDDEN, "approval names approver %q but was sent by %s", st.Approver, e.Approver)
	case st.SubjectDigest != e.SubjectDigest:
		return &signoff.Error{Code: signoff.ECONFLICT, Message: fmt.Sprintf("approval is for subject %s, but the card now shows %s: re-read the card (%v)", short(st.SubjectDigest), short(e.SubjectDigest), ErrStale)}
	case st.PolicyDigest != e.Policy.Digest():
		return signoff.Errorf(signoff.ECONFLICT, "approval was made under policy %s, the policy is now %s", short(st.PolicyDigest), short(e.Policy.Digest()))
	case !st.ExpiresAt.After(st.IssuedAt):
		return signoff.Errorf(signoff.EINVALID, "approval expires before it is issued")
	case st.ExpiresAt.Sub(st.IssuedAt) > e.Policy.TTL():
		return signoff.Errorf(signoff.EINVALID, "approval lifetime %s exceeds the policy's %s", st.ExpiresAt.Sub(st.IssuedAt), e.Policy.TTL())
	case st.IssuedAt.After(e.Now.Add(ClockSkew)):
		return signoff.Errorf(signoff.EINVALID, "approval is issued in the future (%s)", st.IssuedAt.Format(time.RFC3339))
	case !e.Now.Before(st.ExpiresAt):
		return signoff.Errorf(signoff.ECONFLICT, "approval expired at %s", st.ExpiresAt.Format(time.RFC3339))
	case e.Policy.NoSelfApproval && e.CaseOpener != "" && st.Approver == e.CaseOpener:
		return signoff.Errorf(signoff.EFORBIDDEN, "no self-approval: %s opened this case", st.Approver)
	case e.Policy.ProposerCannotApprove && e.Proposer != "" && st.Approver == e.Proposer:
		return signoff.Errorf(signoff.EFORBIDDEN, "the proposer cannot approve: %s submitted this candidate", st.Approver)
	}
	return nil
}

// Quorum returns the approvals that count for subject under policy at
// now: valid, of that subject and policy, unexpired, decision approve, one
// per approver (the earliest). ok reports whether they reach the policy's
// quorum.
func Quorum(list []signoff.Approval, subject string, policy Policy, now time.Time) (ids []string, ok bool) {
	seen := map[string]bool{}
	need, pd := policy.Quorum, policy.Digest()
	for _, a := range list {
		if a.Status != signoff.ApprovalValid || a.SubjectDigest != subject || a.PolicyDigest != pd || a.Decision != Approve || !now.Before(a.ExpiresAt) || seen[a.ApproverID] {
			continue
		}
		seen[a.ApproverID] = true
		ids = append(ids, a.ID)
	}
	return ids, len(ids) >= need && need > 0
}

func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}
