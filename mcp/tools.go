package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/airlock"
)

// Tool names.
const (
	ToolTasksList     = "tasks.list"
	ToolTaskGet       = "task.get"
	ToolTaskSubmit    = "task.submit"
	ToolTaskHandoff   = "task.handoff"
	ToolTaskGiveUp    = "task.give_up"
	ToolPostMessage   = "case.post_message"
	ToolAttention     = "case.request_attention"
	ToolDecision      = "decision.status"
	ToolReceipt       = "receipt.get"
	ToolHeartbeat     = "presence.heartbeat"
	ToolReviewNote    = "review.note"
	defaultListLimit  = 20
	maxListLimit      = 100
	maxNoteBytes      = 8 << 10
	reservedOutputKey = "submitted_via"
)

// commonTools every agent role has.
var commonTools = []toolDef{
	tasksListTool, taskGetTool, taskSubmitTool, taskHandoffTool, taskGiveUpTool,
	postMessageTool, attentionTool, decisionStatusTool, receiptGetTool, heartbeatTool,
}

// roleTools is the one table of what each agent role has beyond the common
// tools. Capabilities add their tools here (triage.*, change.propose_plan).
// Nothing that signs off, merges, runs a change or speaks for a person may
// ever be listed: those steps are human-only.
var roleTools = map[signoff.Role][]toolDef{
	signoff.RoleReproducer: {reproListSourceTool, reproReadSourceTool, reproProposeTool},
	signoff.RoleFixer:      {fixListSourceTool, fixReadSourceTool, fixProposeTool},
	signoff.RoleReviewer:   {reviewNoteTool},
	signoff.RolePlanner:    {changeReadRequestTool, changeProposePlanTool},
}

// toolsFor returns the tools of an agent role, common ones first.
func toolsFor(r signoff.Role) []toolDef {
	return append(slices.Clone(commonTools), roleTools[r]...)
}

// ToolNames lists the MCP tools an agent of role r is offered, sorted; none
// for a role that is not an agent's.
func ToolNames(r signoff.Role) []string {
	if !r.IsAgent() {
		return nil
	}
	var names []string
	for _, d := range toolsFor(r) {
		names = append(names, d.tool.Name)
	}
	slices.Sort(names)
	return names
}

// toolDef is one tool: its definition, built once, and how to bind it to a
// server for one identity.
type toolDef struct {
	tool *sdk.Tool
	add  func(*sdk.Server, *binding)
}

// texter is an output that chooses the text a model reads; the structured
// content stays the whole output.
type texter interface{ modelText() string }

// def builds a tool whose arguments are In (schema inferred, then tuned for
// enums and bounds) and whose result is Out. Every call records the
// caller's heartbeat first; an error becomes the tool's IsError result.
func def[In, Out any](name, title, desc string, ann *sdk.ToolAnnotations, tune func(props map[string]*jsonschema.Schema),
	run func(b *binding, ctx context.Context, req *sdk.CallToolRequest, in In) (Out, error)) toolDef {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %s: %v", name, err))
	}
	if tune != nil {
		tune(s.Properties)
	}
	if ann != nil {
		ann.Title = title
	}
	t := &sdk.Tool{Name: name, Title: title, Description: desc, InputSchema: s, Annotations: ann}
	return toolDef{tool: t, add: func(srv *sdk.Server, b *binding) {
		sdk.AddTool(srv, t, func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
			if name != ToolHeartbeat {
				b.touch(ctx, req)
			}
			out, err := run(b, ctx, req, in)
			if err != nil {
				var zero Out
				return nil, zero, b.refusal(ctx, name, err)
			}
			if tx, ok := any(out).(texter); ok {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: tx.modelText()}}}, out, nil
			}
			return nil, out, nil
		})
	}}
}

func ptr[T any](v T) *T { return &v }

