package change_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/change"
)

// TestReview starts from a plan, request and policy that pass every rule;
// each row breaks something and names exactly the rules that must fail.
// Every rule must be reported in every result, in order, whatever fails.
func TestReview(t *testing.T) {
	t.Parallel()
	pol := mustPolicy(t, policyYAML)
	type bundle struct {
		plan *change.Plan
		req  *change.Request
		pol  *change.Policy
		now  *time.Time
	}
	runbook := func(name, params string) func(b bundle) {
		return func(b bundle) {
			b.plan.Kind, b.plan.Target, b.plan.Params, b.plan.Rollback = change.KindRunbook, "runbook:"+name, json.RawMessage(params), nil
		}
	}
	tests := []struct {
		name string
		mod  func(b bundle)
		fail []string
		// detail, when set, must occur in the first failing rule's detail
		// (or in the first rule's, for a passing row).
		detail string
	}{
		{"everything passes", func(bundle) {}, nil, ""},
		{"a file plan passes", func(b bundle) {
			b.plan.Kind, b.plan.Target = change.KindFile, "file:VERSION"
		}, nil, ""},
		{"a runbook plan without rollback passes", runbook("restart-cache", `{}`), nil, ""},
		{"a runbook granted the network passes", runbook("warm-cdn", `{"network":true}`), nil, ""},

		{"unknown kind", func(b bundle) { b.plan.Kind = "deploy" }, []string{change.RulePlanWellFormed}, "kind"},
		{"kind does not match the target", func(b bundle) { b.plan.Kind = change.KindFile }, []string{change.RulePlanWellFormed}, "does not match"},
		{"params not an object", func(b bundle) { b.plan.Params = json.RawMessage(`[1]`) }, []string{change.RulePlanWellFormed}, "params"},
		{"malformed target fails every target rule", func(b bundle) { b.plan.Target = "flag:prod" },
			[]string{change.RulePlanWellFormed, change.RuleTargetNotProtected, change.RuleTargetAllowed, change.RuleEnvironmentAllowed, change.RuleRunbookNetwork}, "flag:<environment>/<key>"},

		{"protected target", func(b bundle) { b.plan.Target = "flag:prod/checkout_legacy" }, []string{change.RuleTargetNotProtected}, `protected by "flag:prod/checkout_legacy"`},
		{"protected file", func(b bundle) {
			b.plan.Kind, b.plan.Target = change.KindFile, "file:.github/workflows/ci.yml"
		}, []string{change.RuleTargetNotProtected, change.RuleTargetAllowed}, "protected"},
		{"target not allowed", func(b bundle) { b.plan.Target = "flag:prod/search_v2" }, []string{change.RuleTargetAllowed}, "matches no allowed_targets"},
		{"environment not allowed", func(b bundle) { b.plan.Target = "flag:dev/checkout_v2" }, []string{change.RuleEnvironmentAllowed}, "environment dev"},

		{"reason too short", func(b bundle) { b.req.Reason = "checkout broken" }, []string{change.RuleReasonLength}, "15 characters"},
		{"reason padded with spaces", func(b bundle) { b.req.Reason = "   short reason   " + strings.Repeat(" ", 30) }, []string{change.RuleReasonLength}, "12 characters"},
		{"reason counted in characters", func(b bundle) { b.req.Reason = strings.Repeat("é", 19) }, []string{change.RuleReasonLength}, "19 characters"},
		{"reason not UTF-8", func(b bundle) { b.req.Reason = strings.Repeat("x", 20) + "\xff" }, []string{change.RuleReasonLength}, "UTF-8"},
		{"reason of exactly the minimum", func(b bundle) { b.req.Reason = strings.Repeat("é", 20) }, nil, ""},

		{"outside the window: Saturday", func(b bundle) { *b.now = time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC) }, []string{change.RuleChangeWindow}, "outside every change window"},
		{"outside the window: evening in Berlin", func(b bundle) { *b.now = time.Date(2026, 12, 2, 17, 30, 0, 0, time.UTC) }, []string{change.RuleChangeWindow}, "outside"},
		{"no windows at all", func(b bundle) { b.pol.Windows = nil }, []string{change.RuleChangeWindow}, "lists no change windows"},

		{"plan expired", func(b bundle) { b.plan.ExpiresAt = now.Add(-time.Second) }, []string{change.RulePlanNotExpired}, "expired at"},
		{"plan expires exactly now", func(b bundle) { b.plan.ExpiresAt = now }, []string{change.RulePlanNotExpired}, "expired at"},
		{"plan without expiry", func(b bundle) { b.plan.ExpiresAt = time.Time{} }, []string{change.RulePlanNotExpired}, "required"},
		{"plan expiry not a whole second", func(b bundle) { b.plan.ExpiresAt = b.plan.ExpiresAt.Add(time.Microsecond) }, []string{change.RulePlanNotExpired}, "whole second"},

		{"no health check", func(b bundle) { b.plan.HealthCheck = change.HealthCheck{} }, []string{change.RuleHealthCheck, change.RuleHealthHost}, "required"},
		{"health check unbounded", func(b bundle) { b.plan.HealthCheck.WindowSeconds = 86400 }, []string{change.RuleHealthCheck}, "window_seconds"},
		{"health check probes with credentials", func(b bundle) { b.plan.HealthCheck.URL = "https://u:p@x/" }, []string{change.RuleHealthCheck, change.RuleHealthHost}, "credentials"},
		{"health check probes the metadata endpoint", func(b bundle) { b.plan.HealthCheck.URL = "http://169.254.169.254/latest/meta-data/" }, []string{change.RuleHealthHost}, "cloud metadata"},

		{"flag without rollback", func(b bundle) { b.plan.Rollback = nil }, []string{change.RuleRollback}, "rollback must be a JSON object"},
		{"file with an empty rollback", func(b bundle) {
			b.plan.Kind, b.plan.Target, b.plan.Rollback = change.KindFile, "file:VERSION", json.RawMessage(`{}`)
		}, []string{change.RuleRollback}, "empty"},

		{"runbook not allowlisted", runbook("drop-db", `{}`), []string{change.RuleRunbookNetwork}, "not allowlisted"},
		{"runbook asks for the network it is not granted", runbook("restart-cache", `{"network":true}`), []string{change.RuleRunbookNetwork}, "does not grant"},
		{"runbook network not a boolean", runbook("warm-cdn", `{"network":1}`), []string{change.RulePlanWellFormed, change.RuleRunbookNetwork}, "params.network"},

		{"before digest malformed", func(b bundle) { b.plan.BeforeStateDigest = "abc" }, []string{change.RuleDigests}, "before_state_digest"},
		{"after digest missing", func(b bundle) { b.plan.AfterStateDigest = "" }, []string{change.RuleDigests}, "after_state_digest"},

		{"approvers: opener and proposer leave one", func(b bundle) { b.req.Opener, b.req.Proposer = approver1, approver2 },
			[]string{change.RuleApprovers}, "1 eligible approvers in the group, the policy needs 2"},
		{"approvers: opener may approve when the policy allows", func(b bundle) {
			b.req.Opener, b.req.Proposer = approver1, approver2
			b.pol.NoSelfApproval = false
		}, nil, ""},
		{"approvers: nobody in the group", func(b bundle) { b.pol.Approvals.Group = nil }, []string{change.RuleApprovers}, "0 eligible"},
		{"approvers: a policy requiring none", func(b bundle) { b.pol.Approvals.Required = 0 }, []string{change.RuleApprovers}, "at least 1"},
		{"approvers: a pre-approved compensation needs none", func(b bundle) {
			b.pol.Approvals.Group = nil
			b.req.Preapproved = true
		}, nil, ""},

		{"everything fails, everything is reported", func(b bundle) {
			*b.plan = change.Plan{Kind: "deploy", Target: "prod", Rollback: json.RawMessage(`[]`)}
			*b.req = change.Request{Reason: " "}
			*b.pol = change.Policy{}
		}, change.Rules, ""},
	}
	failedSomewhere := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, req, p, at := basePlan(), baseRequest(), pol, now
			p.Approvals.Group = slices.Clone(p.Approvals.Group)
			tt.mod(bundle{&plan, &req, &p, &at})
			res := change.Review(plan, req, p, at)

			var names, failed []string
			for _, r := range res.Rules {
				names = append(names, r.Rule)
				if !r.OK {
					failed = append(failed, r.Rule)
					failedSomewhere[r.Rule] = true
				}
				if r.Detail == "" {
					t.Errorf("rule %s has no detail", r.Rule)
				}
			}
			if !slices.Equal(names, change.Rules) {
				t.Fatalf("rules reported %v, want every rule in order %v", names, change.Rules)
			}
			if !slices.Equal(failed, tt.fail) {
				t.Fatalf("failed rules %v, want %v\n%+v", failed, tt.fail, res.Rules)
			}
			if res.OK != (len(tt.fail) == 0) {
				t.Fatalf("OK = %v with failures %v", res.OK, failed)
			}
			if !slices.Equal(rulesOf(res.Failed()), failed) {
				t.Fatalf("Failed() = %v, want %v", res.Failed(), failed)
			}
			if tt.detail != "" && !strings.Contains(res.Failed()[0].Detail, tt.detail) {
				t.Fatalf("detail %q does not contain %q", res.Failed()[0].Detail, tt.detail)
			}
			if res.OK && plan.Validate() != nil {
				t.Fatalf("review passed a plan Validate refuses: %v", plan.Validate())
			}
			if again := change.Review(plan, req, p, at); !reflect.DeepEqual(again, res) {
				t.Fatalf("Review is not deterministic")
			}
		})
	}
	for _, r := range change.Rules {
		if !failedSomewhere[r] {
			t.Errorf("no row fails rule %s", r)
		}
	}
}

func rulesOf(rs []change.RuleResult) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Rule)
	}
	return out
}

// TestReviewDoesNotMutate: Review leaves its arguments alone.
func TestReviewDoesNotMutate(t *testing.T) {
	t.Parallel()
	pol := mustPolicy(t, policyYAML)
	before := pol.Digest()
	plan := basePlan()
	d, _ := change.PlanDigest(plan)
	change.Review(plan, baseRequest(), pol, now)
	if pol.Digest() != before {
		t.Error("Review changed the policy")
	}
	if d2, _ := change.PlanDigest(plan); d2 != d {
		t.Error("Review changed the plan")
	}
}
