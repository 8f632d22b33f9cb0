package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/workflow"
)

// Changes from the browser: request a change (/changes/new), plan it
// (the builtin planner, or a person's proposal), execute an approved one.
// Each form posts with the session's CSRF token to a handler that calls
// the change desk exactly as the API does (changedesk.Request, Plan,
// Propose, Execute): the desk checks the role, the policy reviews the
// plan, and the gate re-checks everything before anything is applied.
// The page only chooses which forms to show (identity.Can). A refusal
// comes back on the page, in words, with what was typed kept.

// changeActions are the change forms of a case page.
type changeActions struct {
	CaseID string
	// PlanID and PlanDigest are the current plan the page shows: the
	// forms carry them, and a post made over another plan is refused.
	PlanID, PlanDigest string
	// CanPlan: the person may draft the plan now; CanExecute: it is
	// approved and the person may run the gate on it.
	CanPlan, CanExecute bool
	// Awaiting: the plan waits for signed approvals (given on the
	// approval page or with signoff approve, not here).
	Awaiting bool
	// Note says why nothing is offered, when the person's role would
	// allow it but the case or the server does not.
	Note string
	// PlannerFailed says why the builtin planner cannot draft a plan for
	// the request, while it has none.
	PlannerFailed string
	// DefaultHealth is the project's default health check in words, or
	// why there is none.
	DefaultHealth string
	// Form is the refused post shown again.
	Form changeForm
}

// changeForm is what a person posted with a change form.
type changeForm struct {
	Action, Message                                  string
	Target, Value, Content, Params, Health, Rollback string
	Delete                                           bool
}

// changeFormKey carries a refused change form to the page it re-renders.
type changeFormKey struct{}

// changeActions decides which change forms the case page offers.
func (s *server) changeActions(ctx context.Context, by signoff.Actor, c signoff.Case, l signoff.ChangeLoop, v *changeView) changeActions {
	a := changeActions{CaseID: c.ID, PlanID: l.State.PlanID, PlanDigest: l.State.PlanDigest}
	a.Form, _ = ctx.Value(changeFormKey{}).(changeForm)
	canPlan, canExec := identity.Can(by.Role, identity.OpChangePlan), identity.Can(by.Role, identity.OpChangeExecute)
	if !canPlan && !canExec {
		return a
	}
	if s.o.ChangeDesk == nil {
		a.Note = "The change desk is not running in this server: changes are planned and executed elsewhere."
		return a
	}
	if t, err := workflow.For(signoff.KindChange); err == nil && canPlan {
		a.CanPlan = slices.ContainsFunc(t.Allowed(c.State, by.Role, workflow.Facts{}), func(tr workflow.Transition) bool { return tr.Command == "plan" })
	}
	a.CanExecute = canExec && c.State == workflow.ChangeApproved && l.State.ApprovedDigest != ""
	a.Awaiting = c.State == workflow.ChangeAwaitingApproval
	if a.CanPlan && l.State.PlanID == "" {
		// What the builtin planner would make of the request, read
		// without drafting anything: it reads flags only.
		if flags, err := s.store.ListFlags(ctx, by, c.ProjectID, ""); err == nil {
			if _, err := changedesk.ParseIntent(l.State.Reason, flags); err != nil {
				a.PlannerFailed = signoff.ErrorMessage(err)
			}
		}
	}
	if a.CanPlan {
		if hc, err := s.o.ChangeDesk.DefaultHealth(ctx, c.WorkspaceID, c.ProjectID); err == nil {
			a.DefaultHealth = healthWords(hc)
		} else {
			a.DefaultHealth = signoff.ErrorMessage(err)
		}
	}
	return a
}

// gateWords names the gate's checks for people.
var gateWords = map[string]string{
	change.CheckIDFormat:      "an id is malformed",
	change.CheckSignature:     "an approval's signature does not verify under a registered key",
	change.CheckApprover:      "an approver is not allowed to approve this plan",
	change.CheckQuorum:        "the plan does not have the approvals the policy asks for",
	change.CheckExpired:       "an approval or the plan has expired",
	change.CheckConsumed:      "an approval was already used",
	change.CheckPlanDigest:    "the plan is not the one that was approved",
	change.CheckPolicyDigest:  "the policy changed since the approval",
	change.CheckBeforeState:   "the target changed since the plan was made",
	change.CheckTargetAllowed: "the policy does not allow the target now",
	change.CheckLock:          "another execution holds the target",
}

