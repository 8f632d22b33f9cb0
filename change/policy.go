package change

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
)

// Policy defaults and bounds.
const (
	DefaultMinReasonLength  = 20
	DefaultApprovalTTLHours = 23
	MaxApprovalTTLHours     = 168
	MaxBypassMinutes        = 240
	maxMinReasonLength      = 2000
	maxPolicySize           = 64 << 10
)

// Policy is a workspace's change policy. It denies by default: a target is
// changeable only if an allowed_targets glob matches it (and no
// protected_targets glob does), a flag's environment only if listed, a
// runbook only if listed under runbooks, and a change executes only inside
// a listed window. An empty policy therefore allows nothing.
//
// Build it with Parse: window time zones are resolved there, and a Policy
// decoded from JSON or written by hand keeps its digest but has its
// non-UTC windows closed (fail closed) until parsed again. Its Digest is
// part of every approval, so any change to the policy voids approvals made
// under the old one.
type Policy struct {
	// ProtectedTargets are never changeable, whatever else allows them.
	ProtectedTargets []string `json:"protected_targets"`
	AllowedTargets   []string `json:"allowed_targets"`
	// Environments are the flag environments changes may touch.
	Environments    []string  `json:"environments"`
	MinReasonLength int       `json:"min_reason_length"`
	Approvals       Approvals `json:"approvals"`
	// NoSelfApproval: whoever opened the change request cannot approve it.
	NoSelfApproval bool `json:"no_self_approval"`
	// ProposerCannotApprove: whoever drafted the plan cannot approve it.
	ProposerCannotApprove bool     `json:"proposer_cannot_approve"`
	Windows               []Window `json:"windows"`
	ApprovalTTLHours      int      `json:"approval_ttl_hours"`
	// Runbooks are the allowlisted scripts and whether each may use the
	// network.
	Runbooks        map[string]Runbook `json:"runbooks"`
	EmergencyBypass EmergencyBypass    `json:"emergency_bypass"`
	// PreapprovedRollbacks are the kinds whose compensating rollback needs
	// no new approval.
	PreapprovedRollbacks []string `json:"preapproved_rollbacks"`
}

// Approvals is the quorum: Required distinct members of Group.
type Approvals struct {
	Required int      `json:"required" yaml:"required"`
	Group    []string `json:"group" yaml:"group"`
}

// Window is a weekly change window in a time zone. From is inclusive, To
// exclusive; To may be "24:00", and a To before From runs past midnight
// into the next day (Days names the day it starts).
type Window struct {
	Days []string `json:"days"`
	From string   `json:"from"`
	To   string   `json:"to"`
	TZ   string   `json:"tz"`
	loc  *time.Location
}

// Runbook is one allowlisted runbook.
type Runbook struct {
	Network bool `json:"network" yaml:"network"`
}

// EmergencyBypass lets the listed human roles write a flag directly for a
// limited time. The write still leaves a receipt.
type EmergencyBypass struct {
	Roles   []signoff.Role `json:"roles" yaml:"roles"`
	Minutes int            `json:"minutes" yaml:"minutes"`
}

// Allows reports whether role may use the bypass.
func (b EmergencyBypass) Allows(role signoff.Role) bool {
	return b.Minutes > 0 && slices.Contains(b.Roles, role)
}

// Duration is how long a bypass lasts.
func (b EmergencyBypass) Duration() time.Duration { return time.Duration(b.Minutes) * time.Minute }

// policyYAML is the document as written. Pointers tell "unset" (take the
// default) from an explicit value.
type policyYAML struct {
	ProtectedTargets      []string           `yaml:"protected_targets"`
	AllowedTargets        []string           `yaml:"allowed_targets"`
	Environments          []string           `yaml:"environments"`
	MinReasonLength       *int               `yaml:"min_reason_length"`
	Approvals             approvalsYAML      `yaml:"approvals"`
	NoSelfApproval        *bool              `yaml:"no_self_approval"`
	ProposerCannotApprove *bool              `yaml:"proposer_cannot_approve"`
	Windows               []windowYAML       `yaml:"windows"`
	ApprovalTTLHours      *int               `yaml:"approval_ttl_hours"`
	Runbooks              map[string]Runbook `yaml:"runbooks"`
	EmergencyBypass       EmergencyBypass    `yaml:"emergency_bypass"`
	PreapprovedRollbacks  []string           `yaml:"preapproved_rollbacks"`
}

type approvalsYAML struct {
	Required *int     `yaml:"required"`
	Group    []string `yaml:"group"`
}

