package change_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/change"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mod  func(*change.Plan)
		bad  string // a substring of the error, "" for valid
	}{
		{"valid flag", func(*change.Plan) {}, ""},
		{"valid file", func(p *change.Plan) {
			p.Kind, p.Target = change.KindFile, "file:VERSION"
			p.Params, p.Rollback = json.RawMessage(`{"content":"v2.0.0\n"}`), json.RawMessage(`{"content":"v1.0.0\n"}`)
		}, ""},
		{"valid runbook without rollback", func(p *change.Plan) {
			p.Kind, p.Target, p.Params, p.Rollback = change.KindRunbook, "runbook:restart-cache", json.RawMessage(`{"network":false}`), nil
		}, ""},
		{"valid runbook with a compensating action", func(p *change.Plan) {
			p.Kind, p.Target, p.Params, p.Rollback = change.KindRunbook, "runbook:warm-cdn", json.RawMessage(`{}`), json.RawMessage(`{"runbook":"purge-cdn"}`)
		}, ""},
		{"valid command health check", func(p *change.Plan) {
			p.HealthCheck = change.HealthCheck{Kind: change.HealthCommand, Command: []string{"./smoke.sh", "--fast"}, WindowSeconds: 30, IntervalSeconds: 30}
		}, ""},
		{"valid POST probe", func(p *change.Plan) {
			p.HealthCheck.Method, p.HealthCheck.Body, p.HealthCheck.URL = "POST", `{"items":[{"sku":"lamp","qty":1}]}`, "https://shop.example/checkout"
		}, ""},

		{"unknown kind", func(p *change.Plan) { p.Kind = "deploy" }, "kind"},
		{"malformed target", func(p *change.Plan) { p.Target = "flag:prod" }, "flag:<environment>/<key>"},
		{"kind does not match target", func(p *change.Plan) { p.Kind = change.KindFile }, "does not match target"},
		{"params missing", func(p *change.Plan) { p.Params = nil }, "params must be a JSON object"},
		{"params null", func(p *change.Plan) { p.Params = json.RawMessage(`null`) }, "params must be a JSON object"},
		{"params an array", func(p *change.Plan) { p.Params = json.RawMessage(`[false]`) }, "params must be a JSON object"},
		{"params with a duplicate key", func(p *change.Plan) { p.Params = json.RawMessage(`{"value":false,"value":true}`) }, "duplicate"},
		{"params not JSON", func(p *change.Plan) { p.Params = json.RawMessage(`{value}`) }, "params"},
		{"runbook network not a boolean", func(p *change.Plan) {
			p.Kind, p.Target, p.Params = change.KindRunbook, "runbook:restart-cache", json.RawMessage(`{"network":"yes"}`)
		}, "params.network"},
		{"runbook network in another case", func(p *change.Plan) {
			p.Kind, p.Target, p.Params = change.KindRunbook, "runbook:restart-cache", json.RawMessage(`{"network":false,"Network":true}`)
		}, "spelled network"},
		{"before digest missing", func(p *change.Plan) { p.BeforeStateDigest = "" }, "before_state_digest"},
		{"before digest upper case", func(p *change.Plan) { p.BeforeStateDigest = strings.ToUpper(p.BeforeStateDigest) }, "before_state_digest"},
		{"after digest short", func(p *change.Plan) { p.AfterStateDigest = p.AfterStateDigest[:63] }, "after_state_digest"},
		{"no health check", func(p *change.Plan) { p.HealthCheck = change.HealthCheck{} }, "health check is required"},
		{"unknown health kind", func(p *change.Plan) { p.HealthCheck.Kind = "ping" }, "http or command"},
		{"window zero", func(p *change.Plan) { p.HealthCheck.WindowSeconds = 0 }, "window_seconds"},
		{"window too long", func(p *change.Plan) { p.HealthCheck.WindowSeconds = change.MaxHealthWindowSeconds + 1 }, "window_seconds"},
		{"interval zero", func(p *change.Plan) { p.HealthCheck.IntervalSeconds = 0 }, "interval_seconds"},
		{"interval over the window", func(p *change.Plan) { p.HealthCheck.IntervalSeconds = 61 }, "interval_seconds"},
		{"expect_body too long", func(p *change.Plan) { p.HealthCheck.ExpectBody = strings.Repeat("x", 1025) }, "expect_body"},
		{"method PUT", func(p *change.Plan) { p.HealthCheck.Method = "PUT" }, "method"},
		{"method missing", func(p *change.Plan) { p.HealthCheck.Method = "" }, "method"},
		{"GET with a body", func(p *change.Plan) { p.HealthCheck.Body = "x" }, "POST only"},
		{"POST body too long", func(p *change.Plan) { p.HealthCheck.Method, p.HealthCheck.Body = "POST", strings.Repeat("x", 4097) }, "body"},
		{"status missing", func(p *change.Plan) { p.HealthCheck.ExpectStatus = 0 }, "expect_status"},
		{"status 600", func(p *change.Plan) { p.HealthCheck.ExpectStatus = 600 }, "expect_status"},
		{"url not http", func(p *change.Plan) { p.HealthCheck.URL = "ftp://x/y" }, "http(s) URL"},
		{"url relative", func(p *change.Plan) { p.HealthCheck.URL = "/healthz" }, "http(s) URL"},
		{"url with credentials", func(p *change.Plan) { p.HealthCheck.URL = "https://admin:hunter2@x/healthz" }, "credentials"},
		{"url with fragment", func(p *change.Plan) { p.HealthCheck.URL = "https://x/healthz#a" }, "fragment"},
		{"url too long", func(p *change.Plan) { p.HealthCheck.URL = "https://x/" + strings.Repeat("a", 2048) }, "url"},
		{"http probe with a command", func(p *change.Plan) { p.HealthCheck.Command = []string{"true"} }, "no command"},
		{"command with a url", func(p *change.Plan) {
			p.HealthCheck.Kind, p.HealthCheck.Command, p.HealthCheck.ExpectStatus = change.HealthCommand, []string{"true"}, 0
		}, "no method, url or body"},
		{"command missing", func(p *change.Plan) {
			p.HealthCheck = change.HealthCheck{Kind: change.HealthCommand, WindowSeconds: 5, IntervalSeconds: 1}
		}, "command is required"},
		{"command program empty", func(p *change.Plan) {
			p.HealthCheck = change.HealthCheck{Kind: change.HealthCommand, Command: []string{""}, WindowSeconds: 5, IntervalSeconds: 1}
		}, "command is required"},
		{"command too many args", func(p *change.Plan) {
			p.HealthCheck = change.HealthCheck{Kind: change.HealthCommand, Command: make([]string, 33), WindowSeconds: 5, IntervalSeconds: 1}
			p.HealthCheck.Command[0] = "x"
		}, "more than 32"},
		{"command arg with NUL", func(p *change.Plan) {
			p.HealthCheck = change.HealthCheck{Kind: change.HealthCommand, Command: []string{"x", "a\x00b"}, WindowSeconds: 5, IntervalSeconds: 1}
		}, "NUL"},
		{"command exit status 256", func(p *change.Plan) {
			p.HealthCheck = change.HealthCheck{Kind: change.HealthCommand, Command: []string{"x"}, ExpectStatus: 256, WindowSeconds: 5, IntervalSeconds: 1}
		}, "exit status"},
		{"flag without rollback", func(p *change.Plan) { p.Rollback = nil }, "rollback must be a JSON object"},
		{"file with null rollback", func(p *change.Plan) {
			p.Kind, p.Target, p.Rollback = change.KindFile, "file:VERSION", json.RawMessage(`null`)
		}, "rollback must be a JSON object"},
		{"empty rollback", func(p *change.Plan) { p.Rollback = json.RawMessage(` { } `) }, "rollback is empty"},
		{"rollback an array", func(p *change.Plan) { p.Rollback = json.RawMessage(`[true]`) }, "rollback must be a JSON object"},
		{"runbook rollback a string", func(p *change.Plan) {
			p.Kind, p.Target, p.Params, p.Rollback = change.KindRunbook, "runbook:restart-cache", json.RawMessage(`{}`), json.RawMessage(`"undo"`)
		}, "rollback must be a JSON object"},
		{"no expiry", func(p *change.Plan) { p.ExpiresAt = time.Time{} }, "expires_at is required"},
		{"sub-second expiry", func(p *change.Plan) { p.ExpiresAt = p.ExpiresAt.Add(time.Millisecond) }, "whole second"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := basePlan()
			tt.mod(&p)
			err := p.Validate()
			if tt.bad == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if code := signoff.ErrorCode(err); code != signoff.EINVALID || !strings.Contains(signoff.ErrorMessage(err), tt.bad) {
				t.Fatalf("Validate() = %v (code %s); want EINVALID containing %q", err, code, tt.bad)
			}
		})
	}
}

