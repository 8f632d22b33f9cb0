// Package changedesk runs the change loop (SPEC section 4): a request
// becomes a plan drafted against the live state of its target, the
// workspace policy reviews it rule by rule, people sign its exact digest,
// and the gate, the one path to an actuator's Apply, executes only that,
// runs the health check, restores the before-state when it fails and
// signs a receipt either way. Every step goes through the store's
// AdvanceChange, so the case, the loop record, the ledger, the consumed
// approvals and the receipts change together or not at all.
package changedesk

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/workflow"
)

// Defaults of the desk.
const (
	DefaultLockTTL  = 20 * time.Minute // longer than the longest health window
	DefaultLockWait = 30 * time.Second // how long an execution waits for a busy target
	maxReason       = 4000
	maxTitle        = 300
)

// Desk runs the change loop.
type Desk struct {
	Store signoff.Store
	// Actuators by plan kind (change.KindFlag, ...). A kind without one
	// cannot be planned.
	Actuators map[string]Actuator
	// Health runs the plans' health checks.
	Health Prober
	// Read serves the planner's diagnostic reads: a store over a pool the
	// database keeps from writing (sqlstore.DB.ReadOnly). Nil reads Store.
	Read signoff.Store
	// Runtime and Tools run the planner role (Plan); without them Plan
	// falls back to the builtin templates in-process.
	Runtime *agent.Runtime
	Tools   *agent.Registry
	// Key signs receipts (the server's key). Without one, Execute refuses:
	// an execution without a receipt would be a claim without evidence.
	Key ed25519.PrivateKey
	// Now and Sleep default to the wall clock.
	Now   func() time.Time
	Sleep func(context.Context, time.Duration) error
	Log   *slog.Logger
	// LockTTL is the lease of a per-target lock; LockWait how long an
	// execution waits for a busy target before refusing.
	LockTTL, LockWait time.Duration
	// ObserveGate, when set, is told how long each gate decision took
	// (from Execute's call to the approvals consumed, or to the refusal;
	// the actuator, health check and receipt come after) and the check
	// that refused ("" when the gate passed). Metrics and benchmarks use it.
	ObserveGate func(d time.Duration, check string)
}

func (d *Desk) now() time.Time {
	if d.Now != nil {
		return d.Now().UTC()
	}
	return time.Now().UTC()
}

func (d *Desk) sleep(ctx context.Context, t time.Duration) error {
	if d.Sleep != nil {
		return d.Sleep(ctx, t)
	}
	tm := time.NewTimer(t)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-tm.C:
		return nil
	}
}

func (d *Desk) log() *slog.Logger {
	if d.Log != nil {
		return d.Log
	}
	return slog.Default()
}

func sys(ws string) signoff.Actor { return signoff.SystemActor(ws) }

// Reader is the store the planner's reads use (Read, or Store).
func (d *Desk) Reader() signoff.Store {
	if d.Read != nil {
		return d.Read
	}
	return d.Store
}

func staff(by signoff.Actor) bool {
	return by.Role == signoff.RoleOwner || by.Role == signoff.RoleOperator
}

func (d *Desk) actuator(kind string) (Actuator, error) {
	a, ok := d.Actuators[kind]
	if !ok {
		return nil, signoff.Errorf(signoff.EINVALID, "no actuator for kind %q on this server", kind)
	}
	return a, nil
}

// Policy returns the workspace's change policy, parsed. A workspace
// without one gets the empty policy, which allows nothing.
func (d *Desk) Policy(ctx context.Context, ws string) (change.Policy, signoff.ChangePolicy, error) {
	rec, err := d.Store.GetChangePolicy(ctx, sys(ws))
	if signoff.ErrorCode(err) == signoff.ENOTFOUND {
		p, err := change.Parse(nil)
		return p, signoff.ChangePolicy{WorkspaceID: ws}, err
	} else if err != nil {
		return change.Policy{}, rec, err
	}
	p, err := change.Parse([]byte(rec.YAML))
	if err != nil {
		return change.Policy{}, rec, fmt.Errorf("stored change policy no longer parses: %w", err)
	}
	return p, rec, nil
}

// approvalPolicy is the change policy as package approval applies it to
// one signed statement; its digest is the change policy's.
func approvalPolicy(p change.Policy) approval.Policy {
	return approval.Policy{Quorum: p.Approvals.Required, TTLHours: p.ApprovalTTLHours,
		NoSelfApproval: p.NoSelfApproval, ProposerCannotApprove: p.ProposerCannotApprove, Of: p.Digest()}
}

