package identity_test

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/signoff-dev/signoff/identity"
)

func TestPublicKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		seed byte
	}{
		{"zero seed", 0},
		{"seed 7", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seed := make([]byte, ed25519.SeedSize)
			for i := range seed {
				seed[i] = tc.seed
			}
			pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
			if id := identity.KeyID(pub); len(id) != 16 || id != identity.KeyID(append(ed25519.PublicKey{}, pub...)) {
				t.Fatalf("KeyID = %q: want 16 stable hex digits", id)
			}
			enc, err := identity.EncodePublicKey(pub)
			if err != nil {
				t.Fatal(err)
			}
			blk, rest := pem.Decode(enc)
			if blk == nil || blk.Type != "PUBLIC KEY" || len(rest) != 0 {
				t.Fatalf("EncodePublicKey = %q", enc)
			}
			k, err := x509.ParsePKIXPublicKey(blk.Bytes)
			if err != nil || !pub.Equal(k) {
				t.Fatalf("the PEM holds %v, %v; want the key", k, err)
			}
		})
	}
}
