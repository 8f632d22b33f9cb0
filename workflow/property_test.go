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
	"approve", "approve_triage", "reject_triage", "merge", "execute",
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