// ---- Requests ----

// RequestInput opens a change request.
type RequestInput struct {
	ProjectID string `json:"project_id"`
	Title     string `json:"title"`
	Reason    string `json:"reason"`
	// Incident is the case id of an incident (a bug) that prompted it.
	Incident string `json:"incident,omitempty"`
}

// Request opens a change case. People open requests; an agent drafts
// plans for them but does not ask for changes on its own.
func (d *Desk) Request(ctx context.Context, by signoff.Actor, in RequestInput) (signoff.Case, signoff.ChangeLoop, error) {
	if !staff(by) {
		return signoff.Case{}, signoff.ChangeLoop{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not open change requests", by.Role)
	}
	in.Reason = strings.TrimSpace(in.Reason)
	if err := signoff.CheckText("reason", in.Reason, true, maxReason); err != nil {
		return signoff.Case{}, signoff.ChangeLoop{}, err
	}
	pol, _, err := d.Policy(ctx, by.WorkspaceID)
	if err != nil {
		return signoff.Case{}, signoff.ChangeLoop{}, err
	}
	// Refused before a case exists: a short reason only fails review.
	if err := checkReason(pol, in.Reason); err != nil {
		return signoff.Case{}, signoff.ChangeLoop{}, err
	}
	if strings.TrimSpace(in.Title) == "" {
		in.Title = firstLine(in.Reason, 120)
	}
	if in.Incident != "" {
		if err := signoff.CheckID("incident", signoff.PrefixCase, in.Incident); err != nil {
			return signoff.Case{}, signoff.ChangeLoop{}, err
		}
		if _, err := d.Store.GetCase(ctx, by, in.Incident); err != nil {
			return signoff.Case{}, signoff.ChangeLoop{}, fmt.Errorf("incident: %w", err)
		}
	}
	c, err := d.Store.CreateCase(ctx, by, signoff.CaseInput{ProjectID: in.ProjectID, Kind: signoff.KindChange, Title: in.Title})
	if err != nil {
		return signoff.Case{}, signoff.ChangeLoop{}, err
	}
	st := signoff.ChangeLoopState{Reason: in.Reason, Opener: by.ID, Incident: in.Incident}
	l, c, err := d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID, State: st,
		Events: []signoff.LoopEvent{{Type: "change.requested", Payload: map[string]any{"reason": in.Reason, "opener": by.ID, "incident": in.Incident}}}})
	if err != nil {
		return c, l, err
	}
	return c, l, nil
}

func firstLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// load returns a change case and its loop as by may see them.
func (d *Desk) load(ctx context.Context, by signoff.Actor, caseID string) (signoff.Case, signoff.ChangeLoop, error) {
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return signoff.Case{}, signoff.ChangeLoop{}, err
	}
	c, err := d.Store.GetCase(ctx, by, caseID)
	if err != nil {
		return c, signoff.ChangeLoop{}, err
	}
	if c.Kind != signoff.KindChange {
		return c, signoff.ChangeLoop{}, signoff.Errorf(signoff.EINVALID, "case %s is a %s, not a change", caseID, c.Kind)
	}
	l, err := d.Store.GetChangeLoop(ctx, sys(c.WorkspaceID), caseID)
	return c, l, err
}

// ---- Plans ----

// Proposal is a plan as a planner drafts it: what to change and how to
// tell it worked. The desk reads the live state and fills in the digests,
// the rollback (for kinds that restore a value) and the expiry.
type Proposal struct {
	Target      string             `json:"target"`
	Params      json.RawMessage    `json:"params"`
	HealthCheck change.HealthCheck `json:"health_check"`
	// Rollback is taken only for runbooks, whose inverse the desk cannot
	// derive; flags and files roll back to the value read now.
	Rollback json.RawMessage `json:"rollback,omitempty"`
	// Via says how it was drafted: builtin, model, mcp or human.
	Via string `json:"via"`
}

// Planners may draft; people may too.
func canPlan(by signoff.Actor) bool {
	return staff(by) || by.Role == signoff.RolePlanner || by.Role == signoff.RoleSystem
}

