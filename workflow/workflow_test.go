package workflow_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

func TestFor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind signoff.CaseKind
		want *workflow.Table
		code string
	}{
		{signoff.KindBug, workflow.Bug, ""},
		{signoff.KindChange, workflow.Change, ""},
		{"incident", nil, signoff.EINVALID},
		{"", nil, signoff.EINVALID},
	} {
		t.Run(string(tc.kind), func(t *testing.T) {
			t.Parallel()
			got, err := workflow.For(tc.kind)
			if code := signoff.ErrorCode(err); code != tc.code {
				t.Fatalf("code=%q, want %q", code, tc.code)
			}
			if got != tc.want {
				t.Fatalf("table=%v, want %v", got, tc.want)
			}
			if got != nil && (got.Kind != tc.kind || !got.IsState(got.Initial)) {
				t.Fatalf("table kind=%s initial=%s", got.Kind, got.Initial)
			}
		})
	}
}

func TestInitial(t *testing.T) {
	t.Parallel()
	if workflow.Bug.Initial != "received" || workflow.Change.Initial != "requested" {
		t.Fatalf("initial states %s, %s", workflow.Bug.Initial, workflow.Change.Initial)
	}
}

// Each error class maps to a different HTTP status, so every one is pinned.
func TestNextErrors(t *testing.T) {
	t.Parallel()
	spare := workflow.Facts{FixAttempts: 1, MaxFixAttempts: 3}
	spent := workflow.Facts{FixAttempts: 3, MaxFixAttempts: 3}
	for _, tc := range []struct {
		name    string
		table   *workflow.Table
		from    string
		command string
		role    signoff.Role
		facts   workflow.Facts
		code    string
		state   string
		msg     []string
	}{
		{"unknown_command", workflow.Bug, "triaging", "self_destruct", triager, spare, signoff.EINVALID, "", []string{"self_destruct"}},
		{"other_kind_command", workflow.Bug, "triaging", "plan", planner, spare, signoff.EINVALID, "", []string{"plan"}},
		{"empty_command", workflow.Change, "requested", "", planner, spare, signoff.EINVALID, "", nil},
		{"wrong_state", workflow.Bug, "received", "approve", owner, spare, signoff.ECONFLICT, "received", []string{"approve", "received"}},
		{"agent_wrong_state_is_conflict_not_forbidden", workflow.Bug, "received", "merge", fixer, spare, signoff.ECONFLICT, "received", []string{"merge"}},
		{"closed_is_final", workflow.Bug, "closed", "close", owner, spare, signoff.ECONFLICT, "closed", []string{"close", "closed"}},
		{"agent_cannot_approve", workflow.Bug, "awaiting_approval", "approve", fixer, spare, signoff.EFORBIDDEN, "", nil},
		{"reviewer_cannot_approve", workflow.Change, "awaiting_approval", "approve", reviewer, spare, signoff.EFORBIDDEN, "", nil},
		{"viewer_cannot_close", workflow.Bug, "fixing", "close", viewer, spare, signoff.EFORBIDDEN, "", nil},
		{"operator_cannot_confirm_fix", workflow.Bug, "awaiting_reporter_confirmation", "confirm_fix", operator, spare, signoff.EFORBIDDEN, "", nil},
		{"fixer_cannot_record_verdict", workflow.Bug, "verifying", "record_verified", fixer, spare, signoff.EFORBIDDEN, "", nil},
		{"forbidden_before_guard", workflow.Bug, "fixing", "submit_candidate", reviewer, spent, signoff.EFORBIDDEN, "", nil},
		{"unknown_role", workflow.Bug, "received", "start_triage", "intruder", spare, signoff.EFORBIDDEN, "", nil},
		{"budget_spent", workflow.Bug, "fixing", "submit_candidate", fixer, spent, signoff.ECONFLICT, "fixing", []string{"attempt_left", "submit_candidate"}},
		{"no_budget_configured", workflow.Bug, "fixing", "submit_candidate", fixer, workflow.Facts{}, signoff.ECONFLICT, "fixing", []string{"attempt_left"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.table.Next(tc.from, tc.command, tc.role, tc.facts)
			var e *signoff.Error
			if !errors.As(err, &e) {
				t.Fatalf("err=%v, want *signoff.Error", err)
			}
			if e.Code != tc.code {
				t.Fatalf("code=%q, want %q (%v)", e.Code, tc.code, err)
			}
			if e.State != tc.state {
				t.Fatalf("state=%q, want %q", e.State, tc.state)
			}
			for _, m := range tc.msg {
				if !strings.Contains(e.Message, m) {
					t.Fatalf("message %q lacks %q", e.Message, m)
				}
			}
		})
	}
}