// TestPlanDigestCoversEveryField edits each field of the plan and of its
// health check in turn: every edit must give a new digest, distinct from
// every other edit's. The field lists come from reflection, so a field
// added later without a row here fails the test.
func TestPlanDigestCoversEveryField(t *testing.T) {
	t.Parallel()
	mods := map[string]func(*change.Plan){
		"Kind":                      func(p *change.Plan) { p.Kind = change.KindFile },
		"Target":                    func(p *change.Plan) { p.Target = "flag:staging/checkout_v2_new_payment_flow" },
		"Params":                    func(p *change.Plan) { p.Params = json.RawMessage(`{"value":true}`) },
		"BeforeStateDigest":         func(p *change.Plan) { p.BeforeStateDigest = sha("other before") },
		"AfterStateDigest":          func(p *change.Plan) { p.AfterStateDigest = sha("other after") },
		"Rollback":                  func(p *change.Plan) { p.Rollback = json.RawMessage(`{"value":"on"}`) },
		"ExpiresAt":                 func(p *change.Plan) { p.ExpiresAt = p.ExpiresAt.Add(time.Second) },
		"HealthCheck.Kind":          func(p *change.Plan) { p.HealthCheck.Kind = change.HealthCommand },
		"HealthCheck.Method":        func(p *change.Plan) { p.HealthCheck.Method = "HEAD" },
		"HealthCheck.URL":           func(p *change.Plan) { p.HealthCheck.URL = "http://127.0.0.1:8081/ready" },
		"HealthCheck.Body":          func(p *change.Plan) { p.HealthCheck.Body = "{}" },
		"HealthCheck.ExpectStatus":  func(p *change.Plan) { p.HealthCheck.ExpectStatus = 204 },
		"HealthCheck.ExpectBody":    func(p *change.Plan) { p.HealthCheck.ExpectBody = "" },
		"HealthCheck.Command":       func(p *change.Plan) { p.HealthCheck.Command = []string{"true"} },
		"HealthCheck.WindowSeconds": func(p *change.Plan) { p.HealthCheck.WindowSeconds = 61 },
		"HealthCheck.IntervalSeconds": func(p *change.Plan) {
			p.HealthCheck.IntervalSeconds = 6
		},
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[change.Plan]()) {
		if _, ok := mods[f.Name]; !ok && f.Name != "HealthCheck" {
			t.Errorf("Plan.%s has no edit in this test", f.Name)
		}
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[change.HealthCheck]()) {
		if _, ok := mods["HealthCheck."+f.Name]; !ok {
			t.Errorf("HealthCheck.%s has no edit in this test", f.Name)
		}
	}
	base, err := change.PlanDigest(basePlan())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{base: "base"}
	for name, mod := range mods {
		p := basePlan()
		mod(&p)
		d, err := change.PlanDigest(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if other, dup := seen[d]; dup {
			t.Errorf("editing %s gives the same digest as %s", name, other)
		}
		seen[d] = name
	}
}

// TestPlanDigestEncodingInvariance: the digest is over the canonical form,
// so spellings of the same plan agree.
func TestPlanDigestEncodingInvariance(t *testing.T) {
	t.Parallel()
	base, _ := change.PlanDigest(basePlan())
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	same := map[string]func(*change.Plan){
		"expiry in another zone":   func(p *change.Plan) { p.ExpiresAt = p.ExpiresAt.In(berlin) },
		"params with whitespace":   func(p *change.Plan) { p.Params = json.RawMessage(" {\n \"value\" : false }\n") },
		"rollback with whitespace": func(p *change.Plan) { p.Rollback = json.RawMessage("{ \"value\":\ttrue }") },
		"nil and empty command":    func(p *change.Plan) { p.HealthCheck.Command = []string{} },
	}
	for name, mod := range same {
		p := basePlan()
		mod(&p)
		if d, err := change.PlanDigest(p); err != nil || d != base {
			t.Errorf("%s: digest %s, %v; want %s", name, d, err, base)
		}
	}
	// A round trip through the card's bytes and DecodePlan keeps the digest.
	b, err := change.Canonical(basePlan())
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != base {
		t.Errorf("PlanDigest is not the SHA-256 of Canonical")
	}
	p, err := change.DecodePlan(b)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := change.PlanDigest(p); d != base {
		t.Errorf("digest after DecodePlan(Canonical(p)) = %s, want %s", d, base)
	}
	if std, _ := json.Marshal(basePlan()); string(std) == "" {
		t.Fatal("json.Marshal failed")
	} else if c, _ := canonical.Transform(std); string(c) != string(b) {
		t.Errorf("json.Marshal and Canonical disagree:\n%s\n%s", c, b)
	}
	if _, err := change.PlanDigest(change.Plan{Params: json.RawMessage(`{"a":1,"a":2}`)}); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Errorf("PlanDigest with duplicate keys = %v, want EINVALID", err)
	}
}

