package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
)

// Tool names of the change loop's planner (SPEC section 4). The planner
// drafts; the workspace policy reviews every plan, people sign its exact
// digest, and only the gate, run by a person, applies it. No tool here or
// anywhere in this package goes past the draft.
const (
	ToolChangeReadRequest = "change.read_request"
	ToolChangeProposePlan = "change.propose_plan"
)

// maxChangeFlags bounds the flags change.read_request lists.
const maxChangeFlags = 500

type changeCaseIn struct {
	CaseID string `json:"case_id" jsonschema:"the change case id (case_...)"`
}

// ChangeFlag is one flag of the change's project, read-only: a plan's
// target is flag:<environment>/<key>.
type ChangeFlag struct {
	Target      string `json:"target"`
	Environment string `json:"environment"`
	Key         string `json:"key"`
	Type        string `json:"type"`
	Value       any    `json:"value"`
	Version     int64  `json:"version"`
	StateDigest string `json:"state_digest"`
}

// ChangePlanView is a change case's current plan; Plan is its canonical
// body, decoded.
type ChangePlanView struct {
	ID       string `json:"id"`
	Digest   string `json:"digest"`
	Via      string `json:"via"`
	Proposer string `json:"proposer"`
	Plan     any    `json:"plan"`
}

// ChangePolicyView is what the planner needs of the workspace policy to
// choose a target the review allows.
type ChangePolicyView struct {
	Digest           string   `json:"digest"`
	AllowedTargets   []string `json:"allowed_targets"`
	ProtectedTargets []string `json:"protected_targets"`
	Environments     []string `json:"environments"`
	MinReasonLength  int      `json:"min_reason_length"`
}

// ChangeRequestView is a change request as change.read_request shows it.
type ChangeRequestView struct {
	CaseID    string `json:"case_id"`
	Title     string `json:"title"`
	State     string `json:"state"`
	ProjectID string `json:"project_id"`
	Reason    string `json:"reason"`
	Opener    string `json:"opener"`
	Incident  string `json:"incident,omitempty"`
	RevertOf  string `json:"revert_of,omitempty"`
	// Plan is the current plan, if one was drafted; Review the policy's
	// review of it, rule by rule.
	Plan   *ChangePlanView  `json:"plan,omitempty"`
	Review *change.Result   `json:"review,omitempty"`
	Policy ChangePolicyView `json:"policy"`
	Flags  []ChangeFlag     `json:"flags"`
}

// ProposeResult is what came of a proposed plan: the case's state after
// the policy's review, the plan's digest (what people sign) and every
// rule's result.
type ProposeResult struct {
	CaseID       string              `json:"case_id"`
	State        string              `json:"state"`
	PlanID       string              `json:"plan_id"`
	PlanDigest   string              `json:"plan_digest"`
	PolicyDigest string              `json:"policy_digest"`
	ReviewPassed bool                `json:"review_passed"`
	Rules        []change.RuleResult `json:"rules"`
}

func (r ProposeResult) modelText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Plan %s (digest %s) stored on case %s, now %s.\n", r.PlanID, r.PlanDigest, r.CaseID, r.State)
	if r.ReviewPassed {
		b.WriteString("The policy review passed. People now review the plan and sign its digest; nothing is changed until they have and a person runs it. Your part is done.")
		return b.String()
	}
	b.WriteString("The policy review FAILED; the plan will not go to people as it is. Failed rules:\n")
	for _, rr := range r.Rules {
		if !rr.OK {
			fmt.Fprintf(&b, "- %s: %s\n", rr.Rule, rr.Detail)
		}
	}
	b.WriteString("Propose a corrected plan with change.propose_plan (a new plan replaces this one), or leave the request to a person.")
	return b.String()
}

type proposePlanIn struct {
	// The receipt: the caller's open planner task on the case.
	TaskID      string              `json:"task_id" jsonschema:"your open planner task on this case, as task.get shows it"`
	InputDigest string              `json:"input_digest" jsonschema:"the task's input_digest, exactly as task.get shows it"`
	CaseID      string              `json:"case_id" jsonschema:"the change case id (case_...)"`
	Target      string              `json:"target" jsonschema:"what to change: flag:<environment>/<key> as change.read_request lists the flags"`
	Params      json.RawMessage     `json:"params"`
	HealthCheck *change.HealthCheck `json:"health_check,omitempty" jsonschema:"how to tell the change worked; omitted: the project's first smoke check against its live URL"`
	Rollback    json.RawMessage     `json:"rollback,omitempty"`
}