// Propose drafts a plan from p against the target's live state, stores it
// as the case's current plan (superseding every approval of an earlier
// one), reviews it under the workspace policy and, when the review
// passes, asks for approval (or, for a compensating rollback the policy
// pre-approves, approves it itself). A review that fails leaves the case
// in review_failed with every rule's result on the ledger.
func (d *Desk) Propose(ctx context.Context, by signoff.Actor, caseID string, p Proposal) (signoff.Case, signoff.ChangeLoop, error) {
	if !canPlan(by) {
		return signoff.Case{}, signoff.ChangeLoop{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not draft plans", by.Role)
	}
	c, l, err := d.load(ctx, by, caseID)
	if err != nil {
		return c, l, err
	}
	if l.State.RevertOf != "" {
		// A compensating case that a newer rollback of its original
		// replaced stays closed: two compensations of one change must not
		// both run.
		ol, err := d.Store.GetChangeLoop(ctx, sys(c.WorkspaceID), l.State.RevertOf)
		if err != nil {
			return c, l, fmt.Errorf("original %s: %w", l.State.RevertOf, err)
		}
		if ol.State.RevertedBy != c.ID {
			return c, l, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("compensating change %s was replaced by %s, a newer rollback of %s; plan that one", c.ID, ol.State.RevertedBy, l.State.RevertOf)}
		}
		// A compensation acts on what its original changed and nothing
		// else: the rollback rule, the later changes it lists and marks
		// overwritten all read the original's target, so a plan for
		// another target would be judged (and pre-approved) against
		// changes it does not touch.
		oc, err := d.Store.GetCase(ctx, sys(c.WorkspaceID), l.State.RevertOf)
		if err != nil {
			return c, l, fmt.Errorf("original %s: %w", l.State.RevertOf, err)
		}
		_, orig, err := d.currentPlan(ctx, oc, ol)
		if err != nil {
			return c, l, fmt.Errorf("plan of original %s: %w", l.State.RevertOf, err)
		}
		t, err := change.ParseTarget(p.Target)
		if err != nil {
			return c, l, err
		}
		if t.String() != orig.Target {
			return c, l, signoff.Errorf(signoff.EINVALID, "compensating change %s rolls back %s on %s: its plan acts on that target only, not %s; to change %s, open a change request",
				c.ID, l.State.RevertOf, orig.Target, t, t)
		}
	}
	plan, err := d.draft(ctx, c, l.State, p)
	if err != nil {
		return c, l, err
	}
	return d.storePlan(ctx, by, c, l, plan, p.Via)
}

// draft builds a plan from a proposal and the live state.
func (d *Desk) draft(ctx context.Context, c signoff.Case, st signoff.ChangeLoopState, p Proposal) (change.Plan, error) {
	switch p.Via {
	case "builtin", "model", "mcp", "human", "rollback":
	default:
		return change.Plan{}, signoff.Errorf(signoff.EINVALID, "via must be builtin, model, mcp, human or rollback")
	}
	t, err := change.ParseTarget(p.Target)
	if err != nil {
		return change.Plan{}, err
	}
	act, err := d.actuator(t.Kind)
	if err != nil {
		return change.Plan{}, err
	}
	if len(p.Params) == 0 {
		return change.Plan{}, signoff.Errorf(signoff.EINVALID, "params are required")
	}
	pol, _, err := d.Policy(ctx, c.WorkspaceID)
	if err != nil {
		return change.Plan{}, err
	}
	dr, err := act.Draft(ctx, Scope{WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID, CaseID: c.ID}, t, p.Params)
	if err != nil {
		return change.Plan{}, fmt.Errorf("draft %s: %w", t, err)
	}
	rb := dr.Rollback
	if t.Kind == change.KindRunbook {
		rb = p.Rollback
	} else if len(p.Rollback) > 0 && string(p.Rollback) != "null" {
		return change.Plan{}, signoff.Errorf(signoff.EINVALID, "a %s plan rolls back to the value read now; a rollback is given only for runbooks", t.Kind)
	}
	if len(rb) == 0 {
		rb = json.RawMessage("null")
	}
	params, err := canonicalJSON("params", p.Params)
	if err != nil {
		return change.Plan{}, err
	}
	ttl := pol.TTL()
	if ttl <= 0 {
		ttl = change.DefaultApprovalTTLHours * time.Hour
	}
	plan := change.Plan{Kind: t.Kind, Target: t.String(), Params: params,
		BeforeStateDigest: dr.Before.Digest, AfterStateDigest: dr.After, Rollback: rb,
		HealthCheck: p.HealthCheck, ExpiresAt: d.now().Add(ttl).Truncate(time.Second)}
	if err := plan.Validate(); err != nil {
		return change.Plan{}, err
	}
	return plan, nil
}

