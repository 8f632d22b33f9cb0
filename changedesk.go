package signoff

import (
	"context"
	"encoding/json"
	"time"
)

// The change desk's records (SPEC section 4). A change case holds one
// change loop: the request, the plans drafted for it (every edit is a new
// plan with a new digest), the review of the current plan, the receipts of
// what the gate executed. Package change holds the pure rules; package
// changedesk runs them against the store and the actuators.

// Id prefixes of the change desk.
const (
	PrefixReceipt = "rcpt"
	// PrefixPlan is the id prefix of a stored plan (change.PrefixPlan).
	PrefixPlan = "plan"
)

// Receipt kinds.
const (
	ReceiptExecute  = "execute"  // the gate applied a plan (health passed or not)
	ReceiptRollback = "rollback" // a compensating change restored an earlier state
	ReceiptBypass   = "bypass"   // an emergency direct write under the policy's bypass
)

// ChangePolicy is a workspace's stored change policy: the YAML as written
// and the digest of its parsed form (change.Policy.Digest), which every
// approval names.
type ChangePolicy struct {
	WorkspaceID string    `json:"workspace_id"`
	YAML        string    `json:"yaml"`
	Digest      string    `json:"digest"`
	Version     int64     `json:"version"`
	UpdatedAt   time.Time `json:"updated_at"`
	UpdatedBy   string    `json:"updated_by"`
}

// ChangePlan is one stored plan. Body is the plan's canonical JSON
// (change.Canonical) exactly as drafted; the gate decodes it and
// recomputes its digest at execution time, so an edit of the stored row
// is caught there, not trusted.
type ChangePlan struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	CaseID      string          `json:"case_id"`
	Body        json.RawMessage `json:"body"`
	Digest      string          `json:"digest"`
	// Proposer is the actor that drafted it; Via how: "builtin" (the
	// template planner), "model" (a model through the agent runtime),
	// "mcp" (an external agent), "human" or "rollback" (a compensating
	// plan derived from an executed one).
	Proposer  string    `json:"proposer"`
	Via       string    `json:"via"`
	CreatedAt time.Time `json:"created_at"`
}

// ChangeLoopState is the change desk's record of one change case.
type ChangeLoopState struct {
	Reason string `json:"reason"`
	// Opener is the actor that opened the request (for no-self-approval).
	Opener string `json:"opener"`
	// Incident, when set, is the case id of the incident that prompted it.
	Incident string `json:"incident,omitempty"`
	// RevertOf is the change case this one compensates; RevertedBy the
	// compensating case of this one.
	RevertOf   string `json:"revert_of,omitempty"`
	RevertedBy string `json:"reverted_by,omitempty"`
	// Compensation is, on a compensating case, the rollback rule's
	// decision for its current plan (change.CompensationDecision): why it
	// is pre-approved or needs signatures, and the difference between
	// what the original left and the live state.
	Compensation json.RawMessage `json:"compensation,omitempty"`
	// OverwrittenBy lists the compensating cases of earlier changes that
	// wrote over this change's effect: it no longer stands.
	OverwrittenBy []string `json:"overwritten_by,omitempty"`
	// PlanID and PlanDigest name the current plan.
	PlanID     string `json:"plan_id,omitempty"`
	PlanDigest string `json:"plan_digest,omitempty"`
	// Review is the deterministic review (change.Result) of the current
	// plan under PolicyDigest; ReviewNote an optional advisory note.
	Review       json.RawMessage `json:"review,omitempty"`
	ReviewNote   string          `json:"review_note,omitempty"`
	PolicyDigest string          `json:"policy_digest,omitempty"`
	// PolicyYAML is the policy's text as reviewed, so the case's evidence
	// carries the policy its digest names after the workspace's changes.
	PolicyYAML string `json:"policy_yaml,omitempty"`
	// ApprovedDigest and ApprovedPolicyDigest are what the quorum approved
	// (or the desk pre-approved); ApprovalIDs the approvals that made the
	// quorum, which the gate consumes.
	ApprovedDigest       string   `json:"approved_digest,omitempty"`
	ApprovedPolicyDigest string   `json:"approved_policy_digest,omitempty"`
	ApprovalIDs          []string `json:"approval_ids,omitempty"`
	// Preapproved: a compensating rollback the policy lets run without a
	// new approval (policy preapproved_rollbacks).
	Preapproved bool `json:"preapproved,omitempty"`
	// Bypass is set on the record of an emergency bypass: a direct flag
	// write the policy allowed without approval, until BypassUntil.
	Bypass      bool       `json:"bypass,omitempty"`
	BypassUntil *time.Time `json:"bypass_until,omitempty"`
	// Refusals counts the gate's refusals of this case.
	Refusals int `json:"refusals,omitempty"`
	// Receipts lists the ids of the case's receipts, oldest first.
	Receipts []string `json:"receipts,omitempty"`
}

