package change

import (
	"fmt"
	"slices"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
)

// Review rules, in the order Result lists them.
const (
	RulePlanWellFormed     = "plan_well_formed"     // kind, target of that kind, object params
	RuleTargetNotProtected = "target_not_protected" // no protected_targets glob matches
	RuleTargetAllowed      = "target_allowed"       // an allowed_targets glob matches
	RuleEnvironmentAllowed = "environment_allowed"  // a flag's environment is listed
	RuleReasonLength       = "reason_length"        // the request's reason is long enough
	RuleChangeWindow       = "change_window"        // now is inside a listed window
	RulePlanNotExpired     = "plan_not_expired"     // expires_at set, whole second, after now
	RuleHealthCheck        = "health_check"         // present and bounded
	RuleRollback           = "rollback"             // present where the kind is reversible
	RuleRunbookNetwork     = "runbook_network"      // runbook allowlisted; network only if granted
	RuleDigests            = "digests"              // before/after state digests well-formed
	RuleApprovers          = "approvers_available"  // enough eligible approvers exist
)

// Rules lists every review rule in order.
var Rules = []string{RulePlanWellFormed, RuleTargetNotProtected, RuleTargetAllowed,
	RuleEnvironmentAllowed, RuleReasonLength, RuleChangeWindow, RulePlanNotExpired,
	RuleHealthCheck, RuleHealthHost, RuleRollback, RuleRunbookNetwork, RuleDigests, RuleApprovers}

// Request is who asked for the change and why.
type Request struct {
	Reason string `json:"reason"`
	// Proposer drafted the plan (often the planner agent); Opener opened
	// the change request.
	Proposer string `json:"proposer"`
	Opener   string `json:"opener"`
	// Preapproved is set for the exact compensation of an executed change
	// whose kind the policy pre-approves: it needs no approver.
	Preapproved bool `json:"preapproved,omitempty"`
	// HealthHosts are the hosts besides loopback the server's health
	// prober may reach (SIGNOFF_HEALTH_HOSTS): the server sets them,
	// never the plan.
	HealthHosts []string `json:"-"`
}

