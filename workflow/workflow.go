// Package workflow holds the case state machines as transition tables. It is
// pure logic: the service reads the case, asks a Table whether a command is
// legal for the caller's role, applies the row's effect and stores the result
// in one transaction. Keeping the rules in data rather than in branches lets
// one test check every row and every refusal (SPEC section 3: "Who may trigger
// each transition is a table in code, with a test per row").
package workflow

import (
	"fmt"
	"slices"
	"strings"

	"github.com/signoff-dev/signoff"
)

// Facts are the server-computed numbers that guards read. They come from the
// stored case, never from the caller, so a guard cannot be talked past.
type Facts struct {
	FixAttempts, MaxFixAttempts int
}

// Guard is a named condition on a transition. The name is what a refused
// caller sees in the ECONFLICT message and what tests refer to.
type Guard struct {
	Name  string
	Allow func(Facts) bool
}

// Transition is one row of a table: from state From, command Command moves
// the case to To if the caller holds one of Roles and Guard allows.
type Transition struct {
	From, Command, To string
	Roles             []signoff.Role
	// Guard is nil when the row always applies.
	Guard *Guard
	// Effect is nil when the row leaves the facts unchanged.
	Effect func(Facts) Facts
}

// Apply returns f after the row's effect. The caller stores the result with
// the new state so facts and state never drift apart.
func (tr Transition) Apply(f Facts) Facts {
	if tr.Effect == nil {
		return f
	}
	return tr.Effect(f)
}

// Permits reports whether role appears on the row.
func (tr Transition) Permits(role signoff.Role) bool {
	return slices.Contains(tr.Roles, role)
}

// GuardName returns the guard's name, or "" for an unguarded row.
func (tr Transition) GuardName() string {
	if tr.Guard == nil {
		return ""
	}
	return tr.Guard.Name
}

func (tr Transition) allows(f Facts) bool {
	return tr.Guard == nil || tr.Guard.Allow(f)
}

// Table is the state machine of one case kind.
type Table struct {
	Kind        signoff.CaseKind
	Initial     string
	States      []string
	Transitions []Transition
}

// The guards on fix attempts. They are exact complements, so when they split
// one (state, command) pair exactly one of them applies for any facts. An
// exhausted budget routes to a human rather than granting another attempt
// (SPEC principle 5: an exhausted budget is never permission).
var (
	AttemptLeft = &Guard{Name: "attempt_left", Allow: func(f Facts) bool {
		return f.FixAttempts < f.MaxFixAttempts
	}}
	NoAttemptLeft = &Guard{Name: "no_attempt_left", Allow: func(f Facts) bool {
		return f.FixAttempts >= f.MaxFixAttempts
	}}
)

// CountAttempt is the effect of submitting a candidate: the attempt is spent
// when it is submitted, whatever the verdict, so a slow verifier cannot be
// used to get extra tries.
func CountAttempt(f Facts) Facts {
	f.FixAttempts++
	return f
}

// ResetAttempts is the effect of a human resuming the fix: the human has
// granted a fresh budget.
func ResetAttempts(f Facts) Facts {
	f.FixAttempts = 0
	return f
}

// humanOnly lists the commands no agent may hold (SPEC principle 4: agents
// never approve, merge, execute or confirm). Every resume_* command is also
// human-only, see HumanOnly.
var humanOnly = map[string]bool{
	"approve":                 true,
	"approve_triage":          true,
	"approve_harness":         true,
	"reject_harness":          true,
	"reject_triage":           true,
	"merge":                   true,
	"execute":                 true,
	"confirm_reproduction":    true,
	"reject_reproduction":     true,
	"confirm_fix":             true,
	"report_still_broken":     true,
	"still_broken_on_primary": true,
	"close":                   true,
	"reject":                  true,
	"revert":                  true,
}

// HumanOnly reports whether command is one that no agent role may appear on.
// The system role may still run some of them (the gate executes and reverts),
// because the system is not an agent.
func HumanOnly(command string) bool {
	return humanOnly[command] || strings.HasPrefix(command, "resume_")
}