// ChangeLoop is a change case's loop record; Version is its
// compare-and-swap token.
type ChangeLoop struct {
	CaseID      string          `json:"case_id"`
	WorkspaceID string          `json:"workspace_id"`
	ProjectID   string          `json:"project_id"`
	Version     int64           `json:"version"`
	State       ChangeLoopState `json:"state"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

// Receipt is a DSSE-signed statement of what the gate did. Envelope is the
// DSSE envelope; Digest the SHA-256 of its payload.
type Receipt struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	CaseID      string          `json:"case_id"`
	Kind        string          `json:"kind"`
	Envelope    json.RawMessage `json:"envelope"`
	Digest      string          `json:"digest"`
	CreatedAt   time.Time       `json:"created_at"`
}

// ChangeUpdate is one atomic step of a change loop: the loop record (by
// compare-and-swap on Version; 0 creates it), an optional new plan, an
// optional transition, ledger events, consumed approvals, receipts and
// jobs, all committed together or not at all.
type ChangeUpdate struct {
	CaseID  string
	Version int64
	State   ChangeLoopState
	// Plan, when set, is stored as a new plan of the case (its id must be
	// new, ECONFLICT otherwise; its CaseID u's; the store keeps Body as
	// given and does not recompute Digest; CreatedAt is the store's
	// clock). State.PlanID and State.PlanDigest must name it. Whenever
	// State.PlanID is set it must name a stored plan of the case with
	// digest State.PlanDigest (EINVALID otherwise).
	Plan    *ChangePlan
	Command string
	Note    string
	Events  []LoopEvent
	// Consume marks these approvals used. Each must be valid, for this
	// case and unexpired, or the whole update fails naming the approval:
	// a *change.GateError (Check change.CheckConsumed) when it was already
	// consumed, (change.CheckExpired) when it expired, else ECONFLICT.
	// Approvals are consumed before the version is compared, so racing
	// executions of one approval queue on it and every loser is told it
	// was consumed: this is what makes one approval execute once.
	Consume  []string
	Receipts []Receipt
	// Revert, when set, is an executed change case of the workspace that
	// moves to reverted in the same transaction, as the server (a
	// compensating change completed). State.RevertOf must equal it; its
	// loop (if any) gets RevertedBy = CaseID and its version moves on.
	// ECONFLICT (carrying its state) when it is not executed.
	Revert string
	Jobs   []JobRequest
}

// BypassExpiryJob ends an emergency bypass: at its scheduled time it
// restores the flag's previous value if the flag still holds what the
// bypass wrote (nobody has changed it through the desk since).
type BypassExpiryJob struct {
	WorkspaceID string `json:"workspace_id"`
	CaseID      string `json:"case_id"`
}

func (BypassExpiryJob) Kind() string { return "change_bypass_expiry" }

// PlanExpiryJob moves a case whose plan was never executed to expired
// when the plan's expires_at passes.
type PlanExpiryJob struct {
	WorkspaceID string `json:"workspace_id"`
	CaseID      string `json:"case_id"`
	PlanID      string `json:"plan_id"`
	// Lapse: the job runs when the quorum's first approval expires, to
	// send an approved case back for a new signature.
	Lapse bool `json:"lapse,omitempty"`
}

func (PlanExpiryJob) Kind() string { return "change_plan_expiry" }

// ExecutionWatchdogJob looks at an execution after its health window: if
// the case is still executing, the process that ran it stopped (or could
// not restore), and the desk settles it from the target's live state.
type ExecutionWatchdogJob struct {
	WorkspaceID string `json:"workspace_id"`
	CaseID      string `json:"case_id"`
	PlanID      string `json:"plan_id"`
}

func (ExecutionWatchdogJob) Kind() string { return "change_execution_watchdog" }

// ChangeService stores the change desk's records.
type ChangeService interface {
	// GetChangePolicy returns the workspace's policy; ENOTFOUND when none
	// was set (the desk then denies everything).
	GetChangePolicy(ctx context.Context, by Actor) (ChangePolicy, error)
	// SetChangePolicy parses, validates and stores the policy YAML (owner
	// or server). expectedVersion is the version replaced (0 when none);
	// ECONFLICT when it moved on, EINVALID for a bad policy. Every
	// approval made under the old digest stops counting at the gate.
	// digestOf is the parser (change.PolicyDigest); without it nothing is
	// stored.
	SetChangePolicy(ctx context.Context, by Actor, yaml string, expectedVersion int64, digestOf PolicyDigester) (ChangePolicy, error)

	// GetChangeLoop returns ENOTFOUND when the case has no loop yet.
	GetChangeLoop(ctx context.Context, by Actor, caseID string) (ChangeLoop, error)
	// ListChangeLoops lists a project's change loops whose case is in one
	// of states (all when empty), oldest first.
	ListChangeLoops(ctx context.Context, by Actor, projectID string, states ...string) ([]ChangeLoop, error)
	// AdvanceChange applies u atomically (see ChangeUpdate).
	AdvanceChange(ctx context.Context, by Actor, u ChangeUpdate) (ChangeLoop, Case, error)
	// AppendChangeEvents records events on a change case without moving
	// it (the gate's refusals). Server only.
	AppendChangeEvents(ctx context.Context, by Actor, caseID string, events []LoopEvent) error

	// GetPlan returns a plan as by may see its case.
	GetPlan(ctx context.Context, by Actor, planID string) (ChangePlan, error)
	// ListPlans lists a case's plans, oldest first.
	ListPlans(ctx context.Context, by Actor, caseID string) ([]ChangePlan, error)
	// ListReceipts lists a case's receipts, oldest first.
	ListReceipts(ctx context.Context, by Actor, caseID string) ([]Receipt, error)
	// GetReceipt returns one receipt.
	GetReceipt(ctx context.Context, by Actor, id string) (Receipt, error)

	// LockTarget takes the per-target lock of a workspace's target for
	// holder until ttl from now, if it is free or its lease expired. It
	// reports whether holder has it. Server only. The lock lives in the
	// database, so it holds across processes.
	LockTarget(ctx context.Context, by Actor, target, holder string, ttl time.Duration) (bool, error)
	// UnlockTarget releases the lock if holder has it.
	UnlockTarget(ctx context.Context, by Actor, target, holder string) error
}
