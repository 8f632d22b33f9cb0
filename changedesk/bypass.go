package changedesk

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/workflow"
)

// BypassInput is an emergency flag write.
type BypassInput struct {
	ProjectID string          `json:"project_id"`
	Env       string          `json:"environment"`
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	Reason    string          `json:"reason"`
}

// Bypass writes a flag directly, without an approval, when the workspace
// policy's emergency bypass names the caller's role. It is the one write
// outside the gate, and it is still a change case with a plan, a receipt
// and ledger events; it lasts the policy's bypass minutes, after which the
// flag's previous value is restored (BypassExpiryJob) unless the flag was
// changed again since. Everything else is EFORBIDDEN.
func (d *Desk) Bypass(ctx context.Context, by signoff.Actor, in BypassInput) (Execution, error) {
	if !by.Role.IsHuman() {
		return Execution{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not use the emergency bypass", by.Role)
	}
	if len(d.Key) == 0 {
		return Execution{}, signoff.Errorf(signoff.EUNAVAILABLE, "this server has no signing key, so it cannot write receipts; it writes nothing")
	}
	pol, _, err := d.Policy(ctx, by.WorkspaceID)
	if err != nil {
		return Execution{}, err
	}
	switch {
	case !pol.EmergencyBypass.Allows(by.Role) || pol.EmergencyBypass.Duration() <= 0:
		return Execution{}, signoff.Errorf(signoff.EFORBIDDEN, "the policy's emergency bypass does not allow role %s: flags change through change requests", by.Role)
	case len(strings.TrimSpace(in.Reason)) < pol.MinReasonLength:
		return Execution{}, signoff.Errorf(signoff.EINVALID, "an emergency write needs a reason of at least %d characters", pol.MinReasonLength)
	}
	t := change.Target{Kind: change.KindFlag, Env: in.Env, Name: in.Key}
	target := t.String()
	if _, err := change.ParseTarget(target); err != nil {
		return Execution{}, err
	}
	// Protected targets stay protected, and an environment or flag the
	// policy does not allow at all is not reachable through the bypass
	// either; only the approval and the window are waived.
	if err := pol.CheckTarget(target); err != nil {
		return Execution{}, err
	}
	act, err := d.actuator(change.KindFlag)
	if err != nil {
		return Execution{}, err
	}
	// The bypass skips the approval, not the per-target lock: it never
	// writes under an execution in flight.
	holder := signoff.NewID("lock")
	if locked, err := d.lockTarget(ctx, by.WorkspaceID, target, holder); err != nil {
		return Execution{}, err
	} else if !locked {
		return Execution{}, &change.GateError{Check: change.CheckLock, Detail: fmt.Sprintf("the per-target lock for %s is held by an execution in flight", target)}
	}
	defer d.unlock(ctx, by.WorkspaceID, target, holder)
	params, err := json.Marshal(map[string]json.RawMessage{"value": in.Value})
	if err != nil {
		return Execution{}, signoff.Errorf(signoff.EINVALID, "value is not JSON")
	}
	c, err := d.Store.CreateCase(ctx, by, signoff.CaseInput{ProjectID: in.ProjectID, Kind: signoff.KindChange, Title: firstLine("Emergency: "+in.Reason, 120)})
	if err != nil {
		return Execution{}, err
	}
	sc := Scope{WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID, CaseID: c.ID}
	dr, err := act.Draft(ctx, sc, t, params)
	if err != nil {
		return Execution{Case: c}, err
	}
	now := d.now()
	until := now.Add(pol.EmergencyBypass.Duration()).Truncate(time.Second)
	plan := change.Plan{Kind: change.KindFlag, Target: target, Params: params, BeforeStateDigest: dr.Before.Digest,
		AfterStateDigest: dr.After, Rollback: dr.Rollback, ExpiresAt: until}
	// The project's default health check, when it has one, runs and is
	// reported; a failure does not undo an emergency write (the people
	// using the bypass decide), the expiry does.
	if hc, err := d.DefaultHealth(ctx, c.WorkspaceID, c.ProjectID); err == nil {
		plan.HealthCheck = hc
	}
	body, err := change.Canonical(plan)
	if err != nil {
		return Execution{Case: c}, err
	}
	digest, err := change.PlanDigest(plan)
	if err != nil {
		return Execution{Case: c}, err
	}
	rec := &signoff.ChangePlan{ID: signoff.NewID(change.PrefixPlan), WorkspaceID: c.WorkspaceID, CaseID: c.ID, Body: body, Digest: digest,
		Proposer: by.ID, Via: "human", CreatedAt: now}
	st := signoff.ChangeLoopState{Reason: strings.TrimSpace(in.Reason), Opener: by.ID, PlanID: rec.ID, PlanDigest: digest,
		PolicyDigest: pol.Digest(), Bypass: true, BypassUntil: &until}
	l, c, err := d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID, State: st, Plan: rec,
		Events: []signoff.LoopEvent{{Type: "change.bypass_requested", Payload: map[string]any{"by": by.ID, "role": by.Role, "target": target,
			"plan_id": rec.ID, "plan_digest": digest, "until": until, "reason": st.Reason}}}})
	if err != nil {
		return Execution{Case: c}, err
	}
	action, err := change.ActionDigest(plan, pol.Digest())
	if err != nil {
		return Execution{Case: c}, err
	}
	b := ReceiptBody{Case: c.ID, PlanID: rec.ID, PlanDigest: digest, ActionDigest: action, PolicyDigest: pol.Digest(),
		Kind: plan.Kind, Target: target, Executor: by.ID, Before: dr.Before, StartedAt: now, Bypass: true, BypassUntil: &until}
	after, err := act.Apply(ctx, sc, plan, dr.Before)
	b.AppliedAt, b.FinishedAt = d.now(), d.now()
	if err != nil {
		return Execution{Case: c}, fmt.Errorf("emergency write of %s: %w", target, err)
	}
	b.After, b.Outcome = &after, OutcomeExecuted
	if plan.HealthCheck.Kind != "" {
		b.Health = RunHealth(ctx, plan.HealthCheck, d.Health, d.sleep)
	}
	rcpt, err := d.sign(c, signoff.ReceiptBypass, b)
	if err != nil {
		return Execution{Case: c}, err
	}
	st.Receipts = []string{rcpt.ID}
	_, c, err = d.Store.AdvanceChange(context.WithoutCancel(ctx), sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st,
		Command: "bypass", Receipts: []signoff.Receipt{rcpt},
		Events: []signoff.LoopEvent{{Type: "change.bypassed", Payload: map[string]any{"receipt_id": rcpt.ID, "receipt_digest": rcpt.Digest,
			"before_state_digest": dr.Before.Digest, "after_state_digest": after.Digest, "until": until,
			"health_run": plan.HealthCheck.Kind != "", "health_passed": b.Health.Passed}}},
		Jobs: []signoff.JobRequest{{Args: signoff.BypassExpiryJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID}, At: until}}})
	if err != nil {
		return Execution{Case: c, Outcome: OutcomeExecuted, Receipt: rcpt, Predicate: b}, fmt.Errorf("record the emergency write of %s: %w", target, err)
	}
	return Execution{Case: c, Outcome: OutcomeExecuted, Receipt: rcpt, Predicate: b}, nil
}

