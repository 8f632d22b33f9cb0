package change

import (
	"fmt"
	"strings"
)

// Compensation verdicts: what a rollback of an executed change needs.
const (
	// CompensationPreapproved: the exact inverse of what ran, on exactly
	// what it left, of a kind the policy pre-approves. It runs without a
	// new signature (the gate still checks everything else).
	CompensationPreapproved = "preapproved"
	// CompensationNeedsApproval: an ordinary plan that people sign, with
	// the reason (and the difference from what the original left) shown.
	CompensationNeedsApproval = "needs_approval"
	// CompensationRefused: no compensating case is opened.
	CompensationRefused = "refused"
)

// Original states a compensation decision distinguishes (the change
// workflow's names; package workflow is not imported to keep this pure).
const (
	origExecuted = "executed"
	origReverted = "reverted"
)

// LaterChange is an executed change that wrote the original's target
// after the original did, and whose effect still stands.
type LaterChange struct {
	CaseID string `json:"case_id"`
	Title  string `json:"title,omitempty"`
	// AfterStateDigest is the content digest of what that change left.
	AfterStateDigest string `json:"after_content_digest,omitempty"`
	// ReceiptID is the receipt of that change's execution counted: a
	// case planned again after it drifted runs again under the same id,
	// and signatures shown its first run do not cover its second.
	ReceiptID string `json:"receipt_id,omitempty"`
}

// CompensationInput is everything the rule looks at. The desk gathers it;
// the rule itself reads nothing.
type CompensationInput struct {
	// OriginalState is the original case's state; only an executed
	// change has something to compensate.
	OriginalState string
	// OriginalKind is the original plan's kind (flag, file, runbook).
	OriginalKind string
	// OriginalIsCompensation: the original itself reverted another change
	// (its revert_of is set). Undoing it re-applies that change.
	OriginalIsCompensation bool
	// HasRollback: the original plan names a rollback.
	HasRollback bool
	// ActiveCompensation is a compensating case of the original that is
	// still open or executed ("" when none, or when the last one ended
	// without executing).
	ActiveCompensation string
	// RecordedAfterDigest is the content digest of the after-state the
	// original's receipt recorded; LiveDigest the target's content digest
	// now ("" when unreadable). Content, not state: a flag's state digest
	// includes its version, which a change written and restored by a
	// failed health check moves without changing what the flag holds.
	RecordedAfterDigest string
	LiveDigest          string
	// Later are the executed changes of the same target after the
	// original, whose effect still stands.
	Later []LaterChange
	// ExactInverse: the compensating plan applies the original's own
	// rollback to the original's target. False for a re-planned case.
	ExactInverse bool
}

// CompensationDecision is the verdict with what a person needs to see.
type CompensationDecision struct {
	Verdict string `json:"verdict"`
	// Reason says why, in a sentence a person can act on.
	Reason string `json:"reason"`
	// The difference between what the original left and what is there now.
	RecordedAfterDigest string        `json:"recorded_after_content_digest,omitempty"`
	LiveDigest          string        `json:"live_content_digest,omitempty"`
	Later               []LaterChange `json:"later_changes,omitempty"`
}

// Preapproved reports whether the compensation needs no signature.
func (d CompensationDecision) Preapproved() bool { return d.Verdict == CompensationPreapproved }

// Compensate decides what a rollback of an executed change needs.
// Compensation means exactly the inverse of what ran, on exactly what it
// left: it is pre-approved only when the policy pre-approves rollbacks of
// the kind, the target is in the state the original recorded, no later
// change still standing wrote the target, the original is not itself a
// compensation and the plan is the original's own rollback. Anything
// else that can still be undone is an ordinary plan that needs
// signatures; what cannot be (nothing executed, already reverted, no
// rollback, a compensation already under way) is refused.
func Compensate(in CompensationInput, pol Policy) CompensationDecision {
	d := CompensationDecision{RecordedAfterDigest: in.RecordedAfterDigest, LiveDigest: in.LiveDigest, Later: in.Later}
	refuse := func(format string, a ...any) CompensationDecision {
		return CompensationDecision{Verdict: CompensationRefused, Reason: fmt.Sprintf(format, a...)}
	}
	switch {
	case in.OriginalState == origReverted:
		return refuse("the change is already reverted; to change the target again, open a change request")
	case in.OriginalState != origExecuted:
		return refuse("the change is %s, not executed: there is nothing to compensate", orNone(in.OriginalState))
	case in.ActiveCompensation != "":
		return refuse("compensating change %s is still open or executed; finish it first (a rollback can be requested again once it ends without executing)", in.ActiveCompensation)
	case !in.HasRollback:
		return refuse("the change's plan has no rollback; a person must write a change request that undoes it")
	}
	var why []string
	if in.OriginalIsCompensation {
		// Undoing a rollback re-applies the change it undid: that is a
		// new decision, never a pre-approved one.
		why = append(why, "the change is itself a compensating rollback: undoing it re-applies the change it undid")
	}
	if len(in.Later) > 0 {
		ids := make([]string, 0, len(in.Later))
		for _, l := range in.Later {
			ids = append(ids, l.CaseID)
		}
		why = append(why, fmt.Sprintf("later executed changes wrote the target since (%s): the rollback would overwrite them", strings.Join(ids, ", ")))
	}
	switch {
	case in.LiveDigest == "":
		why = append(why, "the target's live state could not be read")
	case in.LiveDigest != in.RecordedAfterDigest:
		why = append(why, fmt.Sprintf("the target holds %s now, not what the change left, %s", short(in.LiveDigest), orNone(short(in.RecordedAfterDigest))))
	}
	if !in.ExactInverse {
		why = append(why, "the plan is not the change's own rollback on its target")
	}
	if !pol.RollbackPreapproved(in.OriginalKind) {
		why = append(why, fmt.Sprintf("the policy does not pre-approve %s rollbacks", orNone(in.OriginalKind)))
	}
	if len(why) > 0 {
		d.Verdict, d.Reason = CompensationNeedsApproval, "needs signatures: "+strings.Join(why, "; ")
		return d
	}
	d.Verdict = CompensationPreapproved
	d.Reason = fmt.Sprintf("the exact inverse of the change on the state it left, and preapproved_rollbacks includes %s", in.OriginalKind)
	return d
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
