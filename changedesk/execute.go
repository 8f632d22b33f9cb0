package changedesk

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/evidence"
	"github.com/signoff-dev/signoff/workflow"
)

// Receipt statement types.
const (
	ReceiptPredicate = "https://signoff.dev/change/receipt/v1"
)

// Outcomes of an execution.
const (
	OutcomeExecuted      = "executed"       // applied, health passed
	OutcomeRolledBack    = "rolled_back"    // applied, health failed, before-state restored
	OutcomeRestoreFailed = "restore_failed" // applied, health failed, restore failed: a person must act
	OutcomeDrifted       = "drifted"        // not applied: the target changed between the gate and the write
	OutcomeInterrupted   = "interrupted"    // the executing process stopped; the watchdog settled the case
)

// Execution is what Execute did.
type Execution struct {
	Case      signoff.Case    `json:"case"`
	Outcome   string          `json:"outcome"`
	Receipt   signoff.Receipt `json:"receipt"`
	Predicate ReceiptBody     `json:"predicate"`
}

// ReceiptApproval is one consumed approval as a receipt names it.
type ReceiptApproval struct {
	ID            string `json:"id"`
	Approver      string `json:"approver"`
	KeyID         string `json:"key_id"`
	Via           string `json:"via"`
	SubjectDigest string `json:"subject_digest"`
}

// ReceiptBody is the predicate of a receipt statement.
type ReceiptBody struct {
	Case         string            `json:"case"`
	PlanID       string            `json:"plan_id"`
	PlanDigest   string            `json:"plan_digest"`
	ActionDigest string            `json:"action_digest"`
	PolicyDigest string            `json:"policy_digest"`
	Kind         string            `json:"kind"`
	Target       string            `json:"target"`
	Approvals    []ReceiptApproval `json:"approvals"`
	Preapproved  bool              `json:"preapproved,omitempty"`
	// Bypass marks an emergency write the policy allowed without an
	// approval, until BypassUntil.
	Bypass       bool         `json:"bypass,omitempty"`
	BypassUntil  *time.Time   `json:"bypass_until,omitempty"`
	Executor     string       `json:"executor"`
	GateChecks   []string     `json:"gate_checks"`
	Before       State        `json:"before"`
	After        *State       `json:"after,omitempty"`
	ApplyError   string       `json:"apply_error,omitempty"`
	Health       HealthReport `json:"health"`
	Restored     *State       `json:"restored,omitempty"`
	RestoreError string       `json:"restore_error,omitempty"`
	Outcome      string       `json:"outcome"`
	// Detail says what the watchdog found when it settled an interrupted
	// execution.
	Detail string `json:"detail,omitempty"`
	// A compensating rollback names the change it reverts and proves what
	// it restored: the content now equals the original's before-state.
	RevertOf                string    `json:"revert_of,omitempty"`
	OriginalContentDigest   string    `json:"original_content_digest,omitempty"`
	RestoredContentDigest   string    `json:"restored_content_digest,omitempty"`
	RestoredMatchesOriginal *bool     `json:"restored_matches_original,omitempty"`
	StartedAt               time.Time `json:"started_at"`
	AppliedAt               time.Time `json:"applied_at"`
	FinishedAt              time.Time `json:"finished_at"`
}

// Execute runs the gate on a change case and, when every check holds,
// consumes its approvals, applies the plan, runs the health check and
// restores the before-state if it fails. Every refusal names the failed
// check (a *change.GateError) and is recorded on the case's ledger; a
// drifted target moves the case to drifted. API, CLI, MCP and UI all call
// this one method: there is no other path to an actuator's Apply.
func (d *Desk) Execute(ctx context.Context, by signoff.Actor, caseID string) (Execution, error) {
	start := time.Now()
	return d.executeObserved(ctx, by, caseID, start)
}

func (d *Desk) observe(start time.Time, err error) {
	if d.ObserveGate == nil {
		return
	}
	check := ""
	var ge *change.GateError
	if errors.As(err, &ge) {
		check = ge.Check
	} else if err != nil {
		check = "error"
	}
	d.ObserveGate(time.Since(start), check)
}

