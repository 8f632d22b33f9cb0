package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/workflow"
)

// BringTo moves case c, step by step, to state through the store's own
// paths, as the people (owner), the reporter (reporter; the case's
// reporter, needed for the reporter's answers) and the server would: the
// bug loop's steps and decisions through AdvanceLoop, a change through
// AdvanceChange (keeping its loop state), anything else as a transition.
// It takes the shortest such run of the kind's table; tests use it to
// reach the states a person's decision produced without the desks.
func BringTo(ctx context.Context, s *sqlstore.DB, owner, reporter signoff.Actor, c signoff.Case, state string) (signoff.Case, error) {
	table, err := workflow.For(c.Kind)
	if err != nil {
		return c, err
	}
	path := pathOf(table, c.State, state, workflow.Facts{FixAttempts: c.FixAttempts, MaxFixAttempts: c.MaxFixAttempts})
	if path == nil && c.State != state {
		return c, fmt.Errorf("no run of people's, the reporter's and the server's commands brings a %s from %s to %s", c.Kind, c.State, state)
	}
	sys := signoff.SystemActor(c.WorkspaceID)
	for _, step := range path {
		var by signoff.Actor
		switch {
		case step.Permits(signoff.RoleOwner):
			by = owner
		case step.Permits(signoff.RoleSystem):
			by = sys
		default:
			by = reporter
		}
		switch {
		case c.Kind == signoff.KindChange:
			var l signoff.ChangeLoop
			if l, err = s.GetChangeLoop(ctx, sys, c.ID); err != nil && signoff.ErrorCode(err) != signoff.ENOTFOUND {
				return c, err
			}
			_, c, err = s.AdvanceChange(ctx, by, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: step.Command})
		case workflow.LoopStep(step.Command) || workflow.Decision(step.Command):
			var l signoff.BugLoop
			if l, err = s.GetLoop(ctx, sys, c.ID); err != nil && signoff.ErrorCode(err) != signoff.ENOTFOUND {
				return c, err
			}
			_, c, err = s.AdvanceLoop(ctx, by, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: step.Command})
		default:
			c, _, err = s.TransitionCase(ctx, by, c.ID, signoff.TransitionInput{Command: step.Command})
		}
		if err != nil {
			return c, fmt.Errorf("bringing a %s to %s: %s as %s: %w", c.Kind, state, step.Command, by.Role, err)
		}
	}
	return c, nil
}

// pathOf is the shortest run of rows from one state to another that people
// (as the owner), the reporter or the server may give, guards included;
// nil when there is none or from is to. Escalations are left out: they
// would reach needs_human, from where only a person resumes.
func pathOf(table *workflow.Table, from, to string, f workflow.Facts) []workflow.Transition {
	type node struct {
		state string
		facts workflow.Facts
		path  []workflow.Transition
	}
	seen := map[string]bool{from: true}
	queue := []node{{state: from, facts: f}}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.state == to {
			return n.path
		}
		for _, tr := range table.Transitions {
			if tr.From != n.state || seen[tr.To] || tr.Guard != nil && !tr.Guard.Allow(n.facts) ||
				!tr.Permits(signoff.RoleOwner) && !tr.Permits(signoff.RoleSystem) && !tr.Permits(signoff.RoleReporter) {
				continue
			}
			seen[tr.To] = true
			queue = append(queue, node{state: tr.To, facts: tr.Apply(n.facts), path: append(slices.Clone(n.path), tr)})
		}
	}
	return nil
}

// GiveTask opens a task on caseID for agent a, as owner: the receipt an
// agent needs to change the case.
func GiveTask(t testing.TB, s *sqlstore.DB, owner, a signoff.Actor, caseID string) signoff.Task {
	t.Helper()
	tk, err := s.CreateTask(context.Background(), owner, signoff.TaskInput{CaseID: caseID, Kind: "step", Role: a.Role, AssigneeID: a.ID,
		Input: json.RawMessage(`{"case":"` + caseID + `","nonce":"` + signoff.NewID(signoff.PrefixTask) + `"}`)})
	if err != nil {
		t.Fatalf("CreateTask for %s: %v", a.Role, err)
	}
	return tk
}

