package crew_test

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/workflow"
)

// A triage model that records a severity below what the server's own
// numbers give (money charged twice, recorded "low") does not skip the
// gate: the gate reads the higher of the two, the ticket waits for a
// person and nothing is filed.
func TestGateHoldsWhenModelLowersSeverity(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := loadOrbit(t)
	_, key, _ := ed25519.GenerateKey(nil)
	st := openStore(t, filepath.Join(t.TempDir(), "floor.db"), key)
	defer st.Close()
	lowball := func(_ context.Context, req agent.Request) (agent.Response, error) {
		for _, m := range req.Messages {
			if m.Role == "tool" {
				return agent.Response{Message: agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: "h", Name: agent.HandoffTool,
					Arguments: `{"to":"writer","reason":"recorded"}`}}}}, nil
			}
		}
		return agent.Response{Message: agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: "r", Name: "record_triage",
			Arguments: `{"severity":"low","component":"billing","rationale":"cosmetic"}`}}}}, nil
	}
	rt := runtimeFor(st, map[string]agent.Policy{crew.RoleTriage: lowball})
	setup, err := crew.NewEvalSetup(ctx, st, rt, d, crew.Roles(agent.ProviderBuiltin))
	if err != nil {
		t.Fatal(err)
	}
	caseID, err := setup.Submit(ctx, gatedItem(t, d, "billing"))
	if err != nil {
		t.Fatal(err)
	}
	run, _, err := setup.Run(ctx, caseID, false)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(filedTickets(t, st, setup)); n != 0 || run.Status != signoff.TriageParked {
		t.Fatalf("run %s/%s with %d tickets filed: the recorded low severity skipped the gate", run.Status, run.Outcome, n)
	}
	c, _ := st.GetCase(ctx, setup.Operator, caseID)
	if c.State != workflow.BugAwaitingTriageApproval {
		t.Fatalf("case %s, want awaiting_triage_approval", c.State)
	}
}
