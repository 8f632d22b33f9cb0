// Package passkeytest is a software WebAuthn authenticator for tests: it
// makes real ES256 assertions over real authenticator data and client
// data, as a platform authenticator would, so that tests check the real
// verifier and not a stand-in.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
	"github.com/signoff-dev/signoff/passkey"
)

// Authenticator holds one credential.
type Authenticator struct {
	Key        *ecdsa.PrivateKey
	Credential passkey.Credential
	Counter    uint32
}

// New makes an authenticator with a fresh ES256 credential for rpID.
func New(rpID string) *Authenticator {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	var x, y [32]byte
	k.PublicKey.X.FillBytes(x[:])
	k.PublicKey.Y.FillBytes(y[:])
	cose, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         1, XCoord: x[:], YCoord: y[:]})
	if err != nil {
		panic(err)
	}
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	return &Authenticator{Key: k, Credential: passkey.Credential{ID: id, PublicKey: cose, RPID: rpID}}
}

// Options shape one assertion; the zero value is a good one.
type Options struct {
	Type      string // "webauthn.get" when empty
	Origin    string // "https://" + RP id when empty
	Challenge []byte // SHA-256 of the statement when nil
	RPID      string // the credential's when empty
	NoUP      bool
	NoUV      bool
	Counter   *uint32 // the next counter when nil
}

// Assert signs statement as the browser and authenticator would and
// returns the envelope.
func (a *Authenticator) Assert(statement []byte, o Options) passkey.Envelope {
	if o.Type == "" {
		o.Type = "webauthn.get"
	}
	if o.RPID == "" {
		o.RPID = a.Credential.RPID
	}
	if o.Origin == "" {
		o.Origin = "https://" + a.Credential.RPID
	}
	if o.Challenge == nil {
		o.Challenge = passkey.Challenge(statement)
	}
	if o.Counter == nil {
		a.Counter++
		c := a.Counter
		o.Counter = &c
	}
	cd, _ := json.Marshal(map[string]any{"type": o.Type, "challenge": base64.RawURLEncoding.EncodeToString(o.Challenge), "origin": o.Origin, "crossOrigin": false})
	rp := sha256.Sum256([]byte(o.RPID))
	flags := byte(0)
	if !o.NoUP {
		flags |= 0x01
	}
	if !o.NoUV {
		flags |= 0x04
	}
	ad := append(rp[:], flags)
	ad = binary.BigEndian.AppendUint32(ad, *o.Counter)
	h := sha256.Sum256(cd)
	msg := sha256.Sum256(append(append([]byte{}, ad...), h[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.Key, msg[:])
	if err != nil {
		panic(err)
	}
	return passkey.Envelope{Format: passkey.Format, Statement: statement, KeyID: a.Credential.KeyID(), CredentialID: a.Credential.ID,
		AuthenticatorData: ad, ClientDataJSON: cd, Signature: sig}
}

// Register answers navigator.credentials.create as a browser would with
// attestation "none": the PublicKeyCredential as JSON with base64url
// buffers, for challenge, on origin.
func (a *Authenticator) Register(challenge []byte, origin string) []byte {
	b64 := base64.RawURLEncoding
	cd, _ := json.Marshal(map[string]any{"type": "webauthn.create", "challenge": b64.EncodeToString(challenge), "origin": origin, "crossOrigin": false})
	rp := sha256.Sum256([]byte(a.Credential.RPID))
	ad := append(rp[:], 0x01|0x04|0x40) // UP, UV, attested credential data
	ad = binary.BigEndian.AppendUint32(ad, a.Counter)
	ad = append(ad, make([]byte, 16)...) // AAGUID
	ad = binary.BigEndian.AppendUint16(ad, uint16(len(a.Credential.ID)))
	ad = append(ad, a.Credential.ID...)
	ad = append(ad, a.Credential.PublicKey...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": ad})
	if err != nil {
		panic(err)
	}
	out, _ := json.Marshal(map[string]any{"id": b64.EncodeToString(a.Credential.ID), "rawId": b64.EncodeToString(a.Credential.ID), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(cd), "attestationObject": b64.EncodeToString(att)}, "clientExtensionResults": map[string]any{}})
	return out
}

// AssertionJSON is an assertion as the browser hands it to the page's
// script (PublicKeyCredential with base64url buffers).
func AssertionJSON(e passkey.Envelope) []byte {
	b64 := base64.RawURLEncoding
	out, _ := json.Marshal(map[string]any{"id": b64.EncodeToString(e.CredentialID), "rawId": b64.EncodeToString(e.CredentialID), "type": "public-key",
		"response": map[string]any{"clientDataJSON": b64.EncodeToString(e.ClientDataJSON), "authenticatorData": b64.EncodeToString(e.AuthenticatorData),
			"signature": b64.EncodeToString(e.Signature)}})
	return out
}
