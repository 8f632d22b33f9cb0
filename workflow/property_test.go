package workflow_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// humanOnlyCommands is SPEC principle 4 spelled out: agents never approve,
// merge, execute or confirm. Every resume_* command is human-only too.
var humanOnlyCommands = []string{
	"approve", "approve_triage", "reject_triage", "merge", "execute", "approve_harness", "reject_harness",
	"confirm_reproduction", "reject_reproduction", "confirm_fix",
	"report_still_broken", "still_broken_on_primary", "close", "reject", "revert",
}

func isHumanOnly(command string) bool {
	return slices.Contains(humanOnlyCommands, command) || strings.HasPrefix(command, "resume_")
}

func TestNoAgentOnHumanOnlyCommand(t *testing.T) {
	t.Parallel()
	for _, s := range specs() {
		for _, tr := range s.table.Transitions {
			if got, want := workflow.HumanOnly(tr.Command), isHumanOnly(tr.Command); got != want {
				t.Errorf("%s: HumanOnly(%s)=%v, want %v", s.table.Kind, tr.Command, got, want)
			}
			if !isHumanOnly(tr.Command) {
				continue
			}
			for _, r := range tr.Roles {
				if r.IsAgent() {
					t.Errorf("%s: %s -%s-> %s lists agent %s", s.table.Kind, tr.From, tr.Command, tr.To, r)
				}
			}
		}
	}
}

// The reporter has the last word: the confirmations are theirs alone, and
// provide_info must at least include them.
func TestReporterCommands(t *testing.T) {
	t.Parallel()
	only := []string{"confirm_reproduction", "reject_reproduction", "confirm_fix", "report_still_broken", "still_broken_on_primary"}
	for _, s := range specs() {
		for _, tr := range s.table.Transitions {
			if slices.Contains(only, tr.Command) && !slices.Equal(tr.Roles, []signoff.Role{reporter}) {
				t.Errorf("%s: %s -%s-> roles %v, want only reporter", s.table.Kind, tr.From, tr.Command, tr.Roles)
			}
			if tr.Command == "provide_info" && !slices.Contains(tr.Roles, reporter) {
				t.Errorf("%s: %s -provide_info-> lacks reporter", s.table.Kind, tr.From)
			}
		}
	}
}

// When several rows share (from, command) their guards must split the facts:
// for any facts exactly one row applies, so Next never has to choose.
func TestGuardsMutuallyExclusive(t *testing.T) {
	t.Parallel()
	for _, s := range specs() {
		groups := map[[2]string][]workflow.Transition{}
		for _, tr := range s.table.Transitions {
			k := [2]string{tr.From, tr.Command}
			groups[k] = append(groups[k], tr)
		}
		shared := 0
		for k, trs := range groups {
			if len(trs) < 2 {
				continue
			}
			shared++
			for _, f := range factsGrid() {
				n := 0
				for _, tr := range trs {
					if tr.Guard == nil || tr.Guard.Allow(f) {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%s (%s, %s) facts %+v: %d rows apply, want 1", s.table.Kind, k[0], k[1], f, n)
				}
			}
		}
		if s.table.Kind == signoff.KindBug && shared != 2 {
			t.Errorf("bug: %d shared (from, command) pairs, want 2 (record_rejected, reject)", shared)
		}
	}
}

// terminal lists the states where a case's work is over. They may still be
// escalated or closed, but nothing else moves them.
var terminal = map[signoff.CaseKind][]string{
	signoff.KindBug:    {"dropped", "duplicate", "verified", "unconfirmed", "closed"},
	signoff.KindChange: {"rolled_back", "drifted", "reverted", "expired", "superseded"},
}

func TestReachableAndLive(t *testing.T) {
	t.Parallel()
	for _, s := range specs() {
		t.Run(string(s.table.Kind), func(t *testing.T) {
			t.Parallel()
			reached := map[string]bool{s.table.Initial: true}
			queue := []string{s.table.Initial}
			for len(queue) > 0 {
				from := queue[0]
				queue = queue[1:]
				for _, tr := range s.table.Transitions {
					if tr.From == from && !reached[tr.To] {
						reached[tr.To] = true
						queue = append(queue, tr.To)
					}
				}
			}
			for _, st := range s.table.States {
				if !reached[st] {
					t.Errorf("state %s unreachable from %s", st, s.table.Initial)
				}
				if slices.Contains(terminal[s.table.Kind], st) {
					continue
				}
				// Escalating or closing is always possible for a bug; a live
				// state also needs a way to make progress.
				live := false
				for _, tr := range s.table.Transitions {
					if tr.From == st && tr.Command != "escalate" && tr.Command != "close" {
						live = true
					}
				}
				if !live {
					t.Errorf("non-terminal state %s has no outgoing row", st)
				}
			}
		})
	}
}

// The SYNKAI rule: whether a reproduction's test checks the reported
// behaviour is decided by a member of staff who read it, never by an
// agent, a viewer or the reporter, and only over its review digest (a
// decision, refused as a bare transition).
func TestHarnessReviewIsStaffOnly(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, tr := range workflow.Bug.Transitions {
		if tr.Command != "approve_harness" && tr.Command != "reject_harness" {
			continue
		}
		seen[tr.Command] = true
		if !sameSet(tr.Roles, []signoff.Role{operator, owner}) {
			t.Errorf("%s -%s-> %s: roles %v, want exactly operator and owner", tr.From, tr.Command, tr.To, tr.Roles)
		}
		if !workflow.Decision(tr.Command) || !workflow.HumanOnly(tr.Command) {
			t.Errorf("%s must be a human-only decision", tr.Command)
		}
	}
	if !seen["approve_harness"] || !seen["reject_harness"] {
		t.Fatalf("rows for %v only", seen)
	}
	// No fix starts but from reproduced: every way into fixing other than
	// start_fix goes through a person (resume_fix) or a verdict on a
	// candidate of a frozen harness, which the bug desk checks.
	for _, tr := range workflow.Bug.Transitions {
		if tr.To != "fixing" {
			continue
		}
		switch tr.Command {
		case "start_fix":
			if tr.From != "reproduced" {
				t.Errorf("start_fix from %s", tr.From)
			}
		case "resume_fix", "record_rejected", "reject":
		default:
			t.Errorf("%s -%s-> fixing: a new way into fixing", tr.From, tr.Command)
		}
	}
}

func sameSet(a, b []signoff.Role) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(r signoff.Role) bool { return !slices.Contains(b, r) })
}
