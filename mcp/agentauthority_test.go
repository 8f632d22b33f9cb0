package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/mcp"
	"github.com/signoff-dev/signoff/storetest"
	"github.com/signoff-dev/signoff/workflow"
)

// toolClass classifies every MCP tool an agent role is offered. A tool
// added to any role fails TestMCPAgentAuthority until it is classified:
//
//   - case: changes a case; the walk below tries it in every state a
//     person's decision produced (each has a caseToolCall);
//   - voice: a message or an attention note, which moves nothing;
//   - receipt: records against a task's receipt, moves no case (the
//     store's receipt checks, TestHTTPToolsAndReceipts);
//   - read, presence: change nothing of a case.
var toolClass = map[string]string{
	mcp.ToolTasksList: "read", mcp.ToolTaskGet: "read", mcp.ToolDecision: "read", mcp.ToolReceipt: "read",
	mcp.ToolChangeReadRequest: "read", mcp.ToolReproListSource: "read", mcp.ToolReproReadSource: "read",
	mcp.ToolFixListSource: "read", mcp.ToolFixReadSource: "read",
	mcp.ToolTaskSubmit: "receipt", mcp.ToolTaskHandoff: "receipt", mcp.ToolTaskGiveUp: "receipt", mcp.ToolReviewNote: "receipt",
	mcp.ToolChangeProposePlan: "case", mcp.ToolReproPropose: "case", mcp.ToolFixPropose: "case",
	mcp.ToolPostMessage: "voice", mcp.ToolAttention: "voice",
	mcp.ToolHeartbeat: "presence",
}

// caseToolCall is how the walk calls a case tool: the kind of case it
// works on, the kind of task it quotes, and its arguments on that task.
type caseToolCall struct {
	kind     signoff.CaseKind
	taskKind signoff.Role
	args     func(tk signoff.Task) map[string]any
}

var caseToolCalls = map[string]caseToolCall{
	mcp.ToolChangeProposePlan: {signoff.KindChange, signoff.RolePlanner, func(tk signoff.Task) map[string]any {
		return withReceipt(tk, map[string]any{"case_id": tk.CaseID, "target": "flag:prod/checkout_v2",
			"params": map[string]any{"value": false}, "health_check": healthCheck})
	}},
	mcp.ToolReproPropose: {signoff.KindBug, signoff.RoleReproducer, func(tk signoff.Task) map[string]any {
		return withReceipt(tk, map[string]any{"test_files": []any{map[string]any{"path": "cart/coupon_test.go", "content": "package cart"}},
			"fail_to_pass": []string{"TestCouponOnce"}, "expected_failure": "applied twice"})
	}},
	mcp.ToolFixPropose: {signoff.KindBug, signoff.RoleFixer, func(tk signoff.Task) map[string]any {
		return withReceipt(tk, map[string]any{"patch": "--- a/cart/coupon.go\n+++ b/cart/coupon.go\n", "summary": "dedupe coupons before applying them"})
	}},
}

// loopWriter stands in for the bug desk's proposal tools. The real ones
// check a proposal in the sandbox and then write the loop as the calling
// agent (bugdesk/reproduce.go, fix.go); this one does only that write, so
// what refuses it is the store's guard on the agent's identity.
func loopWriter(name, command string) *agent.Tool {
	return agent.NewTool(name, "stub of the bug desk's "+name+": writes the loop as the agent",
		func(ctx context.Context, env *agent.Env, _ map[string]any) (agent.Result, error) {
			l, err := env.Store.GetLoop(ctx, env.Actor, env.Task.CaseID)
			if err != nil && signoff.ErrorCode(err) != signoff.ENOTFOUND {
				return agent.Result{}, err
			}
			if _, _, err := env.Store.AdvanceLoop(ctx, env.Actor, signoff.LoopUpdate{CaseID: env.Task.CaseID, Version: l.Version, State: l.State, Command: command}); err != nil {
				return agent.Result{}, err
			}
			return agent.Result{Text: "accepted", Output: map[string]any{"command": command}, Final: true}, nil
		})
}

