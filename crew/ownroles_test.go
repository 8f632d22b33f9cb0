package crew_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/crew"
)

// TestRunnerRunsOnlyCrewTasks: a triage run of a case runs the crew's
// tasks only. A task of another role on the same case (a ticketed bug's
// reproducer, the bug desk's to run) is left as it is: run again from
// triage, it ran a second time beside the desk's own run.
func TestRunnerRunsOnlyCrewTasks(t *testing.T) {
	t.Parallel()
	d := loadOrbit(t)
	ctx := context.Background()
	_, key, _ := ed25519.GenerateKey(nil)
	st := openStore(t, filepath.Join(t.TempDir(), "own.db"), key)
	defer st.Close()
	setup, err := crew.NewEvalSetup(ctx, st, runtimeFor(st, nil), d, crew.Roles(agent.ProviderBuiltin))
	if err != nil {
		t.Fatal(err)
	}
	caseID, err := setup.Submit(ctx, d.Items[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateActor(ctx, signoff.CLIActor(setup.Workspace), "reproducer", signoff.RoleReproducer); err != nil {
		t.Fatal(err)
	}
	sys := signoff.SystemActor(setup.Workspace)
	other, err := st.CreateTask(ctx, sys, signoff.TaskInput{CaseID: caseID, Kind: "reproducer", Role: signoff.RoleReproducer, Input: json.RawMessage(`{"case_id":"` + caseID + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := setup.Run(ctx, caseID, true); err != nil {
		t.Fatalf("triage run: %v", err)
	}
	got, err := st.GetTask(ctx, sys, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	calls, err := st.ListCalls(ctx, sys, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != signoff.TaskOpen || len(calls) != 0 {
		t.Errorf("the reproducer's task is %s (%s) after %d model call(s); want it open and untouched", got.Status, got.Outcome, len(calls))
	}
}
