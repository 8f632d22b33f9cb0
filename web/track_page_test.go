package web_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/secretbox"
	"github.com/signoff-dev/signoff/web"
)

var trackVersionRE = regexp.MustCompile(`id="track-live" data-poll="([^"]+)" data-version="([0-9a-f]+)"`)

// TestTrackPagePlainWords: the tracking page says in plain words what the
// reproduction is, with the test output folded under "Technical details",
// escaped and with hidden characters marked; it has one h1, asks its
// question once, offers Refresh, and shows nothing of staff notes, actors
// or the case's id.
func TestTrackPagePlainWords(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, secret := r.report(t, "The coupon SAVE10 is applied twice")
	ctx := context.Background()
	// Staff notes on the way: the reporter's page must not show them.
	for _, cmd := range []string{"start_triage", "request_info"} {
		if _, _, err := r.store.TransitionCase(ctx, r.owner, c.ID, signoff.TransitionInput{Command: cmd, Note: "STAFF-NOTE: call the vendor, ask olivia"}); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	// The answer sends the case back to triage, which tickets it.
	if _, err := r.store.Answer(ctx, secret, "Pixel 8, app 2.3.1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.store.TransitionCase(ctx, r.owner, c.ID, signoff.TransitionInput{Command: "ticket", Note: "STAFF-NOTE two"}); err != nil {
		t.Fatalf("ticket: %v", err)
	}
	hostile := "We wrote an automated test of what you described. On the current version it fails:\n" +
		"- TestCouponTwice: coupon_test.go:14: total = 80, want 90 <script>alert(1)</script> " +
		"<a href=\"https://evil.example/refund\">claim your refund</a> \u202egnp.exe\x1b[31m"
	r.askReproFrom(t, c, hostile)

	b := r.visitor(t)
	got := b.get("/t/" + secret)
	if got.status != http.StatusOK {
		t.Fatalf("tracking page: %d", got.status)
	}
	main := mainElement(got.body)
	if n := strings.Count(got.body, "<h1"); n != 1 {
		t.Errorf("%d h1 headings", n)
	}
	if n := strings.Count(main, "Is this the bug you saw?"); n != 1 {
		t.Errorf("the question appears %d times on the page:\n%s", n, main)
	}
	if plain := elementByID(got.body, "plain"); !strings.Contains(plain, "We wrote an automatic test that shows the problem: it fails the way you described.") {
		t.Errorf("no plain words: %s", plain)
	}
	tech := elementByID(got.body, "technical")
	if !strings.HasPrefix(tech, `<details id="technical"`) || strings.Contains(tech[:strings.Index(tech, ">")], "open") ||
		!strings.Contains(tech, "<summary>Technical details</summary>") || !strings.Contains(tech, "TestCouponTwice") {
		t.Errorf("technical details not folded: %s", tech)
	}
	// The test's name and output are in the details and nowhere else.
	if rest := strings.Replace(main, tech, "", 1); strings.Contains(rest, "TestCouponTwice") || strings.Contains(rest, "coupon_test.go") {
		t.Errorf("test output outside the details:\n%s", rest)
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;a href=", `<mark class="hidden-char">\u202e</mark>`, `<mark class="hidden-char">\x1b</mark>`} {
		if !strings.Contains(tech, want) {
			t.Errorf("technical details lack %s: %s", want, tech)
		}
	}
	if strings.Contains(got.body, "<script>alert") || strings.Contains(got.body, `<a href="https://evil`) || strings.Contains(got.body, "\u202e") {
		t.Error("agent output is not escaped")
	}
	for _, leak := range []string{"STAFF-NOTE", r.owner.ID, "olivia", c.ID, "har_"} {
		if strings.Contains(got.body, leak) {
			t.Errorf("tracking page shows %q", leak)
		}
	}
	if !strings.Contains(got.body, `<script src="/static/track.js" defer></script>`) {
		t.Error("the page does not load track.js")
	}
	if ref := elementByID(got.body, "track-refresh"); !strings.Contains(ref, `href="/t/`+secret+`"`) || !strings.Contains(ref, "Refresh") {
		t.Errorf("no Refresh link: %s", ref)
	}
	hist := elementByID(got.body, "history")
	for _, want := range []string{"We received your report.", "We asked you for more information.", "We received your answer.",
		"We started looking at it again with your answer.", "We asked you whether our test shows your bug."} {
		if !strings.Contains(hist, want) {
			t.Errorf("history lacks %q: %s", want, hist)
		}
	}

	// The version track.js compares is stable while nothing changes and
	// moves when the case does.
	m := trackVersionRE.FindStringSubmatch(got.body)
	if m == nil || m[1] != "/t/"+secret {
		t.Fatalf("no poll marker: %s", main)
	}
	again := trackVersionRE.FindStringSubmatch(b.get("/t/" + secret).body)
	if again == nil || again[2] != m[2] {
		t.Fatalf("version moved without a change: %v %v", m, again)
	}
	digest := hiddenDigestRE.FindStringSubmatch(got.body)[1]
	r.clock.Advance(time.Second)
	if ans := b.post("/t/"+secret+"/answer", url.Values{"csrf": {b.cookie(web.CSRFCookie)}, "digest": {digest}, "answer": {"yes"}}); ans.status != http.StatusSeeOther {
		t.Fatalf("answer: %d", ans.status)
	}
	after := trackVersionRE.FindStringSubmatch(b.get("/t/" + secret).body)
	if after == nil || after[2] == m[2] {
		t.Fatalf("version unchanged after the answer: %v", after)
	}
}

// askReproFrom is askRepro for a case already past start_triage.
func (r *rig) askReproFrom(t *testing.T, c signoff.Case, output string) {
	t.Helper()
	c, err := r.store.GetCase(context.Background(), r.owner, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != "ticketed" {
		t.Fatalf("case is %s", c.State)
	}
	ctx := context.Background()
	l, _, err := r.store.AdvanceLoop(ctx, signoff.SystemActor(r.ws.ID), signoff.LoopUpdate{CaseID: c.ID, State: signoff.BugLoopState{Round: 1}, Command: "start_reproduction"})
	if err != nil {
		t.Fatalf("start reproduction: %v", err)
	}
	st := signoff.BugLoopState{Round: 1, Harnesses: []signoff.HarnessRecord{{ID: "har_" + c.ID[5:], Round: 1, Status: signoff.HarnessProposed,
		Digest: strings.Repeat("d", 64), FailingOutput: output, ProposedBy: r.owner.ID, ProposedAt: r.clock.Now()}}}
	if _, _, err := r.store.AdvanceLoop(ctx, r.owner, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "propose_reproduction"}); err != nil {
		t.Fatalf("propose reproduction: %v", err)
	}
}

// TestReportedPage: after filing, the page offers a copy button (shown by
// track.js) and says what happens with an e-mail address only as far as
// the code does it: the link is never mailed, and news goes by mail only
// when the workspace has an enabled e-mail channel.
func TestReportedPage(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	form := "/p/" + r.proj.ID + "/report"
	file := func(contact string) served {
		b := r.visitor(t)
		got := b.post(form, url.Values{"csrf": {b.csrf(form)}, "text": {"The cart empties itself"}, "contact": {contact}})
		if got.status != http.StatusCreated {
			t.Fatalf("report: %d %s", got.status, mainElement(got.body))
		}
		return got
	}
	got := file("")
	for _, want := range []string{`<button type="button" id="copy-link" hidden>Copy link</button>`, `id="copy-status"`, `<script src="/static/track.js" defer></script>`} {
		if !strings.Contains(got.body, want) {
			t.Errorf("reported page lacks %s", want)
		}
	}
	if strings.Contains(got.body, `id="contact-note"`) {
		t.Error("a note about an e-mail nobody gave")
	}
	got = file("rita@example.com")
	note := elementByID(got.body, "contact-note")
	if !strings.Contains(note, "We did not send this link by e-mail") || !strings.Contains(note, "We do not send news by e-mail") || strings.Contains(note, "We will write") {
		t.Errorf("note without a mail channel: %s", note)
	}
	if strings.Contains(got.body, "rita@example.com") {
		t.Error("the page repeats the address")
	}
	// A channel's secrets are sealed: the store needs a key for any.
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	box, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	r.store.SetSealer(box)
	if _, err := r.store.PutChannel(context.Background(), r.owner, signoff.ChannelInput{Name: "reporters", Kind: signoff.ChannelEmail,
		Settings: signoff.ChannelSettings{SMTPHost: "mail.invalid", SMTPPort: 587, From: "desk@example.com", StartTLS: "required"}}); err != nil {
		t.Fatal(err)
	}
	got = file("rita@example.com")
	if note := elementByID(got.body, "contact-note"); !strings.Contains(note, "We did not send this link by e-mail") || !strings.Contains(note, "We will write to the address you gave") {
		t.Errorf("note with a mail channel: %s", note)
	}
}
