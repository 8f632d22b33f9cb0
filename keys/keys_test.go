package keys_test

import (
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/keys"
)

func TestLoadOrCreate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "signoff.key")
	k1, created, err := keys.LoadOrCreate(path)
	if err != nil || !created {
		t.Fatalf("first LoadOrCreate = %v, created %v", err, created)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, want 0600", st.Mode().Perm())
	}
	k2, created, err := keys.LoadOrCreate(path)
	if err != nil || created || !k1.Equal(k2) {
		t.Fatalf("second LoadOrCreate = %v, created %v, same %v", err, created, k1.Equal(k2))
	}
	pub, err := keys.LoadPublic(path)
	if err != nil || !pub.Equal(k1.Public()) {
		t.Fatalf("LoadPublic(private file) = %v", err)
	}
	pem, _ := keys.EncodePublic(pub)
	pubPath := filepath.Join(t.TempDir(), "server.pub")
	os.WriteFile(pubPath, pem, 0o644)
	if p2, err := keys.LoadPublic(pubPath); err != nil || !p2.Equal(pub) {
		t.Fatalf("LoadPublic(public file) = %v", err)
	}
	if id := keys.ID(pub); len(id) != 16 {
		t.Fatalf("ID = %q", id)
	}
}

func TestLoadRefusesOpenPermissions(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "signoff.key")
	if _, _, err := keys.LoadOrCreate(path); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644)
	if _, err := keys.Load(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("Load(0644) = %v, want a permissions refusal", err)
	}
}

func TestLoadRejectsGarbage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, body := range map[string]string{"empty": "", "text": "hello", "pub-as-priv": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		if _, err := keys.Load(p); err == nil {
			t.Errorf("Load(%s) accepted", name)
		}
	}
	_ = ed25519.PublicKeySize
}
