package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/workflow"
)

// needShopLite skips where the demo cannot be set up: it writes ShopLite
// as a git repository and builds its production server with the go
// toolchain. Unlike the bug loop (needLoop), the change walk runs nothing
// in the sandbox, so it does not need one.
func needShopLite(t *testing.T) {
	t.Helper()
	for _, b := range []string{"git", "go"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed", b)
		}
	}
}

// TestDemoWalkChange runs `signoff demo --walk change` and then checks
// what it left: three change cases (the disable executed and then
// reverted, the second plan rolled back by its failed health check, the
// compensating rollback executed), each with receipts that verify under
// the server's key, the flag back at the incident's value after exactly
// the writes the walk made, and a ledger whose chain verifies.
func TestDemoWalkChange(t *testing.T) {
	needShopLite(t)
	dir := t.TempDir()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	if code := run(context.Background(), e, []string{"demo", "--walk", "change", "--dir", dir}); code != 0 {
		t.Fatalf("demo --walk change exited %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	text := out.String()
	t.Logf("\n%s", text)
	for _, line := range []string{
		"incident               [simulated]", "request, plan, review  [live]", "signed approval        [simulated]",
		"gate, apply, health    [live]", "second plan            [simulated]", "apply, health FAILS    [live]",
		"compensating rollback  [live]", "chain verified", "final: executed, rolled_back, reverted",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("output lacks %q", line)
		}
	}
	if strings.Contains(text, "FAILED") {
		t.Errorf("the walk reports a failure")
	}

	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(dir, "signoff.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	wss, err := s.ListWorkspaces(ctx)
	if err != nil || len(wss) != 1 {
		t.Fatalf("workspaces: %v %v", wss, err)
	}
	ws := wss[0].ID
	sys := signoff.SystemActor(ws)
	serverKey, err := keys.Load(filepath.Join(dir, "signoff.key"))
	if err != nil {
		t.Fatal(err)
	}
	pub := serverKey.Public().(ed25519.PublicKey)
	if res, err := s.VerifyLedger(ctx, ws, map[string]ed25519.PublicKey{keys.ID(pub): pub}); err != nil {
		t.Fatalf("ledger verify: %v", err)
	} else if res.Events == 0 {
		t.Fatal("empty ledger")
	}

	page, err := s.ListCases(ctx, ws, signoff.CaseFilter{Kind: signoff.KindChange, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Cases) != 3 {
		t.Fatalf("%d change cases, want 3: %+v", len(page.Cases), page.Cases)
	}
	// Honest badges: the requests, plans by a person, approvals and the
	// execute the walk plays are simulated; the planner agent, the
	// reviewer, the gate's execution and health checks are not. Each case
	// is named on the desk at the walk's address.
	var ids []string
	for _, c := range page.Cases {
		ids = append(ids, c.ID)
		if !regexp.MustCompile(`case +http://127\.0\.0\.1:\d+/cases/` + c.ID).MatchString(text) {
			t.Errorf("the walk does not give %s's desk URL", c.ID)
		}
	}
	badgesOpen(t, dir, ids).checkHonest(t, []string{"case.created", "approval.recorded", "approval.quorum"},
		[]string{"change.executed", "change.rolled_back", "change.review_note", "agent.call", "task.recorded", "change.requested"})

	byState := map[string]signoff.Case{}
	for _, c := range page.Cases {
		if _, dup := byState[c.State]; dup {
			t.Fatalf("two change cases are %s", c.State)
		}
		byState[c.State] = c
	}
	for _, st := range []string{workflow.ChangeReverted, workflow.ChangeRolledBack, workflow.ChangeExecuted} {
		if _, ok := byState[st]; !ok {
			t.Fatalf("no change case is %s; states: %v", st, byState)
		}
	}
	// The compensating change names the one it reverted, and back.
	orig, comp := byState[workflow.ChangeReverted], byState[workflow.ChangeExecuted]
	ol, err := s.GetChangeLoop(ctx, sys, orig.ID)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := s.GetChangeLoop(ctx, sys, comp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ol.State.RevertedBy != comp.ID || cl.State.RevertOf != orig.ID || !cl.State.Preapproved {
		t.Fatalf("reverted %s: reverted_by %q; compensating %s: revert_of %q, preapproved %v",
			orig.ID, ol.State.RevertedBy, comp.ID, cl.State.RevertOf, cl.State.Preapproved)
	}

	// Every receipt verifies under the server's key and says what its case
	// ended as.
	wantOutcome := map[string]struct{ kind, outcome string }{
		orig.ID:                               {signoff.ReceiptExecute, changedesk.OutcomeExecuted},
		byState[workflow.ChangeRolledBack].ID: {signoff.ReceiptExecute, changedesk.OutcomeRolledBack},
		comp.ID:                               {signoff.ReceiptRollback, changedesk.OutcomeExecuted},
	}
	_, other, _ := ed25519.GenerateKey(nil)
	for caseID, want := range wantOutcome {
		rs, err := s.ListReceipts(ctx, sys, caseID)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) != 1 {
			t.Fatalf("case %s has %d receipts, want 1", caseID, len(rs))
		}
		r := rs[0]
		b, err := changedesk.OpenReceipt(r, pub)
		if err != nil {
			t.Fatalf("receipt %s of %s does not verify under the server key: %v", r.ID, caseID, err)
		}
		if _, err := changedesk.OpenReceipt(r, other.Public().(ed25519.PublicKey)); err == nil {
			t.Errorf("receipt %s verifies under another key", r.ID)
		}
		if r.Kind != want.kind || b.Outcome != want.outcome || b.Case != caseID || len(b.GateChecks) != 11 {
			t.Errorf("receipt %s of %s: kind %s outcome %s case %s, %d gate checks; want %s %s", r.ID, caseID, r.Kind, b.Outcome, b.Case, len(b.GateChecks), want.kind, want.outcome)
		}
		switch caseID {
		case byState[workflow.ChangeRolledBack].ID:
			if b.Health.Passed || b.Restored == nil || b.Restored.Content != b.Before.Content {
				t.Errorf("the failed change's receipt: health passed %v, restored %+v, before %+v", b.Health.Passed, b.Restored, b.Before)
			}
		case comp.ID:
			if b.RevertOf != orig.ID || b.RestoredMatchesOriginal == nil || !*b.RestoredMatchesOriginal ||
				b.RestoredContentDigest == "" || b.RestoredContentDigest != b.OriginalContentDigest || !b.Preapproved || len(b.Approvals) != 0 {
				t.Errorf("the rollback receipt: revert_of %s, restored_matches_original %v, restored %s, original %s, preapproved %v, approvals %d",
					b.RevertOf, b.RestoredMatchesOriginal, b.RestoredContentDigest, b.OriginalContentDigest, b.Preapproved, len(b.Approvals))
			}
		case orig.ID:
			if !b.Health.Passed || len(b.Approvals) != 1 || b.Approvals[0].Via != "cli-signed-yes" {
				t.Errorf("the first change's receipt: health passed %v, approvals %+v", b.Health.Passed, b.Approvals)
			}
		}
	}

	// The flag ends where the incident left it (the compensating rollback
	// restores the first change's before-state), after exactly: the
	// incident, the disable, the second plan's write and its automatic
	// restore, and the compensation.
	projects, err := s.ListProjects(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	var shop string
	for _, p := range projects {
		if p.Name == "shoplite" {
			shop = p.ID
		}
	}
	f, err := s.GetFlag(ctx, sys, shop, demoFlagEnv, shoplite.CheckoutFlag)
	if err != nil {
		t.Fatal(err)
	}
	const writes = 1 + 1 + 2 + 1
	if string(f.Value) != "true" || f.Version != 1+writes {
		t.Fatalf("flag %s at version %d, want true at version %d (created, then %d writes)", f.Value, f.Version, 1+writes, writes)
	}
}
