package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/ratelimit"
)

// Third-round attack tests for the public routes' budgets. The one whose
// comment says "Was a hole" failed in review and was fixed; the others
// held.

// TestAttack3PaceBypassesAddressOverHTTP: links filed through the
// public API from other addresses, then all read from one address: each
// link brings its own PacePerLink (30 at once, 1 a second) that the
// address's budget never sees, so the address's bound grows with the
// links it holds. Scaled down (address burst 30, four links: 150 reads);
// on the defaults every link adds 30 to the 3,000 and 1/s to the 300/s
// (ratelimit.TestAttack3PaceMultipliesAddressBudget). Was a hole: the
// pace allowance is a reserve of a tenth of the address's budget.
func TestAttack3PaceBypassesAddressOverHTTP(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	addr := ratelimit.Limit{Rate: 1e-9, Burst: 30}
	pub := ratelimit.NewPublic(ratelimit.Budgets{LinkPerAddress: addr})
	srv := serve(t, store, nil, httpapi.WithDesk(&bugdesk.Desk{Store: store}), httpapi.WithPublicLimits(pub), loopbackProxies(t))
	call := func(rq request) response { return do(t, srv, rq) }
	var toks []string
	for i := range 4 {
		_, tok := fileCase(t, call, w.proj.ID, from(fmt.Sprintf("192.0.2.%d", i+1)))
		toks = append(toks, tok)
	}
	nat := from("198.51.100.1")
	read := 0
	for _, tok := range toks {
		for range 60 {
			got := call(request{method: "GET", path: "/api/v1/track/" + tok, header: nat})
			if got.status != http.StatusOK {
				break
			}
			read++
		}
	}
	if read > 2*addr.Burst {
		t.Fatalf("one address read %d pages through %d links filed elsewhere; its link budget is %d: bound the pace exemption per address",
			read, len(toks), addr.Burst)
	}
}

// TestAttack3RefusedAnswerReadsNoBody: an answer past the link's write
// budget is refused (429) before its body is decoded, whatever its size,
// with one lookup and no Store.Answer.
func TestAttack3RefusedAnswerReadsNoBody(t *testing.T) {
	t.Parallel()
	db := openStore(t)
	w := newWorkspace(t, db, "Acme")
	cs := &countingStore{DB: db}
	pub := ratelimit.NewPublic(ratelimit.Budgets{WritePerLink: ratelimit.Limit{Rate: 1e-9, Burst: 1}})
	srv := serve(t, cs, nil, httpapi.WithDesk(&bugdesk.Desk{Store: cs}), httpapi.WithPublicLimits(pub))
	call := func(rq request) response { return do(t, srv, rq) }
	_, tok := fileCase(t, call, w.proj.ID, nil)
	// The one write, with an empty text (refused by the store).
	call(request{method: "POST", path: "/api/v1/track/" + tok + "/answers", body: `{"text":""}`})
	before, answers := cs.resolve.Load(), cs.answer.Load()
	big := `{"text":"` + strings.Repeat("a", 200<<10) + `"}`
	for _, body := range []string{big, `not json`, `{"text":"Pixel 8"}`} {
		if got := call(request{method: "POST", path: "/api/v1/track/" + tok + "/answers", body: body}); got.status != http.StatusTooManyRequests {
			t.Fatalf("answer past the write budget (%d bytes): %d %s", len(body), got.status, got.body)
		}
	}
	if n := cs.resolve.Load() - before; n != 3 || cs.answer.Load() != answers {
		t.Fatalf("3 refused answers: %d lookups, %d Store.Answer calls", n, cs.answer.Load()-answers)
	}
}

// TestAttack3EmbeddedFormsShareIPv4Budget: behind a trusted proxy, an
// IPv4 client that also reaches the server over Teredo or NAT64 is one
// address: switching form gets no fresh intake budget, and its
// neighbours' budgets are their own.
func TestAttack3EmbeddedFormsShareIPv4Budget(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	pub := ratelimit.NewPublic(ratelimit.Budgets{IntakePerAddress: ratelimit.Limit{Rate: 1e-9, Burst: 2}})
	srv := serve(t, store, nil, httpapi.WithPublicLimits(pub), loopbackProxies(t))
	post := func(xff string) int {
		return do(t, srv, request{method: "POST", path: "/api/v1/projects/" + w.proj.ID + "/reports", body: `{"text":"checkout is broken"}`, header: from(xff)}).status
	}
	for range 2 {
		if s := post("192.0.2.45"); s != http.StatusCreated {
			t.Fatalf("report within the budget: %d", s)
		}
	}
	// (The local-use prefix 64:ff9b:1::/48 is keyed on its whole address,
	// since its layout depends on the operator's prefix length: one key
	// per translated client, but not the client's IPv4 key.)
	for _, xff := range []string{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "64:ff9b::c000:22d"} {
		if s := post(xff); s != http.StatusTooManyRequests {
			t.Errorf("192.0.2.45 as %s after its budget: %d", xff, s)
		}
	}
	if s := post("2001:0:4136:e378:8000:63bf:3fff:fdd1"); s != http.StatusCreated {
		t.Errorf("neighbour 192.0.2.46 over Teredo: %d", s)
	}
}
