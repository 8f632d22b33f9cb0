package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
)

// ---- The change loop (SPEC section 4) ----
//
// Reads (the policy, a change case's loop, plans and receipts) come from
// the store and work without the desk. Everything that acts (requests,
// plans, the approval card and approvals of a change case, execution and
// rollback) goes through the change desk, and answers 503 without one:
// the desk holds the actuators, the health prober and the key that signs
// receipts. There is exactly one path to an actuator, Desk.Execute, whose
// gate refusals name the failed check in the problem's "check" member.

// WithChangeDesk serves the change loop's actions with d. Without it they
// answer 503, like the bug loop's without WithDesk.
func WithChangeDesk(d *changedesk.Desk) Option {
	return func(o *options) { o.change = d }
}

func (s *server) needChangeDesk() (*changedesk.Desk, error) {
	if s.opts.change == nil {
		return nil, signoff.Errorf(signoff.EUNAVAILABLE, "the change desk is not running in this server")
	}
	return s.opts.change, nil
}

// ---- The change policy ----

// policyView is the workspace's change policy: the stored record (YAML as
// written, version, who set it), the policy as the desk parsed it, and its
// digest, which every approval names. Set is false when the workspace has
// no policy yet: Policy is then the empty record, Parsed the empty policy,
// which allows nothing, and Digest that policy's digest.
type policyView struct {
	Set    bool                 `json:"set"`
	Policy signoff.ChangePolicy `json:"policy"`
	Parsed change.Policy        `json:"parsed"`
	Digest string               `json:"digest"`
}

func viewPolicy(rec signoff.ChangePolicy, set bool) (policyView, error) {
	var src []byte
	if set {
		src = []byte(rec.YAML)
	}
	p, err := change.Parse(src)
	if err != nil {
		// The store parsed it when it was set; failing now is a bug.
		return policyView{}, errors.New("the stored change policy no longer parses: " + err.Error())
	}
	return policyView{Set: set, Policy: rec, Parsed: p, Digest: p.Digest()}, nil
}