var (
	readOnly = func() *sdk.ToolAnnotations {
		return &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	}
	writes = func(idempotent bool) *sdk.ToolAnnotations {
		return &sdk.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: idempotent, OpenWorldHint: ptr(false)}
	}
)

func enum(vals ...string) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	return out
}

// ---- tasks.list ----

type tasksListIn struct {
	Status string `json:"status,omitempty" jsonschema:"only tasks in this status: open (waiting for your result), recorded (result recorded, handoff pending) or closed"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many tasks, newest first (default 20)"`
}

// TaskSummary is a task as tasks.list shows it.
type TaskSummary struct {
	ID          string    `json:"id"`
	Kind        string    `json:"kind"`
	CaseID      string    `json:"case_id"`
	Status      string    `json:"status"`
	Outcome     string    `json:"outcome,omitempty"`
	InputDigest string    `json:"input_digest"`
	CreatedAt   time.Time `json:"created_at"`
}

type tasksListOut struct {
	Tasks []TaskSummary `json:"tasks"`
}

var tasksListTool = def(ToolTasksList, "List my tasks",
	"List the tasks Signoff has assigned to you, newest first. Start here: pick an open task and read it with task.get.",
	readOnly(),
	func(p map[string]*jsonschema.Schema) {
		p["status"].Enum = enum(signoff.TaskOpen, signoff.TaskRecorded, signoff.TaskClosed)
		p["limit"].Minimum, p["limit"].Maximum = ptr(1.0), ptr(float64(maxListLimit))
	},
	func(b *binding, ctx context.Context, _ *sdk.CallToolRequest, in tasksListIn) (tasksListOut, error) {
		limit := in.Limit
		if limit <= 0 {
			limit = defaultListLimit
		}
		ts, err := b.st.ListTasks(ctx, b.by, signoff.TaskFilter{Status: in.Status, Limit: min(limit, maxListLimit)})
		if err != nil {
			return tasksListOut{}, err
		}
		out := tasksListOut{Tasks: make([]TaskSummary, 0, len(ts))}
		for _, t := range ts {
			out.Tasks = append(out.Tasks, TaskSummary{ID: t.ID, Kind: t.Kind, CaseID: t.CaseID, Status: t.Status,
				Outcome: t.Outcome, InputDigest: t.InputDigest, CreatedAt: t.CreatedAt})
		}
		return out, nil
	})

// ---- task.get ----

type taskIn struct {
	TaskID string `json:"task_id" jsonschema:"the task id (task_...)"`
}

