package storetest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/workflow"
)

// testChange runs the change desk's storage tests, each on its own store.
func testChange(t *testing.T, b Backend) {
	for _, tt := range []struct {
		name string
		fn   func(*testing.T, Backend)
	}{
		{"Policy", testChangePolicy},
		{"LoopCreateAndUpdate", testChangeLoopCreateAndUpdate},
		{"Plans", testChangePlans},
		{"WhoMayAdvance", testChangeWhoMayAdvance},
		{"NoBareTransitions", testChangeNoBareTransitions},
		{"FullPath", testChangeFullPath},
		{"ConsumeOnce", testChangeConsumeOnce},
		{"ConsumeRace", testChangeConsumeRace},
		{"Revert", testChangeRevert},
		{"AtomicRefusals", testChangeAtomicRefusals},
		{"AppendEvents", testChangeAppendEvents},
		{"Locks", testChangeLocks},
		{"LockRace", testChangeLockRace},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, b)
		})
	}
}

// changeKit drives change cases through their loop.
type changeKit struct {
	*loopKit
	other signoff.Actor // the owner of another workspace
}

func newChangeKit(t *testing.T, b Backend) *changeKit {
	k := newLoopKit(t, b)
	_, other, err := k.store.CreateWorkspace(k.ctx, "Globex", "bob")
	if err != nil {
		t.Fatal(err)
	}
	return &changeKit{loopKit: k, other: other}
}