func (s *server) getChangePolicy(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	rec, err := s.store.GetChangePolicy(r.Context(), by)
	set := err == nil
	if signoff.ErrorCode(err) == signoff.ENOTFOUND {
		rec, err = signoff.ChangePolicy{WorkspaceID: by.WorkspaceID}, nil
	}
	if err != nil {
		return err
	}
	v, err := viewPolicy(rec, set)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

type policyInput struct {
	YAML string `json:"yaml"`
	// ExpectedVersion is the version replaced: 0 when none is set.
	ExpectedVersion int64 `json:"expected_version"`
}

func (s *server) putChangePolicy(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in policyInput
	if err := decodeJSONLimit(w, r, &in, 128<<10); err != nil {
		return err
	}
	set := func(ctx context.Context, by signoff.Actor, yaml string, version int64) (signoff.ChangePolicy, error) {
		return s.store.SetChangePolicy(ctx, by, yaml, version, change.PolicyDigest)
	}
	if s.opts.change != nil {
		// The desk also reviews the waiting changes again under it.
		set = s.opts.change.SetPolicy
	}
	rec, err := set(r.Context(), by, in.YAML, in.ExpectedVersion)
	if err != nil {
		return err
	}
	v, err := viewPolicy(rec, true)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

// ---- Requests and plans ----

type changeRequestInput struct {
	Title  string `json:"title"`
	Reason string `json:"reason"`
	// Incident is the case id of the incident that prompted the change.
	Incident string `json:"incident"`
	// Plan "builtin" drafts the plan at once with the builtin planner;
	// empty leaves the request for a person or a planner agent.
	Plan string `json:"plan"`
}

// plannerError is why the builtin planner could not draft a plan for a
// request that was opened all the same.
type plannerError struct {
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// changeView is a change case with its loop record after a step.
type changeView struct {
	Case         signoff.Case       `json:"case"`
	Loop         signoff.ChangeLoop `json:"loop"`
	PlannerError *plannerError      `json:"planner_error,omitempty"`
}

func (s *server) requestChange(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	d, err := s.needChangeDesk()
	if err != nil {
		return err
	}
	var in changeRequestInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Plan != "" && in.Plan != "builtin" {
		return signoff.Errorf(signoff.EINVALID, `plan must be "builtin" or empty`)
	}
	c, l, err := d.Request(r.Context(), by, changedesk.RequestInput{ProjectID: r.PathValue("id"), Title: in.Title, Reason: in.Reason, Incident: in.Incident})
	if err != nil {
		return err
	}
	out := changeView{Case: c, Loop: l}
	if in.Plan == "builtin" {
		// The request exists whatever the planner makes of it: a request
		// the templates do not cover is for a person or a planner agent.
		pc, pl, err := d.Plan(r.Context(), by, c.ID)
		if err != nil {
			if signoff.ErrorCode(err) == signoff.EINTERNAL {
				s.log.ErrorContext(r.Context(), "builtin planner", "case_id", c.ID, "err", err, "request_id", infoFrom(r.Context()).id)
			}
			out.PlannerError = &plannerError{Code: signoff.ErrorCode(err), Detail: signoff.ErrorMessage(err)}
			// Show the case as it is now: planning may have got as far
			// as storing a plan before it failed.
			if cur, gerr := s.store.GetCase(r.Context(), by, c.ID); gerr == nil {
				out.Case = cur
			}
			if cur, gerr := s.store.GetChangeLoop(r.Context(), by, c.ID); gerr == nil {
				out.Loop = cur
			}
		} else {
			out.Case, out.Loop = pc, pl
		}
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// planInput is either {"builtin": true} or a plan proposal. The server
// sets how it was drafted (via): "builtin" for the builtin planner,
// "human" for a person, "mcp" for an agent (an external planner; the API
// and the MCP tool alike). A proposal without a health check gets the
// project's default one, as builtin plans do.
type planInput struct {
	Builtin     bool                `json:"builtin"`
	Target      string              `json:"target"`
	Params      json.RawMessage     `json:"params"`
	HealthCheck *change.HealthCheck `json:"health_check"`
	Rollback    json.RawMessage     `json:"rollback"`
}

// planView is the case after a plan: its loop, the current plan and the
// policy's review of it with every rule's result.
type planView struct {
	Case   signoff.Case        `json:"case"`
	Loop   signoff.ChangeLoop  `json:"loop"`
	Plan   *signoff.ChangePlan `json:"plan,omitempty"`
	Review json.RawMessage     `json:"review,omitempty"`
}

// planVia is how a plan drafted by by is recorded.
func planVia(by signoff.Actor) string {
	if by.Role.IsAgent() {
		return "mcp"
	}
	return "human"
}

func (s *server) planChange(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	d, err := s.needChangeDesk()
	if err != nil {
		return err
	}
	var in planInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	id := r.PathValue("id")
	var c signoff.Case
	var l signoff.ChangeLoop
	if in.Builtin {
		if in.Target != "" || len(in.Params) > 0 || in.HealthCheck != nil || len(in.Rollback) > 0 {
			return signoff.Errorf(signoff.EINVALID, "a builtin plan takes no target, params, health_check or rollback")
		}
		c, l, err = d.Plan(r.Context(), by, id)
	} else {
		p := changedesk.Proposal{Target: in.Target, Params: in.Params, Rollback: in.Rollback, Via: planVia(by)}
		if in.HealthCheck != nil {
			p.HealthCheck = *in.HealthCheck
		} else {
			cur, gerr := s.store.GetCase(r.Context(), by, id)
			if gerr != nil {
				return gerr
			}
			if p.HealthCheck, err = d.DefaultHealth(r.Context(), cur.WorkspaceID, cur.ProjectID); err != nil {
				return err
			}
		}
		c, l, err = d.Propose(r.Context(), by, id, p)
	}
	if err != nil {
		return err
	}
	out := planView{Case: c, Loop: l, Review: l.State.Review}
	if l.State.PlanID != "" {
		if pl, err := s.store.GetPlan(r.Context(), by, l.State.PlanID); err == nil {
			out.Plan = &pl
		} else {
			return err
		}
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// ---- Reads ----

// receiptView is a receipt with its predicate decoded (the envelope is
// the signed form; its signature is checked with the server's key, e.g.
// by signoff verify).
type receiptView struct {
	signoff.Receipt
	Predicate *changedesk.ReceiptBody `json:"predicate,omitempty"`
}

func viewReceipts(rs []signoff.Receipt) []receiptView {
	out := make([]receiptView, 0, len(rs))
	for _, rc := range rs {
		v := receiptView{Receipt: rc}
		if b, err := changedesk.OpenReceipt(rc, nil); err == nil {
			v.Predicate = &b
		}
		out = append(out, v)
	}
	return out
}

// changeCase returns case id as by sees it, EINVALID unless it is a change.
func (s *server) changeCase(r *http.Request, by signoff.Actor) (signoff.Case, error) {
	c, err := s.store.GetCase(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return c, err
	}
	if c.Kind != signoff.KindChange {
		return c, signoff.Errorf(signoff.EINVALID, "case %s is a %s, not a change", c.ID, c.Kind)
	}
	return c, nil
}

func (s *server) getChange(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	c, err := s.changeCase(r, by)
	if err != nil {
		return err
	}
	l, err := s.store.GetChangeLoop(r.Context(), by, c.ID)
	if err != nil {
		return err
	}
	plans, err := s.store.ListPlans(r.Context(), by, c.ID)
	if err != nil {
		return err
	}
	rs, err := s.store.ListReceipts(r.Context(), by, c.ID)
	if err != nil {
		return err
	}
	if plans == nil {
		plans = []signoff.ChangePlan{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"case": c, "loop": l, "plans": plans, "receipts": viewReceipts(rs)})
	return nil
}

func (s *server) listReceipts(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	c, err := s.changeCase(r, by)
	if err != nil {
		return err
	}
	rs, err := s.store.ListReceipts(r.Context(), by, c.ID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"receipts": viewReceipts(rs)})
	return nil
}

// ---- The card and approvals of a change case ----

// changeCard is the change desk's approval card; Kind tells a client that
// serves both loops which card it holds.
type changeCard struct {
	Kind string `json:"kind"`
	changedesk.Card
}

// caseKind returns the kind of case id as by sees it, for the routes the
// bug and change loops share (the card and approvals).
func (s *server) caseKind(r *http.Request, by signoff.Actor) (signoff.CaseKind, error) {
	c, err := s.store.GetCase(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return "", err
	}
	return c.Kind, nil
}

func (s *server) getChangeCard(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	d, err := s.needChangeDesk()
	if err != nil {
		return err
	}
	card, err := d.Card(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, changeCard{Kind: string(signoff.KindChange), Card: card})
	return nil
}

func (s *server) approveChange(w http.ResponseWriter, r *http.Request, by signoff.Actor, in approvalInput) error {
	d, err := s.needChangeDesk()
	if err != nil {
		return err
	}
	a, c, err := d.Approve(r.Context(), by, r.PathValue("id"), in.Envelope, in.Via, in.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"approval": a, "case": c})
	return nil
}

// ---- Execution and rollback ----

// stateError is a refusal with the state it left the case in (a drifted
// target moves the case to drifted), so the problem's current_state says
// it. The gate's own error stays in the chain for the problem's check.
type stateError struct {
	err   error
	state *signoff.Error
}

func (e *stateError) Error() string   { return e.err.Error() }
func (e *stateError) Unwrap() []error { return []error{e.state, e.err} }

func withCaseState(err error, c signoff.Case) error {
	if err == nil || c.State == "" || signoff.ErrorState(err) != "" || signoff.ErrorCode(err) == signoff.EINTERNAL {
		return err
	}
	return &stateError{err: err, state: &signoff.Error{Code: signoff.ErrorCode(err), Message: signoff.ErrorMessage(err), State: c.State}}
}

func (s *server) executeChange(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	d, err := s.needChangeDesk()
	if err != nil {
		return err
	}
	extendWrite(w)
	x, err := d.Execute(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return withCaseState(err, x.Case)
	}
	writeJSON(w, http.StatusOK, x)
	return nil
}

type rollbackInput struct {
	Reason string `json:"reason"`
}

func (s *server) rollbackChange(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	d, err := s.needChangeDesk()
	if err != nil {
		return err
	}
	var in rollbackInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	extendWrite(w)
	c, x, err := d.Rollback(r.Context(), by, r.PathValue("id"), in.Reason)
	if err != nil && c.ID != "" && signoff.ErrorCode(err) != signoff.EINTERNAL {
		// The compensating case exists (its pre-approved execution was
		// refused): the answer names it, so the caller can follow it up.
		return &stateError{err: err, state: &signoff.Error{Code: signoff.ErrorCode(err), State: c.State,
			Message: fmt.Sprintf("compensating change %s was opened and is %s: %s", c.ID, c.State, signoff.ErrorMessage(err))}}
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"case": c, "execution": x})
	return nil
}

type bypassInput struct {
	Value  json.RawMessage `json:"value"`
	Reason string          `json:"reason"`
}

// flagBypass is the emergency write: refused unless the workspace policy's
// emergency_bypass names the caller's role; it still leaves a change case,
// a receipt and the restore when its time is up.
func (s *server) flagBypass(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	d, err := s.needChangeDesk()
	if err != nil {
		return err
	}
	var in bypassInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if len(in.Value) == 0 {
		return signoff.Errorf(signoff.EINVALID, "value is required")
	}
	x, err := d.Bypass(r.Context(), by, changedesk.BypassInput{ProjectID: r.PathValue("id"), Env: r.PathValue("env"),
		Key: r.PathValue("key"), Value: in.Value, Reason: in.Reason})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, x)
	return nil
}

// extendWrite lets an execution answer after its health window: the
// server's write timeout (60 s) is shorter than the longest window a plan
// may have, and the change goes on whether or not the client waits.
func extendWrite(w http.ResponseWriter) {
	d := time.Duration(change.MaxHealthWindowSeconds)*time.Second + 2*time.Minute
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
}
