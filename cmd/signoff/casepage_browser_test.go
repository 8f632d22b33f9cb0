package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/workflow"
)

// TestCasePageBrowser walks the demo's coupon bug to a verified candidate
// and drives its case page in headless Chromium at 1366 px: the page is
// open when the approval is signed through the API, and the new events and
// a "the case moved" notice arrive without a reload; the operator merges
// the approved candidate with the page's Merge button and sees the
// receipt; once the walk has ended (released, confirmed by the reporter)
// the page's height is measured and a task line opens to its events.
func TestCasePageBrowser(t *testing.T) {
	exe, d, e := browserDemo(t)
	ctx := context.Background()
	base := d.url
	w := &walker{d: d, e: e, ctx: ctx, hc: &http.Client{Timeout: 2 * time.Minute}}
	b := couponStory

	// The walk, as demo --walk bug takes it, up to the verified candidate.
	var rep struct {
		CaseID   string `json:"case_id"`
		Tracking struct {
			Token string `json:"token"`
		} `json:"tracking"`
	}
	if _, err := w.call("POST", "/api/v1/projects/"+d.shop.ID+"/reports", "", b.report, &rep); err != nil {
		t.Fatal(err)
	}
	id, tok := rep.CaseID, rep.Tracking.Token
	c, err := w.waitState(id, []string{"ticketed", "reproducing", "awaiting_reporter_repro", "awaiting_triage_approval"}, "dropped", "duplicate", "needs_info", "needs_human")
	if err != nil {
		t.Fatal(err)
	}
	if c.State == workflow.BugAwaitingTriageApproval {
		if err := w.decideGate(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.reproduceAndFix(id, tok, b); err != nil {
		t.Fatal(err)
	}

	// The operator has the case page open while the approval is signed.
	page := newBrowser(t, exe, 1366, 900)
	code, _, err := d.s.CreateLoginLink(ctx, d.operator.ID, loginLinkTTL)
	if err != nil {
		t.Fatal(err)
	}
	page.run("sign in", chromedp.Navigate(base+"/login/"+code), chromedp.WaitVisible(chromedp.ID("link-submit")),
		chromedp.Click(chromedp.ID("link-submit")), chromedp.WaitVisible(chromedp.ID("cases")))
	page.run("case page", chromedp.Navigate(base+"/cases/"+id), chromedp.WaitVisible(chromedp.ID("timeline")),
		chromedp.WaitVisible(chromedp.CSS(`body[data-case-live="on"]`)))
	value(page, "mark the page", chromedp.Evaluate[int](`window.__noReload = 7`))
	if n := value(page, "merge form before approval", chromedp.Evaluate[int](`document.querySelectorAll('#merge-form').length`)); n != 0 {
		t.Fatalf("a case awaiting approval offers %d merge forms", n)
	}
	var card bugdesk.CardView
	if _, err := w.call("GET", "/api/v1/cases/"+id+"/approval", d.operatorToken, nil, &card); err != nil {
		t.Fatal(err)
	}
	st := approval.NewStatement(id, card.SubjectDigest, approval.Approve, card.Policy.Digest(), d.operator.ID, time.Now(), card.Policy.TTL())
	env, err := approval.Sign(st, d.opKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.call("POST", "/api/v1/cases/"+id+"/approvals", d.operatorToken, map[string]any{"envelope": env, "via": "cli-signed-yes"}, nil); err != nil {
		t.Fatal(err)
	}
	page.run("live update", chromedp.WaitVisible(chromedp.CSS(`#timeline li[data-type="approval.recorded"]`)),
		chromedp.WaitVisible(chromedp.ID("case-moved")))
	if v := value(page, "no reload", chromedp.Evaluate[int](`window.__noReload || 0`)); v != 7 {
		t.Fatal("the case page reloaded itself to show the new events")
	}
	if txt := value(page, "moved notice", chromedp.Text(chromedp.ID("case-moved-text"))); !strings.Contains(txt, "approved") {
		t.Fatalf("moved notice: %q", txt)
	}

	// The merge, in the browser: the same desk merge as the API's.
	page.run("merge", chromedp.Click(chromedp.ID("case-moved-reload")), chromedp.WaitVisible(chromedp.ID("merge-submit")),
		chromedp.Click(chromedp.ID("merge-submit")), chromedp.WaitVisible(chromedp.ID("merge-receipt")))
	page.checkPage("merged case")
	l, err := w.loop(id)
	if err != nil {
		t.Fatal(err)
	}
	if l.State.Merge == nil || l.State.Merge.CandidateID != card.Card.CandidateID || l.State.Merge.By != d.operator.ID {
		t.Fatalf("merge record after the page's merge: %+v", l.State.Merge)
	}
	receipt := value(page, "receipt", chromedp.Text(chromedp.ID("receipts")))
	if !strings.Contains(receipt, l.State.Merge.Commit) {
		t.Fatalf("the receipt does not show merge commit %s: %q", l.State.Merge.Commit, receipt)
	}

	// The rest of the walk: release, smoke, the reporter's yes.
	if _, err := w.waitState(id, []string{"awaiting_reporter_confirmation"}, "needs_human"); err != nil {
		t.Fatal(err)
	}
	if err := w.reporterSays(tok, "yes", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := w.waitState(id, []string{"verified"}); err != nil {
		t.Fatal(err)
	}
	page.run("walked case", chromedp.Navigate(base+"/cases/"+id), chromedp.WaitVisible(chromedp.ID("timeline")))
	height := value(page, "height", chromedp.Evaluate[int](`document.documentElement.scrollHeight`))
	lines := value(page, "lines", chromedp.Evaluate[int](`document.querySelectorAll('#timeline > li').length`))
	events := value(page, "events", chromedp.Evaluate[int](`document.querySelectorAll('#timeline li[data-seq]').length - document.querySelectorAll('#timeline > li.task-group').length`))
	t.Logf("case page after the walk at 1366 px: %d px tall; timeline: %d lines for %d events", height, lines, events)
	if height > 6000 || lines >= events {
		t.Errorf("the case page is %d px tall with %d timeline lines for %d events", height, lines, events)
	}
	page.checkPage("walked case")
	page.shot("case-page")
	group := `#timeline > li.task-group[data-type="reproducer"]`
	page.run("open a task", chromedp.Click(chromedp.CSS(group+` > details > summary`)),
		chromedp.WaitVisible(chromedp.CSS(group+` ul.task-events li[data-type="agent.call"]`)))
	what := value(page, "task line", chromedp.Text(chromedp.CSS(group+` .what`)))
	if !strings.HasPrefix(what, "reproducer task: ") || !strings.Contains(what, "model call") {
		t.Fatalf("task line: %q", what)
	}
	who := value(page, "names", chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).textContent`, group+` .actor`)))
	if strings.HasPrefix(who, "act_") || who == "" {
		t.Fatalf("the task line names its agent %q", who)
	}
	page.shotOf("case-page-task", group)
}
