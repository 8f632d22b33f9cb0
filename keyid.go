package signoff

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
)

// KeyID is a short, stable name for a public key: the first 16 hex digits
// of the SHA-256 of the raw key (keys.ID). It lives here so that the store
// names its signing key without importing the key files package.
func KeyID(pub ed25519.PublicKey) string {
	h := sha256.Sum256(pub)
	return hex.EncodeToString(h[:8])
}
