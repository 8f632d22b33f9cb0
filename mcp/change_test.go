package mcp_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/mcp"
	"github.com/signoff-dev/signoff/workflow"
)

// changeFixture is a workspace with the flag checkout_v2 in prod and in
// staging, a policy that allows prod flags approved by an operator, a
// change request opened by the owner, a planner and a fixer agent, and
// a change desk.
type changeFixture struct {
	*fixture
	desk         *changedesk.Desk
	planner      signoff.Actor
	plannerToken string
	project      string
	request      signoff.Case
}

func newChangeFixture(t *testing.T) *changeFixture {
	t.Helper()
	ctx := context.Background()
	f := &changeFixture{fixture: newFixture(t)}
	f.project = f.bug.ProjectID
	f.planner = f.actor(t, "plan-bot", signoff.RolePlanner)
	f.plannerToken = f.token(t, f.planner)
	alice := f.actor(t, "alice", signoff.RoleOperator)
	for _, env := range []string{"prod", "staging"} {
		if _, err := f.st.CreateFlag(ctx, f.owner, f.project, env, "checkout_v2", signoff.FlagBoolean, json.RawMessage("true")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.st.SetChangePolicy(ctx, f.owner, `allowed_targets: ["flag:prod/*"]
environments: [prod]
approvals: {required: 1, group: [`+alice.ID+`]}
windows:
  - days: [mon, tue, wed, thu, fri, sat, sun]
    from: "00:00"
    to: "24:00"
`, 0, change.PolicyDigest); err != nil {
		t.Fatal(err)
	}
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	f.desk = &changedesk.Desk{Store: f.st, Key: key,
		Actuators: map[string]changedesk.Actuator{change.KindFlag: changedesk.FlagActuator{Flags: f.st}},
		Health:    changedesk.HTTPProber{},
		Sleep:     func(context.Context, time.Duration) error { return nil }}
	if f.request, _, err = f.desk.Request(ctx, f.owner, changedesk.RequestInput{ProjectID: f.project,
		Reason: "checkout answers 500 since the v2 payment flow went live; switch the new flow off in production"}); err != nil {
		t.Fatal(err)
	}
	return f
}

// planTask opens a planner task on the fixture's request for the planner:
// the receipt change.propose_plan quotes.
func (f *changeFixture) planTask(t testing.TB, caseID string) signoff.Task {
	t.Helper()
	tk, err := f.st.CreateTask(context.Background(), f.cli, signoff.TaskInput{CaseID: caseID, Kind: string(signoff.RolePlanner), Role: signoff.RolePlanner,
		AssigneeID: f.planner.ID, Input: json.RawMessage(`{"case_id":"` + caseID + `","nonce":"` + signoff.NewID(signoff.PrefixTask) + `"}`)})
	if err != nil {
		t.Fatalf("CreateTask(planner): %v", err)
	}
	return tk
}

// withReceipt is args with the task's receipt.
func withReceipt(tk signoff.Task, args map[string]any) map[string]any {
	out := map[string]any{"task_id": tk.ID, "input_digest": tk.InputDigest}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// healthCheck is a health check of a local URL (never probed while
// planning).
var healthCheck = map[string]any{"kind": "http", "method": "GET", "url": "http://127.0.0.1:1/checkout", "expect_status": 200,
	"expect_body": "total", "window_seconds": 4, "interval_seconds": 2}

func TestPlannerChangeTools(t *testing.T) {
	t.Parallel()
	f := newChangeFixture(t)
	srv := serveHTTP(t, f.st, mcp.Options{ChangeDesk: f.desk})
	cs := mustConnectHTTP(t, srv, f.plannerToken, "planner-client")

	// The planner has the change tools; the schema asks for an object of
	// params, and no tool offers more than drafting.
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
		if tl.Name == mcp.ToolChangeProposePlan {
			raw, _ := json.Marshal(tl.InputSchema)
			var schema struct {
				Required   []string
				Properties map[string]struct {
					Type       any
					Properties map[string]struct{ Enum []string }
				}
			}
			if err := json.Unmarshal(raw, &schema); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(schema.Required, []string{"task_id", "input_digest", "case_id", "target", "params"}) || schema.Properties["params"].Type != "object" ||
				!slices.Equal(schema.Properties["health_check"].Properties["kind"].Enum, []string{"http", "command"}) {
				t.Errorf("propose_plan schema %s", raw)
			}
		}
	}
	if !slices.Contains(names, mcp.ToolChangeProposePlan) || !slices.Contains(names, mcp.ToolChangeReadRequest) {
		t.Fatalf("planner tools %v", names)
	}

	var req mcp.ChangeRequestView
	ok(t, cs, mcp.ToolChangeReadRequest, map[string]any{"case_id": f.request.ID}, &req)
	if req.CaseID != f.request.ID || req.ProjectID != f.project || req.State != workflow.ChangeRequested || !strings.Contains(req.Reason, "500") ||
		req.Plan != nil || req.Opener != f.owner.ID || !slices.Contains(req.Policy.AllowedTargets, "flag:prod/*") || len(req.Flags) != 2 {
		t.Fatalf("read_request %+v", req)
	}
	for _, fl := range req.Flags {
		if fl.Key != "checkout_v2" || fl.Value != true || fl.StateDigest == "" || fl.Target != "flag:"+fl.Environment+"/checkout_v2" {
			t.Fatalf("flag %+v", fl)
		}
	}

	// A plan the policy does not allow: the review fails, rule by rule,
	// and the agent reads why.
	var res mcp.ProposeResult
	tk := f.planTask(t, f.request.ID)
	out := ok(t, cs, mcp.ToolChangeProposePlan, withReceipt(tk, map[string]any{"case_id": f.request.ID, "target": "flag:staging/checkout_v2",
		"params": map[string]any{"value": false}, "health_check": healthCheck}), &res)
	if res.ReviewPassed || res.State != workflow.ChangeReviewFailed || res.PlanDigest == "" || len(res.Rules) == 0 {
		t.Fatalf("failing proposal %+v", res)
	}
	failed := map[string]bool{}
	for _, rr := range res.Rules {
		if !rr.OK {
			failed[rr.Rule] = true
		}
	}
	if !failed[change.RuleTargetAllowed] || !failed[change.RuleEnvironmentAllowed] || !strings.Contains(text(out), "FAILED") {
		t.Fatalf("failed rules %v, text %q", failed, text(out))
	}

	// A plan within the policy goes to people, on the same task (a
	// failed review left it open), and completes the task.
	out = ok(t, cs, mcp.ToolChangeProposePlan, withReceipt(tk, map[string]any{"case_id": f.request.ID, "target": "flag:prod/checkout_v2",
		"params": map[string]any{"value": false}, "health_check": healthCheck}), &res)
	if !res.ReviewPassed || res.State != workflow.ChangeAwaitingApproval || res.PlanID == "" || !strings.Contains(text(out), res.PlanDigest) {
		t.Fatalf("proposal %+v: %s", res, text(out))
	}
	if done, err := f.st.GetTask(context.Background(), f.owner, tk.ID); err != nil || done.Status != signoff.TaskClosed || done.Outcome != signoff.OutcomeDone ||
		done.Evidence != signoff.EvidenceLive || !strings.Contains(string(done.Output), res.PlanDigest) {
		t.Fatalf("planner task after the plan: %+v %v", done, err)
	}
	// A receipt is good once.
	refused(t, cs, mcp.ToolChangeProposePlan, withReceipt(tk, map[string]any{"case_id": f.request.ID, "target": "flag:prod/checkout_v2",
		"params": map[string]any{"value": false}, "health_check": healthCheck}), signoff.ECONFLICT)
	plans, err := f.st.ListPlans(context.Background(), f.owner, f.request.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := plans[len(plans)-1]
	if len(plans) != 2 || last.ID != res.PlanID || last.Digest != res.PlanDigest || last.Via != "mcp" || last.Proposer != f.planner.ID {
		t.Fatalf("plans %+v", plans)
	}
	// Drafting changed nothing.
	fl, err := f.st.GetFlag(context.Background(), f.owner, f.project, "prod", "checkout_v2")
	if err != nil || string(fl.Value) != "true" || fl.Version != 1 {
		t.Fatalf("flag %+v %v", fl, err)
	}
	ok(t, cs, mcp.ToolChangeReadRequest, map[string]any{"case_id": f.request.ID}, &req)
	if req.Plan == nil || req.Plan.Digest != res.PlanDigest || req.State != workflow.ChangeAwaitingApproval || req.Review == nil || !req.Review.OK {
		t.Fatalf("read_request after the plan %+v", req)
	}
	sd, err := signoff.FlagState(fl)
	if err != nil {
		t.Fatal(err)
	}
	if body, _ := req.Plan.Plan.(map[string]any); body["target"] != "flag:prod/checkout_v2" || body["before_state_digest"] != sd {
		t.Fatalf("current plan %v", req.Plan.Plan)
	}

	// Refusals come back as tool errors.
	refused(t, cs, mcp.ToolChangeReadRequest, map[string]any{"case_id": f.bug.ID}, signoff.EINVALID)
	refused(t, cs, mcp.ToolChangeReadRequest, map[string]any{"case_id": "case_1"}, signoff.EINVALID)
	tk = f.planTask(t, f.request.ID)
	refused(t, cs, mcp.ToolChangeProposePlan, withReceipt(tk, map[string]any{"case_id": f.request.ID, "target": "flag:prod/checkout_v2",
		"params": map[string]any{"value": "off"}, "health_check": healthCheck}), signoff.EINVALID)
	// A project without a live URL has no default health check.
	refused(t, cs, mcp.ToolChangeProposePlan, withReceipt(tk, map[string]any{"case_id": f.request.ID, "target": "flag:prod/checkout_v2",
		"params": map[string]any{"value": false}}), signoff.EINVALID)
}

// TestChangeToolsOnlyForPlanners: no other agent role is offered the
// change tools, and none can call them.
func TestChangeToolsOnlyForPlanners(t *testing.T) {
	t.Parallel()
	f := newChangeFixture(t)
	srv := serveHTTP(t, f.st, mcp.Options{ChangeDesk: f.desk})
	for _, role := range signoff.AgentRoles {
		names := mcp.ToolNames(role)
		has := slices.Contains(names, mcp.ToolChangeProposePlan) || slices.Contains(names, mcp.ToolChangeReadRequest)
		if has != (role == signoff.RolePlanner) {
			t.Errorf("ToolNames(%s) = %v", role, names)
		}
	}
	cs := mustConnectHTTP(t, srv, f.fixerToken, "fixer-client")
	if names := toolNames(t, cs); slices.Contains(names, mcp.ToolChangeProposePlan) || slices.Contains(names, mcp.ToolChangeReadRequest) {
		t.Fatalf("fixer tools %v", names)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ToolChangeProposePlan, Arguments: map[string]any{"case_id": f.request.ID,
		"target": "flag:prod/checkout_v2", "params": map[string]any{"value": false}, "health_check": healthCheck}})
	if err == nil && !res.IsError {
		t.Fatalf("fixer proposed a plan: %s", text(res))
	}
	if c, err := f.st.GetCase(context.Background(), f.owner, f.request.ID); err != nil || c.State != workflow.ChangeRequested {
		t.Fatalf("case %+v %v", c, err)
	}
}

// TestChangeToolsWithoutDesk: a server without the change desk offers the
// tools and answers unavailable.
func TestChangeToolsWithoutDesk(t *testing.T) {
	t.Parallel()
	f := newChangeFixture(t)
	srv := serveHTTP(t, f.st, mcp.Options{})
	cs := mustConnectHTTP(t, srv, f.plannerToken, "planner-client")
	refused(t, cs, mcp.ToolChangeReadRequest, map[string]any{"case_id": f.request.ID}, signoff.EUNAVAILABLE)
	refused(t, cs, mcp.ToolChangeProposePlan, withReceipt(f.planTask(t, f.request.ID), map[string]any{"case_id": f.request.ID, "target": "flag:prod/checkout_v2",
		"params": map[string]any{"value": false}, "health_check": healthCheck}), signoff.EUNAVAILABLE)
}