func canonicalJSON(what string, raw json.RawMessage) (json.RawMessage, error) {
	var probe any
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, signoff.Errorf(signoff.EINVALID, "%s are not JSON", what)
	}
	return json.RawMessage(raw), nil
}

// storePlan stores plan as the case's current plan, then reviews it.
func (d *Desk) storePlan(ctx context.Context, by signoff.Actor, c signoff.Case, l signoff.ChangeLoop, plan change.Plan, via string) (signoff.Case, signoff.ChangeLoop, error) {
	body, err := change.Canonical(plan)
	if err != nil {
		return c, l, err
	}
	digest, err := change.PlanDigest(plan)
	if err != nil {
		return c, l, err
	}
	rec := &signoff.ChangePlan{ID: signoff.NewID(change.PrefixPlan), WorkspaceID: c.WorkspaceID, CaseID: c.ID,
		Body: body, Digest: digest, Proposer: by.ID, Via: via, CreatedAt: d.now()}
	st := l.State
	st.PlanID, st.PlanDigest, st.Review, st.PolicyDigest, st.ReviewNote, st.PolicyYAML = rec.ID, digest, nil, "", "", ""
	st.ApprovedDigest, st.ApprovedPolicyDigest, st.ApprovalIDs, st.Preapproved = "", "", nil, false
	l, c, err = d.Store.AdvanceChange(ctx, by, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Plan: rec, Command: "plan",
		Events: []signoff.LoopEvent{{Type: "change.planned", Payload: map[string]any{"plan_id": rec.ID, "plan_digest": digest,
			"target": plan.Target, "kind": plan.Kind, "via": via, "proposer": by.ID,
			"before_state_digest": plan.BeforeStateDigest, "after_state_digest": plan.AfterStateDigest}}}})
	if err != nil {
		return c, l, err
	}
	// Approvals of any earlier plan stop counting: they name its digest.
	if n, err := d.Store.SupersedeApprovals(ctx, sys(c.WorkspaceID), c.ID, digest); err != nil {
		return c, l, err
	} else if n > 0 {
		d.log().InfoContext(ctx, "approvals superseded by a new plan", "case_id", c.ID, "count", n)
	}
	return d.review(ctx, c, l, plan, *rec)
}