// A stored case in a state its table does not know is corruption, not the
// caller's fault: the error is internal.
func TestNextUnknownState(t *testing.T) {
	t.Parallel()
	_, err := workflow.Bug.Next("limbo", "close", owner, workflow.Facts{})
	if code := signoff.ErrorCode(err); code != signoff.EINTERNAL {
		t.Fatalf("code=%q, want %q", code, signoff.EINTERNAL)
	}
	if got := workflow.Bug.Allowed("limbo", owner, workflow.Facts{}); got != nil {
		t.Fatalf("Allowed(limbo)=%v, want none", got)
	}
}

// The fix budget end to end: three attempts, then a human, who grants more.
func TestFixBudget(t *testing.T) {
	t.Parallel()
	f := workflow.Facts{MaxFixAttempts: 3}
	state := "fixing"
	step := func(command string, role signoff.Role, want string) {
		t.Helper()
		tr, err := workflow.Bug.Next(state, command, role, f)
		if err != nil {
			t.Fatalf("%s in %s (%+v): %v", command, state, f, err)
		}
		if tr.To != want {
			t.Fatalf("%s in %s (%+v) -> %s, want %s", command, state, f, tr.To, want)
		}
		state, f = tr.To, tr.Apply(f)
	}
	step("submit_candidate", fixer, "verifying")
	step("record_rejected", system, "fixing")
	step("submit_candidate", fixer, "verifying")
	step("record_rejected", system, "fixing")
	step("submit_candidate", fixer, "verifying")
	if f.FixAttempts != 3 {
		t.Fatalf("FixAttempts=%d, want 3", f.FixAttempts)
	}
	step("record_rejected", system, "needs_human")
	step("resume_fix", operator, "fixing")
	if f.FixAttempts != 0 {
		t.Fatalf("FixAttempts after resume_fix=%d, want 0", f.FixAttempts)
	}
	step("submit_candidate", fixer, "verifying")
	step("record_verified", system, "awaiting_approval")
	step("reject", owner, "fixing")
}

func TestCommandsSortedUnique(t *testing.T) {
	t.Parallel()
	for _, s := range specs() {
		c := s.table.Commands()
		if !slices.IsSorted(c) || len(slices.Compact(slices.Clone(c))) != len(c) {
			t.Fatalf("%s: Commands()=%v, want sorted and unique", s.table.Kind, c)
		}
	}
}