// TestActionDigest checks ActionDigest against the canonical form of SPEC
// section 4 written out by hand: members sorted by key, no whitespace,
// params canonicalized, expires_at in UTC.
func TestActionDigest(t *testing.T) {
	t.Parallel()
	berlin, _ := time.LoadLocation("Europe/Berlin")
	p := basePlan()
	p.Params = json.RawMessage(`{ "value": false, "reason_code": 7 }`)
	p.BeforeStateDigest = strings.Repeat("a", 64)
	p.AfterStateDigest = strings.Repeat("b", 64)
	p.ExpiresAt = time.Date(2026, 12, 2, 14, 0, 0, 0, berlin) // 13:00 UTC
	policy := strings.Repeat("c", 64)
	want := `{"after_state_digest":"` + strings.Repeat("b", 64) + `",` +
		`"before_state_digest":"` + strings.Repeat("a", 64) + `",` +
		`"expires_at":"2026-12-02T13:00:00Z",` +
		`"kind":"flag",` +
		`"params":{"reason_code":7,"value":false},` +
		`"policy_digest":"` + policy + `",` +
		`"target":"flag:prod/checkout_v2_new_payment_flow"}`
	sum := sha256.Sum256([]byte(want))
	got, err := change.ActionDigest(p, policy)
	if err != nil || got != hex.EncodeToString(sum[:]) {
		t.Fatalf("ActionDigest = %s, %v; want sha256(%s) = %x", got, err, want, sum)
	}
	// The rollback and health check are bound by PlanDigest, not here.
	p.Rollback = json.RawMessage(`{"value":"other"}`)
	p.HealthCheck.WindowSeconds = 10
	if again, _ := change.ActionDigest(p, policy); again != got {
		t.Errorf("ActionDigest changed with the rollback or health check")
	}
	// Each of its inputs does change it.
	for name, mod := range map[string]func(*change.Plan, *string){
		"policy": func(_ *change.Plan, pd *string) { *pd = strings.Repeat("d", 64) },
		"params": func(p *change.Plan, _ *string) { p.Params = json.RawMessage(`{"value":true}`) },
		"expiry": func(p *change.Plan, _ *string) { p.ExpiresAt = p.ExpiresAt.Add(time.Hour) },
		"before": func(p *change.Plan, _ *string) { p.BeforeStateDigest = strings.Repeat("e", 64) },
		"after":  func(p *change.Plan, _ *string) { p.AfterStateDigest = strings.Repeat("e", 64) },
		"target": func(p *change.Plan, _ *string) { p.Target = "flag:staging/checkout_v2_new_payment_flow" },
		"kind":   func(p *change.Plan, _ *string) { p.Kind = "file" },
	} {
		q, pd := p, policy
		mod(&q, &pd)
		if d, err := change.ActionDigest(q, pd); err != nil || d == got {
			t.Errorf("editing %s: ActionDigest = %s, %v; want a new digest", name, d, err)
		}
	}
	if _, err := change.ActionDigest(p, "not-a-digest"); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Errorf("ActionDigest with a bad policy digest = %v, want EINVALID", err)
	}
	p.Params = json.RawMessage(`{"value":false,"value":true}`)
	if _, err := change.ActionDigest(p, policy); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Errorf("ActionDigest with duplicate keys in params = %v, want EINVALID", err)
	}
	if _, err := change.Canonical(p); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Errorf("Canonical with duplicate keys in params = %v, want EINVALID", err)
	}
}

