package change_test

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
)

// FuzzDecodePlan: DecodePlan, Validate and Review never panic on a
// submitted plan, and every refusal is EINVALID with a message. A plan
// that validates has a digest and reads back from its canonical bytes (the
// card's) to the same digest; a review that passes implies Validate does.
func FuzzDecodePlan(f *testing.F) {
	good, err := change.Canonical(basePlan())
	if err != nil {
		f.Fatal(err)
	}
	runbook := basePlan()
	runbook.Kind, runbook.Target, runbook.Rollback = change.KindRunbook, "runbook:warm-cdn", nil
	runbook.Params = []byte(`{"network":true}`)
	runbook.HealthCheck = change.HealthCheck{Kind: change.HealthCommand, Command: []string{"curl", "-f", "http://cdn"}, WindowSeconds: 30, IntervalSeconds: 10}
	rb, err := change.Canonical(runbook)
	if err != nil {
		f.Fatal(err)
	}
	file := basePlan()
	file.Kind, file.Target = change.KindFile, "file:VERSION"
	file.HealthCheck.Method, file.HealthCheck.Body = "POST", `{"ping":1}`
	fb, err := change.Canonical(file)
	if err != nil {
		f.Fatal(err)
	}
	g := string(good)
	for _, s := range []string{
		g, string(rb), string(fb),
		strings.Replace(g, `"kind":"flag"`, `"KIND":"flag"`, 1),
		strings.Replace(g, `"kind":"flag"`, `"kind":"flag","kind":"file"`, 1),
		strings.Replace(g, `"window_seconds"`, `"Window_Seconds"`, 1),
		strings.Replace(g, `"params":{"value":false}`, `"params":{"Network":true}`, 1),
		strings.Replace(g, `"rollback":{"value":true}`, `"rollback":null`, 1),
		strings.Replace(g, `"expires_at":"2026-12-09T12:00:00Z"`, `"expires_at":"2026-12-09T12:00:00.5+01:00"`, 1),
		strings.Replace(g, `"url":"http://127.0.0.1:8081/healthz"`, `"url":"http://u:p@[::1`, 1),
		g + ` {}`,
		`{"kind":"flag","health_check":[1]}`, `{"params":{"a":1e999}}`, `{"target":"flag:prod/x\u0000"}`,
		"", "null", "[]", "{}", `{"health_check":null}`, "\xff",
	} {
		f.Add([]byte(s))
	}
	pol := mustPolicy(f, policyYAML)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := change.DecodePlan(b)
		if err != nil {
			mustInvalid(t, "DecodePlan", err)
			return
		}
		verr := p.Validate()
		res := change.Review(p, baseRequest(), pol, now)
		if res.OK && verr != nil {
			t.Fatalf("Review passed a plan that does not validate: %v", verr)
		}
		if len(res.Rules) != len(change.Rules) {
			t.Fatalf("Review reported %d rules, want %d", len(res.Rules), len(change.Rules))
		}
		if verr != nil {
			mustInvalid(t, "Validate", verr)
			return
		}
		d, err := change.PlanDigest(p)
		if err != nil || !change.ValidDigest(d) {
			t.Fatalf("PlanDigest of a valid plan = %q, %v", d, err)
		}
		if _, err := change.ActionDigest(p, pol.Digest()); err != nil {
			t.Fatalf("ActionDigest of a valid plan: %v", err)
		}
		c, err := change.Canonical(p)
		if err != nil {
			t.Fatalf("Canonical of a valid plan: %v", err)
		}
		q, err := change.DecodePlan(c)
		if err != nil {
			t.Fatalf("DecodePlan of the plan's canonical bytes %s: %v", c, err)
		}
		if err := q.Validate(); err != nil {
			t.Fatalf("the plan's canonical bytes do not validate: %v\n%s", err, c)
		}
		if d2, err := change.PlanDigest(q); err != nil || d2 != d {
			t.Fatalf("round trip through the canonical bytes changed the digest %s to %s (%v)\n%s", d, d2, err, c)
		}
	})
}

// mustInvalid requires a refusal to be EINVALID with a message.
func mustInvalid(t *testing.T, what string, err error) {
	t.Helper()
	if signoff.ErrorCode(err) != signoff.EINVALID || strings.TrimSpace(signoff.ErrorMessage(err)) == "" {
		t.Fatalf("%s error %v is not EINVALID with a message", what, err)
	}
}