// refusalWords words a desk or gate refusal for the page.
func refusalWords(err error) error {
	var ge *change.GateError
	if errors.As(err, &ge) {
		w, ok := gateWords[ge.Check]
		if !ok {
			w = ge.Check
		}
		return &signoff.Error{Code: ge.Code(), Message: fmt.Sprintf("The gate refused to run it: %s (%s: %s). Nothing was applied; the refusal is on the case's ledger.", w, ge.Check, ge.Detail)}
	}
	return err
}

// stalePlan refuses a form posted over another plan than the case has.
func (s *server) stalePlan(ctx context.Context, by signoff.Actor, caseID, planID string) error {
	l, err := s.store.GetChangeLoop(ctx, by, caseID)
	if err != nil {
		return notFoundCase(err)
	}
	if l.State.PlanID != planID {
		return signoff.Errorf(signoff.ECONFLICT, "The plan changed since your page showed it: read the new one, then act on it.")
	}
	return nil
}

// formRefusal reports whether err is one the page shows beside its
// form: what the person asked cannot be done as asked. A role the desk
// refuses, a missing case or an internal error is the error page.
func formRefusal(err error) bool {
	var ge *change.GateError
	if errors.As(err, &ge) {
		return true
	}
	switch signoff.ErrorCode(err) {
	case signoff.EINVALID, signoff.ECONFLICT, signoff.EUNAVAILABLE, signoff.ETOOLARGE:
		return true
	}
	return false
}

// planChange drafts a change case's plan: with the builtin planner
// (changedesk.Desk.Plan, as `signoff change plan --builtin`) or from a
// person's proposal (changedesk.Desk.Propose, as the API's plan route,
// with the project's default health check when none is given).
func (s *server) planChange(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx, by, caseID := r.Context(), sess.Actor, r.PathValue("id")
	if !signoff.ValidID(signoff.PrefixCase, caseID) {
		return signoff.Errorf(signoff.ENOTFOUND, "There is no such case in your workspace.")
	}
	d := s.o.ChangeDesk
	if d == nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "The change desk is not running in this server, so no plan can be drafted here.")
	}
	f := changeForm{Action: r.PostFormValue("mode"), Target: strings.TrimSpace(r.PostFormValue("target")), Value: r.PostFormValue("value"),
		Content: r.PostFormValue("content"), Params: r.PostFormValue("params"), Health: r.PostFormValue("health"),
		Rollback: r.PostFormValue("rollback"), Delete: r.PostFormValue("delete") == "yes"}
	again := func(err error) error {
		err = refusalWords(err)
		if !formRefusal(err) {
			return err
		}
		f.Message = signoff.ErrorMessage(err)
		return s.caseAgain(w, r, sess, err, changeFormKey{}, f)
	}
	if err := s.stalePlan(ctx, by, caseID, r.PostFormValue("plan_id")); err != nil {
		return again(err)
	}
	var err error
	switch f.Action {
	case "builtin":
		_, _, err = d.Plan(ctx, by, caseID)
	case "hand":
		var p changedesk.Proposal
		if p, err = s.proposal(ctx, by, caseID, f); err == nil {
			_, _, err = d.Propose(ctx, by, caseID, p)
		}
	default:
		err = signoff.Errorf(signoff.EINVALID, "Choose the builtin planner or your own plan.")
	}
	if err != nil {
		if signoff.ErrorCode(err) == signoff.ENOTFOUND {
			return notFoundCase(err)
		}
		return again(err)
	}
	http.Redirect(w, r, "/cases/"+caseID+"#change", http.StatusSeeOther)
	return nil
}