// TaskView is a task as task.get shows it. The input itself appears only
// inside Prompt, sanitized and spotlighted by the airlock.
type TaskView struct {
	ID           string    `json:"id"`
	Kind         string    `json:"kind"`
	CaseID       string    `json:"case_id"`
	Role         string    `json:"role"`
	Status       string    `json:"status"`
	Outcome      string    `json:"outcome,omitempty"`
	Reason       string    `json:"reason,omitempty"`
	InputDigest  string    `json:"input_digest"`
	OutputDigest string    `json:"output_digest,omitempty"`
	Evidence     string    `json:"evidence,omitempty"`
	ParentID     string    `json:"parent_id,omitempty"`
	ReceiptSeq   int64     `json:"receipt_seq,omitempty"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
	Prompt       string    `json:"prompt"`
	NextStep     string    `json:"next_step"`
}

func (v TaskView) modelText() string { return v.Prompt + "\n\nNext step: " + v.NextStep }

var taskGetTool = def(ToolTaskGet, "Read a task",
	"Read one of your tasks: its kind, case, status, input digest, and its input rendered as untrusted data. Quote task_id and input_digest when you record your result; if the input changes, the digest changes and an old one is refused.",
	readOnly(), nil,
	func(b *binding, ctx context.Context, _ *sdk.CallToolRequest, in taskIn) (TaskView, error) {
		t, err := b.st.GetTask(ctx, b.by, in.TaskID)
		if err != nil {
			return TaskView{}, err
		}
		v := TaskView{ID: t.ID, Kind: t.Kind, CaseID: t.CaseID, Role: string(t.Role), Status: t.Status, Outcome: t.Outcome,
			Reason: t.Reason, InputDigest: t.InputDigest, OutputDigest: t.OutputDigest, Evidence: t.Evidence, ParentID: t.ParentID,
			ReceiptSeq: t.ReceiptSeq, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
			Prompt: agent.RenderTask(t, airlock.NewBoundary())}
		v.NextStep = b.nextStep(ctx, t)
		return v, nil
	})

// nextStep tells the model what to do with a task in its current status.
func (b *binding) nextStep(ctx context.Context, t signoff.Task) string {
	switch t.Status {
	case signoff.TaskOpen:
		if step := b.deskStep(t); step != "" {
			return step
		}
		record := fmt.Sprintf("%s(task_id='%s', input_digest='%s', output={...your result...})", ToolTaskSubmit, t.ID, t.InputDigest)
		if b.tools[ToolReviewNote] {
			record = fmt.Sprintf("%s(task_id='%s', input_digest='%s', verdict, note)", ToolReviewNote, t.ID, t.InputDigest)
		}
		return "do the work, then record your result with " + record + ", or call " + ToolTaskGiveUp + " if you cannot."
	case signoff.TaskRecorded:
		cfg, err := agent.LoadConfig(ctx, b.st, b.by.WorkspaceID, b.o.Tools)
		if err != nil {
			return fmt.Sprintf("NOW call %s(task_id='%s', input_digest='%s', to, reason).", ToolTaskHandoff, t.ID, t.InputDigest)
		}
		rc, err := cfg.ForTask(t)
		if err != nil {
			return fmt.Sprintf("NOW call %s(task_id='%s', input_digest='%s', to, reason).", ToolTaskHandoff, t.ID, t.InputDigest)
		}
		return handoffStep(t, rc.Handoffs)
	default:
		return fmt.Sprintf("done: the task is closed (%s); nothing is left to do on it.", t.Outcome)
	}
}

func handoffStep(t signoff.Task, targets []string) string {
	switch len(targets) {
	case 0:
		return "done"
	case 1:
		return fmt.Sprintf("NOW call %s(task_id='%s', input_digest='%s', to='%s', reason='<one sentence on why>').", ToolTaskHandoff, t.ID, t.InputDigest, targets[0])
	}
	q := make([]string, len(targets))
	for i, x := range targets {
		q[i] = "'" + x + "'"
	}
	return fmt.Sprintf("NOW call %s(task_id='%s', input_digest='%s', to=<one of %s>, reason='<one sentence on why>').", ToolTaskHandoff, t.ID, t.InputDigest, strings.Join(q, ", "))
}

// ---- task.submit ----

type taskSubmitIn struct {
	TaskID      string         `json:"task_id" jsonschema:"the task id, as task.get shows it"`
	InputDigest string         `json:"input_digest" jsonschema:"the task's input_digest, exactly as task.get shows it"`
	Output      map[string]any `json:"output" jsonschema:"your result, a JSON object"`
}

// SubmitResult is a recorded result and what to do next.
type SubmitResult struct {
	TaskID       string `json:"task_id"`
	Status       string `json:"status"`
	Outcome      string `json:"outcome,omitempty"`
	OutputDigest string `json:"output_digest"`
	Evidence     string `json:"evidence"`
	ReceiptSeq   int64  `json:"receipt_seq"`
	// NextStep is "done" when the task is complete, else the handoff to
	// make now.
	NextStep string `json:"next_step"`
}

func (r SubmitResult) modelText() string {
	if r.NextStep == "done" {
		return fmt.Sprintf("Recorded task %s at ledger seq %d (output digest %s). The task is complete: done.", r.TaskID, r.ReceiptSeq, r.OutputDigest)
	}
	return fmt.Sprintf("Recorded task %s at ledger seq %d (output digest %s). %s", r.TaskID, r.ReceiptSeq, r.OutputDigest, r.NextStep)
}

var taskSubmitTool = def(ToolTaskSubmit, "Record my result",
	"Record your result for an open task against its receipt: the task_id and the input_digest you read with task.get. A receipt is good once; a second submission is refused. The answer's next_step says what to do now: 'done', or the task.handoff call to make.",
	writes(false),
	func(p map[string]*jsonschema.Schema) {
		p["task_id"].MinLength, p["input_digest"].MinLength = ptr(1), ptr(1)
	},
	func(b *binding, ctx context.Context, req *sdk.CallToolRequest, in taskSubmitIn) (SubmitResult, error) {
		if _, taken := in.Output[reservedOutputKey]; taken {
			return SubmitResult{}, signoff.Errorf(signoff.EINVALID, "output key %q is reserved: Signoff sets it", reservedOutputKey)
		}
		return b.submit(ctx, req, in.TaskID, in.InputDigest, in.Output)
	})

// submit records output against the receipt as evidence "live": an agent
// that really ran, now, outside Signoff and reached it over MCP. The output
// says so under submitted_via. The task closes as done when its role has
// nowhere to hand off.
func (b *binding) submit(ctx context.Context, req *sdk.CallToolRequest, taskID, digest string, output map[string]any) (SubmitResult, error) {
	final := false
	var targets []string
	t, err := b.st.GetTask(ctx, b.by, taskID)
	switch {
	case err == nil:
		if b.deskStep(t) != "" {
			return SubmitResult{}, signoff.Errorf(signoff.EFORBIDDEN, "a %s task ends with its proposal, which the bug desk checks: use repro.propose or fix.propose, not task.submit", t.Kind)
		}
		rc, err := b.externalRole(ctx, t)
		if err != nil {
			return SubmitResult{}, err
		}
		targets, final = rc.Handoffs, len(rc.Handoffs) == 0
	case signoff.ErrorCode(err) != signoff.ENOTFOUND:
		return SubmitResult{}, err
	}
	// A task the caller cannot read still goes to the store, which is the
	// authority on why the receipt is refused (another identity's task is
	// forbidden, a missing one not found); it records nothing.
	out := make(map[string]any, len(output)+1)
	for k, v := range output {
		out[k] = v
	}
	out[reservedOutputKey] = map[string]any{"transport": "mcp", "client": clientName(req)}
	raw, err := json.Marshal(out)
	if err != nil {
		return SubmitResult{}, signoff.Errorf(signoff.EINVALID, "output is not JSON: %v", err)
	}
	t, err = b.st.SubmitTask(ctx, b.by, signoff.Submission{TaskID: taskID, InputDigest: digest, Output: raw,
		Evidence: signoff.EvidenceLive, Final: final})
	if err != nil {
		return SubmitResult{}, err
	}
	r := SubmitResult{TaskID: t.ID, Status: t.Status, Outcome: t.Outcome, OutputDigest: t.OutputDigest,
		Evidence: t.Evidence, ReceiptSeq: t.ReceiptSeq, NextStep: "done"}
	if t.Status == signoff.TaskRecorded {
		r.NextStep = handoffStep(t, targets)
	}
	return r, nil
}

// externalRole returns the role configuration of t and refuses a role the
// workspace runs with another provider: provider is explicit per role, and
// a result taken over MCP is an external agent's.
func (b *binding) externalRole(ctx context.Context, t signoff.Task) (agent.RoleConfig, error) {
	_, rc, err := b.roleOf(ctx, t)
	if err != nil {
		return agent.RoleConfig{}, err
	}
	if err := external(rc); err != nil {
		return agent.RoleConfig{}, err
	}
	return rc, nil
}

// roleOf returns the workspace's role configuration and the role t runs
// as in it.
func (b *binding) roleOf(ctx context.Context, t signoff.Task) (agent.Config, agent.RoleConfig, error) {
	cfg, err := agent.LoadConfig(ctx, b.st, b.by.WorkspaceID, b.o.Tools)
	if err != nil {
		return agent.Config{}, agent.RoleConfig{}, err
	}
	rc, err := cfg.ForTask(t)
	if err != nil {
		return agent.Config{}, agent.RoleConfig{}, err
	}
	return cfg, rc, nil
}

// external refuses a role the workspace runs with another provider than an
// external agent.
func external(rc agent.RoleConfig) error {
	if rc.Provider != agent.ProviderExternal {
		return signoff.Errorf(signoff.ECONFLICT,
			"the workspace runs role %s with the %s provider, not an external agent: its results are not taken over MCP", rc.Name, rc.Provider)
	}
	return nil
}

// ---- task.handoff ----

type taskHandoffIn struct {
	TaskID      string `json:"task_id" jsonschema:"the recorded task to hand on"`
	InputDigest string `json:"input_digest" jsonschema:"the task's input_digest, exactly as task.get shows it"`
	To          string `json:"to" jsonschema:"the role to hand the case to; only the targets your role allows are accepted (task.submit's next_step names them)"`
	Reason      string `json:"reason" jsonschema:"one sentence on why"`
}

// HandoffResult is a closed task and the one it opened.
type HandoffResult struct {
	ClosedTaskID string `json:"closed_task_id"`
	Outcome      string `json:"outcome"`
	NextTaskID   string `json:"next_task_id"`
	NextRole     string `json:"next_role"`
	NextStep     string `json:"next_step"`
}

func (r HandoffResult) modelText() string {
	return fmt.Sprintf("Handed off to %s as task %s; task %s is closed (%s). Your task is complete: done.", r.NextRole, r.NextTaskID, r.ClosedTaskID, r.Outcome)
}

var taskHandoffTool = def(ToolTaskHandoff, "Hand the case on",
	"After your result is recorded, close your task and open the next role's task. Signoff refuses a target your role may not hand off to.",
	writes(false),
	func(p map[string]*jsonschema.Schema) {
		p["to"].MinLength, p["reason"].MinLength = ptr(1), ptr(1)
	},
	func(b *binding, ctx context.Context, _ *sdk.CallToolRequest, in taskHandoffIn) (HandoffResult, error) {
		t, err := b.st.GetTask(ctx, b.by, in.TaskID)
		if err != nil {
			return HandoffResult{}, err
		}
		if _, err := b.externalRole(ctx, t); err != nil {
			return HandoffResult{}, err
		}
		cfg, err := agent.LoadConfig(ctx, b.st, b.by.WorkspaceID, b.o.Tools)
		if err != nil {
			return HandoffResult{}, err
		}
		closed, next, err := agent.Handoff(ctx, b.st, cfg, b.by, in.TaskID, in.InputDigest, in.To, in.Reason)
		if err != nil {
			return HandoffResult{}, err
		}
		return HandoffResult{ClosedTaskID: closed.ID, Outcome: closed.Outcome, NextTaskID: next.ID, NextRole: next.Kind, NextStep: "done"}, nil
	})

// ---- task.give_up ----

type taskGiveUpIn struct {
	TaskID string `json:"task_id" jsonschema:"the task you cannot finish"`
	Reason string `json:"reason" jsonschema:"why you cannot finish it, for the person who takes over"`
}

// GiveUpResult is a task handed to a person.
type GiveUpResult struct {
	TaskID  string `json:"task_id"`
	Status  string `json:"status"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
}

