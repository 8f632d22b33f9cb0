package crew

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/triage"
)

// EvalItem is one scored item of an eval run.
type EvalItem struct {
	triage.Result
	Expected triage.Expected `json:"expected"`
	OK       bool            `json:"ok"`
	Why      []string        `json:"why,omitempty"`
	CaseID   string          `json:"case_id"`
	// Gate says who answered the human gate when it paused: the eval's
	// named approver, never a person's review.
	Gate string `json:"gate,omitempty"`
	// Approvals counts the eval's approvals of this item's gate (at most
	// one); Finished says whether the run reached an outcome after them.
	Approvals int    `json:"approvals"`
	Finished  bool   `json:"finished"`
	Evidence  string `json:"evidence"`
	Millis    int64  `json:"ms"`
}

// DecisionCounts counts an eval's gate decisions by status at its end.
type DecisionCounts struct {
	Asked      int `json:"asked"`
	Approved   int `json:"approved"`
	Rejected   int `json:"rejected"`
	Superseded int `json:"superseded"`
	Expired    int `json:"expired"`
	Pending    int `json:"pending"`
}

// EvalReport is a whole eval run.
type EvalReport struct {
	Items    []EvalItem `json:"items"`
	Score    int        `json:"score"`
	Total    int        `json:"total"`
	Provider string     `json:"provider"`
	// Approver names the actor that answered the gates: the eval's own
	// operator, labelled as such.
	Approver string `json:"approver"`
	// Gated items paused at the gate; Finished items reached an outcome.
	Gated     int            `json:"gated"`
	Finished  int            `json:"finished"`
	Decisions DecisionCounts `json:"decisions"`
	Millis    int64          `json:"ms"`
}

// EvalApprover is the name of the operator actor an eval creates to
// answer the gate: it approves each paused ticket once, unchanged, and the
// report says so. Its approvals are the eval's, not a person's review.
const EvalApprover = "eval-approver"

// EvalSetup is what an eval runs in: a fresh workspace with a project that
// holds the dataset's tracker, crash log, releases and owners, a triager
// agent, and an operator whose answers the eval gives (approve, as asked
// unchanged) when the gate pauses.
type EvalSetup struct {
	Store     signoff.Store
	Runner    *Runner
	Workspace string
	Project   string
	Operator  signoff.Actor
}

// NewEvalSetup prepares a workspace in st for d, with the crew configured
// on roles (YAML; see Roles).
func NewEvalSetup(ctx context.Context, st signoff.Store, rt *agent.Runtime, d triage.Dataset, roles string) (*EvalSetup, error) {
	ws, owner, err := st.CreateWorkspace(ctx, "triage eval", "eval-owner")
	if err != nil {
		return nil, err
	}
	if _, err := st.CreateActor(ctx, owner, "triager", signoff.RoleTriager); err != nil {
		return nil, err
	}
	op, err := st.CreateActor(ctx, owner, EvalApprover, signoff.RoleOperator)
	if err != nil {
		return nil, err
	}
	p, err := st.CreateProject(ctx, owner, signoff.ProjectInput{Name: "eval", Description: "triage eval dataset"})
	if err != nil {
		return nil, err
	}
	if err := st.ImportDataset(ctx, owner, p.ID, d); err != nil {
		return nil, fmt.Errorf("import dataset: %w", err)
	}
	if _, err := agent.SaveConfig(ctx, st, owner, []byte(roles), rt.Tools); err != nil {
		return nil, err
	}
	return &EvalSetup{Store: st, Runner: &Runner{Store: st, Runtime: rt, Tools: rt.Tools}, Workspace: ws.ID, Project: p.ID, Operator: op}, nil
}

// Submit files one item as a public report (so it passes intake and the
// airlock exactly as a real report would) and starts its triage.
func (e *EvalSetup) Submit(ctx context.Context, it triage.Item) (string, error) {
	c, _, _, err := e.Store.SubmitReport(ctx, signoff.ReportInput{ProjectID: e.Project, Text: it.Text,
		Device: it.Metadata.Device, OS: it.Metadata.OS, AppVersion: it.Metadata.AppVersion})
	if err != nil {
		return "", fmt.Errorf("submit %s: %w", it.ID, err)
	}
	if _, err := e.Runner.Start(ctx, e.Workspace, c.ID, it); err != nil {
		return "", err
	}
	return c.ID, nil
}