// reporterOnly lists the commands that carry the reporter's own answer. Only
// the reporter may give it; the service additionally checks that the caller
// is this case's reporter, which a table cannot know.
var reporterOnly = map[string]bool{
	"confirm_reproduction":    true,
	"reject_reproduction":     true,
	"confirm_fix":             true,
	"report_still_broken":     true,
	"still_broken_on_primary": true,
}

// ReporterOnly reports whether command may be run by the reporter alone.
func ReporterOnly(command string) bool { return reporterOnly[command] }

// ReporterCommand reports whether command carries the reporter's words and
// so must list the reporter. provide_info is one, but concierge and humans
// may relay it for them.
func ReporterCommand(command string) bool {
	return reporterOnly[command] || command == "provide_info"
}

// For returns the table of kind. Returns EINVALID for an unknown kind.
func For(kind signoff.CaseKind) (*Table, error) {
	switch kind {
	case signoff.KindBug:
		return Bug, nil
	case signoff.KindChange:
		return Change, nil
	}
	return nil, signoff.Errorf(signoff.EINVALID, "unknown case kind %q", kind)
}

// IsState reports whether s is a state of t.
func (t *Table) IsState(s string) bool { return slices.Contains(t.States, s) }

// Commands returns every command of t, sorted and without repeats.
func (t *Table) Commands() []string {
	out := make([]string, 0, len(t.Transitions))
	for _, tr := range t.Transitions {
		out = append(out, tr.Command)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (t *Table) isCommand(c string) bool {
	for _, tr := range t.Transitions {
		if tr.Command == c {
			return true
		}
	}
	return false
}

// Next returns the row that command moves a case in state from to, for a
// caller holding role, given facts f. The order of checks decides the error,
// and transports map errors to statuses, so it is fixed:
//   - a command t does not know: EINVALID (the request is malformed);
//   - no row for (from, command): ECONFLICT carrying State = from, so the
//     caller can re-read the case and decide;
//   - rows exist but none lists role: EFORBIDDEN;
//   - role allowed but every guard refuses: ECONFLICT carrying State = from,
//     naming the guards.
//
// A from that is not a state of t means the stored case is corrupt; that is a
// plain (internal) error, not something the caller can fix.
func (t *Table) Next(from, command string, role signoff.Role, f Facts) (Transition, error) {
	if !t.IsState(from) {
		return Transition{}, fmt.Errorf("workflow: %s case in unknown state %q", t.Kind, from)
	}
	if !t.isCommand(command) {
		return Transition{}, signoff.Errorf(signoff.EINVALID, "unknown %s command %q", t.Kind, command)
	}
	var rows []Transition
	permitted := false
	for _, tr := range t.Transitions {
		if tr.From == from && tr.Command == command {
			rows = append(rows, tr)
			permitted = permitted || tr.Permits(role)
		}
	}
	if len(rows) == 0 {
		return Transition{}, conflict(from, "command %q is not allowed in state %q", command, from)
	}
	if !permitted {
		return Transition{}, signoff.Errorf(signoff.EFORBIDDEN, "role %q may not %s a %s case in state %q", role, command, t.Kind, from)
	}
	var found []Transition
	var refused []string
	for _, tr := range rows {
		if !tr.Permits(role) {
			continue
		}
		if tr.allows(f) {
			found = append(found, tr)
		} else {
			refused = append(refused, tr.GuardName())
		}
	}
	switch len(found) {
	case 0:
		return Transition{}, conflict(from, "command %q refused in state %q by guard %s", command, from, strings.Join(refused, ", "))
	case 1:
		return found[0], nil
	}
	// Overlapping guards are a table bug; refuse rather than pick one.
	return Transition{}, fmt.Errorf("workflow: %d rows of %s (%s, %s) allow facts %+v", len(found), t.Kind, from, command, f)
}

// Allowed returns the rows role can take from state from right now, in table
// order. Clients use it to offer only commands that will succeed.
func (t *Table) Allowed(from string, role signoff.Role, f Facts) []Transition {
	var out []Transition
	for _, tr := range t.Transitions {
		if tr.From == from && tr.Permits(role) && tr.allows(f) {
			out = append(out, tr)
		}
	}
	return out
}

func conflict(state, format string, args ...any) *signoff.Error {
	e := signoff.Errorf(signoff.ECONFLICT, format, args...)
	e.State = state
	return e
}

// New returns a validated table. It refuses what would be a programmer error:
// an unknown or repeated state, a row naming an unknown state, a row with no
// roles or an unknown role, a duplicate (from, command, guard) row, an agent
// on a human-only command, a reporter command without the reporter, and rows
// sharing (from, command) that are not all guarded or do not list the same
// roles (so whether a role is forbidden never depends on the facts).
func New(kind signoff.CaseKind, initial string, states []string, rows []Transition) (*Table, error) {
	if !kind.Valid() {
		return nil, fmt.Errorf("workflow: unknown kind %q", kind)
	}
	known := map[string]bool{}
	for _, s := range states {
		if s == "" || known[s] {
			return nil, fmt.Errorf("workflow: %s: empty or repeated state %q", kind, s)
		}
		known[s] = true
	}
	if !known[initial] {
		return nil, fmt.Errorf("workflow: %s: initial state %q is not a state", kind, initial)
	}
	type key struct{ from, command, guard string }
	seen := map[key]bool{}
	groups := map[[2]string][]Transition{}
	for _, tr := range rows {
		name := fmt.Sprintf("%s: %s -%s-> %s", kind, tr.From, tr.Command, tr.To)
		if !known[tr.From] || !known[tr.To] {
			return nil, fmt.Errorf("workflow: %s: unknown state", name)
		}
		if tr.Command == "" {
			return nil, fmt.Errorf("workflow: %s: empty command", name)
		}
		if tr.Guard != nil && (tr.Guard.Name == "" || tr.Guard.Allow == nil) {
			return nil, fmt.Errorf("workflow: %s: guard needs a name and a func", name)
		}
		k := key{tr.From, tr.Command, tr.GuardName()}
		if seen[k] {
			return nil, fmt.Errorf("workflow: %s: duplicate row for guard %q", name, k.guard)
		}
		seen[k] = true
		if len(tr.Roles) == 0 {
			return nil, fmt.Errorf("workflow: %s: no roles", name)
		}
		for i, r := range tr.Roles {
			// Viewers only read; the system is allowed although it holds no
			// credential, because it is how the server acts on its own.
			if r == signoff.RoleViewer || (!r.Assignable() && r != signoff.RoleSystem) {
				return nil, fmt.Errorf("workflow: %s: role %q may not transition", name, r)
			}
			if slices.Contains(tr.Roles[:i], r) {
				return nil, fmt.Errorf("workflow: %s: role %q listed twice", name, r)
			}
			if r.IsAgent() && HumanOnly(tr.Command) {
				return nil, fmt.Errorf("workflow: %s: agent role %q on human-only command", name, r)
			}
			if ReporterOnly(tr.Command) && r != signoff.RoleReporter {
				return nil, fmt.Errorf("workflow: %s: role %q on reporter-only command", name, r)
			}
		}
		if ReporterCommand(tr.Command) && !tr.Permits(signoff.RoleReporter) {
			return nil, fmt.Errorf("workflow: %s: reporter command without the reporter", name)
		}
		g := [2]string{tr.From, tr.Command}
		groups[g] = append(groups[g], tr)
	}
	for g, trs := range groups {
		if len(trs) < 2 {
			continue
		}
		for _, tr := range trs {
			if tr.Guard == nil {
				return nil, fmt.Errorf("workflow: %s: (%s, %s) has several rows, one unguarded", kind, g[0], g[1])
			}
			if !sameRoles(tr.Roles, trs[0].Roles) {
				return nil, fmt.Errorf("workflow: %s: (%s, %s) rows list different roles", kind, g[0], g[1])
			}
		}
	}
	return &Table{
		Kind:        kind,
		Initial:     initial,
		States:      slices.Clone(states),
		Transitions: slices.Clone(rows),
	}, nil
}

// mustNew builds a package table at init; a bad table must stop the program
// before it serves a single request.
func mustNew(kind signoff.CaseKind, initial string, states []string, rows []Transition) *Table {
	t, err := New(kind, initial, states, rows)
	if err != nil {
		panic(err)
	}
	return t
}

func sameRoles(a, b []signoff.Role) bool {
	if len(a) != len(b) {
		return false
	}
	for _, r := range a {
		if !slices.Contains(b, r) {
			return false
		}
	}
	return true
}

// roles concatenates role lists; tables read better as [fixer, H] than as a
// repeated literal.
func roles(lists ...[]signoff.Role) []signoff.Role {
	var out []signoff.Role
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// Shorthands for the tables.
var (
	humans = []signoff.Role{signoff.RoleOperator, signoff.RoleOwner}
	system = []signoff.Role{signoff.RoleSystem}
)

func one(r signoff.Role) []signoff.Role { return []signoff.Role{r} }

// decisions are the commands that bind a person to exactly what they saw:
// approvals, merges and gate executions bind to a digest (SPEC principle 2),
// a staff review of a reproduction binds to its review digest, and the
// reporter's answers are given on their own tracking page. None of
// them may be applied "by id" through a generic transition request; the
// services that verify the signed approval or the reporter's capability
// apply them.
var decisions = map[string]bool{
	"approve": true, "reject": true, "approve_triage": true, "merge": true, "execute": true, "revert": true,
	"approve_harness": true, "reject_harness": true,
	"confirm_reproduction": true, "reject_reproduction": true, "confirm_fix": true, "report_still_broken": true,
	"still_broken_on_primary": true,
}

// Decision reports whether command is a decision that only a verified
// approval or the reporter's own answer may apply.
func Decision(command string) bool { return decisions[command] }

// questions are what a reporter is asked on their tracking page while their
// case waits for them.
var questions = map[string]string{
	"needs_info":                     "We need a little more information to act on your report: what device and app version, and what steps lead to the problem?",
	"awaiting_reporter_repro":        "Is this the bug you saw?",
	"awaiting_reporter_confirmation": "Does the live fix work for you?",
}

// ReporterQuestion returns the question a case in state asks its reporter,
// or "" when it is not waiting for them.
func ReporterQuestion(state string) string { return questions[state] }

// decisionCommands binds a decision kind to the case commands a person's
// answer applies: the decision service applies them in the same
// transaction as the answer, as the person who decided. This is the one
// path by which approve_triage reaches a case.
var decisionCommands = map[string][2]string{
	"triage_ticket": {"approve_triage", "reject_triage"},
}

// DecisionCommand returns the case command a decision of kind applies when
// approved (or rejected), or "" when the kind moves no case.
func DecisionCommand(kind string, approve bool) string {
	c, ok := decisionCommands[kind]
	if !ok {
		return ""
	}
	if approve {
		return c[0]
	}
	return c[1]
}

// amendments lists, per decision kind, what a person may answer beyond yes
// or no, and the values each key takes.
var amendments = map[string]map[string][]string{
	"triage_ticket": {"severity": {"low", "medium", "high", "critical"}},
}

// CheckAmendment reports whether a is a valid amendment for a decision of
// kind: only known keys, only allowed values, and only on an approval.
func CheckAmendment(kind string, approve bool, a map[string]any) error {
	if len(a) == 0 {
		return nil
	}
	if !approve {
		return signoff.Errorf(signoff.EINVALID, "an amendment comes with an approval, not a rejection")
	}
	allowed, ok := amendments[kind]
	if !ok {
		return signoff.Errorf(signoff.EINVALID, "decisions of kind %s take no amendment", kind)
	}
	for k, v := range a {
		vals, ok := allowed[k]
		if !ok {
			return signoff.Errorf(signoff.EINVALID, "amendment %q is not one a %s decision takes", k, kind)
		}
		s, _ := v.(string)
		found := false
		for _, x := range vals {
			found = found || x == s
		}
		if !found {
			return signoff.Errorf(signoff.EINVALID, "amendment %s must be one of %v", k, vals)
		}
	}
	return nil
}