// RuleResult is one rule's outcome. Detail says why, in a sentence a
// person can act on.
type RuleResult struct {
	Rule   string `json:"rule"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// Result is a review: OK only if every rule passed.
type Result struct {
	OK    bool         `json:"ok"`
	Rules []RuleResult `json:"rules"`
}

// Failed returns the rules that did not pass.
func (r Result) Failed() []RuleResult {
	var out []RuleResult
	for _, rr := range r.Rules {
		if !rr.OK {
			out = append(out, rr)
		}
	}
	return out
}

// Review applies the policy to the plan at now. It evaluates every rule,
// in the order of Rules, and reports each one whether or not an earlier
// one failed, so the card shows the whole picture. It is deterministic:
// the same arguments give the same Result, details included. A Result
// that is OK implies plan.Validate() == nil.
func Review(plan Plan, req Request, pol Policy, now time.Time) Result {
	target, targetErr := ParseTarget(plan.Target)
	rules := []RuleResult{
		result(RulePlanWellFormed, checkShape(plan), "kind, target and params are well-formed"),
		reviewProtected(plan.Target, targetErr, pol),
		reviewAllowed(plan.Target, targetErr, pol),
		reviewEnvironment(target, targetErr, pol),
		reviewReason(req.Reason, pol.MinReasonLength),
		reviewWindow(pol, now),
		reviewExpiry(plan, now),
		result(RuleHealthCheck, checkHealth(plan), "health check is present and bounded"),
		reviewHealthHost(plan, req),
		reviewRollback(plan),
		reviewRunbook(plan, target, targetErr, pol),
		result(RuleDigests, checkDigests(plan), "before and after state digests are well-formed"),
		reviewApprovers(req, pol),
	}
	ok := true
	for _, r := range rules {
		ok = ok && r.OK
	}
	return Result{OK: ok, Rules: rules}
}

func result(rule string, err error, okDetail string) RuleResult {
	if err != nil {
		return RuleResult{Rule: rule, Detail: err.Error()}
	}
	return RuleResult{Rule: rule, OK: true, Detail: okDetail}
}

func malformed(rule string, err error) RuleResult {
	return RuleResult{Rule: rule, Detail: "the target is malformed, so it cannot be checked: " + signoff.ErrorMessage(err)}
}

func reviewProtected(target string, targetErr error, pol Policy) RuleResult {
	if targetErr != nil {
		return malformed(RuleTargetNotProtected, targetErr)
	}
	if pat, ok := firstMatch(pol.ProtectedTargets, target); ok {
		return RuleResult{Rule: RuleTargetNotProtected, Detail: fmt.Sprintf("%s is protected by %q and can never be changed", target, pat)}
	}
	return RuleResult{Rule: RuleTargetNotProtected, OK: true, Detail: fmt.Sprintf("%s matches no protected pattern", target)}
}

func reviewAllowed(target string, targetErr error, pol Policy) RuleResult {
	if targetErr != nil {
		return malformed(RuleTargetAllowed, targetErr)
	}
	if pat, ok := firstMatch(pol.AllowedTargets, target); ok {
		return RuleResult{Rule: RuleTargetAllowed, OK: true, Detail: fmt.Sprintf("%s is allowed by %q", target, pat)}
	}
	return RuleResult{Rule: RuleTargetAllowed, Detail: fmt.Sprintf("%s matches no allowed_targets pattern", target)}
}

func reviewEnvironment(t Target, targetErr error, pol Policy) RuleResult {
	switch {
	case targetErr != nil:
		return malformed(RuleEnvironmentAllowed, targetErr)
	case t.Kind != KindFlag:
		return RuleResult{Rule: RuleEnvironmentAllowed, OK: true, Detail: fmt.Sprintf("a %s target belongs to no environment", t.Kind)}
	}
	for _, e := range pol.Environments {
		if e == t.Env {
			return RuleResult{Rule: RuleEnvironmentAllowed, OK: true, Detail: fmt.Sprintf("environment %s is allowed", t.Env)}
		}
	}
	return RuleResult{Rule: RuleEnvironmentAllowed, Detail: fmt.Sprintf("environment %s is not in the policy's environments", t.Env)}
}

// ReasonLength counts the characters of a reason a person can read:
// letters, digits, punctuation and symbols, and single spaces between
// them. Invisible characters (zero-width spaces and joiners, bidi
// controls, tag characters, other format and control characters) and
// runs of white space do not count, so a minimum cannot be met with text
// nobody sees.
func ReasonLength(reason string) int {
	n, space := 0, false
	for _, r := range reason {
		switch {
		case unicode.IsSpace(r):
			space = n > 0
		case unicode.IsGraphic(r) && !unicode.Is(unicode.Cf, r) && !unicode.Is(unicode.Mn, r) && !unicode.Is(unicode.Me, r) &&
			!unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) && r != '\u2800':
			// Hangul fillers and the other default-ignorable letters, and
			// the braille blank, are letters or symbols that show nothing.
			if space {
				n++
				space = false
			}
			n++
		}
	}
	return n
}

func reviewReason(reason string, min int) RuleResult {
	if !utf8.ValidString(reason) {
		return RuleResult{Rule: RuleReasonLength, Detail: "the reason is not valid UTF-8"}
	}
	n := ReasonLength(reason)
	if min < 1 {
		min = 1 // a policy not built by Parse still needs a reason
	}
	if n < min {
		return RuleResult{Rule: RuleReasonLength, Detail: fmt.Sprintf("the reason has %d characters, the policy needs at least %d", n, min)}
	}
	return RuleResult{Rule: RuleReasonLength, OK: true, Detail: fmt.Sprintf("the reason has %d characters (at least %d)", n, min)}
}

func reviewWindow(pol Policy, now time.Time) RuleResult {
	if len(pol.Windows) == 0 {
		return RuleResult{Rule: RuleChangeWindow, Detail: "the policy lists no change windows, so no change may run"}
	}
	if w, ok := pol.InWindow(now); ok {
		return RuleResult{Rule: RuleChangeWindow, OK: true, Detail: fmt.Sprintf("%s is inside the window %s", now.UTC().Format(time.RFC3339), w)}
	}
	return RuleResult{Rule: RuleChangeWindow, Detail: fmt.Sprintf("%s is outside every change window", now.UTC().Format(time.RFC3339))}
}

func reviewExpiry(p Plan, now time.Time) RuleResult {
	if err := checkExpiry(p); err != nil {
		return RuleResult{Rule: RulePlanNotExpired, Detail: err.Error()}
	}
	at := p.ExpiresAt.UTC().Format(time.RFC3339)
	if !now.Before(p.ExpiresAt) {
		return RuleResult{Rule: RulePlanNotExpired, Detail: "the plan expired at " + at}
	}
	return RuleResult{Rule: RulePlanNotExpired, OK: true, Detail: "the plan expires at " + at}
}

func reviewRollback(p Plan) RuleResult {
	if err := checkRollback(p); err != nil {
		return RuleResult{Rule: RuleRollback, Detail: err.Error()}
	}
	if !Reversible(p.Kind) && isNull(p.Rollback) {
		return RuleResult{Rule: RuleRollback, OK: true, Detail: fmt.Sprintf("a %s has no general inverse and this plan names no compensating action: a failed health check restores nothing", p.Kind)}
	}
	return RuleResult{Rule: RuleRollback, OK: true, Detail: "a rollback is present"}
}

func reviewRunbook(p Plan, t Target, targetErr error, pol Policy) RuleResult {
	switch {
	case targetErr != nil:
		return malformed(RuleRunbookNetwork, targetErr)
	case t.Kind != KindRunbook:
		return RuleResult{Rule: RuleRunbookNetwork, OK: true, Detail: "not a runbook"}
	}
	rb, listed := pol.Runbooks[t.Name]
	if !listed {
		return RuleResult{Rule: RuleRunbookNetwork, Detail: fmt.Sprintf("runbook %s is not allowlisted under runbooks", t.Name)}
	}
	wants, err := runbookNetwork(p.Params)
	switch {
	case err != nil:
		return RuleResult{Rule: RuleRunbookNetwork, Detail: err.Error()}
	case wants && !rb.Network:
		return RuleResult{Rule: RuleRunbookNetwork, Detail: fmt.Sprintf("runbook %s asks for the network, which the policy does not grant it", t.Name)}
	case wants:
		return RuleResult{Rule: RuleRunbookNetwork, OK: true, Detail: fmt.Sprintf("runbook %s is allowlisted with network access", t.Name)}
	}
	return RuleResult{Rule: RuleRunbookNetwork, OK: true, Detail: fmt.Sprintf("runbook %s is allowlisted and runs without network", t.Name)}
}

func reviewApprovers(req Request, pol Policy) RuleResult {
	if req.Preapproved {
		return RuleResult{Rule: RuleApprovers, OK: true, Detail: "a compensating rollback the policy pre-approves: no approval is needed"}
	}
	q := pol.Quorum()
	eligible := 0
	for i, id := range q.Group {
		if slices.Contains(q.Group[:i], id) || (q.NoSelfApproval && id == req.Opener) || (q.ProposerCannotApprove && id == req.Proposer) {
			continue
		}
		eligible++
	}
	if q.Required < 1 || eligible < q.Required {
		return RuleResult{Rule: RuleApprovers, Detail: fmt.Sprintf("%d eligible approvers in the group, the policy needs %d (at least 1)", eligible, q.Required)}
	}
	return RuleResult{Rule: RuleApprovers, OK: true, Detail: fmt.Sprintf("%d eligible approvers in the group, the policy needs %d", eligible, q.Required)}
}
