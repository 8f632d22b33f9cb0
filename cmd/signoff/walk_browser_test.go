package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/workflow"
)

// walkClicks counts the operator's clicks: every step a person takes in
// the browser goes through it, so the count is what the walk asked of them.
type walkClicks struct {
	b *browser
	n int
}

// click clicks sel and waits for then, counting one click.
func (c *walkClicks) click(what, sel, then string) {
	c.b.t.Helper()
	c.n++
	// WaitEnabled: the passkey buttons stay disabled until passkey.js has
	// bound its handler (and disable themselves once clicked, so a second
	// click does nothing). The desk swaps its rows in place as cases move,
	// so the click may meet a replaced row: find it again then.
	c.b.runAgain(what, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.WaitEnabled(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
	c.b.run(what, chromedp.WaitVisible(chromedp.CSS(then)))
}

// TestWalkBrowser takes a person through both loops in the browser alone,
// after signing in once with their token and registering a passkey:
//
//   - the demo's coupon bug, from the "Needs me" inbox to a merged fix:
//     every human step of staff (the triage gate if it holds, the review
//     of the reproduction, the passkey approval, the merge) is a click on
//     the waiting-on link of the inbox or the page, and the count of clicks
//     is logged (the reporter and the agents are the walk's, through the
//     API, as in demo --walk bug);
//   - a change requested by the owner and planned, approved with the
//     operator's passkey and executed, then rolled back (the policy
//     pre-approves the exact inverse, which runs at once), all on pages.
func TestWalkBrowser(t *testing.T) {
	exe, d, e := browserDemo(t)
	ctx := context.Background()
	base := strings.Replace(d.url, "127.0.0.1", "localhost", 1) // a passkey's relying party is a host name
	w := &walker{d: d, e: e, ctx: ctx, hc: &http.Client{Timeout: 2 * time.Minute}}

	b := newBrowser(t, exe, 1366, 900)
	if _, err := chromedp.Call(b.ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	if _, err := chromedp.Call(b.ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}}); err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	clicks := &walkClicks{b: b}
	b.run("sign-in page", chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.ID("token")), chromedp.SendKeys(chromedp.ID("token"), d.operatorToken))
	clicks.click("sign in", "#login-submit", "#needs-me")
	signIn := clicks.n
	// Once per person, not per case: registering the passkey.
	b.run("people page", chromedp.Navigate(base+"/people"), chromedp.WaitVisible(chromedp.ID("passkey-token")),
		chromedp.SendKeys(chromedp.ID("passkey-token"), d.operatorToken)) // registering asks for the token again
	clicks.click("register a passkey", "#passkey-register-btn", "#my-passkeys")
	setup := clicks.n - signIn
	desk := func() { clicks.click("desk", `nav[aria-label="Main"] a[href="/desk"]`, "#needs-me") }
	act := func(what, caseID, then string) {
		clicks.click(what, fmt.Sprintf(`#needs tr[data-case=%q] a.act`, caseID), then)
	}

	// The bug: the reporter files it (simulated, through the API).
	var rep struct {
		CaseID   string `json:"case_id"`
		Tracking struct {
			Token string `json:"token"`
		} `json:"tracking"`
	}
	if _, err := w.call("POST", "/api/v1/projects/"+d.shop.ID+"/reports", "", couponStory.report, &rep); err != nil {
		t.Fatal(err)
	}
	id, tok := rep.CaseID, rep.Tracking.Token
	c, err := w.waitState(id, []string{"awaiting_reporter_repro", "awaiting_triage_approval"}, "dropped", "duplicate", "needs_info", "needs_human")
	if err != nil {
		t.Fatal(err)
	}
	bugClicks := clicks.n
	if c.State == workflow.BugAwaitingTriageApproval {
		desk()
		act("the triage gate from the inbox", id, "#decisions")
		clicks.click("approve the ticket", `#decisions form.decide button[value="approve"]`, "#waiting")
		if _, err := w.waitState(id, []string{"awaiting_reporter_repro"}, "needs_human"); err != nil {
			t.Fatal(err)
		}
	}
	desk()
	act("the reproduction from the inbox", id, "#harness-review-form")
	b.run("a note", chromedp.SendKeys(chromedp.ID("harness-note"), "read the test: it checks the coupon is applied once"))
	clicks.click("approve the reproduction", "#harness-approve", "#staff-review-status")
	if err := w.reporterSays(tok, "yes", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.waitState(id, []string{"awaiting_approval"}, "needs_human"); err != nil {
		t.Fatal(err)
	}
	desk()
	act("the approval from the inbox", id, "#passkey-approve-btn")
	clicks.click("approve with the passkey", "#passkey-approve-btn", "#decided")
	clicks.click("the next step: merge", "#decided #waiting-act", "#merge-submit")
	clicks.click("merge", "#merge-submit", "#merge-receipt")
	bugClicks = clicks.n - bugClicks
	l, err := w.loop(id)
	if err != nil {
		t.Fatal(err)
	}
	if l.State.Merge == nil || l.State.Merge.By != d.operator.ID {
		t.Fatalf("merge after the browser walk: %+v", l.State.Merge)
	}
	apvs, err := d.s.ListApprovals(ctx, d.owner, id)
	if err != nil || len(apvs) != 1 || apvs[0].Via != approval.ViaWebPasskey || apvs[0].ApproverID != d.operator.ID {
		t.Fatalf("the bug's approvals: %+v %v", apvs, err)
	}
	t.Logf("clicks from sign-in to a merged fix: %d (sign in %d, passkey registration once %d, the bug's own steps %d)",
		clicks.n, signIn, setup, bugClicks)

	// The change, all in the browser. The incident, staged as the demo's
	// change walk does: the new payment flow turned on in prod outside the
	// desk.
	f, err := d.s.GetFlag(ctx, d.owner, d.shop.ID, demoFlagEnv, shoplite.CheckoutFlag)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.s.SetFlag(ctx, signoff.CLIActor(d.ws.ID), signoff.FlagWrite{ProjectID: d.shop.ID, Env: demoFlagEnv,
		Key: shoplite.CheckoutFlag, Value: json.RawMessage("true"), ExpectedVersion: f.Version, Reason: "browser test: the incident"}); err != nil {
		t.Fatal(err)
	}
	// The owner asks for it (the policy lets nobody approve what they asked
	// for) in their own browser; the operator approves and executes.
	ob := newBrowser(t, exe, 1366, 900)
	ob.run("owner signs in", chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), d.ownerToken), chromedp.Click(chromedp.ID("login-submit")), chromedp.WaitVisible(chromedp.ID("who")))
	ob.run("request a change",
		chromedp.Navigate(base+"/changes/new?project="+d.shop.ID),
		chromedp.WaitVisible(chromedp.ID("change-reason")),
		chromedp.SendKeys(chromedp.ID("change-reason"), "Disable "+shoplite.CheckoutFlag+" in prod: checkout answers 500 since the new payment flow went live"),
		chromedp.Click(chromedp.ID("change-new-submit")),
		chromedp.WaitVisible(chromedp.ID("waiting")))
	caseOf := func(br *browser) string {
		loc := value(br, "case url", chromedp.Location())
		id := loc[strings.Index(loc, "/cases/")+len("/cases/"):]
		return id[:strings.IndexAny(id+"#", "#?")]
	}
	changeID := caseOf(ob)
	approveChange := func(caseID string) {
		ob.run("plan", chromedp.Navigate(base+"/cases/"+caseID), chromedp.WaitVisible(chromedp.ID("waiting")))
		if n := value(ob, "plan form", chromedp.Evaluate[int](`document.querySelectorAll('#plan-builtin').length`)); n > 0 {
			ob.run("plan with the builtin planner", chromedp.Click(chromedp.ID("plan-builtin")), chromedp.WaitVisible(chromedp.ID("plan-summary")))
		}
		// The policy review runs as a job after the plan is drafted.
		if _, err := w.waitState(caseID, []string{workflow.ChangeAwaitingApproval}, workflow.ChangeReviewFailed); err != nil {
			t.Fatal(err)
		}
		b.run("approve with the passkey", chromedp.Navigate(base+"/cases/"+caseID), chromedp.WaitVisible(chromedp.ID("waiting-act")),
			chromedp.Click(chromedp.ID("waiting-act")),
			chromedp.WaitVisible(chromedp.ID("passkey-approve-btn")), chromedp.WaitEnabled(chromedp.ID("passkey-approve-btn")), chromedp.Click(chromedp.ID("passkey-approve-btn")),
			chromedp.WaitVisible(chromedp.ID("decided")))
		c, err := d.s.GetCase(ctx, d.owner, caseID)
		if err != nil || c.State != workflow.ChangeApproved {
			t.Fatalf("change %s after the passkey approval: %s %v", caseID, c.State, err)
		}
		b.run("execute", chromedp.WaitVisible(chromedp.CSS("#decided #waiting-act")), chromedp.Click(chromedp.CSS("#decided #waiting-act")),
			chromedp.WaitVisible(chromedp.ID("execute-submit")), chromedp.Click(chromedp.ID("execute-submit")), chromedp.WaitVisible(chromedp.ID("outcome")))
		if o := value(b, "outcome", chromedp.Text(chromedp.ID("outcome"))); o != changedesk.OutcomeExecuted {
			t.Fatalf("outcome of %s after executing on the page: %q", caseID, o)
		}
	}
	approveChange(changeID)
	if f, _ := d.s.GetFlag(ctx, d.owner, d.shop.ID, demoFlagEnv, shoplite.CheckoutFlag); string(f.Value) != "false" {
		t.Fatalf("flag after executing: %s", f.Value)
	}
	ob.run("roll back",
		chromedp.Navigate(base+"/cases/"+changeID),
		chromedp.WaitVisible(chromedp.ID("rollback-reason")),
		chromedp.SendKeys(chromedp.ID("rollback-reason"), "Roll back: the incident was elsewhere, turn the flow on again"),
		chromedp.Click(chromedp.ID("rollback-submit")),
		chromedp.WaitVisible(chromedp.ID("revert-of")))
	rollbackID := caseOf(ob)
	if rollbackID == changeID {
		t.Fatalf("the rollback did not open a compensating change")
	}
	// The exact inverse of what the change left is pre-approved by the
	// policy: it runs at once through the gate, and the original is reverted.
	if f, _ := d.s.GetFlag(ctx, d.owner, d.shop.ID, demoFlagEnv, shoplite.CheckoutFlag); string(f.Value) != "true" {
		t.Fatalf("flag after the rollback: %s", f.Value)
	}
	for id, want := range map[string]string{changeID: workflow.ChangeReverted, rollbackID: workflow.ChangeExecuted} {
		if c, err := d.s.GetCase(ctx, d.owner, id); err != nil || c.State != want {
			t.Fatalf("%s after the rollback: %s %v, want %s", id, c.State, err, want)
		}
	}
	if apvs, err := d.s.ListApprovals(ctx, d.owner, changeID); err != nil || len(apvs) != 1 || apvs[0].Via != approval.ViaWebPasskey {
		t.Fatalf("approvals of %s: %+v %v", changeID, apvs, err)
	}
	b.checkPage("rolled back")
	ob.checkPage("rolled back (owner)")
}
