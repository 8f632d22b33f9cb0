// Package change is the pure logic of the change desk (SPEC section 4):
// plans and their digests, the workspace policy, the deterministic policy
// review and the gate that every execution path goes through.
//
// Nothing here reads a clock, a file or the network: the caller passes the
// time and every fact the gate needs (signature checks, live state, locks).
// The one exception is Parse, which resolves change-window time zones from
// the zoneinfo database once, when the policy is loaded.
package change

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
)

// PrefixPlan is the id prefix of a stored plan (signoff.NewID(PrefixPlan)).
const PrefixPlan = signoff.PrefixPlan

// Plan is one proposed change, exactly as the approval card shows it and
// the approver signs its digest. Every field is part of PlanDigest, so any
// edit, including to the rollback or the health check, makes a new digest
// and the old approvals no longer apply.
type Plan struct {
	Kind string `json:"kind"`
	// Target is the parsed-and-respelled target, e.g.
	// "flag:prod/checkout_v2_new_payment_flow", "file:VERSION" or
	// "runbook:restart-cache".
	Target string `json:"target"`
	// Params is what the actuator applies: a JSON object whose shape
	// belongs to the kind. For runbooks a boolean "network" member asks
	// for network access, which the policy must grant.
	Params json.RawMessage `json:"params"`
	// BeforeStateDigest is the target's state when the plan was made; the
	// gate compares it with the live state (drift). AfterStateDigest is
	// the state the plan promises.
	BeforeStateDigest string `json:"before_state_digest"`
	AfterStateDigest  string `json:"after_state_digest"`
	// Rollback is what restores the before-state: a JSON object, required
	// for flags and files, optional for runbooks (see Reversible).
	Rollback    json.RawMessage `json:"rollback"`
	HealthCheck HealthCheck     `json:"health_check"`
	// ExpiresAt is when the plan stops being executable. It is part of
	// both digests, encoded in UTC, and must be a whole second so that
	// every store keeps it exactly.
	ExpiresAt time.Time `json:"expires_at"`
}

// MarshalJSON writes ExpiresAt in UTC, so that one instant has one
// encoding and json.Marshal, canonical.Marshal and PlanDigest agree on the
// bytes whatever zone the time was made in.
func (p Plan) MarshalJSON() ([]byte, error) {
	type plain Plan // no methods: no recursion
	q := plain(p)
	q.ExpiresAt = p.ExpiresAt.UTC()
	return json.Marshal(q)
}

// Health check kinds.
const (
	HealthHTTP    = "http"    // probe a URL, expect a status and a body substring
	HealthCommand = "command" // run a command in the sandbox, expect an exit status
)

// Health check bounds. The window is how long the service keeps probing
// after Apply; it is bounded so an execution always ends.
const (
	MaxHealthWindowSeconds = 900
	MaxHealthArgs          = 32
	maxHealthArgLen        = 1024
	maxHealthURLLen        = 2048
	maxHealthBodyLen       = 4096
	maxExpectBodyLen       = 1024
)

// HealthCheck is what the service runs after Apply. Pass keeps the change;
// failure restores the before-state automatically.
type HealthCheck struct {
	Kind string `json:"kind"`
	// Method, URL, Body: the HTTP probe. Body is sent with POST only.
	Method string `json:"method,omitempty"`
	URL    string `json:"url,omitempty"`
	Body   string `json:"body,omitempty"`
	// ExpectStatus is the HTTP status (required for http) or the exit
	// status of a command (0 when unset).
	ExpectStatus int `json:"expect_status,omitempty"`
	// ExpectBody, when set, must occur in the response body or stdout.
	ExpectBody string   `json:"expect_body,omitempty"`
	Command    []string `json:"command,omitempty"`
	// The check passes only if every probe within WindowSeconds, one every
	// IntervalSeconds, passes.
	WindowSeconds   int `json:"window_seconds"`
	IntervalSeconds int `json:"interval_seconds"`
}

// Reversible reports whether a kind's plans must carry a rollback. Flags
// and files restore a recorded previous value. A runbook is an arbitrary
// script with no general inverse (what undoes a cache restart?), so its
// rollback, a compensating action, is optional: without one, a failed
// health check is reported but nothing is restored.
func Reversible(kind string) bool { return kind == KindFlag || kind == KindFile }