// AgentCommands are the commands of kind some agent role appears on from
// state: what an agent could try to move a case there with.
func AgentCommands(kind signoff.CaseKind, state string) []string {
	table, err := workflow.For(kind)
	if err != nil {
		return nil
	}
	var out []string
	for _, tr := range table.Transitions {
		if tr.From != state {
			continue
		}
		for _, r := range signoff.AgentRoles {
			if tr.Permits(r) {
				out = append(out, tr.Command)
				break
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// testAgentAuthority proves the store's guard on every agent write of a
// case (transitions, both loops, decision requests): without an open task
// of its own on the case an agent is refused everywhere; with one it is
// refused in every state a person's decision produced, and the case, its
// loop and the ledger are as they were. The server (system actor) and
// people are not agents and keep their paths; an agent asks for attention
// instead, which moves nothing.
func testAgentAuthority(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	sys := signoff.SystemActor(tb.ws.ID)
	reporter := tb.actor(t, "rita", signoff.RoleReporter)
	agents := map[signoff.Role]signoff.Actor{}
	for _, r := range signoff.AgentRoles {
		agents[r] = tb.actor(t, string(r)+" agent", r)
	}
	openTask := func(t *testing.T, c signoff.Case, a signoff.Actor) signoff.Task {
		t.Helper()
		tk, err := s.CreateTask(ctx, tb.owner, signoff.TaskInput{CaseID: c.ID, Kind: "step", Role: a.Role, AssigneeID: a.ID,
			Input: json.RawMessage(`{"case":"` + c.ID + `"}`)})
		if err != nil {
			t.Fatalf("CreateTask: %v", err)
		}
		return tk
	}
	newCase := func(t *testing.T, kind signoff.CaseKind) signoff.Case {
		t.Helper()
		c, err := s.CreateCase(ctx, tb.owner, signoff.CaseInput{ProjectID: tb.proj.ID, Kind: kind, Title: "coupon applied twice", ReporterID: reporter.ID})
		if err != nil {
			t.Fatalf("CreateCase: %v", err)
		}
		return c
	}
	// unchanged fails unless c, its loop and the ledger are as before.
	unchanged := func(t *testing.T, what string, c signoff.Case, head int64) {
		t.Helper()
		cur, err := s.GetCase(ctx, tb.owner, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cur.State != c.State || cur.Version != c.Version {
			t.Fatalf("%s moved the case from %s v%d to %s v%d", what, c.State, c.Version, cur.State, cur.Version)
		}
		if h, err := s.HeadSeq(ctx, tb.ws.ID); err != nil || h != head {
			t.Fatalf("%s: ledger head %d -> %d (%v)", what, head, h, err)
		}
	}
	// writes are every store write an agent could make on a case.
	writes := []struct {
		name string
		kind signoff.CaseKind // "" for both
		do   func(a signoff.Actor, c signoff.Case, command string) error
	}{
		{"TransitionCase", signoff.KindBug, func(a signoff.Actor, c signoff.Case, command string) error {
			_, _, err := s.TransitionCase(ctx, a, c.ID, signoff.TransitionInput{Command: command, Note: "I know better"})
			return err
		}},
		{"AdvanceLoop", signoff.KindBug, func(a signoff.Actor, c signoff.Case, command string) error {
			l, _ := s.GetLoop(ctx, sys, c.ID)
			_, _, err := s.AdvanceLoop(ctx, a, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: command})
			return err
		}},
		{"AdvanceChange", signoff.KindChange, func(a signoff.Actor, c signoff.Case, command string) error {
			l, _ := s.GetChangeLoop(ctx, sys, c.ID)
			_, _, err := s.AdvanceChange(ctx, a, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: command})
			return err
		}},
		{"RequestDecision", "", func(a signoff.Actor, c signoff.Case, _ string) error {
			_, err := s.RequestDecision(ctx, a, c.ID, "second_opinion", json.RawMessage(`{"case":"`+c.ID+`"}`), 0)
			return err
		}},
	}

	tried := 0
	for _, kind := range []signoff.CaseKind{signoff.KindBug, signoff.KindChange} {
		states := workflow.HumanDecidedStates(kind)
		if len(states) == 0 {
			t.Fatalf("no human-decided %s states", kind)
		}
		for _, state := range states {
			c, err := BringTo(ctx, s, tb.owner, reporter, newCase(t, kind), state)
			if err != nil {
				t.Fatal(err)
			}
			// The commands an agent could send from here, escalate first,
			// and a bare loop update ("").
			cmds := append([]string{""}, AgentCommands(kind, state)...)
			for _, role := range signoff.AgentRoles {
				a := agents[role]
				for _, w := range writes {
					if w.kind != "" && w.kind != kind {
						continue
					}
					for _, cmd := range cmds {
						if w.name == "TransitionCase" && cmd == "" || w.name == "RequestDecision" && cmd != "" {
							continue
						}
						what := fmt.Sprintf("%s %s(%q) on a %s in %s", role, w.name, cmd, kind, state)
						// No task: the receipt is missing.
						head, _ := s.HeadSeq(ctx, tb.ws.ID)
						if err := w.do(a, c, cmd); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
							t.Fatalf("%s without a task = %v, want forbidden", what, err)
						}
						unchanged(t, what+" without a task", c, head)
						tried++
					}
				}
				// With its open task: the state a person decided holds.
				tk := openTask(t, c, a)
				for _, w := range writes {
					if w.kind != "" && w.kind != kind {
						continue
					}
					for _, cmd := range cmds {
						if w.name == "TransitionCase" && cmd == "" || w.name == "RequestDecision" && cmd != "" {
							continue
						}
						what := fmt.Sprintf("%s %s(%q) on a %s in %s", role, w.name, cmd, kind, state)
						head, _ := s.HeadSeq(ctx, tb.ws.ID)
						err := w.do(a, c, cmd)
						switch signoff.ErrorCode(err) {
						case signoff.EFORBIDDEN, signoff.ECONFLICT:
						default:
							t.Fatalf("%s on its task = %v, want forbidden or conflict", what, err)
						}
						unchanged(t, what, c, head)
						tried++
					}
				}
				// A loop update naming no command still writes the case's
				// loop: the human-decided state is what refuses it (for a
				// role that may write bug loops at all).
				if kind == signoff.KindBug && role == signoff.RoleFixer {
					err := writes[1].do(a, c, "")
					wantCode(t, err, signoff.ECONFLICT)
					if !strings.Contains(signoff.ErrorMessage(err), "a person's decision") || signoff.ErrorState(err) != state {
						t.Fatalf("refusal %q (state %q) does not say why", signoff.ErrorMessage(err), signoff.ErrorState(err))
					}
				}
				// Its voice: attention, which moves nothing.
				head, _ := s.HeadSeq(ctx, tb.ws.ID)
				e, err := s.RequestAttention(ctx, a, c.ID, "the approved fix breaks the refund path")
				if err != nil || e.Type != "case.attention" || e.Seq != head+1 {
					t.Fatalf("%s asks for attention in %s: %+v, %v", role, state, e, err)
				}
				unchanged(t, "attention", c, head+1)
				if _, err := s.CloseTask(ctx, tb.owner, tk.ID, signoff.OutcomeCancelled, "test over"); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if tried < len(signoff.AgentRoles)*12 {
		t.Fatalf("tried only %d refusals", tried)
	}

	// Outside those states the receipt decides: no task, no move; an open
	// task, the table's answer.
	for _, role := range signoff.AgentRoles {
		a := agents[role]
		c, err := BringTo(ctx, s, tb.owner, reporter, newCase(t, signoff.KindBug), workflow.BugFixing)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = s.TransitionCase(ctx, a, c.ID, signoff.TransitionInput{Command: "escalate"})
		wantCode(t, err, signoff.EFORBIDDEN)
		if !strings.Contains(signoff.ErrorMessage(err), "open task") {
			t.Fatalf("refusal %q does not name the missing task", signoff.ErrorMessage(err))
		}
		// A closed task is no receipt.
		done := openTask(t, c, a)
		if _, err := s.CloseTask(ctx, tb.owner, done.ID, signoff.OutcomeCancelled, "withdrawn"); err != nil {
			t.Fatal(err)
		}
		_, _, err = s.TransitionCase(ctx, a, c.ID, signoff.TransitionInput{Command: "escalate"})
		wantCode(t, err, signoff.EFORBIDDEN)
		// A task on another case is no receipt here.
		openTask(t, newCase(t, signoff.KindBug), a)
		_, _, err = s.TransitionCase(ctx, a, c.ID, signoff.TransitionInput{Command: "escalate"})
		wantCode(t, err, signoff.EFORBIDDEN)
		openTask(t, c, a)
		got, _, err := s.TransitionCase(ctx, a, c.ID, signoff.TransitionInput{Command: "escalate", Note: "out of my depth"})
		if err != nil || got.State != workflow.BugNeedsHuman {
			t.Fatalf("%s escalates on its task: %+v, %v", role, got, err)
		}
	}
	// The planner plans a change that is not decided, on its task.
	planner := agents[signoff.RolePlanner]
	ch := newCase(t, signoff.KindChange)
	_, _, err := s.AdvanceChange(ctx, planner, signoff.ChangeUpdate{CaseID: ch.ID, Command: "plan"})
	wantCode(t, err, signoff.EFORBIDDEN)
	openTask(t, ch, planner)
	if _, got, err := s.AdvanceChange(ctx, planner, signoff.ChangeUpdate{CaseID: ch.ID, Command: "plan"}); err != nil || got.State != workflow.ChangePlanned {
		t.Fatalf("planner plans on its task: %+v, %v", got, err)
	}

	// The server is no agent: it escalates an approved bug (the smoke
	// check's path) and people act as themselves.
	c, err := BringTo(ctx, s, tb.owner, reporter, newCase(t, signoff.KindBug), workflow.BugApproved)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, err := s.TransitionCase(ctx, sys, c.ID, signoff.TransitionInput{Command: "escalate", Note: "smoke check failed"}); err != nil || got.State != workflow.BugNeedsHuman {
		t.Fatalf("the server escalates an approved bug: %+v, %v", got, err)
	}
	// An agent that never worked the case has no voice on it either.
	_, err = s.RequestAttention(ctx, agents[signoff.RoleFixer], newCase(t, signoff.KindBug).ID, "look here")
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.RequestAttention(ctx, reporter, c.ID, "look here")
	wantCode(t, err, signoff.EFORBIDDEN)
	if _, err := s.RequestAttention(ctx, tb.owner, c.ID, "   "); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Fatalf("an empty note = %v", err)
	}
}

// testAgentEventsLikeStream: an agent's list of a case's events is exactly
// what its stream shows of that case, nothing of a case it has no task on.
func testAgentEventsLikeStream(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	fixer := tb.actor(t, "fixer", signoff.RoleFixer)
	worked, other := tb.bug(t, ""), tb.bug(t, "")
	if _, err := s.CreateTask(ctx, tb.owner, signoff.TaskInput{CaseID: worked.ID, Kind: "step", Role: signoff.RoleFixer, AssigneeID: fixer.ID,
		Input: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []signoff.Case{worked, other} {
		if _, _, err := s.TransitionCase(ctx, tb.owner, c.ID, signoff.TransitionInput{Command: "start_triage", Note: "secret triage note"}); err != nil {
			t.Fatal(err)
		}
	}
	stream, err := s.StreamEvents(ctx, fixer, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []signoff.Case{worked, other} {
		var want []int64
		for _, e := range stream {
			if e.CaseID == c.ID {
				want = append(want, e.Seq)
			}
		}
		evs, err := s.ListEvents(ctx, fixer, c.ID, 0, 500)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, e := range evs {
			got = append(got, e.Seq)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("case %s: listed %v, streamed %v", c.ID, got, want)
		}
		all, err := s.ListEvents(ctx, tb.owner, c.ID, 0, 500)
		if err != nil {
			t.Fatal(err)
		}
		if c.ID == worked.ID && len(got) != len(all) || c.ID == other.ID && len(got) != 0 || len(all) < 2 {
			t.Fatalf("case %s: the fixer sees %d of %d events", c.ID, len(got), len(all))
		}
	}

	// A reporter's list of their own case is their stream of it too: its
	// moves and reporter.* events, payloads trimmed, never a staff note.
	rep := tb.actor(t, "rita", signoff.RoleReporter)
	mine := tb.bug(t, rep.ID)
	if _, _, err := s.TransitionCase(ctx, tb.owner, mine.ID, signoff.TransitionInput{Command: "start_triage", Note: "secret triage note"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RequestAttention(ctx, tb.owner, mine.ID, "staff-only attention note"); err != nil {
		t.Fatal(err)
	}
	rstream, err := s.StreamEvents(ctx, rep, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := s.ListEvents(ctx, rep, mine.ID, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	var want []signoff.Event
	for _, e := range rstream {
		if e.CaseID == mine.ID {
			want = append(want, e)
		}
	}
	if len(listed) != len(want) || len(listed) == 0 {
		t.Fatalf("the reporter lists %d events of their case, streams %d", len(listed), len(want))
	}
	for i := range listed {
		if listed[i].Seq != want[i].Seq || string(listed[i].Payload) != string(want[i].Payload) {
			t.Fatalf("event %d: listed %d %s, streamed %d %s", i, listed[i].Seq, listed[i].Payload, want[i].Seq, want[i].Payload)
		}
		if strings.Contains(string(listed[i].Payload), "secret triage note") || listed[i].Type == "case.attention" {
			t.Fatalf("the reporter reads %s: %s", listed[i].Type, listed[i].Payload)
		}
	}
}
