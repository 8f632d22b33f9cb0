// Package evidence writes and checks verification evidence: in-toto
// Statements (v1) wrapped in DSSE envelopes signed with Ed25519, bundled
// with the harness, its test files and the raw output of every run, each
// referenced by SHA-256. A bundle can be checked offline by anyone holding
// the signer's public key; without that key its digests and signatures
// still check against the key it carries, but its authenticity is not
// established, and VerifyBundle says so.
package evidence

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/keys"
)

// PayloadType is the DSSE payload type of an in-toto Statement.
const PayloadType = "application/vnd.in-toto+json"

// Envelope is a DSSE envelope (https://github.com/secure-systems-lab/dsse).
type Envelope struct {
	PayloadType string      `json:"payloadType"`
	Payload     string      `json:"payload"` // standard base64
	Signatures  []Signature `json:"signatures"`
}

// Signature is one DSSE signature; KeyID is keys.ID of the public key.
type Signature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"` // standard base64
}

// PAE is DSSE's pre-authentication encoding, the bytes that are actually
// signed: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, with lengths
// in ASCII decimal. Signing this rather than the payload alone binds the
// payload type, so a payload cannot be replayed as another type.
func PAE(payloadType string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString("DSSEv1 ")
	b.WriteString(strconv.Itoa(len(payloadType)))
	b.WriteByte(' ')
	b.WriteString(payloadType)
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(payload)))
	b.WriteByte(' ')
	b.Write(payload)
	return b.Bytes()
}

// Sign wraps payload in an envelope signed by key.
func Sign(payloadType string, payload []byte, key ed25519.PrivateKey) Envelope {
	pub := key.Public().(ed25519.PublicKey)
	return Envelope{
		PayloadType: payloadType,
		Payload:     base64.StdEncoding.EncodeToString(payload),
		Signatures: []Signature{{
			KeyID: keys.ID(pub),
			Sig:   base64.StdEncoding.EncodeToString(ed25519.Sign(key, PAE(payloadType, payload))),
		}},
	}
}

// ErrNoValidSignature means no signature of an envelope verified under the
// given keys.
var ErrNoValidSignature = errors.New("no signature verifies under the given keys")

// DecodeEnvelope parses an envelope strictly (no unknown fields, no
// trailing data) and returns it with its decoded payload.
func DecodeEnvelope(b []byte) (Envelope, []byte, error) {
	var env Envelope
	if err := strictUnmarshal(b, &env); err != nil {
		return Envelope{}, nil, fmt.Errorf("envelope: %w", err)
	}
	payload, err := base64.StdEncoding.Strict().DecodeString(env.Payload)
	if err != nil {
		return Envelope{}, nil, fmt.Errorf("envelope payload: %w", err)
	}
	return env, payload, nil
}

// Verify checks that some signature of env verifies under one of the keys
// and returns the key that verified it.
func (env Envelope) Verify(payload []byte, pubs []ed25519.PublicKey) (ed25519.PublicKey, error) {
	if len(env.Signatures) == 0 {
		return nil, errors.New("envelope has no signatures")
	}
	msg := PAE(env.PayloadType, payload)
	for _, s := range env.Signatures {
		sig, err := base64.StdEncoding.Strict().DecodeString(s.Sig)
		if err != nil || len(sig) != ed25519.SignatureSize {
			continue
		}
		for _, pub := range pubs {
			if len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, msg, sig) {
				return pub, nil
			}
		}
	}
	return nil, ErrNoValidSignature
}

// strictUnmarshal decodes exactly one JSON value with no unknown fields.
// Duplicate keys are refused too (canonical.Transform finds them), because
// two readers may resolve them differently.
func strictUnmarshal(b []byte, v any) error {
	if _, err := canonical.Transform(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
