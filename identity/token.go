// Package identity issues and checks credentials and decides which roles may
// call which operations. It is pure: storage looks tokens up, this package
// says what a token is and whether its secret matches.
package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/signoff-dev/signoff"
)

// TokenPrefix starts every API token so that secret scanners can find leaked
// ones and so that a token is never mistaken for an id.
const TokenPrefix = "so_"

const secretLen = 32 // base32 symbols, 160 bits

// TrackingPrefix starts every reporter tracking secret. A tracking secret is
// a capability for one case, never an API credential, so it looks different.
const TrackingPrefix = "sot_"

// NewToken returns a fresh token id, the secret to hand to the caller once,
// and the SHA-256 of the secret, which is all that is stored.
func NewToken() (id, secret string, hash []byte) {
	return newSecret(signoff.PrefixToken, TokenPrefix)
}

// ParseToken returns the token id a secret claims to be, or false when the
// secret is not shaped like a token at all.
func ParseToken(secret string) (id string, ok bool) {
	return parseSecret(signoff.PrefixToken, TokenPrefix, secret)
}

// NewTracking returns a fresh tracking link id, its secret (160 random bits
// beyond the id) and the stored hash.
func NewTracking() (id, secret string, hash []byte) {
	return newSecret(signoff.PrefixTracking, TrackingPrefix)
}

// ParseTracking returns the tracking link id a secret claims to be.
func ParseTracking(secret string) (id string, ok bool) {
	return parseSecret(signoff.PrefixTracking, TrackingPrefix, secret)
}

func newSecret(idPrefix, secretPrefix string) (id, secret string, hash []byte) {
	id = signoff.NewID(idPrefix)
	body := strings.TrimPrefix(id, idPrefix+"_")
	secret = secretPrefix + body + "_" + randomSymbols(secretLen)
	return id, secret, HashSecret(secret)
}

func parseSecret(idPrefix, secretPrefix, secret string) (string, bool) {
	rest, ok := strings.CutPrefix(secret, secretPrefix)
	if !ok {
		return "", false
	}
	body, sym, ok := strings.Cut(rest, "_")
	if !ok || len(sym) != secretLen {
		return "", false
	}
	id := idPrefix + "_" + body
	if !signoff.ValidID(idPrefix, id) {
		return "", false
	}
	return id, true
}

// HashSecret is the stored form of a secret.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// SecretMatches compares in constant time, so response timing says nothing
// about how much of a guessed secret was right.
func SecretMatches(secret string, storedHash []byte) bool {
	return subtle.ConstantTimeCompare(HashSecret(secret), storedHash) == 1
}

const symbols = "0123456789abcdefghjkmnpqrstvwxyz"

func randomSymbols(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("identity: crypto/rand failed: " + err.Error())
	}
	for i := range b {
		b[i] = symbols[b[i]&31]
	}
	return string(b)
}
