package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/storetest"
	"github.com/signoff-dev/signoff/verify"
)

// reproducedCase is a bug of a project bound to ShopLite whose coupon
// reproduction, proposed by the reproducer agent, the reporter is asked
// about.
func (w *workspace) reproducedCase(t *testing.T, reproducer signoff.Actor) signoff.Case {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	sample, err := shoplite.Build(ctx, filepath.Join(t.TempDir(), "shop"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.store.SetRepoSettings(ctx, signoff.CLIActor(w.ws.ID), w.proj.ID, signoff.RepoSettings{Path: sample.Dir, FixPaths: []string{"cart/**"}}); err != nil {
		t.Fatal(err)
	}
	reporter := w.actor(t, "rita", signoff.RoleReporter)
	c := w.newCase(t, signoff.KindBug, reporter.ID)
	w.move(t, c, "start_triage", "ticket")
	raw, err := json.Marshal(sample.CouponHarness())
	if err != nil {
		t.Fatal(err)
	}
	vh, err := verify.ParseHarness(raw)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := verify.HarnessDigest(ctx, sample.Dir, vh)
	if err != nil {
		t.Fatal(err)
	}
	sys := signoff.SystemActor(w.ws.ID)
	l, _, err := w.store.AdvanceLoop(ctx, sys, signoff.LoopUpdate{CaseID: c.ID, State: signoff.BugLoopState{Round: 1}, Command: "start_reproduction"})
	if err != nil {
		t.Fatal(err)
	}
	h := signoff.HarnessRecord{ID: signoff.NewID(signoff.PrefixHarness), Round: 1, Status: signoff.HarnessProposed, Spec: raw, Digest: digest,
		Base: vh.Base, Commit: vh.TestsFrom, TestFiles: vh.TestFiles, FailingOutput: "- TestCouponAppliesOnce: got 8100, want 9000",
		ProposedBy: reproducer.ID, Evidence: signoff.EvidenceAuthored, ProposedAt: time.Now().UTC()}
	storetest.GiveTask(t, w.store, w.owner, reproducer, c.ID) // the reproducer proposes on its task
	_, c, err = w.store.AdvanceLoop(ctx, reproducer, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version,
		State: signoff.BugLoopState{Round: 1, Harnesses: []signoff.HarnessRecord{h}}, Command: "propose_reproduction"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHarnessReviewRoutes: people read a reproduction's test source in
// full and decide on it over its review digest; agents and reporters do
// neither, a stale digest and a rejection without a reason are refused
// with a problem, and every refusal leaves the ledger where it was.
func TestHarnessReviewRoutes(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serveDesk(t, store)
	reproducer := w.actor(t, "repro-bot", signoff.RoleReproducer)
	c := w.reproducedCase(t, reproducer)
	path := "/api/v1/cases/" + c.ID + "/harness"
	tokens := map[string]string{"owner": w.ownerToken}
	for _, role := range []signoff.Role{signoff.RoleOperator, signoff.RoleViewer, signoff.RoleReporter} {
		tokens[string(role)] = w.token(t, w.actor(t, string(role)+" one", role))
	}
	for _, role := range signoff.AgentRoles {
		tokens[string(role)] = w.token(t, w.actor(t, string(role)+" bot", role))
	}

	got := do(t, srv, request{method: "GET", path: path, token: tokens["viewer"]})
	if got.status != http.StatusOK {
		t.Fatalf("GET as a viewer: %d %s", got.status, got.body)
	}
	var v bugdesk.HarnessView
	if err := json.Unmarshal(got.body, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.TestFiles) != 1 || !strings.Contains(v.TestFiles[0].Content, "func TestCouponAppliesOnce") || v.ExpectedFailure != "8100" ||
		v.ReviewDigest == "" || v.ReporterAnswer != "pending" || v.StaffStatus != "pending" || !v.Reviewable || v.Findings == nil {
		t.Fatalf("view = %s", got.body)
	}
	if d, _ := v.Subject().Digest(); d != v.ReviewDigest {
		t.Fatalf("the view's review digest %s is not its subject's %s", v.ReviewDigest, d)
	}
	body := func(digest, decision, note string) string {
		b, _ := json.Marshal(bugdesk.HarnessDecision{ReviewDigest: digest, Decision: decision, Note: note})
		return string(b)
	}
	head := w.head(t)
	for _, tc := range []struct {
		who, method, body string
		status            int
		code              string
	}{
		{"reporter", "GET", "", 403, signoff.EFORBIDDEN},
		{"reproducer", "GET", "", 403, signoff.EFORBIDDEN},
		{"fixer", "GET", "", 403, signoff.EFORBIDDEN},
		{"viewer", "POST", body(v.ReviewDigest, "approve", ""), 403, signoff.EFORBIDDEN},
		{"reporter", "POST", body(v.ReviewDigest, "approve", ""), 403, signoff.EFORBIDDEN},
		{"owner", "POST", body(strings.Repeat("0", 64), "approve", ""), 409, signoff.ECONFLICT},
		{"owner", "POST", body(v.ReviewDigest, "reject", ""), 422, signoff.EINVALID},
		{"owner", "POST", body(v.ReviewDigest, "ok", ""), 422, signoff.EINVALID},
		{"owner", "POST", `{"review_digest":"` + v.ReviewDigest + `","decision":"approve","extra":1}`, 422, signoff.EINVALID},
	} {
		rq := request{method: tc.method, path: path, token: tokens[tc.who], body: tc.body}
		if tc.method == "POST" {
			rq.path += "/review"
		}
		got := do(t, srv, rq)
		if got.status != tc.status {
			t.Fatalf("%s %s as %s: %d, want %d (%s)", rq.method, rq.path, tc.who, got.status, tc.status, got.body)
		}
		if p := got.problem(t); p.Code != tc.code {
			t.Fatalf("%s %s as %s: code %s, want %s", rq.method, rq.path, tc.who, p.Code, tc.code)
		}
	}
	// Every agent role is refused the decision, whatever it quotes.
	for _, role := range signoff.AgentRoles {
		got := do(t, srv, request{method: "POST", path: path + "/review", token: tokens[string(role)], body: body(v.ReviewDigest, "approve", "")})
		if got.status != http.StatusForbidden {
			t.Fatalf("POST review as %s: %d (%s)", role, got.status, got.body)
		}
	}
	if h := w.head(t); h != head {
		t.Fatalf("refused requests moved the ledger from %d to %d", head, h)
	}

	got = do(t, srv, request{method: "POST", path: path + "/review", token: tokens["operator"], body: body(v.ReviewDigest, "approve", "reads the total only")})
	if got.status != http.StatusOK {
		t.Fatalf("approve as the operator: %d %s", got.status, got.body)
	}
	var out struct {
		Harness bugdesk.HarnessView `json:"harness"`
		Case    signoff.Case        `json:"case"`
	}
	if err := json.Unmarshal(got.body, &out); err != nil {
		t.Fatal(err)
	}
	if out.Case.State != "awaiting_reporter_repro" || out.Harness.StaffStatus != "approved" || out.Harness.StaffReview == nil ||
		out.Harness.StaffReview.ReviewDigest != v.ReviewDigest || out.Harness.Reviewable {
		t.Fatalf("after the approval: %s", got.body)
	}
	// Reviewed once: the next decision is a conflict naming the state.
	got = do(t, srv, request{method: "POST", path: path + "/review", token: w.ownerToken, body: body(v.ReviewDigest, "reject", "no")})
	if got.status != http.StatusConflict || got.problem(t).CurrentState != "awaiting_reporter_repro" {
		t.Fatalf("a second review: %d %s", got.status, got.body)
	}
}
