package storetest

import (
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// testAgentKeepsSignatures: a signed approval that still counts is a
// person's decision, though the quorum is not met and the case still
// awaits approval: no agent moves the case from under it, even on its
// open task there. Once the signature no longer counts, the task's
// receipt decides again.
func testAgentKeepsSignatures(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	reporter := k.actor(t, "rita", signoff.RoleReporter)
	c, err := k.store.CreateCase(k.ctx, k.owner, signoff.CaseInput{ProjectID: k.proj.ID, Kind: signoff.KindBug, Title: "coupon applied twice", ReporterID: reporter.ID})
	if err != nil {
		t.Fatal(err)
	}
	if c, err = BringTo(k.ctx, k.store, k.owner, reporter, c, workflow.BugAwaitingApproval); err != nil {
		t.Fatal(err)
	}
	fixer := k.actor(t, "fixbot", signoff.RoleFixer)
	GiveTask(t, k.store, k.owner, fixer, c.ID)
	olga := k.approver(t, "olga", signoff.RoleOperator)
	k.record(t, k.sys, k.approval(c, olga, digestHex("a"), time.Hour))
	head, err := k.store.HeadSeq(k.ctx, k.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = k.store.TransitionCase(k.ctx, fixer, c.ID, signoff.TransitionInput{Command: "escalate"})
	wantCode(t, err, signoff.ECONFLICT)
	if cur, _ := k.store.GetCase(k.ctx, k.owner, c.ID); cur.State != c.State || cur.Version != c.Version {
		t.Fatalf("the fixer moved a signed case to %s", cur.State)
	}
	if h, _ := k.store.HeadSeq(k.ctx, k.ws.ID); h != head {
		t.Fatalf("ledger head %d -> %d", head, h)
	}
	if _, err := k.store.SupersedeApprovals(k.ctx, k.sys, c.ID, ""); err != nil {
		t.Fatal(err)
	}
	if _, _, err := k.store.TransitionCase(k.ctx, fixer, c.ID, signoff.TransitionInput{Command: "escalate"}); err != nil {
		t.Fatalf("escalate once no signature counts: %v", err)
	}
	k.verify(t)
}
