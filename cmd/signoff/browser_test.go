package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/client"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/workflow"
)

// browserPath finds Chromium; without one the browser tests skip, unless
// SIGNOFF_REQUIRE_BROWSER is set (CI), where they fail.
func browserPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SIGNOFF_REQUIRE_BROWSER") != "" {
		t.Fatal("no chromium found and SIGNOFF_REQUIRE_BROWSER is set")
	}
	t.Skip("no chromium: install it (apt-get install chromium) to run the browser tests")
	return ""
}

// browser is one headless Chromium window of a given width.
type browser struct {
	t   *testing.T
	ctx context.Context
	dir string
}

func newBrowser(t *testing.T, exe string, width, height int) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.WindowSize(width, height),
		// CI runs as root, where Chromium's own sandbox cannot start.
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	// The first run starts the browser, which lives as long as the context
	// of that run: give it the test's, not a step's timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	dir := os.Getenv("SIGNOFF_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	return &browser{t: t, ctx: ctx, dir: dir}
}

// run runs steps with a deadline, failing the test with what it was
// doing and the page as it was.
func (b *browser) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.runTries(what, 1, steps...)
}

// runAgain is run for steps that may be done twice: waits, then clicks
// that change nothing the second time (a radio button, a link). When a
// live page replaced a node between finding it and clicking it, the
// steps run again on the page as it is now.
func (b *browser) runAgain(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.runTries(what, 5, steps...)
}

