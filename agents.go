package signoff

import (
	"context"
	"encoding/json"
	"time"
)

// Evidence types (SPEC principle 7). A type is never upgraded: a record made
// from an authored fixture stays authored wherever it is shown.
const (
	EvidenceLive      = "live"      // executed here
	EvidenceReplayed  = "replayed"  // recorded model output played back
	EvidenceAuthored  = "authored"  // human-written fixture
	EvidenceSimulated = "simulated" // demo stand-in
)

// ValidEvidence reports whether t is one of the four evidence types.
func ValidEvidence(t string) bool {
	switch t {
	case EvidenceLive, EvidenceReplayed, EvidenceAuthored, EvidenceSimulated:
		return true
	}
	return false
}

// Task statuses. A task is open until its agent records a result; recorded
// while the agent still has to hand it on; then closed with an outcome.
const (
	TaskOpen     = "open"
	TaskRecorded = "recorded"
	TaskClosed   = "closed"
)

// Task outcomes, set when a task closes.
const (
	OutcomeDone       = "done"        // result recorded; nothing to hand on
	OutcomeHandedOff  = "handed_off"  // result recorded and the next task opened
	OutcomeNeedsHuman = "needs_human" // turns, budget or attempts ran out, or the agent gave up
	OutcomeCancelled  = "cancelled"   // a person or the server withdrew it
)

// Task is a server-issued assignment of one step to one agent identity. Its
// id is the receipt the agent quotes; InputDigest is the SHA-256 of the
// canonical JSON of Input, so a submission made against inputs that have
// since changed is refused.
type Task struct {
	ID          string          `json:"id"`
	WorkspaceID string          `json:"workspace_id"`
	CaseID      string          `json:"case_id"`
	Kind        string          `json:"kind"`
	Role        Role            `json:"role"`
	AssigneeID  string          `json:"assignee_id"`
	Input       json.RawMessage `json:"input"`
	InputDigest string          `json:"input_digest"`
	Status      string          `json:"status"`
	Outcome     string          `json:"outcome,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	Output      json.RawMessage `json:"output,omitempty"`
	// OutputDigest is the SHA-256 of the canonical JSON of Output.
	OutputDigest string `json:"output_digest,omitempty"`
	// Evidence is the type of the recorded output (live, replayed,
	// authored, simulated); empty until a result is recorded.
	Evidence string `json:"evidence,omitempty"`
	// ParentID is the task that handed off to this one, if any.
	ParentID  string     `json:"parent_id,omitempty"`
	CreatedBy string     `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	ClosedAt  *time.Time `json:"closed_at,omitempty"`
	// ReceiptSeq is the ledger sequence of the event that recorded the
	// result (0 until then).
	ReceiptSeq int64 `json:"receipt_seq,omitempty"`
}

// TaskInput opens a task. AssigneeID names an agent actor of Role in the
// case's workspace; empty picks the role's agent (ENOTFOUND when the
// workspace has none, ECONFLICT when it has several and none is named).
type TaskInput struct {
	CaseID     string          `json:"case_id"`
	Kind       string          `json:"kind"`
	Role       Role            `json:"role"`
	AssigneeID string          `json:"assignee_id,omitempty"`
	Input      json.RawMessage `json:"input"`
}

// TaskFilter selects tasks. Agents always see only their own.
type TaskFilter struct {
	Status     string
	CaseID     string
	AssigneeID string
	Role       Role
	Limit      int
}

// Submission records an agent's result on a task. TaskID and InputDigest are
// the receipt: the task must be open, assigned to the caller, and still
// have exactly that input digest.
type Submission struct {
	TaskID      string          `json:"task_id"`
	InputDigest string          `json:"input_digest"`
	Output      json.RawMessage `json:"output"`
	Evidence    string          `json:"evidence"`
	// Final closes the task as done at once (roles with nowhere to hand
	// off); otherwise the task waits, recorded, for the handoff.
	Final bool `json:"final,omitempty"`
}

// Handoff closes a recorded task and opens the next one for role To. The
// allowed targets are the agent runtime's business (role configuration);
// the store only records what it was asked.
type Handoff struct {
	TaskID      string          `json:"task_id"`
	InputDigest string          `json:"input_digest"`
	To          Role            `json:"to"`
	Reason      string          `json:"reason"`
	Kind        string          `json:"kind"`
	Input       json.RawMessage `json:"input"`
}

