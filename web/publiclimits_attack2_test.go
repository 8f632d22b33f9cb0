package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/ratelimit"
	"github.com/signoff-dev/signoff/web"
)

// Second-round attack tests for the public pages' budgets.
// TestAttack2* demonstrate a weakness and fail until it is fixed; the
// other TestAttack2* are defences that held, kept as regression tests.

// TestAttack2LinkHolderLocksOutPage: a neighbour on the same address
// who holds valid links of their own (the report form is open to
// anyone) spends the address's link budget by reading them, and every
// other reporter on the address is refused their own page. Scaled down
// (address 30, link 15); on the defaults five links suffice
// (ratelimit.TestAttack2LinkHolderDrainsNeighbours).
func TestAttack2LinkHolderLocksOutPage(t *testing.T) {
	t.Parallel()
	pub := ratelimit.NewPublic(ratelimit.Budgets{LinkPerAddress: ratelimit.Limit{Rate: 1e-9, Burst: 30}, ReadPerLink: ratelimit.Limit{Rate: 1e-9, Burst: 15}})
	r := newRig(t, rigOptions{opts: web.Options{Public: pub}})
	_, alice := r.report(t, "it crashes")
	_, m1 := r.report(t, "spam one")
	_, m2 := r.report(t, "spam two")
	neighbour, victim := r.visitor(t), r.visitor(t)
	for _, s := range []string{m1, m2} {
		for range 15 {
			neighbour.get("/t/" + s)
		}
	}
	if got := victim.get("/t/" + alice); got.status != http.StatusOK {
		t.Fatalf("alice's page after a neighbour read two links of their own: %d %s", got.status, textOf(elementByID(got.body, "error")))
	}
}

// TestAttack2RefusedPageWritesStoreNothing: with the link's write budget
// spent, the info and answer forms are refused (429) before anything is
// stored, and what was written comes back escaped: markup in the text or
// in the answer field is never reflected as markup.
func TestAttack2RefusedPageWritesStoreNothing(t *testing.T) {
	t.Parallel()
	pub := ratelimit.NewPublic(ratelimit.Budgets{WritePerLink: ratelimit.Limit{Rate: 1e-9, Burst: 1}})
	r := newRig(t, rigOptions{opts: web.Options{Public: pub}})
	c, secret := r.report(t, "it crashes")
	ctx := context.Background()
	for _, cmd := range []string{"start_triage", "request_info"} {
		if _, _, err := r.store.TransitionCase(ctx, r.owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	b := r.visitor(t)
	page := b.get("/t/" + secret)
	token := csrfFieldRE.FindStringSubmatch(page.body)[1]
	// An answer with no choice is shown again (422) as a read of the
	// page, not one of the link's writes, and escapes what it echoes.
	if got := b.post("/t/"+secret+"/answer", url.Values{"csrf": {token}, "answer": {`no" checked autofocus onfocus="alert(1)`}}); got.status != http.StatusUnprocessableEntity ||
		strings.Contains(got.body, `onfocus="alert`) {
		t.Fatalf("invalid answer: %d %s", got.status, mainElement(got.body))
	}
	// The one write: an answer to a question that is not asked (the store
	// refuses it: nothing stored).
	if got := b.post("/t/"+secret+"/answer", url.Values{"csrf": {token}, "answer": {"yes"}, "digest": {"sha256:00"}}); got.status == http.StatusTooManyRequests {
		t.Fatalf("first write refused")
	}
	const evil = `</textarea><script>alert(1)</script><textarea>`
	for _, p := range []struct {
		path string
		form url.Values
	}{
		{"/t/" + secret + "/info", url.Values{"csrf": {token}, "text": {evil}}},
		{"/t/" + secret + "/answer", url.Values{"csrf": {token}, "answer": {"no"}, "text": {evil}}},
	} {
		got := b.post(p.path, p.form)
		if got.status != http.StatusTooManyRequests {
			t.Fatalf("%s past the write budget: %d", p.path, got.status)
		}
		if strings.Contains(got.body, "<script>alert(1)") || strings.Contains(got.body, `onfocus="alert`) {
			t.Fatalf("%s: the refused form reflects markup: %s", p.path, mainElement(got.body))
		}
	}
	reps, err := r.store.ListReports(ctx, r.owner, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.store.GetCase(ctx, r.owner, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || got.State != "needs_info" {
		t.Fatalf("after refused writes: %d reporter texts, state %s", len(reps), got.State)
	}
}

// TestAttack2RefusedReportFormEscapes: a report refused by the intake
// budgets is shown again with every field, escaped.
func TestAttack2RefusedReportFormEscapes(t *testing.T) {
	t.Parallel()
	pub := ratelimit.NewPublic(ratelimit.Budgets{IntakePerAddress: ratelimit.Limit{Rate: 1e-9, Burst: 1}})
	r := newRig(t, rigOptions{opts: web.Options{Public: pub}})
	b := r.visitor(t)
	form := "/p/" + r.proj.ID + "/report"
	token := b.csrf(form)
	if got := b.post(form, url.Values{"csrf": {token}, "text": {"first"}}); got.status != http.StatusCreated {
		t.Fatalf("first report: %d", got.status)
	}
	evil := `"><script>alert(1)</script>`
	got := b.post(form, url.Values{"csrf": {token}, "text": {"</textarea>" + evil}, "steps": {"</textarea>" + evil},
		"contact": {evil}, "app_version": {evil}, "device": {evil}, "os": {evil}})
	if got.status != http.StatusTooManyRequests {
		t.Fatalf("second report: %d", got.status)
	}
	if strings.Contains(got.body, "<script>alert(1)") {
		t.Fatalf("refused report form reflects markup: %s", mainElement(got.body))
	}
}
