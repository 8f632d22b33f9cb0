package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/workflow"
)

// TestDecisionBrowser drives the readable decisions and the change forms
// in headless Chromium on the demo's workspace. A crash report on the
// triage sample is held at the triage gate by the builtin crew; the owner
// reads the gate's card, raises its severity and approves on the page,
// and the crew files the ticket with the person's severity. Then the
// owner requests a change on /changes/new, has the builtin planner draft
// it from the case page and reads the plan in words; the operator signs
// it with the CLI's Ed25519 key through the API (passkeys in the browser
// are another page's); the owner executes it through the gate and rolls
// it back from the page. Screenshots: decision-card, change-plan-words.
func TestDecisionBrowser(t *testing.T) {
	exe, d, e := browserDemo(t)
	ctx := context.Background()
	base := d.url
	start := time.Now()

	// The report the gate holds: a crash in a core flow is severity high.
	caseID := apiReport(t, base, d.game.ID, "The game crashes every time I open the shop from level select")
	deadline := time.Now().Add(2 * time.Minute)
	var gate signoff.Decision
	for gate.ID == "" {
		ds, err := d.s.ListDecisions(ctx, d.owner, caseID)
		if err != nil {
			t.Fatal(err)
		}
		for _, dec := range ds {
			if dec.Kind == crew.GateKind && dec.Status == signoff.DecisionPending {
				gate = dec
			}
		}
		if gate.ID != "" {
			break
		}
		if time.Now().After(deadline) {
			c, _ := d.s.GetCase(ctx, d.owner, caseID)
			t.Fatalf("the triage gate never asked about %s (state %s)", caseID, c.State)
		}
		time.Sleep(200 * time.Millisecond)
	}
	var sub struct {
		Severity string `json:"severity"`
	}
	if err := json.Unmarshal(gate.Subject, &sub); err != nil || sub.Severity == "" {
		t.Fatalf("gate subject: %s %v", gate.Subject, err)
	}
	raised := "critical"
	if sub.Severity == "critical" {
		raised = "high"
	}

	b := newBrowser(t, exe, 1366, 900)
	b.run("sign in",
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), d.ownerToken),
		chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.ID("who")))
	card := "#decision-" + gate.ID
	b.run("gate card", chromedp.Navigate(base+"/cases/"+caseID+card), chromedp.WaitVisible(chromedp.CSS(card+" .gate")))
	text := value(b, "card text", chromedp.Text(chromedp.CSS(card)))
	for _, want := range []string{"Why the gate held it", "Crash numbers", "Possible duplicates", "Drafted ticket", gate.SubjectDigest} {
		if !strings.Contains(text, want) {
			t.Errorf("gate card lacks %q:\n%s", want, text)
		}
	}
	if body := value(b, "ticket body", chromedp.Text(chromedp.CSS(card+" .gate-body"))); strings.Contains(body, `\n`) {
		t.Errorf("the drafted ticket shows \\n escapes: %q", body)
	}
	b.checkPage("gate card")
	b.shotOf("decision-card", card)

	// A rejection without a reason stays on the page.
	b.run("reject without a reason", chromedp.Click(chromedp.CSS(card+" button.reject")), chromedp.WaitVisible(chromedp.ID("refused-"+gate.ID)))
	if loc := value(b, "location", chromedp.Location()); !strings.Contains(loc, "/cases/"+caseID) {
		t.Errorf("a rejection without a reason left the case page: %s", loc)
	}
	b.run("raise the severity and approve",
		chromedp.SetValue(chromedp.ID("severity-"+gate.ID), raised),
		chromedp.SendKeys(chromedp.ID("reason-"+gate.ID), "it loses purchases too"),
		chromedp.Click(chromedp.CSS(card+" button.approve")),
		chromedp.WaitVisible(chromedp.CSS(card+" .amended-digest")))
	if amended := value(b, "amended", chromedp.Text(chromedp.CSS(card+" .decision-amended"))); !strings.Contains(amended, "severity "+raised) {
		t.Errorf("after approving: %q", amended)
	}
	// The crew files the ticket with the person's severity.
	for {
		tr, err := d.s.GetTriage(ctx, d.owner, caseID)
		if err == nil && tr.TicketID != "" {
			tk, err := d.s.GetTicket(ctx, d.owner, d.game.ID, tr.TicketID)
			if err != nil {
				t.Fatal(err)
			}
			if tk.Severity != raised {
				t.Fatalf("ticket %s filed with severity %s, the person chose %s", tk.ID, tk.Severity, raised)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no ticket filed for %s after the gate's approval", caseID)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("triage gate with a severity edit: %s", time.Since(start).Round(time.Millisecond))

	// The incident, staged as the demo's change walk does: someone turned
	// the new payment flow on in prod outside the desk.
	f, err := d.s.GetFlag(ctx, d.owner, d.shop.ID, demoFlagEnv, shoplite.CheckoutFlag)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.s.SetFlag(ctx, signoff.CLIActor(d.ws.ID), signoff.FlagWrite{ProjectID: d.shop.ID, Env: demoFlagEnv,
		Key: shoplite.CheckoutFlag, Value: json.RawMessage("true"), ExpectedVersion: f.Version, Reason: "browser test: the incident"}); err != nil {
		t.Fatal(err)
	}
	b.run("request a change",
		chromedp.Navigate(base+"/changes/new?project="+d.shop.ID),
		chromedp.WaitVisible(chromedp.ID("change-reason")),
		chromedp.SendKeys(chromedp.ID("change-reason"), "Disable "+shoplite.CheckoutFlag+" in prod: checkout answers 500 since the new payment flow went live"),
		chromedp.Click(chromedp.ID("change-builtin")), // planned from the case page below
		chromedp.Click(chromedp.ID("change-new-submit")),
		chromedp.WaitVisible(chromedp.ID("plan-builtin")))
	b.checkPage("change requested")
	loc := value(b, "change case", chromedp.Location())
	changeCase := loc[strings.Index(loc, "/cases/")+len("/cases/"):]
	changeCase = changeCase[:strings.IndexAny(changeCase+"#", "#?")]
	b.run("plan with the builtin planner", chromedp.Click(chromedp.ID("plan-builtin")), chromedp.WaitVisible(chromedp.ID("plan-summary")))
	want := "prod · " + shoplite.CheckoutFlag + ": true → false"
	if s := value(b, "plan summary", chromedp.Text(chromedp.ID("plan-summary"))); s != want {
		t.Fatalf("plan in words: %q, want %q", s, want)
	}
	if v := value(b, "review", chromedp.Text(chromedp.ID("review-verdict"))); !strings.Contains(v, "The policy allows this plan") {
		t.Errorf("review in words: %q", v)
	}
	b.checkPage("change planned")
	b.shotOf("change-plan-words", "#change")

	// The operator signs the plan's digest with the CLI's key.
	w := &walker{d: d, e: e, ctx: ctx, hc: http.DefaultClient}
	if _, err := w.signChange(changeCase); err != nil {
		t.Fatal(err)
	}
	b.run("execute", chromedp.Navigate(base+"/cases/"+changeCase), chromedp.WaitVisible(chromedp.ID("execute-submit")),
		chromedp.Click(chromedp.ID("execute-submit")), chromedp.WaitVisible(chromedp.ID("rollback-form")))
	if o := value(b, "outcome", chromedp.Text(chromedp.ID("outcome"))); o != changedesk.OutcomeExecuted {
		t.Fatalf("outcome after executing on the page: %q", o)
	}
	if f, _ := d.s.GetFlag(ctx, d.owner, d.shop.ID, demoFlagEnv, shoplite.CheckoutFlag); string(f.Value) != "false" {
		t.Fatalf("flag after executing: %s", f.Value)
	}
	b.run("roll back",
		chromedp.SendKeys(chromedp.ID("rollback-reason"), "Roll back: the browser test checks the compensating change"),
		chromedp.Click(chromedp.ID("rollback-submit")),
		chromedp.WaitVisible(chromedp.ID("revert-of")))
	if c, err := d.s.GetCase(ctx, d.owner, changeCase); err != nil || c.State != workflow.ChangeReverted && c.State != workflow.ChangeExecuted {
		t.Fatalf("original after its rollback: %+v %v", c.State, err)
	}
	b.checkPage("rolled back")

	// The card and the change page at 390 px: no sideways scrolling.
	phone := newBrowser(t, exe, 390, 844)
	phone.run("sign in (390 px)",
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), d.ownerToken),
		chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.ID("who")))
	phone.run("gate card (390 px)", chromedp.Navigate(base+"/cases/"+caseID), chromedp.WaitVisible(chromedp.CSS(card+" .gate")))
	phone.checkPage("gate card (390 px)")
	phone.run("change (390 px)", chromedp.Navigate(base+"/cases/"+changeCase), chromedp.WaitVisible(chromedp.ID("plan-summary")))
	phone.checkPage("change (390 px)")
	phone.run("request page (390 px)", chromedp.Navigate(base+"/changes/new"), chromedp.WaitVisible(chromedp.ID("change-reason")))
	phone.checkPage("request page (390 px)")
	t.Logf("whole browser walk: %s", time.Since(start).Round(time.Millisecond))
}
