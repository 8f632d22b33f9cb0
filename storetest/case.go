package storetest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

func allEvents(t *testing.T, tb *bundle) []signoff.Event {
	t.Helper()
	rows, err := tb.store.SQL().QueryContext(tb.ctx, `SELECT case_id FROM ledger_events WHERE workspace_id = $1 AND case_id <> '' GROUP BY case_id`, tb.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for rows.Next() {
		var id string
		rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	var out []signoff.Event
	for _, id := range ids {
		evs, err := tb.store.ListEvents(tb.ctx, tb.owner, id, 0, 500)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, evs...)
	}
	return out
}

func testCaseCreateAndList(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	var ids []string
	for i := 0; i < 7; i++ {
		kind := signoff.KindBug
		if i%3 == 0 {
			kind = signoff.KindChange
		}
		c, err := s.CreateCase(ctx, tb.owner, signoff.CaseInput{ProjectID: tb.proj.ID, Kind: kind, Title: fmt.Sprintf("case %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		want := map[signoff.CaseKind]string{signoff.KindBug: "received", signoff.KindChange: "requested"}[kind]
		if c.State != want || c.Version != 1 {
			t.Fatalf("new %s case state=%s version=%d", kind, c.State, c.Version)
		}
		ids = append(ids, c.ID)
	}
	// Pages of 3 walk newest first, without repeats or gaps.
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		page, err := s.ListCases(ctx, tb.ws.ID, signoff.CaseFilter{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Cases {
			seen = append(seen, c.ID)
		}
		if page.NextCursor == "" {
			if pages != 2 {
				t.Fatalf("got %d pages, want 3", pages+1)
			}
			break
		}
		cursor = page.NextCursor
	}
	if len(seen) != len(ids) {
		t.Fatalf("listed %d cases, want %d", len(seen), len(ids))
	}
	for i := range seen {
		if seen[i] != ids[len(ids)-1-i] {
			t.Fatalf("order: got %v, want reverse of %v", seen, ids)
		}
	}
	page, err := s.ListCases(ctx, tb.ws.ID, signoff.CaseFilter{Kind: signoff.KindChange})
	if err != nil || len(page.Cases) != 3 {
		t.Fatalf("filter kind=change: %d, %v", len(page.Cases), err)
	}
	page, err = s.ListCases(ctx, tb.ws.ID, signoff.CaseFilter{State: "received"})
	if err != nil || len(page.Cases) != 4 {
		t.Fatalf("filter state=received: %d, %v", len(page.Cases), err)
	}
	for _, f := range []signoff.CaseFilter{{Cursor: "!!"}, {Cursor: "Y2FzZV8uLi8"}, {Kind: "incident"}, {State: "nope"}, {ProjectID: "prj_x"}} {
		_, err := s.ListCases(ctx, tb.ws.ID, f)
		wantCode(t, err, signoff.EINVALID)
	}
	bad := []signoff.CaseInput{
		{ProjectID: tb.proj.ID, Kind: "incident", Title: "x"},
		{ProjectID: tb.proj.ID, Kind: signoff.KindBug, Title: ""},
		{ProjectID: "prj_../../x", Kind: signoff.KindBug, Title: "x"},
		{ProjectID: tb.proj.ID, Kind: signoff.KindBug, Title: "x", ReporterID: tb.owner.ID}, // not a reporter
	}
	for _, in := range bad {
		_, err := s.CreateCase(ctx, tb.owner, in)
		wantCode(t, err, signoff.EINVALID)
	}
	_, other, _ := s.CreateWorkspace(ctx, "Other", "bob")
	_, err = s.CreateCase(ctx, other, signoff.CaseInput{ProjectID: tb.proj.ID, Kind: signoff.KindBug, Title: "x"})
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.GetCase(ctx, other, ids[0])
	wantCode(t, err, signoff.ENOTFOUND)
	if page, _ := s.ListCases(ctx, other.WorkspaceID, signoff.CaseFilter{}); len(page.Cases) != 0 {
		t.Fatalf("other workspace lists %d cases", len(page.Cases))
	}
	tb.verify(t)
}

func testTransitions(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	triager := tb.actor(t, "triager", signoff.RoleTriager)
	viewer := tb.actor(t, "viewer", signoff.RoleViewer)
	c := tb.bug(t, "")
	// An agent moves a case on its open task there (testAgentAuthority).
	if _, err := s.CreateTask(ctx, tb.owner, signoff.TaskInput{CaseID: c.ID, Kind: "triage", Role: signoff.RoleTriager, AssigneeID: triager.ID, Input: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}

	got, ev, err := s.TransitionCase(ctx, triager, c.ID, signoff.TransitionInput{Command: "start_triage", Note: "picked up"})
	if err != nil || got.State != "triaging" || got.Version != 2 {
		t.Fatalf("start_triage = %+v, %v", got, err)
	}
	var payload map[string]any
	if err := json.Unmarshal(ev.Payload, &payload); err != nil || payload["from"] != "received" || payload["to"] != "triaging" || ev.ActorID != triager.ID {
		t.Fatalf("event = %+v (%v)", ev, err)
	}
	// Illegal in this state: 409 carrying the current state.
	_, _, err = s.TransitionCase(ctx, tb.owner, c.ID, signoff.TransitionInput{Command: "provide_info"})
	wantCode(t, err, signoff.ECONFLICT)
	if st := signoff.ErrorState(err); st != "triaging" {
		t.Fatalf("conflict state = %q, want triaging", st)
	}
	// Legal here, but not for this role.
	_, _, err = s.TransitionCase(ctx, viewer, c.ID, signoff.TransitionInput{Command: "ticket"})
	wantCode(t, err, signoff.EFORBIDDEN)
	_, _, err = s.TransitionCase(ctx, tb.owner, c.ID, signoff.TransitionInput{Command: "no_such_command"})
	wantCode(t, err, signoff.EINVALID)
	stale := int64(1)
	_, _, err = s.TransitionCase(ctx, triager, c.ID, signoff.TransitionInput{Command: "ticket", ExpectedVersion: &stale})
	wantCode(t, err, signoff.ECONFLICT)
	cur := int64(2)
	if got, _, err = s.TransitionCase(ctx, triager, c.ID, signoff.TransitionInput{Command: "ticket", ExpectedVersion: &cur}); err != nil || got.State != "ticketed" {
		t.Fatalf("ticket = %+v, %v", got, err)
	}
	_, other, _ := s.CreateWorkspace(ctx, "Other", "bob")
	_, _, err = s.TransitionCase(ctx, other, c.ID, signoff.TransitionInput{Command: "close"})
	wantCode(t, err, signoff.ENOTFOUND)

	// A person hands the case on and takes it back; the bug loop's own
	// steps (reproduction onwards) are not bare transitions (see
	// testLoopStepsNeedTheirOwnPath).
	walk := []struct {
		by   signoff.Actor
		cmd  string
		want string
	}{
		{tb.owner, "escalate", "needs_human"},
		{tb.owner, "resume_triage", "triaging"},
	}
	for _, w := range walk {
		if got, _, err = s.TransitionCase(ctx, w.by, c.ID, signoff.TransitionInput{Command: w.cmd}); err != nil || got.State != w.want {
			t.Fatalf("%s = %+v, %v", w.cmd, got, err)
		}
	}
	// case.created, task.created, four transitions.
	evs, err := s.ListEvents(ctx, tb.owner, c.ID, 0, 0)
	if err != nil || len(evs) != 6 {
		t.Fatalf("ListEvents = %d, %v; want 6", len(evs), err)
	}
	after, err := s.ListEvents(ctx, tb.owner, c.ID, evs[3].Seq, 0)
	if err != nil || len(after) != 2 || after[0].Seq != evs[4].Seq {
		t.Fatalf("ListEvents after = %d, %v", len(after), err)
	}
	_, err = s.ListEvents(ctx, other, c.ID, 0, 0)
	wantCode(t, err, signoff.ENOTFOUND)
	tb.verify(t)
}

func testReporterOwnsCase(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	rep := tb.actor(t, "rita", signoff.RoleReporter)
	stranger := tb.actor(t, "sam", signoff.RoleReporter)
	c := tb.bug(t, rep.ID)
	for _, cmd := range []string{"start_triage", "request_info"} {
		if _, _, err := s.TransitionCase(ctx, tb.owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	// Another reporter cannot see the case at all.
	_, _, err := s.TransitionCase(ctx, stranger, c.ID, signoff.TransitionInput{Command: "provide_info"})
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.GetCase(ctx, stranger, c.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.ListEvents(ctx, stranger, c.ID, 0, 0)
	wantCode(t, err, signoff.ENOTFOUND)
	got, _, err := s.TransitionCase(ctx, rep, c.ID, signoff.TransitionInput{Command: "provide_info", Note: "Pixel 8, app 4.2.1"})
	if err != nil || got.State != "triaging" {
		t.Fatalf("provide_info = %+v, %v", got, err)
	}
	if _, err := s.GetCase(ctx, rep, c.ID); err != nil {
		t.Fatalf("reporter reading their own case: %v", err)
	}
	tb.verify(t)
}

// testDecisionsNeedTheirOwnPath: approvals, merges, executions and the
// reporter's answers bind to a digest, so no caller (not even the owner or
// the case's own reporter) can apply them as a plain transition by id.
func testDecisionsNeedTheirOwnPath(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	rep := tb.actor(t, "rita", signoff.RoleReporter)
	c := tb.bug(t, rep.ID)
	for _, cmd := range []string{"start_triage", "ticket"} {
		if _, _, err := s.TransitionCase(ctx, tb.owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	// Reproduction is the bug loop's: through its store path.
	sys := signoff.SystemActor(tb.ws.ID)
	l, _, err := s.AdvanceLoop(ctx, sys, signoff.LoopUpdate{CaseID: c.ID, Command: "start_reproduction", State: signoff.BugLoopState{Round: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AdvanceLoop(ctx, tb.owner, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Command: "propose_reproduction", State: l.State}); err != nil {
		t.Fatal(err)
	}
	before, _ := s.HeadSeq(ctx, tb.ws.ID)
	for _, try := range []struct {
		by  signoff.Actor
		cmd string
	}{{rep, "confirm_reproduction"}, {rep, "reject_reproduction"}, {tb.owner, "confirm_reproduction"}, {tb.owner, "approve"}, {tb.owner, "merge"},
		// The staff review of a reproduction is a decision over its review
		// digest, given only through the bug desk.
		{tb.owner, "reject_harness"}, {tb.owner, "approve_harness"}} {
		_, _, err := s.TransitionCase(ctx, try.by, c.ID, signoff.TransitionInput{Command: try.cmd})
		wantCode(t, err, signoff.EFORBIDDEN)
	}
	if after, _ := s.HeadSeq(ctx, tb.ws.ID); after != before {
		t.Fatalf("ledger moved from %d to %d on refused decisions", before, after)
	}
}

const racers = 32

// testConcurrentSameCommand: 32 writers ask for the same transition; exactly
// one wins and every loser is told the state it lost to.
func testConcurrentSameCommand(t *testing.T, b Backend) {
	tb := setup(t, b)
	c := tb.bug(t, "")
	errs := race(tb, c.ID, func(int) string { return "start_triage" })
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case signoff.ErrorCode(err) != signoff.ECONFLICT:
			t.Fatalf("loser got %v, want conflict", err)
		case signoff.ErrorState(err) != "triaging":
			t.Fatalf("loser saw state %q, want triaging", signoff.ErrorState(err))
		}
	}
	if wins != 1 {
		t.Fatalf("%d winners, want exactly 1", wins)
	}
	got, _ := tb.store.GetCase(tb.ctx, tb.owner, c.ID)
	if got.Version != 2 {
		t.Fatalf("version = %d, want 2", got.Version)
	}
	tb.verify(t)
}

// testConcurrentMixedCommands: writers race with different commands. Every
// success must be one event, the events must replay as a legal path through
// the table, and the chain must verify.
func testConcurrentMixedCommands(t *testing.T, b Backend) {
	tb := setup(t, b)
	c := tb.bug(t, "")
	cmds := []string{"start_triage", "ticket", "request_info", "mark_duplicate", "escalate", "resume_triage", "drop"}
	errs := race(tb, c.ID, func(i int) string { return cmds[i%len(cmds)] })
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else if code := signoff.ErrorCode(err); code != signoff.ECONFLICT {
			t.Fatalf("got %v, want success or conflict", err)
		}
	}
	evs, err := tb.store.ListEvents(tb.ctx, tb.owner, c.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != wins+1 { // +1: case.created
		t.Fatalf("%d events for %d successful transitions", len(evs)-1, wins)
	}
	state, facts := "received", workflow.Facts{MaxFixAttempts: 2}
	for _, e := range evs[1:] {
		var p struct{ Command, From, To string }
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		tr, err := workflow.Bug.Next(state, p.Command, signoff.RoleOwner, facts)
		if err != nil || p.From != state || tr.To != p.To {
			t.Fatalf("event %d %s: %s->%s does not follow from %s (%v)", e.Seq, p.Command, p.From, p.To, state, err)
		}
		state = tr.To
	}
	got, _ := tb.store.GetCase(tb.ctx, tb.owner, c.ID)
	if got.State != state || got.Version != int64(wins+1) {
		t.Fatalf("case = %s v%d; replay says %s v%d", got.State, got.Version, state, wins+1)
	}
	tb.verify(t)
}

func race(tb *bundle, id string, cmd func(int) string) []error {
	errs := make([]error, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, _, errs[i] = tb.store.TransitionCase(tb.ctx, tb.owner, id, signoff.TransitionInput{Command: cmd(i)})
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

// testLoopStepsNeedTheirOwnPath: the bug loop's steps carry evidence (a
// proposal run in the sandbox, a candidate, a verdict, a deployment found
// by ancestry), so no caller sends them as bare transitions; they exist on
// AdvanceLoop, which the bug desk calls with that evidence.
func testLoopStepsNeedTheirOwnPath(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	c := tb.bug(t, "")
	for _, cmd := range []string{"start_triage", "ticket"} {
		if _, _, err := s.TransitionCase(ctx, tb.owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	sys := signoff.SystemActor(tb.ws.ID)
	recorder := tb.actor(t, "rec", signoff.RoleRecorder)
	before, _ := s.HeadSeq(ctx, tb.ws.ID)
	for _, try := range []struct {
		by  signoff.Actor
		cmd string
	}{{tb.owner, "start_reproduction"}, {sys, "start_reproduction"}, {recorder, "record_release"}, {sys, "ask_reporter"}, {tb.owner, "submit_candidate"}} {
		_, _, err := s.TransitionCase(ctx, try.by, c.ID, signoff.TransitionInput{Command: try.cmd})
		wantCode(t, err, signoff.EFORBIDDEN)
	}
	if after, _ := s.HeadSeq(ctx, tb.ws.ID); after != before {
		t.Fatalf("ledger moved from %d to %d on refused loop steps", before, after)
	}
}