func (d *Desk) executeObserved(ctx context.Context, by signoff.Actor, caseID string, start time.Time) (Execution, error) {
	if !staff(by) && by.Role != signoff.RoleSystem {
		return Execution{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not execute changes", by.Role)
	}
	if len(d.Key) == 0 {
		return Execution{}, signoff.Errorf(signoff.EUNAVAILABLE, "this server has no signing key, so it cannot write receipts; it executes nothing")
	}
	if !signoff.ValidID(signoff.PrefixCase, caseID) {
		return Execution{}, change.Check(change.GateInput{CaseID: caseID})
	}
	c, l, err := d.load(ctx, by, caseID)
	if err != nil {
		return Execution{}, err
	}
	rec, err := d.Store.GetPlan(ctx, sys(c.WorkspaceID), l.State.PlanID)
	if err != nil && l.State.PlanID != "" {
		return Execution{}, err
	}
	if l.State.PlanID == "" || l.State.ApprovedDigest == "" {
		return Execution{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s is %s: it has no approved plan to execute", caseID, c.State)}
	}
	// The lock is taken on the stored plan's target; if the stored plan
	// was edited, the gate's digest check refuses it below anyway.
	plan, err := change.DecodePlan(rec.Body)
	if err != nil {
		return Execution{}, d.refuse(ctx, c, by, "", "", &change.GateError{Check: change.CheckPlanDigest, Detail: "the stored plan no longer decodes: " + signoff.ErrorMessage(err)})
	}
	holder := signoff.NewID("lock")
	locked, err := d.lockTarget(ctx, c.WorkspaceID, plan.Target, holder)
	if err != nil {
		return Execution{}, err
	}
	if locked {
		defer d.unlock(ctx, c.WorkspaceID, plan.Target, holder)
	}
	return d.execute(ctx, by, caseID, locked, plan.Target, start)
}

// unlock releases a per-target lock, even when ctx is done.
func (d *Desk) unlock(ctx context.Context, ws, target, holder string) {
	if err := d.Store.UnlockTarget(context.WithoutCancel(ctx), sys(ws), target, holder); err != nil {
		d.log().ErrorContext(ctx, "release target lock", "target", target, "err", err)
	}
}

func (d *Desk) lockTTL() time.Duration {
	if d.LockTTL > 0 {
		return d.LockTTL
	}
	return DefaultLockTTL
}

// lockTarget waits up to LockWait for the per-target lock.
func (d *Desk) lockTarget(ctx context.Context, ws, target, holder string) (bool, error) {
	ttl, wait := d.lockTTL(), d.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	deadline := time.Now().Add(wait)
	for {
		ok, err := d.Store.LockTarget(ctx, sys(ws), target, holder, ttl)
		if err != nil || ok {
			return ok, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		t := time.NewTimer(time.Duration(20+rand.IntN(40)) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
	}
}

// execute is Execute once the lock is settled: everything is read again
// now, under the lock, so what the gate checks is what is applied.
func (d *Desk) execute(ctx context.Context, by signoff.Actor, caseID string, locked bool, lockedTarget string, start time.Time) (x Execution, err error) {
	gated := false
	defer func() {
		if !gated {
			d.observe(start, err)
		}
	}()
	c, l, err := d.load(ctx, by, caseID)
	if err != nil {
		return Execution{}, err
	}
	rec, err := d.Store.GetPlan(ctx, sys(c.WorkspaceID), l.State.PlanID)
	if err != nil {
		return Execution{}, err
	}
	plan, err := change.DecodePlan(rec.Body)
	if err != nil {
		return Execution{}, d.refuse(ctx, c, by, "", "", &change.GateError{Check: change.CheckPlanDigest, Detail: "the stored plan no longer decodes: " + signoff.ErrorMessage(err)})
	}
	pol, _, err := d.Policy(ctx, c.WorkspaceID)
	if err != nil {
		return Execution{}, err
	}
	gas, used, err := d.gateApprovals(ctx, c, l.State)
	if err != nil {
		var ge *change.GateError
		if errors.As(err, &ge) {
			err = d.refuse(ctx, c, by, plan.Target, "", err)
			return Execution{Case: d.unstick(ctx, c, l, plan, pol, ge)}, err
		}
		return Execution{}, err
	}
	now := d.now()
	in := change.GateInput{CaseID: c.ID, PlanID: rec.ID, Plan: plan, ApprovedDigest: l.State.ApprovedDigest,
		Approvals: gas, Quorum: pol.Quorum(), Proposer: rec.Proposer, Opener: l.State.Opener,
		PolicyDigest: pol.Digest(), ApprovedPolicyDigest: l.State.ApprovedPolicyDigest,
		TargetAllowed: pol.AllowsNow(plan.Target, now) == nil, Now: now, Preapproved: l.State.Preapproved}
	if locked {
		in.LockedTarget = lockedTarget
	}
	t, terr := change.ParseTarget(plan.Target)
	var act Actuator
	if terr == nil {
		act, terr = d.actuator(t.Kind)
	}
	sc := Scope{WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID, CaseID: c.ID}
	var before State
	if terr == nil {
		// An unreadable target leaves LiveBeforeState empty, which the
		// gate refuses without calling it drift.
		if before, err = act.Read(ctx, sc, t); err != nil {
			d.log().WarnContext(ctx, "read before-state", "case_id", c.ID, "target", plan.Target, "err", err)
		}
		in.LiveBeforeState = before.Digest
	}
	if err := change.Check(in); err != nil {
		var ge *change.GateError
		if errors.As(err, &ge) && ge.Drifted && c.State == workflow.ChangeApproved {
			st := l.State
			st.Refusals++
			_, c2, aerr := d.Store.AdvanceChange(context.WithoutCancel(ctx), sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "drift",
				Events: []signoff.LoopEvent{{Type: "gate.refused", Payload: refusalPayload(ge, by, plan.Target, before.Digest)}}})
			if aerr != nil {
				d.log().ErrorContext(ctx, "record drift", "case_id", c.ID, "err", aerr)
			} else {
				c = c2
			}
			return Execution{Case: c}, err
		}
		err = d.refuse(ctx, c, by, plan.Target, before.Digest, err)
		if ge != nil {
			// A lapsed approval, an expired plan or a new policy: the case
			// moves to where its next action is, instead of staying
			// approved with nothing the gate will ever pass.
			c = d.unstick(ctx, c, l, plan, pol, ge)
		}
		return Execution{Case: c}, err
	}
	if terr != nil {
		return Execution{Case: c}, terr
	}
	if ge := checkRunbookNetwork(plan, t, pol); ge != nil {
		return Execution{Case: c}, d.refuse(ctx, c, by, plan.Target, before.Digest, ge)
	}
	// The rollback rule's decision now, under the target's lock, for a
	// compensating case: the later changes it overwrites.
	var comp *change.CompensationDecision
	if l.State.Preapproved && c.State == workflow.ChangeApproved {
		// The pre-approval is the rollback rule's, decided at review: it
		// is decided again now, on what the target holds under the lock.
		dec, ge, err := d.recheckPreapproval(ctx, c, l.State, plan, before)
		if err != nil {
			return Execution{Case: c}, err
		}
		if ge != nil {
			err := d.refuse(ctx, c, by, plan.Target, before.Digest, ge)
			return Execution{Case: d.preapprovalLapsed(ctx, c, l, ge)}, err
		}
		comp = &dec
	}
	if l.State.RevertOf != "" && c.State == workflow.ChangeApproved {
		// Signed or pre-approved, a rollback runs only over the difference
		// it was approved on: a later change executed on the target since
		// (a runbook run, a file written and written back: the
		// before-state check cannot tell) sends it back for signatures.
		if comp == nil {
			dec, err := d.compensation(ctx, c.WorkspaceID, l.State.RevertOf, c.ID, plan, contentDigest(&before))
			if err != nil {
				return Execution{Case: c}, err
			}
			comp = &dec
		}
		if ge, payload := compensationMoved(l.State, *comp); ge != nil {
			err := d.refuse(ctx, c, by, plan.Target, before.Digest, ge)
			return Execution{Case: d.compensationChanged(ctx, c, l, payload)}, err
		}
	}
	if c.State != workflow.ChangeApproved {
		return Execution{Case: c}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s is %s, not approved", c.ID, c.State)}
	}
	action, err := change.ActionDigest(plan, pol.Digest())
	if err != nil {
		return Execution{Case: c}, err
	}
	body := ReceiptBody{Case: c.ID, PlanID: rec.ID, PlanDigest: l.State.ApprovedDigest, ActionDigest: action, PolicyDigest: pol.Digest(),
		Kind: plan.Kind, Target: plan.Target, Approvals: used, Preapproved: l.State.Preapproved, Executor: by.ID,
		GateChecks: change.GateChecks, Before: before, StartedAt: now, RevertOf: l.State.RevertOf}
	// The approvals are consumed with the move to executing, in one
	// transaction: a second execution racing this one fails here, naming
	// the consumed approval, even though both passed the checks above.
	ids := make([]string, 0, len(used))
	for _, a := range used {
		ids = append(ids, a.ID)
	}
	// The watchdog settles the case if this process stops before it
	// records the outcome: it runs after the health window and the lock's
	// lease, and does nothing if the case has moved on.
	watch := signoff.JobRequest{Args: signoff.ExecutionWatchdogJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID, PlanID: rec.ID},
		At: now.Add(time.Duration(plan.HealthCheck.WindowSeconds)*time.Second + d.lockTTL() + time.Minute)}
	l, c, err = d.Store.AdvanceChange(ctx, by, signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: "execute", Consume: ids,
		Jobs: []signoff.JobRequest{watch},
		Events: []signoff.LoopEvent{{Type: "gate.passed", Payload: map[string]any{"plan_id": rec.ID, "plan_digest": body.PlanDigest,
			"action_digest": action, "policy_digest": body.PolicyDigest, "before_state_digest": before.Digest, "approvals": ids,
			"preapproved": body.Preapproved, "checks": change.GateChecks, "executor": by.ID}}}})
	if err != nil {
		var ge *change.GateError
		if errors.As(err, &ge) {
			return Execution{Case: c}, d.refuse(ctx, c, by, plan.Target, before.Digest, ge)
		}
		return Execution{Case: c}, err
	}
	gated = true
	d.observe(start, nil)
	// From here on the change is happening: a client that goes away does
	// not stop it halfway.
	ctx = context.WithoutCancel(ctx)
	var later []change.LaterChange
	if comp != nil {
		later = comp.Later
	}
	return d.apply(ctx, c, l, act, sc, plan, body, later)
}

// apply runs the actuator, the health check and, when that fails, the
// restore; then signs the receipt and records the outcome. later are, for
// a compensating rollback, the later changes it writes over (the rule's
// list at the gate).
func (d *Desk) apply(ctx context.Context, c signoff.Case, l signoff.ChangeLoop, act Actuator, sc Scope, plan change.Plan, body ReceiptBody, later []change.LaterChange) (Execution, error) {
	after, err := act.Apply(ctx, sc, plan, body.Before)
	body.AppliedAt = d.now()
	applied := err == nil
	if err != nil {
		body.ApplyError = signoff.ErrorMessage(err)
		body.Health = HealthReport{Passed: false, Probes: []Probe{{At: body.AppliedAt, OK: false, Detail: "apply failed: " + body.ApplyError}}}
		// A failed apply may still have changed something (a runbook
		// that exited non-zero returns its state and output); otherwise
		// read what is there.
		if after.Digest == "" {
			if cur, rerr := act.Read(ctx, sc, mustTarget(plan.Target)); rerr == nil {
				after = cur
			}
		}
	} else {
		body.Health = RunHealth(ctx, plan.HealthCheck, d.Health, d.sleep)
	}
	if after.Digest != "" {
		body.After = &after
	}
	outcome, command := OutcomeExecuted, "complete"
	if err != nil && signoff.ErrorCode(err) == signoff.ECONFLICT && !errors.Is(err, ErrRunbookFailed) {
		// The actuator's compare-and-swap refused: someone wrote the
		// target after the gate read it, and nothing of this plan was
		// applied. Restoring now would overwrite their write.
		outcome, command = OutcomeDrifted, "drift"
	} else if !body.Health.Passed {
		// A runbook's state is its script, which running does not change:
		// one that ran and failed may have done anything, so it counts as
		// applied.
		changed := applied || (after.Digest != "" && after.Digest != body.Before.Digest) || errors.Is(err, ErrRunbookFailed)
		switch {
		case !changed:
			// Nothing was applied: the before-state stands.
			outcome, command = OutcomeRolledBack, "rollback"
			b := body.Before
			body.Restored = &b
		case !hasRollback(plan):
			outcome, command = OutcomeRestoreFailed, ""
			body.RestoreError = "the plan has no rollback"
		default:
			restored, rerr := act.Restore(ctx, sc, plan, after)
			if rerr != nil {
				outcome, command = OutcomeRestoreFailed, ""
				body.RestoreError = signoff.ErrorMessage(rerr)
			} else {
				outcome, command = OutcomeRolledBack, "rollback"
				body.Restored = &restored
			}
		}
	}
	body.Outcome = outcome
	if body.RevertOf != "" && outcome == OutcomeExecuted {
		if orig, err := d.originalBefore(ctx, c.WorkspaceID, body.RevertOf); err == nil {
			match := orig.Content == after.Content
			body.OriginalContentDigest, body.RestoredContentDigest, body.RestoredMatchesOriginal = orig.Content, after.Content, &match
		} else {
			d.log().WarnContext(ctx, "original receipt", "case_id", body.RevertOf, "err", err)
		}
	}
	body.FinishedAt = d.now()
	kind := signoff.ReceiptExecute
	if body.RevertOf != "" {
		kind = signoff.ReceiptRollback
	}
	rcpt, err := d.sign(c, kind, body)
	if err != nil {
		return Execution{Case: c}, err
	}
	u := signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: command, Receipts: []signoff.Receipt{rcpt},
		Events: []signoff.LoopEvent{{Type: "change." + outcome, Payload: map[string]any{"receipt_id": rcpt.ID, "receipt_digest": rcpt.Digest,
			"health_passed": body.Health.Passed, "before_state_digest": body.Before.Digest, "after_state_digest": stateDigest(body.After),
			"restored_state_digest": stateDigest(body.Restored), "apply_error": body.ApplyError, "restore_error": body.RestoreError}}}}
	u.State.Receipts = append(append([]string{}, u.State.Receipts...), rcpt.ID)
	// The original is reverted only when its before-state is back.
	if command == "complete" && body.RevertOf != "" && body.RestoredMatchesOriginal != nil && *body.RestoredMatchesOriginal {
		u.Revert = body.RevertOf
	}
	_, c, err = d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), u)
	if err != nil {
		return Execution{Case: c, Outcome: outcome, Receipt: rcpt, Predicate: body}, fmt.Errorf("record outcome %s of %s: %w", outcome, c.ID, err)
	}
	if body.RevertOf != "" && outcome == OutcomeExecuted {
		// A signed rollback over later changes: they no longer stand.
		d.markOverwritten(ctx, c, l.State, later, rcpt)
	}
	if outcome == OutcomeRestoreFailed {
		return Execution{Case: c, Outcome: outcome, Receipt: rcpt, Predicate: body},
			&signoff.Error{Code: signoff.EUNAVAILABLE, State: c.State, Message: fmt.Sprintf("the health check failed and the before-state could not be restored (%s): a person must restore %s", body.RestoreError, plan.Target)}
	}
	return Execution{Case: c, Outcome: outcome, Receipt: rcpt, Predicate: body}, nil
}

