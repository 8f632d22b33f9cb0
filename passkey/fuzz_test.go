package passkey_test

import (
	"bytes"
	"testing"

	"github.com/signoff-dev/signoff/passkey"
	"github.com/signoff-dev/signoff/passkey/passkeytest"
)

// FuzzVerify feeds arbitrary envelopes to Open and Verify under a real
// credential: nothing panics, and nothing but the authenticator's own
// statement verifies (the envelope's bytes are attacker-chosen in an
// evidence bundle; the credential is the registered one).
func FuzzVerify(f *testing.F) {
	const rp = "signoff.example"
	a := passkeytest.New(rp)
	stmt := []byte(`{"approver":"act_x","case":"cas_y"}`)
	good := a.Assert(stmt, passkeytest.Options{})
	raw, err := good.Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(raw)
	f.Add([]byte(`{"format":"` + passkey.Format + `"}`))
	f.Add([]byte(`{"FORMAT":"` + passkey.Format + `","statement":"e30="}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !passkey.IsEnvelope(b) {
			return
		}
		env, err := passkey.Open(b)
		if err != nil {
			return
		}
		if _, err := passkey.Verify(env, a.Credential, passkey.Expect{}); err == nil && !bytes.Equal(env.Statement, stmt) {
			t.Fatalf("an envelope over another statement verifies: %q", env.Statement)
		}
		_, _ = passkey.Verify(env, a.Credential, passkey.Expect{Origins: []string{"https://" + rp}})
	})
}

// FuzzParseCredential: a credential PEM from a bundle or the database
// never panics the parser, and what parses encodes back to itself.
func FuzzParseCredential(f *testing.F) {
	f.Add(passkeytest.New("signoff.example").Credential.Encode())
	f.Add("-----BEGIN " + passkey.PEMType + "-----\nRp-Id: x\n\nAAAA\n-----END " + passkey.PEMType + "-----\n")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := passkey.ParseCredential(s)
		if err != nil {
			return
		}
		again, err := passkey.ParseCredential(c.Encode())
		if err != nil || again.KeyID() != c.KeyID() {
			t.Fatalf("a parsed credential does not encode back: %v", err)
		}
	})
}

// FuzzVerifyRegistration: the browser's registration answer is the
// client's to choose; it never panics the server.
func FuzzVerifyRegistration(f *testing.F) {
	a := passkeytest.New("localhost")
	challenge := []byte("0123456789abcdef0123456789abcdef")
	f.Add(a.Register(challenge, "http://localhost:8080"))
	f.Add([]byte(`{"id":"","rawId":"","type":"public-key","response":{"clientDataJSON":"","attestationObject":""}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = passkey.VerifyRegistration(b, challenge, "localhost", []string{"http://localhost:8080"})
	})
}
