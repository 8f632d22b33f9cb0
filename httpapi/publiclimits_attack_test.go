package httpapi_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/clientip"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/ratelimit"
)

// Attack tests for the public routes' budgets, from the review of the
// change that introduced them. The ones whose comment ends "Was a hole"
// failed then and were fixed; the others held from the start.

// loopbackProxies trusts the test client's own address, so that
// X-Forwarded-For names the client the test pretends to be.
func loopbackProxies(t *testing.T) httpapi.Option {
	t.Helper()
	res, err := clientip.Parse("127.0.0.0/8, ::1")
	if err != nil {
		t.Fatal(err)
	}
	return httpapi.WithTrustedProxies(res)
}

func from(addr string) map[string]string { return map[string]string{"X-Forwarded-For": addr} }

// TestAttackGarbageProjectSpendsIntake: the API spends the intake
// budgets (the client's, the "project's" and the server's ceiling) before
// it knows the project exists, so posts to projects that do not exist
// drain the server-wide ceiling and refuse real reporters, without leaving
// a single case behind. The web form looks the project up first. Was a
// hole: the API now does too.
func TestAttackGarbageProjectSpendsIntake(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	pub := ratelimit.NewPublic(ratelimit.Budgets{IntakeTotal: ratelimit.Limit{Rate: 1e-9, Burst: 3}})
	srv := serve(t, store, nil, httpapi.WithPublicLimits(pub), loopbackProxies(t))
	for i, p := range []string{"nope", "prj_" + strings.Repeat("0", 26), strings.Repeat("x", 2000)} {
		got := do(t, srv, request{method: "POST", path: "/api/v1/projects/" + p + "/reports", body: `{"text":"spam"}`, header: from(fmt.Sprintf("203.0.113.%d", i+1))})
		if got.status == http.StatusCreated {
			t.Fatalf("report into %q created", p[:min(len(p), 20)])
		}
	}
	got := do(t, srv, request{method: "POST", path: "/api/v1/projects/" + w.proj.ID + "/reports", body: `{"text":"checkout is broken"}`, header: from("198.51.100.7")})
	if got.status != http.StatusCreated {
		t.Fatalf("a real reporter on another address, after 3 posts to projects that do not exist: %d %s", got.status, got.body)
	}
}

// TestAttackProjectKeysRetainMemory: the per-project bucket is keyed
// on the path's {id} before the project is checked, so every accepted
// post to a made-up project id of ~60 KiB (under the server's 64 KiB
// header limit) keeps that string alive in the limiter until the next
// sweep (up to a minute and more). On the default budgets the server's
// ceiling alone admits 500 at once and 50 a second, from clients each of
// whom needs only 5 (a /48 has 65,536 of them). Was a hole: the project
// is checked first.
func TestAttackProjectKeysRetainMemory(t *testing.T) {
	store := openStore(t)
	_ = newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil, httpapi.WithPublicLimits(ratelimit.NewPublic(ratelimit.Budgets{})), loopbackProxies(t))
	const idLen = 60 << 10
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	admitted := 0
	for i := range 400 {
		id := fmt.Sprintf("%d-%s", i, strings.Repeat("q", idLen))
		// Each /64 of one /48 is a fresh client with a burst of 5.
		got := do(t, srv, request{method: "POST", path: "/api/v1/projects/" + id + "/reports", body: `{"text":"x"}`, header: from(fmt.Sprintf("2001:db8:42:%x::1", i/5))})
		if got.status != http.StatusTooManyRequests {
			admitted++
		}
	}
	srv.Client().CloseIdleConnections()
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if grown > 8<<20 {
		t.Fatalf("%d posts to made-up project ids admitted into the limiter; the heap kept %d MiB after GC (keys live until a sweep); check the project id (shape, existence) before spending the buckets", admitted, grown>>20)
	}
}

