package agent_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
)

// BenchmarkToolDispatch is the pure per-call cost of the guards: coercing
// and validating a model's arguments against the schema, then calling the
// handler.
func BenchmarkToolDispatch(b *testing.B) {
	tool := recordScoreTool()
	raw := `{"severity":"high","confidence":"0.8","steps":"1. open cart 2. pay","crash":"yes"}`
	env := &agent.Env{}
	ctx := context.Background()
	for b.Loop() {
		args, _, err := tool.Prepare(raw)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tool.Call(ctx, env, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRuntimeTurn is the runtime's overhead per tool call with the
// model taken out: a builtin policy answers at once, so what is measured is
// the loop, the guards, the tool, and the transcript and ledger writes on
// SQLite. Each task makes eight get_task calls and one record_note.
func BenchmarkRuntimeTurn(b *testing.B) {
	f := newFixture(b)
	const reads = 8
	bi := agent.NewBuiltin()
	bi.Register("reproducer", func(ctx context.Context, req agent.Request) (agent.Response, error) {
		turn := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				turn++
			}
		}
		call := agent.ToolCall{ID: fmt.Sprint("c", turn), Name: "get_task", Arguments: "{}"}
		if turn == reads {
			call = agent.ToolCall{ID: "last", Name: "record_note", Arguments: `{"summary":"done"}`}
		}
		return agent.Response{Message: agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{call}}}, nil
	})
	reg := agent.NewRegistry(agent.BaseTools()...)
	cfg, err := agent.ParseConfig([]byte("roles:\n  reproducer:\n    provider: builtin\n    max_turns: 12\n    handoffs: []\n"), reg)
	if err != nil {
		b.Fatal(err)
	}
	rt := &agent.Runtime{Store: f.st, Tools: reg, Providers: agent.Factory{Builtin: bi}.Make}
	ctx := context.Background()
	calls := 0
	for b.Loop() {
		b.StopTimer()
		task := f.task(b, "reproducer", signoff.RoleReproducer, `{"note":"x"}`)
		b.StartTimer()
		res, err := rt.Run(ctx, f.repro, task.ID, cfg)
		if err != nil || res.Outcome != signoff.OutcomeDone {
			b.Fatalf("run: %+v %v", res, err)
		}
		calls += res.Turns
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(calls)/1e3, "µs/toolcall")
}
