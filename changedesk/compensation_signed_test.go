package changedesk_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/workflow"
)

// A signed rollback is signed over the difference its card showed: the
// later changes it overwrites and the content the target holds. A later
// change executed on the target after that (a runbook run again, a file
// written and written back: the before-state check cannot tell) must not
// be overwritten under those signatures. The gate refuses, the approvals
// are superseded, and the case waits for signatures with the new
// difference on its card; signed again, it runs and marks every later
// change it wrote over.

// fakeFiles stands in for the repository file actuator: a file's state
// is its content's digest (as FileActuator's, commits elsewhere are not
// drift), and its rollback puts the content read when drafting back.
type fakeFiles struct {
	mu    sync.Mutex
	files map[string]string
}

func (*fakeFiles) Kind() string { return change.KindFile }

func fileState(content string) changedesk.State {
	sum := sha256.Sum256([]byte("file\x00" + content))
	d := hex.EncodeToString(sum[:])
	v, _ := json.Marshal(content)
	return changedesk.State{Digest: d, Content: d, Value: v}
}

func (f *fakeFiles) Read(_ context.Context, _ changedesk.Scope, t change.Target) (changedesk.State, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fileState(f.files[t.Name]), nil
}

type fileParams struct {
	Content string `json:"content"`
}

func (f *fakeFiles) Draft(_ context.Context, _ changedesk.Scope, t change.Target, params json.RawMessage) (changedesk.Draft, error) {
	var p fileParams
	if err := json.Unmarshal(params, &p); err != nil {
		return changedesk.Draft{}, signoff.Errorf(signoff.EINVALID, "params: %v", err)
	}
	f.mu.Lock()
	cur := f.files[t.Name]
	f.mu.Unlock()
	rb, _ := json.Marshal(fileParams{Content: cur})
	return changedesk.Draft{Before: fileState(cur), After: fileState(p.Content).Digest, Rollback: rb}, nil
}

