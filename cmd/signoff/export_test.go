package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// TestEvidenceExportChangeCLI executes a change through the change desk
// behind the real API, then exports its evidence with `signoff evidence
// export --case` (no candidate: a change case) and checks it offline with
// `signoff evidence verify --key`, as an auditor would.
func TestEvidenceExportChangeCLI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, serverKey, _ := ed25519.GenerateKey(nil)
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "signoff.db"), sqlstore.Options{Signer: serverKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ws, owner, err := s.CreateWorkspace(ctx, "Acme", "olga")
	if err != nil {
		t.Fatal(err)
	}
	alice, err := s.CreateActor(ctx, owner, "alice", signoff.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	alicePub, aliceKey, _ := ed25519.GenerateKey(nil)
	pemKey, _ := keys.EncodePublic(alicePub)
	if _, err := s.RegisterKey(ctx, alice, string(pemKey)); err != nil {
		t.Fatal(err)
	}
	_, ownerToken, err := s.CreateToken(ctx, signoff.CLIActor(ws.ID), owner.ID, "cli", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shoplite"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateFlag(ctx, owner, p.ID, "prod", "checkout_v2", signoff.FlagBoolean, json.RawMessage("true")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetChangePolicy(ctx, owner, `allowed_targets: ["flag:prod/*"]
environments: [prod]
approvals:
  required: 1
  group: [`+alice.ID+`]
windows:
  - days: [mon, tue, wed, thu, fri, sat, sun]
    from: "00:00"
    to: "24:00"
`, 0, change.PolicyDigest); err != nil {
		t.Fatal(err)
	}
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("order total 9000")) }))
	t.Cleanup(app.Close)
	desk := &changedesk.Desk{Store: s, Key: serverKey,
		Actuators: map[string]changedesk.Actuator{change.KindFlag: changedesk.FlagActuator{Flags: s}},
		Health:    changedesk.HTTPProber{},
		Sleep:     func(context.Context, time.Duration) error { return nil }}
	srv := httptest.NewServer(httpapi.New(s, slog.New(slog.DiscardHandler), httpapi.WithChangeDesk(desk)))
	t.Cleanup(srv.Close)

	// The change: requested, planned, signed by alice, executed.
	c, _, err := desk.Request(ctx, owner, changedesk.RequestInput{ProjectID: p.ID, Reason: "checkout answers 500 since the v2 payment flow went live"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := desk.Propose(ctx, owner, c.ID, changedesk.Proposal{Target: "flag:prod/checkout_v2", Params: json.RawMessage(`{"value":false}`), Via: "human",
		HealthCheck: change.HealthCheck{Kind: change.HealthHTTP, Method: "GET", URL: app.URL + "/checkout", ExpectStatus: 200, ExpectBody: "total", WindowSeconds: 2, IntervalSeconds: 1}}); err != nil {
		t.Fatal(err)
	}
	card, err := desk.Card(ctx, alice, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	envl, err := approval.Sign(approval.NewStatement(c.ID, card.SubjectDigest, approval.Approve, card.PolicyDigest, alice.ID, time.Now(), card.Policy.TTL()), aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(envl)
	if _, _, err := desk.Approve(ctx, alice, c.ID, raw, "cli-signed", ""); err != nil {
		t.Fatal(err)
	}
	x, err := desk.Execute(ctx, alice, c.ID)
	if err != nil || x.Outcome != changedesk.OutcomeExecuted {
		t.Fatalf("execute: %s %v", x.Outcome, err)
	}

	cliRun := func(args ...string) (string, int) {
		t.Helper()
		vars := map[string]string{"SIGNOFF_TOKEN": ownerToken, "SIGNOFF_URL": srv.URL}
		var out bytes.Buffer
		code := run(ctx, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &out, getenv: func(k string) string { return vars[k] }}, args)
		if strings.Contains(out.String(), ownerToken) {
			t.Errorf("signoff %v printed the API token", args)
		}
		return out.String(), code
	}
	dir := filepath.Join(t.TempDir(), "bundle")
	out, code := cliRun("evidence", "export", "--case", c.ID, "--out", dir)
	if code != 0 || !strings.Contains(out, "wrote the evidence of change case "+c.ID) || !strings.Contains(out, "signoff evidence verify "+dir+" --key SERVER.pub") {
		t.Fatalf("export: exit %d\n%s", code, out)
	}
	pubFile := filepath.Join(t.TempDir(), "server.pub")
	serverPEM, _ := keys.EncodePublic(serverKey.Public().(ed25519.PublicKey))
	os.WriteFile(pubFile, serverPEM, 0o644)
	out, code = cliRun("evidence", "verify", dir, "--key", pubFile)
	for _, want := range []string{"change case " + c.ID + " (executed)", "receipt " + x.Receipt.ID + " (execute): executed flag:prod/checkout_v2",
		"health passed: 3 probe(s), all ok", "approval ", "evidence: OK (change case " + c.ID + ": executed), signed by a trusted key"} {
		if !strings.Contains(out, want) {
			t.Errorf("verify output lacks %q", want)
		}
	}
	if code != 0 || t.Failed() {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}

	// Under another key, and after an edit of the plan, it fails.
	otherPub, _, _ := ed25519.GenerateKey(nil)
	otherPEM, _ := keys.EncodePublic(otherPub)
	otherFile := filepath.Join(t.TempDir(), "other.pub")
	os.WriteFile(otherFile, otherPEM, 0o644)
	if out, code = cliRun("evidence", "verify", dir, "--key", otherFile); code != 1 || !strings.Contains(out, "evidence: FAILED") {
		t.Fatalf("verify under another key: exit %d\n%s", code, out)
	}
	plan, _ := os.ReadFile(filepath.Join(dir, "plan.json"))
	os.WriteFile(filepath.Join(dir, "plan.json"), bytes.Replace(plan, []byte(`"value":false`), []byte(`"value":true`), 1), 0o644)
	if out, code = cliRun("evidence", "verify", dir, "--key", pubFile); code != 1 || !strings.Contains(out, "FAILED     plan.json: sha256 mismatch") {
		t.Fatalf("verify of an edited plan: exit %d\n%s", code, out)
	}

	// A bug case needs its candidate.
	bug, err := s.CreateCase(ctx, owner, signoff.CaseInput{ProjectID: p.ID, Kind: signoff.KindBug, Title: "coupon applied twice"})
	if err != nil {
		t.Fatal(err)
	}
	if out, code = cliRun("evidence", "export", "--case", bug.ID, "--out", filepath.Join(t.TempDir(), "b")); code == 0 || !strings.Contains(out, "--candidate") {
		t.Fatalf("export of a bug without --candidate: exit %d\n%s", code, out)
	}
}