// TestAttackNATNeighbourLocksOutLink: the design answers a valid link
// even when the address's miss budget is spent, so that one guesser
// behind carrier NAT cannot lock the other reporters out. But every
// request, found or not, first spends the address's link budget (100 a
// second, bursts of 1000), so a guesser who simply sends more than 100
// bad lookups a second refuses every reporter behind the same address
// their own, valid link. Was a hole: the link is looked up first, and
// misses spend only the miss budget.
func TestAttackNATNeighbourLocksOutLink(t *testing.T) {
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil, httpapi.WithDesk(&bugdesk.Desk{Store: store}), httpapi.WithPublicLimits(ratelimit.NewPublic(ratelimit.Budgets{})))
	call := func(rq request) response { return do(t, srv, rq) }
	alice := fileReport(t, call, w.proj.ID, "checkout button does nothing", nil)

	var sent, linkRefused atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Transport: srv.Client().Transport}
			for {
				select {
				case <-stop:
					return
				default:
				}
				res, err := c.Get(srv.URL + "/api/v1/track/nonsense-" + fmt.Sprint(rand.Int()))
				if err != nil {
					continue
				}
				var b [512]byte
				n, _ := res.Body.Read(b[:])
				res.Body.Close()
				sent.Add(1)
				if res.StatusCode == http.StatusTooManyRequests && strings.Contains(string(b[:n]), "Please try again") {
					linkRefused.Add(1)
				}
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for (sent.Load() < 1500 || linkRefused.Load() < 50) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	refused := 0
	for range 20 {
		if got := call(request{method: "GET", path: "/api/v1/track/" + alice}); got.status == http.StatusTooManyRequests {
			refused++
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if refused > 0 {
		t.Fatalf("a guesser on alice's address (%d bad lookups, %d refused on the address budget) had %d of alice's 20 reads of her valid link refused", sent.Load(), linkRefused.Load(), refused)
	}
}

// TestAttackSweepResetsRateZeroBuckets: a Limit of Rate 0 (or a
// tiny rate, as the tests here use) and Burst >= 10 means "Burst, then
// wait" (until() answers an hour), but sweep's "full" duration overflows
// time.Duration to a negative value, so the first sweep a minute later
// deletes every bucket and each address starts over with a full burst.
// Not reachable from the serve flags; reachable through ratelimit.Budgets
// and web.Limit. Was a hole (latent): the sweep keeps buckets that have
// not refilled.
func TestAttackSweepResetsRateZeroBuckets(t *testing.T) {
	t.Parallel()
	for _, l := range []ratelimit.Limit{{Rate: 0, Burst: 10}, {Rate: 1e-9, Burst: 10}} {
		p := ratelimit.NewPublic(ratelimit.Budgets{MissPerAddress: l})
		t0 := time.Now()
		for range 10 {
			p.Miss(ratelimit.Client{Addr: "203.0.113.1"}, t0)
		}
		if p.Miss(ratelimit.Client{Addr: "203.0.113.1"}, t0) == 0 {
			t.Fatalf("%+v: the 11th miss was not refused", l)
		}
		if wait := p.Miss(ratelimit.Client{Addr: "203.0.113.1"}, t0.Add(61*time.Second)); wait == 0 {
			t.Errorf("%+v: a minute later the spent bucket was swept away and the miss is allowed again", l)
		}
	}
}

// TestAttackMissBudgetAcrossRoutes: reads, answers and decisions with bad
// tokens, lookalikes of a real link (its id, a wrong secret), HEAD and
// escaped forms all spend the one miss budget; path variants that do not
// reach a lookup say nothing about any link; a lookalike spends nothing
// of the real link's write budget.
func TestAttackMissBudgetAcrossRoutes(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	pub := ratelimit.NewPublic(ratelimit.Budgets{MissPerAddress: ratelimit.Limit{Rate: 1e-9, Burst: 6}, WritePerLink: ratelimit.Limit{Rate: 1e-9, Burst: 1}})
	srv := serve(t, store, nil, httpapi.WithDesk(&bugdesk.Desk{Store: store}), httpapi.WithPublicLimits(pub), loopbackProxies(t))
	call := func(rq request) response { return do(t, srv, rq) }
	alice := fileReport(t, call, w.proj.ID, "checkout button does nothing", from("198.51.100.1"))
	look := alice[:len(alice)-1] + flip(alice[len(alice)-1])
	attacker := from("203.0.113.66")
	misses := []request{
		{method: "GET", path: "/api/v1/track/" + look},
		{method: "HEAD", path: "/api/v1/track/" + look},
		{method: "POST", path: "/api/v1/track/" + look + "/answers", body: `{"text":"x"}`},
		{method: "POST", path: "/api/v1/track/" + look + "/decision", body: `{"question_digest":"sha256:00","answer":"yes"}`},
		{method: "GET", path: "/api/v1/track/" + strings.ReplaceAll(look, "_", "%5F")},
		{method: "GET", path: "/api/v1/track/" + strings.ToUpper(alice)},
	}
	for i, rq := range misses {
		rq.header = attacker
		if got := call(rq); got.status != http.StatusNotFound {
			t.Fatalf("miss %d (%s %s): %d %s", i, rq.method, rq.path, got.status, got.body)
		}
	}
	for i, rq := range misses {
		rq.header = attacker
		got := call(rq)
		if got.status != http.StatusTooManyRequests {
			t.Fatalf("miss %d past the budget (%s %s): %d %s", i, rq.method, rq.path, got.status, got.body)
		}
	}
	// Variants that reach no lookup: 404 or 405 from the router, never
	// a lookup's answer.
	for _, p := range []string{"/api/v1/track/" + look + "/", "/api/v1/track/" + look + "/answers/", "/api/v1/track//" + look, "/api/v1/track/" + look + "/../" + alice} {
		got := call(request{method: "GET", path: p, header: attacker})
		if strings.Contains(string(got.body), "no case for this link") || got.status == http.StatusOK {
			t.Fatalf("%s: %d %s", p, got.status, got.body)
		}
	}
	// The lookalike's writes spent nothing of alice's one write.
	if got := call(request{method: "POST", path: "/api/v1/track/" + alice + "/answers", body: `{"text":"Pixel 8"}`, header: from("198.51.100.1")}); got.status == http.StatusTooManyRequests {
		t.Fatalf("alice's answer after the lookalikes: %d %s", got.status, got.body)
	}
	// Alice's link still answers from the guesser's address (the design
	// decision).
	if got := call(request{method: "GET", path: "/api/v1/track/" + alice, header: attacker}); got.status != http.StatusOK {
		t.Fatalf("valid link from the guesser's address: %d", got.status)
	}
}

// TestAttackIntakeAllOrNothingUnderRace: 20 reports from one address
// (budget 1) race 20 from 20 addresses against a ceiling of 10; the
// address's refusals take nothing from the ceiling, so exactly 10 are
// filed, and nothing is filed past it.
func TestAttackIntakeAllOrNothingUnderRace(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	pub := ratelimit.NewPublic(ratelimit.Budgets{IntakeTotal: ratelimit.Limit{Rate: 1e-9, Burst: 10}, IntakePerAddress: ratelimit.Limit{Rate: 1e-9, Burst: 1}})
	srv := serve(t, store, nil, httpapi.WithPublicLimits(pub), loopbackProxies(t))
	var created, limited atomic.Int64
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			addr := "203.0.113.1"
			if i%2 == 1 {
				addr = fmt.Sprintf("198.51.100.%d", i)
			}
			got := do(t, srv, request{method: "POST", path: "/api/v1/projects/" + w.proj.ID + "/reports", body: `{"text":"it crashes"}`, header: from(addr)})
			switch got.status {
			case http.StatusCreated:
				created.Add(1)
			case http.StatusTooManyRequests:
				limited.Add(1)
			default:
				t.Errorf("report %d: %d %s", i, got.status, got.body)
			}
		}()
	}
	wg.Wait()
	if created.Load() != 10 || limited.Load() != 30 {
		t.Fatalf("%d created, %d limited; want 10 and 30", created.Load(), limited.Load())
	}
}

// TestAttackForwardedForWithoutTrust: with no trusted proxy every
// X-Forwarded-For trick is ignored: the miss budget stays the peer's.
func TestAttackForwardedForWithoutTrust(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	_ = newWorkspace(t, store, "Acme")
	pub := ratelimit.NewPublic(ratelimit.Budgets{MissPerAddress: ratelimit.Limit{Rate: 1e-9, Burst: 3}})
	srv := serve(t, store, nil, httpapi.WithPublicLimits(pub))
	statuses := []int{}
	for i := range 6 {
		h := map[string]string{"X-Forwarded-For": fmt.Sprintf("2001:db8:%x::1, 198.51.100.%d", i, i), "X-Real-IP": "1.1.1.1", "Forwarded": "for=1.1.1.1"}
		statuses = append(statuses, do(t, srv, request{method: "GET", path: "/api/v1/track/nonsense" + fmt.Sprint(i), header: h}).status)
	}
	if fmt.Sprint(statuses) != "[404 404 404 429 429 429]" {
		t.Fatalf("statuses %v", statuses)
	}
}