var taskGiveUpTool = def(ToolTaskGiveUp, "Give a task up",
	"Stop working on a task and hand it to a person (outcome needs_human). Use it when you cannot do the task, rather than guessing.",
	writes(false),
	func(p map[string]*jsonschema.Schema) { p["reason"].MinLength = ptr(1) },
	func(b *binding, ctx context.Context, _ *sdk.CallToolRequest, in taskGiveUpIn) (GiveUpResult, error) {
		reason := strings.TrimSpace(in.Reason)
		if reason == "" {
			return GiveUpResult{}, signoff.Errorf(signoff.EINVALID, "a reason is required")
		}
		t, err := b.st.CloseTask(ctx, b.by, in.TaskID, signoff.OutcomeNeedsHuman, "the agent gave up: "+reason)
		if err != nil {
			return GiveUpResult{}, err
		}
		return GiveUpResult{TaskID: t.ID, Status: t.Status, Outcome: t.Outcome, Reason: t.Reason}, nil
	})

// ---- case.post_message ----

type postMessageIn struct {
	CaseID string `json:"case_id" jsonschema:"the case whose conversation you post in (case_...)"`
	Text   string `json:"text" jsonschema:"the message, plain text; @role or @name asks that agent for help if its addressing policy admits you"`
}

// MessageResult is a posted message and what came of its mentions.
type MessageResult struct {
	ID        string            `json:"id"`
	CaseID    string            `json:"case_id"`
	Addressed bool              `json:"addressed"`
	Mentions  []signoff.Mention `json:"mentions"`
	CreatedAt time.Time         `json:"created_at"`
}

