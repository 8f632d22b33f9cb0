package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/ratelimit"
	"github.com/signoff-dev/signoff/web"
)

// TestTrackPageUnderSharedAddress: on the default budgets, a reporter
// refreshing their page is never refused, a second reporter on the same
// address files and follows theirs, and only bad links are limited, with
// a page that says when to try again.
func TestTrackPageUnderSharedAddress(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{opts: web.Options{Public: ratelimit.NewPublic(ratelimit.Budgets{})}})
	alice, bob := r.visitor(t), r.visitor(t)
	form := "/p/" + r.proj.ID + "/report"
	links := map[*visitor]string{}
	for b, text := range map[*visitor]string{alice: "checkout button does nothing", bob: "the coupon is applied twice"} {
		got := b.post(form, url.Values{"csrf": {b.csrf(form)}, "text": {text}})
		if got.status != http.StatusCreated {
			t.Fatalf("file %q: %d %s", text, got.status, mainElement(got.body))
		}
		m := regexp.MustCompile(`<a id="tracking-link" href="(/t/[^"]+)">`).FindStringSubmatch(got.body)
		if m == nil {
			t.Fatalf("no tracking link in %s", mainElement(got.body))
		}
		links[b] = m[1]
	}
	for i := range 200 {
		if got := alice.get(links[alice]); got.status != http.StatusOK {
			t.Fatalf("alice's read %d: %d %s", i, got.status, mainElement(got.body))
		}
		if i%20 == 0 {
			if got := bob.get(links[bob]); got.status != http.StatusOK {
				t.Fatalf("bob's read: %d %s", got.status, mainElement(got.body))
			}
		}
	}
	guesser := r.visitor(t)
	var limited served
	for i := range 20 {
		got := guesser.get("/t/trk_" + strings.Repeat("q", 26) + "_" + strconv.Itoa(i))
		if got.status == http.StatusTooManyRequests {
			limited = got
			break
		}
		if got.status != http.StatusNotFound {
			t.Fatalf("bad link %d: %d", i, got.status)
		}
	}
	if limited.status != http.StatusTooManyRequests {
		t.Fatal("20 bad links from one address were not limited")
	}
	secs, err := strconv.Atoi(limited.header.Get("Retry-After"))
	if err != nil || secs < 1 {
		t.Fatalf("Retry-After %q", limited.header.Get("Retry-After"))
	}
	msg := textOf(elementByID(limited.body, "error"))
	if !strings.Contains(limited.body, "<h1>Please wait a moment</h1>") || !strings.Contains(msg, "Please try again in ") ||
		!strings.Contains(elementByID(limited.body, "try-again"), `href="/t/trk_`) {
		t.Fatalf("429 page: %s", mainElement(limited.body))
	}
	checkPage(t, "429 page", limited.body)
	if got := alice.get(links[alice]); got.status != http.StatusOK {
		t.Fatalf("alice after the guessing: %d", got.status)
	}
}

// TestRefusedFormsKeepWhatWasWritten: a report or an answer refused by a
// limit is shown again with the text, and says when to try again.
func TestRefusedFormsKeepWhatWasWritten(t *testing.T) {
	t.Parallel()
	pub := ratelimit.NewPublic(ratelimit.Budgets{IntakePerAddress: ratelimit.Limit{Rate: 1e-9, Burst: 1}, WritePerLink: ratelimit.Limit{Rate: 1e-9, Burst: 1}})
	r := newRig(t, rigOptions{opts: web.Options{Public: pub}})
	b := r.visitor(t)
	form := "/p/" + r.proj.ID + "/report"
	if got := b.post(form, url.Values{"csrf": {b.csrf(form)}, "text": {"first"}}); got.status != http.StatusCreated {
		t.Fatalf("first report: %d", got.status)
	}
	const text = "the second report, typed with care"
	got := b.post(form, url.Values{"csrf": {b.csrf(form)}, "text": {text}, "device": {"Pixel 8"}})
	if got.status != http.StatusTooManyRequests || got.header.Get("Retry-After") == "" {
		t.Fatalf("second report: %d %s", got.status, got.header)
	}
	if e := textOf(elementByID(got.body, "report-error")); !strings.Contains(e, "Please try again in ") || !strings.Contains(e, "was not sent") ||
		!strings.Contains(got.body, ">"+text+"</textarea>") || !strings.Contains(got.body, `value="Pixel 8"`) {
		t.Fatalf("refused report page: %s", mainElement(got.body))
	}

	c, secret := r.report(t, "it crashes")
	ctx := context.Background()
	for _, cmd := range []string{"start_triage", "request_info"} {
		if _, _, err := r.store.TransitionCase(ctx, r.owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	page := b.get("/t/" + secret)
	token := csrfFieldRE.FindStringSubmatch(page.body)[1]
	// An empty answer is shown again as a read, not a write.
	if got := b.post("/t/"+secret+"/info", url.Values{"csrf": {token}, "text": {""}}); got.status != http.StatusUnprocessableEntity {
		t.Fatalf("empty info: %d", got.status)
	}
	if got := b.post("/t/"+secret+"/info", url.Values{"csrf": {token}, "text": {"Pixel 8"}}); got.status != http.StatusSeeOther {
		t.Fatalf("first info: %d %s", got.status, mainElement(got.body))
	}
	// The link's one write is spent: the next is refused before anything
	// is read, and the page keeps what was written.
	const info = "and app 2.3.1, since Monday"
	got = b.post("/t/"+secret+"/info", url.Values{"csrf": {token}, "text": {info}})
	if got.status != http.StatusTooManyRequests || !strings.Contains(elementByID(got.body, "kept"), ">"+info+"</textarea>") ||
		!strings.Contains(textOf(elementByID(got.body, "error")), "Please try again in ") {
		t.Fatalf("refused info: %d %s", got.status, mainElement(got.body))
	}
	checkPage(t, "refused info", got.body)
}
