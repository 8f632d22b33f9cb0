package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/client"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// TestRevokeAndDisableCommands: a person lists and revokes their own
// approval key through a real API server, and the server's operator
// disables and enables them with database access; the last owner is
// never disabled.
func TestRevokeAndDisableCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "signoff.db")
	var srvURL string
	signoffRun := func(token string, args ...string) (string, string, int) {
		t.Helper()
		vars := map[string]string{"SIGNOFF_TOKEN": token, "SIGNOFF_URL": srvURL, "SIGNOFF_DB": db}
		var out, errOut bytes.Buffer
		code := run(ctx, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }}, args)
		if token != "" && strings.Contains(out.String()+errOut.String(), token) {
			t.Errorf("signoff %v printed the token", args)
		}
		return out.String(), errOut.String(), code
	}
	out, errOut, code := signoffRun("", "workspace", "create", "--name", "Acme", "--owner", "alice", "--json")
	var created struct {
		Workspace signoff.Workspace
		Owner     signoff.Actor
	}
	if code != 0 || json.Unmarshal([]byte(out), &created) != nil {
		t.Fatalf("workspace create: %d %s %s", code, out, errOut)
	}
	ws := created.Workspace.ID
	out, errOut, code = signoffRun("", "actor", "add", "--workspace", ws, "--role", "operator", "--name", "olga", "--token", "--json")
	var added struct {
		Actor signoff.Actor
		Token string
	}
	if code != 0 || json.Unmarshal([]byte(out), &added) != nil {
		t.Fatalf("actor add: %d %s %s", code, out, errOut)
	}
	op, opTok := added.Actor, added.Token

	key, err := keys.Load(filepath.Join(filepath.Dir(db), "signoff.key"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(ctx, db, sqlstore.Options{Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(httpapi.New(s, nil))
	t.Cleanup(srv.Close)
	srvURL = srv.URL
	pub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pemKey, err := keys.EncodePublic(pub)
	if err != nil {
		t.Fatal(err)
	}
	k, err := s.RegisterKey(ctx, op, string(pemKey))
	if err != nil {
		t.Fatal(err)
	}
	opClient, err := client.New(srv.URL, opTok)
	if err != nil {
		t.Fatal(err)
	}
	// me is the HTTP status of the operator's GET /me.
	me := func() int {
		_, err := opClient.Me(ctx)
		if p, ok := errors.AsType[*client.Problem](err); ok {
			return p.Status
		} else if err != nil {
			t.Fatal(err)
		}
		return http.StatusOK
	}

	steps := []struct {
		name     string
		token    string
		args     []string
		code     int
		want     string // in stdout
		meStatus int    // the operator's GET /me afterwards
	}{
		{"list keys", opTok, []string{"keys", "list"}, 0, k.ID + "  " + op.ID, 200},
		{"revoke needs the id", opTok, []string{"keys", "revoke"}, 2, "", 200},
		{"revoke own key", opTok, []string{"keys", "revoke", k.ID}, 0, "revoked approval key " + k.ID, 200},
		{"revoke twice", opTok, []string{"keys", "revoke", k.ID}, signoff.Codes[signoff.ECONFLICT].ExitCode, "", 200},
		{"disable", "", []string{"actor", "disable", op.ID, "--workspace", ws}, 0, "disabled " + op.ID, 401},
		{"list shows disabled", "", []string{"actor", "list", "--workspace", ws}, 0, "DISABLED", 401},
		{"last owner", "", []string{"actor", "disable", created.Owner.ID, "--workspace", ws}, signoff.Codes[signoff.ECONFLICT].ExitCode, "", 401},
		{"enable", "", []string{"actor", "enable", op.ID, "--workspace", ws}, 0, "enabled " + op.ID, 200},
		{"enable twice", "", []string{"actor", "enable", op.ID, "--workspace", ws}, signoff.Codes[signoff.ECONFLICT].ExitCode, "", 200},
	}
	for _, st := range steps {
		out, errOut, code := signoffRun(st.token, st.args...)
		if code != st.code || !strings.Contains(out, st.want) {
			t.Fatalf("%s: signoff %v = exit %d, stdout %q, stderr %q; want exit %d and %q", st.name, st.args, code, out, errOut, st.code, st.want)
		}
		if got := me(); got != st.meStatus {
			t.Fatalf("%s: the operator's GET /me = %d, want %d", st.name, got, st.meStatus)
		}
	}
	got, err := s.GetKey(ctx, ws, k.ID)
	if err != nil || got.RevokedAt == nil {
		t.Fatalf("key after revoke = %+v, %v", got, err)
	}
	out, _, _ = signoffRun(opTok, "keys", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if f := strings.Fields(lines[len(lines)-1]); len(lines) != 2 || len(f) != 4 || f[0] != k.ID || f[3] == "-" {
		t.Fatalf("keys list does not show the key revoked:\n%s", out)
	}
}