func mustTarget(s string) change.Target {
	t, _ := change.ParseTarget(s)
	return t
}

func hasRollback(p change.Plan) bool {
	return len(p.Rollback) > 0 && string(p.Rollback) != "null"
}

func stateDigest(s *State) string {
	if s == nil {
		return ""
	}
	return s.Digest
}

// checkRunbookNetwork refuses a runbook plan that asks for the network
// when the policy in force does not grant it to that runbook.
func checkRunbookNetwork(p change.Plan, t change.Target, pol change.Policy) *change.GateError {
	if t.Kind != change.KindRunbook {
		return nil
	}
	var params struct {
		Network bool `json:"network"`
	}
	_ = json.Unmarshal(p.Params, &params)
	if params.Network && !pol.Runbooks[t.Name].Network {
		return &change.GateError{Check: change.CheckTargetAllowed, Detail: fmt.Sprintf("runbook %s asks for the network, which the policy does not grant it", t.Name)}
	}
	return nil
}

// gateApprovals returns the approvals the quorum was made of, as the gate
// sees them now (signature re-verified, key and approver still active,
// consumed or not), and their receipt form.
func (d *Desk) gateApprovals(ctx context.Context, c signoff.Case, st signoff.ChangeLoopState) ([]change.GateApproval, []ReceiptApproval, error) {
	if st.Preapproved {
		return nil, nil, nil
	}
	all, err := d.Store.ListApprovals(ctx, sys(c.WorkspaceID), c.ID)
	if err != nil {
		return nil, nil, err
	}
	byID := map[string]signoff.Approval{}
	for _, a := range all {
		byID[a.ID] = a
	}
	var gas []change.GateApproval
	var used []ReceiptApproval
	for _, id := range st.ApprovalIDs {
		a, ok := byID[id]
		if !ok {
			return nil, nil, &change.GateError{Check: change.CheckIDFormat, Detail: fmt.Sprintf("approval %s is not stored for this case", id)}
		}
		ga := change.GateApproval{ID: a.ID, Approver: a.ApproverID, Decision: a.Decision, ExpiresAt: a.ExpiresAt,
			Consumed: a.Status == signoff.ApprovalConsumed, SubjectDigest: a.SubjectDigest, PolicyDigest: a.PolicyDigest}
		if a.Status == signoff.ApprovalVoided {
			// Its key was revoked or its approver disabled: enabling the
			// person again does not bring it back.
			return nil, nil, &change.GateError{Check: change.CheckSignature, Detail: fmt.Sprintf("approval %s was voided (its key was revoked or its approver disabled); it no longer counts: the plan needs a new signature", a.ID)}
		}
		if a.Status == signoff.ApprovalSuperseded {
			// Only a policy change voids an approval of the approved plan
			// (a new plan clears the quorum): it no longer counts, even
			// if the same policy is set again.
			return nil, nil, &change.GateError{Check: change.CheckPolicyDigest, Detail: fmt.Sprintf("approval %s was voided when the change policy changed; it no longer counts, even under the same policy again: the plan needs a new signature", a.ID)}
		}
		ga.SignatureValid, ga.KeyRegistered = d.verifyStored(ctx, c, a)
		gas = append(gas, ga)
		used = append(used, ReceiptApproval{ID: a.ID, Approver: a.ApproverID, KeyID: a.KeyID, Via: a.Via, SubjectDigest: a.SubjectDigest})
	}
	return gas, used, nil
}

