package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/signoff-dev/signoff"
)

// head returns the workspace's ledger head sequence.
func (tb *bundle) head(t *testing.T) int64 {
	t.Helper()
	seq, err := tb.store.HeadSeq(tb.ctx, tb.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// unchanged fails unless the ledger head is still at seq: refusals write
// nothing.
func (tb *bundle) unchanged(t *testing.T, seq int64, what string) {
	t.Helper()
	if got := tb.head(t); got != seq {
		t.Fatalf("%s moved the ledger from %d to %d", what, seq, got)
	}
}

// eventsOf returns the workspace's events of one type, oldest first.
func (tb *bundle) eventsOf(t *testing.T, typ string) []signoff.Event {
	t.Helper()
	rows, err := tb.store.SQL().QueryContext(tb.ctx, `SELECT seq, case_id, actor_id, payload FROM ledger_events WHERE workspace_id = $1 AND type = $2 ORDER BY seq`, tb.ws.ID, typ)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []signoff.Event
	for rows.Next() {
		e := signoff.Event{Type: typ}
		var p string
		if err := rows.Scan(&e.Seq, &e.CaseID, &e.ActorID, &p); err != nil {
			t.Fatal(err)
		}
		e.Payload = json.RawMessage(p)
		out = append(out, e)
	}
	return out
}

func payloadOf(t *testing.T, e signoff.Event) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(e.Payload, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func (tb *bundle) task(t *testing.T, c signoff.Case, role signoff.Role, input string) signoff.Task {
	t.Helper()
	task, err := tb.store.CreateTask(tb.ctx, tb.owner, signoff.TaskInput{CaseID: c.ID, Kind: "triage", Role: role, Input: json.RawMessage(input)})
	if err != nil {
		t.Fatalf("CreateTask(%s): %v", role, err)
	}
	return task
}

func submission(task signoff.Task, output string) signoff.Submission {
	return signoff.Submission{TaskID: task.ID, InputDigest: task.InputDigest, Output: json.RawMessage(output), Evidence: signoff.EvidenceLive}
}

func testTaskCreate(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	triager := tb.actor(t, "triage-bot", signoff.RoleTriager)
	fixA := tb.actor(t, "fix-a", signoff.RoleFixer)
	fixB := tb.actor(t, "fix-b", signoff.RoleFixer)
	viewer := tb.actor(t, "vera", signoff.RoleViewer)
	op := tb.actor(t, "olga", signoff.RoleOperator)
	rep := tb.actor(t, "rita", signoff.RoleReporter)
	c := tb.bug(t, rep.ID)

	task, err := s.CreateTask(ctx, tb.owner, signoff.TaskInput{CaseID: c.ID, Kind: "triage", Role: signoff.RoleTriager, Input: json.RawMessage(`{ "b": 2, "a": [1, 2.0] }`)})
	if err != nil {
		t.Fatal(err)
	}
	if task.AssigneeID != triager.ID || task.Status != signoff.TaskOpen || task.CaseID != c.ID || task.CreatedBy != tb.owner.ID || task.WorkspaceID != tb.ws.ID {
		t.Fatalf("task = %+v", task)
	}
	// The input is kept canonical, and its digest is the digest of that.
	if string(task.Input) != `{"a":[1,2],"b":2}` || task.InputDigest != digestOf(t, task.Input) {
		t.Fatalf("input %s digest %s", task.Input, task.InputDigest)
	}
	if got, err := s.GetTask(ctx, triager, task.ID); err != nil || got.InputDigest != task.InputDigest || string(got.Input) != string(task.Input) || !got.CreatedAt.Equal(task.CreatedAt) {
		t.Fatalf("GetTask = %+v, %v", got, err)
	}
	evs := tb.eventsOf(t, "task.created")
	if len(evs) != 1 || evs[0].CaseID != c.ID || payloadOf(t, evs[0])["task_id"] != task.ID || payloadOf(t, evs[0])["input_digest"] != task.InputDigest {
		t.Fatalf("task.created events = %+v", evs)
	}
	// The server, the CLI and operators issue tasks too; no input means {}.
	for _, by := range []signoff.Actor{signoff.SystemActor(tb.ws.ID), signoff.CLIActor(tb.ws.ID), op} {
		got, err := s.CreateTask(ctx, by, signoff.TaskInput{CaseID: c.ID, Kind: "triage", Role: signoff.RoleTriager})
		if err != nil || string(got.Input) != "{}" || got.CreatedBy != by.ID {
			t.Fatalf("CreateTask by %s = %+v, %v", by.ID, got, err)
		}
	}
	named, err := s.CreateTask(ctx, tb.owner, signoff.TaskInput{CaseID: c.ID, Kind: "fix", Role: signoff.RoleFixer, AssigneeID: fixB.ID})
	if err != nil || named.AssigneeID != fixB.ID {
		t.Fatalf("CreateTask(named fixer) = %+v, %v", named, err)
	}

	before := tb.head(t)
	for _, by := range []signoff.Actor{triager, viewer, rep} {
		_, err := s.CreateTask(ctx, by, signoff.TaskInput{CaseID: c.ID, Kind: "triage", Role: signoff.RoleTriager})
		wantCode(t, err, signoff.EFORBIDDEN)
	}
	bad := []signoff.TaskInput{
		{CaseID: c.ID, Kind: "", Role: signoff.RoleTriager},
		{CaseID: c.ID, Kind: "Triage!", Role: signoff.RoleTriager},
		{CaseID: c.ID, Kind: strings.Repeat("k", 65), Role: signoff.RoleTriager},
		{CaseID: c.ID, Kind: "triage", Role: signoff.RoleOwner},
		{CaseID: c.ID, Kind: "triage", Role: "wizard"},
		{CaseID: c.ID, Kind: "triage", Role: signoff.RoleTriager, Input: json.RawMessage(`[1]`)},
		{CaseID: c.ID, Kind: "triage", Role: signoff.RoleTriager, Input: json.RawMessage(`{"a":`)},
		{CaseID: c.ID, Kind: "triage", Role: signoff.RoleTriager, Input: json.RawMessage(`{"a":1,"a":2}`)},
		{CaseID: c.ID, Kind: "triage", Role: signoff.RoleTriager, Input: json.RawMessage(`{"a":"` + strings.Repeat("x", 256<<10) + `"}`)},
		{CaseID: "case_../x", Kind: "triage", Role: signoff.RoleTriager},
		{CaseID: c.ID, Kind: "fix", Role: signoff.RoleFixer, AssigneeID: triager.ID}, // wrong role
		{CaseID: c.ID, Kind: "fix", Role: signoff.RoleFixer, AssigneeID: "act_nope"},
	}
	for _, in := range bad {
		_, err := s.CreateTask(ctx, tb.owner, in)
		wantCode(t, err, signoff.EINVALID)
	}
	// Several fixers and none named: the caller must choose.
	_, err = s.CreateTask(ctx, tb.owner, signoff.TaskInput{CaseID: c.ID, Kind: "fix", Role: signoff.RoleFixer})
	wantCode(t, err, signoff.ECONFLICT)
	if !strings.Contains(signoff.ErrorMessage(err), fixA.ID) || !strings.Contains(signoff.ErrorMessage(err), fixB.ID) {
		t.Fatalf("conflict does not list the fixers: %v", err)
	}
	// No planner at all; an unknown case; an unknown assignee.
	_, err = s.CreateTask(ctx, tb.owner, signoff.TaskInput{CaseID: c.ID, Kind: "plan", Role: signoff.RolePlanner})
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.CreateTask(ctx, tb.owner, signoff.TaskInput{CaseID: signoff.NewID(signoff.PrefixCase), Kind: "triage", Role: signoff.RoleTriager})
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.CreateTask(ctx, tb.owner, signoff.TaskInput{CaseID: c.ID, Kind: "fix", Role: signoff.RoleFixer, AssigneeID: signoff.NewID(signoff.PrefixActor)})
	wantCode(t, err, signoff.ENOTFOUND)
	tb.unchanged(t, before, "refused task creations")

	// Visibility: an agent sees its own tasks only; people all; reporters none.
	_, err = s.GetTask(ctx, fixA, task.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	if _, err := s.GetTask(ctx, viewer, task.ID); err != nil {
		t.Fatalf("viewer GetTask: %v", err)
	}
	_, err = s.GetTask(ctx, rep, task.ID)
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.ListTasks(ctx, rep, signoff.TaskFilter{})
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.GetTask(ctx, triager, "task_nope")
	wantCode(t, err, signoff.EINVALID)
	mine, err := s.ListTasks(ctx, triager, signoff.TaskFilter{})
	if err != nil || len(mine) != 4 {
		t.Fatalf("triager ListTasks = %d, %v; want 4", len(mine), err)
	}
	for i := 1; i < len(mine); i++ {
		if mine[i-1].ID < mine[i].ID {
			t.Fatalf("ListTasks not newest first")
		}
	}
	if got, _ := s.ListTasks(ctx, fixB, signoff.TaskFilter{AssigneeID: triager.ID}); len(got) != 0 {
		t.Fatalf("an agent listed %d tasks of another", len(got))
	}
	if all, err := s.ListTasks(ctx, tb.owner, signoff.TaskFilter{}); err != nil || len(all) != 5 {
		t.Fatalf("owner ListTasks = %d, %v; want 5", len(all), err)
	}
	if got, _ := s.ListTasks(ctx, tb.owner, signoff.TaskFilter{Role: signoff.RoleFixer, Status: signoff.TaskOpen, CaseID: c.ID}); len(got) != 1 || got[0].ID != named.ID {
		t.Fatalf("filtered ListTasks = %+v", got)
	}
	if got, _ := s.ListTasks(ctx, tb.owner, signoff.TaskFilter{Limit: 2}); len(got) != 2 {
		t.Fatalf("ListTasks(limit 2) = %d", len(got))
	}
	for _, f := range []signoff.TaskFilter{{Status: "done"}, {Role: signoff.RoleOwner}, {CaseID: "x"}, {AssigneeID: "x"}} {
		_, err := s.ListTasks(ctx, tb.owner, f)
		wantCode(t, err, signoff.EINVALID)
	}
	// Another workspace sees nothing and can assign nothing here.
	_, other, _ := s.CreateWorkspace(ctx, "Other", "bob")
	_, err = s.GetTask(ctx, other, task.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.CreateTask(ctx, other, signoff.TaskInput{CaseID: c.ID, Kind: "triage", Role: signoff.RoleTriager})
	wantCode(t, err, signoff.ENOTFOUND)
	if got, _ := s.ListTasks(ctx, other, signoff.TaskFilter{}); len(got) != 0 {
		t.Fatalf("other workspace lists %d tasks", len(got))
	}
	tb.verify(t)
}

// testTaskReceipts: a submission must quote an open task assigned to the
// caller with its current input digest. Every refusal leaves the ledger
// where it was.
func testTaskReceipts(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	triager := tb.actor(t, "triage-bot", signoff.RoleTriager)
	fixer := tb.actor(t, "fix-bot", signoff.RoleFixer)
	c := tb.bug(t, "")
	task := tb.task(t, c, signoff.RoleTriager, `{"case":"coupon"}`)

	before := tb.head(t)
	// Another identity, even with the right receipt.
	for _, by := range []signoff.Actor{fixer, tb.owner, signoff.SystemActor(tb.ws.ID)} {
		_, err := s.SubmitTask(ctx, by, submission(task, `{"severity":"high"}`))
		wantCode(t, err, signoff.EFORBIDDEN)
	}
	// Malformed submissions.
	for _, sub := range []signoff.Submission{
		{TaskID: task.ID, InputDigest: task.InputDigest, Output: json.RawMessage(`{}`), Evidence: "verified"},
		{TaskID: task.ID, InputDigest: task.InputDigest, Output: json.RawMessage(`"text"`), Evidence: signoff.EvidenceLive},
		{TaskID: task.ID, InputDigest: task.InputDigest, Evidence: signoff.EvidenceLive},
		{TaskID: task.ID, InputDigest: "abc", Output: json.RawMessage(`{}`), Evidence: signoff.EvidenceLive},
		{TaskID: "task_x", InputDigest: task.InputDigest, Output: json.RawMessage(`{}`), Evidence: signoff.EvidenceLive},
	} {
		_, err := s.SubmitTask(ctx, triager, sub)
		wantCode(t, err, signoff.EINVALID)
	}
	// Unknown and foreign tasks look alike.
	_, err := s.SubmitTask(ctx, triager, signoff.Submission{TaskID: signoff.NewID(signoff.PrefixTask), InputDigest: task.InputDigest, Output: json.RawMessage(`{}`), Evidence: signoff.EvidenceLive})
	wantCode(t, err, signoff.ENOTFOUND)
	_, other, _ := s.CreateWorkspace(ctx, "Other", "bob")
	otherAgent, _ := s.CreateActor(ctx, other, "triage-bot", signoff.RoleTriager)
	_, err = s.SubmitTask(ctx, otherAgent, submission(task, `{}`))
	wantCode(t, err, signoff.ENOTFOUND)
	tb.unchanged(t, before, "refused submissions")

	// The server refreshes the input: receipts quoting the old digest fail.
	stale := task
	task, err = s.UpdateTaskInput(ctx, signoff.SystemActor(tb.ws.ID), task.ID, json.RawMessage(`{"case":"coupon","note":"reporter answered"}`))
	if err != nil || task.InputDigest == stale.InputDigest || task.InputDigest != digestOf(t, task.Input) {
		t.Fatalf("UpdateTaskInput = %+v, %v", task, err)
	}
	if evs := tb.eventsOf(t, "task.input_updated"); len(evs) != 1 || payloadOf(t, evs[0])["previous_digest"] != stale.InputDigest {
		t.Fatalf("task.input_updated = %+v", evs)
	}
	// The same input again changes nothing and records nothing.
	before = tb.head(t)
	if same, err := s.UpdateTaskInput(ctx, tb.owner, task.ID, json.RawMessage(`{"note":"reporter answered","case":"coupon"}`)); err != nil || same.InputDigest != task.InputDigest {
		t.Fatalf("UpdateTaskInput(same) = %+v, %v", same, err)
	}
	_, err = s.SubmitTask(ctx, triager, submission(stale, `{"severity":"high"}`))
	wantCode(t, err, signoff.ECONFLICT)
	if !strings.Contains(signoff.ErrorMessage(err), "inputs changed") {
		t.Fatalf("stale digest refused with %q", signoff.ErrorMessage(err))
	}
	tb.unchanged(t, before, "a stale receipt")

	got, err := s.SubmitTask(ctx, triager, submission(task, `{"severity": "high", "labels": ["checkout"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != signoff.TaskRecorded || got.Outcome != "" || got.Evidence != signoff.EvidenceLive || string(got.Output) != `{"labels":["checkout"],"severity":"high"}` ||
		got.OutputDigest != digestOf(t, got.Output) || got.ReceiptSeq != tb.head(t) || got.ClosedAt != nil {
		t.Fatalf("submitted = %+v (head %d)", got, tb.head(t))
	}
	rec := tb.eventsOf(t, "task.recorded")
	if len(rec) != 1 || rec[0].Seq != got.ReceiptSeq || rec[0].ActorID != triager.ID || rec[0].CaseID != c.ID || payloadOf(t, rec[0])["output_digest"] != got.OutputDigest {
		t.Fatalf("task.recorded = %+v", rec)
	}
	if strings.Contains(string(rec[0].Payload), "checkout") {
		t.Fatalf("the output itself went into the ledger: %s", rec[0].Payload)
	}
	if read, _ := s.GetTask(ctx, triager, task.ID); read.ReceiptSeq != got.ReceiptSeq || read.OutputDigest != got.OutputDigest || string(read.Output) != string(got.Output) {
		t.Fatalf("GetTask after submit = %+v", read)
	}

	// Replaying the same submission, or a different output on the same
	// receipt, is refused: the task is no longer open.
	before = tb.head(t)
	for _, out := range []string{`{"severity": "high", "labels": ["checkout"]}`, `{"severity":"low"}`} {
		_, err = s.SubmitTask(ctx, triager, submission(task, out))
		wantCode(t, err, signoff.ECONFLICT)
		if !strings.Contains(signoff.ErrorMessage(err), "recorded") {
			t.Fatalf("replay refused with %q", signoff.ErrorMessage(err))
		}
	}
	_, err = s.UpdateTaskInput(ctx, tb.owner, task.ID, json.RawMessage(`{"x":1}`))
	wantCode(t, err, signoff.ECONFLICT)
	tb.unchanged(t, before, "a replayed submission")

	// A closed task takes nothing.
	closed := tb.task(t, c, signoff.RoleTriager, `{"case":"other"}`)
	if _, err := s.CloseTask(ctx, tb.owner, closed.ID, signoff.OutcomeCancelled, "duplicate"); err != nil {
		t.Fatal(err)
	}
	before = tb.head(t)
	_, err = s.SubmitTask(ctx, triager, submission(closed, `{}`))
	wantCode(t, err, signoff.ECONFLICT)
	if !strings.Contains(signoff.ErrorMessage(err), "closed") {
		t.Fatalf("closed task refused with %q", signoff.ErrorMessage(err))
	}
	tb.unchanged(t, before, "a submission on a closed task")

	// Final closes at once as done.
	last := tb.task(t, c, signoff.RoleTriager, `{"case":"final"}`)
	sub := submission(last, `{"done":true}`)
	sub.Final, sub.Evidence = true, signoff.EvidenceReplayed
	done, err := s.SubmitTask(ctx, triager, sub)
	if err != nil || done.Status != signoff.TaskClosed || done.Outcome != signoff.OutcomeDone || done.ClosedAt == nil || done.Evidence != signoff.EvidenceReplayed {
		t.Fatalf("final submit = %+v, %v", done, err)
	}
	tb.verify(t)
}

// testTaskConcurrentSubmit: many copies of one receipt race; exactly one
// records, the rest see a recorded task.
func testTaskConcurrentSubmit(t *testing.T, b Backend) {
	tb := setup(t, b)
	triager := tb.actor(t, "triage-bot", signoff.RoleTriager)
	c := tb.bug(t, "")
	task := tb.task(t, c, signoff.RoleTriager, `{"case":"race"}`)
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, errs[i] = tb.store.SubmitTask(tb.ctx, triager, submission(task, fmt.Sprintf(`{"attempt":%d}`, i)))
		}()
	}
	close(start)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else if signoff.ErrorCode(err) != signoff.ECONFLICT {
			t.Fatalf("loser got %v, want conflict", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d submissions won, want exactly 1", wins)
	}
	if evs := tb.eventsOf(t, "task.recorded"); len(evs) != 1 {
		t.Fatalf("%d task.recorded events, want 1", len(evs))
	}
	got, _ := tb.store.GetTask(tb.ctx, triager, task.ID)
	if got.Status != signoff.TaskRecorded || got.ReceiptSeq == 0 {
		t.Fatalf("task after the race = %+v", got)
	}
	tb.verify(t)
}

func testTaskHandoff(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	triager := tb.actor(t, "triage-bot", signoff.RoleTriager)
	repro := tb.actor(t, "repro-bot", signoff.RoleReproducer)
	c := tb.bug(t, "")
	task := tb.task(t, c, signoff.RoleTriager, `{"case":"coupon"}`)
	h := signoff.Handoff{TaskID: task.ID, InputDigest: task.InputDigest, To: signoff.RoleReproducer, Reason: "needs a failing test"}

	before := tb.head(t)
	// Not yet recorded.
	_, _, err := s.HandoffTask(ctx, triager, h)
	wantCode(t, err, signoff.ECONFLICT)
	tb.unchanged(t, before, "a handoff of an open task")
	if _, err := s.SubmitTask(ctx, triager, submission(task, `{"severity":"high"}`)); err != nil {
		t.Fatal(err)
	}
	before = tb.head(t)
	_, _, err = s.HandoffTask(ctx, repro, h)
	wantCode(t, err, signoff.EFORBIDDEN)
	wrong := h
	wrong.InputDigest = digestOf(t, json.RawMessage(`{"case":"other"}`))
	_, _, err = s.HandoffTask(ctx, triager, wrong)
	wantCode(t, err, signoff.ECONFLICT)
	nobody := h
	nobody.To = signoff.RolePlanner // no planner agent in the workspace
	_, _, err = s.HandoffTask(ctx, triager, nobody)
	wantCode(t, err, signoff.ENOTFOUND)
	for _, bad := range []signoff.Handoff{
		{TaskID: task.ID, InputDigest: task.InputDigest, To: signoff.RoleOwner},
		{TaskID: task.ID, InputDigest: task.InputDigest, To: signoff.RoleFixer, Kind: "Bad Kind"},
		{TaskID: task.ID, InputDigest: task.InputDigest, To: signoff.RoleFixer, Input: json.RawMessage(`[]`)},
		{TaskID: task.ID, InputDigest: task.InputDigest, To: signoff.RoleFixer, Reason: strings.Repeat("r", 2049)},
	} {
		_, _, err := s.HandoffTask(ctx, triager, bad)
		wantCode(t, err, signoff.EINVALID)
	}
	tb.unchanged(t, before, "refused handoffs")
	if got, _ := s.GetTask(ctx, triager, task.ID); got.Status != signoff.TaskRecorded {
		t.Fatalf("a refused handoff changed the task: %+v", got)
	}

	closed, next, err := s.HandoffTask(ctx, triager, h)
	if err != nil {
		t.Fatal(err)
	}
	if closed.Status != signoff.TaskClosed || closed.Outcome != signoff.OutcomeHandedOff || closed.Reason != h.Reason || closed.ClosedAt == nil {
		t.Fatalf("closed = %+v", closed)
	}
	var in map[string]string
	if err := json.Unmarshal(next.Input, &in); err != nil || in["from_task"] != task.ID || in["reason"] != h.Reason {
		t.Fatalf("next input = %s (%v)", next.Input, err)
	}
	if next.Status != signoff.TaskOpen || next.AssigneeID != repro.ID || next.Role != signoff.RoleReproducer || next.ParentID != task.ID ||
		next.Kind != "handoff" || next.CaseID != c.ID || next.CreatedBy != triager.ID || next.InputDigest != digestOf(t, next.Input) {
		t.Fatalf("next = %+v", next)
	}
	if got, err := s.GetTask(ctx, repro, next.ID); err != nil || got.ParentID != task.ID {
		t.Fatalf("reproducer reads its task: %+v, %v", got, err)
	}
	ho := tb.eventsOf(t, "task.handed_off")
	if len(ho) != 1 || payloadOf(t, ho[0])["next_task_id"] != next.ID {
		t.Fatalf("task.handed_off = %+v", ho)
	}
	if cr := tb.eventsOf(t, "task.created"); len(cr) != 2 || cr[1].Seq != ho[0].Seq+1 || cr[1].ActorID != triager.ID {
		t.Fatalf("task.created after handoff = %+v", cr)
	}
	// Once handed off, the receipt is spent.
	before = tb.head(t)
	_, _, err = s.HandoffTask(ctx, triager, h)
	wantCode(t, err, signoff.ECONFLICT)
	tb.unchanged(t, before, "a second handoff")

	// An explicit kind and input travel as given.
	if _, err := s.SubmitTask(ctx, repro, submission(next, `{"test":"coupon_test.go"}`)); err != nil {
		t.Fatal(err)
	}
	fixer := tb.actor(t, "fix-bot", signoff.RoleFixer)
	_, third, err := s.HandoffTask(ctx, repro, signoff.Handoff{TaskID: next.ID, InputDigest: next.InputDigest, To: signoff.RoleFixer, Kind: "fix", Input: json.RawMessage(`{"test":"coupon_test.go"}`)})
	if err != nil || third.Kind != "fix" || third.AssigneeID != fixer.ID || string(third.Input) != `{"test":"coupon_test.go"}` {
		t.Fatalf("third = %+v, %v", third, err)
	}
	tb.verify(t)
}

func testTaskClose(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	triager := tb.actor(t, "triage-bot", signoff.RoleTriager)
	fixer := tb.actor(t, "fix-bot", signoff.RoleFixer)
	viewer := tb.actor(t, "vera", signoff.RoleViewer)
	op := tb.actor(t, "olga", signoff.RoleOperator)
	c := tb.bug(t, "")
	mine := tb.task(t, c, signoff.RoleTriager, `{"n":1}`)
	other := tb.task(t, c, signoff.RoleFixer, `{"n":2}`)

	before := tb.head(t)
	_, err := s.CloseTask(ctx, triager, mine.ID, signoff.OutcomeCancelled, "not mine to do")
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.CloseTask(ctx, triager, other.ID, signoff.OutcomeNeedsHuman, "giving up someone else's")
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.CloseTask(ctx, viewer, mine.ID, signoff.OutcomeCancelled, "viewers cannot")
	wantCode(t, err, signoff.EFORBIDDEN)
	for _, outcome := range []string{signoff.OutcomeDone, signoff.OutcomeHandedOff, "abandoned"} {
		_, err = s.CloseTask(ctx, tb.owner, mine.ID, outcome, "x")
		wantCode(t, err, signoff.EINVALID)
	}
	_, err = s.CloseTask(ctx, tb.owner, mine.ID, signoff.OutcomeCancelled, "  ")
	wantCode(t, err, signoff.EINVALID)
	_, err = s.UpdateTaskInput(ctx, triager, mine.ID, json.RawMessage(`{"n":3}`))
	wantCode(t, err, signoff.EFORBIDDEN)
	tb.unchanged(t, before, "refused closes")

	got, err := s.CloseTask(ctx, triager, mine.ID, signoff.OutcomeNeedsHuman, "turn budget exhausted")
	if err != nil || got.Status != signoff.TaskClosed || got.Outcome != signoff.OutcomeNeedsHuman || got.Reason != "turn budget exhausted" || got.ClosedAt == nil {
		t.Fatalf("agent gives up = %+v, %v", got, err)
	}
	before = tb.head(t)
	_, err = s.CloseTask(ctx, tb.owner, mine.ID, signoff.OutcomeCancelled, "again")
	wantCode(t, err, signoff.ECONFLICT)
	tb.unchanged(t, before, "closing a closed task")

	// A recorded task can still be withdrawn, by an operator or the server.
	if _, err := s.SubmitTask(ctx, fixer, submission(other, `{"patch":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.CloseTask(ctx, op, other.ID, signoff.OutcomeCancelled, "case dropped"); err != nil || got.Outcome != signoff.OutcomeCancelled {
		t.Fatalf("operator cancels a recorded task = %+v, %v", got, err)
	}
	third := tb.task(t, c, signoff.RoleTriager, `{"n":4}`)
	if _, err := s.CloseTask(ctx, signoff.SystemActor(tb.ws.ID), third.ID, signoff.OutcomeCancelled, "case closed"); err != nil {
		t.Fatalf("system cancels: %v", err)
	}
	evs := tb.eventsOf(t, "task.closed")
	if len(evs) != 3 || payloadOf(t, evs[0])["outcome"] != signoff.OutcomeNeedsHuman || payloadOf(t, evs[1])["from"] != signoff.TaskRecorded {
		t.Fatalf("task.closed = %+v", evs)
	}
	_, other2, _ := s.CreateWorkspace(ctx, "Other", "bob")
	_, err = s.CloseTask(ctx, other2, third.ID, signoff.OutcomeCancelled, "x")
	wantCode(t, err, signoff.ENOTFOUND)
	tb.verify(t)
}

func testTranscripts(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	triager := tb.actor(t, "triage-bot", signoff.RoleTriager)
	fixer := tb.actor(t, "fix-bot", signoff.RoleFixer)
	c := tb.bug(t, "")
	task := tb.task(t, c, signoff.RoleTriager, `{"case":"coupon"}`)
	const secretPrompt = "the-whole-prompt-stays-out-of-the-ledger"
	call := signoff.ModelCall{
		TaskID: task.ID, Turn: 1, Provider: "openai", Model: "qwen2.5:7b", Evidence: signoff.EvidenceLive,
		Request:  json.RawMessage(`{"messages":[{"role":"user","content":"` + secretPrompt + `"}]}`),
		Response: json.RawMessage(`{"content":"severity high"}`), PromptTokens: 120, CompletionTokens: 30, CostMicros: 0, LatencyMS: 850, Outcome: "ok",
	}
	first, err := s.RecordCall(ctx, triager, call)
	if err != nil {
		t.Fatal(err)
	}
	if first.ID == "" || first.WorkspaceID != tb.ws.ID || first.CaseID != c.ID || first.ActorID != triager.ID || first.CreatedAt.IsZero() ||
		first.PromptDigest != digestOf(t, call.Request) {
		t.Fatalf("recorded = %+v", first)
	}
	// The server may record for the task's agent (builtin runs); the call
	// is still the agent's.
	sys := call
	sys.Turn, sys.Outcome, sys.Response, sys.Error, sys.PromptDigest = 0, "timeout", nil, strings.Repeat("e", 5000), first.PromptDigest
	second, err := s.RecordCall(ctx, signoff.SystemActor(tb.ws.ID), sys)
	if err != nil || second.ActorID != triager.ID || len(second.Error) != 2048 {
		t.Fatalf("system RecordCall = %+v, %v", second.ActorID, err)
	}

	before := tb.head(t)
	_, err = s.RecordCall(ctx, fixer, call)
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.RecordCall(ctx, tb.owner, call)
	wantCode(t, err, signoff.EFORBIDDEN)
	bad := []func(*signoff.ModelCall){
		func(c *signoff.ModelCall) { c.Outcome = "maybe" },
		func(c *signoff.ModelCall) { c.Evidence = "verified" },
		func(c *signoff.ModelCall) { c.Request = json.RawMessage(`{"messages":`) },
		func(c *signoff.ModelCall) { c.Request = nil },
		func(c *signoff.ModelCall) { c.Response = json.RawMessage(`nope`) },
		func(c *signoff.ModelCall) { c.Provider = "" },
		func(c *signoff.ModelCall) { c.PromptDigest = "xyz" },
		func(c *signoff.ModelCall) { c.PromptTokens = -1 },
		func(c *signoff.ModelCall) { c.Turn = -1 },
		func(c *signoff.ModelCall) { c.TaskID = "task_x" },
		func(c *signoff.ModelCall) { c.Request = json.RawMessage(`"` + strings.Repeat("x", 1<<20) + `"`) },
	}
	for i, mut := range bad {
		c := call
		mut(&c)
		_, err := s.RecordCall(ctx, triager, c)
		if signoff.ErrorCode(err) != signoff.EINVALID {
			t.Fatalf("bad call %d: %v, want invalid", i, err)
		}
	}
	unknown := call
	unknown.TaskID = signoff.NewID(signoff.PrefixTask)
	_, err = s.RecordCall(ctx, triager, unknown)
	wantCode(t, err, signoff.ENOTFOUND)
	tb.unchanged(t, before, "refused calls")

	calls, err := s.ListCalls(ctx, triager, task.ID)
	if err != nil || len(calls) != 2 || calls[0].ID != second.ID || calls[1].ID != first.ID {
		t.Fatalf("ListCalls = %+v, %v; want turn order", calls, err)
	}
	if string(calls[1].Response) != `{"content":"severity high"}` || calls[0].Response != nil || calls[1].LatencyMS != 850 || !calls[1].CreatedAt.Equal(first.CreatedAt) {
		t.Fatalf("ListCalls read back %+v", calls[1])
	}
	_, err = s.ListCalls(ctx, fixer, task.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	if got, err := s.ListCalls(ctx, tb.owner, task.ID); err != nil || len(got) != 2 {
		t.Fatalf("owner ListCalls = %d, %v", len(got), err)
	}
	evs := tb.eventsOf(t, "agent.call")
	if len(evs) != 2 || evs[0].CaseID != c.ID {
		t.Fatalf("agent.call events = %+v", evs)
	}
	p := payloadOf(t, evs[0])
	if p["call_id"] != first.ID || p["prompt_digest"] != first.PromptDigest || p["response_digest"] != digestOf(t, call.Response) || p["outcome"] != "ok" || p["prompt_tokens"] != 120.0 {
		t.Fatalf("agent.call payload = %v", p)
	}
	for _, e := range evs {
		if strings.Contains(string(e.Payload), secretPrompt) {
			t.Fatalf("a prompt body went into the ledger: %s", e.Payload)
		}
	}
	tb.verify(t)
}
