package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/web"
	"github.com/signoff-dev/signoff/workflow"
)

// askRepro moves a reported case to "Is this the bug you saw?" with a
// proposed reproduction whose failing output is shown.
func (r *rig) askRepro(t *testing.T, c signoff.Case, output string) {
	t.Helper()
	ctx := context.Background()
	for _, cmd := range []string{"start_triage", "ticket"} {
		if _, _, err := r.store.TransitionCase(ctx, r.owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	l, _, err := r.store.AdvanceLoop(ctx, signoff.SystemActor(r.ws.ID), signoff.LoopUpdate{CaseID: c.ID, State: signoff.BugLoopState{Round: 1}, Command: "start_reproduction"})
	if err != nil {
		t.Fatalf("start reproduction: %v", err)
	}
	st := signoff.BugLoopState{Round: 1, Harnesses: []signoff.HarnessRecord{{ID: "har_" + c.ID[5:], Round: 1, Status: signoff.HarnessProposed,
		Digest: strings.Repeat("d", 64), FailingOutput: output, ProposedAt: r.clock.Now()}}}
	if _, cs, err := r.store.AdvanceLoop(ctx, r.owner, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "propose_reproduction"}); err != nil || cs.State != workflow.BugAwaitingReporterRepro {
		t.Fatalf("propose reproduction: %v %+v", err, cs)
	}
}

var hiddenDigestRE = regexp.MustCompile(`name="digest" value="([^"]+)"`)

// TestReportAndTrack files a report through the form, opens the tracking
// link, answers "Is this the bug you saw?" and sees the new state.
func TestReportAndTrack(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	b := r.visitor(t)
	form := "/p/" + r.proj.ID + "/report"
	page := b.get(form)
	for _, want := range []string{`<textarea id="text" name="text"`, `<textarea id="steps" name="steps"`, `<input id="contact" name="contact"`,
		`<input id="app_version" name="app_version"`, `id="report-submit"`, `<label for="text">What happened?</label>`} {
		if !strings.Contains(page.body, want) {
			t.Errorf("report form lacks %s", want)
		}
	}
	// Empty text is refused with the form shown again.
	got := b.post(form, url.Values{"csrf": {b.csrf(form)}, "text": {"  "}, "steps": {"open cart"}})
	if got.status != http.StatusUnprocessableEntity || !strings.Contains(got.body, `id="report-error"`) || !strings.Contains(got.body, `>open cart</textarea>`) {
		t.Fatalf("empty report: %d", got.status)
	}
	got = b.post(form, url.Values{"csrf": {b.csrf(form)}, "text": {"The coupon SAVE10 is applied twice; card 4111 1111 1111 1111"},
		"steps": {"add SAVE10 twice"}, "contact": {"rita@example.com"}, "app_version": {"2.3.1"}})
	if got.status != http.StatusCreated {
		t.Fatalf("report: %d %s", got.status, got.body)
	}
	m := regexp.MustCompile(`<a id="tracking-link" href="(/t/[^"]+)">`).FindStringSubmatch(got.body)
	if m == nil {
		t.Fatalf("no tracking link: %s", got.body)
	}
	link := m[1]
	if strings.Contains(got.body, "4111 1111") {
		t.Fatal("the card number is echoed back")
	}
	track := b.get(link)
	if track.status != http.StatusOK || !strings.Contains(elementByID(track.body, "state"), "looking into it") || strings.Contains(track.body, `id="answer-form"`) {
		t.Fatalf("tracking page: %d %s", track.status, mainElement(track.body))
	}
	c := r.caseOf(t, link)
	r.askRepro(t, c, "--- FAIL: TestCouponTwice\n    total = 80, want 90")
	track = b.get(link)
	if !strings.Contains(elementByID(track.body, "state"), "We need your answer") || !strings.Contains(elementByID(track.body, "question"), "Is this the bug you saw?") ||
		!strings.Contains(elementByID(track.body, "technical"), "TestCouponTwice") {
		t.Fatalf("question not shown: %s", mainElement(track.body))
	}
	for _, want := range []string{`id="answer-form"`, `action="` + link + `/answer"`, `<input type="radio" id="answer-yes" name="answer" value="yes"`,
		`<label for="answer-yes">Yes</label>`, `<input type="radio" id="answer-no" name="answer" value="no"`, `<label for="answer-no">No</label>`,
		`<label for="answer-text">What is different or still goes wrong?</label>`, `<textarea id="answer-text" name="text"`, `id="answer-submit"`} {
		if !strings.Contains(track.body, want) {
			t.Errorf("answer form lacks %s", want)
		}
	}
	digest := hiddenDigestRE.FindStringSubmatch(track.body)[1]
	csrf := csrfFieldRE.FindStringSubmatch(track.body)[1]
	// No without saying what differs is refused, on the server.
	got = b.post(link+"/answer", url.Values{"csrf": {csrf}, "digest": {digest}, "answer": {"no"}, "text": {" "}})
	if got.status != http.StatusUnprocessableEntity || !strings.Contains(got.body, `id="answer-error"`) {
		t.Fatalf("no without text: %d", got.status)
	}
	// A stale digest is refused and changes nothing.
	got = b.post(link+"/answer", url.Values{"csrf": {csrf}, "digest": {strings.Repeat("0", 64)}, "answer": {"yes"}})
	if got.status != http.StatusConflict || !strings.Contains(got.body, "changed") {
		t.Fatalf("stale digest: %d %s", got.status, mainElement(got.body))
	}
	got = b.post(link+"/answer", url.Values{"csrf": {csrf}, "digest": {digest}, "answer": {"yes"}})
	if got.status != http.StatusSeeOther || got.header.Get("Location") != link {
		t.Fatalf("answer yes: %d %s", got.status, got.body)
	}
	track = b.get(link)
	if st := elementByID(track.body, "state"); !strings.Contains(st, `data-state="reproduced"`) || strings.Contains(track.body, `id="answer-form"`) {
		t.Fatalf("after yes: %s", mainElement(track.body))
	}
}

// caseOf finds the case of a tracking link.
func (r *rig) caseOf(t *testing.T, link string) signoff.Case {
	t.Helper()
	tr, err := r.store.Track(context.Background(), strings.TrimPrefix(link, "/t/"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.store.GetCase(context.Background(), r.owner, tr.CaseID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTrackingShowsOnlyItsCase: a tracking link shows its own case and
// nothing of any other, answers only for its own case, and every unknown,
// altered or foreign secret is the same plain 404.
func TestTrackingShowsOnlyItsCase(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	mine, mySecret := r.report(t, "my checkout shows the wrong total")
	theirs, theirSecret := r.report(t, "their password reset mail never arrives")
	r.askRepro(t, theirs, "--- FAIL: TestResetMail (secret output of their case)")
	other := newRigOn(t, r.store, r.clock, rigOptions{})
	foreign, _ := other.report(t, "a case of another workspace")
	b := r.visitor(t)
	got := b.get("/t/" + mySecret)
	if got.status != http.StatusOK {
		t.Fatalf("own page: %d", got.status)
	}
	for _, leak := range []string{theirs.ID, theirs.Title, "TestResetMail", theirSecret, foreign.ID, foreign.Title, mine.ID, "answer-form"} {
		if strings.Contains(got.body, leak) {
			t.Errorf("tracking page shows %q", leak)
		}
	}
	if !strings.Contains(got.body, mine.Title) {
		t.Error("tracking page does not show its own case")
	}
	// Answering on my link with their question's digest does not reach
	// their case.
	theirPage := r.visitor(t).get("/t/" + theirSecret)
	digest := hiddenDigestRE.FindStringSubmatch(theirPage.body)[1]
	ans := b.post("/t/"+mySecret+"/answer", url.Values{"csrf": {b.cookie(web.CSRFCookie)}, "digest": {digest}, "answer": {"yes"}})
	if ans.status != http.StatusConflict {
		t.Fatalf("answer with another case's digest: %d", ans.status)
	}
	if c, _ := r.store.GetCase(context.Background(), r.owner, theirs.ID); c.State != workflow.BugAwaitingReporterRepro {
		t.Fatalf("their case moved to %s", c.State)
	}
	var notFound string
	for i, bad := range []string{"sot_nothing", mySecret + "x", mySecret[:len(mySecret)-1] + "0", strings.Replace(mySecret, "sot_", "so_", 1), "%00", "..%2f"} {
		got := b.get("/t/" + bad)
		if got.status != http.StatusNotFound {
			t.Errorf("secret %q: %d", bad, got.status)
		}
		if main := mainElement(got.body); i == 0 {
			notFound = main
		} else if main != notFound && got.status == http.StatusNotFound {
			t.Errorf("secret %q: a different 404 page", bad)
		}
		if strings.Contains(got.body, mine.Title) || strings.Contains(got.body, `href="/login"`) {
			t.Errorf("secret %q: the 404 page shows something: %s", bad, mainElement(got.body))
		}
	}
	// A revoked link is the same 404.
	if _, err := r.store.SQL().Exec(`UPDATE tracking_links SET revoked_at = 1 WHERE case_id = ?`, mine.ID); err != nil {
		t.Fatal(err)
	}
	if got := b.get("/t/" + mySecret); got.status != http.StatusNotFound || mainElement(got.body) != notFound {
		t.Fatalf("revoked link: %d", got.status)
	}
}

// TestIntakeRateLimit: the form is limited per client address, with
// Retry-After, like the API's intake.
func TestIntakeRateLimit(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{opts: web.Options{IntakePerIP: web.Limit{Rate: 1.0 / 3600, Burst: 2}}})
	b := r.visitor(t)
	form := "/p/" + r.proj.ID + "/report"
	csrf := b.csrf(form)
	for i := range 3 {
		got := b.post(form, url.Values{"csrf": {csrf}, "text": {"report number " + time.Duration(i).String()}})
		want := http.StatusCreated
		if i == 2 {
			want = http.StatusTooManyRequests
		}
		if got.status != want {
			t.Fatalf("report %d: %d, want %d", i, got.status, want)
		}
		if i == 2 && got.header.Get("Retry-After") == "" {
			t.Fatal("429 without Retry-After")
		}
	}
	if got := b.get("/p/prj_00000000000000000000000000/report"); got.status != http.StatusNotFound {
		t.Fatalf("unknown project form: %d", got.status)
	}
}

// TestNeedsInfo: a case that needs information asks for it on the
// tracking page, and the answer goes through the airlock.
func TestNeedsInfo(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, secret := r.report(t, "it crashes")
	ctx := context.Background()
	for _, cmd := range []string{"start_triage", "request_info"} {
		if _, _, err := r.store.TransitionCase(ctx, r.owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	b := r.visitor(t)
	page := b.get("/t/" + secret)
	if !strings.Contains(page.body, `id="info-form"`) || !strings.Contains(page.body, `<label for="info-text">`) {
		t.Fatalf("no info form: %s", mainElement(page.body))
	}
	got := b.post("/t/"+secret+"/info", url.Values{"csrf": {csrfFieldRE.FindStringSubmatch(page.body)[1]}, "text": {"Pixel 8, app 2.3.1, call me on +1 415 555 0100"}})
	if got.status != http.StatusSeeOther {
		t.Fatalf("info: %d %s", got.status, got.body)
	}
	reps, err := r.store.ListReports(ctx, r.actors[signoff.RoleOperator], c.ID)
	if err != nil || len(reps) != 2 || strings.Contains(reps[1].Dossier.Text, "555 0100") {
		t.Fatalf("reports %+v %v", reps, err)
	}
}

// TestReportInAnotherScript: a long report in a non-Latin script is taken
// from the form, though the browser sends each character as up to 12
// bytes (4 UTF-8 bytes, each percent-encoded).
func TestReportInAnotherScript(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	b := r.visitor(t)
	form := "/p/" + r.proj.ID + "/report"
	for _, text := range []string{strings.Repeat("Корзина пуста ", 1200), strings.Repeat("🛒", 7000)} {
		got := b.post(form, url.Values{"csrf": {b.csrf(form)}, "text": {text}})
		if got.status != http.StatusCreated {
			t.Fatalf("report of %d bytes (%d encoded): %d %s", len(text), len(url.QueryEscape(text)), got.status, mainElement(got.body))
		}
	}
}
