package httpapi_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/metrics"
)

// TestMetricsCountRequests hits a few routes through an API built with
// WithMetrics and reads the counters and the duration histogram back from
// the exposition: routes are patterns (or "other" when no route matched),
// never paths, so the tracking secret in a path is not in the output.
func TestMetricsCountRequests(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	reg := metrics.NewRegistry()
	srv := serve(t, store, nil, unlimited(), httpapi.WithMetrics(reg))
	// A second handler over the same registry shares its counters.
	_ = httpapi.New(store, nil, httpapi.WithMetrics(reg))
	const secret = "trk_s3cr3tTrackingToken"
	for _, rq := range []request{
		{method: "GET", path: "/healthz"},
		{method: "GET", path: "/healthz"},
		{method: "HEAD", path: "/healthz"},
		{method: "GET", path: "/api/v1/cases/" + w.bug.ID, token: w.ownerToken},
		{method: "GET", path: "/api/v1/cases/" + w.bug.ID},
		{method: "GET", path: "/api/v1/track/" + secret},
		{method: "GET", path: "/api/v1/nope/" + secret},
		{method: "PUT", path: "/api/v1/projects", token: w.ownerToken},
		{method: "BREW", path: "/healthz"},
	} {
		do(t, srv, rq)
	}
	rec := httptest.NewRecorder()
	reg.Handler(0).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	out := rec.Body.String()
	lines := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		lines[l] = true
	}
	for _, want := range []string{
		"# TYPE signoff_http_requests_total counter",
		"# TYPE signoff_http_request_duration_seconds histogram",
		`signoff_http_requests_total{route="GET /healthz",method="GET",status="200"} 2`,
		`signoff_http_requests_total{route="GET /healthz",method="HEAD",status="200"} 1`,
		`signoff_http_requests_total{route="GET /api/v1/cases/{id}",method="GET",status="200"} 1`,
		`signoff_http_requests_total{route="GET /api/v1/cases/{id}",method="GET",status="401"} 1`,
		`signoff_http_requests_total{route="GET /api/v1/track/{token}",method="GET",status="404"} 1`,
		`signoff_http_requests_total{route="other",method="GET",status="404"} 1`,
		`signoff_http_requests_total{route="other",method="PUT",status="405"} 1`,
		`signoff_http_requests_total{route="other",method="other",status="405"} 1`,
		`signoff_http_request_duration_seconds_bucket{route="GET /healthz",le="10"} 3`,
		`signoff_http_request_duration_seconds_bucket{route="GET /healthz",le="+Inf"} 3`,
		`signoff_http_request_duration_seconds_count{route="GET /healthz"} 3`,
		`signoff_http_request_duration_seconds_count{route="GET /api/v1/cases/{id}"} 2`,
		`signoff_http_request_duration_seconds_count{route="other"} 3`,
	} {
		if !lines[want] {
			t.Errorf("missing %s", want)
		}
	}
	if strings.Contains(out, secret) || strings.Contains(out, w.bug.ID) || strings.Contains(out, w.ownerToken) {
		t.Errorf("the exposition carries a path or a secret:\n%s", out)
	}
	var buckets int
	for l := range lines {
		if strings.HasPrefix(l, `signoff_http_request_duration_seconds_bucket{route="GET /healthz",`) {
			buckets++
		}
	}
	if buckets != len(metrics.DefaultBuckets)+1 {
		t.Errorf("%d buckets, want %d", buckets, len(metrics.DefaultBuckets)+1)
	}
	if t.Failed() {
		t.Logf("exposition:\n%s", out)
	}
}
