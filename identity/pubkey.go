package identity

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
)

// An approver's public key is a credential: its id and its stored form
// are decided here, so that the store registers keys without importing
// package keys (which reads and writes key files); keys.ID and
// keys.EncodePublic are these.

// KeyID is a short, stable name for a public key: the first 16 hex digits
// of the SHA-256 of the raw key.
func KeyID(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return hex.EncodeToString(h[:8])
}

// EncodePublicKey returns pub as a PEM public key block.
func EncodePublicKey(pub ed25519.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}