func (k *changeKit) changeCase(t *testing.T) signoff.Case {
	t.Helper()
	c, err := k.store.CreateCase(k.ctx, k.owner, signoff.CaseInput{ProjectID: k.proj.ID, Kind: signoff.KindChange, Title: "turn checkout_v2 off"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sha256Of(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// newPlan drafts a plan of c (the digest here is the body's hash; the
// store does not recompute it).
func newPlan(c signoff.Case, proposer, value string) *signoff.ChangePlan {
	body := json.RawMessage(`{"kind":"flag","params":{"value":` + value + `},"target":"flag:production/checkout_v2"}`)
	return &signoff.ChangePlan{ID: signoff.NewID(change.PrefixPlan), WorkspaceID: c.WorkspaceID, CaseID: c.ID, Body: body,
		Digest: sha256Of(body), Proposer: proposer, Via: "builtin"}
}

func newReceipt(c signoff.Case, kind string) signoff.Receipt {
	payload := fmt.Sprintf(`{"case":%q,"kind":%q}`, c.ID, kind)
	env := json.RawMessage(`{"payloadType":"application/vnd.signoff.receipt+json","payload":"` +
		base64.StdEncoding.EncodeToString([]byte(payload)) + `","signatures":[]}`)
	return signoff.Receipt{ID: signoff.NewID(signoff.PrefixReceipt), WorkspaceID: c.WorkspaceID, CaseID: c.ID, Kind: kind,
		Envelope: env, Digest: sha256Of([]byte(payload))}
}

// change applies an update and fails the test on error.
func (k *changeKit) change(t *testing.T, by signoff.Actor, u signoff.ChangeUpdate) (signoff.ChangeLoop, signoff.Case) {
	t.Helper()
	l, c, err := k.store.AdvanceChange(k.ctx, by, u)
	if err != nil {
		t.Fatalf("AdvanceChange(%s, %q) as %s: %v", u.CaseID, u.Command, by.Role, err)
	}
	return l, c
}

// cstep moves the loop on by one command, keeping its state.
func (k *changeKit) cstep(t *testing.T, by signoff.Actor, l signoff.ChangeLoop, cmd string) (signoff.ChangeLoop, signoff.Case) {
	t.Helper()
	return k.change(t, by, signoff.ChangeUpdate{CaseID: l.CaseID, Version: l.Version, State: l.State, Command: cmd})
}

// toApproved opens a loop on c and brings it to approved without a
// signature (the pre-approved rollback path), with one plan.
func (k *changeKit) toApproved(t *testing.T, c signoff.Case, st signoff.ChangeLoopState) (signoff.ChangeLoop, signoff.Case) {
	t.Helper()
	l, _ := k.change(t, k.sys, signoff.ChangeUpdate{CaseID: c.ID, State: st})
	p := newPlan(c, k.owner.ID, "false")
	st.PlanID, st.PlanDigest = p.ID, p.Digest
	l, _ = k.change(t, k.owner, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Plan: p, Command: "plan"})
	l, _ = k.cstep(t, k.sys, l, "review_pass")
	return k.cstep(t, k.sys, l, "preapprove")
}

// toExecuted brings c to executed, with an execute receipt.
func (k *changeKit) toExecuted(t *testing.T, c signoff.Case, st signoff.ChangeLoopState) (signoff.ChangeLoop, signoff.Case) {
	t.Helper()
	l, _ := k.toApproved(t, c, st)
	l, _ = k.cstep(t, k.sys, l, "execute")
	r := newReceipt(c, signoff.ReceiptExecute)
	st = l.State
	st.Receipts = append(st.Receipts, r.ID)
	return k.change(t, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "complete", Receipts: []signoff.Receipt{r}})
}

func (k *changeKit) changeLoop(t *testing.T, caseID string) signoff.ChangeLoop {
	t.Helper()
	l, err := k.store.GetChangeLoop(k.ctx, k.owner, caseID)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func (k *changeKit) caseOf(t *testing.T, id string) signoff.Case {
	t.Helper()
	c, err := k.store.GetCase(k.ctx, k.owner, id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantGate fails unless err is a gate refusal of check.
func wantGate(t *testing.T, err error, check string) *change.GateError {
	t.Helper()
	var ge *change.GateError
	if !errors.As(err, &ge) || ge.Check != check {
		t.Fatalf("error %v, want a gate refusal (%s)", err, check)
	}
	return ge
}

const changePolicyYAML = `allowed_targets: ["flag:*/checkout_*"]
environments: [production]
approvals: {required: 1}
preapproved_rollbacks: [flag]
`

// testChangePolicy: set and replace by compare-and-swap, parsed and
// digested; who reads and writes; each write in the ledger.
func testChangePolicy(t *testing.T, b Backend) {
	k := newChangeKit(t, b)
	s, ctx := k.store, k.ctx
	op := k.actor(t, "op", signoff.RoleOperator)
	viewer := k.actor(t, "vi", signoff.RoleViewer)
	planner := k.actor(t, "pl", signoff.RolePlanner)
	rep := k.actor(t, "rep", signoff.RoleReporter)
	cli := signoff.CLIActor(k.ws.ID)

	_, err := s.GetChangePolicy(ctx, k.owner)
	wantCode(t, err, signoff.ENOTFOUND)

	before := k.head(t)
	for _, r := range []struct {
		by      signoff.Actor
		yaml    string
		version int64
		code    string
	}{
		{op, changePolicyYAML, 0, signoff.EFORBIDDEN},
		{planner, changePolicyYAML, 0, signoff.EFORBIDDEN},
		{viewer, changePolicyYAML, 0, signoff.EFORBIDDEN},
		{k.owner, "allowed_targets: [x]\nnot_a_key: 1\n", 0, signoff.EINVALID},
		{k.owner, "approvals: {required: 0}\n", 0, signoff.EINVALID},
		{k.owner, "a: 1\n---\nb: 2\n", 0, signoff.EINVALID},
		{k.owner, changePolicyYAML, -1, signoff.EINVALID},
		{k.owner, changePolicyYAML, 1, signoff.ECONFLICT}, // nothing to replace yet
	} {
		_, err := s.SetChangePolicy(ctx, r.by, r.yaml, r.version, change.PolicyDigest)
		if signoff.ErrorCode(err) != r.code {
			t.Fatalf("SetChangePolicy(%s, %q, %d) = %v, want %s", r.by.Role, r.yaml, r.version, err, r.code)
		}
	}
	// The parser is handed in by the desk: without it even a good policy
	// from the owner is refused and nothing is written.
	if _, err := s.SetChangePolicy(ctx, k.owner, changePolicyYAML, 0, nil); err == nil {
		t.Fatal("SetChangePolicy without a parser stored the policy")
	}
	// Nor with a parser whose answer is not a digest approvers could sign.
	for _, bad := range []string{"", "sha256:" + strings.Repeat("a", 64), strings.Repeat("A", 64), strings.Repeat("a", 63)} {
		if _, err := s.SetChangePolicy(ctx, k.owner, changePolicyYAML, 0, func([]byte) (string, error) { return bad, nil }); err == nil {
			t.Fatalf("SetChangePolicy stored the policy under the digest %q", bad)
		}
	}
	k.unchanged(t, before, "refused policy writes")

	want, err := change.Parse([]byte(changePolicyYAML))
	if err != nil {
		t.Fatal(err)
	}
	p1, err := s.SetChangePolicy(ctx, k.owner, changePolicyYAML, 0, change.PolicyDigest)
	if err != nil {
		t.Fatal(err)
	}
	if p1.Version != 1 || p1.Digest != want.Digest() || p1.YAML != changePolicyYAML || p1.WorkspaceID != k.ws.ID || p1.UpdatedBy != k.owner.ID {
		t.Fatalf("set %+v", p1)
	}
	for _, by := range []signoff.Actor{k.owner, op, viewer, planner, k.sys} {
		got, err := s.GetChangePolicy(ctx, by)
		if err != nil || got.Version != 1 || got.Digest != p1.Digest || got.YAML != changePolicyYAML || !got.UpdatedAt.Equal(p1.UpdatedAt) {
			t.Fatalf("get as %s: %+v %v", by.Role, got, err)
		}
	}
	_, err = s.GetChangePolicy(ctx, rep)
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.GetChangePolicy(ctx, k.other)
	wantCode(t, err, signoff.ENOTFOUND)

	// A second first write, and a write over a stale version, conflict.
	before = k.head(t)
	_, err = s.SetChangePolicy(ctx, k.owner, "", 0, change.PolicyDigest)
	wantCode(t, err, signoff.ECONFLICT)
	_, err = s.SetChangePolicy(ctx, k.owner, "", 2, change.PolicyDigest)
	wantCode(t, err, signoff.ECONFLICT)
	k.unchanged(t, before, "conflicting policy writes")

	// The server and the CLI write too; an empty document is the
	// all-default policy, with its own digest.
	p2, err := s.SetChangePolicy(ctx, k.sys, "", 1, change.PolicyDigest)
	if err != nil || p2.Version != 2 || p2.Digest == p1.Digest {
		t.Fatalf("server write %+v %v", p2, err)
	}
	p3, err := s.SetChangePolicy(ctx, cli, changePolicyYAML, 2, change.PolicyDigest)
	if err != nil || p3.Version != 3 || p3.Digest != p1.Digest || p3.UpdatedBy != cli.ID {
		t.Fatalf("CLI write %+v %v", p3, err)
	}
	_, err = s.SetChangePolicy(ctx, k.owner, changePolicyYAML, 2, change.PolicyDigest)
	wantCode(t, err, signoff.ECONFLICT)

	// Another workspace starts from nothing.
	if op, err := s.SetChangePolicy(ctx, k.other, "", 0, change.PolicyDigest); err != nil || op.Version != 1 || op.WorkspaceID != k.other.WorkspaceID {
		t.Fatalf("other workspace %+v %v", op, err)
	}
	evs := k.eventsOf(t, "change.policy_set")
	if len(evs) != 3 {
		t.Fatalf("%d change.policy_set events, want 3", len(evs))
	}
	last := payloadOf(t, evs[2])
	if last["digest"] != p3.Digest || last["previous_digest"] != p2.Digest || last["version"] != float64(3) || last["yaml"] != changePolicyYAML || evs[2].CaseID != "" {
		t.Fatalf("last policy event %v", last)
	}
	k.verify(t)
}

// testChangeLoopCreateAndUpdate: version 0 creates, a second create
// conflicts, updates need the current version, reads and lists by case
// state, and only change cases have one.
func testChangeLoopCreateAndUpdate(t *testing.T, b Backend) {
	k := newChangeKit(t, b)
	s, ctx := k.store, k.ctx
	c, c2 := k.changeCase(t), k.changeCase(t)

	_, err := s.GetChangeLoop(ctx, k.owner, c.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	st := signoff.ChangeLoopState{Reason: "checkout_v2 breaks the coupon flow", Opener: k.owner.ID}
	l, cs := k.change(t, k.sys, signoff.ChangeUpdate{CaseID: c.ID, State: st})
	if l.Version != 1 || l.State.Reason != st.Reason || l.State.Opener != k.owner.ID || l.ProjectID != k.proj.ID || l.WorkspaceID != k.ws.ID ||
		cs.State != workflow.ChangeRequested || cs.Version != 1 {
		t.Fatalf("created %+v, case %+v", l, cs)
	}
	got := k.changeLoop(t, c.ID)
	if got.Version != 1 || got.State.Reason != st.Reason || !got.CreatedAt.Equal(l.CreatedAt) {
		t.Fatalf("read back %+v", got)
	}
	_, _, err = s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: c.ID, State: st})
	wantCode(t, err, signoff.ECONFLICT)
	_, _, err = s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: c2.ID, Version: 1, State: st})
	wantCode(t, err, signoff.ENOTFOUND)

	st.Refusals = 2
	l2, _ := k.change(t, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: 1, State: st, Note: "two refusals"})
	if l2.Version != 2 || l2.State.Refusals != 2 || !l2.CreatedAt.Equal(l.CreatedAt) {
		t.Fatalf("updated %+v", l2)
	}
	before := k.head(t)
	_, _, err = s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: 1, State: st})
	wantCode(t, err, signoff.ECONFLICT)
	k.unchanged(t, before, "a stale update")

	// Lists filter by the case's state.
	k.toApproved(t, c2, signoff.ChangeLoopState{})
	for _, f := range []struct {
		states []string
		want   []string
	}{
		{nil, []string{c.ID, c2.ID}},
		{[]string{workflow.ChangeRequested}, []string{c.ID}},
		{[]string{workflow.ChangePlanned, workflow.ChangeApproved}, []string{c2.ID}},
		{[]string{workflow.ChangeExecuted}, nil},
	} {
		list, err := s.ListChangeLoops(ctx, k.owner, k.proj.ID, f.states...)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, l := range list {
			ids = append(ids, l.CaseID)
		}
		if strings.Join(ids, ",") != strings.Join(f.want, ",") {
			t.Fatalf("ListChangeLoops(%v) = %v, want %v", f.states, ids, f.want)
		}
	}
	_, err = s.ListChangeLoops(ctx, k.owner, k.proj.ID, workflow.BugTriaging)
	wantCode(t, err, signoff.EINVALID)
	if list, err := s.ListChangeLoops(ctx, k.other, k.proj.ID); signoff.ErrorCode(err) != signoff.ENOTFOUND {
		t.Fatalf("another workspace lists %d loops, %v", len(list), err)
	}

	// Reporters read no change records; another workspace sees none.
	rep := k.actor(t, "rep", signoff.RoleReporter)
	_, err = s.GetChangeLoop(ctx, rep, c.ID)
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.ListChangeLoops(ctx, rep, k.proj.ID)
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.GetChangeLoop(ctx, k.other, c.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	_, _, err = s.AdvanceChange(ctx, k.other, signoff.ChangeUpdate{CaseID: c.ID, Version: 2})
	wantCode(t, err, signoff.ENOTFOUND)

	// Bugs have no change loop.
	bug := k.bug(t, "")
	_, _, err = s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: bug.ID})
	wantCode(t, err, signoff.EINVALID)
	if n := len(k.eventsOf(t, "change.updated")); n != 2+4 {
		t.Fatalf("%d change.updated events, want 6", n)
	}
	k.verify(t)
}

