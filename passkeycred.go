package signoff

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/pem"
)

// PasskeyPEMType is the PEM block type of a registered passkey credential.
const PasskeyPEMType = "SIGNOFF WEBAUTHN CREDENTIAL"

// PasskeyCredential is a registered passkey: what an offline verifier needs.
type PasskeyCredential struct {
	// ID is the WebAuthn credential id.
	ID []byte
	// PublicKey is the credential public key in COSE form, as the
	// authenticator attested it at registration.
	PublicKey []byte
	// RPID is the relying party id the credential is scoped to (the
	// server's host name).
	RPID string
}

// KeyID is the credential's 16-hex-digit id among approver keys: the
// first 8 bytes of SHA-256 over a domain tag, the RP id, the credential id
// and the COSE key (each length-prefixed), so that it never equals an
// Ed25519 key's id and no part of the credential can change under it.
func (c PasskeyCredential) KeyID() string {
	h := sha256.New()
	h.Write([]byte("signoff passkey\x00"))
	for _, part := range [][]byte{[]byte(c.RPID), c.ID, c.PublicKey} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Encode returns the credential as PEM text: the COSE key as the body,
// the credential id and RP id as headers.
func (c PasskeyCredential) Encode() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: PasskeyPEMType, Headers: map[string]string{
		"Credential-Id": base64.RawURLEncoding.EncodeToString(c.ID),
		"Rp-Id":         c.RPID,
	}, Bytes: c.PublicKey}))
}

// PasskeyRules are the WebAuthn rules the store applies inside its
// transactions (the passkey package implements them). The store is given
// them at New and refuses to open without them.
type PasskeyRules interface {
	// CheckRegistration refuses a credential WebAuthn cannot verify with,
	// or an origin an offline verifier would not accept for its RP id.
	CheckRegistration(cred PasskeyCredential, origin string) error
	// CounterOK is WebAuthn's clone check of a signature counter.
	CounterOK(stored, got uint32) bool
}