// Run triages one submitted case to its end. With autoApprove, a pause at
// the gate is answered "approve", once and unchanged, by the eval's named
// approver (and the item says so), and the run resumes; a run that asks
// again after that stays parked and is reported unfinished. Without
// autoApprove the run stops at the gate.
func (e *EvalSetup) Run(ctx context.Context, caseID string, autoApprove bool) (signoff.TriageRun, string, error) {
	run, _, gate, err := e.run(ctx, caseID, autoApprove)
	return run, gate, err
}

func (e *EvalSetup) run(ctx context.Context, caseID string, autoApprove bool) (signoff.TriageRun, int, string, error) {
	run, err := e.Runner.Drive(ctx, e.Workspace, caseID)
	if err != nil || run.Status != signoff.TriageParked || !autoApprove {
		return run, 0, "", err
	}
	g, err := GateOf(ctx, e.Store, e.Operator, caseID)
	if signoff.ErrorCode(err) == signoff.ENOTFOUND {
		return run, 0, "", nil // parked behind another case, not at the gate
	} else if err != nil {
		return run, 0, "", err
	}
	d, err := e.Store.GetDecision(ctx, e.Operator, g.DecisionID)
	if err != nil || d.Status != signoff.DecisionPending {
		return run, 0, "", err
	}
	// The digest approved is the one the decision shows, as a person
	// answering it would see it.
	if _, err := e.Store.Decide(ctx, e.Operator, d.ID, d.SubjectDigest, true, "approved unchanged by "+EvalApprover+", the eval's own approver"); err != nil {
		return run, 0, "", err
	}
	gate := "approved once by " + EvalApprover + " (the eval's approver, not a person)"
	run, err = e.Runner.Resume(ctx, e.Workspace, caseID)
	return run, 1, gate, err
}

// ResultOf reads what actually happened to a case, for scoring.
func ResultOf(ctx context.Context, st signoff.Store, by signoff.Actor, itemID, caseID string) (triage.Result, error) {
	r, err := loadRun(ctx, st, by, caseID)
	if err != nil {
		return triage.Result{}, err
	}
	res := triage.Result{ItemID: itemID, Outcome: r.Outcome}
	if r.st.Intake != nil {
		res.Category = r.st.Intake.Category
	}
	if r.Status != signoff.TriageDone {
		res.Outcome = "unfinished (" + r.Status + ")"
	}
	if inv := r.st.Investigation; inv != nil && r.Outcome == triage.OutcomeDuplicate {
		res.DuplicateOf, res.Ticket = inv.DuplicateOf, r.Resolves
	}
	if r.Outcome == triage.OutcomeNewTicket && r.TicketID != "" {
		t, err := st.GetTicket(ctx, by, r.ProjectID, r.TicketID)
		if err != nil {
			return res, err
		}
		res.Component, res.Severity = t.Component, t.Severity
	}
	return res, nil
}

