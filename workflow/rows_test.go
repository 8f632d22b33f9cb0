package workflow_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// The expectations below are written out by hand from SPEC sections 3 and 4
// and are deliberately not derived from the tables under test: a row added,
// dropped or widened in the code must show up here as a failing test.

const (
	reporter   = signoff.RoleReporter
	operator   = signoff.RoleOperator
	owner      = signoff.RoleOwner
	viewer     = signoff.RoleViewer
	concierge  = signoff.RoleConcierge
	triager    = signoff.RoleTriager
	reproducer = signoff.RoleReproducer
	fixer      = signoff.RoleFixer
	reviewer   = signoff.RoleReviewer
	planner    = signoff.RolePlanner
	recorder   = signoff.RoleRecorder
	system     = signoff.RoleSystem
)

// row is one expected transition. effect is "" (facts unchanged), "count"
// (one more fix attempt) or "reset" (fix attempts back to zero).
type row struct {
	from, command, to string
	roles             []signoff.Role
	guard             string
	effect            string
}

func rs(r ...signoff.Role) []signoff.Role { return r }

// escalators may hand any open bug to a human: every agent, the humans who
// run the desk, and the system. Not the reporter, not a viewer.
var escalators = rs(concierge, triager, reproducer, fixer, reviewer, planner, recorder, operator, owner, system)

var bugStates = []string{
	"received", "triaging", "dropped", "duplicate", "needs_info",
	"awaiting_triage_approval", "ticketed", "reproducing",
	"awaiting_reporter_repro", "reproduced", "fixing", "verifying",
	"awaiting_approval", "needs_human", "approved", "merged", "released",
	"awaiting_reporter_confirmation", "verified", "reopened", "unconfirmed",
	"closed",
}

