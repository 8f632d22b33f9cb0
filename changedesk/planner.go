package changedesk

import (
	"context"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
)

// Health check defaults of builtin plans: probe the live service for 6
// seconds, every 2 (4 probes).
const (
	DefaultHealthWindow   = 6
	DefaultHealthInterval = 2
)

// PlanBuiltin drafts the case's plan with the builtin planner: the
// request's reason read by ParseIntent against the project's flags, and
// the project's first smoke check against its live URL as the health
// check. It fails (EINVALID) for a request the templates do not cover;
// such a request needs a person, a model planner or an external agent
// (change.propose_plan over MCP).
func (d *Desk) PlanBuiltin(ctx context.Context, by signoff.Actor, caseID string) (signoff.Case, signoff.ChangeLoop, error) {
	if !canPlan(by) {
		return signoff.Case{}, signoff.ChangeLoop{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not draft plans", by.Role)
	}
	c, l, err := d.load(ctx, by, caseID)
	if err != nil {
		return c, l, err
	}
	flags, err := d.Store.ListFlags(ctx, sys(c.WorkspaceID), c.ProjectID, "")
	if err != nil {
		return c, l, err
	}
	in, err := ParseIntent(l.State.Reason, flags)
	if err != nil {
		return c, l, err
	}
	hc, err := d.DefaultHealth(ctx, c.WorkspaceID, c.ProjectID)
	if err != nil {
		return c, l, err
	}
	return d.Propose(ctx, by, caseID, Proposal{Target: in.Target, Params: in.Params, HealthCheck: hc, Via: "builtin"})
}

// DefaultHealth is the health check of a plan that does not bring its
// own: the project's first smoke check against its live URL.
func (d *Desk) DefaultHealth(ctx context.Context, ws, projectID string) (change.HealthCheck, error) {
	s, err := d.Store.GetRepoSettings(ctx, sys(ws), projectID)
	if signoff.ErrorCode(err) == signoff.ENOTFOUND {
		return change.HealthCheck{}, signoff.Errorf(signoff.EINVALID, "project %s has no live URL and smoke checks (signoff repo bind): give the plan a health check", projectID)
	} else if err != nil {
		return change.HealthCheck{}, err
	}
	if s.LiveURL == "" || len(s.Smoke) == 0 {
		return change.HealthCheck{}, signoff.Errorf(signoff.EINVALID, "project %s has no live URL and smoke checks (signoff repo bind): give the plan a health check", projectID)
	}
	sm := s.Smoke[0]
	method := sm.Method
	if method == "" {
		method = "GET"
	}
	status := sm.ExpectStatus
	if status == 0 {
		status = 200
	}
	return change.HealthCheck{Kind: change.HealthHTTP, Method: method, URL: strings.TrimRight(s.LiveURL, "/") + sm.Path, Body: sm.Body,
		ExpectStatus: status, ExpectBody: sm.ExpectBody, WindowSeconds: DefaultHealthWindow, IntervalSeconds: DefaultHealthInterval}, nil
}