func (b *browser) runTries(what string, tries int, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	for try := 1; ; try++ {
		ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
		err := chromedp.Do(ctx, steps...)
		cancel()
		if err == nil {
			return
		}
		if !staleNode(err) || try >= tries {
			html, _ := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.CSS("body")))
			b.t.Fatalf("%s: %v\npage:\n%s", what, err, clipText(html, 4000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// value runs one action that returns a value. A read whose node a live
// page replaced between finding it and reading it (the tracking page and
// the desk swap their parts in place) is read again: reads change
// nothing, so a second try is safe.
func value[T any](b *browser, what string, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	for try := 1; ; try++ {
		v, err := chromedp.Run(ctx, a)
		if err == nil {
			return v
		}
		if !staleNode(err) || try == 5 || ctx.Err() != nil {
			b.t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// staleNode reports whether err is the DevTools protocol's answer for a
// node that left the document after it was found.
func staleNode(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "No node with given id") ||
		strings.Contains(msg, "Could not find node with given id") ||
		strings.Contains(msg, "Node with given id does not belong to the document")
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// shot saves a full-page screenshot as name.png.
func (b *browser) shot(name string) {
	b.t.Helper()
	buf := value(b, "screenshot "+name, chromedp.FullScreenshot(100))
	p := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", p)
}

// shotOf saves a screenshot of the first element matching sel.
func (b *browser) shotOf(name, sel string) {
	b.t.Helper()
	buf := value(b, "screenshot "+name, chromedp.Screenshot(chromedp.CSS(sel)))
	p := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", p)
}

// checkPage checks what every page must hold: each visible form control
// has a label, and the page fits the window's width (no horizontal
// scrolling at 375 px).
func (b *browser) checkPage(name string) {
	b.t.Helper()
	unlabelled := value(b, name+": labels", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('input,select,textarea')).filter(e =>
		e.type !== 'hidden' && e.type !== 'submit' && e.type !== 'button' &&
		!(e.id && document.querySelector('label[for="' + e.id + '"]')) && !e.closest('label') && !e.getAttribute('aria-label')
	).map(e => e.name || e.id || e.outerHTML.slice(0, 60))`))
	if len(unlabelled) > 0 {
		b.t.Errorf("%s: form controls without a label: %v", name, unlabelled)
	}
	if !value(b, name+": width", chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`)) {
		b.t.Errorf("%s: the page scrolls sideways at this width", name)
	}
}

// TestBrowser drives the web UI in headless Chromium on the demo's
// workspace: a reporter files a report through the form, opens their
// tracking link and answers "Is this the bug you saw?"; an operator signs
// in, sees a new case arrive on the desk without reloading, opens the case
// and its approval page; an expired card offers no button; a viewer sees no
// approve button. Screenshots of each page go to SIGNOFF_SCREENSHOTS (or
// the test's temporary directory).
func TestBrowser(t *testing.T) {
	exe, d, e := browserDemo(t)
	ctx := context.Background()
	base := d.url

	// The reporter, on a phone-sized screen.
	phone := newBrowser(t, exe, 375, 800)
	phone.run("intake form",
		chromedp.Navigate(base+"/p/"+d.shop.ID+"/report"),
		chromedp.WaitVisible(chromedp.ID("text")))
	phone.checkPage("intake")
	phone.shot("intake")
	phone.run("file the report",
		chromedp.SendKeys(chromedp.ID("text"), "Coupon SAVE10 is applied twice at checkout: my 100.00 lamp cost 81.00 instead of 90.00."),
		chromedp.SendKeys(chromedp.ID("steps"), "add the lamp to the cart, apply SAVE10, check out"),
		chromedp.SendKeys(chromedp.ID("app_version"), "1.0.0"),
		chromedp.Click(chromedp.ID("report-submit")),
		chromedp.WaitVisible(chromedp.ID("tracking-link")))
	link := value(phone, "tracking link", chromedp.AttributeValue(chromedp.ID("tracking-link"), "href"))
	href := link.Value
	if !link.Exists || !strings.Contains(href, "/t/") {
		t.Fatalf("tracking link = %q", href)
	}
	if !strings.HasPrefix(href, "http") {
		href = base + href
	}
	phone.shot("intake-sent")
	// The case is triaged and reproduced live; the page asks its
	// question once the reproduction waits for the reporter.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		phone.run("tracking page", chromedp.Navigate(href), chromedp.WaitVisible(chromedp.ID("state")))
		if value(phone, "question", chromedp.Evaluate[int](`document.querySelectorAll('#answer-form').length`)) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tracking page never asked its question (state: %s)", value(phone, "state", chromedp.Text(chromedp.ID("state"))))
		}
		time.Sleep(time.Second)
	}
	phone.checkPage("tracking")
	phone.shot("tracking")
	before := value(phone, "state", chromedp.Text(chromedp.ID("state")))
	// Once "yes" is chosen the page holds its refresh (track.js), so
	// only the first click can meet a replaced node.
	phone.runAgain("answer yes",
		chromedp.Click(chromedp.ID("answer-yes")),
		chromedp.Click(chromedp.ID("answer-submit")),
		chromedp.WaitNotPresent(chromedp.ID("answer-form")))
	if after := value(phone, "state", chromedp.Text(chromedp.ID("state"))); after == before {
		t.Fatalf("state unchanged after answering: %q", after)
	}
	phone.shot("tracking-answered")

	// The operator signs in and watches the desk.
	desk := newBrowser(t, exe, 1280, 900)
	desk.run("sign in",
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), d.operatorToken),
		chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.ID("cases")),
		chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)))
	value(desk, "mark the page", chromedp.Evaluate[int](`window.__noReload = 42`))
	desk.checkPage("desk")
	// A new report arrives while the desk is open.
	newCase := apiReport(t, base, d.shop.ID, "The checkout button does nothing on my phone.")
	desk.run("live row", chromedp.WaitVisible(chromedp.CSS(`tr[data-case="`+newCase+`"]`)))
	if value(desk, "no reload", chromedp.Evaluate[int](`window.__noReload || 0`)) != 42 {
		t.Fatal("the desk reloaded to show the new case")
	}
	desk.shot("desk")
	desk.run("new case page", chromedp.Navigate(base+"/cases/"+newCase), chromedp.WaitVisible(chromedp.ID("timeline")))
	desk.checkPage("new case")

	// The reporter said yes, and nothing is fixed until a member of staff
	// has read the test: the operator reviews its source on its page.
	waiting := waitForState(t, d, d.shop.ID, "Coupon SAVE10", workflow.BugReproduced)
	desk.run("review page", chromedp.Navigate(base+"/cases/"+waiting+"/harness"), chromedp.WaitVisible(chromedp.ID("harness-review-form")))
	if n := value(desk, "test source", chromedp.Evaluate[int](`document.querySelectorAll('pre.source').length`)); n == 0 {
		t.Fatal("the review page shows no test source")
	}
	desk.checkPage("harness review")
	desk.shot("harness-review")
	desk.run("approve the test", chromedp.Click(chromedp.ID("harness-approve")), chromedp.WaitNotPresent(chromedp.ID("harness-review-form")))
	if st := value(desk, "staff review", chromedp.Text(chromedp.ID("staff-review-status"))); !strings.HasPrefix(st, "approved") {
		t.Fatalf("staff review after approving on the page: %q", st)
	}

	// The reported bug, once its verified candidate waits for approval:
	// triage evidence, the reproduction, the candidates side by side with
	// their verdict tables.
	reported := waitForState(t, d, d.shop.ID, "Coupon SAVE10", workflow.BugAwaitingApproval)
	desk.run("case page", chromedp.Navigate(base+"/cases/"+reported), chromedp.WaitVisible(chromedp.ID("candidates")))
	for _, sel := range []string{"#triage #triage-status", "#reproduction .failing-output", "#candidates table.diff tr.row-change", "#candidates .verdict-table", "#candidates .fingerprint"} {
		if n := value(desk, "case page: "+sel, chromedp.Evaluate[int](`document.querySelectorAll('`+sel+`').length`)); n == 0 {
			t.Errorf("case page: nothing matches %s", sel)
		}
	}
	desk.checkPage("case")
	desk.shot("case")
	desk.shotOf("case-triage", "#triage")
	desk.shotOf("case-candidate", "#candidates .candidate")

	// A decision the page may answer: the operator approves it on the
	// digest the page shows.
	pending := requestDecision(t, d, newCase)
	desk.run("decide", chromedp.Navigate(base+"/cases/"+newCase+"#decision-"+pending),
		chromedp.WaitVisible(chromedp.ID("reason-"+pending)),
		chromedp.SendKeys(chromedp.ID("reason-"+pending), "release window agreed"),
		chromedp.Click(chromedp.CSS(`#decision-`+pending+` button.approve`)),
		chromedp.WaitNotPresent(chromedp.ID("reason-"+pending)))
	if st := value(desk, "decision status", chromedp.Text(chromedp.CSS(`#decision-`+pending+` .decision-status`))); st != signoff.DecisionApproved {
		t.Fatalf("decision after approving on the page: %q", st)
	}
	desk.shot("decision")

	// A viewer, signed in with a one-time link (opening it spends nothing;
	// the button does), sees the same pending decision with nothing to
	// click, and the charts.
	viewerLink := loginLinkFor(t, d, signoff.RoleViewer)
	view := newBrowser(t, exe, 375, 800)
	view.run("viewer link", chromedp.Navigate(base+viewerLink), chromedp.WaitVisible(chromedp.ID("link-submit")),
		chromedp.Click(chromedp.ID("link-submit")), chromedp.WaitVisible(chromedp.ID("cases")))
	view.checkPage("desk (viewer)")
	other := requestDecision(t, d, newCase)
	view.run("viewer case page", chromedp.Navigate(base+"/cases/"+newCase), chromedp.WaitVisible(chromedp.ID("decision-"+other)))
	if n := value(view, "viewer buttons", chromedp.Evaluate[int](`document.querySelectorAll('main button, main form').length`)); n != 0 {
		t.Fatalf("a viewer is offered %d buttons or forms", n)
	}
	view.checkPage("case (viewer)")
	view.run("viewer review page", chromedp.Navigate(base+"/cases/"+reported+"/harness"), chromedp.WaitVisible(chromedp.ID("review-digest")))
	if n := value(view, "viewer review buttons", chromedp.Evaluate[int](`document.querySelectorAll('main button, main form').length`)); n != 0 {
		t.Fatalf("a viewer is offered %d buttons or forms on the review page", n)
	}
	view.run("charts", chromedp.Navigate(base+"/charts"), chromedp.WaitVisible(chromedp.CSS("main svg")))
	view.checkPage("charts")
	view.shot("charts")

	// A change plan waiting for approval: the approval page shows the
	// whole plan and the command to sign it, and nothing to click.
	buttons := `document.querySelectorAll('main button, main input[type=submit]').length`
	changeCase := apiChange(t, d)
	desk.run("approval page", chromedp.Navigate(base+"/cases/"+changeCase+"/approval"), chromedp.WaitVisible(chromedp.ID("subject")))
	cmd := value(desk, "command", chromedp.Text(chromedp.ID("approve-command")))
	if n := value(desk, "buttons", chromedp.Evaluate[int](buttons)); !strings.Contains(cmd, "signoff approve --case "+changeCase) || n != 0 {
		t.Fatalf("approval page: command %q, %d buttons", cmd, n)
	}
	desk.checkPage("approval")
	desk.shot("approval")
	desk.run("change page", chromedp.Navigate(base+"/cases/"+changeCase), chromedp.WaitVisible(chromedp.ID("timeline")))
	desk.checkPage("change")
	desk.shot("change")
	desk.shotOf("change-plan", "#change")

	// Signed (a real Ed25519 signature; the person is simulated) and run
	// through the gate: the page shows the receipt, and the operator rolls
	// the change back from it. The demo's policy pre-approves flag
	// rollbacks, so the compensating change runs at once.
	w := &walker{d: d, e: e, ctx: ctx, hc: http.DefaultClient}
	if _, err := w.signChange(changeCase); err != nil {
		t.Fatal(err)
	}
	if x, err := w.execute(changeCase); err != nil || x.Outcome != changedesk.OutcomeExecuted {
		t.Fatalf("execute %s: %+v %v", changeCase, x.Outcome, err)
	}
	desk.run("executed change", chromedp.Navigate(base+"/cases/"+changeCase), chromedp.WaitVisible(chromedp.ID("rollback-form")))
	if n := value(desk, "receipts", chromedp.Evaluate[int](`document.querySelectorAll('#receipts .receipt').length`)); n != 1 {
		t.Fatalf("executed change shows %d receipts", n)
	}
	desk.checkPage("executed change")
	desk.shotOf("change-receipt", "#receipts")
	desk.run("roll back",
		chromedp.SendKeys(chromedp.ID("rollback-reason"), "Roll back: the browser test checks the compensating change"),
		chromedp.Click(chromedp.ID("rollback-submit")),
		chromedp.WaitVisible(chromedp.ID("revert-of")))
	desk.checkPage("rollback")
	desk.shot("rollback")

	// An expired card offers nothing to click.
	expiredCard(t, d, newCase)
	desk.run("expired card", chromedp.Navigate(base+"/cases/"+newCase+"/approval"), chromedp.WaitVisible(chromedp.ID("card-closed")))
	if n := value(desk, "buttons", chromedp.Evaluate[int](buttons)); n != 0 {
		t.Fatalf("an expired card offers %d buttons", n)
	}
	desk.shot("approval-expired")
}

