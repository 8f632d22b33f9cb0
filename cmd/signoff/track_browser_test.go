package main

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff"
)

// trackFastTimers makes the page's long timers short and records the
// delays it asked for: track.js polls every 30 s or more, which a test
// cannot wait for, and the recorded delays show it never asks for less.
const trackFastTimers = `(() => {
  const st = window.setTimeout.bind(window);
  window.__trackDelays = [];
  window.setTimeout = (fn, ms, ...args) => {
    if (ms >= 1000) { window.__trackDelays.push(ms); ms = 400; }
    return st(fn, ms, ...args);
  };
})();`

// TestTrackBrowser walks the reporter's pages in headless Chromium: the
// report is filed through the public form (with an e-mail address); the
// page after filing copies the tracking link with its button and says
// what the address is for; the tracking page has one h1, updates itself
// in place without a reload (and never over what the reporter is typing),
// says in plain words what the reproduction is with the test output
// folded under "Technical details", and refreshes with its link. Then
// someone who follows a case link while signed out lands on that case
// after signing in, with a token and with a one-time link.
func TestTrackBrowser(t *testing.T) {
	exe, d, _ := browserDemo(t)
	ctx := context.Background()
	base := d.url

	phone := newBrowser(t, exe, 390, 844)
	phone.run("fast timers and the clipboard", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: trackFastTimers}); err != nil {
			return err
		}
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
				Permission: &cdpbrowser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true}, Setting: cdpbrowser.PermissionSettingGranted, Origin: base}); err != nil {
				return err
			}
		}
		return nil
	}))
	phone.run("file a report",
		chromedp.Navigate(base+"/p/"+d.shop.ID+"/report"),
		chromedp.WaitVisible(chromedp.ID("text")),
		chromedp.SendKeys(chromedp.ID("text"), "Coupon SAVE10 is applied twice at checkout: my 100.00 lamp cost 81.00 instead of 90.00."),
		chromedp.SendKeys(chromedp.ID("steps"), "add the lamp to the cart, apply SAVE10, check out"),
		chromedp.SendKeys(chromedp.ID("contact"), "ana@example.com"),
		chromedp.Click(chromedp.ID("report-submit")),
		chromedp.WaitVisible(chromedp.ID("copy-link")))
	href := value(phone, "tracking link", chromedp.Evaluate[string](`document.getElementById('tracking-link').href`))
	if !strings.HasPrefix(href, base+"/t/") {
		t.Fatalf("tracking link = %q", href)
	}
	if note := value(phone, "contact note", chromedp.Text(chromedp.ID("contact-note"))); !strings.Contains(note, "We did not send this link by e-mail") {
		t.Errorf("contact note: %q", note)
	}
	phone.checkPage("reported")
	phone.run("copy the link", chromedp.Click(chromedp.ID("copy-link")))
	status := ""
	for deadline := time.Now().Add(10 * time.Second); status == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		status = value(phone, "copy status", chromedp.Evaluate[string](`document.getElementById('copy-status').textContent`))
	}
	clip := value(phone, "clipboard", chromedp.Evaluate[string](`navigator.clipboard.readText().catch(() => '')`, chromedp.EvalAwaitPromise))
	sel := value(phone, "selection", chromedp.Evaluate[string](`String(window.getSelection())`))
	switch {
	case clip == href && status == "Link copied.":
		t.Logf("copy: the clipboard holds the link")
	case sel == href && strings.Contains(status, "selected"):
		t.Logf("copy: no clipboard here; the link is selected for Ctrl+C")
	default:
		t.Fatalf("copy button: status %q, clipboard %q, selection %q, want %q", status, clip, sel, href)
	}
	phone.shot("reported")

	// The tracking page while the case is triaged and reproduced: it
	// updates itself in place, and it asks its question once the
	// reproduction waits for the reporter.
	phone.run("tracking page", chromedp.Navigate(href), chromedp.WaitVisible(chromedp.ID("state")),
		chromedp.WaitVisible(chromedp.ID("track-refresh")))
	value(phone, "mark the page", chromedp.Evaluate[int](`window.__noReload = 42`))
	first := value(phone, "version", chromedp.Evaluate[string](`document.getElementById('track-live').dataset.version`))
	inPlace := false
	deadline := time.Now().Add(3 * time.Minute)
	for {
		v := value(phone, "poll", chromedp.Evaluate[[]any](`[document.getElementById('track-live').dataset.version, window.__noReload || 0,
			document.querySelectorAll('#answer-form').length, document.getElementById('track-status').textContent]`))
		if v[0].(string) != first && v[1].(float64) == 42 {
			inPlace = true
		}
		if v[2].(float64) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tracking page never asked its question (state: %s)", value(phone, "state", chromedp.Text(chromedp.ID("state"))))
		}
		if strings.Contains(v[3].(string), "stopped") {
			// Half an hour of polls, in fast timers: start again.
			phone.run("tracking page again", chromedp.Navigate(href), chromedp.WaitVisible(chromedp.ID("state")))
		}
		time.Sleep(300 * time.Millisecond)
	}
	if !inPlace {
		t.Error("the tracking page never updated itself in place")
	}
	for _, ms := range value(phone, "delays", chromedp.Evaluate[[]float64](`window.__trackDelays`)) {
		if ms < 30000 {
			t.Errorf("track.js polls after %v ms, more often than every 30 s", ms)
		}
	}
	// Plain words first, the technical output folded.
	got := value(phone, "page", chromedp.Evaluate[[]any](`[document.querySelectorAll('h1').length,
		document.getElementById('plain').textContent, document.getElementById('technical').open,
		!document.getElementById('shown').checkVisibility(), document.getElementById('shown').textContent,
		document.querySelector('main').innerText.split('Is this the bug you saw?').length - 1]`))
	if got[0].(float64) != 1 {
		t.Errorf("%v h1 headings", got[0])
	}
	if !strings.Contains(got[1].(string), "We wrote an automatic test that shows the problem") {
		t.Errorf("plain words: %q", got[1])
	}
	if got[2].(bool) || !got[3].(bool) || !strings.Contains(got[4].(string), "Test") {
		t.Errorf("technical details: open %v, hidden %v, text %q", got[2], got[3], got[4])
	}
	if got[5].(float64) != 1 {
		t.Errorf("the question appears %v times", got[5])
	}
	phone.checkPage("tracking page")
	phone.shot("tracking-page")
	phone.run("open the details", chromedp.Click(chromedp.CSS("#technical summary")), chromedp.WaitVisible(chromedp.ID("shown")))

	// What the reporter types survives an update: the page says there is
	// news and keeps the text (the version is made stale here, as a
	// change on the server would).
	phone.run("type an answer", chromedp.Click(chromedp.ID("answer-no")), chromedp.SendKeys(chromedp.ID("answer-text"), "the total is right on my phone"))
	value(phone, "stale version", chromedp.Evaluate[int](`document.getElementById('track-live').dataset.version = 'stale', 1`))
	waitText := func(what, js, want string) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			if got := value(phone, what, chromedp.Evaluate[string](js)); strings.Contains(got, want) {
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("%s: %q, want %q", what, got, want)
			}
		}
	}
	waitText("news while typing", `document.getElementById('track-status').textContent`, "There is news")
	if txt := value(phone, "typed text", chromedp.Evaluate[string](`document.getElementById('answer-text').value`)); txt != "the total is right on my phone" {
		t.Fatalf("the update lost what was typed: %q", txt)
	}
	// Not typing any more: the next poll replaces the page in place, the
	// details stay open.
	value(phone, "clear the form", chromedp.Evaluate[int](`document.getElementById('answer-form').reset(), document.activeElement.blur(), 1`))
	waitText("update", `document.getElementById('track-status').textContent`, "Updated just now")
	if v := value(phone, "after update", chromedp.Evaluate[[]any](`[window.__noReload || 0, document.getElementById('track-live').dataset.version, document.getElementById('technical').open]`)); v[0].(float64) != 42 || v[1].(string) == "stale" || !v[2].(bool) {
		t.Errorf("after the update: %v", v)
	}
	phone.run("refresh", chromedp.Click(chromedp.ID("track-refresh")), chromedp.WaitVisible(chromedp.ID("answer-form")))
	if v := value(phone, "reloaded", chromedp.Evaluate[int](`window.__noReload || 0`)); v == 42 {
		t.Error("Refresh did not load the page again")
	}

	// Someone follows a link to the case while signed out: sign-in brings
	// them back to it, with a token ...
	secret := href[strings.LastIndex(href, "/t/")+3:]
	tr, err := d.s.Track(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	casePath := "/cases/" + tr.CaseID
	desk := newBrowser(t, exe, 1366, 900)
	desk.run("case link, signed out", chromedp.Navigate(base+casePath), chromedp.WaitVisible(chromedp.ID("token")))
	loc := value(desk, "sign-in page", chromedp.Evaluate[string](`location.pathname + location.search`))
	if loc != "/login?next="+url.QueryEscape(casePath) {
		t.Fatalf("signed out, the case link went to %q", loc)
	}
	desk.run("sign in", chromedp.SendKeys(chromedp.ID("token"), d.operatorToken), chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.ID("timeline")))
	if p := value(desk, "landed", chromedp.Evaluate[string](`location.pathname`)); p != casePath {
		t.Fatalf("signed in on %q, want %q", p, casePath)
	}
	// ... and with a one-time link opened afterwards (from a message:
	// the link itself carries no next).
	link := loginLinkFor(t, d, signoff.RoleViewer)
	view := newBrowser(t, exe, 390, 844)
	view.run("case link, signed out", chromedp.Navigate(base+casePath), chromedp.WaitVisible(chromedp.ID("token")))
	view.run("one-time link", chromedp.Navigate(base+link), chromedp.WaitVisible(chromedp.ID("link-submit")),
		chromedp.Click(chromedp.ID("link-submit")), chromedp.WaitVisible(chromedp.ID("timeline")))
	if p := value(view, "landed", chromedp.Evaluate[string](`location.pathname`)); p != casePath {
		t.Fatalf("signed in with the link on %q, want %q", p, casePath)
	}
}