var postMessageTool = def(ToolPostMessage, "Post in the case conversation",
	"Post a message in the conversation of a case you have worked on (a task of yours), where people and other agents read it. Mentioning an agent (@role or @name) opens a task for it only if its addressing policy admits you; the answer says, per mention, which task was opened or why not.",
	writes(false),
	func(p map[string]*jsonschema.Schema) { p["text"].MinLength = ptr(1) },
	func(b *binding, ctx context.Context, _ *sdk.CallToolRequest, in postMessageIn) (MessageResult, error) {
		if strings.TrimSpace(in.Text) == "" {
			return MessageResult{}, signoff.Errorf(signoff.EINVALID, "text is empty")
		}
		m, err := b.st.PostMessage(ctx, b.by, in.CaseID, in.Text)
		if err != nil {
			return MessageResult{}, err
		}
		ms := m.Mentions
		if ms == nil {
			ms = []signoff.Mention{}
		}
		return MessageResult{ID: m.ID, CaseID: m.CaseID, Addressed: m.Addressed, Mentions: ms, CreatedAt: m.CreatedAt}, nil
	})

// ---- case.request_attention ----

type attentionIn struct {
	CaseID string `json:"case_id" jsonschema:"the case (case_...) you have worked on"`
	Note   string `json:"note" jsonschema:"what the people who run the desk should look at, and why"`
}

