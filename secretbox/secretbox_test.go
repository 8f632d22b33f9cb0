package secretbox_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/secretbox"
)

func mustBox(tb testing.TB, fill byte) *secretbox.Box {
	tb.Helper()
	b, err := secretbox.New(bytes.Repeat([]byte{fill}, secretbox.KeySize))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestNewKeyLength(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 16, 24, 31, 33, 64} {
		if _, err := secretbox.New(make([]byte, n)); err == nil {
			t.Errorf("New(%d bytes) succeeded, want error", n)
		}
	}
	if _, err := secretbox.New(make([]byte, 32)); err != nil {
		t.Fatalf("New(32 bytes): %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	b := mustBox(t, 1)
	for _, plain := range [][]byte{nil, []byte("x"), []byte("hunter2"), bytes.Repeat([]byte{0xff}, 4096)} {
		sealed := b.Seal(plain, "channel-1")
		if !strings.HasPrefix(sealed, "sb1:") {
			t.Fatalf("sealed=%q, want sb1: prefix", sealed)
		}
		got, err := b.Open(sealed, "channel-1")
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if !bytes.Equal(got, plain) {
			t.Fatalf("Open=%q, want %q", got, plain)
		}
	}
}

func TestSealUsesFreshNonce(t *testing.T) {
	t.Parallel()
	b := mustBox(t, 1)
	if b.Seal([]byte("same"), "a") == b.Seal([]byte("same"), "a") {
		t.Fatal("two seals of the same plaintext are equal; nonce is reused")
	}
}

func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	b := mustBox(t, 1)
	sealed := b.Seal([]byte("hunter2"), "channel-1")
	tests := []struct {
		name   string
		box    *secretbox.Box
		sealed string
		aad    string
	}{
		{"wrong aad", b, sealed, "channel-2"},
		{"empty aad", b, sealed, ""},
		{"wrong key", mustBox(t, 2), sealed, "channel-1"},
		{"no prefix", b, strings.TrimPrefix(sealed, "sb1:"), "channel-1"},
		{"future prefix", b, "sb2:" + strings.TrimPrefix(sealed, "sb1:"), "channel-1"},
		{"empty", b, "", "channel-1"},
		{"prefix only", b, "sb1:", "channel-1"},
		{"bad base64", b, "sb1:!!!!", "channel-1"},
		{"padded base64", b, sealed + "==", "channel-1"},
		{"newline inside", b, sealed[:10] + "\n" + sealed[10:], "channel-1"},
		{"truncated", b, sealed[:len(sealed)-4], "channel-1"},
		{"shorter than nonce and tag", b, "sb1:" + base64.RawURLEncoding.EncodeToString(make([]byte, 27)), "channel-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.box.Open(tt.sealed, tt.aad)
			if !errors.Is(err, secretbox.ErrOpen) {
				t.Fatalf("Open err=%v, want ErrOpen", err)
			}
			if got != nil {
				t.Fatalf("Open returned %q with an error", got)
			}
		})
	}
}

// TestOpenRefusesTampering flips one bit in every byte of the nonce, the
// ciphertext and the tag in turn.
func TestOpenRefusesTampering(t *testing.T) {
	t.Parallel()
	b := mustBox(t, 1)
	plain := []byte("hunter2")
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(b.Seal(plain, "c"), "sb1:"))
	if err != nil {
		t.Fatal(err)
	}
	regions := []struct {
		name       string
		start, end int
	}{
		{"nonce", 0, 12},
		{"ciphertext", 12, 12 + len(plain)},
		{"tag", 12 + len(plain), len(raw)},
	}
	for _, r := range regions {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			for i := r.start; i < r.end; i++ {
				bad := bytes.Clone(raw)
				bad[i] ^= 0x01
				sealed := "sb1:" + base64.RawURLEncoding.EncodeToString(bad)
				if _, err := b.Open(sealed, "c"); !errors.Is(err, secretbox.ErrOpen) {
					t.Fatalf("byte %d flipped: err=%v, want ErrOpen", i, err)
				}
			}
		})
	}
}