func TestDecodePlan(t *testing.T) {
	t.Parallel()
	good, _ := change.Canonical(basePlan())
	tests := []struct {
		name string
		in   string
		bad  string
	}{
		{"canonical", string(good), ""},
		{"unknown field", strings.Replace(string(good), `"kind":"flag"`, `"kind":"flag","approved":true`, 1), "unknown field"},
		{"field in another case", strings.Replace(string(good), `"kind":"flag"`, `"KIND":"flag"`, 1), "unknown field"},
		{"health check unknown field", strings.Replace(string(good), `"window_seconds"`, `"retries":3,"window_seconds"`, 1), "unknown field"},
		{"health check field in another case", strings.Replace(string(good), `"window_seconds"`, `"Window_Seconds"`, 1), "unknown field"},
		{"duplicate key", strings.Replace(string(good), `"kind":"flag"`, `"kind":"flag","kind":"file"`, 1), "duplicate"},
		{"trailing data", string(good) + ` {}`, "trailing"},
		{"not an object", `[1]`, "JSON object"},
		{"health check not an object", `{"kind":"flag","health_check":[1]}`, "health_check"},
		{"too large", `{"params":{"x":"` + strings.Repeat("a", 300<<10) + `"}}`, "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, err := change.DecodePlan([]byte(tt.in))
			if tt.bad == "" {
				if err != nil || p.Validate() != nil {
					t.Fatalf("DecodePlan = %v / %v", err, p.Validate())
				}
				return
			}
			if signoff.ErrorCode(err) != signoff.EINVALID || !strings.Contains(signoff.ErrorMessage(err), tt.bad) {
				t.Fatalf("DecodePlan = %v; want EINVALID containing %q", err, tt.bad)
			}
		})
	}
}