func (f *fakeFiles) write(p change.Plan, raw json.RawMessage, want string) (changedesk.State, error) {
	t, err := change.ParseTarget(p.Target)
	if err != nil {
		return changedesk.State{}, err
	}
	var fp fileParams
	if err := json.Unmarshal(raw, &fp); err != nil {
		return changedesk.State{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fileState(f.files[t.Name]).Digest != want {
		return fileState(f.files[t.Name]), &signoff.Error{Code: signoff.ECONFLICT, Message: "file changed"}
	}
	f.files[t.Name] = fp.Content
	return fileState(fp.Content), nil
}

func (f *fakeFiles) Apply(_ context.Context, _ changedesk.Scope, p change.Plan, before changedesk.State) (changedesk.State, error) {
	return f.write(p, p.Params, before.Digest)
}

func (f *fakeFiles) Restore(_ context.Context, _ changedesk.Scope, p change.Plan, current changedesk.State) (changedesk.State, error) {
	return f.write(p, p.Rollback, current.Digest)
}

func (f *fakeFiles) content(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.files[name]
}

const bannerFile = "banner.txt"

// withFiles adds the file actuator with banner.txt holding v1, under a
// policy that allows top-level files and pre-approves no file rollback.
func (e *env) withFiles() *fakeFiles {
	f := &fakeFiles{files: map[string]string{bannerFile: "v1"}}
	e.desk.Actuators[change.KindFile] = f
	e.setPolicy(strings.Replace(policyYAML([]string{e.alice.ID, e.bob.ID}, ""), `["flag:prod/*"]`, `["flag:prod/*", "file:*"]`, 1))
	return f
}

// fileExecuted writes content to banner.txt, signed by alice.
func (e *env) fileExecuted(content string) signoff.Case {
	e.t.Helper()
	c, _, err := e.desk.Request(e.ctx, e.owner, changedesk.RequestInput{ProjectID: e.project, Reason: "put " + content + " in the banner file for the release"})
	must(e.t, err)
	p, _ := json.Marshal(fileParams{Content: content})
	c, _, err = e.desk.Propose(e.ctx, e.owner, c.ID, changedesk.Proposal{Target: "file:" + bannerFile, Params: p, HealthCheck: e.okHealth(), Via: "human"})
	must(e.t, err)
	if c.State != workflow.ChangeAwaitingApproval {
		e.t.Fatalf("file change %s: %s; review %s", content, c.State, e.loop(c.ID).State.Review)
	}
	e.approve(e.alice, c.ID)
	x, err := e.desk.Execute(e.ctx, e.alice, c.ID)
	must(e.t, err)
	if x.Outcome != changedesk.OutcomeExecuted {
		e.t.Fatalf("file change %s: %s", content, x.Outcome)
	}
	return x.Case
}

func laterIDs(d change.CompensationDecision) []string {
	var ids []string
	for _, l := range d.Later {
		ids = append(ids, l.CaseID)
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids ...string) []string {
	ids = slices.Clone(ids)
	slices.Sort(ids)
	return ids
}

// lastPayload decodes the payload of the newest event of type typ on a
// case.
func (e *env) lastPayload(caseID, typ string) map[string]any {
	e.t.Helper()
	evs, err := e.store.ListEvents(e.ctx, e.owner, caseID, 0, 500)
	must(e.t, err)
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == typ {
			var m map[string]any
			must(e.t, json.Unmarshal(evs[i].Payload, &m))
			return m
		}
	}
	e.t.Fatalf("no %s event on %s: %v", typ, caseID, e.events(caseID))
	return nil
}

func strs(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// signedRollbackRefusedAfterLater executes the approved rollback r after
// a later change executed on its target: it must be refused, back to
// awaiting approval with want (the later changes now standing) on its
// card, its approvals superseded, and added named as the new ones.
func (e *env) signedRollbackRefusedAfterLater(r signoff.Case, signed, want, added []string, nothingRan func() bool) {
	t := e.t
	t.Helper()
	approved := e.loop(r.ID).State.ApprovalIDs
	if len(approved) == 0 {
		t.Fatal("the rollback has no approvals to supersede")
	}
	x, err := e.desk.Execute(e.ctx, e.bob, r.ID)
	if !nothingRan() {
		t.Fatalf("the signed rollback ran over %v, which nobody who signed it saw (%v, %s)", added, err, ran(&x))
	}
	if gateCheck(err) != change.CheckQuorum {
		t.Fatalf("execute: %v, want a quorum refusal", err)
	}
	for _, id := range added {
		if !strings.Contains(signoff.ErrorMessage(err), id) {
			t.Fatalf("the refusal does not name %s: %v", id, err)
		}
	}
	if s := e.state(r.ID); s != workflow.ChangeAwaitingApproval || x.Case.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("after the refusal the rollback is %s (answer %s), want awaiting_approval", s, x.Case.State)
	}
	if l := e.loop(r.ID); len(l.State.ApprovalIDs) != 0 || l.State.ApprovedDigest != "" {
		t.Fatalf("the loop still names a quorum: %v %q", l.State.ApprovalIDs, l.State.ApprovedDigest)
	}
	d := e.decision(r.ID)
	if d.Verdict != change.CompensationNeedsApproval || !slices.Equal(laterIDs(d), want) || !strings.Contains(d.Reason, added[0]) {
		t.Fatalf("the decision stated now: %+v, want later changes %v", d, want)
	}
	card, err := e.desk.Card(e.ctx, e.bob, r.ID)
	must(t, err)
	if card.Compensation == nil || !slices.Equal(laterIDs(*card.Compensation), want) {
		t.Fatalf("the card does not show the new later change: %+v", card.Compensation)
	}
	for _, a := range e.approvals(r.ID) {
		if slices.Contains(approved, a.ID) && a.Status != signoff.ApprovalSuperseded {
			t.Fatalf("approval %s is %s, want superseded", a.ID, a.Status)
		}
	}
	evs := e.events(r.ID)
	for _, typ := range []string{"gate.refused", "change.compensation_changed", "approvals.superseded", "change.compensation", "change.approval_requested"} {
		if !has(evs, typ) {
			t.Fatalf("no %s event on the rollback: %v", typ, evs)
		}
	}
	p := e.lastPayload(r.ID, "change.compensation_changed")
	if got := strs(p["signed_later_changes"]); !slices.Equal(got, signed) {
		t.Fatalf("signed_later_changes %v, want %v", got, signed)
	}
	if got := strs(p["later_changes"]); !slices.Equal(got, want) {
		t.Fatalf("later_changes %v, want %v", got, want)
	}
	if got := strs(p["new_later_changes"]); !slices.Equal(got, added) {
		t.Fatalf("new_later_changes %v, want %v", got, added)
	}
	for _, id := range added {
		if lc := e.loop(id); len(lc.State.OverwrittenBy) != 0 {
			t.Fatalf("%s is marked overwritten by a rollback that did not run: %v", id, lc.State.OverwrittenBy)
		}
	}
}

// overwrittenBy fails unless each of cases is marked overwritten by r.
func (e *env) overwrittenBy(r string, cases ...string) {
	e.t.Helper()
	for _, id := range cases {
		if l := e.loop(id); !slices.Equal(l.State.OverwrittenBy, []string{r}) {
			e.t.Fatalf("%s overwritten_by %v, want [%s]", id, l.State.OverwrittenBy, r)
		}
		if !has(e.events(id), "change.overwritten") {
			e.t.Fatalf("no change.overwritten event on %s: %v", id, e.events(id))
		}
	}
}

// TestSignedRollbackRefusedAfterLaterRunbookRun: A and B deploy; the
// rollback of A is signed over B; C deploys after the signature. The
// runbook's state is its script, so the before-state check passes.
func TestSignedRollbackRefusedAfterLaterRunbookRun(t *testing.T) {
	t.Parallel()
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, open)
			rb := e.withRunbook()
			hc := e.okHealth()
			a := e.runbookExecuted(`["v2"]`, `{"args":["v1"]}`, hc)
			b := e.runbookExecuted(`["v3"]`, `{"args":["v2"]}`, hc)
			r, x, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "the v2 deploy broke checkout, roll it back")
			must(t, err)
			if x != nil || r.State != workflow.ChangeAwaitingApproval {
				t.Fatalf("rollback of A over B: %s, %s", r.State, ran(x))
			}
			if d := e.decision(r.ID); !slices.Equal(laterIDs(d), []string{b.ID}) {
				t.Fatalf("decision %+v", d)
			}
			if c := e.approve(e.alice, r.ID); c.State != workflow.ChangeApproved {
				t.Fatalf("alice signs the rollback over B: %s", c.State)
			}
			// C deploys v4 after alice signed a rollback over B alone.
			c := e.runbookExecuted(`["v4"]`, `{"args":["v3"]}`, hc)
			n := len(rb.ran())
			e.signedRollbackRefusedAfterLater(r, []string{b.ID}, sorted(b.ID, c.ID), []string{c.ID}, func() bool { return len(rb.ran()) == n })
			// Signed again, seeing C: it runs, and B and C no longer stand.
			if s := e.approve(e.alice, r.ID); s.State != workflow.ChangeApproved {
				t.Fatalf("signed again: %s", s.State)
			}
			x2, err := e.desk.Execute(e.ctx, e.bob, r.ID)
			must(t, err)
			if runs := rb.ran(); x2.Outcome != changedesk.OutcomeExecuted || len(runs) != n+1 || runs[n] != `apply {"args":["v1"]}` {
				t.Fatalf("signed again: %s, runs %v", x2.Outcome, runs[n:])
			}
			if e.state(a.ID) != workflow.ChangeReverted {
				t.Fatalf("A is %s", e.state(a.ID))
			}
			e.overwrittenBy(r.ID, b.ID, c.ID)
		})
	}
}

