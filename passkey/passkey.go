// Package passkey verifies approvals given with a WebAuthn passkey. It is
// pure (no I/O) so that the desks, the change gate and an offline
// `signoff evidence verify` all run the same check.
//
// A passkey approval is an envelope holding the canonical JSON of the
// approval statement and the authenticator's assertion over it: the
// WebAuthn challenge is SHA-256 of the statement bytes, so the
// authenticator's signature over authenticatorData || SHA-256(clientDataJSON)
// covers exactly that statement. The registered credential (its COSE
// public key, credential id and relying party id) is stored as PEM text
// so that it travels in an ApproverKey and an evidence bundle like an
// Ed25519 key.
package passkey

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"

	"github.com/signoff-dev/signoff"
)

// Format names the envelope format; it is the envelope's "format" field.
const Format = "signoff.approval.webauthn/v1"

// PEMType is the PEM block type of a registered passkey credential.
const PEMType = signoff.PasskeyPEMType

// MaxEnvelope bounds an envelope's size (a statement, authenticator data,
// client data and a signature are a few kilobytes at most).
const MaxEnvelope = 64 << 10

// Credential is a registered passkey: what an offline verifier needs. It
// lives in the root package, which the store may import.
type Credential = signoff.PasskeyCredential

// IsCredential reports whether text is a passkey credential's PEM (and
// not an Ed25519 key's).
func IsCredential(text string) bool {
	b, _ := pem.Decode([]byte(text))
	return b != nil && b.Type == PEMType
}

// ParseCredential reads Encode's text and checks that its key is a COSE
// public key WebAuthn can verify with.
func ParseCredential(text string) (Credential, error) {
	b, rest := pem.Decode([]byte(text))
	if b == nil || b.Type != PEMType || len(bytes.TrimSpace(rest)) != 0 {
		return Credential{}, errors.New("passkey: not a " + PEMType + " PEM block")
	}
	id, err := base64.RawURLEncoding.DecodeString(b.Headers["Credential-Id"])
	if err != nil || len(id) == 0 || len(id) > 1023 {
		return Credential{}, errors.New("passkey: bad Credential-Id header")
	}
	c := Credential{ID: id, PublicKey: b.Bytes, RPID: b.Headers["Rp-Id"]}
	if err := checkRPID(c.RPID); err != nil {
		return Credential{}, err
	}
	if _, err := webauthncose.ParsePublicKey(c.PublicKey); err != nil {
		return Credential{}, fmt.Errorf("passkey: credential public key: %w", err)
	}
	return c, nil
}

func checkRPID(rpID string) error {
	if rpID == "" || strings.ContainsAny(rpID, "/:@ ") || strings.ToLower(rpID) != rpID {
		return fmt.Errorf("passkey: bad relying party id %q", rpID)
	}
	return nil
}

// Envelope is a passkey approval as stored and as bundled. Byte fields
// are base64 in JSON.
type Envelope struct {
	Format string `json:"format"`
	// Statement is the approval statement's canonical JSON: the bytes
	// whose SHA-256 is the WebAuthn challenge.
	Statement []byte `json:"statement"`
	// KeyID is the credential's KeyID, its id among approver keys.
	KeyID             string `json:"key_id"`
	CredentialID      []byte `json:"credential_id"`
	AuthenticatorData []byte `json:"authenticator_data"`
	ClientDataJSON    []byte `json:"client_data_json"`
	Signature         []byte `json:"signature"`
}

// IsEnvelope reports whether raw claims to be a passkey envelope (a JSON
// object whose format is Format); Open says whether it is a good one.
func IsEnvelope(raw []byte) bool {
	var probe struct {
		Format string `json:"format"`
	}
	return json.Unmarshal(raw, &probe) == nil && probe.Format == Format
}

// Open decodes an envelope strictly: known fields only, every part
// present. It checks no signature.
func Open(raw []byte) (Envelope, error) {
	var env Envelope
	if len(raw) > MaxEnvelope {
		return env, fmt.Errorf("passkey: envelope is larger than %d bytes", MaxEnvelope)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return env, fmt.Errorf("passkey: envelope: %w", err)
	}
	if dec.More() {
		return env, errors.New("passkey: envelope: trailing data")
	}
	switch {
	case env.Format != Format:
		return env, fmt.Errorf("passkey: envelope format is %q, want %q", env.Format, Format)
	case len(env.Statement) == 0, len(env.CredentialID) == 0, len(env.AuthenticatorData) < 37, len(env.ClientDataJSON) == 0, len(env.Signature) == 0:
		return env, errors.New("passkey: envelope is missing its statement, credential id, authenticator data, client data or signature")
	}
	return env, nil
}

// Marshal encodes an envelope.
func (e Envelope) Marshal() ([]byte, error) {
	e.Format = Format
	return json.Marshal(e)
}

// Challenge is the WebAuthn challenge for a statement: SHA-256 of its
// canonical bytes.
func Challenge(statement []byte) []byte {
	h := sha256.Sum256(statement)
	return h[:]
}

// Expect is what an assertion is checked against besides the credential.
type Expect struct {
	// Origins are the exact origins the server accepts (the page's
	// origin). Empty, as offline: the origin must be the credential's RP
	// id itself over https (any port), or http on localhost.
	Origins []string
}