// proposal builds a person's plan from the form: a flag's new value, a
// file's new content (or its deletion), or a runbook's parameters; the
// health check as JSON, or the project's default one.
func (s *server) proposal(ctx context.Context, by signoff.Actor, caseID string, f changeForm) (changedesk.Proposal, error) {
	p := changedesk.Proposal{Target: f.Target, Via: "human"}
	t, err := change.ParseTarget(f.Target)
	if err != nil {
		return p, signoff.Errorf(signoff.EINVALID, "Target: %s (for example flag:prod/checkout_v2, file:VERSION or runbook:restart-cache).", signoff.ErrorMessage(err))
	}
	switch t.Kind {
	case change.KindFlag:
		v := strings.TrimSpace(f.Value)
		if !json.Valid([]byte(v)) {
			return p, signoff.Errorf(signoff.EINVALID, `New value: write it as JSON: true, false, a number or a "quoted string".`)
		}
		p.Params, err = json.Marshal(map[string]json.RawMessage{"value": json.RawMessage(v)})
	case change.KindFile:
		if f.Delete {
			p.Params = json.RawMessage(`{"delete":true}`)
		} else {
			// Browsers send a textarea's lines ending in CRLF: the file
			// gets the LF endings people typed.
			p.Params, err = json.Marshal(map[string]string{"content": strings.ReplaceAll(f.Content, "\r\n", "\n")})
		}
	default:
		if strings.TrimSpace(f.Params) == "" {
			f.Params = "{}"
		}
		if !json.Valid([]byte(f.Params)) {
			return p, signoff.Errorf(signoff.EINVALID, "Parameters: not valid JSON.")
		}
		p.Params = json.RawMessage(f.Params)
		if strings.TrimSpace(f.Rollback) != "" {
			if !json.Valid([]byte(f.Rollback)) {
				return p, signoff.Errorf(signoff.EINVALID, "Rollback: not valid JSON.")
			}
			p.Rollback = json.RawMessage(f.Rollback)
		}
	}
	if err != nil {
		return p, fmt.Errorf("params: %w", err)
	}
	if strings.TrimSpace(f.Health) != "" {
		dec := json.NewDecoder(strings.NewReader(f.Health))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p.HealthCheck); err != nil {
			return p, signoff.Errorf(signoff.EINVALID, "Health check: not a health check as JSON (%v).", err)
		}
		// One object: what follows it would be dropped unseen.
		if _, err := dec.Token(); err != io.EOF {
			return p, signoff.Errorf(signoff.EINVALID, "Health check: write one JSON object, nothing after it.")
		}
		return p, nil
	}
	c, err := s.store.GetCase(ctx, by, caseID)
	if err != nil {
		return p, err
	}
	p.HealthCheck, err = s.o.ChangeDesk.DefaultHealth(ctx, c.WorkspaceID, c.ProjectID)
	return p, err
}

// executeChange runs the gate on an approved change (changedesk.Desk.
// Execute, the one path to an actuator, as `signoff change execute`).
// The form names the plan the page showed: a case whose plan changed
// since is refused before the gate is asked.
func (s *server) executeChange(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx, by, caseID := r.Context(), sess.Actor, r.PathValue("id")
	if !signoff.ValidID(signoff.PrefixCase, caseID) {
		return signoff.Errorf(signoff.ENOTFOUND, "There is no such case in your workspace.")
	}
	d := s.o.ChangeDesk
	if d == nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "The change desk is not running in this server, so nothing can be executed here.")
	}
	again := func(err error) error {
		err = refusalWords(err)
		if !formRefusal(err) {
			return err
		}
		return s.caseAgain(w, r, sess, err, changeFormKey{}, changeForm{Action: "execute", Message: signoff.ErrorMessage(err)})
	}
	if err := s.stalePlan(ctx, by, caseID, r.PostFormValue("plan_id")); err != nil {
		return again(err)
	}
	// As the API does: the page answers after the plan's health window,
	// which may be longer than the server's write timeout (the desk goes
	// on with an execution the gate let through whether or not the
	// browser waits).
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Duration(change.MaxHealthWindowSeconds)*time.Second + 2*time.Minute))
	if _, err := d.Execute(ctx, by, caseID); err != nil {
		if signoff.ErrorCode(err) == signoff.ENOTFOUND {
			return notFoundCase(err)
		}
		return again(err)
	}
	http.Redirect(w, r, "/cases/"+caseID+"#execution-h", http.StatusSeeOther)
	return nil
}

