package httpapi_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/evidence"
)

// TestChangeEvidenceHTTP exports an executed change's evidence and checks
// it offline under the server's key.
func TestChangeEvidenceHTTP(t *testing.T) {
	t.Parallel()
	e := newChangeEnv(t)
	c := e.approved(t)
	if got := e.execute(t, e.aliceToken, c.ID); got.status != http.StatusOK {
		t.Fatalf("execute: %d %s", got.status, got.body)
	}
	path := "/api/v1/cases/" + c.ID + "/change/evidence"
	got := e.do(t, request{method: "GET", path: path, token: e.tokens[signoff.RoleViewer]})
	if got.status != http.StatusOK || got.header.Get("Content-Type") != "application/gzip" {
		t.Fatalf("export: %d %s %s", got.status, got.header.Get("Content-Type"), got.body)
	}
	sum := sha256.Sum256(got.body)
	if d := hex.EncodeToString(sum[:]); got.header.Get("X-Bundle-Digest") != d || got.header.Get("X-Signoff-Bundle-Digest") != d {
		t.Fatalf("digest headers %q %q, body %s", got.header.Get("X-Bundle-Digest"), got.header.Get("X-Signoff-Bundle-Digest"), d)
	}
	dir := t.TempDir()
	zr, err := gzip.NewReader(bytes.NewReader(got.body))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		dst := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		os.MkdirAll(filepath.Dir(dst), 0o755)
		os.WriteFile(dst, b, 0o644)
	}
	f, err := evidence.VerifyBundle(dir, []ed25519.PublicKey{e.desk.Key.Public().(ed25519.PublicKey)})
	if err != nil || !f.OK() || f.Kind != evidence.KindChange || f.Change.Case != c.ID || len(f.Change.Receipts) != 1 || !f.Change.Receipts[0].HealthPassed {
		t.Fatalf("bundle (%v):\n%s", err, f)
	}

	for _, tc := range []struct {
		name, token, path string
		want              int
	}{
		{"an agent", e.tokens[signoff.RolePlanner], path, http.StatusForbidden},
		{"a reporter", e.tokens[signoff.RoleReporter], path, http.StatusForbidden},
		{"no credential", "", path, http.StatusUnauthorized},
		{"a bug case", e.ownerToken, "/api/v1/cases/" + e.newCase(t, signoff.KindBug, "").ID + "/change/evidence", http.StatusUnprocessableEntity},
		{"an unknown case", e.ownerToken, "/api/v1/cases/" + signoff.NewID(signoff.PrefixCase) + "/change/evidence", http.StatusNotFound},
		{"a request without a plan", e.ownerToken, "/api/v1/cases/" + e.newCase(t, signoff.KindChange, "").ID + "/change/evidence", http.StatusNotFound},
	} {
		got := e.do(t, request{method: "GET", path: tc.path, token: tc.token})
		if got.status != tc.want {
			t.Errorf("%s: %d, want %d (%s)", tc.name, got.status, tc.want, got.body)
		} else {
			got.problem(t)
		}
	}

	// Without a change desk the route answers 503.
	srv := serve(t, e.store, nil, unlimited())
	if got := do(t, srv, request{method: "GET", path: path, token: e.ownerToken}); got.status != http.StatusServiceUnavailable {
		t.Fatalf("without a desk: %d %s", got.status, got.body)
	}
}
