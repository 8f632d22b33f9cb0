package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/clientip"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/ratelimit"
)

// fileReport files one public report and returns its tracking token.
func fileReport(t *testing.T, do func(request) response, project, text string, header map[string]string) string {
	t.Helper()
	_, token := fileReportCase(t, do, project, text, header)
	return token
}

// fileReportCase files one public report and returns its case id and
// tracking token.
func fileReportCase(t *testing.T, do func(request) response, project, text string, header map[string]string) (string, string) {
	t.Helper()
	got := do(request{method: "POST", path: "/api/v1/projects/" + project + "/reports", body: fmt.Sprintf(`{"text":%q}`, text), header: header})
	if got.status != http.StatusCreated {
		t.Fatalf("file %q: %d %s", text, got.status, got.body)
	}
	var c struct {
		CaseID   string                 `json:"case_id"`
		Tracking struct{ Token string } `json:"tracking"`
	}
	if err := json.Unmarshal(got.body, &c); err != nil || c.Tracking.Token == "" || c.CaseID == "" {
		t.Fatalf("no case or tracking token: %s", got.body)
	}
	return c.CaseID, c.Tracking.Token
}

// TestTrackingUnderSharedAddress runs on the default budgets: every client
// here is 127.0.0.1, one shared address, as behind carrier-grade NAT.
func TestTrackingUnderSharedAddress(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil, httpapi.WithDesk(&bugdesk.Desk{Store: store}))
	call := func(rq request) response { return do(t, srv, rq) }

	// Two reporters behind one address both file and follow their reports.
	alice := fileReport(t, call, w.proj.ID, "checkout button does nothing", nil)
	bob := fileReport(t, call, w.proj.ID, "the coupon is applied twice", nil)

	// 200 reads of one link in a row (well inside a minute), interleaved
	// with the other reporter's page: none refused.
	for i := range 200 {
		if got := call(request{method: "GET", path: "/api/v1/track/" + alice}); got.status != http.StatusOK {
			t.Fatalf("read %d of alice's link: %d %s", i, got.status, got.body)
		}
		if i%10 == 0 {
			if got := call(request{method: "GET", path: "/api/v1/track/" + bob}); got.status != http.StatusOK {
				t.Fatalf("bob's read after %d of alice's: %d %s", i, got.status, got.body)
			}
		}
	}

	// Twenty lookups with bad tokens from the same address: the first are
	// "not found", then 429 with Retry-After and plain words.
	bad := []string{"nonsense", "trk_" + strings.Repeat("z", 40), alice[:len(alice)-1] + flip(alice[len(alice)-1])}
	var notFound, limited int
	for i := range 20 {
		got := call(request{method: "GET", path: "/api/v1/track/" + bad[i%len(bad)]})
		switch got.status {
		case http.StatusNotFound:
			if limited > 0 {
				t.Fatalf("bad token %d answered 404 after a 429", i)
			}
			notFound++
		case http.StatusTooManyRequests:
			limited++
			secs, err := strconv.Atoi(got.header.Get("Retry-After"))
			if err != nil || secs < 1 || secs > 60 || problemCode(t, got) != signoff.ERATELIMIT || !strings.Contains(string(got.body), "Please try again in ") {
				t.Fatalf("bad token %d: Retry-After %q, %s", i, got.header.Get("Retry-After"), got.body)
			}
		default:
			t.Fatalf("bad token %d: %d %s", i, got.status, got.body)
		}
	}
	if notFound != 10 || limited != 10 {
		t.Fatalf("bad tokens: %d not found, %d limited; want 10 and 10", notFound, limited)
	}
	// A guesser on the shared address does not lock the reporters out.
	for _, tok := range []string{alice, bob} {
		if got := call(request{method: "GET", path: "/api/v1/track/" + tok}); got.status != http.StatusOK {
			t.Fatalf("reporter's read after the guessing: %d %s", got.status, got.body)
		}
	}
	// The alice-lookalike (her link id, a wrong secret) spent nothing of
	// her link's budget: it is keyed on ids a lookup authenticated.
	if got := call(request{method: "POST", path: "/api/v1/track/" + alice + "/answers", body: `{"text":"Pixel 8"}`}); got.status == http.StatusTooManyRequests {
		t.Fatalf("alice's answer refused: %d %s", got.status, got.body)
	}
}

// flip changes one character of a token to another of the same alphabet.
func flip(c byte) string {
	if c == 'a' {
		return "b"
	}
	return "a"
}