// testChangePlans: a plan is stored with the update that names it, read
// back byte for byte, and never replaced.
func testChangePlans(t *testing.T, b Backend) {
	k := newChangeKit(t, b)
	s, ctx := k.store, k.ctx
	planner := k.actor(t, "pl", signoff.RolePlanner)
	c, other := k.changeCase(t), k.changeCase(t)
	GiveTask(t, s, k.owner, planner, c.ID)
	GiveTask(t, s, k.owner, planner, other.ID)
	l, _ := k.change(t, k.sys, signoff.ChangeUpdate{CaseID: c.ID})
	k.change(t, k.sys, signoff.ChangeUpdate{CaseID: other.ID})

	p := newPlan(c, planner.ID, "false")
	p.Via = "model"
	st := signoff.ChangeLoopState{PlanID: p.ID, PlanDigest: p.Digest}
	l, cs := k.change(t, planner, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Plan: p, Command: "plan"})
	if cs.State != workflow.ChangePlanned || l.State.PlanID != p.ID {
		t.Fatalf("after plan: case %s, loop %+v", cs.State, l.State)
	}
	got, err := s.GetPlan(ctx, k.owner, p.ID)
	if err != nil || string(got.Body) != string(p.Body) || got.Digest != p.Digest || got.Proposer != planner.ID || got.Via != "model" ||
		got.CaseID != c.ID || got.WorkspaceID != k.ws.ID || got.CreatedAt.IsZero() {
		t.Fatalf("GetPlan = %+v, %v", got, err)
	}
	up := k.eventsOf(t, "change.updated")
	if pl, _ := payloadOf(t, up[len(up)-1])["plan"].(map[string]any); pl["id"] != p.ID || pl["digest"] != p.Digest {
		t.Fatalf("change.updated plan %v", pl)
	}

	// A second plan (an edit) is a new row; the state moves to it.
	p2 := newPlan(c, k.owner.ID, "true")
	st2 := signoff.ChangeLoopState{PlanID: p2.ID, PlanDigest: p2.Digest}
	l, _ = k.change(t, k.owner, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st2, Plan: p2})
	list, err := s.ListPlans(ctx, planner, c.ID)
	if err != nil || len(list) != 2 || list[0].ID != p.ID || list[1].ID != p2.ID {
		t.Fatalf("ListPlans = %+v, %v", list, err)
	}

	before := k.head(t)
	bad := []struct {
		name string
		u    func() signoff.ChangeUpdate
		code string
	}{
		{"an id used before", func() signoff.ChangeUpdate {
			q := newPlan(c, k.owner.ID, "1")
			q.ID = p.ID
			return signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: signoff.ChangeLoopState{PlanID: q.ID, PlanDigest: q.Digest}, Plan: q}
		}, signoff.ECONFLICT},
		{"another case's plan", func() signoff.ChangeUpdate {
			q := newPlan(other, k.owner.ID, "1")
			return signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: signoff.ChangeLoopState{PlanID: q.ID, PlanDigest: q.Digest}, Plan: q}
		}, signoff.EINVALID},
		{"state not naming it", func() signoff.ChangeUpdate {
			return signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st2, Plan: newPlan(c, k.owner.ID, "1")}
		}, signoff.EINVALID},
		{"state naming an unknown plan", func() signoff.ChangeUpdate {
			q := newPlan(c, k.owner.ID, "1")
			return signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: signoff.ChangeLoopState{PlanID: q.ID, PlanDigest: q.Digest}}
		}, signoff.EINVALID},
		{"state naming another digest", func() signoff.ChangeUpdate {
			return signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: signoff.ChangeLoopState{PlanID: p.ID, PlanDigest: digestHex("0")}}
		}, signoff.EINVALID},
		{"state naming another case's plan", func() signoff.ChangeUpdate {
			return signoff.ChangeUpdate{CaseID: other.ID, Version: 1, State: signoff.ChangeLoopState{PlanID: p.ID, PlanDigest: p.Digest}}
		}, signoff.EINVALID},
		{"bad id", func() signoff.ChangeUpdate {
			q := newPlan(c, k.owner.ID, "1")
			q.ID = signoff.NewID("pln")
			return signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: signoff.ChangeLoopState{PlanID: q.ID, PlanDigest: q.Digest}, Plan: q}
		}, signoff.EINVALID},
		{"body not JSON", func() signoff.ChangeUpdate {
			q := newPlan(c, k.owner.ID, "1")
			q.Body = json.RawMessage(`{"kind":`)
			return signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: signoff.ChangeLoopState{PlanID: q.ID, PlanDigest: q.Digest}, Plan: q}
		}, signoff.EINVALID},
		{"digest not hex", func() signoff.ChangeUpdate {
			q := newPlan(c, k.owner.ID, "1")
			q.Digest = strings.ToUpper(q.Digest)
			return signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: signoff.ChangeLoopState{PlanID: q.ID, PlanDigest: q.Digest}, Plan: q}
		}, signoff.EINVALID},
		{"unknown via", func() signoff.ChangeUpdate {
			q := newPlan(c, k.owner.ID, "1")
			q.Via = "telepathy"
			return signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: signoff.ChangeLoopState{PlanID: q.ID, PlanDigest: q.Digest}, Plan: q}
		}, signoff.EINVALID},
		{"bad proposer", func() signoff.ChangeUpdate {
			q := newPlan(c, "alice", "1")
			return signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: signoff.ChangeLoopState{PlanID: q.ID, PlanDigest: q.Digest}, Plan: q}
		}, signoff.EINVALID},
	}
	for _, tc := range bad {
		_, _, err := s.AdvanceChange(ctx, k.owner, tc.u())
		if signoff.ErrorCode(err) != tc.code {
			t.Fatalf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	k.unchanged(t, before, "refused plans")
	if list, _ := s.ListPlans(ctx, k.owner, c.ID); len(list) != 2 {
		t.Fatalf("%d plans after refusals", len(list))
	}
	if got, _ := s.GetPlan(ctx, k.owner, p.ID); string(got.Body) != string(p.Body) {
		t.Fatal("a refused plan replaced a stored one")
	}

	// Who reads.
	rep := k.actor(t, "rep", signoff.RoleReporter)
	_, err = s.GetPlan(ctx, rep, p.ID)
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.ListPlans(ctx, rep, c.ID)
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.GetPlan(ctx, k.other, p.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.ListPlans(ctx, k.other, c.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.GetPlan(ctx, k.owner, "plan_x")
	wantCode(t, err, signoff.EINVALID)
	_, err = s.GetPlan(ctx, k.owner, signoff.NewID(change.PrefixPlan))
	wantCode(t, err, signoff.ENOTFOUND)
	if list, err := s.ListPlans(ctx, k.owner, other.ID); err != nil || list == nil || len(list) != 0 {
		t.Fatalf("plans of a case without any: %v %v", list, err)
	}
	k.verify(t)
}

// testChangeWhoMayAdvance: the server, the desk's people and the planner
// write change loops; no agent sends a human-only command; the store's own
// event types are not for callers.
func testChangeWhoMayAdvance(t *testing.T, b Backend) {
	k := newChangeKit(t, b)
	s, ctx := k.store, k.ctx
	planner := k.actor(t, "pl", signoff.RolePlanner)
	op := k.actor(t, "op", signoff.RoleOperator)
	c := k.changeCase(t)
	GiveTask(t, s, k.owner, planner, c.ID)
	l, _ := k.change(t, k.sys, signoff.ChangeUpdate{CaseID: c.ID})
	refused := []signoff.Actor{
		k.actor(t, "vi", signoff.RoleViewer), k.actor(t, "tri", signoff.RoleTriager), k.actor(t, "fix", signoff.RoleFixer),
		k.actor(t, "rec", signoff.RoleRecorder), k.actor(t, "rep", signoff.RoleReporter),
	}
	before := k.head(t)
	for _, r := range refused {
		_, _, err := s.AdvanceChange(ctx, r, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version})
		if signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Fatalf("%s advanced: %v", r.Role, err)
		}
	}
	for _, ev := range []string{"change.updated", "case.transitioned", "loop.updated", "flag.set", "change.policy_set", "approval.recorded"} {
		_, _, err := s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, Events: []signoff.LoopEvent{{Type: ev, Payload: map[string]any{}}}})
		wantCode(t, err, signoff.EINVALID)
	}
	_, _, err := s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, Command: "self_destruct"})
	wantCode(t, err, signoff.EINVALID)
	_, _, err = s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, Command: "start_triage"})
	wantCode(t, err, signoff.EINVALID)
	k.unchanged(t, before, "refused updates")

	// The table decides who sends what: review is the server's.
	p := newPlan(c, planner.ID, "false")
	l, _ = k.change(t, planner, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: signoff.ChangeLoopState{PlanID: p.ID, PlanDigest: p.Digest}, Plan: p, Command: "plan"})
	_, _, err = s.AdvanceChange(ctx, op, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: "review_pass"})
	wantCode(t, err, signoff.EFORBIDDEN)
	l, _ = k.cstep(t, k.sys, l, "review_pass")
	l, _ = k.cstep(t, op, l, "request_approval")
	// Agents never approve or execute, even relayed.
	for _, cmd := range []string{"approve", "reject", "execute", "revert"} {
		_, _, err = s.AdvanceChange(ctx, planner, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: cmd})
		wantCode(t, err, signoff.EFORBIDDEN)
	}
	if _, cs := k.cstep(t, op, l, "approve"); cs.State != workflow.ChangeApproved {
		t.Fatalf("approve by a person: %s", cs.State)
	}
	k.verify(t)
}