// ValidDigest reports whether d is a lowercase hex SHA-256.
func ValidDigest(d string) bool {
	if len(d) != 64 {
		return false
	}
	for i := 0; i < len(d); i++ {
		if c := d[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Validate checks the plan's shape without a policy or a clock: a known
// kind and a target of that kind, object params, well-formed digests, a
// bounded health check, a rollback where the kind needs one and a whole
// second expiry. Review runs the same checks as separate rules. Returns
// EINVALID naming the first problem.
func (p Plan) Validate() error {
	for _, check := range []func(Plan) error{checkShape, checkDigests, checkHealth, checkRollback, checkExpiry} {
		if err := check(p); err != nil {
			return signoff.Errorf(signoff.EINVALID, "plan: %s", err)
		}
	}
	return nil
}

func checkShape(p Plan) error {
	if !validKind(p.Kind) {
		return fmt.Errorf("kind %q must be flag, file or runbook", p.Kind)
	}
	t, err := ParseTarget(p.Target)
	if err != nil {
		return errors.New(signoff.ErrorMessage(err))
	}
	if t.Kind != p.Kind {
		return fmt.Errorf("kind %q does not match target %q", p.Kind, p.Target)
	}
	if err := checkObject("params", p.Params); err != nil {
		return err
	}
	if p.Kind == KindRunbook {
		if _, err := runbookNetwork(p.Params); err != nil {
			return err
		}
	}
	return nil
}

// checkObject requires raw to be a JSON object that canonicalizes (no
// duplicate keys, no invalid UTF-8, no overflowing numbers).
func checkObject(what string, raw json.RawMessage) error {
	b := bytes.TrimLeft(raw, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("%s must be a JSON object", what)
	}
	if _, err := canonical.Transform(raw); err != nil {
		return fmt.Errorf("%s: %v", what, err)
	}
	return nil
}

// runbookNetwork reads the optional boolean "network" member of runbook
// params. A key spelled in another case is refused: encoding/json would
// read "Network" as "network", and the rule and the actuator must not
// disagree on whether the network was asked for.
func runbookNetwork(params json.RawMessage) (bool, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(params, &m); err != nil {
		return false, nil // checkObject reports bad params
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != "network" && strings.EqualFold(k, "network") {
			return false, fmt.Errorf("params.%s must be spelled network", k)
		}
	}
	v, ok := m["network"]
	if !ok {
		return false, nil
	}
	switch string(bytes.TrimSpace(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("params.network must be true or false")
}

func checkDigests(p Plan) error {
	if !ValidDigest(p.BeforeStateDigest) {
		return fmt.Errorf("before_state_digest must be 64 lowercase hex digits")
	}
	if !ValidDigest(p.AfterStateDigest) {
		return fmt.Errorf("after_state_digest must be 64 lowercase hex digits")
	}
	return nil
}

func checkRollback(p Plan) error {
	if !Reversible(p.Kind) && isNull(p.Rollback) {
		return nil
	}
	if err := checkObject("rollback", p.Rollback); err != nil {
		return err
	}
	if c, _ := canonical.Transform(p.Rollback); string(c) == "{}" {
		return fmt.Errorf("rollback is empty")
	}
	return nil
}

func isNull(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	return len(b) == 0 || string(b) == "null"
}

func checkExpiry(p Plan) error {
	switch {
	case p.ExpiresAt.IsZero():
		return fmt.Errorf("expires_at is required")
	case p.ExpiresAt.Nanosecond() != 0:
		return fmt.Errorf("expires_at must be a whole second")
	}
	return nil
}

func checkHealth(p Plan) error {
	h := p.HealthCheck
	switch {
	case h.Kind == "":
		return fmt.Errorf("a health check is required")
	case h.WindowSeconds < 1 || h.WindowSeconds > MaxHealthWindowSeconds:
		return fmt.Errorf("health_check.window_seconds must be 1..%d", MaxHealthWindowSeconds)
	case h.IntervalSeconds < 1 || h.IntervalSeconds > h.WindowSeconds:
		return fmt.Errorf("health_check.interval_seconds must be 1..window_seconds")
	case len(h.ExpectBody) > maxExpectBodyLen:
		return fmt.Errorf("health_check.expect_body is longer than %d bytes", maxExpectBodyLen)
	}
	switch h.Kind {
	case HealthHTTP:
		return checkHTTPProbe(h)
	case HealthCommand:
		switch {
		case h.Method != "" || h.URL != "" || h.Body != "":
			return fmt.Errorf("a command health check has no method, url or body")
		case len(h.Command) == 0 || h.Command[0] == "":
			return fmt.Errorf("health_check.command is required")
		case len(h.Command) > MaxHealthArgs:
			return fmt.Errorf("health_check.command has more than %d arguments", MaxHealthArgs)
		case h.ExpectStatus < 0 || h.ExpectStatus > 255:
			return fmt.Errorf("health_check.expect_status of a command is an exit status, 0..255")
		}
		for _, a := range h.Command {
			if len(a) > maxHealthArgLen || bytes.IndexByte([]byte(a), 0) >= 0 {
				return fmt.Errorf("health_check.command arguments must be at most %d bytes without NUL", maxHealthArgLen)
			}
		}
		return nil
	}
	return fmt.Errorf("health_check.kind %q must be http or command", h.Kind)
}

func checkHTTPProbe(h HealthCheck) error {
	if len(h.Command) != 0 {
		return fmt.Errorf("an http health check has no command")
	}
	switch h.Method {
	case "GET", "HEAD":
		if h.Body != "" {
			return fmt.Errorf("health_check.body is sent with POST only")
		}
	case "POST":
		if len(h.Body) > maxHealthBodyLen {
			return fmt.Errorf("health_check.body is longer than %d bytes", maxHealthBodyLen)
		}
	default:
		return fmt.Errorf("health_check.method must be GET, HEAD or POST")
	}
	if h.ExpectStatus < 100 || h.ExpectStatus > 599 {
		return fmt.Errorf("health_check.expect_status must be an HTTP status, 100..599")
	}
	if len(h.URL) > maxHealthURLLen {
		return fmt.Errorf("health_check.url is longer than %d bytes", maxHealthURLLen)
	}
	u, err := url.Parse(h.URL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("health_check.url must be an absolute http(s) URL")
	case u.User != nil:
		// The card shows the plan untruncated: no credentials in it.
		return fmt.Errorf("health_check.url may not carry credentials")
	case u.Fragment != "":
		return fmt.Errorf("health_check.url may not have a fragment")
	}
	return nil
}

// Canonical returns the RFC 8785 form of the plan: the exact bytes the
// approval card shows and PlanDigest hashes.
func Canonical(p Plan) ([]byte, error) {
	b, err := canonical.Marshal(p)
	if err != nil {
		return nil, signoff.Errorf(signoff.EINVALID, "plan cannot be encoded: %v", err)
	}
	return b, nil
}

// PlanDigest is the SHA-256 of the plan's canonical JSON: every field,
// rollback and health check included. It is the subject digest approvers
// sign. It fails (EINVALID) only for params or rollback that are not JSON
// or not canonicalizable, such as duplicate keys.
func PlanDigest(p Plan) (string, error) {
	d, err := canonical.Digest(p)
	if err != nil {
		return "", signoff.Errorf(signoff.EINVALID, "plan cannot be encoded: %v", err)
	}
	return d, nil
}

// action is the object SPEC section 4 names as the action digest.
type action struct {
	Kind              string          `json:"kind"`
	Target            string          `json:"target"`
	Params            json.RawMessage `json:"params"`
	BeforeStateDigest string          `json:"before_state_digest"`
	AfterStateDigest  string          `json:"after_state_digest"`
	PolicyDigest      string          `json:"policy_digest"`
	ExpiresAt         time.Time       `json:"expires_at"`
}

// ActionDigest is the SHA-256 of canonical {kind, target, params,
// before_state_digest, after_state_digest, policy_digest, expires_at}
// (SPEC section 4): the effect itself under one policy, without the
// rollback and health check that PlanDigest also binds. Receipts and
// idempotency keys name it. policyDigest must be a well-formed digest.
func ActionDigest(p Plan, policyDigest string) (string, error) {
	if !ValidDigest(policyDigest) {
		return "", signoff.Errorf(signoff.EINVALID, "policy digest must be 64 lowercase hex digits")
	}
	d, err := canonical.Digest(action{Kind: p.Kind, Target: p.Target, Params: p.Params,
		BeforeStateDigest: p.BeforeStateDigest, AfterStateDigest: p.AfterStateDigest,
		PolicyDigest: policyDigest, ExpiresAt: p.ExpiresAt.UTC()})
	if err != nil {
		return "", signoff.Errorf(signoff.EINVALID, "plan cannot be encoded: %v", err)
	}
	return d, nil
}

// maxPlanSize bounds a submitted plan.
const maxPlanSize = 256 << 10

var (
	planKeys   = []string{"kind", "target", "params", "before_state_digest", "after_state_digest", "rollback", "health_check", "expires_at"}
	healthKeys = []string{"kind", "method", "url", "body", "expect_status", "expect_body", "command", "window_seconds", "interval_seconds"}
)

// DecodePlan reads a plan submitted as JSON (by a person or an agent)
// strictly: unknown fields, keys in another case (encoding/json would take
// "KIND" for "kind"), duplicate keys, trailing data and oversize input are
// EINVALID, because a plan two readers could read differently cannot have
// one digest. It does not Validate.
func DecodePlan(b []byte) (Plan, error) {
	if len(b) > maxPlanSize {
		return Plan{}, signoff.Errorf(signoff.EINVALID, "plan is larger than %d bytes", maxPlanSize)
	}
	if _, err := canonical.Transform(b); err != nil {
		return Plan{}, signoff.Errorf(signoff.EINVALID, "plan: %v", err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return Plan{}, signoff.Errorf(signoff.EINVALID, "plan must be a JSON object")
	}
	if err := exactKeys("plan", top, planKeys); err != nil {
		return Plan{}, err
	}
	if h, ok := top["health_check"]; ok && !isNull(h) {
		var hc map[string]json.RawMessage
		if err := json.Unmarshal(h, &hc); err != nil {
			return Plan{}, signoff.Errorf(signoff.EINVALID, "plan: health_check must be a JSON object")
		}
		if err := exactKeys("health_check", hc, healthKeys); err != nil {
			return Plan{}, err
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return Plan{}, signoff.Errorf(signoff.EINVALID, "plan: %v", err)
	}
	return p, nil
}

func exactKeys(what string, m map[string]json.RawMessage, known []string) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(known, k) {
			return signoff.Errorf(signoff.EINVALID, "%s: unknown field %q", what, k)
		}
	}
	return nil
}
