package passkey

import (
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"
)

// Algorithms are the credential algorithms asked for at registration,
// in order of preference: ES256, EdDSA, RS256.
var Algorithms = []webauthncose.COSEAlgorithmIdentifier{webauthncose.AlgES256, webauthncose.AlgEdDSA, webauthncose.AlgRS256}

// Registered is a verified registration.
type Registered struct {
	Credential Credential
	SignCount  uint32
	// Attestation is the attestation format the authenticator used
	// ("none" when the browser was asked for none).
	Attestation string
}

// VerifyRegistration checks the browser's answer to
// navigator.credentials.create (the PublicKeyCredential as JSON, with
// base64url fields): a webauthn.create whose challenge is challenge, from
// one of origins, not cross-origin, for rpID, with user presence and user
// verification, an accepted algorithm, and an attestation statement that
// verifies ("none" included: Signoff trusts the person who registers
// through their own session, not the authenticator's maker).
func VerifyRegistration(body, challenge []byte, rpID string, origins []string) (Registered, error) {
	if err := checkRPID(rpID); err != nil {
		return Registered{}, err
	}
	if len(origins) == 0 {
		return Registered{}, errors.New("passkey: no origin to check the registration against")
	}
	pcc, err := protocol.ParseCredentialCreationResponseBytes(body)
	if err != nil {
		return Registered{}, fmt.Errorf("passkey: registration: %w", describe(err))
	}
	params := make([]protocol.CredentialParameter, len(Algorithms))
	for i, a := range Algorithms {
		params[i] = protocol.CredentialParameter{Type: protocol.PublicKeyCredentialType, Algorithm: a}
	}
	if _, err := pcc.Verify(base64.RawURLEncoding.EncodeToString(challenge), rpID, origins, nil, nil,
		protocol.TopOriginExplicitVerificationMode, false, true, true, nil, params, protocol.AttestationPolicy{}, protocol.SignaturePolicy{}); err != nil {
		return Registered{}, fmt.Errorf("passkey: registration: %w", describe(err))
	}
	ad := pcc.Response.AttestationObject.AuthData
	c := Credential{ID: append([]byte{}, ad.AttData.CredentialID...), PublicKey: append([]byte{}, ad.AttData.CredentialPublicKey...), RPID: rpID}
	if len(c.ID) == 0 || len(c.ID) > 1023 {
		return Registered{}, errors.New("passkey: registration: bad credential id length")
	}
	if _, err := webauthncose.ParsePublicKey(c.PublicKey); err != nil {
		return Registered{}, fmt.Errorf("passkey: registration: credential public key: %w", err)
	}
	return Registered{Credential: c, SignCount: ad.Counter, Attestation: pcc.Response.AttestationObject.Format}, nil
}

// describe adds the library's detail to its error, which alone says only
// "Error validating ..." without why.
func describe(err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.DevInfo != "" {
		return fmt.Errorf("%s: %s", pe.Details, pe.DevInfo)
	}
	return err
}