// testChangeNoBareTransitions: a change case never moves through the
// generic transition, whoever asks and whatever the command.
func testChangeNoBareTransitions(t *testing.T, b Backend) {
	k := newChangeKit(t, b)
	s, ctx := k.store, k.ctx
	planner := k.actor(t, "pl", signoff.RolePlanner)
	c := k.changeCase(t)
	ap, _ := k.toApproved(t, c, signoff.ChangeLoopState{})
	fresh := k.changeCase(t)
	before := k.head(t)
	for _, try := range []struct {
		by  signoff.Actor
		id  string
		cmd string
	}{
		{k.owner, fresh.ID, "plan"}, {planner, fresh.ID, "plan"}, {k.sys, fresh.ID, "supersede"}, {k.owner, fresh.ID, "supersede"},
		{k.sys, c.ID, "execute"}, {k.owner, c.ID, "execute"}, {k.sys, c.ID, "expire"}, {k.sys, c.ID, "drift"}, {k.owner, c.ID, "plan"},
	} {
		_, _, err := s.TransitionCase(ctx, try.by, try.id, signoff.TransitionInput{Command: try.cmd})
		if signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Fatalf("%s %s by transition: %v, want forbidden", try.by.Role, try.cmd, err)
		}
	}
	k.unchanged(t, before, "refused transitions")
	if cs := k.caseOf(t, c.ID); cs.State != workflow.ChangeApproved || k.changeLoop(t, c.ID).Version != ap.Version {
		t.Fatalf("case moved to %s", cs.State)
	}
	_, _, err := s.TransitionCase(ctx, k.other, c.ID, signoff.TransitionInput{Command: "plan"})
	wantCode(t, err, signoff.ENOTFOUND)
}