// ExpireBypass ends an emergency bypass whose time is up: if the flag
// still holds what the bypass wrote, the previous value is restored with
// a receipt and the case is reverted; if the flag changed since (a change
// request took over), nothing is written. Repeated calls do nothing.
func (d *Desk) ExpireBypass(ctx context.Context, ws, caseID string) error {
	c, l, err := d.load(ctx, sys(ws), caseID)
	if err != nil {
		return err
	}
	if !l.State.Bypass || c.State != workflow.ChangeExecuted {
		return nil
	}
	if l.State.BypassUntil != nil && d.now().Before(*l.State.BypassUntil) {
		return fmt.Errorf("bypass %s lasts until %s", caseID, l.State.BypassUntil.Format(time.RFC3339)) // retried later
	}
	_, plan, err := d.currentPlan(ctx, c, l)
	if err != nil {
		return err
	}
	t, err := change.ParseTarget(plan.Target)
	if err != nil {
		return err
	}
	act, err := d.actuator(t.Kind)
	if err != nil {
		return err
	}
	sc := Scope{WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID, CaseID: c.ID}
	holder := signoff.NewID("lock")
	if locked, err := d.lockTarget(ctx, ws, plan.Target, holder); err != nil {
		return err
	} else if !locked {
		return fmt.Errorf("bypass %s: the lock of %s is held; retried later", caseID, plan.Target)
	}
	defer d.unlock(ctx, ws, plan.Target, holder)
	cur, err := act.Read(ctx, sc, t)
	if err != nil {
		return err
	}
	if cur.Digest != plan.AfterStateDigest {
		st := l.State
		st.Bypass = false
		_, _, err := d.Store.AdvanceChange(ctx, sys(ws), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st,
			Events: []signoff.LoopEvent{{Type: "change.bypass_expired", Payload: map[string]any{"restored": false,
				"detail": "the flag changed after the emergency write; the later change stands", "live_state_digest": cur.Digest}}}})
		return err
	}
	restored, err := act.Restore(ctx, sc, plan, cur)
	if err != nil {
		return fmt.Errorf("restore %s after the bypass: %w", plan.Target, err)
	}
	pol, _, err := d.Policy(ctx, ws)
	if err != nil {
		return err
	}
	now := d.now()
	b := ReceiptBody{Case: c.ID, PlanID: l.State.PlanID, PlanDigest: l.State.PlanDigest, PolicyDigest: pol.Digest(), Kind: plan.Kind,
		Target: plan.Target, Executor: signoff.SystemActor(ws).ID, Before: cur, Restored: &restored, Outcome: OutcomeRolledBack,
		StartedAt: now, AppliedAt: now, FinishedAt: now, Bypass: true, BypassUntil: l.State.BypassUntil}
	b.ActionDigest, _ = change.ActionDigest(plan, pol.Digest())
	rcpt, err := d.sign(c, signoff.ReceiptBypass, b)
	if err != nil {
		return err
	}
	st := l.State
	st.Bypass = false
	st.Receipts = append(slices.Clone(st.Receipts), rcpt.ID)
	_, _, err = d.Store.AdvanceChange(context.WithoutCancel(ctx), sys(ws), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st,
		Command: "revert", Note: "emergency bypass expired", Receipts: []signoff.Receipt{rcpt},
		Events: []signoff.LoopEvent{{Type: "change.bypass_expired", Payload: map[string]any{"restored": true, "receipt_id": rcpt.ID,
			"restored_state_digest": restored.Digest}}}})
	return err
}

// AddWorkers adds the change desk's job workers to w.
func (d *Desk) AddWorkers(w *river.Workers) {
	river.AddWorker(w, &bypassWorker{d: d})
	river.AddWorker(w, &watchdogWorker{d: d})
	river.AddWorker(w, &expiryWorker{d: d})
}

type bypassWorker struct {
	signoff.LongWorker[signoff.BypassExpiryJob]
	d *Desk
}

func (w *bypassWorker) Work(ctx context.Context, job *river.Job[signoff.BypassExpiryJob]) error {
	return w.d.ExpireBypass(ctx, job.Args.WorkspaceID, job.Args.CaseID)
}