// AttentionResult is the ledger event that asks for attention.
type AttentionResult struct {
	CaseID string `json:"case_id"`
	Seq    int64  `json:"seq"`
	Hash   string `json:"hash"`
}

var attentionTool = def(ToolAttention, "Ask a person to look",
	"Ask the people who run the desk to look at a case you have worked on, with a note. It moves nothing: use it where you may not act, such as a case a person has approved (or a change that runs or ran), instead of escalating or re-planning.",
	writes(false),
	func(p map[string]*jsonschema.Schema) { p["note"].MinLength = ptr(1) },
	func(b *binding, ctx context.Context, _ *sdk.CallToolRequest, in attentionIn) (AttentionResult, error) {
		e, err := b.st.RequestAttention(ctx, b.by, in.CaseID, in.Note)
		if err != nil {
			return AttentionResult{}, err
		}
		return AttentionResult{CaseID: e.CaseID, Seq: e.Seq, Hash: e.Hash}, nil
	})

// ---- decision.status ----

type decisionIn struct {
	DecisionID  string `json:"decision_id" jsonschema:"the decision id (dec_...)"`
	WaitSeconds int    `json:"wait_seconds,omitempty" jsonschema:"wait up to this many seconds (0 to 50) for a pending decision to end; 0 answers at once"`
}

