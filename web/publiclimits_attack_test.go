package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/ratelimit"
	"github.com/signoff-dev/signoff/web"
)

// Attack tests for the public pages' budgets, from the review of the
// change that introduced them. The ones whose comment says "Was a hole"
// failed then and were fixed; the others held from the start.

// rawGet sends request-target exactly as given (no client-side escaping)
// and returns the status and body.
func rawGet(t *testing.T, r *rig, target string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", r.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, r.srv.Listener.Addr())
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %q: %v", target, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

var tryAgainRE = regexp.MustCompile(`<a id="try-again" href="([^"]*)">Try again</a>`)

// TestAttackTryAgainLink: the 429 page's "Try again" link is built from
// the request path. Whatever the path, it stays a same-origin path under
// /t/, escaped, with no markup, scheme or second slash of its own.
func TestAttackTryAgainLink(t *testing.T) {
	t.Parallel()
	pub := ratelimit.NewPublic(ratelimit.Budgets{MissPerAddress: ratelimit.Limit{Rate: 1e-9, Burst: 1}})
	r := newRig(t, rigOptions{opts: web.Options{Public: pub}})
	b := r.visitor(t)
	if got := b.get("/t/nothing-here"); got.status != http.StatusNotFound {
		t.Fatalf("first miss: %d", got.status)
	}
	targets := []string{
		`/t/%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E`,
		`/t/"><script>alert(1)</script>`,
		`/t/'onmouseover='alert(1)`,
		`/t/javascript:alert(1)`,
		`/t/%2F%2Fevil.example`,
		`/t/%5C%5Cevil.example`,
		`/t/\\evil.example`,
		`/t/x%0d%0aSet-Cookie:%20a=b`,
		`/t/%E2%80%AEtxt.exe`,
		`/t/` + strings.Repeat("A", 8000),
		`http://evil.example/t/abs`,
	}
	checked := 0
	defer func() {
		if checked < 8 {
			t.Errorf("only %d of %d paths reached the 429 page", checked, len(targets))
		}
	}()
	for _, target := range targets {
		status, body := rawGet(t, r, target)
		if status == http.StatusBadRequest || status == http.StatusNotFound {
			// Refused by the server or the router before any lookup.
			if strings.Contains(body, "<script>") {
				t.Errorf("%.60s: %d page reflects markup", target, status)
			}
			continue
		}
		if status != http.StatusTooManyRequests {
			t.Errorf("%.60s: %d", target, status)
			continue
		}
		m := tryAgainRE.FindStringSubmatch(body)
		if m == nil {
			t.Errorf("%.60s: no try-again link in %s", target, elementByID(body, "error"))
			continue
		}
		href := m[1]
		checked++
		u, err := url.Parse(strings.ReplaceAll(href, "&amp;", "&"))
		if err != nil || !strings.HasPrefix(href, "/t/") || strings.HasPrefix(href, "//") || u.Scheme != "" || u.Host != "" ||
			strings.ContainsAny(href, "<>'\\ \r\n") || strings.Contains(body, "<script>") || strings.Contains(body, "Set-Cookie: a=b") {
			t.Errorf("%.60s: try-again href %q", target, href)
		}
	}
}

// TestAttackDoorsShareBudgets: the API and the pages share one Public, so
// a guesser's misses through one door count at the other, and a link's
// answers through the API count against the same link's writes on its
// page (refused with what was written kept). Lookalikes (the link's id,
// a wrong secret) through the page spend nothing of the link.
func TestAttackDoorsShareBudgets(t *testing.T) {
	t.Parallel()
	pub := ratelimit.NewPublic(ratelimit.Budgets{MissPerAddress: ratelimit.Limit{Rate: 1e-9, Burst: 4}, WritePerLink: ratelimit.Limit{Rate: 1e-9, Burst: 1}})
	r := newRig(t, rigOptions{opts: web.Options{Public: pub}})
	api := httptest.NewServer(httpapi.New(r.store, nil, httpapi.WithDesk(r.bug), httpapi.WithPublicLimits(pub)))
	t.Cleanup(api.Close)
	apiGet := func(path string) int {
		res, err := api.Client().Get(api.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	c, secret := r.report(t, "it crashes")
	look := secret[:len(secret)-1] + map[bool]string{true: "b", false: "a"}[secret[len(secret)-1] == 'a']
	b := r.visitor(t)
	// Two misses at each door, alternating; then both doors refuse.
	for i := range 4 {
		var st int
		if i%2 == 0 {
			st = apiGet("/api/v1/track/" + look)
		} else {
			st = b.get("/t/" + look).status
		}
		if st != http.StatusNotFound {
			t.Fatalf("miss %d: %d", i, st)
		}
	}
	if st := apiGet("/api/v1/track/" + look); st != http.StatusTooManyRequests {
		t.Fatalf("API past the shared miss budget: %d", st)
	}
	if st := b.get("/t/" + look).status; st != http.StatusTooManyRequests {
		t.Fatalf("page past the shared miss budget: %d", st)
	}
	// Lookalike writes through the page: the guesser's misses, not the
	// link's writes.
	ctx := context.Background()
	for _, cmd := range []string{"start_triage", "request_info"} {
		if _, _, err := r.store.TransitionCase(ctx, r.owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	page := b.get("/t/" + secret)
	m := csrfFieldRE.FindStringSubmatch(page.body)
	if page.status != http.StatusOK || m == nil {
		t.Fatalf("the valid page from the guesser's address: %d", page.status)
	}
	token := m[1]
	for range 3 {
		if got := b.post("/t/"+look+"/info", url.Values{"csrf": {token}, "text": {"x"}}); got.status != http.StatusTooManyRequests {
			t.Fatalf("lookalike write: %d", got.status)
		}
	}
	// The link's one write, through the API (a decision the desk refuses:
	// it still spends the write, and the case still needs the info); then
	// the page refuses the next and keeps the text.
	res, err := api.Client().Post(api.URL+"/api/v1/track/"+secret+"/decision", "application/json", strings.NewReader(`{"question_digest":"sha256:00","answer":"yes"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode == http.StatusTooManyRequests {
		t.Fatalf("the link's first write, through the API: %d", res.StatusCode)
	}
	got := b.post("/t/"+secret+"/info", url.Values{"csrf": {token}, "text": {"Pixel 8 again"}})
	if got.status != http.StatusTooManyRequests || !strings.Contains(got.body, ">Pixel 8 again</textarea>") {
		t.Fatalf("the link's second write, through the page: %d %s", got.status, mainElement(got.body))
	}
}

// TestAttackPageLookupsNeedCSRFFirst: posts to a tracking page without
// the anonymous CSRF pair are refused before the lookup, so they neither
// test a secret nor spend any budget; with it, lookalikes spend the
// guesser's miss budget.
func TestAttackPageLookupsNeedCSRFFirst(t *testing.T) {
	t.Parallel()
	pub := ratelimit.NewPublic(ratelimit.Budgets{MissPerAddress: ratelimit.Limit{Rate: 1e-9, Burst: 2}})
	r := newRig(t, rigOptions{opts: web.Options{Public: pub}})
	b := r.visitor(t)
	for i := range 20 {
		if got := b.post("/t/sot_nothing"+fmt.Sprint(i)+"/answer", url.Values{"answer": {"yes"}}); got.status != http.StatusForbidden {
			t.Fatalf("post without CSRF: %d", got.status)
		}
	}
	token := b.csrf("/login")
	for i, want := range []int{http.StatusNotFound, http.StatusNotFound, http.StatusTooManyRequests} {
		if got := b.post("/t/sot_nothing/answer", url.Values{"csrf": {token}, "answer": {"yes"}}); got.status != want {
			t.Fatalf("post %d with CSRF: %d, want %d", i, got.status, want)
		}
	}
}

// TestAttackWebIntakeChecksProjectFirst: the report form looks the
// project up before spending the intake budgets, so posts to projects
// that do not exist leave the server's ceiling to real reporters.
func TestAttackWebIntakeChecksProjectFirst(t *testing.T) {
	t.Parallel()
	pub := ratelimit.NewPublic(ratelimit.Budgets{IntakeTotal: ratelimit.Limit{Rate: 1e-9, Burst: 1}, IntakePerAddress: ratelimit.Limit{Rate: 1e6, Burst: 1e6}})
	r := newRig(t, rigOptions{opts: web.Options{Public: pub}})
	b := r.visitor(t)
	form := "/p/" + r.proj.ID + "/report"
	token := b.csrf(form)
	for _, p := range []string{"nope", "prj_" + strings.Repeat("0", 26), strings.Repeat("x", 3000)} {
		if got := b.post("/p/"+p+"/report", url.Values{"csrf": {token}, "text": {"spam"}}); got.status == http.StatusCreated || got.status == http.StatusTooManyRequests {
			t.Fatalf("report into a made-up project: %d", got.status)
		}
	}
	if got := b.post(form, url.Values{"csrf": {token}, "text": {"checkout is broken"}}); got.status != http.StatusCreated {
		t.Fatalf("the real report: %d %s", got.status, mainElement(got.body))
	}
}

// TestAttackGuesserLocksOutPageOnSharedAddress: the page answers a
// valid link past the address's miss budget (the design decision, so a
// guesser behind carrier NAT cannot lock the others out), but every
// lookup first spends the address's link budget, found or not: a guesser
// who spends it (here a burst of 20; by default 1000 and then anything
// over 100 a second) refuses every reporter on the address their own
// valid page. Was a hole: the link is looked up first, and misses spend
// only the miss budget.
func TestAttackGuesserLocksOutPageOnSharedAddress(t *testing.T) {
	t.Parallel()
	pub := ratelimit.NewPublic(ratelimit.Budgets{LinkPerAddress: ratelimit.Limit{Rate: 1e-9, Burst: 20}})
	r := newRig(t, rigOptions{opts: web.Options{Public: pub}})
	_, secret := r.report(t, "it crashes")
	alice, guesser := r.visitor(t), r.visitor(t)
	if got := alice.get("/t/" + secret); got.status != http.StatusOK {
		t.Fatalf("alice's page: %d", got.status)
	}
	for i := range 40 {
		guesser.get("/t/sot_guess" + fmt.Sprint(i))
	}
	if got := alice.get("/t/" + secret); got.status != http.StatusOK {
		t.Fatalf("alice's valid page after a guesser on her address: %d %s", got.status, textOf(elementByID(got.body, "error")))
	}
}
