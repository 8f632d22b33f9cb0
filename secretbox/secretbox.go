// Package secretbox encrypts small secrets (channel passwords, tokens) before
// they are stored, so a copy of the database alone does not reveal them.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// KeySize is the AES-256 key length in bytes.
const KeySize = 32

// prefix versions the sealed format so a later scheme can coexist with this one.
const prefix = "sb1:"

// deriveLabel is the HMAC message used to derive a key from a seed. Changing it
// changes every derived key, so it is versioned like the sealed format.
const deriveLabel = "signoff secretbox v1"

const nonceSize = 12

// ErrOpen is returned by Open for every failure. The causes (wrong key, wrong
// aad, tampering, malformed input) are deliberately not distinguished, since
// telling them apart helps an attacker more than an operator.
var ErrOpen = errors.New("secretbox: cannot open sealed value")

// Box seals and opens secrets with AES-256-GCM under one key.
type Box struct {
	aead  cipher.AEAD
	keyID string
}

// New returns a Box using key, which must be exactly 32 bytes.
func New(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secretbox: key is %d bytes, want %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	sum := sha256.Sum256(key)
	return &Box{aead: aead, keyID: hex.EncodeToString(sum[:4])}, nil
}

// FromEnvOrSeed builds a Box from env, the value of SIGNOFF_SECRET_KEY, or, when
// env is empty, from a key derived from seed (for example the server's Ed25519
// seed), so a single-node install works without extra configuration. env may be
// 32 bytes in standard base64, unpadded URL-safe base64, or 64 hex characters.
// Surrounding white space in env is ignored, since it usually comes from a
// file with a trailing newline. Errors never include env or seed, because they
// end up in logs.
func FromEnvOrSeed(env string, seed []byte) (*Box, error) {
	env = strings.TrimSpace(env)
	if env != "" {
		key, err := ParseKey(env)
		if err != nil {
			return nil, err
		}
		return New(key)
	}
	if len(seed) == 0 {
		return nil, errors.New("secretbox: SIGNOFF_SECRET_KEY is unset and there is no seed to derive a key from")
	}
	return New(DeriveKey(seed))
}

// ParseKey decodes a 32-byte key written as 64 hex characters, standard base64
// or unpadded URL-safe base64. The error never echoes s.
func ParseKey(s string) ([]byte, error) {
	// Hex is tried first: 64 hex characters are also valid base64, but would
	// decode to 48 bytes and be refused, so there is no ambiguity either way.
	if len(s) == 2*KeySize {
		if key, err := hex.DecodeString(s); err == nil {
			return key, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding, base64.URLEncoding, base64.RawStdEncoding} {
		key, err := enc.DecodeString(s)
		if err != nil {
			continue
		}
		if len(key) != KeySize {
			return nil, fmt.Errorf("secretbox: SIGNOFF_SECRET_KEY decodes to %d bytes, want %d", len(key), KeySize)
		}
		return key, nil
	}
	return nil, fmt.Errorf("secretbox: SIGNOFF_SECRET_KEY (%d characters) is neither 64 hex characters nor base64 of %d bytes", len(s), KeySize)
}

// DeriveKey returns HMAC-SHA256(key=seed, msg="signoff secretbox v1"). The
// label separates this key from any other use of the same seed.
func DeriveKey(seed []byte) []byte {
	mac := hmac.New(sha256.New, seed)
	mac.Write([]byte(deriveLabel))
	return mac.Sum(nil)
}

// KeyID returns the first 8 hex characters of sha256(key). It tells keys apart
// in logs without revealing them.
func (b *Box) KeyID() string { return b.keyID }

// Seal encrypts plaintext and returns "sb1:" followed by base64url(nonce ||
// ciphertext). aad is authenticated but not stored; pass the id of the row the
// secret belongs to so a sealed value copied to another row fails to open.
func (b *Box) Seal(plaintext []byte, aad string) string {
	buf := make([]byte, nonceSize, nonceSize+len(plaintext)+b.aead.Overhead())
	// crypto/rand.Read never returns an error since Go 1.24; it crashes the
	// program instead of handing back a predictable nonce.
	rand.Read(buf)
	buf = b.aead.Seal(buf, buf[:nonceSize], plaintext, []byte(aad))
	return prefix + base64.RawURLEncoding.EncodeToString(buf)
}

// Open reverses Seal. Any failure, including a wrong key, a wrong aad, a
// tampered or a malformed value, returns an error matching ErrOpen.
func (b *Box) Open(sealed string, aad string) ([]byte, error) {
	rest, ok := strings.CutPrefix(sealed, prefix)
	if !ok {
		return nil, fmt.Errorf("%w: missing %q prefix", ErrOpen, prefix)
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	// The decoder skips CR and LF and ignores stray trailing bits, so only the
	// canonical encoding is accepted: one secret, one sealed spelling.
	if err != nil || base64.RawURLEncoding.EncodeToString(raw) != rest {
		return nil, fmt.Errorf("%w: bad encoding", ErrOpen)
	}
	if len(raw) < nonceSize+b.aead.Overhead() {
		return nil, fmt.Errorf("%w: too short", ErrOpen)
	}
	plain, err := b.aead.Open(nil, raw[:nonceSize], raw[nonceSize:], []byte(aad))
	if err != nil {
		return nil, fmt.Errorf("%w: key %s: authentication failed", ErrOpen, b.keyID)
	}
	return plain, nil
}