// review applies the policy to the current plan and moves the case on.
func (d *Desk) review(ctx context.Context, c signoff.Case, l signoff.ChangeLoop, plan change.Plan, rec signoff.ChangePlan) (signoff.Case, signoff.ChangeLoop, error) {
	pol, prec, err := d.Policy(ctx, c.WorkspaceID)
	if err != nil {
		return c, l, err
	}
	// A compensating case is pre-approved only as the rollback rule
	// decides (change.Compensate): the exact inverse of what ran, on the
	// content it left; the gate then holds the plan to its before-state.
	var comp *change.CompensationDecision
	if l.State.RevertOf != "" {
		live := d.liveContent(ctx, Scope{WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID, CaseID: c.ID}, plan.Target)
		dec, err := d.compensation(ctx, c.WorkspaceID, l.State.RevertOf, c.ID, plan, live)
		if err != nil {
			return c, l, err
		}
		comp = &dec
	}
	pre := comp != nil && comp.Preapproved()
	res := change.Review(plan, change.Request{Reason: l.State.Reason, Proposer: rec.Proposer, Opener: l.State.Opener, Preapproved: pre, HealthHosts: d.healthHosts()}, pol, d.now())
	if comp != nil && comp.Verdict == change.CompensationRefused {
		res.OK, res.Rules = false, append(res.Rules, change.RuleResult{Rule: "compensation", Detail: comp.Reason})
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return c, l, err
	}
	st := l.State
	st.Review, st.PolicyDigest, st.PolicyYAML, st.Compensation = raw, pol.Digest(), prec.YAML, nil
	cmd, ev := "review_fail", "change.review_failed"
	if res.OK {
		cmd, ev = "review_pass", "change.reviewed"
	}
	events := []signoff.LoopEvent{{Type: ev, Payload: map[string]any{"plan_id": rec.ID, "plan_digest": rec.Digest, "policy_digest": st.PolicyDigest, "review": res}}}
	if comp != nil {
		if st.Compensation, err = json.Marshal(comp); err != nil {
			return c, l, err
		}
		events = append(events, signoff.LoopEvent{Type: "change.compensation", Payload: map[string]any{"plan_id": rec.ID, "revert_of": st.RevertOf,
			"verdict": comp.Verdict, "message": comp.Reason, "recorded_after_content_digest": comp.RecordedAfterDigest,
			"live_content_digest": comp.LiveDigest, "later_changes": comp.Later}})
	}
	l, c, err = d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: cmd, Events: events})
	if err != nil || !res.OK {
		return c, l, err
	}
	// The case expires with its plan unless it is executed or planned
	// again first (the job then does nothing).
	expiry := []signoff.JobRequest{{Args: signoff.PlanExpiryJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID, PlanID: rec.ID}, At: plan.ExpiresAt}}
	if pre {
		st.Preapproved, st.ApprovedDigest, st.ApprovedPolicyDigest = true, rec.Digest, st.PolicyDigest
		l, c, err = d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "preapprove", Jobs: expiry,
			Events: []signoff.LoopEvent{{Type: "change.preapproved", Payload: map[string]any{"plan_id": rec.ID, "plan_digest": rec.Digest,
				"policy_digest": st.PolicyDigest, "revert_of": st.RevertOf, "rule": comp.Reason}}}})
		return c, l, err
	}
	l, c, err = d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "request_approval", Jobs: expiry,
		Events: []signoff.LoopEvent{{Type: "change.approval_requested", Payload: map[string]any{"plan_id": rec.ID, "subject_digest": rec.Digest,
			"policy_digest": st.PolicyDigest, "required": pol.Approvals.Required, "group": pol.Approvals.Group}}}})
	if err != nil {
		return c, l, err
	}
	// An advisory note for the card, where a reviewer is configured; the
	// case waits for people either way.
	d.askReviewer(ctx, c, l, plan, rec)
	if c2, l2, err := d.load(ctx, sys(c.WorkspaceID), c.ID); err == nil {
		c, l = c2, l2
	}
	return c, l, nil
}

