package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

var compensatingRE = regexp.MustCompile(`compensating change (case_[0-9a-z]+): (\S+)`)

// TestChangeRollbackOfRollbackCLI is issue 21's first hole through the
// CLI, under the demo's policy (flag rollbacks pre-approved): a signed
// change executes, `signoff change rollback` undoes it at once, and
// `signoff change rollback` of that compensating change, which would
// re-apply the signed change, waits for a signature and says why. A
// reason shorter than the policy's minimum is refused before any case is
// opened, saying how many characters it needs.
func TestChangeRollbackOfRollbackCLI(t *testing.T) {
	t.Parallel()
	e := newChgEnv(t, nil)
	e.ok(e.ownerToken, nil, "change", "policy", "--file", e.writeFile("demo.yaml", demoPolicy(e.alice.ID)))
	id := e.approved()
	e.ok(e.aliceToken, nil, "change", "execute", "--case", id)
	if f := e.flag(); string(f.Value) != "false" {
		t.Fatalf("the signed change left the flag %s", f.Value)
	}

	// Too short a reason: refused, nothing opened, the minimum named.
	_, errOut, code := e.cli(e.ownerToken, nil, "change", "rollback", "--case", id, "--reason", "undo it")
	if code != exitOf(signoff.EINVALID) || !strings.Contains(errOut, "at least 20 characters") {
		t.Fatalf("a short reason: exit %d, stderr %q", code, errOut)
	}

	// The exact compensation is pre-approved and runs through the gate.
	out := e.ok(e.ownerToken, nil, "change", "rollback", "--case", id, "--reason", "the disable did not help, turn the new flow back on")
	m := compensatingRE.FindStringSubmatch(out)
	if m == nil || m[2] != workflow.ChangeExecuted || !strings.Contains(out, "gate passed") {
		t.Fatalf("first rollback:\n%s", out)
	}
	r1 := m[1]
	if f := e.flag(); string(f.Value) != "true" || e.state(id) != workflow.ChangeReverted {
		t.Fatalf("after the first rollback: flag %s, original %s", f.Value, e.state(id))
	}

	// The rollback of that rollback re-applies the signed change: it
	// needs a signature, nothing runs, and the output says why.
	before := e.flag()
	out = e.ok(e.ownerToken, nil, "change", "rollback", "--case", r1, "--reason", "turn the new flow off again, checkout still fails")
	m = compensatingRE.FindStringSubmatch(out)
	if m == nil || m[2] != workflow.ChangeAwaitingApproval || strings.Contains(out, "gate passed") {
		t.Fatalf("rollback of the rollback ran or was not opened:\n%s", out)
	}
	r2 := m[1]
	for _, want := range []string{"Rollback rule:", "needs_approval", "itself a compensating rollback", "it needs approval: signoff approve --case " + r2} {
		if !strings.Contains(out, want) {
			t.Errorf("rollback of the rollback lacks %q\n%s", want, out)
		}
	}
	if f := e.flag(); f.Version != before.Version || string(f.Value) != "true" {
		t.Fatalf("the flag was written without a signature: %s v%d (was v%d)", f.Value, f.Version, before.Version)
	}
	if _, errOut, code := e.cli(e.ownerToken, nil, "change", "execute", "--case", r2); code != exitOf(signoff.ECONFLICT) {
		t.Fatalf("executing it unsigned: exit %d, %s", code, errOut)
	}

	// Signed, with the card saying what it reverts and why it needs the
	// signature, it runs.
	out = e.ok(e.aliceToken, nil, "approve", "--case", r2, "--yes", "--key", e.aliceKey)
	for _, want := range []string{"Reverts:", r1, "Rollback rule:", "is now approved"} {
		if !strings.Contains(out, want) {
			t.Errorf("the card lacks %q\n%s", want, out)
		}
	}
	e.ok(e.aliceToken, nil, "change", "execute", "--case", r2)
	if f := e.flag(); string(f.Value) != "false" {
		t.Fatalf("after the signed rollback: flag %s", f.Value)
	}
}