type windowYAML struct {
	Days []string `yaml:"days"`
	From string   `yaml:"from"`
	To   string   `yaml:"to"`
	TZ   string   `yaml:"tz"`
}

// Parse reads a YAML policy strictly (unknown keys, duplicate keys, wrong
// types and a second document are errors, so a typo cannot silently drop a
// rule), fills defaults and validates it. Defaults: min_reason_length 20,
// approvals.required 1, no_self_approval and proposer_cannot_approve true,
// approval_ttl_hours 23, everything else empty (allowing nothing). An
// empty document is the all-default policy. Errors are EINVALID.
//
// Parse resolves each window's tz with time.LoadLocation, which reads the
// zoneinfo database; it is the package's only input besides its arguments.
func Parse(b []byte) (Policy, error) {
	if len(b) > maxPolicySize {
		return Policy{}, signoff.Errorf(signoff.EINVALID, "policy is larger than %d bytes", maxPolicySize)
	}
	var raw policyYAML
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return Policy{}, signoff.Errorf(signoff.EINVALID, "policy: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return Policy{}, signoff.Errorf(signoff.EINVALID, "policy: must be a single YAML document")
	}
	p := Policy{
		ProtectedTargets:      orEmpty(raw.ProtectedTargets),
		AllowedTargets:        orEmpty(raw.AllowedTargets),
		Environments:          orEmpty(raw.Environments),
		MinReasonLength:       deref(raw.MinReasonLength, DefaultMinReasonLength),
		Approvals:             Approvals{Required: deref(raw.Approvals.Required, 1), Group: orEmpty(raw.Approvals.Group)},
		NoSelfApproval:        deref(raw.NoSelfApproval, true),
		ProposerCannotApprove: deref(raw.ProposerCannotApprove, true),
		Windows:               []Window{},
		ApprovalTTLHours:      deref(raw.ApprovalTTLHours, DefaultApprovalTTLHours),
		Runbooks:              raw.Runbooks,
		EmergencyBypass:       EmergencyBypass{Roles: orEmpty(raw.EmergencyBypass.Roles), Minutes: raw.EmergencyBypass.Minutes},
		PreapprovedRollbacks:  orEmpty(raw.PreapprovedRollbacks),
	}
	if p.Runbooks == nil {
		p.Runbooks = map[string]Runbook{}
	}
	for i, w := range raw.Windows {
		win, err := parseWindow(w)
		if err != nil {
			return Policy{}, signoff.Errorf(signoff.EINVALID, "policy: windows[%d]: %s", i, err)
		}
		p.Windows = append(p.Windows, win)
	}
	if err := p.validate(); err != nil {
		return Policy{}, signoff.Errorf(signoff.EINVALID, "policy: %s", err)
	}
	return p, nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func (p Policy) validate() error {
	for _, l := range []struct {
		name string
		list []string
	}{{"protected_targets", p.ProtectedTargets}, {"allowed_targets", p.AllowedTargets}} {
		for _, pat := range l.list {
			if err := checkPattern(pat); err != nil {
				return fmt.Errorf("%s: %s", l.name, err)
			}
		}
		if d, ok := duplicate(l.list); ok {
			return fmt.Errorf("%s lists %q twice", l.name, d)
		}
	}
	for _, e := range p.Environments {
		if !envRE.MatchString(e) {
			return fmt.Errorf("environments: %q must match %s", e, envRE)
		}
	}
	if d, ok := duplicate(p.Environments); ok {
		return fmt.Errorf("environments lists %q twice", d)
	}
	if p.MinReasonLength < 1 || p.MinReasonLength > maxMinReasonLength {
		return fmt.Errorf("min_reason_length must be 1..%d", maxMinReasonLength)
	}
	if err := p.Approvals.validate(); err != nil {
		return err
	}
	if p.ApprovalTTLHours < 1 || p.ApprovalTTLHours > MaxApprovalTTLHours {
		return fmt.Errorf("approval_ttl_hours must be 1..%d", MaxApprovalTTLHours)
	}
	for _, name := range slices.Sorted(maps.Keys(p.Runbooks)) {
		if !runbookRE.MatchString(name) {
			return fmt.Errorf("runbooks: name %q must match %s", name, runbookRE)
		}
	}
	if err := p.EmergencyBypass.validate(); err != nil {
		return err
	}
	for _, k := range p.PreapprovedRollbacks {
		if !validKind(k) {
			return fmt.Errorf("preapproved_rollbacks: %q is not a kind (flag, file, runbook)", k)
		}
	}
	if d, ok := duplicate(p.PreapprovedRollbacks); ok {
		return fmt.Errorf("preapproved_rollbacks lists %q twice", d)
	}
	return nil
}

func (a Approvals) validate() error {
	for _, id := range a.Group {
		if !signoff.ValidID(signoff.PrefixActor, id) {
			return fmt.Errorf("approvals.group: %q is not an actor id", id)
		}
	}
	if d, ok := duplicate(a.Group); ok {
		return fmt.Errorf("approvals.group lists %q twice", d)
	}
	switch {
	case a.Required < 1:
		return fmt.Errorf("approvals.required must be at least 1: every change needs a person")
	case len(a.Group) > 0 && a.Required > len(a.Group):
		// An empty group is allowed: nobody can approve, which is the
		// deny-by-default policy. A group too small for its quorum is a
		// mistake worth stopping at.
		return fmt.Errorf("approvals.required is %d but the group has only %d members", a.Required, len(a.Group))
	}
	return nil
}

func (b EmergencyBypass) validate() error {
	for _, r := range b.Roles {
		if r != signoff.RoleOperator && r != signoff.RoleOwner {
			// Agents never act alone, and reporters and viewers hold no
			// rights over flags.
			return fmt.Errorf("emergency_bypass.roles: %q may not bypass (operator or owner only)", r)
		}
	}
	if d, ok := duplicate(b.Roles); ok {
		return fmt.Errorf("emergency_bypass.roles lists %q twice", d)
	}
	switch {
	case len(b.Roles) == 0 && b.Minutes != 0:
		return fmt.Errorf("emergency_bypass.minutes is set but no roles may bypass")
	case len(b.Roles) > 0 && (b.Minutes < 1 || b.Minutes > MaxBypassMinutes):
		return fmt.Errorf("emergency_bypass.minutes must be 1..%d", MaxBypassMinutes)
	}
	return nil
}

func duplicate[T comparable](list []T) (T, bool) {
	seen := make(map[T]bool, len(list))
	for _, v := range list {
		if seen[v] {
			return v, true
		}
		seen[v] = true
	}
	var zero T
	return zero, false
}

var weekdays = map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday,
	"wed": time.Wednesday, "thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday}

func parseWindow(w windowYAML) (Window, error) {
	out := Window{Days: orEmpty(w.Days), From: w.From, To: w.To, TZ: w.TZ}
	if out.TZ == "" {
		out.TZ = "UTC"
	}
	if len(out.Days) == 0 {
		return Window{}, fmt.Errorf("days is required (mon, tue, wed, thu, fri, sat, sun)")
	}
	for _, d := range out.Days {
		if _, ok := weekdays[d]; !ok {
			return Window{}, fmt.Errorf("day %q must be one of mon, tue, wed, thu, fri, sat, sun", d)
		}
	}
	if d, ok := duplicate(out.Days); ok {
		return Window{}, fmt.Errorf("days lists %q twice", d)
	}
	from, ok := clock(out.From)
	if !ok || from == 24*60 {
		return Window{}, fmt.Errorf("from %q must be HH:MM, 00:00..23:59", out.From)
	}
	to, ok := clock(out.To)
	if !ok {
		return Window{}, fmt.Errorf("to %q must be HH:MM, 00:00..24:00", out.To)
	}
	if from == to {
		return Window{}, fmt.Errorf("from and to are equal: the window is empty or ambiguous")
	}
	if out.TZ == "Local" {
		// The server's own zone would make the policy mean different
		// things on different machines.
		return Window{}, fmt.Errorf("tz must be an IANA zone name such as Europe/Berlin, not Local")
	}
	loc, err := time.LoadLocation(out.TZ)
	if err != nil {
		return Window{}, fmt.Errorf("tz %q is not a known IANA time zone", out.TZ)
	}
	out.loc = loc
	return out, nil
}

// clock parses "HH:MM" (exactly five characters) into minutes after
// midnight, 0..1440.
func clock(s string) (int, bool) {
	if len(s) != 5 || s[2] != ':' {
		return 0, false
	}
	for _, i := range []int{0, 1, 3, 4} {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	h := int(s[0]-'0')*10 + int(s[1]-'0')
	m := int(s[3]-'0')*10 + int(s[4]-'0')
	if m > 59 || h > 24 || (h == 24 && m != 0) {
		return 0, false
	}
	return h*60 + m, true
}

// location is the window's zone. A window that did not come from Parse has
// no resolved zone; only UTC is known without the zoneinfo database, so
// any other zone makes the window never open (fail closed).
func (w Window) location() *time.Location {
	switch {
	case w.loc != nil:
		return w.loc
	case w.TZ == "" || w.TZ == "UTC":
		return time.UTC
	}
	return nil
}

// Contains reports whether t falls inside the window.
func (w Window) Contains(t time.Time) bool {
	loc := w.location()
	from, okF := clock(w.From)
	to, okT := clock(w.To)
	if loc == nil || !okF || !okT || from == to {
		return false
	}
	lt := t.In(loc)
	m := lt.Hour()*60 + lt.Minute()
	day := lt.Weekday()
	if from < to {
		return w.on(day) && from <= m && m < to
	}
	// Past midnight: the evening part belongs to the listed day, the
	// morning part to the day after it.
	return (w.on(day) && m >= from) || (w.on((day+6)%7) && m < to)
}

func (w Window) on(d time.Weekday) bool {
	for _, s := range w.Days {
		if wd, ok := weekdays[s]; ok && wd == d {
			return true
		}
	}
	return false
}

// InWindow returns the first window containing now, if any. Without
// windows nothing is inside one: changes need a listed window.
func (p Policy) InWindow(now time.Time) (Window, bool) {
	for _, w := range p.Windows {
		if w.Contains(now) {
			return w, true
		}
	}
	return Window{}, false
}

func (w Window) String() string {
	return fmt.Sprintf("%s %s-%s %s", strings.Join(w.Days, ","), w.From, w.To, w.TZ)
}

// Digest is the SHA-256 of the policy's canonical JSON, with defaults
// filled in. Reordering a list changes it, as any edit does.
func (p Policy) Digest() string {
	d, err := canonical.Digest(p)
	if err != nil {
		// Strings, ints, bools, slices and a string-keyed map always
		// encode; reaching this is a bug, not an input problem.
		panic("change: policy digest: " + err.Error())
	}
	return d
}

// CheckTarget applies the policy's target rules: the target parses, no
// protected glob matches it, an allowed glob does, a flag's environment is
// listed and a runbook is allowlisted. Returns EFORBIDDEN naming the rule,
// or EINVALID for a malformed target.
func (p Policy) CheckTarget(target string) error {
	t, err := ParseTarget(target)
	if err != nil {
		return err
	}
	if pat, ok := firstMatch(p.ProtectedTargets, target); ok {
		return signoff.Errorf(signoff.EFORBIDDEN, "target %s is protected (%s)", target, pat)
	}
	if _, ok := firstMatch(p.AllowedTargets, target); !ok {
		return signoff.Errorf(signoff.EFORBIDDEN, "target %s matches no allowed_targets pattern", target)
	}
	if t.Kind == KindFlag && !slices.Contains(p.Environments, t.Env) {
		return signoff.Errorf(signoff.EFORBIDDEN, "environment %s is not in the policy's environments", t.Env)
	}
	if _, ok := p.Runbooks[t.Name]; t.Kind == KindRunbook && !ok {
		return signoff.Errorf(signoff.EFORBIDDEN, "runbook %s is not allowlisted under runbooks", t.Name)
	}
	return nil
}

// AllowsNow is what the service computes for GateInput.TargetAllowed:
// CheckTarget, and now inside a change window (EFORBIDDEN otherwise).
func (p Policy) AllowsNow(target string, now time.Time) error {
	if err := p.CheckTarget(target); err != nil {
		return err
	}
	if _, ok := p.InWindow(now); !ok {
		return signoff.Errorf(signoff.EFORBIDDEN, "%s is outside every change window", now.UTC().Format(time.RFC3339))
	}
	return nil
}

// RollbackPreapproved reports whether a compensating rollback of a plan of
// this kind may run without a new approval.
func (p Policy) RollbackPreapproved(kind string) bool {
	return slices.Contains(p.PreapprovedRollbacks, kind)
}

// TTL is the longest lifetime of an approval under this policy.
func (p Policy) TTL() time.Duration { return time.Duration(p.ApprovalTTLHours) * time.Hour }

// Quorum is the policy's approval rule in the form the gate takes.
func (p Policy) Quorum() Quorum {
	return Quorum{Required: p.Approvals.Required, Group: p.Approvals.Group,
		NoSelfApproval: p.NoSelfApproval, ProposerCannotApprove: p.ProposerCannotApprove}
}

// PolicyDigest parses b and returns the digest of the policy it states
// (the store's signoff.PolicyDigester).
func PolicyDigest(b []byte) (string, error) {
	p, err := Parse(b)
	if err != nil {
		return "", err
	}
	return p.Digest(), nil
}

var _ signoff.PolicyDigester = PolicyDigest
