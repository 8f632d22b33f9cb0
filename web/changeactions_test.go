package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/workflow"
)

// changeActionsSetup gives the rig's project the flag checkout_v2 (on, in
// prod), a live app to health-check and a policy whose approver is the
// rig's operator, as changeAwaitingApproval does, without a request.
func changeActionsSetup(t *testing.T, r *rig) {
	t.Helper()
	ctx := context.Background()
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("order total 9000")) }))
	t.Cleanup(app.Close)
	if _, err := r.store.CreateFlag(ctx, r.owner, r.proj.ID, "prod", "checkout_v2", signoff.FlagBoolean, json.RawMessage("true")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.SetRepoSettings(ctx, signoff.CLIActor(r.ws.ID), r.proj.ID, signoff.RepoSettings{Path: t.TempDir(), LiveURL: app.URL,
		Smoke: []signoff.SmokeCheck{{Name: "checkout", Method: "GET", Path: "/checkout", ExpectStatus: 200, ExpectBody: "total"}}}); err != nil {
		t.Fatal(err)
	}
	policy := `allowed_targets: ["flag:prod/*"]
environments: [prod]
approvals:
  required: 1
  group: [` + r.actors[signoff.RoleOperator].ID + `]
windows:
  - days: [mon, tue, wed, thu, fri, sat, sun]
    from: "00:00"
    to: "24:00"
`
	if _, err := r.store.SetChangePolicy(ctx, r.owner, policy, 0, change.PolicyDigest); err != nil {
		t.Fatal(err)
	}
}

