package change_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
	"time"
	_ "time/tzdata" // window zones resolve the same on every machine

	"github.com/signoff-dev/signoff/change"
)

// now is a Wednesday, 13:00 in Berlin.
var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// id returns a well-formed id with the given prefix.
func id(prefix string, n int) string { return fmt.Sprintf("%s_%026d", prefix, n) }

var (
	approver1 = id("act", 1)
	approver2 = id("act", 2)
	approver3 = id("act", 3)
	proposer  = id("act", 8) // the planner agent
	opener    = id("act", 9) // the operator who opened the request
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// policyYAML is the policy the review and gate tests run under.
var policyYAML = `
protected_targets: ["flag:prod/payments_*", "flag:prod/checkout_legacy", "file:.github/**"]
allowed_targets: ["flag:*/checkout_*", "file:VERSION", "runbook:*"]
environments: [staging, prod]
min_reason_length: 20
approvals:
  required: 2
  group: [` + approver1 + `, ` + approver2 + `, ` + approver3 + `]
no_self_approval: true
proposer_cannot_approve: true
windows:
  - days: [mon, tue, wed, thu, fri]
    from: "08:00"
    to: "18:00"
    tz: Europe/Berlin
approval_ttl_hours: 23
runbooks:
  restart-cache: {network: false}
  warm-cdn: {network: true}
emergency_bypass:
  roles: [owner]
  minutes: 30
preapproved_rollbacks: [flag]
`

func mustPolicy(tb testing.TB, src string) change.Policy {
	tb.Helper()
	p, err := change.Parse([]byte(src))
	if err != nil {
		tb.Fatalf("Parse: %v", err)
	}
	return p
}

// basePlan disables the checkout flag of the incident scenario.
func basePlan() change.Plan {
	return change.Plan{
		Kind:              change.KindFlag,
		Target:            "flag:prod/checkout_v2_new_payment_flow",
		Params:            json.RawMessage(`{"value":false}`),
		BeforeStateDigest: sha("checkout_v2_new_payment_flow=true v7"),
		AfterStateDigest:  sha("checkout_v2_new_payment_flow=false v8"),
		Rollback:          json.RawMessage(`{"value":true}`),
		HealthCheck: change.HealthCheck{Kind: change.HealthHTTP, Method: "GET", URL: "http://127.0.0.1:8081/healthz",
			ExpectStatus: 200, ExpectBody: "ok", WindowSeconds: 60, IntervalSeconds: 5},
		ExpiresAt: now.Add(7 * 24 * time.Hour),
	}
}

func baseRequest() change.Request {
	return change.Request{Reason: "checkout 500s since the new payment flow was enabled", Proposer: proposer, Opener: opener}
}