// testChangeFullPath walks a change from request to executed: a signed
// approval approves it, the gate consumes one at execution, and the
// receipt is stored with the completion.
func testChangeFullPath(t *testing.T, b Backend) {
	k := newChangeKit(t, b)
	s, ctx := k.store, k.ctx
	planner := k.actor(t, "pl", signoff.RolePlanner)
	op := k.approver(t, "op", signoff.RoleOperator)
	c := k.changeCase(t)
	GiveTask(t, s, k.owner, planner, c.ID)

	l, _ := k.change(t, k.sys, signoff.ChangeUpdate{CaseID: c.ID, State: signoff.ChangeLoopState{Reason: "coupon flow broken", Opener: k.owner.ID}})
	p := newPlan(c, planner.ID, "false")
	st := l.State
	st.PlanID, st.PlanDigest = p.ID, p.Digest
	l, _ = k.change(t, planner, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Plan: p, Command: "plan"})
	st = l.State
	st.Review, st.PolicyDigest = json.RawMessage(`{"ok":true,"findings":[]}`), digestHex("e")
	l, _ = k.change(t, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "review_pass"})
	l, _ = k.cstep(t, k.sys, l, "request_approval")
	a := k.record(t, op.actor, k.approval(c, op, p.Digest, time.Hour))
	l, _ = k.change(t, op.actor, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: "approve",
		Events: []signoff.LoopEvent{{Type: "change.approval_verified", Payload: map[string]any{"approval_id": a.ID}}}})
	l, cs := k.change(t, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: "execute", Consume: []string{a.ID}})
	if cs.State != workflow.ChangeExecuting {
		t.Fatalf("after execute: %s", cs.State)
	}
	list, _ := s.ListApprovals(ctx, k.owner, c.ID)
	if len(list) != 1 || list[0].Status != signoff.ApprovalConsumed || list[0].ConsumedAt == nil {
		t.Fatalf("approvals %+v", list)
	}
	r := newReceipt(c, signoff.ReceiptExecute)
	st = l.State
	st.Receipts = []string{r.ID}
	l, cs = k.change(t, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "complete", Receipts: []signoff.Receipt{r}})
	if cs.State != workflow.ChangeExecuted || len(l.State.Receipts) != 1 || string(l.State.Review) != `{"findings":[],"ok":true}` {
		t.Fatalf("after complete: %s, %+v", cs.State, l.State)
	}
	got, err := s.GetReceipt(ctx, k.owner, r.ID)
	if err != nil || got.Kind != signoff.ReceiptExecute || string(got.Envelope) != string(r.Envelope) || got.Digest != r.Digest ||
		got.CaseID != c.ID || got.WorkspaceID != k.ws.ID || got.CreatedAt.IsZero() {
		t.Fatalf("GetReceipt = %+v, %v", got, err)
	}
	rs, err := s.ListReceipts(ctx, planner, c.ID)
	if err != nil || len(rs) != 1 || rs[0].ID != r.ID {
		t.Fatalf("ListReceipts = %+v, %v", rs, err)
	}
	rep := k.actor(t, "rep", signoff.RoleReporter)
	_, err = s.GetReceipt(ctx, rep, r.ID)
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.ListReceipts(ctx, rep, c.ID)
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.GetReceipt(ctx, k.other, r.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.ListReceipts(ctx, k.other, c.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.GetReceipt(ctx, k.owner, "rcpt_nope")
	wantCode(t, err, signoff.EINVALID)

	// The ledger tells the story: each step, the consumption, the receipt.
	evs, err := s.ListEvents(ctx, k.owner, c.ID, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if tail := strings.Join(types[len(types)-2:], " "); tail != "case.transitioned change.updated" {
		t.Fatalf("last events %s", tail)
	}
	ups := k.eventsOf(t, "change.updated")
	exec, done := payloadOf(t, ups[len(ups)-2]), payloadOf(t, ups[len(ups)-1])
	if exec["command"] != "execute" || fmt.Sprint(exec["consumed"]) != fmt.Sprint([]any{a.ID}) || exec["case_state"] != workflow.ChangeExecuting {
		t.Fatalf("execute summary %v", exec)
	}
	rec, _ := done["receipts"].([]any)
	if len(rec) != 1 || rec[0].(map[string]any)["id"] != r.ID || rec[0].(map[string]any)["digest"] != r.Digest {
		t.Fatalf("complete summary %v", done)
	}
	if len(k.eventsOf(t, "change.approval_verified")) != 1 {
		t.Fatal("the caller's event is missing")
	}
	k.verify(t)
}

// testChangeConsumeOnce: an approval is used once; a second use is the
// gate's "consumed" refusal, an expired one its "expired", another case's
// a conflict.
func testChangeConsumeOnce(t *testing.T, b Backend) {
	k := newChangeKit(t, b)
	s, ctx := k.store, k.ctx
	op := k.approver(t, "op", signoff.RoleOperator)
	c, other := k.changeCase(t), k.changeCase(t)
	l, _ := k.toApproved(t, c, signoff.ChangeLoopState{})
	lo, _ := k.change(t, k.sys, signoff.ChangeUpdate{CaseID: other.ID})
	a := k.record(t, k.sys, k.approval(c, op, l.State.PlanDigest, time.Hour))

	before := k.head(t)
	_, _, err := s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: other.ID, Version: lo.Version, Consume: []string{a.ID}})
	wantCode(t, err, signoff.ECONFLICT)
	var ge *change.GateError
	if errors.As(err, &ge) {
		t.Fatalf("another case's approval is a gate refusal: %v", err)
	}
	_, _, err = s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Consume: []string{signoff.NewID(signoff.PrefixApproval)}})
	wantCode(t, err, signoff.ECONFLICT)
	k.unchanged(t, before, "refused consumptions")

	l, _ = k.change(t, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: "execute", Consume: []string{a.ID}})
	before = k.head(t)
	_, _, err = s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Consume: []string{a.ID}})
	wantCode(t, err, signoff.ECONFLICT)
	if ge := wantGate(t, err, change.CheckConsumed); !strings.Contains(ge.Detail, "approval "+a.ID+" has already been consumed") {
		t.Fatalf("detail %q", ge.Detail)
	}
	_, _, err = s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Consume: []string{a.ID, a.ID}})
	wantCode(t, err, signoff.EINVALID)

	// Expiry is judged by the store's clock at consumption.
	b1 := k.record(t, k.sys, k.approval(c, op, digestHex("2"), time.Hour))
	k.clock.Advance(time.Hour)
	_, _, err = s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Consume: []string{b1.ID}})
	wantCode(t, err, signoff.ECONFLICT)
	wantGate(t, err, change.CheckExpired)

	// A superseded approval is a plain conflict.
	b2 := k.record(t, k.sys, k.approval(c, op, digestHex("3"), 2*time.Hour))
	if _, err := s.SupersedeApprovals(ctx, k.sys, c.ID, ""); err != nil {
		t.Fatal(err)
	}
	before = k.head(t)
	_, _, err = s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Consume: []string{b2.ID}})
	wantCode(t, err, signoff.ECONFLICT)
	if errors.As(err, &ge) {
		t.Fatalf("a superseded approval is a gate refusal: %v", err)
	}
	k.unchanged(t, before, "refused consumptions")
	list, _ := s.ListApprovals(ctx, k.owner, c.ID)
	if len(list) != 3 || list[0].Status != signoff.ApprovalConsumed || list[1].Status != signoff.ApprovalSuperseded || list[1].ConsumedAt != nil {
		t.Fatalf("approvals %+v", list)
	}
	k.verify(t)
}