// TestMCPAgentAuthority walks every agent role through every MCP tool
// that changes a case, in every state a person's decision produced, on an
// open task of its own there (and, for the plan, quoting a task on
// another case): every call is refused with a forbidden or conflict that
// says why, and the case and the ledger are as they were. The attention
// note still works there. Where no person decided, the same tools on the
// agent's open task do change the case.
func TestMCPAgentAuthority(t *testing.T) {
	t.Parallel()
	all := map[string]bool{}
	for _, r := range signoff.AgentRoles {
		for _, name := range mcp.ToolNames(r) {
			all[name] = true
			if _, ok := toolClass[name]; !ok {
				t.Errorf("tool %s (role %s) is not classified: does it change a case?", name, r)
			}
		}
	}
	for name, class := range toolClass {
		if !all[name] {
			t.Errorf("toolClass names %s, which no role is offered", name)
		}
		if _, ok := caseToolCalls[name]; ok != (class == "case") {
			t.Errorf("tool %s (%s): a case tool needs a call, and only a case tool has one", name, class)
		}
	}

	f := newChangeFixture(t)
	ctx := context.Background()
	reporter := f.actor(t, "rita", signoff.RoleReporter)
	agents := map[signoff.Role]signoff.Actor{signoff.RoleFixer: f.fixer, signoff.RoleReviewer: f.reviewer, signoff.RolePlanner: f.planner}
	for _, r := range signoff.AgentRoles {
		if _, ok := agents[r]; !ok {
			agents[r] = f.actor(t, string(r)+"-bot", r)
		}
	}
	reg := agent.NewRegistry(loopWriter("propose_reproduction", "propose_reproduction"), loopWriter("propose_fix", "submit_candidate"))
	srv := serveHTTP(t, f.st, mcp.Options{ChangeDesk: f.desk, Tools: reg})
	sessions := map[signoff.Role]*sdk.ClientSession{}
	for r, a := range agents {
		sessions[r] = mustConnectHTTP(t, srv, f.token(t, a), string(r)+"-client")
	}
	task := func(t *testing.T, a signoff.Actor, kind signoff.Role, caseID string) signoff.Task {
		t.Helper()
		tk, err := f.st.CreateTask(ctx, f.cli, signoff.TaskInput{CaseID: caseID, Kind: string(kind), Role: a.Role, AssigneeID: a.ID,
			Input: json.RawMessage(`{"case_id":"` + caseID + `","nonce":"` + signoff.NewID(signoff.PrefixTask) + `"}`)})
		if err != nil {
			t.Fatalf("CreateTask: %v", err)
		}
		return tk
	}
	newCase := func(t *testing.T, kind signoff.CaseKind) signoff.Case {
		t.Helper()
		if kind == signoff.KindChange {
			c, err := f.st.CreateCase(ctx, f.owner, signoff.CaseInput{ProjectID: f.project, Kind: kind, Title: "switch checkout_v2 off"})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := f.st.AdvanceChange(ctx, f.cli, signoff.ChangeUpdate{CaseID: c.ID,
				State: signoff.ChangeLoopState{Reason: "checkout answers 500 since the v2 payment flow went live; switch it off", Opener: f.owner.ID}}); err != nil {
				t.Fatal(err)
			}
			return c
		}
		c, err := f.st.CreateCase(ctx, f.owner, signoff.CaseInput{ProjectID: f.project, Kind: kind, Title: "coupon applied twice", ReporterID: reporter.ID})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	unchanged := func(t *testing.T, what string, c signoff.Case, head int64) {
		t.Helper()
		cur, err := f.st.GetCase(ctx, f.owner, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cur.State != c.State || cur.Version != c.Version {
			t.Fatalf("%s moved the case from %s v%d to %s v%d", what, c.State, c.Version, cur.State, cur.Version)
		}
		if h := f.head(t); h != head {
			t.Fatalf("%s: ledger head %d -> %d", what, head, h)
		}
	}

	tried := 0
	for _, name := range slices.Sorted(maps.Keys(caseToolCalls)) {
		tc := caseToolCalls[name]
		for _, state := range workflow.HumanDecidedStates(tc.kind) {
			c, err := storetest.BringTo(ctx, f.st, f.owner, reporter, newCase(t, tc.kind), state)
			if err != nil {
				t.Fatal(err)
			}
			elsewhere := newCase(t, tc.kind)
			for _, role := range signoff.AgentRoles {
				a, cs := agents[role], sessions[role]
				offered := slices.Contains(mcp.ToolNames(role), name)
				receipts := map[string]signoff.Task{"its task on the case": task(t, a, tc.taskKind, c.ID)}
				if tc.kind == signoff.KindChange {
					// The plan names its case: a receipt for another one
					// is no receipt for this one.
					receipts["its task on another case"] = task(t, a, tc.taskKind, elsewhere.ID)
				}
				for _, which := range slices.Sorted(maps.Keys(receipts)) {
					tk := receipts[which]
					args := tc.args(tk)
					args["case_id"] = c.ID
					if tc.kind != signoff.KindChange {
						delete(args, "case_id")
					}
					what := fmt.Sprintf("%s %s with %s on a %s in %s", role, name, which, tc.kind, state)
					head := f.head(t)
					res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
					switch {
					case !offered:
						if err == nil && !res.IsError {
							t.Fatalf("%s: a tool the role is not offered answered %s", what, text(res))
						}
					case err != nil:
						t.Fatalf("%s: %v", what, err)
					case !res.IsError:
						t.Fatalf("%s succeeded: %s", what, text(res))
					default:
						msg := text(res)
						if !strings.HasPrefix(msg, signoff.EFORBIDDEN+": ") && !strings.HasPrefix(msg, signoff.ECONFLICT+": ") {
							t.Fatalf("%s: %q, want forbidden or conflict", what, msg)
						}
						if strings.HasPrefix(msg, signoff.ECONFLICT+": ") && !strings.Contains(msg, "a person's decision") {
							t.Fatalf("%s: %q does not say why", what, msg)
						}
					}
					unchanged(t, what, c, head)
					tried++
				}
				// The attention note moves nothing and is heard.
				head := f.head(t)
				var at mcp.AttentionResult
				ok(t, cs, mcp.ToolAttention, map[string]any{"case_id": c.ID, "note": "this approval misses the EU region"}, &at)
				if at.Seq != head+1 || at.CaseID != c.ID {
					t.Fatalf("%s attention: %+v", role, at)
				}
				unchanged(t, "attention", c, head+1)
			}
		}
	}
	if tried < len(signoff.AgentRoles)*(2*len(workflow.HumanDecidedStates(signoff.KindChange))+2*len(workflow.HumanDecidedStates(signoff.KindBug))) {
		t.Fatalf("tried only %d refusals", tried)
	}

	// Where no person decided, the same tools on the agent's open task
	// change the case: the refusals above are the state's, not the tool's.
	for _, step := range []struct {
		tool      string
		from, to  string
		actorRole signoff.Role
	}{
		{mcp.ToolReproPropose, workflow.BugReproducing, workflow.BugAwaitingReporterRepro, signoff.RoleReproducer},
		{mcp.ToolFixPropose, workflow.BugFixing, workflow.BugVerifying, signoff.RoleFixer},
		{mcp.ToolChangeProposePlan, workflow.ChangeRequested, workflow.ChangeAwaitingApproval, signoff.RolePlanner},
	} {
		tc := caseToolCalls[step.tool]
		c, err := storetest.BringTo(ctx, f.st, f.owner, reporter, newCase(t, tc.kind), step.from)
		if err != nil {
			t.Fatal(err)
		}
		args := tc.args(task(t, agents[step.actorRole], tc.taskKind, c.ID))
		ok(t, sessions[step.actorRole], step.tool, args, nil)
		if cur, err := f.st.GetCase(ctx, f.owner, c.ID); err != nil || cur.State != step.to {
			t.Fatalf("%s from %s: case %s %v, want %s", step.tool, step.from, cur.State, err, step.to)
		}
	}
	t.Logf("%d refusals", tried)
}
