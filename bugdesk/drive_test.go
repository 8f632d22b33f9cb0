package bugdesk

import (
	"context"
	"encoding/json"
	"os/exec"
	"sync"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/workflow"
)

// callProvider answers every call with the tool call next gives.
type callProvider struct {
	next func() agent.ToolCall
}

func (p callProvider) Name() string     { return "scripted" }
func (p callProvider) Evidence() string { return signoff.EvidenceLive }
func (p callProvider) Unmetered() bool  { return true }
func (p callProvider) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	return agent.Response{Message: agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{p.next()}}}, nil
}

// TestDriveInAnotherProcessLeavesADoneTaskAlone: two processes drive the
// same fixer task (Drive's lock holds within one process only). One
// proposes a fix, which is accepted and closes the task; the other, still
// running, gives up. Its give-up cannot close the task any more, and the
// case, doing well, is not handed to a person for it.
func TestDriveInAnotherProcessLeavesADoneTaskAlone(t *testing.T) {
	sc := newFixingCase(t, 300)
	ctx := context.Background()
	genuine, err := exec.Command("git", "-C", sc.repo, "show", sc.sample.Branches[shoplite.BranchGenuine]+":cart/cart.go").Output()
	if err != nil {
		t.Fatal(err)
	}
	started, winnerDone := make(chan struct{}), make(chan struct{})
	var once sync.Once
	desk := func(next func() agent.ToolCall) *Desk {
		st := sc.open(t) // a process of its own
		d := &Desk{Store: st, CacheDir: sc.cache, Key: sc.key}
		reg := agent.NewRegistry(agent.BaseTools()...)
		d.Register(reg, agent.NewBuiltin())
		d.Tools = reg
		d.Runtime = &agent.Runtime{Store: st, Tools: reg, Providers: func(agent.RoleConfig) (agent.Provider, error) { return callProvider{next: next}, nil }}
		return d
	}
	loser := desk(func() agent.ToolCall {
		once.Do(func() { close(started) })
		<-winnerDone
		return agent.ToolCall{ID: "g1", Name: agent.GiveUpTool, Arguments: `{"reason":"the server says the case moved on"}`}
	})
	fix, _ := json.Marshal(map[string]any{"files": []FileArg{{Path: "cart/cart.go", Content: string(genuine)}}, "summary": "apply a percentage once"})
	winner := desk(func() agent.ToolCall { return agent.ToolCall{ID: "f1", Name: "propose_fix", Arguments: string(fix)} })
	if _, err := agent.SaveConfig(ctx, winner.Store, signoff.CLIActor(sc.ws), []byte(Roles(agent.ProviderAuthored)), winner.Tools); err != nil {
		t.Fatal(err)
	}
	if _, err := winner.Store.CreateActor(ctx, signoff.CLIActor(sc.ws), "fixer", signoff.RoleFixer); err != nil {
		t.Fatal(err)
	}
	if err := winner.StartFix(ctx, sc.ws, sc.caseID); err != nil {
		t.Fatal(err)
	}
	lost := make(chan error, 1)
	go func() { lost <- loser.Drive(ctx, sc.ws, sc.caseID, RoleFixer) }()
	<-started
	if err := winner.Drive(ctx, sc.ws, sc.caseID, RoleFixer); err != nil {
		t.Fatalf("the winner's drive: %v", err)
	}
	close(winnerDone)
	if err := <-lost; err != nil {
		t.Fatalf("the loser's drive: %v", err)
	}
	c, l, err := winner.loop(ctx, sys(sc.ws), sc.caseID)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != workflow.BugVerifying || len(l.State.Candidates) != 1 {
		t.Fatalf("case %s with %d candidate(s), want verifying the one accepted fix", c.State, len(l.State.Candidates))
	}
	ts, err := winner.Store.ListTasks(ctx, sys(sc.ws), signoff.TaskFilter{CaseID: sc.caseID, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range ts {
		if tk.Kind == RoleFixer && tk.Outcome != signoff.OutcomeDone {
			t.Errorf("fixer task %s: %s %s (%s)", tk.ID, tk.Status, tk.Outcome, tk.Reason)
		}
	}
}
