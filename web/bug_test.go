package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/storetest"
	"github.com/signoff-dev/signoff/triage"
	"github.com/signoff-dev/signoff/verify"
)

// bugWithEvidence files a report and records, as the server would, a
// triage run, a reproduction and a verified candidate on it. Hostile text
// sits in every field a page shows.
func (r *rig) bugWithEvidence(t *testing.T) signoff.Case {
	t.Helper()
	ctx := context.Background()
	c, _ := r.report(t, "The basket total is wrong after removing an item")
	sys := signoff.SystemActor(r.ws.ID)
	st := crew.State{
		Query: triage.Query{Text: "basket total wrong"},
		Hits: []triage.Hit{
			{ID: "T-7", Title: "Basket total <script>alert(1)</script>", Status: "open", Score: 0.91, Strong: true, Why: []string{"title overlap"}},
			{ID: "T-2", Title: "Checkout slow", Score: 0.12},
		},
		Crashes: []triage.CrashAggregate{{Signature: "NullPointer@Basket.total", Events: 10, Users: 4,
			Versions: map[string]int{"2.4.1": 8, "2.4.0": 2}, Platforms: map[string]int{"Android 14": 10}, Score: 0.8, Matched: true}},
		Investigation: &triage.Investigation{Verdict: "new", Confidence: 0.85, Rationale: "no strong duplicate"},
		Assessment:    &triage.Assessment{Severity: "high", Component: "basket", Owner: "@shop", Rationale: "money", Evidence: map[string]any{"crash_users": 4}},
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.StartTriage(ctx, sys, c.ID, "item-1", b); err != nil {
		t.Fatal(err)
	}
	report, err := json.Marshal(verify.Report{Verdict: "VERIFIED", Reason: "the harness passes on the candidate", Runs: 3, Fingerprint: "f1a9" + strings.Repeat("0", 60),
		Stages: []verify.Stage{{Name: "base-fails", Outcome: "pass", Detail: "the harness fails on base as expected"},
			{Name: "run", Run: 1, Outcome: "pass", Detail: "all tests pass", Tests: []verify.TestOutcome{{Name: "TestBasketTotal", Kind: "harness", Outcome: "pass"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	now := r.clock.Now()
	loop := signoff.BugLoopState{Round: 1,
		Harnesses: []signoff.HarnessRecord{{ID: "hrn_1", Round: 1, Status: signoff.HarnessFrozen, Spec: json.RawMessage(`{"tests":["TestBasketTotal"]}`),
			Digest: "d1", Base: "base1", Commit: "c1", Branch: "signoff/repro", TestFiles: []string{"basket_test.go"},
			FailingOutput: "--- FAIL: TestBasketTotal\n    got 12, want 10 <b>bold</b>", ProposedBy: r.actors[signoff.RoleTriager].ID, Evidence: signoff.EvidenceAuthored, ProposedAt: now,
			ConfirmedAt: &now, FrozenAt: &now, StaffReview: &signoff.HarnessReview{HarnessID: "hrn_1", By: r.actors[signoff.RoleOperator].ID, Decision: signoff.HarnessApprove,
				Note: "checks the total <i>only</i>", ReviewDigest: "e1" + strings.Repeat("0", 62), At: now}}},
		Candidates: []signoff.Candidate{{ID: "cand_1", HarnessID: "hrn_1", Attempt: 1, Base: "base1", Commit: "fix1", Branch: "signoff/fix",
			Diff:    "diff --git a/basket.go b/basket.go\n--- a/basket.go\n+++ b/basket.go\n@@ -1,3 +1,3 @@\n func total() int {\n-\treturn sum + removed\n+\treturn sum\n }\n",
			Changed: []string{"basket.go"}, SubmittedBy: r.actors[signoff.RoleTriager].ID, SubmitterRole: signoff.RoleTriager, Evidence: signoff.EvidenceReplayed,
			Status: signoff.CandidateVerified, Verdict: "VERIFIED", Reason: "the harness passes on the candidate", Report: report,
			Fingerprint: "f1a9" + strings.Repeat("0", 60), SubmittedAt: now}},
	}
	if _, _, err := r.store.AdvanceLoop(ctx, sys, signoff.LoopUpdate{CaseID: c.ID, State: loop}); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCasePageBugEvidence(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c := r.bugWithEvidence(t)
	for _, role := range []signoff.Role{signoff.RoleOperator, signoff.RoleViewer} {
		b := r.visitor(t)
		b.signIn(role)
		got := b.get("/cases/" + c.ID)
		if got.status != http.StatusOK {
			t.Fatalf("%s: %d %s", role, got.status, got.body)
		}
		body := got.body
		for _, want := range []string{
			// triage: hits with scores, crash aggregates with version share
			`id="triage-hits"`, "0.910", "STRONG", "T-7", "NullPointer@Basket.total", "2.4.1 80% (8)", "2.4.0 20% (2)", "telemetry-confirmed",
			`id="triage-severity">high`,
			// the reproduction with its failing output and evidence type
			"Harness <code>hrn_1</code>", "--- FAIL: TestBasketTotal", `<span class="badge evidence-authored">authored</span> Harness`,
			// who approved its test, and the link to its source
			`class="staff-review"><strong>approve</strong> by <code>` + r.actors[signoff.RoleOperator].ID, "e1" + strings.Repeat("0", 62),
			"checks the total &lt;i&gt;only&lt;/i&gt;", `id="harness-link" href="/cases/` + c.ID + `/harness"`,
			// the candidate: side by side, verdict table, fingerprint
			`<span class="badge evidence-replayed">replayed</span> Candidate`, `class="row-change"`, "return sum + removed", "basket.go</code> <span class=\"add-count\">+1</span>",
			`class="verdict-table"`, "base-fails", "TestBasketTotal</code> (harness): pass", "f1a9" + strings.Repeat("0", 60),
		} {
			if !strings.Contains(body, want) {
				t.Errorf("%s: case page lacks %q", role, want)
			}
		}
		for _, bad := range []string{"<script>alert(1)", "<b>bold</b>", "<i>only</i>"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: %q is not escaped", role, bad)
			}
		}
	}
}

// decisionOn opens a pending decision on c as the triager would, on its
// open task there.
func (r *rig) decisionOn(t *testing.T, c signoff.Case) signoff.Decision {
	t.Helper()
	storetest.GiveTask(t, r.store, r.owner, r.actors[signoff.RoleTriager], c.ID)
	d, err := r.store.RequestDecision(context.Background(), r.actors[signoff.RoleTriager], c.ID, "release_window",
		json.RawMessage(`{"title":"Basket total wrong","severity":"high"}`), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestWebDecision(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := r.report(t, "The basket total is wrong")
	d := r.decisionOn(t, c)
	path := "/cases/" + c.ID + "/decisions/" + d.ID

	viewer := r.visitor(t)
	viewer.signIn(signoff.RoleViewer)
	page := viewer.get("/cases/" + c.ID)
	if !strings.Contains(page.body, d.SubjectDigest) || strings.Contains(page.body, `value="approve"`) || strings.Contains(page.body, "action=\""+path) {
		t.Fatalf("viewer's page shows the decision form (or not the digest): %s", elementByID(page.body, "decisions"))
	}
	vcsrf := viewer.csrf("/desk")
	if got := viewer.post(path, url.Values{"csrf": {vcsrf}, "subject_digest": {d.SubjectDigest}, "answer": {"approve"}}); got.status != http.StatusForbidden {
		t.Fatalf("viewer approve: %d, want 403", got.status)
	}

	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	page = op.get("/cases/" + c.ID)
	if !strings.Contains(page.body, `value="approve"`) || !strings.Contains(page.body, `name="subject_digest" value="`+d.SubjectDigest+`"`) {
		t.Fatalf("operator's page has no decision form: %s", elementByID(page.body, "decisions"))
	}
	csrf := op.csrf("/cases/" + c.ID)
	cases := []struct {
		name   string
		form   url.Values
		status int
	}{
		{"no csrf", url.Values{"subject_digest": {d.SubjectDigest}, "answer": {"approve"}}, http.StatusForbidden},
		{"another digest", url.Values{"csrf": {csrf}, "subject_digest": {strings.Repeat("0", 64)}, "answer": {"approve"}}, http.StatusConflict},
		{"no digest", url.Values{"csrf": {csrf}, "answer": {"approve"}}, http.StatusUnprocessableEntity},
		{"reject without a reason", url.Values{"csrf": {csrf}, "subject_digest": {d.SubjectDigest}, "answer": {"reject"}}, http.StatusUnprocessableEntity},
		{"no answer", url.Values{"csrf": {csrf}, "subject_digest": {d.SubjectDigest}}, http.StatusUnprocessableEntity},
	}
	for _, tc := range cases {
		if got := op.post(path, tc.form); got.status != tc.status {
			t.Errorf("%s: %d, want %d: %s", tc.name, got.status, tc.status, mainElement(got.body))
		}
	}
	if got, _ := r.store.GetDecision(context.Background(), r.owner, d.ID); got.Status != signoff.DecisionPending {
		t.Fatalf("refused posts changed the decision: %s", got.Status)
	}
	got := op.post(path, url.Values{"csrf": {csrf}, "subject_digest": {d.SubjectDigest}, "answer": {"approve"}, "reason": {"looks right"}})
	if got.status != http.StatusSeeOther {
		t.Fatalf("approve: %d %s", got.status, mainElement(got.body))
	}
	after, err := r.store.GetDecision(context.Background(), r.owner, d.ID)
	if err != nil || after.Status != signoff.DecisionApproved || after.DecidedBy != r.actors[signoff.RoleOperator].ID || after.Reason != "looks right" {
		t.Fatalf("decision after approve: %+v %v", after, err)
	}
	if page = op.get("/cases/" + c.ID); strings.Contains(page.body, `value="approve"`) {
		t.Fatal("a decided decision still offers its form")
	}
	// A second answer is refused: the decision is settled.
	if got := op.post(path, url.Values{"csrf": {csrf}, "subject_digest": {d.SubjectDigest}, "answer": {"reject"}, "reason": {"no"}}); got.status != http.StatusConflict {
		t.Fatalf("second answer: %d, want 409", got.status)
	}
	// Another case's decision is not reachable through this case's path.
	other, _ := r.report(t, "Another report")
	od := r.decisionOn(t, other)
	if got := op.post("/cases/"+c.ID+"/decisions/"+od.ID, url.Values{"csrf": {csrf}, "subject_digest": {od.SubjectDigest}, "answer": {"approve"}}); got.status != http.StatusNotFound {
		t.Fatalf("other case's decision: %d, want 404", got.status)
	}
}