// changeActionsApprove signs the case's current plan as the rig's
// operator would with signoff approve, on their machine.
func changeActionsApprove(t *testing.T, r *rig, caseID string) {
	t.Helper()
	ctx := context.Background()
	op := r.actors[signoff.RoleOperator]
	cd, err := r.change.Card(ctx, op, caseID)
	if err != nil {
		t.Fatal(err)
	}
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pemKey, err := keys.EncodePublic(pub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.RegisterKey(ctx, op, string(pemKey)); err != nil {
		t.Fatal(err)
	}
	env, err := approval.Sign(approval.NewStatement(caseID, cd.SubjectDigest, approval.Approve, cd.PolicyDigest, op.ID, r.clock.Now(), cd.Policy.TTL()), priv)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(env)
	if _, c, err := r.change.Approve(ctx, op, caseID, raw, "cli-signed", ""); err != nil || c.State != workflow.ChangeApproved {
		t.Fatalf("approve %s: %v (%s)", caseID, err, c.State)
	}
}

var caseLocationRE = regexp.MustCompile(`^/cases/(case_[0-9a-z]+)#`)

// formValue returns the value of the hidden input name in the element.
func formValue(el, name string) string {
	m := regexp.MustCompile(`name="` + name + `" value="([^"]*)"`).FindStringSubmatch(el)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// TestChangeActionsInBrowser: the owner requests a change on its page
// (a short reason is refused on the form, what was typed kept), the
// builtin planner drafts it, the case page shows the plan in words;
// executing it before it is approved is refused in words and applies
// nothing; once signed, a post over another plan is refused, and the
// execution through the gate applies it. A request the builtin planner
// cannot read is planned by hand (a value that is not JSON is refused on
// the form).
func TestChangeActionsInBrowser(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	changeActionsSetup(t, r)
	ctx := context.Background()
	// The owner asks; the operator, the policy's approver, signs.
	op := r.visitor(t)
	op.signIn(signoff.RoleOwner)
	page := op.get("/changes/new")
	if page.status != http.StatusOK || !strings.Contains(page.body, `id="change-new-form"`) || !strings.Contains(page.body, `<option value="`+r.proj.ID+`" selected>shoplite</option>`) {
		t.Fatalf("request page: %d %s", page.status, textOf(mainElement(page.body)))
	}
	checkPage(t, "request page", page.body)
	csrf := formValue(page.body, "csrf")

	got := op.post("/changes/new", url.Values{"csrf": {csrf}, "project": {r.proj.ID}, "reason": {"too <b>short"}, "builtin": {"yes"}})
	if got.status != http.StatusUnprocessableEntity || !strings.Contains(got.body, `id="change-new-refused"`) || !strings.Contains(got.body, "too &lt;b&gt;short</textarea>") {
		t.Fatalf("short reason: %d %s", got.status, textOf(mainElement(got.body)))
	}
	got = op.post("/changes/new", url.Values{"csrf": {csrf}, "project": {r.proj.ID},
		"reason": {"Disable checkout_v2 in prod: checkout answers 500 since the v2 payment flow went live"}, "builtin": {"yes"}})
	m := caseLocationRE.FindStringSubmatch(got.header.Get("Location"))
	if got.status != http.StatusSeeOther || m == nil {
		t.Fatalf("request: %d %q %s", got.status, got.header.Get("Location"), textOf(mainElement(got.body)))
	}
	id := m[1]
	c, err := r.store.GetCase(ctx, r.owner, id)
	if err != nil || c.State != workflow.ChangeAwaitingApproval || c.CreatedBy != r.owner.ID {
		t.Fatalf("requested case: %+v %v", c, err)
	}
	page = op.get("/cases/" + id)
	checkPage(t, "change case", page.body)
	if s := textOf(elementByID(page.body, "plan-summary")); s != "prod · checkout_v2: true → false" {
		t.Errorf("plan in words: %q", s)
	}
	if v := textOf(elementByID(page.body, "review-verdict")); !strings.Contains(v, "The policy allows this plan: all") {
		t.Errorf("review in words: %q", v)
	}
	actions := elementByID(page.body, "change-actions")
	if strings.Contains(actions, `id="execute-form"`) || !strings.Contains(actions, `id="plan-builtin-form"`) {
		t.Errorf("a plan waiting for approval: execute offered or no re-plan: %s", textOf(actions))
	}
	planID := formValue(actions, "plan_id")

	// Not approved: the desk refuses, in words, on the page.
	got = op.post("/cases/"+id+"/execute", url.Values{"csrf": {csrf}, "plan_id": {planID}})
	if got.status != http.StatusConflict || !strings.Contains(textOf(elementByID(got.body, "change-refused")), "no approved plan to execute") {
		t.Fatalf("execute unapproved: %d %s", got.status, textOf(elementByID(got.body, "change-actions")))
	}
	if rs, _ := r.store.ListReceipts(ctx, r.owner, id); len(rs) != 0 {
		t.Fatalf("an unapproved execution left %d receipts", len(rs))
	}

	changeActionsApprove(t, r, id)
	page = op.get("/cases/" + id)
	if !strings.Contains(elementByID(page.body, "change-actions"), `id="execute-form"`) {
		t.Fatalf("an approved change offers no execution: %s", textOf(elementByID(page.body, "change-actions")))
	}
	if got := op.post("/cases/"+id+"/execute", url.Values{"csrf": {csrf}, "plan_id": {"plan_0000000000000000000000000"}}); got.status != http.StatusConflict ||
		!strings.Contains(got.body, "The plan changed since your page showed it") {
		t.Fatalf("execute over another plan: %d", got.status)
	}
	got = op.post("/cases/"+id+"/execute", url.Values{"csrf": {csrf}, "plan_id": {planID}})
	if got.status != http.StatusSeeOther {
		t.Fatalf("execute: %d %s", got.status, textOf(elementByID(got.body, "change-actions")))
	}
	if cur, _ := r.store.GetCase(ctx, r.owner, id); cur.State != workflow.ChangeExecuted {
		t.Fatalf("after executing: %s", cur.State)
	}
	if f, _ := r.store.GetFlag(ctx, r.owner, r.proj.ID, "prod", "checkout_v2"); string(f.Value) != "false" {
		t.Fatalf("flag after executing: %s", f.Value)
	}

	// By hand: the builtin planner cannot read this request.
	got = op.post("/changes/new", url.Values{"csrf": {csrf}, "project": {r.proj.ID}, "reason": {"Turn the new checkout back on for everyone once payments recover"}})
	m = caseLocationRE.FindStringSubmatch(got.header.Get("Location"))
	if m == nil {
		t.Fatalf("second request: %d %s", got.status, textOf(mainElement(got.body)))
	}
	hand := m[1]
	page = op.get("/cases/" + hand)
	if !strings.Contains(page.body, `id="planner-failed"`) || !strings.Contains(page.body, `id="plan-hand-form"`) {
		t.Fatalf("a request the planner cannot read: %s", textOf(elementByID(page.body, "change-actions")))
	}
	form := url.Values{"csrf": {csrf}, "plan_id": {""}, "mode": {"hand"}, "target": {"flag:prod/checkout_v2"}, "value": {"on"}}
	got = op.post("/cases/"+hand+"/plan", form)
	if got.status != http.StatusUnprocessableEntity || !strings.Contains(textOf(elementByID(got.body, "change-refused")), "write it as JSON") ||
		!strings.Contains(elementByID(got.body, "plan-value"), `value="on"`) {
		t.Fatalf("a value that is not JSON: %d %s", got.status, textOf(elementByID(got.body, "change-actions")))
	}
	form.Set("value", "true")
	if got = op.post("/cases/"+hand+"/plan", form); got.status != http.StatusSeeOther {
		t.Fatalf("plan by hand: %d %s", got.status, textOf(elementByID(got.body, "change-actions")))
	}
	page = op.get("/cases/" + hand)
	if s := textOf(elementByID(page.body, "plan-summary")); s != "prod · checkout_v2: false → true" {
		t.Errorf("hand plan in words: %q", s)
	}
	if via := textOf(elementByID(page.body, "plan-via")); via != "human" {
		t.Errorf("hand plan via %q", via)
	}
}

// TestChangeActionsGateRefuses: an approved change whose flag was changed
// after the plan was made is refused by the gate when executed from the
// page: the refusal in words, nothing applied, the case drifted.
func TestChangeActionsGateRefuses(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := r.changeAwaitingApproval(t)
	changeActionsApprove(t, r, c.ID)
	ctx := context.Background()
	f, err := r.store.GetFlag(ctx, r.owner, r.proj.ID, "prod", "checkout_v2")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.store.SetFlag(ctx, signoff.CLIActor(r.ws.ID), signoff.FlagWrite{ProjectID: r.proj.ID, Env: "prod", Key: "checkout_v2",
		Value: json.RawMessage("false"), ExpectedVersion: f.Version, Reason: "someone else, outside the desk"}); err != nil {
		t.Fatal(err)
	}
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	page := op.get("/cases/" + c.ID)
	actions := elementByID(page.body, "change-actions")
	got := op.post("/cases/"+c.ID+"/execute", url.Values{"csrf": {formValue(actions, "csrf")}, "plan_id": {formValue(actions, "plan_id")}})
	refused := textOf(elementByID(got.body, "change-refused"))
	if got.status != http.StatusConflict || !strings.Contains(refused, "The gate refused to run it: the target changed since the plan was made (before_state") {
		t.Fatalf("execute a drifted change: %d %q", got.status, refused)
	}
	if rs, _ := r.store.ListReceipts(ctx, r.owner, c.ID); len(rs) != 0 {
		t.Fatalf("a refused execution left %d receipts", len(rs))
	}
	if cur, _ := r.store.GetCase(ctx, r.owner, c.ID); cur.State != workflow.ChangeDrifted {
		t.Fatalf("case after the gate's refusal: %s", cur.State)
	}
}

// TestChangeActionsViewer: a viewer is offered no change form, and the
// desk refuses every change post a viewer makes anyway (request, plan,
// execute, roll back): nothing is opened, planned or applied.
func TestChangeActionsViewer(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := r.changeAwaitingApproval(t)
	changeActionsApprove(t, r, c.ID)
	ctx := context.Background()
	viewer := r.visitor(t)
	viewer.signIn(signoff.RoleViewer)
	page := viewer.get("/cases/" + c.ID)
	if n := strings.Count(mainElement(page.body), "<form"); n != 0 {
		t.Fatalf("a viewer's change page has %d forms", n)
	}
	if p := viewer.get("/changes/new"); strings.Contains(p.body, "<form method=\"post\" action=\"/changes/new\"") || !strings.Contains(p.body, `id="change-new-note"`) {
		t.Fatalf("a viewer is offered the request form")
	}
	before, _ := r.store.GetChangeLoop(ctx, r.owner, c.ID)
	casesBefore, _ := r.store.ListCases(ctx, r.ws.ID, signoff.CaseFilter{Limit: 100})
	csrf := viewer.csrf("/desk")
	for _, p := range []struct {
		path string
		form url.Values
	}{
		{"/changes/new", url.Values{"project": {r.proj.ID}, "reason": {"Disable checkout_v2 in prod: a viewer should never open this"}, "builtin": {"yes"}}},
		{"/cases/" + c.ID + "/plan", url.Values{"plan_id": {before.State.PlanID}, "mode": {"builtin"}}},
		{"/cases/" + c.ID + "/plan", url.Values{"plan_id": {before.State.PlanID}, "mode": {"hand"}, "target": {"flag:prod/checkout_v2"}, "value": {"false"}}},
		{"/cases/" + c.ID + "/execute", url.Values{"plan_id": {before.State.PlanID}}},
		{"/cases/" + c.ID + "/rollback", url.Values{"reason": {"a viewer should never roll anything back"}}},
	} {
		p.form.Set("csrf", csrf)
		if got := viewer.post(p.path, p.form); got.status != http.StatusForbidden {
			t.Errorf("viewer %s %v: %d, want 403", p.path, p.form.Get("mode"), got.status)
		}
	}
	after, _ := r.store.GetChangeLoop(ctx, r.owner, c.ID)
	casesAfter, _ := r.store.ListCases(ctx, r.ws.ID, signoff.CaseFilter{Limit: 100})
	if after.State.PlanID != before.State.PlanID || len(casesAfter.Cases) != len(casesBefore.Cases) {
		t.Fatalf("a viewer's posts changed something: plan %s → %s, %d → %d cases", before.State.PlanID, after.State.PlanID, len(casesBefore.Cases), len(casesAfter.Cases))
	}
	if cur, _ := r.store.GetCase(ctx, r.owner, c.ID); cur.State != workflow.ChangeApproved {
		t.Fatalf("case after a viewer's posts: %s", cur.State)
	}
	// Without the CSRF token, even the operator's execution is refused.
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	if got := op.post("/cases/"+c.ID+"/execute", url.Values{"plan_id": {before.State.PlanID}}); got.status != http.StatusForbidden {
		t.Fatalf("execute without csrf: %d", got.status)
	}
}