// apiReport files a public report through the API and returns its case.
func apiReport(t *testing.T, base, project, text string) string {
	t.Helper()
	public, err := client.New(base, "")
	if err != nil {
		t.Fatal(err)
	}
	out, err := public.SubmitReport(context.Background(), project, map[string]string{"text": text, "app_version": "1.0.0"})
	if err != nil || out.CaseID == "" {
		t.Fatalf("report: %+v %v", out, err)
	}
	return out.CaseID
}

// apiChange stages the demo's checkout incident (the flag turned on) and
// opens the change request that turns it off, drafted by the builtin
// planner, as the demo's change walk does.
func apiChange(t *testing.T, d *demo) string {
	t.Helper()
	ctx := context.Background()
	f, err := d.s.GetFlag(ctx, d.owner, d.shop.ID, demoFlagEnv, shoplite.CheckoutFlag)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.s.SetFlag(ctx, signoff.CLIActor(d.ws.ID), signoff.FlagWrite{ProjectID: d.shop.ID, Env: demoFlagEnv,
		Key: shoplite.CheckoutFlag, Value: json.RawMessage("true"), ExpectedVersion: f.Version, Reason: "browser test: the incident"}); err != nil {
		t.Fatal(err)
	}
	owner, err := client.New(d.url, d.ownerToken)
	if err != nil {
		t.Fatal(err)
	}
	out, err := owner.RequestChange(ctx, d.shop.ID, client.ChangeRequest{
		Reason: "Disable " + shoplite.CheckoutFlag + " in prod: checkout answers 500 since the new payment flow went live", Plan: "builtin"})
	if err != nil || out.Case.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("change request: %+v %v", out.Case, err)
	}
	return out.Case.ID
}

