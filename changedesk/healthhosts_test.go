package changedesk

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/netguard/netguardtest"

	"github.com/signoff-dev/signoff/change"
)

// TestHTTPProberHosts: a listed name is probed at the address it
// resolved to; a listed name that resolves to the cloud's metadata
// endpoint, or a name that rebinds to it after its first answer, is
// refused at the dial; an unlisted name is refused before any lookup.
func TestHTTPProberHosts(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1); w.Write([]byte("ok")) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	r := netguardtest.NewRebinding(map[string][]string{
		"probe.test":  {"127.0.0.1"},
		"meta.test":   {"169.254.169.254"},
		"rebind.test": {"127.0.0.1", "169.254.169.254"},
		"other.test":  {"127.0.0.1"},
	})
	hp := HTTPProber{Hosts: []string{"probe.test", "meta.test", "rebind.test"}, Resolver: r, Timeout: time.Second}
	probe := func(host string) Probe {
		return hp.Probe(context.Background(), change.HealthCheck{URL: "http://" + host + ":" + port + "/healthz", ExpectStatus: 200, ExpectBody: "ok"})
	}
	if pr := probe("probe.test"); !pr.OK {
		t.Fatalf("listed name: %+v", pr)
	}
	if pr := probe("meta.test"); pr.OK || !strings.Contains(pr.Detail, "cloud metadata") {
		t.Fatalf("listed name resolving to metadata: %+v", pr)
	}
	if pr := probe("rebind.test"); !pr.OK {
		t.Fatalf("rebind.test, first answer: %+v", pr)
	}
	if pr := probe("rebind.test"); pr.OK || !strings.Contains(pr.Detail, "cloud metadata") {
		t.Fatalf("rebind.test, rebound to metadata: %+v", pr)
	}
	if pr := probe("other.test"); pr.OK || !strings.Contains(pr.Detail, "refused") || r.Lookups("other.test") != 0 {
		t.Fatalf("unlisted name: %+v (%d lookups)", pr, r.Lookups("other.test"))
	}
	if n := hits.Load(); n != 2 {
		t.Fatalf("the server was reached %d times, want 2 (probe.test, rebind.test's first answer)", n)
	}
}

// TestDeskReviewsWithProberHosts: the desk hands the review the hosts its
// prober reaches, so the two agree.
func TestDeskReviewsWithProberHosts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		health Prober
		want   []string
	}{
		{nil, nil},
		{Probers{}, nil},
		{Probers{HTTP: HTTPProber{Hosts: []string{"status.example.com"}}}, []string{"status.example.com"}},
		{HTTPProber{Hosts: []string{"10.0.0.0/8"}}, []string{"10.0.0.0/8"}},
	} {
		d := &Desk{Health: tt.health}
		if got := d.healthHosts(); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("healthHosts() with %T = %v, want %v", tt.health, got, tt.want)
		}
	}
}
