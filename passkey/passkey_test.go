package passkey_test

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/passkey"
	"github.com/signoff-dev/signoff/passkey/passkeytest"
)

func TestVerify(t *testing.T) {
	const rp = "signoff.example"
	stmt := []byte(`{"approver":"act_x","case":"cas_y"}`)
	a := passkeytest.New(rp)
	other := passkeytest.New(rp)
	zero := uint32(0)
	cases := []struct {
		name    string
		env     func() passkey.Envelope
		cred    passkey.Credential
		origins []string
		want    string // "" verifies
	}{
		{name: "good", env: func() passkey.Envelope { return a.Assert(stmt, passkeytest.Options{}) }},
		{name: "good exact origin", env: func() passkey.Envelope { return a.Assert(stmt, passkeytest.Options{}) }, origins: []string{"https://" + rp}},
		{name: "good zero counter", env: func() passkey.Envelope { return a.Assert(stmt, passkeytest.Options{Counter: &zero}) }},
		{name: "wrong challenge", env: func() passkey.Envelope {
			return a.Assert(stmt, passkeytest.Options{Challenge: passkey.Challenge([]byte("another statement"))})
		}, want: "challenge"},
		{name: "statement swapped after signing", env: func() passkey.Envelope {
			e := a.Assert(stmt, passkeytest.Options{})
			e.Statement = []byte(`{"approver":"act_z","case":"cas_y"}`)
			return e
		}, want: "challenge"},
		{name: "create, not get", env: func() passkey.Envelope { return a.Assert(stmt, passkeytest.Options{Type: "webauthn.create"}) }, want: "type"},
		{name: "wrong origin offline", env: func() passkey.Envelope { return a.Assert(stmt, passkeytest.Options{Origin: "https://evil.example"}) }, want: "origin"},
		{name: "http origin offline", env: func() passkey.Envelope { return a.Assert(stmt, passkeytest.Options{Origin: "http://" + rp}) }, want: "https"},
		{name: "wrong origin online", env: func() passkey.Envelope { return a.Assert(stmt, passkeytest.Options{}) }, origins: []string{"https://" + rp + ":8443"}, want: "origin"},
		{name: "wrong rp id hash", env: func() passkey.Envelope { return a.Assert(stmt, passkeytest.Options{RPID: "evil.example"}) }, want: "relying party"},
		{name: "no user presence", env: func() passkey.Envelope { return a.Assert(stmt, passkeytest.Options{NoUP: true}) }, want: "presence"},
		{name: "no user verification", env: func() passkey.Envelope { return a.Assert(stmt, passkeytest.Options{NoUV: true}) }, want: "verify the user"},
		{name: "bad signature", env: func() passkey.Envelope {
			e := a.Assert(stmt, passkeytest.Options{})
			e.Signature[len(e.Signature)-3] ^= 1
			return e
		}, want: "signature"},
		{name: "flags altered after signing", env: func() passkey.Envelope {
			e := a.Assert(stmt, passkeytest.Options{NoUV: true})
			e.AuthenticatorData[32] |= 0x04
			return e
		}, want: "signature"},
		{name: "signed by another credential", env: func() passkey.Envelope {
			e := other.Assert(stmt, passkeytest.Options{})
			e.KeyID, e.CredentialID = a.Credential.KeyID(), a.Credential.ID
			return e
		}, want: "signature"},
		{name: "unknown credential", env: func() passkey.Envelope { return other.Assert(stmt, passkeytest.Options{}) }, want: "another credential"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cred := tc.cred
			if cred.ID == nil {
				cred = a.Credential
			}
			raw, err := tc.env().Marshal()
			if err != nil {
				t.Fatal(err)
			}
			env, err := passkey.Open(raw)
			if err != nil {
				t.Fatal(err)
			}
			_, err = passkey.Verify(env, cred, passkey.Expect{Origins: tc.origins})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("want it verified, got %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("want an error about %q, got %v", tc.want, err)
			}
		})
	}
}

func TestCounterOK(t *testing.T) {
	for _, tc := range []struct {
		stored, got uint32
		ok          bool
	}{{0, 0, true}, {0, 1, true}, {5, 6, true}, {5, 5, false}, {5, 4, false}, {5, 0, false}} {
		if CounterOK := passkey.CounterOK(tc.stored, tc.got); CounterOK != tc.ok {
			t.Errorf("CounterOK(%d, %d) = %v, want %v", tc.stored, tc.got, CounterOK, tc.ok)
		}
	}
}

func TestCredentialRoundTrip(t *testing.T) {
	a := passkeytest.New("localhost")
	text := a.Credential.Encode()
	if !passkey.IsCredential(text) {
		t.Fatal("IsCredential is false for an encoded credential")
	}
	c, err := passkey.ParseCredential(text)
	if err != nil {
		t.Fatal(err)
	}
	if c.KeyID() != a.Credential.KeyID() || c.RPID != "localhost" || string(c.ID) != string(a.Credential.ID) {
		t.Fatalf("round trip changed the credential: %+v", c)
	}
	moved, err := passkey.ParseCredential(strings.Replace(text, "Rp-Id: localhost", "Rp-Id: evil.example", 1))
	if err != nil || moved.KeyID() == c.KeyID() {
		t.Fatalf("another RP id keeps the key id: %v", err)
	}
	if _, err := passkey.ParseCredential(strings.Replace(text, "Rp-Id: localhost", "Rp-Id: evil.example/x", 1)); err == nil {
		t.Fatal("a bad RP id parsed")
	}
	if _, err := passkey.ParseCredential("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"); err == nil {
		t.Fatal("an Ed25519 PEM parsed as a passkey")
	}
}

func TestOpenStrict(t *testing.T) {
	a := passkeytest.New("localhost")
	raw, _ := a.Assert([]byte("{}"), passkeytest.Options{}).Marshal()
	if !passkey.IsEnvelope(raw) {
		t.Fatal("IsEnvelope false")
	}
	bad := strings.Replace(string(raw), `"format"`, `"extra":1,"format"`, 1)
	if _, err := passkey.Open([]byte(bad)); err == nil {
		t.Fatal("an unknown field was accepted")
	}
	if passkey.IsEnvelope([]byte(`{"payloadType":"application/vnd.signoff.approval+json"}`)) {
		t.Fatal("a DSSE envelope claims to be a passkey envelope")
	}
}

func TestVerifyRegistration(t *testing.T) {
	a := passkeytest.New("localhost")
	challenge := []byte("0123456789abcdef0123456789abcdef")
	origin := "http://localhost:8080"
	reg, err := passkey.VerifyRegistration(a.Register(challenge, origin), challenge, "localhost", []string{origin})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Credential.KeyID() != a.Credential.KeyID() || reg.Attestation != "none" {
		t.Fatalf("registered %+v", reg)
	}
	if _, err := passkey.VerifyRegistration(a.Register([]byte("another challenge, another day!!"), origin), challenge, "localhost", []string{origin}); err == nil {
		t.Fatal("a registration for another challenge verified")
	}
	if _, err := passkey.VerifyRegistration(a.Register(challenge, "http://evil.localhost:8080"), challenge, "localhost", []string{origin}); err == nil {
		t.Fatal("a registration from another origin verified")
	}
	if _, err := passkey.VerifyRegistration(a.Register(challenge, origin), challenge, "example.com", []string{origin}); err == nil {
		t.Fatal("a registration for another RP id verified")
	}
}
