package storetest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// testTriageRuns: runs keep arrival order per project, optimistic saves,
// and who may write them.
func testTriageRuns(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	tri := tb.actor(t, "tri", signoff.RoleTriager)
	fixer := tb.actor(t, "fix", signoff.RoleFixer)
	viewer := tb.actor(t, "vi", signoff.RoleViewer)
	c1, c2 := tb.bug(t, ""), tb.bug(t, "")
	r1, err := s.StartTriage(ctx, tri, c1.ID, "item-1", json.RawMessage(`{"k":1}`))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := s.StartTriage(ctx, tri, c2.ID, "item-2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if r1.Seq != 1 || r2.Seq != 2 || r1.Status != signoff.TriageActive || r1.Version != 1 {
		t.Fatalf("runs %+v %+v", r1, r2)
	}
	c3 := tb.bug(t, "")
	before := tb.head(t)
	_, err = s.StartTriage(ctx, tri, c1.ID, "again", nil)
	wantCode(t, err, signoff.ECONFLICT)
	_, err = s.StartTriage(ctx, fixer, c3.ID, "x", nil)
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.StartTriage(ctx, tri, c1.ID, "x", json.RawMessage(`[1]`))
	wantCode(t, err, signoff.EINVALID)
	tb.unchanged(t, before, "refused starts")

	r1.Status, r1.Outcome, r1.TicketID, r1.Resolves, r1.State = signoff.TriageDone, "new_ticket", "T-1", "T-1", json.RawMessage(`{"k":2}`)
	saved, err := s.SaveTriage(ctx, tri, r1)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Version != 2 || saved.Outcome != "new_ticket" {
		t.Fatalf("saved %+v", saved)
	}
	_, err = s.SaveTriage(ctx, tri, r1) // stale version
	wantCode(t, err, signoff.ECONFLICT)
	_, err = s.SaveTriage(ctx, viewer, saved)
	wantCode(t, err, signoff.EFORBIDDEN)
	done, err := s.ListTriage(ctx, viewer, tb.proj.ID, signoff.TriageDone)
	if err != nil || len(done) != 1 || done[0].CaseID != c1.ID {
		t.Fatalf("done runs %v %v", done, err)
	}
	all, _ := s.ListTriage(ctx, viewer, tb.proj.ID, "")
	if len(all) != 2 || all[0].Seq > all[1].Seq {
		t.Fatalf("all runs %v", all)
	}
	tb.verify(t)
}