// currentPlan returns the case's current plan record and the plan decoded
// from its stored body (which the gate re-digests: the record's Digest is
// what was drafted, not proof of what is stored).
func (d *Desk) currentPlan(ctx context.Context, c signoff.Case, l signoff.ChangeLoop) (signoff.ChangePlan, change.Plan, error) {
	if l.State.PlanID == "" {
		return signoff.ChangePlan{}, change.Plan{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s has no plan yet", c.ID)}
	}
	rec, err := d.Store.GetPlan(ctx, sys(c.WorkspaceID), l.State.PlanID)
	if err != nil {
		return rec, change.Plan{}, err
	}
	plan, err := change.DecodePlan(rec.Body)
	return rec, plan, err
}

// ---- The approval card ----

// Card is the approval card: the complete plan exactly as signed, its
// digest, the review with every rule's result, the policy and the
// approvals so far.
type Card struct {
	CaseID        string          `json:"case_id"`
	State         string          `json:"state"`
	Title         string          `json:"title"`
	Reason        string          `json:"reason"`
	Opener        string          `json:"opener"`
	PlanID        string          `json:"plan_id"`
	Proposer      string          `json:"proposer"`
	Via           string          `json:"via"`
	Plan          json.RawMessage `json:"plan"`
	SubjectDigest string          `json:"subject_digest"`
	ActionDigest  string          `json:"action_digest"`
	BeforeState   *State          `json:"before_state,omitempty"`
	Review        json.RawMessage `json:"review"`
	ReviewNote    string          `json:"review_note,omitempty"`
	Policy        approval.Policy `json:"policy"`
	PolicyDigest  string          `json:"policy_digest"`
	PolicyYAML    string          `json:"policy_yaml"`
	Approvers     []string        `json:"approvers"`
	Preapproved   bool            `json:"preapproved,omitempty"`
	RevertOf      string          `json:"revert_of,omitempty"`
	// Compensation is, for a compensating rollback, why it is
	// pre-approved or needs signatures, and what the target holds now
	// against what the original left (and which later changes it undoes).
	Compensation *change.CompensationDecision `json:"compensation,omitempty"`
	Approvals    []signoff.Approval           `json:"approvals"`
}

// Card returns the approval card of a change case with a plan.
func (d *Desk) Card(ctx context.Context, by signoff.Actor, caseID string) (Card, error) {
	// The server reads cards too: the outbox opens a notification card
	// over the same digest.
	if !staff(by) && by.Role != signoff.RoleViewer && by.Role != signoff.RoleSystem {
		return Card{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s does not read approval cards", by.Role)
	}
	c, l, err := d.load(ctx, by, caseID)
	if err != nil {
		return Card{}, err
	}
	rec, plan, err := d.currentPlan(ctx, c, l)
	if err != nil {
		return Card{}, err
	}
	pol, prec, err := d.Policy(ctx, c.WorkspaceID)
	if err != nil {
		return Card{}, err
	}
	digest, err := change.PlanDigest(plan)
	if err != nil {
		return Card{}, err
	}
	action, err := change.ActionDigest(plan, pol.Digest())
	if err != nil {
		return Card{}, err
	}
	apvs, err := d.Store.ListApprovals(ctx, sys(c.WorkspaceID), c.ID)
	if err != nil {
		return Card{}, err
	}
	card := Card{CaseID: c.ID, State: c.State, Title: c.Title, Reason: l.State.Reason, Opener: l.State.Opener,
		PlanID: rec.ID, Proposer: rec.Proposer, Via: rec.Via, Plan: rec.Body, SubjectDigest: digest, ActionDigest: action,
		Review: l.State.Review, ReviewNote: l.State.ReviewNote, Policy: approvalPolicy(pol), PolicyDigest: pol.Digest(),
		PolicyYAML: prec.YAML, Approvers: pol.Approvals.Group, Preapproved: l.State.Preapproved, RevertOf: l.State.RevertOf, Approvals: apvs}
	if t, err := change.ParseTarget(plan.Target); err == nil {
		if act, err := d.actuator(t.Kind); err == nil {
			if s, err := act.Read(ctx, Scope{WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID}, t); err == nil {
				card.BeforeState = &s
			}
		}
	}
	if len(l.State.Compensation) > 0 {
		var dec change.CompensationDecision
		if err := json.Unmarshal(l.State.Compensation, &dec); err != nil {
			return Card{}, fmt.Errorf("the stored compensation decision of %s: %w", c.ID, err)
		}
		card.Compensation = &dec
	}
	return card, nil
}

// ---- Approvals ----

// Approve checks a signed approval envelope from by and records it; once
// the policy's quorum of distinct approvers in its group has approved the
// current plan's digest under the current policy, the case is approved. A
// signed rejection sends the request back to requested. Every refusal
// leaves the case where it was.
func (d *Desk) Approve(ctx context.Context, by signoff.Actor, caseID string, envelope []byte, via, reason string) (signoff.Approval, signoff.Case, error) {
	rcv, err := approval.Receive(envelope, by, via, reason, "what to change in the plan", func(id string) (signoff.ApproverKey, error) {
		return d.Store.GetKey(ctx, by.WorkspaceID, id)
	})
	if err != nil {
		return signoff.Approval{}, signoff.Case{}, err
	}
	stmt, key, reason := rcv.Statement, rcv.Key, rcv.Reason
	c, l, err := d.load(ctx, by, caseID)
	if err != nil {
		return signoff.Approval{}, c, err
	}
	// An approved case whose quorum lost an approval (a key revoked or an
	// approver disabled, by the API or straight in the database by the
	// CLI) waits for a new signature: it moves back first, so the one who
	// signs now is not told it is approved.
	if moved, err := d.lapseVoided(ctx, c, l); err != nil {
		return signoff.Approval{}, c, err
	} else if moved {
		if c, l, err = d.load(ctx, by, caseID); err != nil {
			return signoff.Approval{}, c, err
		}
	}
	if c.State != workflow.ChangeAwaitingApproval {
		return signoff.Approval{}, c, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s is %s, not awaiting approval", caseID, c.State)}
	}
	rec, plan, err := d.currentPlan(ctx, c, l)
	if err != nil {
		return signoff.Approval{}, c, err
	}
	digest, err := change.PlanDigest(plan)
	if err != nil {
		return signoff.Approval{}, c, err
	}
	pol, _, err := d.Policy(ctx, c.WorkspaceID)
	if err != nil {
		return signoff.Approval{}, c, err
	}
	if !slices.Contains(pol.Approvals.Group, by.ID) {
		return signoff.Approval{}, c, signoff.Errorf(signoff.EFORBIDDEN, "%s is not in the policy's approvers group", by.ID)
	}
	if l.State.PolicyDigest != pol.Digest() {
		// Reviewed under another policy: review it again now, so the case
		// has a card under the policy in force to sign.
		c2, _, rerr := d.rereview(ctx, c, l, pol)
		if rerr != nil && signoff.ErrorCode(rerr) != signoff.ECONFLICT {
			return signoff.Approval{}, c, rerr
		}
		if c2.ID != "" {
			c = c2
		}
		return signoff.Approval{}, c, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("the policy changed since this plan was reviewed: it was reviewed again under the policy in force and is now %s; read the card again and sign that", c.State)}
	}
	apol := approvalPolicy(pol)
	if err := approval.Check(stmt, approval.Expect{Case: c.ID, SubjectDigest: digest, Policy: apol, Approver: by.ID,
		CaseOpener: l.State.Opener, Proposer: rec.Proposer, Now: d.now()}); err != nil {
		return signoff.Approval{}, c, err
	}
	a, err := d.Store.RecordApproval(ctx, by, signoff.Approval{CaseID: c.ID, SubjectDigest: stmt.SubjectDigest, Decision: stmt.Decision,
		ApproverID: by.ID, KeyID: key.ID, Nonce: stmt.Nonce, PolicyDigest: stmt.PolicyDigest, IssuedAt: stmt.IssuedAt,
		ExpiresAt: stmt.ExpiresAt, Envelope: envelope, Via: via})
	if err != nil {
		return signoff.Approval{}, c, err
	}
	if stmt.Decision == approval.Reject {
		_, c, err = d.Store.AdvanceChange(ctx, by, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: "reject", Note: reason,
			Events: []signoff.LoopEvent{{Type: "change.rejected", Payload: map[string]any{"approval_id": a.ID, "plan_id": rec.ID, "subject_digest": digest, "reason": reason}}}})
		return a, c, err
	}
	all, err := d.Store.ListApprovals(ctx, sys(c.WorkspaceID), c.ID)
	if err != nil {
		return a, c, err
	}
	ids, ok := approval.Quorum(d.eligible(ctx, c.WorkspaceID, all, pol), digest, apol, d.now())
	if !ok {
		return a, c, nil // recorded; more approvers are needed
	}
	st := l.State
	st.ApprovedDigest, st.ApprovedPolicyDigest, st.ApprovalIDs = digest, pol.Digest(), ids
	// When the quorum's first approval expires before the plan does, the
	// case goes back to waiting for a signature then (LapseApprovals).
	var jobs []signoff.JobRequest
	if first := firstExpiry(all, ids); !first.IsZero() && first.Before(plan.ExpiresAt) {
		jobs = append(jobs, signoff.JobRequest{Args: signoff.PlanExpiryJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID, PlanID: rec.ID, Lapse: true}, At: first})
	}
	_, c, err = d.Store.AdvanceChange(ctx, by, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "approve", Jobs: jobs,
		Events: []signoff.LoopEvent{{Type: "approval.quorum", Payload: map[string]any{"approvals": ids, "plan_id": rec.ID,
			"subject_digest": digest, "policy_digest": pol.Digest(), "required": pol.Approvals.Required, "via": via}}}})
	return a, c, err
}

// eligible keeps the approvals of active group members under registered,
// unrevoked keys.
func (d *Desk) eligible(ctx context.Context, ws string, list []signoff.Approval, pol change.Policy) []signoff.Approval {
	var out []signoff.Approval
	for _, a := range list {
		if !slices.Contains(pol.Approvals.Group, a.ApproverID) {
			continue
		}
		act, err := d.Store.GetActor(ctx, ws, a.ApproverID)
		if err != nil || act.DisabledAt != nil {
			continue
		}
		k, err := d.Store.GetKey(ctx, ws, a.KeyID)
		if err != nil || k.RevokedAt != nil || k.ActorID != a.ApproverID {
			continue
		}
		out = append(out, a)
	}
	return out
}

// firstExpiry is the earliest expiry among the approvals named by ids.
func firstExpiry(all []signoff.Approval, ids []string) time.Time {
	var first time.Time
	for _, a := range all {
		if slices.Contains(ids, a.ID) && (first.IsZero() || a.ExpiresAt.Before(first)) {
			first = a.ExpiresAt
		}
	}
	return first
}
