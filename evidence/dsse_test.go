package evidence_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/signoff-dev/signoff/evidence"
)

// The DSSE specification's example (protocol.md, "Test vectors"):
// PAE("http://example.com/HelloWorld", "hello world").
func TestPAEMatchesTheDSSESpecVector(t *testing.T) {
	t.Parallel()
	got := string(evidence.PAE("http://example.com/HelloWorld", []byte("hello world")))
	want := "DSSEv1 29 http://example.com/HelloWorld 11 hello world"
	if got != want {
		t.Fatalf("PAE = %q, want %q", got, want)
	}
	if got := string(evidence.PAE("", nil)); got != "DSSEv1 0  0 " {
		t.Fatalf("PAE(empty) = %q", got)
	}
	// Lengths are in bytes, not runes.
	if got := string(evidence.PAE("t", []byte("é"))); got != "DSSEv1 1 t 2 é" {
		t.Fatalf("PAE(multibyte) = %q", got)
	}
}

func TestSignAndVerifyEnvelope(t *testing.T) {
	t.Parallel()
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	other, _, _ := ed25519.GenerateKey(rand.Reader)
	payload := []byte(`{"_type":"https://in-toto.io/Statement/v1"}`)
	env := evidence.Sign(evidence.PayloadType, payload, key)
	if k, err := env.Verify(payload, []ed25519.PublicKey{other, pub}); err != nil || !k.Equal(pub) {
		t.Fatalf("Verify = %v", err)
	}
	if _, err := env.Verify(payload, []ed25519.PublicKey{other}); !errors.Is(err, evidence.ErrNoValidSignature) {
		t.Fatalf("Verify under another key = %v", err)
	}
	if _, err := env.Verify(append([]byte{}, payload[1:]...), []ed25519.PublicKey{pub}); err == nil {
		t.Fatalf("Verify of a changed payload succeeded")
	}
	// The payload type is signed too.
	env2 := env
	env2.PayloadType = "application/json"
	if _, err := env2.Verify(payload, []ed25519.PublicKey{pub}); err == nil {
		t.Fatalf("Verify with a changed payload type succeeded")
	}
	// Signatures verify against the PAE, as DSSE says, not the bare payload.
	sig, _ := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	if !ed25519.Verify(pub, evidence.PAE(evidence.PayloadType, payload), sig) || ed25519.Verify(pub, payload, sig) {
		t.Fatalf("signature is not over the PAE")
	}
}

func TestDecodeEnvelopeIsStrict(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"payloadType":"x","payload":"e30=","signatures":[],"extra":1}`,
		`{"payloadType":"x","payload":"e30=","payload":"W10=","signatures":[]}`,
		`{"payloadType":"x","payload":"e30","signatures":[]}`,
		`{"payloadType":"x","payload":"e30=","signatures":[]} {}`,
	} {
		if _, _, err := evidence.DecodeEnvelope([]byte(in)); err == nil {
			t.Errorf("DecodeEnvelope(%s) accepted", in)
		}
	}
}