// testTriageGateDecision: answering the triage gate moves the case in the
// same transaction, as the person; amendments are checked; the answer is
// queued for whoever waits on it.
func testTriageGateDecision(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	tri := tb.actor(t, "tri", signoff.RoleTriager)
	op := tb.actor(t, "op", signoff.RoleOperator)
	c := tb.bug(t, "")
	GiveTask(t, s, tb.owner, tri, c.ID)
	for _, cmd := range []string{"start_triage", "request_triage_approval"} {
		if _, _, err := s.TransitionCase(ctx, tri, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatal(cmd, err)
		}
	}
	// Approving a triage gate moves the case to ticketed: only the triage
	// crew asks for one, never another agent or a person (who would
	// supersede the crew's gate with a subject the crew does not file).
	for _, who := range []signoff.Actor{op, tb.actor(t, "fixer", signoff.RoleFixer), tb.actor(t, "planner", signoff.RolePlanner)} {
		if who.Role.IsAgent() {
			GiveTask(t, s, tb.owner, who, c.ID)
		}
		_, err := s.RequestDecision(ctx, who, c.ID, "triage_ticket", json.RawMessage(`{"severity":"low"}`), 0)
		wantCode(t, err, signoff.EFORBIDDEN)
	}
	d, err := s.RequestDecision(ctx, tri, c.ID, "triage_ticket", json.RawMessage(`{"severity":"high"}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	before := tb.head(t)
	_, err = s.DecideAmended(ctx, op, d.ID, d.SubjectDigest, true, "", json.RawMessage(`{"severity":"urgent"}`))
	wantCode(t, err, signoff.EINVALID)
	_, err = s.DecideAmended(ctx, op, d.ID, d.SubjectDigest, true, "", json.RawMessage(`{"owner":"me"}`))
	wantCode(t, err, signoff.EINVALID)
	_, err = s.DecideAmended(ctx, op, d.ID, d.SubjectDigest, false, "no", json.RawMessage(`{"severity":"low"}`))
	wantCode(t, err, signoff.EINVALID)
	_, err = s.DecideAmended(ctx, tri, d.ID, d.SubjectDigest, true, "", nil)
	wantCode(t, err, signoff.EFORBIDDEN)
	tb.unchanged(t, before, "refused answers")
	got, err := s.DecideAmended(ctx, op, d.ID, d.SubjectDigest, true, "raise it", json.RawMessage(`{"severity":"critical"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Amendment) != `{"severity":"critical"}` {
		t.Fatalf("amendment %s", got.Amendment)
	}
	cs, err := s.GetCase(ctx, op, c.ID)
	if err != nil || cs.State != workflow.BugTicketed {
		t.Fatalf("case after approval: %s %v", cs.State, err)
	}
	ds, err := s.ListDecisions(ctx, op, c.ID)
	if err != nil || len(ds) != 1 || string(ds[0].Amendment) != `{"severity":"critical"}` {
		t.Fatalf("decisions %+v %v", ds, err)
	}
	// The generic transition path still refuses approve_triage, for anyone.
	c2 := tb.bug(t, "")
	GiveTask(t, s, tb.owner, tri, c2.ID)
	s.TransitionCase(ctx, tri, c2.ID, signoff.TransitionInput{Command: "start_triage"})
	s.TransitionCase(ctx, tri, c2.ID, signoff.TransitionInput{Command: "request_triage_approval"})
	_, _, err = s.TransitionCase(ctx, op, c2.ID, signoff.TransitionInput{Command: "approve_triage"})
	wantCode(t, err, signoff.EFORBIDDEN)
	// A rejection sends the case back to triaging.
	d2, _ := s.RequestDecision(ctx, tri, c2.ID, "triage_ticket", json.RawMessage(`{"severity":"high"}`), 0)
	if _, err := s.DecideAmended(ctx, op, d2.ID, d2.SubjectDigest, false, "not a bug", nil); err != nil {
		t.Fatal(err)
	}
	if cs, _ := s.GetCase(ctx, op, c2.ID); cs.State != workflow.BugTriaging {
		t.Fatalf("case after rejection: %s", cs.State)
	}
	tb.verify(t)
}

// testTriageAhead: a public report waits for the earlier ones of its
// project, not for those parked at the gate nor for other projects.
func testTriageAhead(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	tri := tb.actor(t, "tri", signoff.RoleTriager)
	submit := func(projectID string) signoff.Case {
		c, _, _, err := s.SubmitReport(ctx, signoff.ReportInput{ProjectID: projectID, Text: "the app crashes on start"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	other, err := s.CreateProject(ctx, tb.owner, signoff.ProjectInput{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	a, bb, o := submit(tb.proj.ID), submit(tb.proj.ID), submit(other.ID)
	ahead := func(c signoff.Case) int {
		n, err := s.TriageAhead(ctx, tri, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if ahead(a) != 0 || ahead(bb) != 1 || ahead(o) != 0 {
		t.Fatalf("ahead: %d %d %d", ahead(a), ahead(bb), ahead(o))
	}
	r, err := s.StartTriage(ctx, tri, a.ID, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ahead(bb) != 1 {
		t.Fatal("an active run does not hold the next one")
	}
	r.Status = signoff.TriageParked
	if _, err := s.SaveTriage(ctx, tri, r); err != nil {
		t.Fatal(err)
	}
	if ahead(bb) != 0 {
		t.Fatal("a parked run holds the next one up")
	}
	// Each public report queued its triage job in the same transaction.
	var n int
	if err := s.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job WHERE kind = 'triage_case'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("%d triage jobs queued, want 3", n)
	}
}

// testRequestDecisionMoving: the crew's gate asks and moves the case in
// one transaction. The case.transitioned event comes before the request
// in the ledger with nothing between them, a case not in the given state
// is not moved (asked again at the gate), and a refused move asks nothing.
func testRequestDecisionMoving(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	tri := tb.actor(t, "tri", signoff.RoleTriager)
	c := tb.bug(t, "")
	GiveTask(t, s, tb.owner, tri, c.ID)
	if _, _, err := s.TransitionCase(ctx, tri, c.ID, signoff.TransitionInput{Command: "start_triage"}); err != nil {
		t.Fatal(err)
	}
	move := signoff.TransitionInput{Command: "request_triage_approval", Note: "gate: severity high"}
	// Only the gate's own move is taken with a request: any other command,
	// kind or state goes through TransitionCase and its checks. A refused
	// move asks nothing.
	before := tb.head(t)
	long := strings.Repeat("x", 4001)
	for _, bad := range []struct {
		kind, from string
		move       signoff.TransitionInput
		code       string
	}{
		{"triage_ticket", workflow.BugTriaging, signoff.TransitionInput{Command: "approve_triage"}, signoff.EINVALID},
		{"triage_ticket", workflow.BugFixing, signoff.TransitionInput{Command: "submit_candidate"}, signoff.EINVALID},
		{"merge", workflow.BugTriaging, move, signoff.EINVALID},
		{"triage_ticket", workflow.BugTriaging, signoff.TransitionInput{Command: move.Command, Note: long}, signoff.EINVALID},
	} {
		_, err := s.RequestDecisionMoving(ctx, tri, c.ID, bad.kind, json.RawMessage(`{"severity":"high"}`), 0, bad.from, bad.move)
		wantCode(t, err, bad.code)
	}
	tb.unchanged(t, before, "refused moves")
	d, err := s.RequestDecisionMoving(ctx, tri, c.ID, "triage_ticket", json.RawMessage(`{"severity":"high"}`), 0, workflow.BugTriaging, move)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := s.GetCase(ctx, tri, c.ID)
	if err != nil || cs.State != workflow.BugAwaitingTriageApproval {
		t.Fatalf("case %s %v, want at the gate", cs.State, err)
	}
	evs, err := s.ListEvents(ctx, tb.owner, c.ID, before, 100)
	if err != nil || len(evs) != 2 || evs[0].Type != "case.transitioned" || evs[1].Type != "decision.requested" || evs[1].Seq != evs[0].Seq+1 {
		t.Fatalf("events after the ask: %+v %v", evs, err)
	}
	// Asked again at the gate: no move, the old request superseded.
	d2, err := s.RequestDecisionMoving(ctx, tri, c.ID, "triage_ticket", json.RawMessage(`{"severity":"critical"}`), 0, workflow.BugTriaging, move)
	if err != nil {
		t.Fatal(err)
	}
	if cs2, _ := s.GetCase(ctx, tri, c.ID); cs2.Version != cs.Version || cs2.State != workflow.BugAwaitingTriageApproval {
		t.Fatalf("asked again: case moved to %s v%d (was v%d)", cs2.State, cs2.Version, cs.Version)
	}
	if old, _ := s.GetDecision(ctx, tri, d.ID); old.Status != signoff.DecisionSuperseded || d2.Status != signoff.DecisionPending {
		t.Fatalf("old %s new %s", old.Status, d2.Status)
	}
	tb.verify(t)
}