// Checked is what a verified assertion says.
type Checked struct {
	SignCount     uint32
	Origin        string
	UserVerified  bool
	BackupState   bool
	AuthenticData protocol.AuthenticatorData
}

// Verify checks an envelope's assertion under cred: the envelope names
// cred (key id and credential id), the client data is a webauthn.get
// whose challenge is SHA-256 of the statement bytes and whose origin is
// accepted and not cross-origin, the authenticator data's rpIdHash is
// SHA-256 of cred's RP id with user presence and user verification set,
// and the signature verifies under cred's COSE key over authenticatorData
// || SHA-256(clientDataJSON). The sign counter is returned for the caller
// to compare with the stored one (only the server has it).
func Verify(env Envelope, cred Credential, e Expect) (Checked, error) {
	var ck Checked
	if env.KeyID != cred.KeyID() || !bytes.Equal(env.CredentialID, cred.ID) {
		return ck, errors.New("passkey: the envelope names another credential")
	}
	var cd protocol.CollectedClientData
	if err := json.Unmarshal(env.ClientDataJSON, &cd); err != nil {
		return ck, fmt.Errorf("passkey: client data: %w", err)
	}
	if cd.Type != protocol.AssertCeremony {
		return ck, fmt.Errorf("passkey: client data type is %q, want %q", cd.Type, protocol.AssertCeremony)
	}
	want := base64.RawURLEncoding.EncodeToString(Challenge(env.Statement))
	if cd.Challenge != want {
		return ck, errors.New("passkey: the challenge is not the digest of this statement")
	}
	if cd.CrossOrigin || cd.TopOrigin != "" {
		return ck, errors.New("passkey: the assertion was made in a cross-origin frame")
	}
	if err := checkOrigin(cd.Origin, cred.RPID, e.Origins); err != nil {
		return ck, err
	}
	ck.Origin = cd.Origin
	var ad protocol.AuthenticatorData
	if err := ad.Unmarshal(env.AuthenticatorData); err != nil {
		return ck, fmt.Errorf("passkey: authenticator data: %w", err)
	}
	rpHash := sha256.Sum256([]byte(cred.RPID))
	if !bytes.Equal(ad.RPIDHash, rpHash[:]) {
		return ck, fmt.Errorf("passkey: the authenticator data is for another relying party than %q", cred.RPID)
	}
	if !ad.Flags.HasUserPresent() {
		return ck, errors.New("passkey: the authenticator did not report user presence")
	}
	if !ad.Flags.HasUserVerified() {
		return ck, errors.New("passkey: the authenticator did not verify the user (PIN or biometric)")
	}
	key, err := webauthncose.ParsePublicKey(cred.PublicKey)
	if err != nil {
		return ck, fmt.Errorf("passkey: credential public key: %w", err)
	}
	cdHash := sha256.Sum256(env.ClientDataJSON)
	signed := append(append([]byte{}, env.AuthenticatorData...), cdHash[:]...)
	ok, err := webauthncose.VerifySignature(key, signed, env.Signature)
	if err != nil || !ok {
		return ck, errors.New("passkey: the signature does not verify under the registered credential")
	}
	ck.SignCount, ck.UserVerified, ck.BackupState, ck.AuthenticData = ad.Counter, true, ad.Flags.HasBackupState(), ad
	return ck, nil
}

// CounterOK applies WebAuthn's clone check: when either counter is
// non-zero, the new one must be greater than the stored one.
func CounterOK(stored, got uint32) bool {
	if stored == 0 && got == 0 {
		return true
	}
	return got > stored
}

// CheckOrigin reports whether origin is one an offline verifier accepts
// for rpID: its host is rpID over https (any port), or http on a loopback
// host. A passkey is registered only on such an origin.
func CheckOrigin(origin, rpID string) error {
	return checkOrigin(origin, rpID, nil)
}

// checkOrigin accepts origin when it is one of origins, or with none
// given, when its host is rpID over https, or http on a loopback host.
func checkOrigin(origin, rpID string, origins []string) error {
	if len(origins) > 0 {
		for _, o := range origins {
			if o == origin {
				return nil
			}
		}
		return fmt.Errorf("passkey: origin %q is not this server's", origin)
	}
	u, err := url.Parse(origin)
	if err != nil || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("passkey: bad origin %q", origin)
	}
	host := u.Hostname()
	if host != rpID {
		return fmt.Errorf("passkey: origin %q is not on the relying party %q", origin, rpID)
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && (host == "localhost" || isLoopback(host)):
		return nil
	}
	return fmt.Errorf("passkey: origin %q is not https", origin)
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Rules implements signoff.PasskeyRules, the rules the store applies when
// it registers a passkey and advances its counter.
type Rules struct{}

var _ signoff.PasskeyRules = Rules{}

// CheckRegistration checks that cred's text parses back into a credential
// WebAuthn can verify with and that origin is one an offline verifier
// accepts for cred's RP id.
func (Rules) CheckRegistration(cred Credential, origin string) error {
	if _, err := ParseCredential(cred.Encode()); err != nil {
		return err
	}
	return CheckOrigin(origin, cred.RPID)
}

// CounterOK is CounterOK.
func (Rules) CounterOK(stored, got uint32) bool { return CounterOK(stored, got) }
