package changedesk_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/openai"
	"github.com/signoff-dev/signoff/openai/openaitest"
	"github.com/signoff-dev/signoff/workflow"
)

// withPlanner gives the env's desk a runtime with the planner role on
// provider (builtin, or openai at baseURL) and a planner agent.
func (e *env) withPlanner(provider, baseURL string) signoff.Actor {
	e.t.Helper()
	reg := agent.NewRegistry(agent.BaseTools()...)
	b := agent.NewBuiltin()
	e.desk.Register(reg, b)
	fac := agent.Factory{Builtin: b, OpenAI: func(rc agent.RoleConfig) (agent.Provider, error) {
		return openai.New(openai.Config{BaseURL: rc.BaseURL, Model: rc.Model, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	}}
	e.desk.Runtime = &agent.Runtime{Store: e.store, Tools: reg, Providers: fac.Make}
	e.desk.Tools = reg
	planner, err := e.store.CreateActor(e.ctx, e.owner, "planner", signoff.RolePlanner)
	must(e.t, err)
	if provider == agent.ProviderOpenAI {
		y := strings.Replace(changedesk.Roles(provider), "provider: openai", "provider: openai\n    base_url: "+baseURL+"\n    model: test-model", 1)
		_, err := agent.SaveConfig(e.ctx, e.store, e.owner, []byte(y), reg)
		must(e.t, err)
	}
	return planner
}

func (e *env) openRequest(reason string) signoff.Case {
	e.t.Helper()
	c, _, err := e.desk.Request(e.ctx, e.owner, changedesk.RequestInput{ProjectID: e.project, Reason: reason})
	must(e.t, err)
	return c
}

// TestPlannerBuiltin: the planner role runs through the runtime on the
// builtin provider; its plan is recorded as the planner agent's.
func TestPlannerBuiltin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	planner := e.withPlanner(agent.ProviderBuiltin, "")
	// The builtin planner needs the project's default health check.
	_, err := e.store.SetRepoSettings(e.ctx, signoff.CLIActor(e.owner.WorkspaceID), e.project, signoff.RepoSettings{
		Path: t.TempDir(), LiveURL: e.app.URL, Smoke: []signoff.SmokeCheck{{Name: "checkout", Method: "GET", Path: "/checkout", ExpectBody: "total"}}})
	must(t, err)
	c := e.openRequest("Disable " + flagKey + " in prod: checkout answers 500")
	c, l, err := e.desk.Plan(e.ctx, e.owner, c.ID)
	must(t, err)
	if c.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("state %s", c.State)
	}
	plans, err := e.store.ListPlans(e.ctx, e.owner, c.ID)
	must(t, err)
	if len(plans) != 1 || plans[0].Proposer != planner.ID || plans[0].Via != "builtin" || plans[0].ID != l.State.PlanID {
		t.Fatalf("plans %+v", plans)
	}
	// A request outside the templates gets no plan, and says so.
	c2 := e.openRequest("please make checkout faster somehow, it is slow")
	if _, _, err := e.desk.Plan(e.ctx, e.owner, c2.ID); signoff.ErrorCode(err) != signoff.EINVALID || !strings.Contains(err.Error(), "proposed no plan") {
		t.Fatalf("free text on builtin: %v", err)
	}
	// Agents do not ask the planner; people do.
	if _, _, err := e.desk.Plan(e.ctx, planner, c2.ID); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("planner asks itself: %v", err)
	}
}

// TestPlannerModel: with the openai provider, a model (here a scripted
// OpenAI-compatible server) drafts a free-text request through the tools;
// its plan is reviewed like any other and recorded via "model".
func TestPlannerModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	srv := openaitest.NewServer(t)
	srv.Reply(
		openaitest.ToolCall(changedesk.ToolReadRequest, `{}`),
		openaitest.ToolCall(changedesk.ToolFlagHistory, `{"target":"flag:prod/`+flagKey+`"}`),
		openaitest.ToolCall(changedesk.ToolProposePlan, `{"target":"flag:prod/`+flagKey+`","params":{"value":false},"health_check":{"kind":"http","method":"GET","url":"`+e.app.URL+`/checkout","expect_status":200,"window_seconds":2,"interval_seconds":1}}`),
	)
	planner := e.withPlanner(agent.ProviderOpenAI, srv.URL())
	if e.desk.Read == nil {
		t.Fatal("the desk reads from the read-write store")
	}
	f := e.flag()
	_, _, err := e.store.SetFlag(e.ctx, signoff.SystemActor(e.owner.WorkspaceID), signoff.FlagWrite{ProjectID: e.project, Env: "prod", Key: flagKey,
		Value: json.RawMessage("false"), ExpectedVersion: f.Version, Reason: "test: seed history"})
	must(t, err)
	c := e.openRequest("customers cannot pay since this morning's launch; switch the new flow off")
	c, _, err = e.desk.Plan(e.ctx, e.owner, c.ID)
	must(t, err)
	if c.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("state %s", c.State)
	}
	plans, err := e.store.ListPlans(e.ctx, e.owner, c.ID)
	must(t, err)
	if len(plans) != 1 || plans[0].Proposer != planner.ID || plans[0].Via != "model" {
		t.Fatalf("plans %+v", plans)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls", len(reqs))
	}
	// The request's words reach the model only datamarked, inside the
	// quote the server's record names.
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if !strings.Contains(agent.ServerPart(last.Content), "CHANGE REQUEST") || !strings.Contains(agent.ServerPart(last.Content), "flag:prod/"+flagKey) ||
		!strings.Contains(agent.ServerPart(last.Content), `"reason": "U1"`) || !strings.Contains(last.Content, "switchˆtheˆnewˆflowˆoff") ||
		strings.Contains(last.Content, "switch the new flow off") {
		t.Fatalf("the model was not shown the request, or saw its words unmarked: %q", last.Content)
	}
	// The diagnostic read ran on the read-only pool and saw the ledger.
	last = reqs[2].Messages[len(reqs[2].Messages)-1]
	if !strings.Contains(last.Content, "FLAG HISTORY of flag:prod/"+flagKey) || !strings.Contains(last.Content, "test:ˆseedˆhistory") ||
		strings.Contains(last.Content, "test: seed history") {
		t.Fatalf("the model was not shown the flag's history, or saw its reasons unmarked: %q", last.Content)
	}
}
