package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/workflow"
)

// TestNeedsInfoBrowser walks the needs-information loop in headless
// Chromium on the demo's workspace, with the demo's triage crew (the
// builtin provider: live code, no model): a reporter files a report
// through the form with no device, version or steps; triage asks them, in
// their language, on their tracking page; they answer there; the page
// confirms it and shows the history; triage runs again with the answer
// and the case leaves needs_info.
func TestNeedsInfoBrowser(t *testing.T) {
	exe, d, _ := browserDemo(t)
	ctx := context.Background()

	phone := newBrowser(t, exe, 375, 800)
	phone.run("intake form",
		chromedp.Navigate(d.url+"/p/"+d.shop.ID+"/report"),
		chromedp.WaitVisible(chromedp.ID("text")))
	// Spanish, and nothing engineering could act on: no device, no
	// version, no steps.
	phone.run("file a vague report",
		chromedp.SendKeys(chromedp.ID("text"), "La tienda no funciona bien, hay un error con el pago y es muy molesto."),
		chromedp.Click(chromedp.ID("report-submit")),
		chromedp.WaitVisible(chromedp.ID("tracking-link")))
	link := value(phone, "tracking link", chromedp.AttributeValue(chromedp.ID("tracking-link"), "href"))
	href := link.Value
	if !link.Exists || !strings.Contains(href, "/t/") {
		t.Fatalf("tracking link = %q", href)
	}
	if !strings.HasPrefix(href, "http") {
		href = d.url + href
	}
	secret := href[strings.LastIndex(href, "/t/")+3:]

	// Triage runs as a job; the page asks once it needs information.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		phone.run("tracking page", chromedp.Navigate(href), chromedp.WaitVisible(chromedp.ID("state")))
		if value(phone, "question", chromedp.Evaluate[int](`document.querySelectorAll('#info-ask').length`)) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tracking page never asked (state: %s)", value(phone, "state", chromedp.AttributeValue(chromedp.ID("state"), "data-state")).Value)
		}
		time.Sleep(time.Second)
	}
	if st := value(phone, "state", chromedp.AttributeValue(chromedp.ID("state"), "data-state")).Value; st != workflow.BugNeedsInfo {
		t.Fatalf("asking in state %s", st)
	}
	asked := value(phone, "question text", chromedp.Text(chromedp.ID("info-ask")))
	lang := value(phone, "question language", chromedp.AttributeValue(chromedp.ID("info-ask"), "lang"))
	tr, err := d.s.Track(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	if lang.Value != "es" || tr.QuestionLanguage != "es" || strings.TrimSpace(asked) != strings.TrimSpace(tr.Question) || !strings.Contains(asked, "¿") {
		t.Fatalf("the page asks %q in %q; the case's question is %q in %q", asked, lang.Value, tr.Question, tr.QuestionLanguage)
	}
	t.Logf("triage asked (builtin crew, es): %s", asked)
	phone.checkPage("tracking (needs info)")
	phone.shot("needsinfo-asked")

	answer := "Uso un Pixel 8 con Android 14 y la versión 1.0.0 de la app. Añado la lámpara al carrito, aplico el cupón SAVE10 y pulso pagar: el descuento se aplica dos veces."
	phone.run("answer on the page",
		chromedp.SendKeys(chromedp.ID("info-text"), answer),
		chromedp.Click(chromedp.ID("info-submit")),
		chromedp.WaitVisible(chromedp.ID("answer-received")))
	got := value(phone, "confirmation", chromedp.Text(chromedp.ID("answer-received")))
	if !strings.HasPrefix(got, "Thanks — we received your answer on ") {
		t.Fatalf("confirmation = %q", got)
	}
	if hist := value(phone, "history", chromedp.Text(chromedp.ID("history"))); !strings.Contains(hist, "We asked you for more information.") || !strings.Contains(hist, "We received your answer.") {
		t.Fatalf("history = %q", hist)
	}
	if n := value(phone, "form gone", chromedp.Evaluate[int](`document.querySelectorAll('#info-form').length`)); n != 0 {
		t.Fatal("the page still offers the answer form")
	}
	phone.checkPage("tracking (answered)")
	phone.shot("needsinfo-answered")

	// Triage ran again, with the answer, and the case left needs_info
	// for good.
	var c signoff.Case
	deadline = time.Now().Add(3 * time.Minute)
	for {
		if c, err = d.s.GetCase(ctx, signoff.SystemActor(d.ws.ID), tr.CaseID); err != nil {
			t.Fatal(err)
		}
		if c.State != workflow.BugNeedsInfo && c.State != workflow.BugTriaging {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("case %s still %s after the answer", c.ID, c.State)
		}
		time.Sleep(500 * time.Millisecond)
	}
	switch c.State {
	case workflow.BugDropped, workflow.BugNeedsHuman, workflow.BugDuplicate:
		t.Fatalf("triage again ended in %s", c.State)
	}
	run, err := d.s.GetTriage(ctx, signoff.SystemActor(d.ws.ID), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var st crew.State
	if err := json.Unmarshal(run.State, &st); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.Item.Text, "Pixel 8 con Android 14") || run.Outcome == "needs_info" {
		t.Fatalf("the second triage run (%s) read %q", run.Outcome, st.Item.Text)
	}
	t.Logf("after the answer: case %s, triage %s/%s", c.State, run.Status, run.Outcome)
	phone.run("tracking page after triage", chromedp.Navigate(href), chromedp.WaitVisible(chromedp.ID("state")))
	if st := value(phone, "state", chromedp.AttributeValue(chromedp.ID("state"), "data-state")).Value; st == workflow.BugNeedsInfo {
		t.Fatal("the page still says the case needs information")
	}
	phone.shot("needsinfo-retriaged")
}