// Eval runs every item of d in arrival order and scores what happened.
func Eval(ctx context.Context, st signoff.Store, rt *agent.Runtime, d triage.Dataset, roles, provider string) (EvalReport, error) {
	start := time.Now()
	e, err := NewEvalSetup(ctx, st, rt, d, roles)
	if err != nil {
		return EvalReport{}, err
	}
	rep := EvalReport{Provider: provider, Total: len(d.Items)}
	itemTicket := map[string]string{}
	for _, it := range d.Items {
		t0 := time.Now()
		caseID, err := e.Submit(ctx, it)
		if err != nil {
			return rep, err
		}
		run, approvals, gate, err := e.run(ctx, caseID, true)
		if err != nil {
			return rep, fmt.Errorf("item %s: %w", it.ID, err)
		}
		if approvals > 0 {
			rep.Gated++
		}
		if run.TicketID != "" {
			itemTicket[it.ID] = run.TicketID
		}
		res, err := ResultOf(ctx, st, e.Operator, it.ID, caseID)
		if err != nil {
			return rep, err
		}
		// Duplicates of this batch's reports are scored by the ticket the
		// earlier item created.
		exp := d.Expected[it.ID]
		ok, why := triage.Score(exp, res, itemTicket)
		ev := evidenceOf(ctx, st, e.Operator, caseID)
		rep.Items = append(rep.Items, EvalItem{Result: res, Expected: exp, OK: ok, Why: why, CaseID: caseID, Gate: gate,
			Approvals: approvals, Evidence: ev, Millis: time.Since(t0).Milliseconds()})
		if ok {
			rep.Score++
		}
	}
	// An item is finished when its run is done at the end (a duplicate
	// parked behind an earlier gated item finishes when that one does).
	for i := range rep.Items {
		it := &rep.Items[i]
		run, err := st.GetTriage(ctx, e.Operator, it.CaseID)
		if err != nil {
			return rep, err
		}
		if it.Finished = run.Status == signoff.TriageDone; it.Finished {
			rep.Finished++
		}
		ds, err := st.ListDecisions(ctx, e.Operator, it.CaseID)
		if err != nil {
			return rep, err
		}
		for _, d := range ds {
			if d.Kind != GateKind {
				continue
			}
			rep.Decisions.Asked++
			switch d.Status {
			case signoff.DecisionApproved:
				rep.Decisions.Approved++
			case signoff.DecisionRejected:
				rep.Decisions.Rejected++
			case signoff.DecisionSuperseded:
				rep.Decisions.Superseded++
			case signoff.DecisionExpired:
				rep.Decisions.Expired++
			case signoff.DecisionPending:
				rep.Decisions.Pending++
			}
		}
	}
	rep.Approver = fmt.Sprintf("%s (operator %s created by the eval; it approves each paused ticket once, unchanged)", EvalApprover, e.Operator.ID)
	rep.Millis = time.Since(start).Milliseconds()
	return rep, nil
}

// evidenceOf is the evidence type of a case's recorded results: all of one
// type, or "mixed".
func evidenceOf(ctx context.Context, st signoff.Store, by signoff.Actor, caseID string) string {
	ts, err := st.ListTasks(ctx, by, signoff.TaskFilter{CaseID: caseID, Limit: 50})
	if err != nil {
		return "unknown"
	}
	seen := map[string]bool{}
	for _, t := range ts {
		if t.Evidence != "" {
			seen[t.Evidence] = true
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	switch len(out) {
	case 0:
		return "none"
	case 1:
		return out[0]
	}
	return "mixed"
}

// Table renders the per-item table and the final score line.
func (r EvalReport) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %-4s %-17s %-11s %-22s %-12s %-9s %-8s %s\n", "ITEM", "OK", "CATEGORY", "OUTCOME", "DUPLICATE OF", "COMPONENT", "SEVERITY", "EVIDENCE", "NOTES")
	for _, it := range r.Items {
		ok := "yes"
		if !it.OK {
			ok = "NO"
		}
		notes := strings.Join(it.Why, "; ")
		if it.Gate != "" {
			notes = strings.TrimPrefix(notes+"; gate "+it.Gate, "; ")
		}
		dup := it.DuplicateOf
		if it.Ticket != "" && it.Ticket != dup {
			dup += "→" + it.Ticket
		}
		fmt.Fprintf(&b, "%-8s %-4s %-17s %-11s %-22s %-12s %-9s %-8s %s\n", it.ItemID, ok, it.Category, it.Outcome, dash(dup), dash(it.Component), dash(it.Severity), it.Evidence, notes)
	}
	fmt.Fprintf(&b, "provider: %s; %d items in %d ms\n", r.Provider, r.Total, r.Millis)
	fmt.Fprintf(&b, "gate: %d items paused, each approved once by %s; %d/%d items finished; decisions: %d asked, %d approved, %d superseded, %d pending\n",
		r.Gated, EvalApprover, r.Finished, r.Total, r.Decisions.Asked, r.Decisions.Approved, r.Decisions.Superseded, r.Decisions.Pending)
	fmt.Fprintf(&b, "score: %d/%d\n", r.Score, r.Total)
	return b.String()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// MarshalJSON keeps the report's field names stable for --json.
func (r EvalReport) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }
