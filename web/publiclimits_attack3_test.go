package web_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/ratelimit"
	"github.com/signoff-dev/signoff/web"
)

// Third-round attack tests for the public pages' budgets (the refused
// answer's text on the 429 page, invalid forms as reads).
// These held in review, and are kept as regression tests.

// needsInfo files a report and moves its case to needs_info.
func needsInfo(t *testing.T, r *rig) (signoff.Case, string) {
	t.Helper()
	c, secret := r.report(t, "it crashes")
	for _, cmd := range []string{"start_triage", "request_info"} {
		if _, _, err := r.store.TransitionCase(context.Background(), r.owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	return c, secret
}

// keptText is the text of the 429 page's readonly textarea, as a browser
// reads it.
func keptText(body string) (string, bool) {
	el := elementByID(body, "kept")
	i := strings.Index(el, ">")
	j := strings.LastIndex(el, "</textarea>")
	if el == "" || i < 0 || j < i {
		return "", false
	}
	return html.UnescapeString(el[i+1 : j]), true
}

// TestAttack3KeptTextIsPrivate: the refused answer's text comes back
// only to the browser that sent it: the 429 page is no-store (no shared
// or back-forward cache keeps it), its textarea is readonly and holds the
// text exactly, markup and all, as text (the textarea cannot be closed
// from inside, in any case or spacing), and nothing else on the page
// carries it.
func TestAttack3KeptTextIsPrivate(t *testing.T) {
	t.Parallel()
	pub := ratelimit.NewPublic(ratelimit.Budgets{WritePerLink: ratelimit.Limit{Rate: 1e-9, Burst: 1}})
	r := newRig(t, rigOptions{opts: web.Options{Public: pub}})
	_, secret := needsInfo(t, r)
	b := r.visitor(t)
	token := csrfFieldRE.FindStringSubmatch(b.get("/t/" + secret).body)[1]
	if got := b.post("/t/"+secret+"/info", url.Values{"csrf": {token}, "text": {"first"}}); got.status != http.StatusSeeOther {
		t.Fatalf("first info: %d", got.status)
	}
	evil := "a\x00b </TEXTAREA ><img src=x onerror=alert(1)> </textarea\n><script>alert(2)</script> <!-- &lt; \u202e" + strings.Repeat("x", 64<<10)
	for _, p := range []struct {
		path string
		form url.Values
	}{
		{"/t/" + secret + "/info", url.Values{"csrf": {token}, "text": {evil}}},
		{"/t/" + secret + "/answer", url.Values{"csrf": {token}, "answer": {"no"}, "text": {evil}, "digest": {"sha256:00"}}},
	} {
		got := b.post(p.path, p.form)
		if got.status != http.StatusTooManyRequests {
			t.Fatalf("%s: %d", p.path, got.status)
		}
		if cc := got.header.Get("Cache-Control"); cc != "no-store" {
			t.Errorf("%s: 429 page with the person's text has Cache-Control %q", p.path, cc)
		}
		kept, ok := keptText(got.body)
		if !ok || !strings.Contains(elementByID(got.body, "kept"), " readonly>") {
			t.Fatalf("%s: no readonly kept text: %s", p.path, mainElement(got.body)[:min(400, len(mainElement(got.body)))])
		}
		if want := strings.ReplaceAll(evil, "\x00", "\ufffd"); kept != want {
			t.Errorf("%s: kept text differs from what was sent (%d vs %d bytes)", p.path, len(kept), len(want))
		}
		if strings.Contains(got.body, "<img") || strings.Contains(got.body, "<script>alert") || strings.Count(got.body, "</textarea>") != 1 {
			t.Errorf("%s: the kept text escapes its textarea", p.path)
		}
		checkPage(t, p.path, got.body)
	}
}

// TestAttack3RefusedBeforeBudgetSpendsNothing: a post that fails before
// the budgets (a form too large to read, a missing CSRF token) spends no
// read or write of the link and shows no text back; the link's next read
// is admitted.
func TestAttack3RefusedBeforeBudgetSpendsNothing(t *testing.T) {
	t.Parallel()
	pub := ratelimit.NewPublic(ratelimit.Budgets{ReadPerLink: ratelimit.Limit{Rate: 1e-9, Burst: 2}, WritePerLink: ratelimit.Limit{Rate: 1e-9, Burst: 1}})
	r := newRig(t, rigOptions{opts: web.Options{Public: pub}})
	_, secret := needsInfo(t, r)
	b := r.visitor(t)
	token := csrfFieldRE.FindStringSubmatch(b.get("/t/" + secret).body)[1] // read 1
	const marker = "MARKER-of-what-was-written"
	for _, p := range []struct {
		path   string
		form   url.Values
		status int
	}{
		{"/t/" + secret + "/info", url.Values{"csrf": {token}, "text": {marker + strings.Repeat("x", 400<<10)}}, http.StatusRequestEntityTooLarge},
		{"/t/" + secret + "/info", url.Values{"csrf": {"wrong"}, "text": {marker}}, http.StatusForbidden},
		{"/t/" + secret + "/answer", url.Values{"text": {marker}, "answer": {"no"}}, http.StatusForbidden},
		{"/t/" + secret + "/answer", url.Values{"csrf": {token}, "answer": {"no"}, "text": {marker + strings.Repeat("x", 400<<10)}}, http.StatusRequestEntityTooLarge},
	} {
		got := b.post(p.path, p.form)
		if got.status != p.status || strings.Contains(got.body, marker) {
			t.Fatalf("%s: %d (want %d), text shown back: %v", p.path, got.status, p.status, strings.Contains(got.body, marker))
		}
	}
	if got := b.get("/t/" + secret); got.status != http.StatusOK { // read 2
		t.Fatalf("the link's second read after posts refused before the budgets: %d", got.status)
	}
	if got := b.post("/t/"+secret+"/info", url.Values{"csrf": {token}, "text": {"Pixel 8"}}); got.status != http.StatusSeeOther {
		t.Fatalf("the link's one write after posts refused before the budgets: %d", got.status)
	}
}

// TestAttack3InvalidFormsAreReads: forms that cannot be sent (no choice,
// No without text, an empty info) spend the link's reads, never its
// writes, so a person who fumbles the form keeps their answers; past the
// reads they are refused and keep their text.
func TestAttack3InvalidFormsAreReads(t *testing.T) {
	t.Parallel()
	pub := ratelimit.NewPublic(ratelimit.Budgets{ReadPerLink: ratelimit.Limit{Rate: 1e-9, Burst: 4}, WritePerLink: ratelimit.Limit{Rate: 1e-9, Burst: 1}})
	r := newRig(t, rigOptions{opts: web.Options{Public: pub}})
	_, secret := needsInfo(t, r)
	b := r.visitor(t)
	token := csrfFieldRE.FindStringSubmatch(b.get("/t/" + secret).body)[1] // read 1
	for _, p := range []struct {
		path string
		form url.Values
	}{
		{"/t/" + secret + "/answer", url.Values{"csrf": {token}, "answer": {"maybe"}, "text": {"kept one"}}},
		{"/t/" + secret + "/answer", url.Values{"csrf": {token}, "answer": {"no"}, "text": {" \n\t "}}},
		{"/t/" + secret + "/info", url.Values{"csrf": {token}, "text": {"\u00a0 "}}},
	} {
		if got := b.post(p.path, p.form); got.status != http.StatusUnprocessableEntity {
			t.Fatalf("%s %v: %d", p.path, p.form, got.status)
		}
	}
	// The reads are spent; another invalid form is refused and keeps its
	// text; the one write is still there.
	got := b.post("/t/"+secret+"/answer", url.Values{"csrf": {token}, "answer": {"maybe"}, "text": {"kept two"}})
	if kept, _ := keptText(got.body); got.status != http.StatusTooManyRequests || kept != "kept two" {
		t.Fatalf("invalid answer past the reads: %d kept %q", got.status, kept)
	}
	if got := b.post("/t/"+secret+"/info", url.Values{"csrf": {token}, "text": {"Pixel 8"}}); got.status != http.StatusSeeOther {
		t.Fatalf("the one write after three invalid forms: %d %s", got.status, textOf(elementByID(got.body, "error")))
	}
}