var bugRows = []row{
	{"received", "start_triage", "triaging", rs(triager, operator, owner, system), "", ""},
	{"triaging", "drop", "dropped", rs(triager, operator, owner), "", ""},
	{"triaging", "mark_duplicate", "duplicate", rs(triager, operator, owner), "", ""},
	{"triaging", "request_info", "needs_info", rs(triager, operator, owner), "", ""},
	{"triaging", "request_triage_approval", "awaiting_triage_approval", rs(triager, system), "", ""},
	{"triaging", "ticket", "ticketed", rs(triager, operator, owner), "", ""},
	{"awaiting_triage_approval", "approve_triage", "ticketed", rs(operator, owner), "", ""},
	{"awaiting_triage_approval", "reject_triage", "triaging", rs(operator, owner), "", ""},
	{"needs_info", "provide_info", "triaging", rs(reporter, concierge, operator, owner), "", ""},
	{"ticketed", "start_reproduction", "reproducing", rs(reproducer, operator, owner, system), "", ""},
	{"reproducing", "propose_reproduction", "awaiting_reporter_repro", rs(reproducer, operator, owner), "", ""},
	{"awaiting_reporter_repro", "confirm_reproduction", "reproduced", rs(reporter), "", ""},
	{"awaiting_reporter_repro", "reject_reproduction", "reproducing", rs(reporter), "", ""},
	// The SYNKAI rule: a member of staff reviews the reproduction's source.
	// Approving before the reporter answers moves nothing (no row); after
	// their yes the case stays reproduced, now frozen, until start_fix.
	{"reproduced", "approve_harness", "reproduced", rs(operator, owner), "", ""},
	{"awaiting_reporter_repro", "reject_harness", "reproducing", rs(operator, owner), "", ""},
	{"reproduced", "reject_harness", "reproducing", rs(operator, owner), "", ""},
	{"reproduced", "start_fix", "fixing", rs(fixer, operator, owner, system), "", ""},
	{"fixing", "submit_candidate", "verifying", rs(fixer, operator, owner), "attempt_left", "count"},
	{"verifying", "record_verified", "awaiting_approval", rs(system), "", ""},
	{"verifying", "record_rejected", "fixing", rs(system), "attempt_left", ""},
	{"verifying", "record_rejected", "needs_human", rs(system), "no_attempt_left", ""},
	{"verifying", "record_inconclusive", "needs_human", rs(system), "", ""},
	{"awaiting_approval", "approve", "approved", rs(operator, owner), "", ""},
	{"awaiting_approval", "reject", "fixing", rs(operator, owner), "attempt_left", ""},
	{"awaiting_approval", "reject", "needs_human", rs(operator, owner), "no_attempt_left", ""},
	{"approved", "merge", "merged", rs(operator, owner), "", ""},
	{"approved", "reverify", "verifying", rs(operator, owner), "", ""},
	{"awaiting_approval", "reverify", "verifying", rs(operator, owner), "", ""},
	{"merged", "record_release", "released", rs(recorder, system), "", ""},
	{"released", "ask_reporter", "awaiting_reporter_confirmation", rs(recorder, system), "", ""},
	{"awaiting_reporter_confirmation", "confirm_fix", "verified", rs(reporter), "", ""},
	{"awaiting_reporter_confirmation", "report_still_broken", "reopened", rs(reporter), "", ""},
	{"awaiting_reporter_confirmation", "confirmation_timeout", "unconfirmed", rs(system), "", ""},
	{"duplicate", "ask_reporter", "awaiting_reporter_confirmation", rs(recorder, system), "", ""},
	{"awaiting_reporter_confirmation", "still_broken_on_primary", "duplicate", rs(reporter), "", ""},
	{"awaiting_reporter_confirmation", "withdraw_question", "duplicate", rs(system), "", ""},
	{"awaiting_reporter_confirmation", "reopen", "reopened", rs(system), "", ""},
	{"verified", "reopen", "reopened", rs(system), "", ""},
	{"unconfirmed", "reopen", "reopened", rs(system), "", ""},
	{"reopened", "start_reproduction", "reproducing", rs(reproducer, operator, owner, system), "", "reset"},
	{"needs_human", "resume_triage", "triaging", rs(operator, owner), "", ""},
	{"needs_human", "resume_reproduction", "reproducing", rs(operator, owner), "", ""},
	{"needs_human", "resume_fix", "fixing", rs(operator, owner), "", "reset"},

	{"received", "escalate", "needs_human", escalators, "", ""},
	{"triaging", "escalate", "needs_human", escalators, "", ""},
	{"dropped", "escalate", "needs_human", escalators, "", ""},
	{"duplicate", "escalate", "needs_human", escalators, "", ""},
	{"needs_info", "escalate", "needs_human", escalators, "", ""},
	{"awaiting_triage_approval", "escalate", "needs_human", escalators, "", ""},
	{"ticketed", "escalate", "needs_human", escalators, "", ""},
	{"reproducing", "escalate", "needs_human", escalators, "", ""},
	{"awaiting_reporter_repro", "escalate", "needs_human", escalators, "", ""},
	{"reproduced", "escalate", "needs_human", escalators, "", ""},
	{"fixing", "escalate", "needs_human", escalators, "", ""},
	{"verifying", "escalate", "needs_human", escalators, "", ""},
	{"awaiting_approval", "escalate", "needs_human", escalators, "", ""},
	{"approved", "escalate", "needs_human", escalators, "", ""},
	{"merged", "escalate", "needs_human", escalators, "", ""},
	{"released", "escalate", "needs_human", escalators, "", ""},
	{"awaiting_reporter_confirmation", "escalate", "needs_human", escalators, "", ""},
	{"verified", "escalate", "needs_human", escalators, "", ""},
	{"reopened", "escalate", "needs_human", escalators, "", ""},
	{"unconfirmed", "escalate", "needs_human", escalators, "", ""},

	{"received", "close", "closed", rs(owner), "", ""},
	{"triaging", "close", "closed", rs(owner), "", ""},
	{"dropped", "close", "closed", rs(owner), "", ""},
	{"duplicate", "close", "closed", rs(owner), "", ""},
	{"needs_info", "close", "closed", rs(owner), "", ""},
	{"awaiting_triage_approval", "close", "closed", rs(owner), "", ""},
	{"ticketed", "close", "closed", rs(owner), "", ""},
	{"reproducing", "close", "closed", rs(owner), "", ""},
	{"awaiting_reporter_repro", "close", "closed", rs(owner), "", ""},
	{"reproduced", "close", "closed", rs(owner), "", ""},
	{"fixing", "close", "closed", rs(owner), "", ""},
	{"verifying", "close", "closed", rs(owner), "", ""},
	{"awaiting_approval", "close", "closed", rs(owner), "", ""},
	{"needs_human", "close", "closed", rs(owner), "", ""},
	{"approved", "close", "closed", rs(owner), "", ""},
	{"merged", "close", "closed", rs(owner), "", ""},
	{"released", "close", "closed", rs(owner), "", ""},
	{"awaiting_reporter_confirmation", "close", "closed", rs(owner), "", ""},
	{"verified", "close", "closed", rs(owner), "", ""},
	{"reopened", "close", "closed", rs(owner), "", ""},
	{"unconfirmed", "close", "closed", rs(owner), "", ""},
}

var changeStates = []string{
	"requested", "planned", "reviewed", "review_failed", "awaiting_approval",
	"approved", "executing", "executed", "rolled_back", "drifted", "reverted",
	"expired", "superseded",
}