var changeReadRequestTool = def(ToolChangeReadRequest, "Read a change request",
	"Read a change request: why it was asked for, its project, its current plan and review if any, the targets the workspace policy allows, and the project's feature flags with their current values (read-only), so that you can choose the target of a plan. Draft the plan with change.propose_plan.",
	readOnly(), nil,
	func(b *binding, ctx context.Context, _ *sdk.CallToolRequest, in changeCaseIn) (ChangeRequestView, error) {
		return b.readChangeRequest(ctx, in.CaseID)
	})

var changeProposePlanTool = def(ToolChangeProposePlan, "Propose a change plan",
	"Propose the plan of a change request, on one of your open planner tasks (quote its task_id and input_digest): the target, the params the actuator applies (for a flag {\"value\": <new value>} of the flag's type) and a health check. Signoff reads the target's live state, fills in the before and after state digests and the rollback (a flag rolls back to the value read now), and reviews the plan under the workspace policy. The result shows every rule's outcome: a failing review is yours to fix with a new proposal. A plan that passes goes to people, who review and sign its exact digest, and completes your task; nothing is changed by this tool. A change a person has approved (or that runs or ran) is not re-planned: ask for attention instead.",
	writes(false),
	func(p map[string]*jsonschema.Schema) {
		p["task_id"].MinLength, p["input_digest"].MinLength = ptr(1), ptr(1)
		p["params"] = &jsonschema.Schema{Type: "object", Description: `what the change applies; for a flag exactly {"value": <new value>} of the flag's type`}
		p["rollback"] = &jsonschema.Schema{Types: []string{"object", "null"}, Description: "for runbooks only: the compensating params; flags roll back to the value read now"}
		if hc := p["health_check"]; hc != nil && hc.Properties != nil {
			if k := hc.Properties["kind"]; k != nil {
				k.Enum = enum(change.HealthHTTP, change.HealthCommand)
			}
		}
	},
	func(b *binding, ctx context.Context, req *sdk.CallToolRequest, in proposePlanIn) (ProposeResult, error) {
		return b.proposePlan(ctx, req, in)
	})

func (b *binding) changeDesk() (*changedesk.Desk, error) {
	if b.o.ChangeDesk == nil {
		return nil, signoff.Errorf(signoff.EUNAVAILABLE, "the change desk is not available on this server")
	}
	return b.o.ChangeDesk, nil
}

// changeCase returns a change case and its loop as the agent sees them.
func (b *binding) changeCase(ctx context.Context, caseID string) (signoff.Case, signoff.ChangeLoop, error) {
	if err := signoff.CheckID("case_id", signoff.PrefixCase, caseID); err != nil {
		return signoff.Case{}, signoff.ChangeLoop{}, err
	}
	c, err := b.st.GetCase(ctx, b.by, caseID)
	if err != nil {
		return c, signoff.ChangeLoop{}, err
	}
	if c.Kind != signoff.KindChange {
		return c, signoff.ChangeLoop{}, signoff.Errorf(signoff.EINVALID, "case %s is a %s, not a change request", c.ID, c.Kind)
	}
	l, err := b.st.GetChangeLoop(ctx, b.by, c.ID)
	return c, l, err
}

func (b *binding) readChangeRequest(ctx context.Context, caseID string) (ChangeRequestView, error) {
	d, err := b.changeDesk()
	if err != nil {
		return ChangeRequestView{}, err
	}
	c, l, err := b.changeCase(ctx, caseID)
	if err != nil {
		return ChangeRequestView{}, err
	}
	v := ChangeRequestView{CaseID: c.ID, Title: c.Title, State: c.State, ProjectID: c.ProjectID, Reason: l.State.Reason,
		Opener: l.State.Opener, Incident: l.State.Incident, RevertOf: l.State.RevertOf, Flags: []ChangeFlag{}}
	if l.State.PlanID != "" {
		p, err := d.Reader().GetPlan(ctx, b.by, l.State.PlanID)
		if err != nil {
			return ChangeRequestView{}, err
		}
		v.Plan = &ChangePlanView{ID: p.ID, Digest: p.Digest, Via: p.Via, Proposer: p.Proposer}
		if v.Plan.Plan, err = decodeAny(p.Body); err != nil {
			return ChangeRequestView{}, fmt.Errorf("plan %s: %w", p.ID, err)
		}
	}
	if v.Review, err = decodeReview(l.State.Review); err != nil {
		return ChangeRequestView{}, fmt.Errorf("review of case %s: %w", c.ID, err)
	}
	pol, _, err := d.Policy(ctx, c.WorkspaceID)
	if err != nil {
		return ChangeRequestView{}, err
	}
	v.Policy = ChangePolicyView{Digest: pol.Digest(), AllowedTargets: nonNil(pol.AllowedTargets), ProtectedTargets: nonNil(pol.ProtectedTargets),
		Environments: nonNil(pol.Environments), MinReasonLength: pol.MinReasonLength}
	// The planner's reads go to the read-only pool where there is one.
	flags, err := d.Reader().ListFlags(ctx, b.by, c.ProjectID, "")
	if err != nil {
		return ChangeRequestView{}, err
	}
	for i, f := range flags {
		if i == maxChangeFlags {
			break
		}
		sd, err := signoff.FlagState(f)
		if err != nil {
			return ChangeRequestView{}, err
		}
		t := change.Target{Kind: change.KindFlag, Env: f.Environment, Name: f.Key}
		val, err := decodeAny(f.Value)
		if err != nil {
			return ChangeRequestView{}, fmt.Errorf("flag %s: %w", f.Key, err)
		}
		v.Flags = append(v.Flags, ChangeFlag{Target: t.String(), Environment: f.Environment, Key: f.Key, Type: string(f.Type),
			Value: val, Version: f.Version, StateDigest: sd})
	}
	return v, nil
}