// verifyStored re-verifies a stored approval's envelope: the statement
// must be what the row says, signed by a registered, unrevoked key of an
// active approver.
func (d *Desk) verifyStored(ctx context.Context, c signoff.Case, a signoff.Approval) (sigOK, keyOK bool) {
	// Either kind of envelope: a DSSE one signed with an Ed25519 key or a
	// passkey assertion over the statement's digest (approval.VerifyRecord).
	if a.CaseID != c.ID {
		return false, false
	}
	k, err := d.Store.GetKey(ctx, c.WorkspaceID, a.KeyID)
	if err != nil || approval.VerifyRecord(a, k) != nil {
		return false, false
	}
	act, err := d.Store.GetActor(ctx, c.WorkspaceID, a.ApproverID)
	return true, k.RevokedAt == nil && k.ActorID == a.ApproverID && err == nil && act.DisabledAt == nil
}

func refusalPayload(ge *change.GateError, by signoff.Actor, target, live string) map[string]any {
	return map[string]any{"check": ge.Check, "detail": ge.Detail, "drifted": ge.Drifted, "by": by.ID, "target": target, "live_before_state_digest": live}
}

// refuse records a gate refusal on the case's ledger and returns it.
func (d *Desk) refuse(ctx context.Context, c signoff.Case, by signoff.Actor, target, live string, err error) error {
	var ge *change.GateError
	if !errors.As(err, &ge) {
		return err
	}
	if aerr := d.Store.AppendChangeEvents(context.WithoutCancel(ctx), sys(c.WorkspaceID), c.ID,
		[]signoff.LoopEvent{{Type: "gate.refused", Payload: refusalPayload(ge, by, target, live)}}); aerr != nil {
		d.log().ErrorContext(ctx, "record gate refusal", "case_id", c.ID, "check", ge.Check, "err", aerr)
	}
	return err
}