func TestFromEnvOrSeed(t *testing.T) {
	t.Parallel()
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i * 7)
	}
	seed := bytes.Repeat([]byte{9}, 32)
	keyOf := func(k []byte) string { return mustKeyID(t, k) }
	tests := []struct {
		name    string
		env     string
		seed    []byte
		wantKey []byte // nil means an error is expected
	}{
		{"hex", hex.EncodeToString(key), nil, key},
		{"hex upper case", strings.ToUpper(hex.EncodeToString(key)), nil, key},
		{"base64 std", base64.StdEncoding.EncodeToString(key), nil, key},
		{"base64 raw url", base64.RawURLEncoding.EncodeToString(key), nil, key},
		{"trailing newline", hex.EncodeToString(key) + "\n", nil, key},
		{"env wins over seed", hex.EncodeToString(key), seed, key},
		{"derived from seed", "", seed, derive(seed)},
		{"hex too short", hex.EncodeToString(key[:31]), seed, nil},
		{"hex too long", hex.EncodeToString(append(bytes.Clone(key), 0)), seed, nil},
		{"base64 of 16 bytes", base64.StdEncoding.EncodeToString(key[:16]), seed, nil},
		{"base64 of 33 bytes", base64.StdEncoding.EncodeToString(append(bytes.Clone(key), 0)), seed, nil},
		{"not an encoding", "correct horse battery staple!", seed, nil},
		{"no env no seed", "", nil, nil},
		{"empty seed", "", []byte{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := secretbox.FromEnvOrSeed(tt.env, tt.seed)
			if tt.wantKey == nil {
				if err == nil {
					t.Fatalf("FromEnvOrSeed succeeded, want error")
				}
				if env := strings.TrimSpace(tt.env); env != "" && strings.Contains(err.Error(), env) {
					t.Fatalf("error %q echoes the key", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromEnvOrSeed: %v", err)
			}
			if got, want := b.KeyID(), keyOf(tt.wantKey); got != want {
				t.Fatalf("KeyID=%s, want %s", got, want)
			}
		})
	}
}

func TestDeriveIsDeterministic(t *testing.T) {
	t.Parallel()
	seed := []byte("an ed25519 seed of thirty-two b.")
	a, err := secretbox.FromEnvOrSeed("", seed)
	if err != nil {
		t.Fatal(err)
	}
	b, err := secretbox.FromEnvOrSeed("", bytes.Clone(seed))
	if err != nil {
		t.Fatal(err)
	}
	if a.KeyID() != b.KeyID() {
		t.Fatalf("KeyID %s != %s for the same seed", a.KeyID(), b.KeyID())
	}
	got, err := b.Open(a.Seal([]byte("s"), "r"), "r")
	if err != nil || string(got) != "s" {
		t.Fatalf("Open across boxes from the same seed: %q, %v", got, err)
	}
	other, err := secretbox.FromEnvOrSeed("", []byte("another seed"))
	if err != nil {
		t.Fatal(err)
	}
	if other.KeyID() == a.KeyID() {
		t.Fatal("different seeds derived the same key")
	}
	if !bytes.Equal(secretbox.DeriveKey(seed), derive(seed)) {
		t.Fatal("DeriveKey is not HMAC-SHA256(seed, \"signoff secretbox v1\")")
	}
}

func TestKeyID(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{1}, 32)
	sum := sha256.Sum256(key)
	if got, want := mustBox(t, 1).KeyID(), hex.EncodeToString(sum[:])[:8]; got != want {
		t.Fatalf("KeyID=%s, want %s", got, want)
	}
}

// derive restates the documented derivation so a change to it fails a test.
func derive(seed []byte) []byte {
	m := hmac.New(sha256.New, seed)
	m.Write([]byte("signoff secretbox v1"))
	return m.Sum(nil)
}

func mustKeyID(tb testing.TB, key []byte) string {
	tb.Helper()
	b, err := secretbox.New(key)
	if err != nil {
		tb.Fatal(err)
	}
	return b.KeyID()
}

func FuzzOpen(f *testing.F) {
	b := mustBox(f, 1)
	f.Add(b.Seal([]byte("hunter2"), "c"), "c")
	f.Add("sb1:", "")
	f.Add("sb1:AAAA", "c")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, sealed, aad string) {
		plain, err := b.Open(sealed, aad)
		if err != nil {
			if !errors.Is(err, secretbox.ErrOpen) {
				t.Fatalf("Open err=%v, want ErrOpen", err)
			}
			return
		}
		// Anything that opens must be a canonical Seal output under this aad.
		if again, err := b.Open(sealed, aad); err != nil || !bytes.Equal(again, plain) {
			t.Fatalf("Open is not repeatable: %q, %v", again, err)
		}
	})
}

func ExampleBox() {
	box, err := secretbox.FromEnvOrSeed("", []byte("server ed25519 seed"))
	if err != nil {
		panic(err)
	}
	sealed := box.Seal([]byte("smtp password"), "channel:42")
	plain, err := box.Open(sealed, "channel:42")
	fmt.Println(string(plain), err)
	// Output: smtp password <nil>
}