// TestNew pins every rule the constructor enforces; each case breaks one.
func TestNew(t *testing.T) {
	t.Parallel()
	g := func(name string) *workflow.Guard {
		return &workflow.Guard{Name: name, Allow: func(workflow.Facts) bool { return true }}
	}
	states := []string{"a", "b", "c"}
	for _, tc := range []struct {
		name    string
		kind    signoff.CaseKind
		initial string
		states  []string
		rows    []workflow.Transition
		ok      bool
	}{
		{"valid_with_system", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "go", To: "b", Roles: rs(system)},
			{From: "b", Command: "approve", To: "c", Roles: rs(owner, system)},
		}, true},
		{"unknown_kind", "incident", "a", states, nil, false},
		{"initial_not_a_state", signoff.KindBug, "z", states, nil, false},
		{"repeated_state", signoff.KindBug, "a", []string{"a", "a"}, nil, false},
		{"empty_state", signoff.KindBug, "a", []string{"a", ""}, nil, false},
		{"unknown_to", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "go", To: "z", Roles: rs(owner)},
		}, false},
		{"unknown_from", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "z", Command: "go", To: "a", Roles: rs(owner)},
		}, false},
		{"empty_command", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "", To: "b", Roles: rs(owner)},
		}, false},
		{"no_roles", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "go", To: "b"},
		}, false},
		{"unknown_role", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "go", To: "b", Roles: rs("intruder")},
		}, false},
		{"viewer_only_reads", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "go", To: "b", Roles: rs(viewer)},
		}, false},
		{"role_twice", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "go", To: "b", Roles: rs(owner, owner)},
		}, false},
		{"duplicate_row", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "go", To: "b", Roles: rs(owner)},
			{From: "a", Command: "go", To: "c", Roles: rs(owner)},
		}, false},
		{"duplicate_guarded_row", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "go", To: "b", Roles: rs(owner), Guard: g("x")},
			{From: "a", Command: "go", To: "c", Roles: rs(owner), Guard: g("x")},
		}, false},
		{"shared_pair_one_unguarded", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "go", To: "b", Roles: rs(owner), Guard: g("x")},
			{From: "a", Command: "go", To: "c", Roles: rs(owner)},
		}, false},
		{"shared_pair_different_roles", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "go", To: "b", Roles: rs(owner), Guard: g("x")},
			{From: "a", Command: "go", To: "c", Roles: rs(operator), Guard: g("y")},
		}, false},
		{"guard_without_func", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "go", To: "b", Roles: rs(owner), Guard: &workflow.Guard{Name: "x"}},
		}, false},
		{"guard_without_name", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "go", To: "b", Roles: rs(owner), Guard: g("")},
		}, false},
		{"agent_approves", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "approve", To: "b", Roles: rs(owner, reviewer)},
		}, false},
		{"agent_merges", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "merge", To: "b", Roles: rs(fixer)},
		}, false},
		{"agent_executes", signoff.KindChange, "a", states, []workflow.Transition{
			{From: "a", Command: "execute", To: "b", Roles: rs(planner)},
		}, false},
		{"agent_resumes", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "resume_anything", To: "b", Roles: rs(triager)},
		}, false},
		{"agent_confirms_for_reporter", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "confirm_fix", To: "b", Roles: rs(reporter, concierge)},
		}, false},
		{"human_confirms_for_reporter", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "confirm_reproduction", To: "b", Roles: rs(reporter, owner)},
		}, false},
		{"provide_info_without_reporter", signoff.KindBug, "a", states, []workflow.Transition{
			{From: "a", Command: "provide_info", To: "b", Roles: rs(concierge)},
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			table, err := workflow.New(tc.kind, tc.initial, tc.states, tc.rows)
			if tc.ok && (err != nil || table == nil) {
				t.Fatalf("New=%v, want a table", err)
			}
			if !tc.ok && err == nil {
				t.Fatalf("New accepted a table breaking %s", tc.name)
			}
		})
	}
}

// The package tables must survive their own constructor again; this guards
// against anyone assembling them by hand later.
func TestTablesRevalidate(t *testing.T) {
	t.Parallel()
	for _, s := range specs() {
		if _, err := workflow.New(s.table.Kind, s.table.Initial, s.table.States, s.table.Transitions); err != nil {
			t.Fatalf("%s: %v", s.table.Kind, err)
		}
	}
}

// ExampleTable_Next shows the service's use: look up the row, then store the
// row's target state and the facts after its effect.
func ExampleTable_Next() {
	f := workflow.Facts{FixAttempts: 2, MaxFixAttempts: 3}
	tr, err := workflow.Bug.Next("fixing", "submit_candidate", signoff.RoleFixer, f)
	fmt.Println(tr.To, tr.Apply(f).FixAttempts, err)

	_, err = workflow.Bug.Next("fixing", "submit_candidate", signoff.RoleFixer, tr.Apply(f))
	fmt.Println(signoff.ErrorCode(err), signoff.ErrorState(err))

	_, err = workflow.Bug.Next("awaiting_approval", "approve", signoff.RoleFixer, f)
	fmt.Println(signoff.ErrorCode(err))
	// Output:
	// verifying 3 <nil>
	// conflict fixing
	// forbidden
}
