package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/workflow"
)

// textOf returns the text inside an element from elementByID, tags
// removed and entities decoded.
func textOf(el string) string {
	return html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(el, ""))
}

// executedChange approves the plan of a change awaiting approval as the
// rig's operator (the policy's approver), signing on "their machine" as
// signoff approve does, and executes it through the desk.
func (r *rig) executedChange(t *testing.T) (signoff.Case, changedesk.Card, changedesk.Execution) {
	t.Helper()
	ctx := context.Background()
	c, cd := r.changeAwaitingApproval(t)
	op := r.actors[signoff.RoleOperator]
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
	st := approval.NewStatement(c.ID, cd.SubjectDigest, approval.Approve, cd.PolicyDigest, op.ID, r.clock.Now(), cd.Policy.TTL())
	env, err := approval.Sign(st, priv)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if _, c, err = r.change.Approve(ctx, op, c.ID, raw, "cli-signed", ""); err != nil {
		t.Fatal(err)
	} else if c.State != workflow.ChangeApproved {
		t.Fatalf("after approval: %s", c.State)
	}
	x, err := r.change.Execute(ctx, op, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if x.Outcome != changedesk.OutcomeExecuted || x.Case.State != workflow.ChangeExecuted {
		t.Fatalf("execution: outcome %s, case %s", x.Outcome, x.Case.State)
	}
	return x.Case, cd, x
}

var controlRE = regexp.MustCompile(`<(input|select|textarea)\b[^>]*>`)

// checkPage fails on inline style or script and on a form control
// without a label.
func checkPage(t *testing.T, who, body string) {
	t.Helper()
	if strings.Contains(body, " style=") || strings.Contains(body, "<style") || regexp.MustCompile(`<script>|<script [^>]*>[^<]`).MatchString(body) {
		t.Errorf("%s: inline style or script on the page", who)
	}
	for _, tag := range controlRE.FindAllString(body, -1) {
		if strings.Contains(tag, `type="hidden"`) {
			continue
		}
		m := idRE.FindStringSubmatch(tag)
		if m == nil || !strings.Contains(body, `<label for="`+m[1]+`"`) {
			t.Errorf("%s: control without a label: %s", who, tag)
		}
	}
}

// TestChangePageAwaitingApproval: the case page of a change waiting for
// approval shows the complete plan, byte for byte as its digest covers
// it, its digest, proposer and via, and the policy's review rule by rule;
// nothing is executed and there is no rollback to offer.
func TestChangePageAwaitingApproval(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, cd := r.changeAwaitingApproval(t)
	ctx := context.Background()
	plans, err := r.store.ListPlans(ctx, r.owner, c.ID)
	if err != nil || len(plans) != 1 {
		t.Fatalf("plans %v %v", plans, err)
	}
	plan := plans[0]
	var review change.Result
	if err := json.Unmarshal(cd.Review, &review); err != nil || len(review.Rules) == 0 {
		t.Fatalf("review %s: %v", cd.Review, err)
	}
	for _, role := range []signoff.Role{signoff.RoleViewer, signoff.RoleOperator, signoff.RoleOwner} {
		b := r.visitor(t)
		b.signIn(role)
		got := b.get("/cases/" + c.ID)
		if got.status != http.StatusOK {
			t.Fatalf("%s: %d %s", role, got.status, got.body)
		}
		if !strings.Contains(got.body, `id="change"`) {
			t.Fatalf("%s: no change section in %s", role, mainElement(got.body))
		}
		if d := textOf(elementByID(got.body, "plan-digest")); d != cd.SubjectDigest || d != plan.Digest {
			t.Errorf("%s: plan digest %q, want %s", role, d, cd.SubjectDigest)
		}
		// Untruncated: the exact stored bytes, and every field indented.
		if got := textOf(elementByID(got.body, "plan-canonical")); got != string(plan.Body) {
			t.Errorf("%s: canonical plan\n%s\nwant\n%s", role, got, plan.Body)
		}
		pj := textOf(elementByID(got.body, "plan-json"))
		var shown, stored map[string]any
		if err := json.Unmarshal([]byte(pj), &shown); err != nil {
			t.Fatalf("%s: plan JSON does not parse: %v\n%s", role, err, pj)
		}
		if err := json.Unmarshal(plan.Body, &stored); err != nil {
			t.Fatal(err)
		}
		if a, b := mustJSON(t, shown), mustJSON(t, stored); a != b {
			t.Errorf("%s: plan JSON %s, want %s", role, a, b)
		}
		for _, want := range []string{"flag:prod/checkout_v2", "before_state_digest", "health_check", "rollback", "expires_at"} {
			if !strings.Contains(pj, want) {
				t.Errorf("%s: plan JSON lacks %s", role, want)
			}
		}
		if p := textOf(elementByID(got.body, "plan-proposer")); p != plan.Proposer || p == "" {
			t.Errorf("%s: proposer %q, want %s", role, p, plan.Proposer)
		}
		if v := textOf(elementByID(got.body, "plan-via")); v != plan.Via {
			t.Errorf("%s: via %q, want %s", role, v, plan.Via)
		}
		rv := elementByID(got.body, "review")
		for _, rr := range review.Rules {
			row := "<td>" + html.EscapeString(rr.Rule) + "</td><td>" + map[bool]string{true: "pass", false: "fail"}[rr.OK] + "</td>"
			if !strings.Contains(rv, row) {
				t.Errorf("%s: review lacks %s in %s", role, row, rv)
			}
		}
		if !strings.Contains(textOf(rv), cd.PolicyDigest) {
			t.Errorf("%s: review does not name policy digest %s", role, cd.PolicyDigest)
		}
		if !strings.Contains(elementByID(got.body, "execution"), "no receipt") || !strings.Contains(elementByID(got.body, "receipts"), "No receipts") {
			t.Errorf("%s: an unexecuted change shows an execution", role)
		}
		if strings.Contains(got.body, `id="rollback-form"`) || strings.Contains(got.body, `action="/cases/`+c.ID+`/rollback"`) {
			t.Errorf("%s: rollback offered before execution", role)
		}
		checkPage(t, string(role), got.body)
	}
	// Planned again: the new plan is shown in full, the old one listed
	// with its digest and time.
	r.clock.Advance(time.Minute)
	if _, _, err := r.change.Plan(ctx, r.owner, c.ID); err != nil {
		t.Fatal(err)
	}
	b := r.visitor(t)
	b.signIn(signoff.RoleViewer)
	got := b.get("/cases/" + c.ID)
	if d := textOf(elementByID(got.body, "plan-digest")); d == plan.Digest || len(d) != 64 {
		t.Errorf("plan digest after a new plan: %q", d)
	}
	earlier := elementByID(got.body, "earlier-plans")
	if !strings.Contains(earlier, `data-plan="`+plan.ID+`"`) || !strings.Contains(earlier, plan.Digest) || !strings.Contains(earlier, plan.CreatedAt.UTC().Format(time.RFC3339)) {
		t.Errorf("earlier plans: %s", earlier)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestChangeRollback: an executed change shows its approvals, its
// outcome, health checks and signed receipt with the before- and
// after-states; an operator is offered the rollback form, whose post
// needs the session's token and a reason and opens the compensating case;
// a viewer is offered nothing and the desk refuses their post.
func TestChangeRollback(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, cd, x := r.executedChange(t)
	ctx := context.Background()
	path := "/cases/" + c.ID
	rcpt := x.Receipt

	viewer := r.visitor(t)
	viewer.signIn(signoff.RoleViewer)
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	for who, b := range map[string]*visitor{"viewer": viewer, "operator": op} {
		got := b.get(path)
		if got.status != http.StatusOK {
			t.Fatalf("%s: %d %s", who, got.status, got.body)
		}
		if o := elementByID(got.body, "outcome"); textOf(o) != changedesk.OutcomeExecuted {
			t.Errorf("%s: outcome %q", who, o)
		}
		rc := elementByID(got.body, "receipt-"+rcpt.ID)
		if rc == "" {
			t.Fatalf("%s: no receipt %s in %s", who, rcpt.ID, mainElement(got.body))
		}
		text := textOf(rc)
		for _, want := range []string{rcpt.ID, rcpt.Kind, rcpt.Digest, x.Predicate.Before.Digest, x.Predicate.Before.Content,
			x.Predicate.After.Digest, x.Predicate.After.Content, x.Predicate.PlanDigest, x.Predicate.ActionDigest, "verifies with the server's key"} {
			if want == "" || !strings.Contains(text, want) {
				t.Errorf("%s: receipt lacks %q: %s", who, want, text)
			}
		}
		for _, check := range x.Predicate.GateChecks {
			if !strings.Contains(text, check) {
				t.Errorf("%s: receipt lacks gate check %s", who, check)
			}
		}
		if x.Predicate.After.Digest == x.Predicate.Before.Digest {
			t.Errorf("before and after states are the same: %+v", x.Predicate)
		}
		health := elementByID(got.body, "health")
		if !strings.Contains(health, "passed") || len(x.Predicate.Health.Probes) == 0 || strings.Count(health, `<li class="probe ok">`) != len(x.Predicate.Health.Probes) {
			t.Errorf("%s: health %s for %+v", who, health, x.Predicate.Health)
		}
		apv := elementByID(got.body, "change-approvals")
		for _, want := range []string{r.actors[signoff.RoleOperator].ID, "cli-signed", cd.SubjectDigest, "consumed", x.Predicate.Approvals[0].KeyID} {
			if !strings.Contains(apv, want) {
				t.Errorf("%s: approvals lack %s: %s", who, want, apv)
			}
		}
		checkPage(t, who, got.body)
	}

	// A viewer sees no rollback button, and the desk refuses their post
	// even with their valid token.
	vp := viewer.get(path).body
	if strings.Contains(vp, `id="rollback-form"`) || strings.Contains(vp, `/rollback"`) || strings.Contains(vp, `id="rollback-submit"`) {
		t.Fatalf("viewer offered a rollback: %s", elementByID(vp, "rollback-note"))
	}
	vtoken := csrfFieldRE.FindStringSubmatch(vp)[1]
	if got := viewer.post(path+"/rollback", url.Values{"csrf": {vtoken}, "reason": {"I am only watching"}}); got.status != http.StatusForbidden {
		t.Fatalf("viewer rollback: %d %s", got.status, got.body)
	}
	if l, err := r.store.GetChangeLoop(ctx, r.owner, c.ID); err != nil || l.State.RevertedBy != "" {
		t.Fatalf("viewer's post opened a compensating case: %+v %v", l.State, err)
	}

	// The operator's form: the token and a reason are required.
	page := op.get(path).body
	form := elementByID(page, "rollback-form")
	if !strings.Contains(form, `method="post" action="/cases/`+c.ID+`/rollback"`) || !strings.Contains(form, `<label for="rollback-reason">`) ||
		!strings.Contains(form, `name="reason"`) || !strings.Contains(form, `required`) {
		t.Fatalf("operator's rollback form: %s", form)
	}
	token := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(form)
	if token == nil || token[1] == "" {
		t.Fatalf("rollback form without the csrf field: %s", form)
	}
	if got := op.post(path+"/rollback", url.Values{"reason": {"undo"}}); got.status != http.StatusForbidden {
		t.Fatalf("rollback without csrf: %d", got.status)
	}
	// Change the first character to one it is not, so the token always differs.
	wrong := "x" + token[1][1:]
	if token[1][0] == 'x' {
		wrong = "y" + token[1][1:]
	}
	if got := op.post(path+"/rollback", url.Values{"csrf": {wrong}, "reason": {"undo"}}); got.status != http.StatusForbidden {
		t.Fatalf("rollback with a wrong csrf: %d", got.status)
	}
	if got := op.post(path+"/rollback", url.Values{"csrf": {token[1]}, "reason": {"  "}}); got.status != http.StatusUnprocessableEntity {
		t.Fatalf("rollback without a reason: %d %s", got.status, got.body)
	}
	if l, err := r.store.GetChangeLoop(ctx, r.owner, c.ID); err != nil || l.State.RevertedBy != "" {
		t.Fatalf("a refused post opened a compensating case: %+v %v", l.State, err)
	}
	// The operator who asks for the rollback cannot approve it too: the
	// owner joins the approvers, so the compensating plan waits for them.
	pol, err := r.store.GetChangePolicy(ctx, r.owner)
	if err != nil {
		t.Fatal(err)
	}
	yaml := strings.Replace(pol.YAML, "group: ["+r.actors[signoff.RoleOperator].ID+"]", "group: ["+r.actors[signoff.RoleOperator].ID+", "+r.owner.ID+"]", 1)
	if yaml == pol.YAML {
		t.Fatalf("policy has no approvers group to extend: %s", pol.YAML)
	}
	if _, err := r.store.SetChangePolicy(ctx, r.owner, yaml, pol.Version, change.PolicyDigest); err != nil {
		t.Fatal(err)
	}
	got := op.post(path+"/rollback", url.Values{"csrf": {token[1]}, "reason": {"checkout_v2 off broke the coupon flow; restore it"}})
	loc := got.header.Get("Location")
	if got.status != http.StatusSeeOther || !regexp.MustCompile(`^/cases/case_[0-9a-z]+$`).MatchString(loc) || loc == path {
		t.Fatalf("rollback: %d %q %s", got.status, loc, got.body)
	}
	newID := strings.TrimPrefix(loc, "/cases/")
	l, err := r.store.GetChangeLoop(ctx, r.owner, c.ID)
	if err != nil || l.State.RevertedBy != newID {
		t.Fatalf("original's loop %+v %v, want reverted_by %s", l.State, err, newID)
	}
	comp := op.get(loc)
	if comp.status != http.StatusOK {
		t.Fatalf("compensating case: %d %s", comp.status, comp.body)
	}
	if a := elementByID(comp.body, "revert-of"); !strings.Contains(a, `href="/cases/`+c.ID+`"`) {
		t.Errorf("compensating case does not link its original: %q", a)
	}
	if !strings.Contains(textOf(elementByID(comp.body, "plan-via")), "rollback") || strings.Contains(comp.body, `id="rollback-form"`) {
		t.Errorf("compensating case: plan via %q", elementByID(comp.body, "plan-via"))
	}
	if s := textOf(elementByID(comp.body, "case-state")); s != workflow.ChangeAwaitingApproval {
		t.Errorf("compensating case is %s: %s", s, textOf(elementByID(comp.body, "review")))
	}
	// The original links its compensation and offers no second rollback.
	page = op.get(path).body
	if a := elementByID(page, "reverted-by"); !strings.Contains(a, `href="`+loc+`"`) {
		t.Errorf("original does not link its compensation: %q", a)
	}
	if strings.Contains(page, `id="rollback-form"`) {
		t.Error("a second rollback is offered")
	}
	if got := op.post(path+"/rollback", url.Values{"csrf": {token[1]}, "reason": {"roll it back again, checkout still fails"}}); got.status != http.StatusConflict {
		t.Errorf("second rollback: %d", got.status)
	}
}

// TestRollbackRefusals: a case that is not an executed change, or does
// not exist, is not rolled back, whatever the form says.
func TestRollbackRefusals(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := r.changeAwaitingApproval(t)
	bug, _ := r.report(t, "coupon applied twice")
	b := r.visitor(t)
	b.signIn(signoff.RoleOwner)
	token := b.csrf("/cases/" + c.ID)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/cases/" + c.ID + "/rollback", http.StatusConflict},
		{"/cases/" + bug.ID + "/rollback", http.StatusUnprocessableEntity},
		{"/cases/case_00000000000000000000000000/rollback", http.StatusNotFound},
		{"/cases/nonsense/rollback", http.StatusNotFound},
	} {
		if got := b.post(tc.path, url.Values{"csrf": {token}, "reason": {"undo"}}); got.status != tc.status {
			t.Errorf("%s: %d, want %d: %s", tc.path, got.status, tc.status, textOf(elementByID(got.body, "error")))
		}
	}
	if got := b.get("/cases/" + c.ID + "/rollback"); got.status != http.StatusMethodNotAllowed {
		t.Errorf("GET rollback: %d", got.status)
	}
}