// TaskService issues tasks and takes results against them. Every refusal
// leaves the ledger unchanged.
type TaskService interface {
	// CreateTask opens a task. Only people (owner, operator) and the server
	// itself create tasks directly; agents reach new tasks through handoffs
	// and addressing. ENOTFOUND for an unknown case or assignee.
	CreateTask(ctx context.Context, by Actor, in TaskInput) (Task, error)
	// GetTask returns ENOTFOUND for a task outside by's workspace and, for
	// an agent, for a task assigned to another identity.
	GetTask(ctx context.Context, by Actor, id string) (Task, error)
	// ListTasks lists tasks newest first; agents see only their own.
	ListTasks(ctx context.Context, by Actor, f TaskFilter) ([]Task, error)
	// SubmitTask records a result against the receipt. EFORBIDDEN when the
	// task is assigned to another identity, ECONFLICT when it is not open
	// (closed, already recorded: a replay) or its input digest differs.
	SubmitTask(ctx context.Context, by Actor, s Submission) (Task, error)
	// HandoffTask closes a recorded task as handed off and opens the next.
	// Same refusals as SubmitTask, except the task must be recorded.
	HandoffTask(ctx context.Context, by Actor, h Handoff) (closed, next Task, err error)
	// CloseTask ends an open or recorded task with outcome needs_human or
	// cancelled and a reason. Agents may only give up their own tasks
	// (needs_human); owners, operators and the server may close any.
	CloseTask(ctx context.Context, by Actor, id, outcome, reason string) (Task, error)
	// UpdateTaskInput replaces an open task's input (the server refreshing
	// it after the case changed); its digest changes, so receipts quoting
	// the old digest are refused.
	UpdateTaskInput(ctx context.Context, by Actor, id string, input json.RawMessage) (Task, error)
}

// ModelCall is the transcript of one model call: evidence of what an agent
// was shown and what it answered.
type ModelCall struct {
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`
	TaskID      string `json:"task_id"`
	CaseID      string `json:"case_id"`
	ActorID     string `json:"actor_id"`
	Turn        int    `json:"turn"`
	Provider    string `json:"provider"`
	Model       string `json:"model"`
	Evidence    string `json:"evidence"`
	// PromptDigest is the SHA-256 of the canonical JSON of the request
	// messages and tool definitions.
	PromptDigest     string          `json:"prompt_digest"`
	Request          json.RawMessage `json:"request"`
	Response         json.RawMessage `json:"response,omitempty"`
	PromptTokens     int64           `json:"prompt_tokens"`
	CompletionTokens int64           `json:"completion_tokens"`
	// CostMicros is in millionths of a US dollar. A timed-out call is booked
	// at its worst case.
	CostMicros int64     `json:"cost_micros"`
	LatencyMS  int64     `json:"latency_ms"`
	Outcome    string    `json:"outcome"` // ok, error, timeout
	Error      string    `json:"error,omitempty"`
	CreatedAt  time.Time `json:"created_at"`
}

// CallService records and reads model transcripts.
type CallService interface {
	// RecordCall stores a transcript of a call made for task c.TaskID and
	// appends its summary to the ledger. Only the task's assignee (or the
	// server) may record for it. The store sets ID, WorkspaceID, CaseID,
	// CreatedAt and ActorID (the task's assignee, also when the server
	// records), and computes PromptDigest from Request when it is empty.
	RecordCall(ctx context.Context, by Actor, c ModelCall) (ModelCall, error)
	// ListCalls returns a task's transcripts in call order.
	ListCalls(ctx context.Context, by Actor, taskID string) ([]ModelCall, error)
}

// AddressRule admits senders to an agent. A rule applies to the cases and
// projects it names (none named: every case); within that scope it admits
// the users and agents it names ("*" for all of the workspace's) and, with
// Owner set, the agent's owner and the owner's other agents.
type AddressRule struct {
	Cases    []string `json:"cases,omitempty"`
	Projects []string `json:"projects,omitempty"`
	Users    []string `json:"users,omitempty"`
	Agents   []string `json:"agents,omitempty"`
	Owner    bool     `json:"owner,omitempty"`
}

// AddressingPolicy says who may address an agent. No rules means the owner
// and the owner's agents only; whatever no rule admits is denied.
type AddressingPolicy struct {
	Rules []AddressRule `json:"rules"`
}

// Mention is one @handle found in a message and what came of it.
type Mention struct {
	Handle  string `json:"handle"`
	AgentID string `json:"agent_id,omitempty"`
	TaskID  string `json:"task_id,omitempty"`
	// Refused says why no task was created; empty when one was.
	Refused string `json:"refused,omitempty"`
}

// Message is one post in a case's conversation (its room).
type Message struct {
	ID          string    `json:"id"`
	WorkspaceID string    `json:"workspace_id"`
	CaseID      string    `json:"case_id"`
	AuthorID    string    `json:"author_id"`
	AuthorRole  Role      `json:"author_role"`
	Body        string    `json:"body"`
	Mentions    []Mention `json:"mentions,omitempty"`
	// Addressed is false for chatter: a message that created no task.
	Addressed bool      `json:"addressed"`
	CreatedAt time.Time `json:"created_at"`
}

// ConversationService is the case room and the agents' addressing
// policies.
type ConversationService interface {
	// PostMessage adds by's message to the case room. Every @mention of an
	// agent (by role or name) opens a task for it only if its addressing
	// policy admits by; otherwise the mention is recorded as refused with
	// the reason. Authority comes from by alone, never from the text.
	PostMessage(ctx context.Context, by Actor, caseID, body string) (Message, error)
	ListMessages(ctx context.Context, by Actor, caseID string) ([]Message, error)
	// SetAddressingPolicy replaces an agent's policy: its owner or a
	// workspace owner only.
	SetAddressingPolicy(ctx context.Context, by Actor, agentID string, p AddressingPolicy) error
	GetAddressingPolicy(ctx context.Context, by Actor, agentID string) (AddressingPolicy, error)
}

// Decision statuses, as decision.status reports them.
const (
	DecisionPending    = "pending"
	DecisionApproved   = "approved"
	DecisionRejected   = "rejected"
	DecisionExpired    = "expired"
	DecisionSuperseded = "superseded"
)

// Decision is a request for a human decision over one subject digest.
type Decision struct {
	ID            string          `json:"id"`
	WorkspaceID   string          `json:"workspace_id"`
	CaseID        string          `json:"case_id"`
	Kind          string          `json:"kind"`
	SubjectDigest string          `json:"subject_digest"`
	Subject       json.RawMessage `json:"subject"`
	Status        string          `json:"status"`
	Reason        string          `json:"reason,omitempty"`
	RequestedBy   string          `json:"requested_by"`
	DecidedBy     string          `json:"decided_by,omitempty"`
	// Amendment is what the person answered beyond yes or no (e.g. a
	// corrected severity), a JSON object; empty when none.
	Amendment json.RawMessage `json:"amendment,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
	ExpiresAt time.Time       `json:"expires_at"`
	DecidedAt *time.Time      `json:"decided_at,omitempty"`
}

