package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// TestInboxBrowser drives the desk's "Needs me" inbox and the waiting-on
// line in headless Chromium on the demo's workspace: the operator's inbox
// at 1366 and 390 px (no sideways scrolling, state and waiting-on seen),
// its counts, a case joining it live, the line on bug cases in several
// states and on a change case, and the change's commands run as pasted
// from the page (SIGNOFF_URL and the key path from the line, the token
// from the environment) until the change is executed.
func TestInboxBrowser(t *testing.T) {
	exe, d, _ := browserDemo(t)
	ctx := context.Background()
	base := d.url
	sys := signoff.SystemActor(d.ws.ID)
	bug := func(title string, commands ...struct {
		by  signoff.Actor
		cmd string
	}) string {
		t.Helper()
		c, err := d.s.CreateCase(ctx, d.owner, signoff.CaseInput{ProjectID: d.shop.ID, Kind: signoff.KindBug, Title: title})
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range commands {
			if c, _, err = d.s.TransitionCase(ctx, step.by, c.ID, signoff.TransitionInput{Command: step.cmd, ExpectedVersion: &c.Version}); err != nil {
				t.Fatalf("%s: %v", step.cmd, err)
			}
		}
		return c.ID
	}
	type step = struct {
		by  signoff.Actor
		cmd string
	}
	fresh := bug("Inbox: the search box forgets the query")
	gate := bug("Inbox: prices show in the wrong currency", step{d.owner, "start_triage"}, step{sys, "request_triage_approval"})
	stuck := bug("Inbox: the receipt e-mail never arrives", step{d.owner, "escalate"})
	chg := apiChange(t, d)

	signIn := func(b *browser) {
		b.run("sign in",
			chromedp.Navigate(base+"/login"),
			chromedp.WaitVisible(chromedp.ID("token")),
			chromedp.SendKeys(chromedp.ID("token"), d.operatorToken),
			chromedp.Click(chromedp.ID("login-submit")),
			chromedp.WaitVisible(chromedp.ID("needs")),
			chromedp.WaitVisible(chromedp.CSS(`body[data-live="on"]`)))
	}
	needsRows := func(b *browser) []string {
		return value(b, "inbox rows", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#needs tbody tr')).map(r => r.getAttribute('data-case'))`))
	}
	count := func(b *browser) string {
		return value(b, "inbox count", chromedp.Text(chromedp.ID("needs-count")))
	}

	desk := newBrowser(t, exe, 1366, 900)
	signIn(desk)
	desk.checkPage("inbox")
	rows := needsRows(desk)
	for id, want := range map[string]bool{gate: true, stuck: true, chg: true, fresh: false} {
		if has := strings.Contains(strings.Join(rows, " "), id); has != want {
			t.Errorf("inbox holds %s: %v, want %v (rows %v)", id, has, want, rows)
		}
	}
	if c := count(desk); c != strconv.Itoa(len(rows)) {
		t.Errorf("inbox count %s for %d rows", c, len(rows))
	}
	sum := value(desk, "per-action counts", chromedp.Evaluate[int](`Array.from(document.querySelectorAll('#needs-counts .count-item strong')).reduce((n, s) => n + parseInt(s.textContent, 10), 0)`))
	if sum != len(rows) {
		t.Errorf("the per-action counts add up to %d for %d rows", sum, len(rows))
	}
	desk.shot("inbox")
	// A case escalated while the desk is open joins the inbox live.
	if _, _, err := d.s.TransitionCase(ctx, d.owner, fresh, signoff.TransitionInput{Command: "escalate"}); err != nil {
		t.Fatal(err)
	}
	desk.run("live inbox row", chromedp.WaitVisible(chromedp.CSS(`#needs tr[data-case="`+fresh+`"]`)))
	if c := count(desk); c != strconv.Itoa(len(rows)+1) {
		t.Errorf("inbox count after a live row: %s, want %d", c, len(rows)+1)
	}

	// The waiting-on line, on each case.
	line := func(b *browser, id string) (who, text string) {
		b.run("case "+id, chromedp.Navigate(base+"/cases/"+id), chromedp.WaitVisible(chromedp.ID("waiting")))
		who = value(b, "who", chromedp.AttributeValue(chromedp.ID("waiting"), "data-who")).Value
		return who, value(b, "line", chromedp.Text(chromedp.CSS("#waiting .waiting-line")))
	}
	for _, tc := range []struct{ id, who, text, href string }{
		{gate, "you", "Waiting on: you — Approve or reject the triage", "/cases/" + gate + "#decisions"},
		{stuck, "nobody", "Waiting on: nobody: stuck", "/cases/" + stuck + "#resume-triage"},
		{fresh, "nobody", "Waiting on: nobody: stuck", ""},
		{chg, "you", "Waiting on: you — Approve or reject the plan (0 of 1 approvals so far)", "/cases/" + chg + "/approval"},
	} {
		who, text := line(desk, tc.id)
		if who != tc.who || !strings.Contains(text, tc.text) {
			t.Errorf("case %s: %s %q, want %s %q", tc.id, who, text, tc.who, tc.text)
		}
		if tc.href != "" {
			if href := value(desk, "act link", chromedp.AttributeValue(chromedp.ID("waiting-act"), "href")).Value; href != tc.href {
				t.Errorf("case %s: act link %q, want %q", tc.id, href, tc.href)
			}
		}
	}
	desk.checkPage("change case")
	// The top of the case as a person first sees it (the window, not the
	// whole page).
	desk.run("case top", chromedp.ScrollIntoView(chromedp.CSS("h1")))
	shot := value(desk, "screenshot case-waiting", chromedp.CaptureScreenshot())
	if err := os.WriteFile(filepath.Join(desk.dir, "case-waiting.png"), shot, 0o644); err != nil {
		t.Fatal(err)
	}

	// The command as pasted: the page's SIGNOFF_URL and key path, the
	// operator's token from the environment and the key where the line
	// says (~ as the shell expands it).
	home := t.TempDir()
	key, err := os.ReadFile(d.opKeyPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".config", "signoff"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "signoff", "approver.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	pasted := func(extra ...string) (int, string) {
		t.Helper()
		cmd := value(desk, "command", chromedp.Text(chromedp.ID("waiting-command")))
		words := strings.Fields(cmd)
		if len(words) < 3 || !strings.HasPrefix(words[0], "SIGNOFF_URL=") || words[1] != "signoff" {
			t.Fatalf("command %q", cmd)
		}
		vars := map[string]string{"SIGNOFF_URL": strings.TrimPrefix(words[0], "SIGNOFF_URL="), "SIGNOFF_TOKEN": d.operatorToken}
		if vars["SIGNOFF_URL"] != base {
			t.Errorf("the command names %s, the server is %s", vars["SIGNOFF_URL"], base)
		}
		var args []string
		for _, w := range words[2:] {
			args = append(args, strings.Replace(w, "~/", home+"/", 1))
		}
		var out, errb bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
		return run(ctx, e, append(args, extra...)), errb.String()
	}
	// As pasted into a script (no terminal) it gets as far as asking the
	// person to type the case id: flags, server, token, key and card all
	// held.
	if code, stderr := pasted(); code == 0 || !strings.Contains(stderr, "not a terminal") {
		t.Fatalf("approve as pasted: %d %s", code, stderr)
	}
	if code, stderr := pasted("--yes"); code != 0 {
		t.Fatalf("approve --yes: %d %s", code, stderr)
	}
	if who, text := line(desk, chg); who != "you" || !strings.Contains(text, "Execute the approved plan") {
		t.Fatalf("approved change: %s %q", who, text)
	}
	if code, stderr := pasted(); code != 0 {
		t.Fatalf("change execute as pasted: %d %s", code, stderr)
	}
	if c, err := d.s.GetCase(ctx, d.owner, chg); err != nil || c.State != workflow.ChangeExecuted {
		t.Fatalf("change after execute: %s %v", c.State, err)
	}
	if who, text := line(desk, chg); who != "nobody" || !strings.Contains(text, "Waiting on: nobody: done") {
		t.Errorf("executed change: %s %q", who, text)
	}

	// A phone: the inbox stacks as cards, nothing scrolls sideways, and
	// each row's state and waiting-on are on screen.
	phone := newBrowser(t, exe, 390, 844)
	signIn(phone)
	phone.checkPage("inbox at 390 px")
	if !value(phone, "no overflow", chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`)) {
		t.Error("the inbox scrolls sideways at 390 px")
	}
	seen := value(phone, "cells on screen", chromedp.Evaluate[bool](`Array.from(document.querySelectorAll('#needs tbody tr')).every(r =>
		['td.plain-state', 'td.waiting-on'].every(sel => { const b = r.querySelector(sel).getBoundingClientRect(); return b.width > 0 && b.left >= 0 && b.right <= window.innerWidth; }))`))
	if !seen {
		t.Error("a row's state or waiting-on is off screen at 390 px")
	}
	phone.shot("inbox-390")
	phone.run("case at 390", chromedp.Navigate(base+"/cases/"+gate), chromedp.WaitVisible(chromedp.ID("waiting")))
	phone.checkPage("case at 390 px")
}
