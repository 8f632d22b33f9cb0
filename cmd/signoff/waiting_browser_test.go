package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff/workflow"
)

// TestWaitingOnEveryStateBrowser opens a bug case and a change case in
// every state of their loops, on a 390 px screen as an operator, and reads
// the waiting-on line at the top of each: it names the state it was drawn
// for, says who acts and what in words, offers a link or a command only
// when it waits on the reader, and the page never scrolls sideways.
//
// The states are set directly in the database: the loop's own records
// then lag behind the state, which the line must survive (it words a step
// from the facts it can read, never guesses); the walks through real
// transitions are TestInboxBrowser's and TestWalkBrowser's.
func TestWaitingOnEveryStateBrowser(t *testing.T) {
	exe, d, e := browserDemo(t)
	ctx := context.Background()
	w := &walker{d: d, e: e, ctx: ctx, hc: &http.Client{Timeout: time.Minute}}
	bugID := apiReport(t, d.url, d.shop.ID, "The coupon SAVE10 is applied twice at checkout: a 100.00 lamp costs 81.00")
	if _, err := w.waitState(bugID, []string{"awaiting_reporter_repro", "awaiting_triage_approval", "needs_human", "needs_info", "dropped"}); err != nil {
		t.Fatal(err)
	}
	changeID := apiChange(t, d)

	b := newBrowser(t, exe, 390, 844)
	code, _, err := d.s.CreateLoginLink(ctx, d.operator.ID, loginLinkTTL)
	if err != nil {
		t.Fatal(err)
	}
	b.run("sign in", chromedp.Navigate(d.url+"/login/"+code), chromedp.WaitVisible(chromedp.ID("link-submit")),
		chromedp.Click(chromedp.ID("link-submit")), chromedp.WaitVisible(chromedp.ID("needs-me")))
	b.checkPage("desk (390 px)")

	db := d.s.SQL()
	for _, k := range []struct {
		caseID string
		table  *workflow.Table
	}{{bugID, workflow.Bug}, {changeID, workflow.Change}} {
		for _, state := range k.table.States {
			if _, err := db.ExecContext(ctx, `UPDATE cases SET state = ? WHERE id = ?`, state, k.caseID); err != nil {
				t.Fatal(err)
			}
			what := fmt.Sprintf("%s in %s", k.table.Kind, state)
			b.run(what, chromedp.Navigate(d.url+"/cases/"+k.caseID), chromedp.WaitVisible(chromedp.ID("waiting")))
			drawn := value(b, what+": state", chromedp.Evaluate[string](`document.getElementById('waiting').dataset.state`))
			who := value(b, what+": who", chromedp.Evaluate[string](`document.getElementById('waiting').dataset.who`))
			line := value(b, what+": line", chromedp.Text(chromedp.CSS("#waiting .waiting-line")))
			acts := value(b, what+": actions", chromedp.Evaluate[int](`document.querySelectorAll('#waiting #waiting-act, #waiting #waiting-command').length`))
			if drawn != state {
				t.Errorf("%s: the line was drawn for %q", what, drawn)
			}
			if !strings.HasPrefix(line, "Waiting on: ") || len(strings.TrimSpace(strings.TrimPrefix(line, "Waiting on: "))) < 10 {
				t.Errorf("%s: line %q", what, line)
			}
			if strings.Contains(line, state) && strings.Contains(state, "_") {
				t.Errorf("%s: the line words the state raw: %q", what, line)
			}
			// A stuck case ("nobody") may offer the reader a way to help.
			if who != "you" && who != "nobody" && acts > 0 {
				t.Errorf("%s: waits on %s but offers the reader %d action(s)", what, who, acts)
			}
			t.Logf("%s: %s [%s, %d]", what, line, who, acts)
			b.checkPage(what + " (390 px)")
		}
	}
	// Put the bug back where triage left it, for the cleanup's sake.
	if _, err := db.ExecContext(ctx, `UPDATE cases SET state = ? WHERE id = ?`, workflow.BugDropped, bugID); err != nil {
		t.Fatal(err)
	}
}
