package change_test

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/change"
)

// TestReviewHealthHost: a plan's health probe host is checked at review
// against loopback and the server's health hosts, in every spelling an
// address can take, so a plan the prober would refuse (and roll back
// for) never reaches approval.
func TestReviewHealthHost(t *testing.T) {
	t.Parallel()
	pol := mustPolicy(t, policyYAML)
	listed := []string{"status.example.com", "10.20.0.0/16"}
	tests := []struct {
		url    string
		hosts  []string
		ok     bool
		detail string // in the rule's detail
	}{
		// Refused: the hole's addresses, and their disguises.
		{"http://169.254.169.254/latest/meta-data/", nil, false, "cloud metadata"},
		{"http://169.254.169.254/latest/meta-data/", listed, false, "cloud metadata"},
		{"http://10.0.0.1/", listed, false, "private"},
		{"http://[::ffff:169.254.169.254]/", listed, false, "cloud metadata"},
		{"http://[::ffff:a9fe:a9fe]/", listed, false, "cloud metadata"},
		{"http://[fd00:ec2::254]/", listed, false, "cloud metadata"},
		{"http://localhost.nip.io/", listed, false, "not in the allowlist"},
		{"http://127.0.0.1.nip.io/", nil, false, "not in the allowlist"},
		{"http://0xa9fea9fe/", listed, false, "legacy form"},
		{"http://2852039166/", listed, false, "legacy form"},
		{"http://0251.0376.0251.0376/", listed, false, "legacy form"},
		{"http://169.254.43518/", listed, false, "legacy form"},
		{"http://2130706433/", nil, false, "legacy form"},
		{"http://status.example.com@evil.example.net/", listed, false, "evil.example.net"},
		{"http://status.example.com.evil.example.net/", listed, false, "not in the allowlist"},
		{"http://evil.example.net/?status.example.com", listed, false, "not in the allowlist"},
		{"http://api.localhost/", nil, false, "not in the allowlist"},
		{"http://0.0.0.0:8080/", nil, false, "unspecified"},
		{"http://[::]:8080/", nil, false, "unspecified"},
		{"http://100.64.0.1/", listed, false, "carrier NAT"},
		{"http://[fe80::1%25eth0]/", listed, false, "link-local"},
		{"http://8.8.8.8/", nil, false, "not in the allowlist"},
		{"http://status.example.com/", nil, false, "not in the allowlist"},
		{"http://status.example.com/", []string{"bad host!"}, false, "malformed"},

		// Passed: loopback by default, and what the server lists, in any case,
		// with a trailing dot, on any port.
		{"http://127.0.0.1:8081/healthz", nil, true, "127.0.0.1"},
		{"http://localhost:8081/healthz", nil, true, "localhost"},
		{"http://LOCALHOST./healthz", nil, true, "localhost"},
		{"http://[::1]:8081/healthz", nil, true, "::1"},
		{"http://[::ffff:127.0.0.1]:8081/healthz", nil, true, "127.0.0.1"},
		{"https://status.example.com/healthz", listed, true, "status.example.com"},
		{"https://STATUS.Example.com.:8443/healthz", listed, true, "status.example.com"},
		{"http://10.20.3.4/healthz", listed, true, "10.20.3.4"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			plan := basePlan()
			plan.HealthCheck.URL = tt.url
			req := baseRequest()
			req.HealthHosts = tt.hosts
			res := change.Review(plan, req, pol, now)
			var got change.RuleResult
			for _, r := range res.Rules {
				if r.Rule == change.RuleHealthHost {
					got = r
				}
			}
			if got.Rule == "" {
				t.Fatalf("no %s rule in %+v", change.RuleHealthHost, res.Rules)
			}
			if got.OK != tt.ok || !strings.Contains(got.Detail, tt.detail) {
				t.Fatalf("%s = %+v, want ok %t, detail ~%q", change.RuleHealthHost, got, tt.ok, tt.detail)
			}
			if !tt.ok && res.OK {
				t.Fatal("the review passed with the health host refused")
			}
		})
	}
}

// TestReviewHealthHostCommand: a command check makes no request, and a
// plan without a health check has no host to pass.
func TestReviewHealthHostCommand(t *testing.T) {
	t.Parallel()
	pol := mustPolicy(t, policyYAML)
	plan := basePlan()
	plan.HealthCheck = change.HealthCheck{Kind: change.HealthCommand, Command: []string{"true"}, WindowSeconds: 10, IntervalSeconds: 5}
	for _, r := range change.Review(plan, baseRequest(), pol, now).Rules {
		if r.Rule == change.RuleHealthHost && !r.OK {
			t.Fatalf("command check: %+v", r)
		}
	}
	plan.HealthCheck = change.HealthCheck{}
	for _, r := range change.Review(plan, baseRequest(), pol, now).Rules {
		if r.Rule == change.RuleHealthHost && r.OK {
			t.Fatalf("no health check: %+v", r)
		}
	}
}
