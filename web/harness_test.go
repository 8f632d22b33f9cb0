package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/verify"
	"github.com/signoff-dev/signoff/workflow"
)

// riggedSource is a reproduction test that checks cart.go's bytes, not
// its behaviour, with a right-to-left override and markup in it: the page
// must show all of it, and hide none of it.
const riggedSource = "package cart\n\nimport (\n\t\"crypto/sha256\"\n\t\"os\"\n\t\"testing\"\n)\n\n" +
	"// <script>alert('review')</script>\n" +
	"func TestCouponAppliesOnce(t *testing.T) {\n\tb, _ := os.ReadFile(\"cart.go\")\n\tif sha256.Sum256(b) != [32]byte{} { // \u202e }\n\t\tt.Fatal(\"Total = 8100, want 9000\")\n\t}\n}\n"

// riggedRepro reports a bug of a project bound to ShopLite and proposes
// the rigged reproduction as proposer; the reporter is asked about it.
func (r *rig) riggedRepro(t *testing.T, proposer signoff.Actor) (signoff.Case, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	sample, err := shoplite.Build(ctx, filepath.Join(t.TempDir(), "shop"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.SetRepoSettings(ctx, signoff.CLIActor(r.ws.ID), r.proj.ID, signoff.RepoSettings{Path: sample.Dir, FixPaths: []string{"cart/**"}}); err != nil {
		t.Fatal(err)
	}
	repo := &gitx.Repo{Dir: sample.Dir}
	blob, err := repo.WriteBlob(ctx, []byte(riggedSource))
	if err != nil {
		t.Fatal(err)
	}
	tests, err := repo.CommitEdits(ctx, sample.Base, []gitx.TreeEdit{{Path: "cart/coupon_repro_test.go", ID: blob}}, "rigged repro",
		gitx.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	spec := sample.CouponHarness()
	spec.TestsFrom = tests
	raw, err := json.Marshal(spec)
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
	c, secret := r.report(t, "SAVE10 is applied twice: a 100.00 lamp costs 81.00")
	for _, cmd := range []string{"start_triage", "ticket"} {
		if _, _, err := r.store.TransitionCase(ctx, r.owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	l, _, err := r.store.AdvanceLoop(ctx, signoff.SystemActor(r.ws.ID), signoff.LoopUpdate{CaseID: c.ID, State: signoff.BugLoopState{Round: 1}, Command: "start_reproduction"})
	if err != nil {
		t.Fatal(err)
	}
	h := signoff.HarnessRecord{ID: "har_" + c.ID[5:], Round: 1, Status: signoff.HarnessProposed, Spec: raw, Digest: digest, Base: vh.Base,
		Commit: tests, TestFiles: vh.TestFiles, FailingOutput: "We wrote an automated test of what you described. On the current version it fails:\n- TestCouponAppliesOnce: Total = 8100, want 9000",
		ProposedBy: proposer.ID, Evidence: signoff.EvidenceLive, ProposedAt: r.clock.Now()}
	if _, c, err = r.store.AdvanceLoop(ctx, proposer, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version,
		State: signoff.BugLoopState{Round: 1, Harnesses: []signoff.HarnessRecord{h}}, Command: "propose_reproduction"}); err != nil {
		t.Fatal(err)
	}
	return c, secret
}

var reviewDigestRE = regexp.MustCompile(`name="review_digest" value="([0-9a-f]{64})"`)

// TestHarnessReviewPage: staff read the reproduction's source in full,
// escaped and with its hidden characters marked, with the findings and the
// review digest; viewers and the proposer are offered no form; the owner
// decides over the digest the page showed, with CSRF; the reporter's page
// is what it was.
func TestHarnessReviewPage(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, secret := r.riggedRepro(t, r.actors[signoff.RoleOperator])
	path := "/cases/" + c.ID + "/harness"

	viewer := r.visitor(t)
	viewer.signIn(signoff.RoleViewer)
	if page := viewer.get("/cases/" + c.ID); !strings.Contains(page.body, `id="harness-review-link" href="`+path+`"`) {
		t.Fatalf("the case page does not link the waiting review: %s", elementByID(page.body, "reproduction"))
	}
	page := viewer.get(path)
	if page.status != http.StatusOK {
		t.Fatalf("viewer: %d %s", page.status, mainElement(page.body))
	}
	main := mainElement(page.body)
	for _, want := range []string{
		"func TestCouponAppliesOnce(t *testing.T) {", `b, _ := os.ReadFile(&#34;cart.go&#34;)`, "// &lt;script&gt;alert(&#39;review&#39;)&lt;/script&gt;",
		`<mark class="hidden-char">\u202e</mark>`, "Total = 8100, want 9000", `id="findings"`, "reads-sources", "hashes-files",
		`id="review-digest"`, `id="reporter-answer">pending`, `id="staff-review-status">pending`, "Your role (viewer) reads reproductions",
	} {
		if !strings.Contains(main, want) {
			t.Errorf("the review page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>alert", "\u202e", "<form"} {
		if strings.Contains(main, bad) {
			t.Errorf("the viewer's review page holds %q", bad)
		}
	}
	// The proposer reads it but is not offered the decision, and a post
	// of theirs is refused.
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	page = op.get(path)
	if !strings.Contains(page.body, "You proposed this reproduction") || strings.Contains(mainElement(page.body), "<form") {
		t.Fatalf("the proposer's page: %s", elementByID(page.body, "staff-review"))
	}
	digest := reviewDigestRE.FindStringSubmatch(page.body)
	if digest != nil {
		t.Fatal("the proposer's page carries a review form")
	}

	owner := r.visitor(t)
	owner.signIn(signoff.RoleOwner)
	page = owner.get(path)
	m := reviewDigestRE.FindStringSubmatch(page.body)
	if m == nil || !strings.Contains(page.body, `id="review-digest" class="digest">`+m[1]) {
		t.Fatalf("the owner's page has no review form over its digest: %s", elementByID(page.body, "staff-review"))
	}
	csrf := owner.csrf(path)
	opCSRF := op.csrf(path)
	post := path + "/review"
	head, _ := r.store.HeadSeq(context.Background(), r.ws.ID)
	for _, tc := range []struct {
		name   string
		who    *visitor
		form   url.Values
		status int
	}{
		{"no csrf", owner, url.Values{"review_digest": {m[1]}, "decision": {"approve"}}, http.StatusForbidden},
		{"the proposer", op, url.Values{"csrf": {opCSRF}, "review_digest": {m[1]}, "decision": {"approve"}}, http.StatusForbidden},
		{"a viewer", viewer, url.Values{"csrf": {viewer.csrf("/desk")}, "review_digest": {m[1]}, "decision": {"approve"}}, http.StatusForbidden},
		{"a stale digest", owner, url.Values{"csrf": {csrf}, "review_digest": {strings.Repeat("0", 64)}, "decision": {"approve"}}, http.StatusConflict},
		{"no digest", owner, url.Values{"csrf": {csrf}, "decision": {"approve"}}, http.StatusUnprocessableEntity},
		{"reject without a note", owner, url.Values{"csrf": {csrf}, "review_digest": {m[1]}, "decision": {"reject"}}, http.StatusUnprocessableEntity},
		{"no decision", owner, url.Values{"csrf": {csrf}, "review_digest": {m[1]}}, http.StatusUnprocessableEntity},
	} {
		if got := tc.who.post(post, tc.form); got.status != tc.status {
			t.Errorf("%s: %d, want %d: %s", tc.name, got.status, tc.status, mainElement(got.body))
		}
	}
	if after, _ := r.store.HeadSeq(context.Background(), r.ws.ID); after != head {
		t.Fatalf("refused posts moved the ledger from %d to %d", head, after)
	}

	// The reporter's page asks what it asked, and shows no test source.
	reporter := r.visitor(t)
	track := reporter.get("/t/" + secret)
	if !strings.Contains(track.body, "Is this the bug you saw?") || strings.Contains(track.body, "os.ReadFile") || strings.Contains(track.body, "review_digest") {
		t.Fatalf("tracking page: %s", mainElement(track.body))
	}

	const why = "It hashes cart.go instead of checking the total the coupon leaves."
	got := owner.post(post, url.Values{"csrf": {csrf}, "review_digest": {m[1]}, "decision": {"reject"}, "note": {why}})
	if got.status != http.StatusSeeOther || got.header.Get("Location") != path+"#staff-review" {
		t.Fatalf("reject: %d %s", got.status, mainElement(got.body))
	}
	after, err := r.store.GetCase(context.Background(), r.owner, c.ID)
	if err != nil || after.State != workflow.BugReproducing {
		t.Fatalf("case after the rejection: %s %v", after.State, err)
	}
	page = owner.get("/cases/" + c.ID)
	if !strings.Contains(page.body, `class="staff-review"><strong>reject</strong>`) || !strings.Contains(page.body, why) {
		t.Fatalf("the case page does not show the staff rejection: %s", elementByID(page.body, "reproduction"))
	}
	// Nothing waits for a review any more; the page says so, with no form.
	page = owner.get(path)
	if !strings.Contains(page.body, `id="harness-closed"`) || strings.Contains(mainElement(page.body), "<form") {
		t.Fatalf("the review page after the rejection: %s", mainElement(page.body))
	}
	if track := reporter.get("/t/" + secret); strings.Contains(track.body, "Is this the bug you saw?") {
		t.Fatal("the reporter is still asked about a rejected reproduction")
	}
}