// DecisionResult is where a human decision stands.
type DecisionResult struct {
	DecisionID    string     `json:"decision_id"`
	CaseID        string     `json:"case_id"`
	Kind          string     `json:"kind"`
	Status        string     `json:"status"`
	Reason        string     `json:"reason,omitempty"`
	SubjectDigest string     `json:"subject_digest"`
	ExpiresAt     time.Time  `json:"expires_at"`
	DecidedAt     *time.Time `json:"decided_at,omitempty"`
}

var decisionStatusTool = def(ToolDecision, "Check a human decision",
	"Read where a person's decision stands: pending, approved, rejected, expired or superseded, over the exact subject digest they were shown. With wait_seconds, wait (up to 50 s) for a pending one to end. Only people make these calls; poll, do not push.",
	readOnly(),
	func(p map[string]*jsonschema.Schema) {
		p["wait_seconds"].Minimum, p["wait_seconds"].Maximum = ptr(0.0), ptr(DefaultMaxWait.Seconds())
	},
	func(b *binding, ctx context.Context, _ *sdk.CallToolRequest, in decisionIn) (DecisionResult, error) {
		wait := min(time.Duration(in.WaitSeconds)*time.Second, b.o.MaxWait)
		d, err := b.waitDecision(ctx, in.DecisionID, wait)
		if err != nil {
			return DecisionResult{}, err
		}
		return DecisionResult{DecisionID: d.ID, CaseID: d.CaseID, Kind: d.Kind, Status: d.Status, Reason: d.Reason,
			SubjectDigest: d.SubjectDigest, ExpiresAt: d.ExpiresAt, DecidedAt: d.DecidedAt}, nil
	})

// waitDecision reads a decision until it is terminal or wait has passed.
func (b *binding) waitDecision(ctx context.Context, id string, wait time.Duration) (signoff.Decision, error) {
	if wait <= 0 {
		return b.st.GetDecision(ctx, b.by, id)
	}
	done := time.NewTimer(wait)
	defer done.Stop()
	tick := time.NewTicker(b.o.PollInterval)
	defer tick.Stop()
	for {
		d, err := b.st.GetDecision(ctx, b.by, id)
		if err != nil || d.Terminal() {
			return d, err
		}
		select {
		case <-ctx.Done():
			return signoff.Decision{}, ctx.Err()
		case <-done.C:
			return b.st.GetDecision(ctx, b.by, id)
		case <-tick.C:
		}
	}
}

// ---- receipt.get ----

// ReceiptEvent is the ledger entry a receipt points at.
type ReceiptEvent struct {
	Seq      int64     `json:"seq"`
	Type     string    `json:"type"`
	Hash     string    `json:"hash"`
	PrevHash string    `json:"prev_hash"`
	Time     time.Time `json:"time"`
}

// Receipt is the ledger record of a task's result.
type Receipt struct {
	TaskID       string       `json:"task_id"`
	CaseID       string       `json:"case_id"`
	Status       string       `json:"status"`
	Outcome      string       `json:"outcome,omitempty"`
	InputDigest  string       `json:"input_digest"`
	OutputDigest string       `json:"output_digest"`
	Evidence     string       `json:"evidence"`
	ReceiptSeq   int64        `json:"receipt_seq"`
	Event        ReceiptEvent `json:"event"`
}