// TestAnswersPerLink: answers through one link have their own budget, and
// one reporter's answers do not spend another's.
func TestAnswersPerLink(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	pub := ratelimit.NewPublic(ratelimit.Budgets{WritePerLink: ratelimit.Limit{Rate: 1e-9, Burst: 3}})
	srv := serve(t, store, nil, httpapi.WithDesk(&bugdesk.Desk{Store: store}), httpapi.WithPublicLimits(pub))
	call := func(rq request) response { return do(t, srv, rq) }
	alice := fileReport(t, call, w.proj.ID, "checkout button does nothing", nil)
	bob := fileReport(t, call, w.proj.ID, "the coupon is applied twice", nil)
	// Three writes of either kind (the store may refuse them: a case
	// that needs no answer is 409), then the link's budget is spent.
	for i, rq := range []request{
		{method: "POST", path: "/api/v1/track/" + alice + "/answers", body: `{"text":"Pixel 8"}`},
		{method: "POST", path: "/api/v1/track/" + alice + "/decision", body: `{"question_digest":"sha256:00","answer":"yes"}`},
		{method: "POST", path: "/api/v1/track/" + alice + "/answers", body: `{"text":"Pixel 8"}`},
	} {
		if got := call(rq); got.status == http.StatusTooManyRequests || got.status >= 500 {
			t.Fatalf("write %d: %d %s", i, got.status, got.body)
		}
	}
	got := call(request{method: "POST", path: "/api/v1/track/" + alice + "/answers", body: `{"text":"Pixel 8"}`})
	if got.status != http.StatusTooManyRequests || got.header.Get("Retry-After") == "" {
		t.Fatalf("alice's write past her link's budget: %d %s", got.status, got.body)
	}
	if got := call(request{method: "POST", path: "/api/v1/track/" + bob + "/answers", body: `{"text":"iPhone 15"}`}); got.status == http.StatusTooManyRequests {
		t.Fatalf("bob's answer spent by alice's: %d %s", got.status, got.body)
	}
	// Reads of her page are a separate budget.
	if got := call(request{method: "GET", path: "/api/v1/track/" + alice}); got.status != http.StatusOK {
		t.Fatalf("alice's read: %d %s", got.status, got.body)
	}
}

// TestForwardedForTrustedOnlyFromProxies: X-Forwarded-For moves the limit
// to another key only when the connection comes from a configured proxy.
func TestForwardedForTrustedOnlyFromProxies(t *testing.T) {
	t.Parallel()
	intake := ratelimit.Budgets{IntakePerAddress: ratelimit.Limit{Rate: 1e-9, Burst: 2}}
	tests := []struct {
		name    string
		proxies string
		// want is how many of four reports from four claimed addresses
		// are accepted.
		want int
	}{
		{"no proxies configured", "", 2},
		{"the peer is not a configured proxy", "10.0.0.0/8, 192.0.2.1", 2},
		{"the peer is a configured proxy", "127.0.0.0/8", 4},
		{"the peer is a configured proxy (IPv6 loopback too)", "::1, 127.0.0.1", 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			store := openStore(t)
			w := newWorkspace(t, store, "Acme")
			res, err := clientip.Parse(tc.proxies)
			if err != nil {
				t.Fatal(err)
			}
			srv := serve(t, store, nil, httpapi.WithPublicLimits(ratelimit.NewPublic(intake)), httpapi.WithTrustedProxies(res))
			accepted := 0
			for i := range 4 {
				got := do(t, srv, request{method: "POST", path: "/api/v1/projects/" + w.proj.ID + "/reports", body: `{"text":"it crashes"}`,
					header: map[string]string{"X-Forwarded-For": fmt.Sprintf("198.51.100.%d", i+1)}})
				switch got.status {
				case http.StatusCreated:
					accepted++
				case http.StatusTooManyRequests:
				default:
					t.Fatalf("report %d: %d %s", i, got.status, got.body)
				}
			}
			if accepted != tc.want {
				t.Fatalf("%d of 4 reports accepted, want %d", accepted, tc.want)
			}
		})
	}
}

// TestIntakeCeiling: the server's ceiling holds across projects and
// addresses, and says so in plain words.
func TestIntakeCeiling(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	a := newWorkspace(t, store, "Acme")
	b := newWorkspace(t, store, "Bolt")
	pub := ratelimit.NewPublic(ratelimit.Budgets{IntakeTotal: ratelimit.Limit{Rate: 1e-9, Burst: 3}, IntakePerAddress: ratelimit.Limit{Rate: 1e6, Burst: 1e6}})
	res, _ := clientip.Parse("127.0.0.0/8, ::1")
	srv := serve(t, store, nil, httpapi.WithPublicLimits(pub), httpapi.WithTrustedProxies(res))
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			proj := a.proj.ID
			if i%2 == 1 {
				proj = b.proj.ID
			}
			got := do(t, srv, request{method: "POST", path: "/api/v1/projects/" + proj + "/reports", body: `{"text":"it crashes"}`,
				header: map[string]string{"X-Forwarded-For": fmt.Sprintf("203.0.113.%d", i+1)}})
			mu.Lock()
			statuses[got.status]++
			mu.Unlock()
			if got.status == http.StatusTooManyRequests && !strings.Contains(string(got.body), "This project is receiving more reports than it can take just now.") {
				t.Errorf("ceiling's words: %s", got.body)
			}
		}()
	}
	wg.Wait()
	if statuses[http.StatusCreated] != 3 || statuses[http.StatusTooManyRequests] != 3 {
		t.Fatalf("statuses %v, want 3 created and 3 limited", statuses)
	}
}