// decodeAny decodes JSON keeping numbers as written.
func decodeAny(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// decodeReview decodes a stored review; nil when there is none.
func decodeReview(raw json.RawMessage) (*change.Result, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var res change.Result
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// proposePlan drafts the plan as the calling agent, via "mcp", on the
// receipt it quotes: its own open planner task on this case, whose input
// still has the digest quoted. The desk checks the role, the case's state
// and the target, the store that no person decided the case's state; the
// policy reviews what it stores. A plan that passes review records the
// task's result and closes it, as the in-process planner's does.
func (b *binding) proposePlan(ctx context.Context, req *sdk.CallToolRequest, in proposePlanIn) (ProposeResult, error) {
	d, err := b.changeDesk()
	if err != nil {
		return ProposeResult{}, err
	}
	t, err := b.st.GetTask(ctx, b.by, in.TaskID)
	if err != nil {
		return ProposeResult{}, err
	}
	if err := checkDeskTask(b.by, t, signoff.RolePlanner, in.InputDigest); err != nil {
		return ProposeResult{}, err
	}
	if t.CaseID != in.CaseID {
		return ProposeResult{}, signoff.Errorf(signoff.EFORBIDDEN, "task %s is on case %s, not %s: a plan is proposed on the task's own case", t.ID, t.CaseID, in.CaseID)
	}
	c, _, err := b.changeCase(ctx, in.CaseID)
	if err != nil {
		return ProposeResult{}, err
	}
	p := changedesk.Proposal{Target: in.Target, Params: in.Params, Rollback: in.Rollback, Via: "mcp"}
	if in.HealthCheck != nil {
		p.HealthCheck = *in.HealthCheck
	} else if p.HealthCheck, err = d.DefaultHealth(ctx, c.WorkspaceID, c.ProjectID); err != nil {
		return ProposeResult{}, err
	}
	c, l, err := d.Propose(ctx, b.by, c.ID, p)
	if err != nil {
		return ProposeResult{}, err
	}
	r := ProposeResult{CaseID: c.ID, State: c.State, PlanID: l.State.PlanID, PlanDigest: l.State.PlanDigest, PolicyDigest: l.State.PolicyDigest, Rules: []change.RuleResult{}}
	res, err := decodeReview(l.State.Review)
	if err != nil {
		return ProposeResult{}, fmt.Errorf("review of case %s: %w", c.ID, err)
	}
	if res != nil {
		r.ReviewPassed = res.OK
		if res.Rules != nil {
			r.Rules = res.Rules
		}
	}
	if r.ReviewPassed {
		out, err := json.Marshal(map[string]any{"case_id": r.CaseID, "state": r.State, "plan_id": r.PlanID, "plan_digest": r.PlanDigest,
			"review_passed": true, reservedOutputKey: map[string]any{"transport": "mcp", "client": clientName(req)}})
		if err != nil {
			return ProposeResult{}, err
		}
		if _, err := b.st.SubmitTask(ctx, b.by, signoff.Submission{TaskID: t.ID, InputDigest: t.InputDigest, Output: out,
			Evidence: signoff.EvidenceLive, Final: true}); err != nil {
			return ProposeResult{}, err
		}
	}
	return r, nil
}
