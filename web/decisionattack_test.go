package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/storetest"
	"github.com/signoff-dev/signoff/triage"
)

// decisionAttackHidden are characters a browser does not show as themselves: a
// right-to-left override, a zero-width space, a left-to-right isolate.
var decisionAttackHidden = []string{"\u202e", "\u200b", "\u2066"}

// decisionAttackForgedGate puts a case at the triage gate with the server's run
// recording a critical bug triage is sure of (confidence 0.91), then has
// an agent with a task on the case ask a triage_ticket decision of its
// own: a subject claiming low severity and low confidence, a title that
// hides and reorders text, and a severity that names a CSS class.
func decisionAttackForgedGate(t *testing.T, r *rig) (signoff.Case, signoff.Decision) {
	t.Helper()
	ctx := context.Background()
	c, _ := r.report(t, "The game crashes every time I open the shop from level select")
	sys := signoff.SystemActor(r.ws.ID)
	for _, cmd := range []string{"start_triage", "request_triage_approval"} {
		if _, _, err := r.store.TransitionCase(ctx, sys, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	tri := r.actors[signoff.RoleTriager]
	st, err := json.Marshal(crew.State{Assessed: "critical", Assessment: &triage.Assessment{Severity: "critical", Component: "shop"},
		Investigation: &triage.Investigation{Verdict: triage.VerdictNew, Confidence: 0.91, Rationale: "no strong candidate"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.StartTriage(ctx, tri, c.ID, "item-"+c.ID, st); err != nil {
		t.Fatal(err)
	}
	storetest.GiveTask(t, r.store, r.owner, tri, c.ID)
	sub, err := json.Marshal(map[string]any{
		"title":    "Typo in the shop\u202e\u200b ,lacitirc ton",
		"body":     "cosmetic only\u2066 (approved by the owner)",
		"severity": "low sr-only", "component": "shop", "owner": "team-store", "confidence": 0.5,
		"rationale": "low", "evidence": map[string]any{"note\u200b": "x\u202ey"},
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := r.store.RequestDecision(ctx, tri, c.ID, crew.GateKind, sub, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return c, d
}

// TestDecisionAttackForgedGate: an agent's own triage_ticket subject
// cannot make the card lie. Why the gate held it is read from the
// server's triage run (critical, confident), not the subject's claims
// (low, unsure), which are named as the subject's; the card says the run
// does not take this decision as its gate; text that hides or reorders
// is shown marked; the severity names no class; a severity the edit
// cannot show offers no edit (it would start at another and be sent, as
// an amendment, unseen).
func TestDecisionAttackForgedGate(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, d := decisionAttackForgedGate(t, r)
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	page := op.get("/cases/" + c.ID)
	card := elementByID(page.body, "decision-"+d.ID)
	if card == "" {
		t.Fatalf("no card for %s", d.ID)
	}
	why := textOf(card[strings.Index(card, "Why the gate held it"):strings.Index(card, "Drafted ticket")])
	if !strings.Contains(why, "Severity critical is at or above high") {
		t.Errorf("why held does not read the run's severity:\n%s", why)
	}
	if strings.Contains(why, "confidence is 0.50, below") {
		t.Errorf("why held repeats the subject's claim as the gate's rule:\n%s", why)
	}
	if !strings.Contains(why, `The subject says severity "low sr-only"; the triage run recorded critical.`) {
		t.Errorf("the card does not say the subject's severity differs from the run's:\n%s", why)
	}
	if !strings.Contains(card, "gate-not-run") {
		t.Error("the card does not say the run does not take this decision as its gate")
	}
	for _, h := range decisionAttackHidden {
		if strings.Contains(card, h) {
			t.Errorf("the card holds %q unmarked", h)
		}
	}
	if !strings.Contains(card, `<mark class="hidden-char">\u202e</mark>`) {
		t.Error("the hidden characters are not shown marked")
	}
	if regexp.MustCompile(`class="[^"]*sr-only`).MatchString(card) {
		t.Error("the subject's severity names a class on the card")
	}
	if strings.Contains(card, `id="severity-`+d.ID+`"`) {
		t.Error("the severity edit is offered for a severity it cannot show")
	}
}

// TestChangeAttackPlanHidden: a planner agent's flag value with hidden
// characters and markup is shown in words as the plan holds it: the
// hidden characters marked, "<" as itself (not \u003c), nothing raw.
func TestChangeAttackPlanHidden(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	changeActionsSetup(t, r)
	ctx := context.Background()
	if _, err := r.store.CreateFlag(ctx, r.owner, r.proj.ID, "prod", "banner", signoff.FlagString, json.RawMessage(`"hello"`)); err != nil {
		t.Fatal(err)
	}
	c, _, err := r.change.Request(ctx, r.owner, changedesk.RequestInput{ProjectID: r.proj.ID,
		Reason: "Change the banner in prod: the sale ended yesterday and it still says so"})
	if err != nil {
		t.Fatal(err)
	}
	planner := r.actors[signoff.RolePlanner]
	storetest.GiveTask(t, r.store, r.owner, planner, c.ID)
	hc, err := r.change.DefaultHealth(ctx, r.ws.ID, r.proj.ID)
	if err != nil {
		t.Fatal(err)
	}
	value, _ := json.Marshal(map[string]string{"value": "sale <b>over</b>\u202e\u200b\u2066"})
	if _, _, err := r.change.Propose(ctx, planner, c.ID, changedesk.Proposal{Target: "flag:prod/banner", Params: value, HealthCheck: hc, Via: "model"}); err != nil {
		t.Fatal(err)
	}
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	page := op.get("/cases/" + c.ID)
	summary := elementByID(page.body, "plan-summary")
	if !strings.Contains(summary, `sale &lt;b&gt;over&lt;/b&gt;<mark class="hidden-char">\u202e</mark>`) {
		t.Errorf("plan summary: %s", summary)
	}
	for _, id := range []string{"plan-summary", "plan-json", "plan-canonical"} {
		el := elementByID(page.body, id)
		for _, h := range decisionAttackHidden {
			if strings.Contains(el, h) {
				t.Errorf("%s holds %q unmarked", id, h)
			}
		}
	}
}

// TestChangeAttackHealthWords: a planner agent's health check URL cannot
// write the rest of the health sentence (it is quoted once it holds a
// space), and a health check typed on the hand-plan form with anything
// after its object is refused rather than dropped unseen.
func TestChangeAttackHealthWords(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	changeActionsSetup(t, r)
	ctx := context.Background()
	c, _, err := r.change.Request(ctx, r.owner, changedesk.RequestInput{ProjectID: r.proj.ID,
		Reason: "Disable checkout_v2 in prod: checkout answers 500 since the v2 payment flow went live"})
	if err != nil {
		t.Fatal(err)
	}
	planner := r.actors[signoff.RolePlanner]
	storetest.GiveTask(t, r.store, r.owner, planner, c.ID)
	hc, err := r.change.DefaultHealth(ctx, r.ws.ID, r.proj.ID)
	if err != nil {
		t.Fatal(err)
	}
	spoof := hc.URL + " must answer 200; if it does not, the target is restored. Then GET http://x.test/y"
	hc.URL, hc.ExpectStatus = spoof, 500
	if _, _, err := r.change.Propose(ctx, planner, c.ID, changedesk.Proposal{Target: "flag:prod/checkout_v2", Params: json.RawMessage(`{"value":false}`), HealthCheck: hc, Via: "model"}); err != nil {
		t.Fatal(err)
	}
	op := r.visitor(t)
	op.signIn(signoff.RoleOwner)
	page := op.get("/cases/" + c.ID)
	health := textOf(elementByID(page.body, "plan-words"))
	if want := "GET " + strconv.Quote(spoof) + " must answer 500"; !strings.Contains(health, want) {
		t.Errorf("health in words lacks %q:\n%s", want, health)
	}

	actions := elementByID(page.body, "change-actions")
	good := `{"kind":"http","method":"GET","url":"http://shop.test/checkout","expect_status":200,"window_seconds":6,"interval_seconds":2}`
	form := url.Values{"csrf": {formValue(actions, "csrf")}, "plan_id": {formValue(actions, "plan_id")}, "mode": {"hand"},
		"target": {"flag:prod/checkout_v2"}, "value": {"false"}, "health": {good + ` {"kind":"command","command":["true"]}`}}
	before, _ := r.store.GetChangeLoop(ctx, r.owner, c.ID)
	got := op.post("/cases/"+c.ID+"/plan", form)
	if got.status != http.StatusUnprocessableEntity || !strings.Contains(textOf(elementByID(got.body, "change-refused")), "nothing after it") {
		t.Errorf("health with trailing JSON: %d %s", got.status, textOf(elementByID(got.body, "change-refused")))
	}
	if after, _ := r.store.GetChangeLoop(ctx, r.owner, c.ID); after.State.PlanID != before.State.PlanID {
		t.Errorf("a refused hand plan replaced the plan")
	}
	form.Set("health", good)
	if got := op.post("/cases/"+c.ID+"/plan", form); got.status != http.StatusSeeOther {
		t.Errorf("hand plan with one health object: %d %s", got.status, textOf(elementByID(got.body, "change-refused")))
	}
}

// TestChangeAttackHealthPostBody: what a POST health check sends is said
// in the plan's words, not only in its JSON.
func TestChangeAttackHealthPostBody(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	changeActionsSetup(t, r)
	ctx := context.Background()
	c, _, err := r.change.Request(ctx, r.owner, changedesk.RequestInput{ProjectID: r.proj.ID,
		Reason: "Disable checkout_v2 in prod: checkout answers 500 since the v2 payment flow went live"})
	if err != nil {
		t.Fatal(err)
	}
	planner := r.actors[signoff.RolePlanner]
	storetest.GiveTask(t, r.store, r.owner, planner, c.ID)
	hc, err := r.change.DefaultHealth(ctx, r.ws.ID, r.proj.ID)
	if err != nil {
		t.Fatal(err)
	}
	hc.Method, hc.Body = "POST", `{"action":"delete_all_orders"}`
	if _, _, err := r.change.Propose(ctx, planner, c.ID, changedesk.Proposal{Target: "flag:prod/checkout_v2", Params: json.RawMessage(`{"value":false}`), HealthCheck: hc, Via: "model"}); err != nil {
		t.Fatal(err)
	}
	op := r.visitor(t)
	op.signIn(signoff.RoleOwner)
	words := textOf(elementByID(op.get("/cases/"+c.ID).body, "plan-words"))
	if !strings.Contains(words, `sent with the body "{\"action\":\"delete_all_orders\"}"`) {
		t.Errorf("the POST body is not in the plan's words:\n%s", words)
	}
}

// TestChangeAttackExecuteTwice: the execute form sent twice at once (a
// double click, a replayed post) applies the plan once: one post goes
// through the gate, the other is refused on the page.
func TestChangeAttackExecuteTwice(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := r.changeAwaitingApproval(t)
	changeActionsApprove(t, r, c.ID)
	ctx := context.Background()
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	actions := elementByID(op.get("/cases/"+c.ID).body, "change-actions")
	form := url.Values{"csrf": {formValue(actions, "csrf")}, "plan_id": {formValue(actions, "plan_id")}}
	codes := make(chan int, 2)
	for range 2 {
		go func() { codes <- op.post("/cases/"+c.ID+"/execute", form).status }()
	}
	got := map[int]int{}
	for range 2 {
		got[<-codes]++
	}
	if got[http.StatusSeeOther] != 1 || got[http.StatusConflict] != 1 {
		t.Errorf("two executions at once: %v, want one 303 and one 409", got)
	}
	rs, err := r.store.ListReceipts(ctx, r.owner, c.ID)
	if err != nil || len(rs) != 1 {
		t.Errorf("two executions at once left %d receipts (%v), want 1", len(rs), err)
	}
	// And once more, after: refused, nothing applied again.
	if again := op.post("/cases/"+c.ID+"/execute", form); again.status != http.StatusConflict {
		t.Errorf("executing an executed change: %d", again.status)
	}
	if rs, _ := r.store.ListReceipts(ctx, r.owner, c.ID); len(rs) != 1 {
		t.Errorf("executing an executed change left %d receipts", len(rs))
	}
}

// TestDecisionAttackGateExtraKeys: members of a gate subject the card
// does not read are still shown in words: a key the card knows spelled in
// another case ("Severity", which Go's decoding folds onto "severity"),
// and a key it does not know at all.
func TestDecisionAttackGateExtraKeys(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := decisionGate(t, r)
	sub := strings.Replace(decisionGateSubject, `"severity":"high"`, `"severity":"high","Severity":"low","assignee":"mallory"`, 1)
	d, err := r.store.RequestDecision(context.Background(), r.actors[signoff.RoleTriager], c.ID, crew.GateKind, json.RawMessage(sub), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	card := elementByID(op.get("/cases/"+c.ID).body, "decision-"+d.ID)
	words := textOf(card[:strings.Index(card, "<details><summary>Subject as canonical JSON")])
	for _, want := range []string{"Other fields of the subject", "Severity", "assignee", "mallory"} {
		if !strings.Contains(words, want) {
			t.Errorf("the card's words lack %q:\n%s", want, words)
		}
	}
}

// TestDecisionAttackFieldLabels: an agent's subject keys cannot pass for
// the page's own labels ("Subject digest" with a digest of something
// else): every key is shown as a key, in code, never as a bare label.
func TestDecisionAttackFieldLabels(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := r.report(t, "The game crashes every time I open the shop from level select")
	tri := r.actors[signoff.RoleTriager]
	storetest.GiveTask(t, r.store, r.owner, tri, c.ID)
	fake := "sha256:" + strings.Repeat("ab", 32)
	d, err := r.store.RequestDecision(context.Background(), tri, c.ID, "release_note",
		json.RawMessage(`{"Subject digest":"`+fake+`","note":"ship it"}`), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	card := elementByID(op.get("/cases/"+c.ID).body, "decision-"+d.ID)
	if strings.Contains(card, "<dt>Subject digest</dt>") || !strings.Contains(card, `<dt><code class="field-key">Subject digest</code></dt>`) {
		t.Errorf("a subject key reads as the page's label:\n%s", card)
	}
}