// testChangeConsumeRace: executions racing on one approval, each from a
// fresh read, leave exactly one winner; every loser is refused as the
// approval consumed, or told to re-read.
func testChangeConsumeRace(t *testing.T, b Backend) {
	k := newChangeKit(t, b)
	op := k.approver(t, "op", signoff.RoleOperator)
	c := k.changeCase(t)
	l, _ := k.toApproved(t, c, signoff.ChangeLoopState{})
	a := k.record(t, k.sys, k.approval(c, op, l.State.PlanDigest, time.Hour))
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			l, err := k.store.GetChangeLoop(k.ctx, k.sys, c.ID)
			if err != nil {
				errs[i] = err
				return
			}
			st := l.State
			st.Refusals = 100 + i
			_, _, errs[i] = k.store.AdvanceChange(k.ctx, k.sys, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st,
				Command: "execute", Consume: []string{a.ID}, Events: []signoff.LoopEvent{{Type: "racer.won", Payload: map[string]any{"i": i}}}})
		}()
	}
	close(start)
	wg.Wait()
	wins, consumed := 0, 0
	for i, err := range errs {
		var ge *change.GateError
		switch {
		case err == nil:
			wins++
		case errors.As(err, &ge):
			if ge.Check != change.CheckConsumed || signoff.ErrorCode(err) != signoff.ECONFLICT {
				t.Fatalf("racer %d: %v", i, err)
			}
			consumed++
		case signoff.ErrorCode(err) != signoff.ECONFLICT:
			t.Fatalf("racer %d: %v, want a consumed refusal or a conflict", i, err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d executions won, want 1", wins)
	}
	t.Logf("1 winner, %d refused as consumed, %d conflicts", consumed, n-1-consumed)
	got := k.changeLoop(t, c.ID)
	cs := k.caseOf(t, c.ID)
	won := k.eventsOf(t, "racer.won")
	if got.Version != l.Version+1 || cs.State != workflow.ChangeExecuting || len(won) != 1 ||
		payloadOf(t, won[0])["i"] != float64(got.State.Refusals-100) {
		t.Fatalf("after the race: loop v%d, case %s, %d winner events", got.Version, cs.State, len(won))
	}
	list, _ := k.store.ListApprovals(k.ctx, k.owner, c.ID)
	if len(list) != 1 || list[0].Status != signoff.ApprovalConsumed {
		t.Fatalf("approvals %+v", list)
	}
	k.verify(t)
}

// testChangeRevert: a compensating change's completion reverts the change
// it compensates, in the same transaction, and only an executed one.
func testChangeRevert(t *testing.T, b Backend) {
	k := newChangeKit(t, b)
	s, ctx := k.store, k.ctx
	orig := k.changeCase(t)
	lo, _ := k.toExecuted(t, orig, signoff.ChangeLoopState{Reason: "turn it off"})

	comp := k.changeCase(t)
	l, _ := k.toApproved(t, comp, signoff.ChangeLoopState{RevertOf: orig.ID, Preapproved: true})
	l, _ = k.cstep(t, k.sys, l, "execute")
	r := newReceipt(comp, signoff.ReceiptRollback)
	st := l.State
	st.Receipts = []string{r.ID}

	notExecuted := k.changeCase(t)
	k.change(t, k.sys, signoff.ChangeUpdate{CaseID: notExecuted.ID})
	bug := k.bug(t, "")
	before := k.head(t)
	for _, tc := range []struct {
		name string
		u    signoff.ChangeUpdate
		code string
	}{
		{"revert_of not set", signoff.ChangeUpdate{CaseID: comp.ID, Version: l.Version, State: l.State, Command: "complete", Revert: notExecuted.ID}, signoff.EINVALID},
		{"itself", signoff.ChangeUpdate{CaseID: comp.ID, Version: l.Version, State: signoff.ChangeLoopState{RevertOf: comp.ID}, Revert: comp.ID}, signoff.EINVALID},
		{"not executed", signoff.ChangeUpdate{CaseID: comp.ID, Version: l.Version, State: signoff.ChangeLoopState{RevertOf: notExecuted.ID, PlanID: st.PlanID, PlanDigest: st.PlanDigest},
			Command: "complete", Revert: notExecuted.ID}, signoff.ECONFLICT},
		{"a bug", signoff.ChangeUpdate{CaseID: comp.ID, Version: l.Version, State: signoff.ChangeLoopState{RevertOf: bug.ID, PlanID: st.PlanID, PlanDigest: st.PlanDigest},
			Command: "complete", Revert: bug.ID}, signoff.EINVALID},
		{"unknown case", func() signoff.ChangeUpdate {
			id := signoff.NewID(signoff.PrefixCase)
			return signoff.ChangeUpdate{CaseID: comp.ID, Version: l.Version, State: signoff.ChangeLoopState{RevertOf: id, PlanID: st.PlanID, PlanDigest: st.PlanDigest}, Command: "complete", Revert: id}
		}(), signoff.EINVALID},
	} {
		_, _, err := s.AdvanceChange(ctx, k.sys, tc.u)
		if signoff.ErrorCode(err) != tc.code {
			t.Fatalf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	k.unchanged(t, before, "refused reverts")

	l, cs := k.change(t, k.sys, signoff.ChangeUpdate{CaseID: comp.ID, Version: l.Version, State: st, Command: "complete", Receipts: []signoff.Receipt{r}, Revert: orig.ID})
	if cs.State != workflow.ChangeExecuted || l.State.RevertOf != orig.ID {
		t.Fatalf("compensating change %s %+v", cs.State, l.State)
	}
	if oc := k.caseOf(t, orig.ID); oc.State != workflow.ChangeReverted {
		t.Fatalf("reverted case is %s", oc.State)
	}
	ol := k.changeLoop(t, orig.ID)
	if ol.Version != lo.Version+1 || ol.State.RevertedBy != comp.ID || ol.State.Reason != "turn it off" || len(ol.State.Receipts) != 1 {
		t.Fatalf("reverted loop v%d %+v", ol.Version, ol.State)
	}
	evs, _ := s.ListEvents(ctx, k.owner, orig.ID, before, 10)
	if len(evs) != 2 || evs[0].Type != "case.transitioned" || evs[0].ActorID != k.sys.ID || evs[1].Type != "change.updated" || payloadOf(t, evs[1])["reverted_by"] != comp.ID {
		t.Fatalf("events of the reverted case %+v", evs)
	}
	if p := payloadOf(t, evs[0]); p["command"] != "revert" || p["to"] != workflow.ChangeReverted {
		t.Fatalf("revert event %v", p)
	}
	rs, _ := s.ListReceipts(ctx, k.owner, comp.ID)
	if len(rs) != 1 || rs[0].Kind != signoff.ReceiptRollback {
		t.Fatalf("receipts %+v", rs)
	}

	// Once reverted, it is not reverted again.
	comp2 := k.changeCase(t)
	l2, _ := k.toApproved(t, comp2, signoff.ChangeLoopState{RevertOf: orig.ID})
	l2, _ = k.cstep(t, k.sys, l2, "execute")
	_, _, err := s.AdvanceChange(ctx, k.sys, signoff.ChangeUpdate{CaseID: comp2.ID, Version: l2.Version, State: l2.State, Command: "complete", Revert: orig.ID})
	wantCode(t, err, signoff.ECONFLICT)
	if st := signoff.ErrorState(err); st != workflow.ChangeReverted {
		t.Fatalf("conflict state %q", st)
	}
	if cs := k.caseOf(t, comp2.ID); cs.State != workflow.ChangeExecuting {
		t.Fatalf("the refused completion moved the case to %s", cs.State)
	}
	k.verify(t)
}

// testChangeAtomicRefusals: when any part of an update fails, none of it
// is stored: no plan, no receipt, no consumption, no move, no event.
func testChangeAtomicRefusals(t *testing.T, b Backend) {
	k := newChangeKit(t, b)
	s, ctx := k.store, k.ctx
	op := k.approver(t, "op", signoff.RoleOperator)
	c := k.changeCase(t)
	l, _ := k.toApproved(t, c, signoff.ChangeLoopState{})
	a := k.record(t, k.sys, k.approval(c, op, l.State.PlanDigest, time.Hour))
	other := k.changeCase(t)
	k.change(t, k.sys, signoff.ChangeUpdate{CaseID: other.ID})
	stored := newReceipt(other, signoff.ReceiptBypass)
	lo := k.changeLoop(t, other.ID)
	k.change(t, k.sys, signoff.ChangeUpdate{CaseID: other.ID, Version: lo.Version, Receipts: []signoff.Receipt{stored}})

	notExecuted := k.changeCase(t)
	attempt := func(mod func(u *signoff.ChangeUpdate)) (signoff.ChangeUpdate, error) {
		p := newPlan(c, k.owner.ID, "true")
		st := l.State
		st.PlanID, st.PlanDigest = p.ID, p.Digest
		r := newReceipt(c, signoff.ReceiptExecute)
		st.Receipts = []string{r.ID}
		u := signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Plan: p, Command: "execute", Consume: []string{a.ID},
			Receipts: []signoff.Receipt{r}, Events: []signoff.LoopEvent{{Type: "atomic.try", Payload: map[string]any{}}},
			Jobs: []signoff.JobRequest{{Args: signoff.ReconcileJob{WorkspaceID: k.ws.ID, ProjectID: k.proj.ID, Cause: "atomic"}}}}
		mod(&u)
		_, _, err := s.AdvanceChange(ctx, k.sys, u)
		return u, err
	}
	before := k.head(t)
	for _, tc := range []struct {
		name string
		mod  func(u *signoff.ChangeUpdate)
		code string
	}{
		{"a receipt id already stored", func(u *signoff.ChangeUpdate) {
			u.Receipts = append(u.Receipts, signoff.Receipt{ID: stored.ID, WorkspaceID: k.ws.ID, CaseID: c.ID, Kind: signoff.ReceiptExecute, Envelope: stored.Envelope, Digest: stored.Digest})
		}, signoff.ECONFLICT},
		{"a bad receipt", func(u *signoff.ChangeUpdate) { u.Receipts[0].Digest = "nope" }, signoff.EINVALID},
		{"a receipt of another kind", func(u *signoff.ChangeUpdate) { u.Receipts[0].Kind = "deploy" }, signoff.EINVALID},
		{"a receipt envelope not JSON", func(u *signoff.ChangeUpdate) { u.Receipts[0].Envelope = json.RawMessage(`{`) }, signoff.EINVALID},
		{"a receipt of another case", func(u *signoff.ChangeUpdate) { u.Receipts[0].CaseID = other.ID }, signoff.EINVALID},
		{"a revert that cannot happen", func(u *signoff.ChangeUpdate) { u.Revert, u.State.RevertOf = notExecuted.ID, notExecuted.ID }, signoff.ECONFLICT},
		{"an illegal command", func(u *signoff.ChangeUpdate) { u.Command = "complete" }, signoff.ECONFLICT},
		{"a stale version", func(u *signoff.ChangeUpdate) { u.Version-- }, signoff.ECONFLICT},
		{"an unknown approval", func(u *signoff.ChangeUpdate) {
			u.Consume = append(u.Consume, signoff.NewID(signoff.PrefixApproval))
		}, signoff.ECONFLICT},
		{"a job without a kind", func(u *signoff.ChangeUpdate) { u.Jobs = append(u.Jobs, signoff.JobRequest{}) }, signoff.EINVALID},
	} {
		_, err := attempt(tc.mod)
		if signoff.ErrorCode(err) != tc.code {
			t.Fatalf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	k.unchanged(t, before, "refused updates")
	if got := k.changeLoop(t, c.ID); got.Version != l.Version {
		t.Fatalf("loop moved to v%d", got.Version)
	}
	if cs := k.caseOf(t, c.ID); cs.State != workflow.ChangeApproved {
		t.Fatalf("case moved to %s", cs.State)
	}
	if list, _ := s.ListPlans(ctx, k.owner, c.ID); len(list) != 1 {
		t.Fatalf("%d plans stored by refused updates", len(list)-1)
	}
	if rs, _ := s.ListReceipts(ctx, k.owner, c.ID); len(rs) != 0 {
		t.Fatalf("%d receipts stored by refused updates", len(rs))
	}
	if list, _ := s.ListApprovals(ctx, k.owner, c.ID); list[0].Status != signoff.ApprovalValid {
		t.Fatalf("approval %s after refused updates", list[0].Status)
	}
	var jobs int
	if err := s.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job WHERE kind = $1`, signoff.ReconcileJob{}.Kind()).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if jobs != 0 {
		t.Fatalf("%d jobs enqueued by refused updates", jobs)
	}
	// The same update, unmodified, goes through whole.
	u, err := attempt(func(*signoff.ChangeUpdate) {})
	if err != nil {
		t.Fatal(err)
	}
	if list, _ := s.ListPlans(ctx, k.owner, c.ID); len(list) != 2 || list[1].ID != u.Plan.ID {
		t.Fatalf("plans %+v", list)
	}
	if rs, _ := s.ListReceipts(ctx, k.owner, c.ID); len(rs) != 1 || rs[0].ID != u.Receipts[0].ID {
		t.Fatalf("receipts %+v", rs)
	}
	if err := s.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job WHERE kind = $1`, signoff.ReconcileJob{}.Kind()).Scan(&jobs); err != nil || jobs != 1 {
		t.Fatalf("%d jobs, %v", jobs, err)
	}
	k.verify(t)
}

// testChangeAppendEvents: the server records events on a change case
// without moving it; nobody else does.
func testChangeAppendEvents(t *testing.T, b Backend) {
	k := newChangeKit(t, b)
	s, ctx := k.store, k.ctx
	c := k.changeCase(t)
	l, _ := k.toApproved(t, c, signoff.ChangeLoopState{})
	cs := k.caseOf(t, c.ID)
	refusal := []signoff.LoopEvent{{Type: "gate.refused", Payload: map[string]any{"check": change.CheckBeforeState, "detail": "drifted"}}}
	people := []signoff.Actor{k.owner, k.actor(t, "op", signoff.RoleOperator), k.actor(t, "pl", signoff.RolePlanner)}
	bug := k.bug(t, "")
	before := k.head(t)
	for _, by := range people {
		wantCode(t, s.AppendChangeEvents(ctx, by, c.ID, refusal), signoff.EFORBIDDEN)
	}
	wantCode(t, s.AppendChangeEvents(ctx, k.sys, c.ID, []signoff.LoopEvent{{Type: "change.updated", Payload: map[string]any{}}}), signoff.EINVALID)
	wantCode(t, s.AppendChangeEvents(ctx, k.sys, c.ID, []signoff.LoopEvent{{Type: "Gate Refused", Payload: map[string]any{}}}), signoff.EINVALID)
	wantCode(t, s.AppendChangeEvents(ctx, k.sys, bug.ID, refusal), signoff.EINVALID)
	wantCode(t, s.AppendChangeEvents(ctx, k.sys, signoff.NewID(signoff.PrefixCase), refusal), signoff.ENOTFOUND)
	wantCode(t, s.AppendChangeEvents(ctx, signoff.SystemActor(k.other.WorkspaceID), c.ID, refusal), signoff.ENOTFOUND)
	k.unchanged(t, before, "refused appends")

	if err := s.AppendChangeEvents(ctx, k.sys, c.ID, append(refusal, signoff.LoopEvent{Type: "gate.note", Payload: "twice"})); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendChangeEvents(ctx, k.sys, c.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got := k.head(t); got != before+2 {
		t.Fatalf("head moved by %d, want 2", got-before)
	}
	evs := k.eventsOf(t, "gate.refused")
	if len(evs) != 1 || evs[0].CaseID != c.ID || evs[0].ActorID != k.sys.ID || payloadOf(t, evs[0])["check"] != change.CheckBeforeState {
		t.Fatalf("gate.refused events %+v", evs)
	}
	if got := k.caseOf(t, c.ID); got.State != cs.State || got.Version != cs.Version || k.changeLoop(t, c.ID).Version != l.Version {
		t.Fatal("appending events moved the case or its loop")
	}
	k.verify(t)
}

// testChangeLocks: a target's lock has one holder until its lease ends;
// the holder extends it and releases it; locks are per workspace.
func testChangeLocks(t *testing.T, b Backend) {
	k := newChangeKit(t, b)
	s, ctx := k.store, k.ctx
	const target = "flag:production/checkout_v2"
	lock := func(holder string, ttl time.Duration) bool {
		t.Helper()
		ok, err := s.LockTarget(ctx, k.sys, target, holder, ttl)
		if err != nil {
			t.Fatalf("LockTarget(%s): %v", holder, err)
		}
		return ok
	}
	if !lock("exec-1", time.Minute) {
		t.Fatal("a free target was not locked")
	}
	if lock("exec-2", time.Minute) {
		t.Fatal("a held target was locked by another holder")
	}
	k.clock.Advance(50 * time.Second)
	if !lock("exec-1", time.Minute) {
		t.Fatal("the holder could not extend its lease")
	}
	k.clock.Advance(50 * time.Second) // 100s: past the first lease, inside the extended one
	if lock("exec-2", time.Minute) {
		t.Fatal("an extended lease was taken over")
	}
	k.clock.Advance(10 * time.Second) // exactly at expiry
	if !lock("exec-2", time.Minute) {
		t.Fatal("an expired lease was not taken over")
	}
	if lock("exec-1", time.Minute) {
		t.Fatal("the old holder took its lock back")
	}
	// Only the holder releases.
	if err := s.UnlockTarget(ctx, k.sys, target, "exec-1"); err != nil {
		t.Fatal(err)
	}
	if lock("exec-3", time.Minute) {
		t.Fatal("a release by a non-holder freed the lock")
	}
	if err := s.UnlockTarget(ctx, k.sys, target, "exec-2"); err != nil {
		t.Fatal(err)
	}
	if !lock("exec-3", time.Minute) {
		t.Fatal("a released target was not locked")
	}
	// Other targets and other workspaces are other locks.
	if ok, err := s.LockTarget(ctx, k.sys, "flag:staging/checkout_v2", "exec-1", time.Minute); err != nil || !ok {
		t.Fatalf("another target: %v %v", ok, err)
	}
	if ok, err := s.LockTarget(ctx, signoff.SystemActor(k.other.WorkspaceID), target, "exec-1", time.Minute); err != nil || !ok {
		t.Fatalf("another workspace: %v %v", ok, err)
	}
	// The CLI acts as the server; nobody else locks.
	if ok, err := s.LockTarget(ctx, signoff.CLIActor(k.ws.ID), "runbook:warm-cdn", "cli-1", time.Minute); err != nil || !ok {
		t.Fatalf("CLI: %v %v", ok, err)
	}
	people := []signoff.Actor{k.owner, k.actor(t, "op", signoff.RoleOperator), k.actor(t, "pl", signoff.RolePlanner)}
	before := k.head(t)
	for _, by := range people {
		_, err := s.LockTarget(ctx, by, "flag:production/other", "x", time.Minute)
		wantCode(t, err, signoff.EFORBIDDEN)
		wantCode(t, s.UnlockTarget(ctx, by, target, "exec-3"), signoff.EFORBIDDEN)
	}
	for _, bad := range []struct {
		target, holder string
		ttl            time.Duration
	}{
		{"", "h", time.Minute}, {target, "", time.Minute}, {target, "h", 0}, {target, "h", -time.Second},
		{target, "h", 25 * time.Hour}, {"flag:x\nother", "h", time.Minute}, {strings.Repeat("t", 600), "h", time.Minute},
	} {
		_, err := s.LockTarget(ctx, k.sys, bad.target, bad.holder, bad.ttl)
		wantCode(t, err, signoff.EINVALID)
	}
	k.unchanged(t, before, "locks")
	if lock("exec-4", time.Minute) {
		t.Fatal("the lock changed hands through a refused call")
	}
}

// testChangeLockRace: holders racing for one free target: exactly one
// gets it.
func testChangeLockRace(t *testing.T, b Backend) {
	k := newChangeKit(t, b)
	const n = 20
	got := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			got[i], errs[i] = k.store.LockTarget(k.ctx, k.sys, "flag:production/checkout_v2", fmt.Sprintf("exec-%d", i), time.Minute)
		}()
	}
	close(start)
	wg.Wait()
	winners := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("racer %d: %v", i, errs[i])
		}
		if got[i] {
			winners++
		}
	}
	if winners != 1 {
		t.Fatalf("%d holders got the lock, want 1", winners)
	}
}
