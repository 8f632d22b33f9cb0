// Package keys stores Ed25519 keys in PEM files. Private key files must be
// readable by their owner only, like SSH keys, because whoever reads one can
// sign ledger checkpoints or approvals.
package keys

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/signoff-dev/signoff"
)

// ID is a short, stable name for a public key: the first 16 hex digits of the
// SHA-256 of the raw key.
func ID(pub ed25519.PublicKey) string { return signoff.KeyID(pub) }

// LoadOrCreate loads the private key at path, or creates one with mode 0600
// when the file does not exist. created reports which happened.
func LoadOrCreate(path string) (key ed25519.PrivateKey, created bool, err error) {
	key, err = Load(path)
	if err == nil {
		return key, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, false, fmt.Errorf("generate key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, false, fmt.Errorf("encode key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("create key dir: %w", err)
	}
	// O_EXCL: if two processes start at once, one writes and the other loads.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		key, err = Load(path)
		return key, false, err
	} else if err != nil {
		return nil, false, fmt.Errorf("create key %s: %w", path, err)
	}
	werr := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der})
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return nil, false, fmt.Errorf("write key %s: %w", path, werr)
	}
	return priv, true, nil
}

// Load reads an Ed25519 private key and refuses files that group or others
// can read.
func Load(path string) (ed25519.PrivateKey, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("load key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("load key %s: permissions %#o are too open; run chmod 600 %s", path, st.Mode().Perm(), path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("load key %s: not a PEM private key", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("load key %s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("load key %s: not an Ed25519 key", path)
	}
	return priv, nil
}

// LoadPublic reads a public key from a PEM public key file, or derives it
// from a private key file, so verification can run with either.
func LoadPublic(path string) (ed25519.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load public key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("load public key %s: not PEM", path)
	}
	switch blk.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("load public key %s: %w", path, err)
		}
		if pub, ok := k.(ed25519.PublicKey); ok {
			return pub, nil
		}
		return nil, fmt.Errorf("load public key %s: not an Ed25519 key", path)
	case "PRIVATE KEY":
		priv, err := Load(path)
		if err != nil {
			return nil, err
		}
		return priv.Public().(ed25519.PublicKey), nil
	}
	return nil, fmt.Errorf("load public key %s: unexpected PEM block %q", path, blk.Type)
}

// EncodePublic returns pub as a PEM public key block.
func EncodePublic(pub ed25519.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// ParsePublic reads one PEM "PUBLIC KEY" block holding an Ed25519 key, as
// stored for a registered approver.
func ParsePublic(b []byte) (ed25519.PublicKey, error) {
	blk, _ := pem.Decode([]byte(strings.TrimSpace(string(b))))
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("public key is not a PEM PUBLIC KEY block")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("public key is not Ed25519")
	}
	return pub, nil
}