// sign makes a receipt: an in-toto statement over the plan, wrapped in a
// DSSE envelope signed with the server's key.
func (d *Desk) sign(c signoff.Case, kind string, body ReceiptBody) (signoff.Receipt, error) {
	pred, err := json.Marshal(body)
	if err != nil {
		return signoff.Receipt{}, err
	}
	st := evidence.Statement{Type: evidence.StatementType, PredicateType: ReceiptPredicate, Predicate: pred,
		Subject: []evidence.Subject{{Name: "plan/" + body.PlanID, Digest: evidence.DigestSet{SHA256: body.PlanDigest}}}}
	payload, err := json.Marshal(st)
	if err != nil {
		return signoff.Receipt{}, err
	}
	env := evidence.Sign(evidence.PayloadType, payload, d.Key)
	raw, err := json.Marshal(env)
	if err != nil {
		return signoff.Receipt{}, err
	}
	sum := sha256.Sum256(payload)
	return signoff.Receipt{ID: signoff.NewID(signoff.PrefixReceipt), WorkspaceID: c.WorkspaceID, CaseID: c.ID, Kind: kind,
		Envelope: raw, Digest: hex.EncodeToString(sum[:]), CreatedAt: d.now()}, nil
}

// OpenReceipt decodes a receipt's statement and predicate and checks its
// signature under
// pub; with no key it only decodes (the receipt was read from the store,
// which the server trusts).
func OpenReceipt(r signoff.Receipt, pub ed25519.PublicKey) (ReceiptBody, error) {
	env, payload, err := evidence.DecodeEnvelope(r.Envelope)
	if err != nil {
		return ReceiptBody{}, err
	}
	if len(pub) > 0 {
		if _, err := env.Verify(payload, []ed25519.PublicKey{pub}); err != nil {
			return ReceiptBody{}, err
		}
	}
	var st evidence.Statement
	if err := json.Unmarshal(payload, &st); err != nil {
		return ReceiptBody{}, err
	}
	if st.PredicateType != ReceiptPredicate {
		return ReceiptBody{}, fmt.Errorf("receipt predicate type %q", st.PredicateType)
	}
	var b ReceiptBody
	err = json.Unmarshal(st.Predicate, &b)
	return b, err
}

// originalBefore returns the before-state recorded by the execute receipt
// of an executed change case.
func (d *Desk) originalBefore(ctx context.Context, ws, caseID string) (State, error) {
	rs, err := d.Store.ListReceipts(ctx, sys(ws), caseID)
	if err != nil {
		return State{}, err
	}
	for i := len(rs) - 1; i >= 0; i-- {
		b, err := OpenReceipt(rs[i], nil)
		if err != nil {
			return State{}, err
		}
		if b.Outcome == OutcomeExecuted {
			return b.Before, nil
		}
	}
	return State{}, signoff.Errorf(signoff.ENOTFOUND, "case %s has no receipt of an executed change", caseID)
}
