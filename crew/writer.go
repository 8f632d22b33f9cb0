package crew

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/triage"
	"github.com/signoff-dev/signoff/workflow"
)

// ---- writer ----

type ticketArgs struct {
	Title string `json:"title" jsonschema:"a one-line summary an engineer can act on"`
	Body  string `json:"body" jsonschema:"what happens, on which devices and versions, the evidence"`
}

func createTicketTool() *agent.Tool {
	return agent.NewTool("create_ticket", "File the new ticket. High or critical severity, or a low-confidence investigation, waits for a person first.",
		func(ctx context.Context, env *agent.Env, in ticketArgs) (agent.Result, error) {
			return createTicket(ctx, env, in)
		})
}

func createTicket(ctx context.Context, env *agent.Env, in ticketArgs) (agent.Result, error) {
	if strings.TrimSpace(in.Title) == "" || len(in.Title) > 300 {
		return agent.Result{}, signoff.Errorf(signoff.EINVALID, "title must be 1 to 300 bytes")
	}
	r, err := loadRun(ctx, env.Store, env.Actor, env.Task.CaseID)
	if err != nil {
		return agent.Result{}, err
	}
	inv, a := r.st.Investigation, r.st.Assessment
	if inv == nil || inv.Verdict != triage.VerdictNew || a == nil {
		return agent.Result{}, signoff.Errorf(signoff.ECONFLICT, "a ticket is filed only for a new bug with a recorded severity and component; use add_comment for a duplicate or request_info")
	}
	proposal := map[string]any{"title": in.Title, "body": in.Body, "severity": a.Severity, "component": a.Component,
		"owner": a.Owner, "confidence": inv.Confidence, "rationale": a.Rationale, "evidence": a.Evidence, "regression_of": inv.RegressionOf}
	subject, err := json.Marshal(proposal)
	if err != nil {
		return agent.Result{}, err
	}
	digest, err := canonical.Digest(proposal)
	if err != nil {
		return agent.Result{}, err
	}
	severity, approvedBy := a.Severity, "auto"
	if triage.SeverityRank(a.Severity) >= triage.SeverityRank(GateSeverity) || inv.Confidence < MinConfidence {
		d, err := gateDecision(ctx, env, r, digest)
		if err != nil {
			return agent.Result{}, err
		}
		switch {
		case d == nil || d.Status == signoff.DecisionExpired || d.Status == signoff.DecisionSuperseded:
			nd, err := env.Store.RequestDecision(ctx, env.Actor, r.CaseID, GateKind, subject, 0)
			if err != nil {
				return agent.Result{}, err
			}
			if c, err := env.Store.GetCase(ctx, env.Actor, r.CaseID); err == nil && c.State != workflow.BugAwaitingTriageApproval {
				if err := transition(ctx, env, "request_triage_approval", "gate: "+gateReason(a.Severity, inv.Confidence)); err != nil {
					return agent.Result{}, err
				}
			}
			r.st.Gate = &Gate{DecisionID: nd.ID, Digest: nd.SubjectDigest, Proposal: subject, Status: nd.Status}
			r.Status = signoff.TriageParked
			if err := r.save(ctx, env.Store, env.Actor); err != nil {
				return agent.Result{}, err
			}
			return agent.Result{Text: fmt.Sprintf("PAUSED: %s; decision %s waits for a person. Nothing was filed.", gateReason(a.Severity, inv.Confidence), nd.ID), Park: true}, nil
		case d.Status == signoff.DecisionPending:
			return agent.Result{Text: "PAUSED: decision " + d.ID + " still waits for a person.", Park: true}, nil
		case d.Status == signoff.DecisionRejected:
			r.st.Gate.Status = d.Status
			r.Status = signoff.TriageActive
			if err := r.save(ctx, env.Store, env.Actor); err != nil {
				return agent.Result{}, err
			}
			return agent.Result{}, signoff.Errorf(signoff.ECONFLICT, "a person rejected this ticket (%s); nothing was filed. Call give_up so a person takes the case", d.Reason)
		}
		// Approved: the person's word, with any corrected severity.
		var amend struct {
			Severity string `json:"severity"`
		}
		if len(d.Amendment) > 0 && json.Unmarshal(d.Amendment, &amend) == nil && triage.SeverityRank(amend.Severity) >= 0 {
			severity = amend.Severity
		}
		approvedBy = "human:" + d.DecidedBy
		r.st.Gate.Status, r.st.Gate.ApprovedBy = d.Status, approvedBy
	}
	t, err := env.Store.CreateTicket(ctx, env.Actor, r.ProjectID, triage.Ticket{
		Title: in.Title, Status: "open", Severity: severity, Component: a.Component, Owner: a.Owner,
		AffectedVersions: versions(query(r.st, "").AppVersion), Created: time.Now().UTC().Format("2006-01-02"),
		Description: in.Body, ApprovedBy: approvedBy,
	})
	if err != nil {
		return agent.Result{}, err
	}
	a.Severity = severity
	r.st.Action = &triage.Action{Kind: "create_ticket", TicketID: t.ID, Title: in.Title, Body: in.Body}
	r.Status, r.Outcome, r.TicketID, r.Resolves = signoff.TriageDone, triage.OutcomeNewTicket, t.ID, t.ID
	if err := r.save(ctx, env.Store, env.Actor); err != nil {
		return agent.Result{}, err
	}
	if c, err := env.Store.GetCase(ctx, env.Actor, r.CaseID); err == nil && c.State == workflow.BugTriaging {
		if err := transition(ctx, env, "ticket", "filed "+t.ID); err != nil {
			return agent.Result{}, err
		}
	}
	return agent.Result{Text: fmt.Sprintf("Filed %s (%s, %s, approved by %s).", t.ID, severity, a.Component, approvedBy),
		Output: map[string]any{"ticket_id": t.ID, "severity": severity, "approved_by": approvedBy}, Final: true}, nil
}

func gateReason(severity string, confidence float64) string {
	if confidence < MinConfidence {
		return fmt.Sprintf("investigation confidence %.2f is below %.2f", confidence, MinConfidence)
	}
	return "severity " + severity + " needs a person's approval"
}

// gateDecision finds this case's gate decision over exactly digest: one
// made before a restart is applied, never asked again.
func gateDecision(ctx context.Context, env *agent.Env, r *run, digest string) (*signoff.Decision, error) {
	ds, err := env.Store.ListDecisions(ctx, env.Actor, r.CaseID)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		if d.Kind == GateKind && d.SubjectDigest == digest {
			if r.st.Gate == nil {
				r.st.Gate = &Gate{DecisionID: d.ID, Digest: d.SubjectDigest, Proposal: d.Subject}
			}
			return &d, nil
		}
	}
	return nil, nil
}

func versions(v string) []string {
	if v == "" {
		return []string{}
	}
	return []string{v}
}