var changeRows = []row{
	{"requested", "plan", "planned", rs(planner, operator, owner), "", ""},
	{"planned", "review_pass", "reviewed", rs(system), "", ""},
	{"planned", "review_fail", "review_failed", rs(system), "", ""},
	{"review_failed", "plan", "planned", rs(planner, operator, owner), "", ""},
	{"reviewed", "request_approval", "awaiting_approval", rs(system, operator, owner), "", ""},
	{"awaiting_approval", "approve", "approved", rs(operator, owner), "", ""},
	{"awaiting_approval", "reject", "requested", rs(operator, owner), "", ""},
	{"awaiting_approval", "expire", "expired", rs(system), "", ""},
	{"approved", "expire", "expired", rs(system), "", ""},
	{"planned", "supersede", "superseded", rs(planner, operator, owner, system), "", ""},
	{"reviewed", "supersede", "superseded", rs(planner, operator, owner, system), "", ""},
	{"review_failed", "supersede", "superseded", rs(planner, operator, owner, system), "", ""},
	{"awaiting_approval", "supersede", "superseded", rs(planner, operator, owner, system), "", ""},
	{"approved", "supersede", "superseded", rs(planner, operator, owner, system), "", ""},
	{"approved", "execute", "executing", rs(operator, owner, system), "", ""},
	{"executing", "complete", "executed", rs(system), "", ""},
	{"executing", "rollback", "rolled_back", rs(system), "", ""},
	{"executing", "drift", "drifted", rs(system), "", ""},
	{"executed", "revert", "reverted", rs(operator, owner, system), "", ""},
	{"approved", "drift", "drifted", rs(system), "", ""},
	{"reviewed", "preapprove", "approved", rs(system), "", ""},
	{"requested", "bypass", "executed", rs(system), "", ""},
	{"reviewed", "plan", "planned", rs(planner, operator, owner), "", ""},
	{"awaiting_approval", "plan", "planned", rs(planner, operator, owner), "", ""},
	{"approved", "plan", "planned", rs(planner, operator, owner), "", ""},
	{"drifted", "plan", "planned", rs(planner, operator, owner), "", ""},
	{"expired", "plan", "planned", rs(planner, operator, owner), "", ""},
	{"rolled_back", "plan", "planned", rs(planner, operator, owner), "", ""},
	{"approved", "lapse", "awaiting_approval", rs(system), "", ""},
	{"awaiting_approval", "rereview", "planned", rs(system), "", ""},
	{"approved", "rereview", "planned", rs(system), "", ""},
	{"requested", "supersede", "superseded", rs(planner, operator, owner, system), "", ""},
	{"drifted", "supersede", "superseded", rs(planner, operator, owner, system), "", ""},
	{"expired", "supersede", "superseded", rs(planner, operator, owner, system), "", ""},
}

// spec bundles one table with its hand-written expectations.
type spec struct {
	table  *workflow.Table
	states []string
	rows   []row
}

func specs() []spec {
	return []spec{
		{workflow.Bug, bugStates, bugRows},
		{workflow.Change, changeStates, changeRows},
	}
}

// everyRole is every role a caller can hold, plus the system.
func everyRole() []signoff.Role { return append(signoff.AllRoles(), system) }

// guardAllows is the test's own reading of the guards, by name.
func guardAllows(name string, f workflow.Facts) bool {
	switch name {
	case "":
		return true
	case "attempt_left":
		return f.FixAttempts < f.MaxFixAttempts
	case "no_attempt_left":
		return f.FixAttempts >= f.MaxFixAttempts
	}
	panic("unknown guard " + name)
}

// factsGrid covers no budget, spare budget, last attempt and exhausted budget.
func factsGrid() []workflow.Facts {
	var out []workflow.Facts
	for limit := 0; limit <= 3; limit++ {
		for n := 0; n <= 3; n++ {
			out = append(out, workflow.Facts{FixAttempts: n, MaxFixAttempts: limit})
		}
	}
	return out
}

func wantEffect(effect string, f workflow.Facts) workflow.Facts {
	switch effect {
	case "count":
		f.FixAttempts++
	case "reset":
		f.FixAttempts = 0
	}
	return f
}

