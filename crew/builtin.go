package crew

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/triage"
)

// RegisterBuiltin installs the crew's deterministic implementations. Each
// answers exactly as a model would: with tool calls, through the same
// schema guards, code guards and gate, leaving the same transcripts. It
// decides with the triage package's rules and retrieval over the project's
// own data, which it reads from st (as the server: it is code running
// here, not an untrusted model); what its searches returned it reads from
// the run the search tools recorded.
func RegisterBuiltin(b *agent.Builtin, st signoff.Store) {
	b.Register(RoleIntake, policy(st, intakeTurn))
	b.Register(RoleInvestigator, policy(st, investigatorTurn))
	b.Register(RoleTriage, policy(st, triageTurn))
	b.Register(RoleWriter, policy(st, writerTurn))
}

// convo is what a builtin policy reads from a request: the task input and
// the results of the tools it has called so far.
type convo struct {
	ctx   context.Context
	store signoff.Store
	task  agent.TaskContext
	Item  triage.Item
	// Results holds the latest result of each tool by name.
	Results map[string]string
	// Turn counts the policy's own earlier answers.
	Turn int
}

type turnFunc func(c convo) (agent.Message, error)

// sys is the server reading for the policy.
func (c convo) sys() signoff.Actor { return signoff.SystemActor(c.task.WorkspaceID) }

// state reads the run the tools keep, and the project's data.
func (c convo) state() (State, *project, error) {
	r, err := loadRun(c.ctx, c.store, c.sys(), c.task.CaseID)
	if err != nil {
		return State{}, nil, err
	}
	p, err := projectData(c.ctx, c.store, c.sys(), r.ProjectID)
	if err != nil {
		return State{}, nil, err
	}
	return r.st, &project{Project: p, caseID: r.CaseID, projectID: r.ProjectID}, nil
}

func policy(st signoff.Store, turn turnFunc) agent.Policy {
	return func(ctx context.Context, req agent.Request) (agent.Response, error) {
		var in struct {
			Subject subject `json:"subject"`
		}
		if err := json.Unmarshal(req.Task.Input, &in); err != nil {
			return agent.Response{}, fmt.Errorf("task input: %w", err)
		}
		c := convo{ctx: ctx, store: st, task: req.Task, Item: in.Subject.Item, Results: map[string]string{}}
		for _, m := range req.Messages {
			switch m.Role {
			case "assistant":
				c.Turn++
			case "tool":
				c.Results[m.Name] = m.Content
			}
		}
		// A refusal the rules cannot answer differently goes to a person.
		for name, res := range c.Results {
			if strings.HasPrefix(res, "ERROR: ") && !strings.HasPrefix(name, "search_") {
				return reply(call(agent.GiveUpTool, map[string]any{"reason": name + " was refused: " + strings.TrimPrefix(agent.ServerPart(res), "ERROR: ")})), nil
			}
		}
		// After a record tool, follow the explicit next step it gave.
		for _, res := range c.Results {
			if to := nextStep(res); to != "" {
				return reply(call(agent.HandoffTool, map[string]any{"to": to, "reason": "recorded; the next step is " + to})), nil
			}
		}
		msg, err := turn(c)
		if err != nil {
			return agent.Response{}, err
		}
		return agent.Response{Message: msg, FinishReason: "tool_calls"}, nil
	}
}

var nextRE = regexp.MustCompile(`NOW call handoff\(to='([a-z][a-z0-9_.-]*)'`)

// nextStep reads the next step a record tool gave, in the server's part of
// its answer only: quoted public text cannot name one.
func nextStep(result string) string {
	if m := nextRE.FindStringSubmatch(agent.ServerPart(result)); m != nil {
		return m[1]
	}
	return ""
}

func reply(calls ...agent.ToolCall) agent.Response {
	return agent.Response{Message: agent.Message{Role: "assistant", ToolCalls: calls}, FinishReason: "tool_calls"}
}

func call(name string, args any) agent.ToolCall {
	b, _ := json.Marshal(args)
	return agent.ToolCall{Name: name, Arguments: string(b)}
}

func msg(calls ...agent.ToolCall) agent.Message {
	return agent.Message{Role: "assistant", ToolCalls: calls}
}

func intakeTurn(c convo) (agent.Message, error) {
	in := triage.Classify(c.Item)
	return msg(call("record_intake", intakeArgs{Category: in.Category, Language: in.Language, Device: in.Device, OS: in.OS,
		AppVersion: in.AppVersion, Steps: in.Steps, Confidence: in.Confidence})), nil
}

func intakeOf(st State, item triage.Item) triage.Intake {
	if st.Intake != nil {
		return *st.Intake
	}
	return triage.Classify(item)
}

func investigatorTurn(c convo) (agent.Message, error) {
	_, hasTr := c.Results["search_tracker"]
	_, hasBa := c.Results["search_recent_reports"]
	_, hasCr := c.Results["query_crash_log"]
	if !hasTr || !hasBa || !hasCr {
		q := map[string]any{"query": c.Item.Text}
		return msg(call("query_crash_log", q), call("search_tracker", q), call("search_recent_reports", q)), nil
	}
	st, p, err := c.state()
	if err != nil {
		return agent.Message{}, err
	}
	inv := triage.Investigate(triage.InvestigateInput{Item: st.Item, Intake: intakeOf(st, c.Item),
		TrackerHits: st.TrackerHits, BatchHits: st.BatchHits, Crashes: st.Crashes, Tickets: p.ByID})
	return msg(call("record_investigation", investigationArgs{Verdict: inv.Verdict, DuplicateOf: inv.DuplicateOf,
		Confidence: inv.Confidence, Signature: inv.Signature, Rationale: inv.Rationale})), nil
}

func triageTurn(c convo) (agent.Message, error) {
	st, p, err := c.state()
	if err != nil {
		return agent.Message{}, err
	}
	inv := triage.Investigation{Verdict: triage.VerdictNew}
	if st.Investigation != nil {
		inv = *st.Investigation
	}
	a := triage.Assess(assessInput(p, st, intakeOf(st, c.Item), inv))
	return msg(call("record_triage", triageArgs{Severity: a.Severity, Component: a.Component, Rationale: a.Rationale})), nil
}

func writerTurn(c convo) (agent.Message, error) {
	st, _, err := c.state()
	if err != nil {
		return agent.Message{}, err
	}
	inv := triage.Investigation{}
	if st.Investigation != nil {
		inv = *st.Investigation
	}
	act := triage.Write(triage.WriteInput{Item: st.Item, Intake: intakeOf(st, c.Item), Investigation: inv, Assessment: st.Assessment, TicketID: inv.Resolved})
	switch act.Kind {
	case "create_ticket":
		return msg(call("create_ticket", ticketArgs{Title: act.Title, Body: act.Body})), nil
	case "comment":
		return msg(call("add_comment", commentArgs{TicketID: act.TicketID, Body: act.Body})), nil
	case "clarify":
		return msg(call("request_info", infoArgs{Message: act.Body, Language: act.Language})), nil
	}
	return msg(call(agent.GiveUpTool, map[string]any{"reason": "no writer action for verdict " + inv.Verdict})), nil
}