// Terminal reports whether the decision can no longer change.
func (d Decision) Terminal() bool { return d.Status != DecisionPending }

// DecisionService holds requests for human decisions. Agents may read a
// decision on a case they can see; only people decide.
type DecisionService interface {
	// RequestDecision opens a pending decision over subject (its digest is
	// computed here) that expires after ttl, superseding any pending one of
	// the same kind on the case.
	RequestDecision(ctx context.Context, by Actor, caseID, kind string, subject json.RawMessage, ttl time.Duration) (Decision, error)
	// RequestDecisionMoving is RequestDecision that, in the same
	// transaction, first moves the case by move when it is in state from
	// (a case elsewhere is not moved). Nobody, and no card opened for the
	// request, sees the case at its new state without the decision, or
	// the decision on a case that has not moved yet.
	RequestDecisionMoving(ctx context.Context, by Actor, caseID, kind string, subject json.RawMessage, ttl time.Duration, from string, move TransitionInput) (Decision, error)
	// GetDecision reports a decision, pending ones past their expiry as
	// expired.
	GetDecision(ctx context.Context, by Actor, id string) (Decision, error)
	// Decide approves or rejects a pending decision. subjectDigest must be
	// the digest of what the person saw: a different one is ECONFLICT.
	// Agents are always EFORBIDDEN.
	Decide(ctx context.Context, by Actor, id, subjectDigest string, approve bool, reason string) (Decision, error)
}

// Agent is an agent actor as the desk shows it: connected only while its
// heartbeat is fresh.
type Agent struct {
	Actor
	OwnerID    string     `json:"owner_id,omitempty"`
	LastSeenAt *time.Time `json:"last_seen_at,omitempty"`
	Client     string     `json:"client,omitempty"`
	Connected  bool       `json:"connected"`
}

// DefaultPresenceWindow is how fresh a heartbeat must be for an agent to
// count as connected.
const DefaultPresenceWindow = 90 * time.Second

// AgentService is agents' presence and the workspace's role configuration.
type AgentService interface {
	// Heartbeat marks by (an agent) as connected now; client names the
	// software behind it (free text, shown to people, bounded).
	Heartbeat(ctx context.Context, by Actor, client string) error
	// ListAgents lists the workspace's agent actors with presence computed
	// against window.
	ListAgents(ctx context.Context, ws string, window time.Duration) ([]Agent, error)
	// GetSetting and PutSetting keep small per-workspace documents (the
	// role configuration is one). A missing key is ENOTFOUND.
	GetSetting(ctx context.Context, ws, key string) ([]byte, error)
	PutSetting(ctx context.Context, by Actor, key string, value []byte) error
}