// TestSignedRollbackRefusedAfterFileWrittenAndWrittenBack: the rollback
// of A (banner v1 -> v2) is signed with nothing after A; B writes v3 and
// C writes v2 back. The file holds what the signers saw (its state is its
// content), but the rollback would overwrite B and C.
func TestSignedRollbackRefusedAfterFileWrittenAndWrittenBack(t *testing.T) {
	t.Parallel()
	for name, open := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, open)
			f := e.withFiles()
			a := e.fileExecuted("v2")
			r, x, err := e.desk.Rollback(e.ctx, e.owner, a.ID, "the v2 banner was wrong, put v1 back please")
			must(t, err)
			if x != nil || r.State != workflow.ChangeAwaitingApproval {
				t.Fatalf("rollback of A: %s, %s", r.State, ran(x))
			}
			if d := e.decision(r.ID); len(d.Later) != 0 || d.Verdict != change.CompensationNeedsApproval {
				t.Fatalf("decision %+v", d)
			}
			if c := e.approve(e.alice, r.ID); c.State != workflow.ChangeApproved {
				t.Fatalf("alice signs the rollback: %s", c.State)
			}
			b := e.fileExecuted("v3")
			c := e.fileExecuted("v2")
			e.signedRollbackRefusedAfterLater(r, nil, sorted(b.ID, c.ID), sorted(b.ID, c.ID), func() bool { return f.content(bannerFile) == "v2" })
			if s := e.approve(e.bob, r.ID); s.State != workflow.ChangeApproved {
				t.Fatalf("signed again: %s", s.State)
			}
			x2, err := e.desk.Execute(e.ctx, e.owner, r.ID)
			must(t, err)
			if x2.Outcome != changedesk.OutcomeExecuted || f.content(bannerFile) != "v1" || e.state(a.ID) != workflow.ChangeReverted {
				t.Fatalf("signed again: %s, banner %q, A %s", x2.Outcome, f.content(bannerFile), e.state(a.ID))
			}
			e.overwrittenBy(r.ID, b.ID, c.ID)
		})
	}
}