// changeNew is the change request page.
type changeNew struct {
	Projects []signoff.Project
	// CanRequest: the role opens requests (the desk checks it again).
	CanRequest bool
	Note       string
	MinReason  int
	Form       changeNewForm
}

// changeNewForm is what the person typed, shown again with a refusal.
type changeNewForm struct {
	Project, Title, Reason, Incident, Message string
	Builtin                                   bool
}

func (s *server) changeNewPage(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	return s.renderChangeNew(w, r, sess, http.StatusOK, changeNewForm{Project: r.URL.Query().Get("project"), Incident: r.URL.Query().Get("incident"), Builtin: true})
}

func (s *server) renderChangeNew(w http.ResponseWriter, r *http.Request, sess signoff.WebSession, status int, f changeNewForm) error {
	ctx, by := r.Context(), sess.Actor
	v := changeNew{CanRequest: identity.Can(by.Role, identity.OpChangeRequest), Form: f, MinReason: change.DefaultMinReasonLength}
	if !v.CanRequest {
		v.Note = fmt.Sprintf("Your role (%s) does not open change requests: owners and operators do.", by.Role)
	}
	if s.o.ChangeDesk == nil {
		v.CanRequest, v.Note = false, "The change desk is not running in this server, so no change can be requested here."
	} else if pol, _, err := s.o.ChangeDesk.Policy(ctx, by.WorkspaceID); err == nil && pol.MinReasonLength > 0 {
		v.MinReason = pol.MinReasonLength
	}
	ps, err := s.store.ListProjects(ctx, by.WorkspaceID)
	if err != nil {
		return fmt.Errorf("projects: %w", err)
	}
	v.Projects = ps
	if v.Form.Project == "" && len(ps) == 1 {
		v.Form.Project = ps[0].ID
	}
	me := by
	s.render(w, r, status, "changenew", page{Title: "Request a change", Me: &me, CSRF: sess.CSRF, Body: v})
	return nil
}

// requestChange opens a change request through the change desk
// (changedesk.Desk.Request, as `signoff change request` and the API) and,
// when asked, has the builtin planner draft its plan at once. A request
// the desk refuses comes back on the form; a plan the planner cannot
// draft leaves the request open, and its page says why.
func (s *server) requestChange(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx, by := r.Context(), sess.Actor
	f := changeNewForm{Project: r.PostFormValue("project"), Title: strings.TrimSpace(r.PostFormValue("title")),
		Reason: r.PostFormValue("reason"), Incident: strings.TrimSpace(r.PostFormValue("incident")), Builtin: r.PostFormValue("builtin") == "yes"}
	d := s.o.ChangeDesk
	if d == nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "The change desk is not running in this server, so no change can be requested here.")
	}
	c, _, err := d.Request(ctx, by, changedesk.RequestInput{ProjectID: f.Project, Title: f.Title, Reason: strings.ReplaceAll(f.Reason, "\r\n", "\n"), Incident: f.Incident})
	if err != nil {
		switch signoff.ErrorCode(err) {
		case signoff.EINVALID, signoff.ECONFLICT, signoff.ENOTFOUND:
			f.Message = signoff.ErrorMessage(err)
			return s.renderChangeNew(w, r, sess, signoff.Mapping(err).HTTPStatus, f)
		}
		return fmt.Errorf("request a change: %w", err)
	}
	if f.Builtin {
		if _, _, err := d.Plan(ctx, by, c.ID); err != nil {
			if signoff.ErrorCode(err) == signoff.EINTERNAL {
				s.log.ErrorContext(ctx, "builtin planner", "case_id", c.ID, "err", err)
			}
			http.Redirect(w, r, "/cases/"+c.ID+"#change-actions", http.StatusSeeOther)
			return nil
		}
	}
	http.Redirect(w, r, "/cases/"+c.ID+"#change", http.StatusSeeOther)
	return nil
}