// expiredCard gives case id a decision card that has already expired.
func expiredCard(t *testing.T, d *demo, caseID string) {
	t.Helper()
	ctx := context.Background()
	if _, err := d.s.RequestDecision(ctx, d.owner, caseID, "release", json.RawMessage(`{"version":"1.0.1"}`), time.Second); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		cards, err := d.s.CardsOfCase(ctx, d.ws.ID, caseID)
		if err != nil {
			t.Fatal(err)
		}
		if len(cards) > 0 && cards[len(cards)-1].Status == signoff.CardExpired {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(fmt.Sprintf("no expired card on %s: %+v", caseID, cards))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitForState waits for the project's bug case whose title starts with
// title to reach state, and returns its id.
func waitForState(t *testing.T, d *demo, project, title, state string) string {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		page, err := d.s.ListCases(ctx, d.ws.ID, signoff.CaseFilter{ProjectID: project, Kind: signoff.KindBug, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		last := ""
		for _, c := range page.Cases {
			if strings.HasPrefix(c.Title, title) {
				if c.State == state {
					return c.ID
				}
				last = c.State
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no case %q reached %s (last state %q)", title, state, last)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// requestDecision opens a pending decision on a case, as an agent asking
// a person would.
func requestDecision(t *testing.T, d *demo, caseID string) string {
	t.Helper()
	dec, err := d.s.RequestDecision(context.Background(), d.owner, caseID, "release_window", json.RawMessage(`{"window":"Thursday 10:00 UTC"}`), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return dec.ID
}

// loginLinkFor makes a person of role in the demo workspace and returns a
// one-time sign-in link's path for them.
func loginLinkFor(t *testing.T, d *demo, role signoff.Role) string {
	t.Helper()
	ctx := context.Background()
	a, err := d.s.CreateActor(ctx, d.owner, "demo-"+string(role), role)
	if err != nil {
		t.Fatal(err)
	}
	code, _, err := d.s.CreateLoginLink(ctx, a.ID, loginLinkTTL)
	if err != nil {
		t.Fatal(err)
	}
	return "/login/" + code
}

// browserDemo starts the demo's workspace with its jobs and HTTP server
// for a browser test, and finds Chromium; it skips where either cannot run.
func browserDemo(t *testing.T) (string, *demo, *env) {
	t.Helper()
	if testing.Short() && os.Getenv("SIGNOFF_REQUIRE_BROWSER") == "" {
		t.Skip("browser test: not in -short unless SIGNOFF_REQUIRE_BROWSER is set")
	}
	exe := browserPath(t)
	needLoop(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	d, err := setupDemo(ctx, e, t.TempDir(), "127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.s.Close() })
	t.Cleanup(func() { d.prod.Stop() })
	stopJobs, err := d.s.StartJobs(ctx, d.st.workers(log), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopJobs(context.Background()) })
	srv := httpapi.NewServer(d.ln.Addr().String(), handler(d.s, log, d.st))
	go srv.Serve(d.ln)
	t.Cleanup(func() { srv.Close() })
	return exe, d, e
}