func TestRows(t *testing.T) {
	t.Parallel()
	for _, s := range specs() {
		for _, r := range s.rows {
			name := fmt.Sprintf("%s/%s-%s->%s", s.table.Kind, r.from, r.command, r.to)
			if r.guard != "" {
				name += "/" + r.guard
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				var f workflow.Facts
				found := false
				for _, g := range factsGrid() {
					if guardAllows(r.guard, g) && g.FixAttempts > 0 {
						f, found = g, true
						break
					}
				}
				if !found {
					t.Fatalf("no facts satisfy guard %q", r.guard)
				}
				for _, role := range r.roles {
					tr, err := s.table.Next(r.from, r.command, role, f)
					if err != nil {
						t.Fatalf("Next(%s)=%v, want %s", role, err, r.to)
					}
					if tr.To != r.to || tr.GuardName() != r.guard {
						t.Fatalf("Next(%s)=(%s, guard %q), want (%s, guard %q)", role, tr.To, tr.GuardName(), r.to, r.guard)
					}
					if got, want := tr.Apply(f), wantEffect(r.effect, f); got != want {
						t.Fatalf("Apply(%+v)=%+v, want %+v", f, got, want)
					}
				}
				for _, role := range everyRole() {
					if slices.Contains(r.roles, role) {
						continue
					}
					_, err := s.table.Next(r.from, r.command, role, f)
					if code := signoff.ErrorCode(err); code != signoff.EFORBIDDEN {
						t.Fatalf("Next(%s) code=%q (%v), want %q", role, code, err, signoff.EFORBIDDEN)
					}
				}
			})
		}
	}
}

func TestExhaustive(t *testing.T) {
	t.Parallel()
	for _, s := range specs() {
		t.Run(string(s.table.Kind), func(t *testing.T) {
			t.Parallel()
			if got, want := len(s.table.Transitions), len(s.rows); got != want {
				t.Fatalf("len(Transitions)=%d, want %d literal rows", got, want)
			}
			if !slices.Equal(s.table.States, s.states) {
				t.Fatalf("States=%v, want %v", s.table.States, s.states)
			}
			var commands []string
			for _, r := range s.rows {
				commands = append(commands, r.command)
			}
			slices.Sort(commands)
			commands = slices.Compact(commands)
			if got := s.table.Commands(); !slices.Equal(got, commands) {
				t.Fatalf("Commands()=%v, want %v", got, commands)
			}

			for _, state := range s.states {
				for _, command := range commands {
					var pair []row
					for _, r := range s.rows {
						if r.from == state && r.command == command {
							pair = append(pair, r)
						}
					}
					for _, role := range everyRole() {
						for _, f := range factsGrid() {
							checkNext(t, s.table, pair, state, command, role, f)
						}
					}
				}
				for _, role := range everyRole() {
					for _, f := range factsGrid() {
						checkAllowed(t, s.table, s.rows, state, role, f)
					}
				}
			}
		})
	}
}

// checkNext compares one Next call with what the literal rows of the pair
// (state, command) say.
func checkNext(t *testing.T, table *workflow.Table, pair []row, state, command string, role signoff.Role, f workflow.Facts) {
	t.Helper()
	tr, err := table.Next(state, command, role, f)
	where := fmt.Sprintf("Next(%s, %s, %s, %+v)", state, command, role, f)
	if len(pair) == 0 {
		if signoff.ErrorCode(err) != signoff.ECONFLICT || signoff.ErrorState(err) != state {
			t.Fatalf("%s=%v, want conflict in state %s", where, err, state)
		}
		if msg := signoff.ErrorMessage(err); !strings.Contains(msg, command) || !strings.Contains(msg, state) {
			t.Fatalf("%s message %q must name command and state", where, msg)
		}
		return
	}
	var permitted bool
	var allowed []row
	for _, r := range pair {
		if slices.Contains(r.roles, role) {
			permitted = true
			if guardAllows(r.guard, f) {
				allowed = append(allowed, r)
			}
		}
	}
	switch {
	case !permitted:
		if signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Fatalf("%s=%v, want forbidden", where, err)
		}
	case len(allowed) == 0:
		if signoff.ErrorCode(err) != signoff.ECONFLICT || signoff.ErrorState(err) != state {
			t.Fatalf("%s=%v, want conflict in state %s", where, err, state)
		}
		for _, r := range pair {
			if !strings.Contains(signoff.ErrorMessage(err), r.guard) {
				t.Fatalf("%s message %q must name guard %q", where, signoff.ErrorMessage(err), r.guard)
			}
		}
	case len(allowed) == 1:
		if err != nil || tr.To != allowed[0].to {
			t.Fatalf("%s=(%s, %v), want %s", where, tr.To, err, allowed[0].to)
		}
	default:
		t.Fatalf("%s: expectations allow %d rows", where, len(allowed))
	}
}

// checkAllowed compares Allowed with the literal rows a role can take now.
func checkAllowed(t *testing.T, table *workflow.Table, rows []row, state string, role signoff.Role, f workflow.Facts) {
	t.Helper()
	var want, got []string
	for _, r := range rows {
		if r.from == state && slices.Contains(r.roles, role) && guardAllows(r.guard, f) {
			want = append(want, r.command+"->"+r.to)
		}
	}
	for _, tr := range table.Allowed(state, role, f) {
		got = append(got, tr.Command+"->"+tr.To)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("Allowed(%s, %s, %+v)=%v, want %v", state, role, f, got, want)
	}
}