var receiptGetTool = def(ToolReceipt, "Read a task's receipt",
	"Read the ledger receipt of a task whose result is recorded: input and output digests, evidence type, and the hash-chained ledger event that recorded it.",
	readOnly(), nil,
	func(b *binding, ctx context.Context, _ *sdk.CallToolRequest, in taskIn) (Receipt, error) {
		t, err := b.st.GetTask(ctx, b.by, in.TaskID)
		if err != nil {
			return Receipt{}, err
		}
		if t.ReceiptSeq == 0 {
			return Receipt{}, signoff.Errorf(signoff.ECONFLICT, "task %s has no receipt: no result was recorded for it (status %s)", t.ID, t.Status)
		}
		evs, err := b.st.ListEvents(ctx, b.by, t.CaseID, t.ReceiptSeq-1, 1)
		if err != nil {
			return Receipt{}, err
		}
		if len(evs) == 0 || evs[0].Seq != t.ReceiptSeq {
			return Receipt{}, fmt.Errorf("receipt of task %s: ledger event %d of case %s not found", t.ID, t.ReceiptSeq, t.CaseID)
		}
		ev := evs[0]
		return Receipt{TaskID: t.ID, CaseID: t.CaseID, Status: t.Status, Outcome: t.Outcome, InputDigest: t.InputDigest,
			OutputDigest: t.OutputDigest, Evidence: t.Evidence, ReceiptSeq: t.ReceiptSeq,
			Event: ReceiptEvent{Seq: ev.Seq, Type: ev.Type, Hash: ev.Hash, PrevHash: ev.PrevHash, Time: ev.Time}}, nil
	})

// ---- presence.heartbeat ----

type heartbeatIn struct{}

// HeartbeatResult says who was marked connected, as what.
type HeartbeatResult struct {
	AgentID string    `json:"agent_id"`
	Client  string    `json:"client"`
	At      time.Time `json:"at"`
}

var heartbeatTool = def(ToolHeartbeat, "Say I am here",
	"Mark yourself as connected on the desk. Every other tool call does this too; call it only while idle, about once a minute.",
	writes(true), nil,
	func(b *binding, ctx context.Context, req *sdk.CallToolRequest, _ heartbeatIn) (HeartbeatResult, error) {
		client := clientName(req)
		if err := b.st.Heartbeat(ctx, b.by, client); err != nil {
			return HeartbeatResult{}, err
		}
		b.sh.presence.due(b.by.ID, client, time.Now(), -1) // restart the implicit throttle
		return HeartbeatResult{AgentID: b.by.ID, Client: client, At: time.Now().UTC()}, nil
	})

// ---- review.note (reviewer) ----

// Review verdicts. A note is advisory: it never stands in for a person's
// sign-off.
const (
	VerdictNoConcerns = "no_concerns"
	VerdictConcerns   = "concerns"
)

type reviewNoteIn struct {
	TaskID      string `json:"task_id" jsonschema:"the review task id"`
	InputDigest string `json:"input_digest" jsonschema:"the task's input_digest, exactly as task.get shows it"`
	Verdict     string `json:"verdict" jsonschema:"no_concerns or concerns"`
	Note        string `json:"note" jsonschema:"what you checked and what you found, in a few sentences"`
}

var reviewNoteTool = def(ToolReviewNote, "Record a review note",
	"Record your review of a proposal as an advisory note (verdict no_concerns or concerns, and what you found). It is a note for the people who make the call, never a sign-off: it cannot let anything through. Completes your review task.",
	writes(false),
	func(p map[string]*jsonschema.Schema) {
		p["verdict"].Enum = enum(VerdictNoConcerns, VerdictConcerns)
		p["note"].MinLength = ptr(1)
	},
	func(b *binding, ctx context.Context, req *sdk.CallToolRequest, in reviewNoteIn) (SubmitResult, error) {
		note := strings.TrimSpace(in.Note)
		switch {
		case in.Verdict != VerdictNoConcerns && in.Verdict != VerdictConcerns:
			return SubmitResult{}, signoff.Errorf(signoff.EINVALID, "verdict must be %s or %s", VerdictNoConcerns, VerdictConcerns)
		case note == "":
			return SubmitResult{}, signoff.Errorf(signoff.EINVALID, "note is empty")
		case len(note) > maxNoteBytes:
			return SubmitResult{}, signoff.Errorf(signoff.EINVALID, "note is longer than 8 KiB")
		}
		return b.submit(ctx, req, in.TaskID, in.InputDigest, map[string]any{
			"kind": "review_note", "advisory": true, "verdict": in.Verdict, "note": note,
		})
	})
