package changedesk

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/change"
)

// The advisory reviewer: after the policy's review passes, the reviewer
// role may add a note to the approval card. The note is shown beside the
// rule results and never decides anything: the review's verdict is the
// policy's, and the approval is a person's.

// Reviewer task kind and tool.
const (
	TaskKindReview   = "change_review"
	ToolRecordReview = "record_change_review"
	maxReviewNote    = 4000
)

// ReviewTask is a reviewer task's input.
type ReviewTask struct {
	CaseID string          `json:"case_id"`
	PlanID string          `json:"plan_id"`
	Reason string          `json:"reason"`
	Plan   json.RawMessage `json:"plan"`
	// Before is the target's live value when the plan was drafted.
	Before json.RawMessage `json:"before,omitempty"`
}

type reviewNoteArgs struct {
	Note string `json:"note" jsonschema:"the advisory note for the approver: what to look at, in plain words; it is not a verdict"`
}

// reviewTool records the reviewer's note on the case, for the plan it was
// asked about only.
func (d *Desk) reviewTool() *agent.Tool {
	return agent.NewTool(ToolRecordReview, "Record an advisory note on the change's plan. It is shown to the approver beside the policy's rule results; it never approves or rejects.",
		func(ctx context.Context, env *agent.Env, in reviewNoteArgs) (agent.Result, error) {
			var task ReviewTask
			if err := json.Unmarshal(env.Task.Input, &task); err != nil || task.CaseID == "" {
				return agent.Result{}, signoff.Errorf(signoff.EINVALID, "this task is not a change review")
			}
			note := strings.TrimSpace(in.Note)
			if err := signoff.CheckText("note", note, true, maxReviewNote); err != nil {
				return agent.Result{}, err
			}
			c, l, err := d.load(ctx, sys(env.Actor.WorkspaceID), task.CaseID)
			if err != nil {
				return agent.Result{}, err
			}
			if l.State.PlanID != task.PlanID {
				return agent.Result{Text: "The plan was replaced; the note is not recorded.", Final: true}, nil
			}
			st := l.State
			st.ReviewNote = note
			if _, _, err := d.Store.AdvanceChange(ctx, sys(c.WorkspaceID), signoff.ChangeUpdate{CaseID: c.ID, Version: l.Version, State: st,
				Events: []signoff.LoopEvent{{Type: "change.review_note", Payload: map[string]any{"plan_id": task.PlanID, "note": note,
					"reviewer": env.Actor.ID, "evidence": env.Evidence, "advisory": true}}}}); err != nil {
				return agent.Result{}, err
			}
			return agent.Result{Text: "Noted (advisory).", Output: map[string]any{"note": note}, Final: true}, nil
		})
}

// askReviewer issues a reviewer task for the case's current plan and runs
// it when the role is served in-process. The note is optional: whatever
// goes wrong here is logged and the case goes on without it.
func (d *Desk) askReviewer(ctx context.Context, c signoff.Case, l signoff.ChangeLoop, plan change.Plan, rec signoff.ChangePlan) {
	if d.Runtime == nil || d.Tools == nil {
		return
	}
	fail := func(err error) { d.log().WarnContext(ctx, "advisory change review", "case_id", c.ID, "err", err) }
	cfg, err := agent.LoadConfig(ctx, d.Store, c.WorkspaceID, d.Tools)
	if err != nil {
		fail(err)
		return
	}
	rc, ok := cfg.Roles[string(signoff.RoleReviewer)]
	if !ok || !slices.Contains(rc.Tools, ToolRecordReview) {
		return // no reviewer for changes configured
	}
	var reviewer signoff.Actor
	as, err := d.Store.ListActors(ctx, c.WorkspaceID)
	if err != nil {
		fail(err)
		return
	}
	for _, a := range as {
		if a.Role == signoff.RoleReviewer && a.DisabledAt == nil {
			reviewer = a
			break
		}
	}
	if reviewer.ID == "" {
		return
	}
	task := ReviewTask{CaseID: c.ID, PlanID: rec.ID, Reason: l.State.Reason, Plan: rec.Body}
	if t, err := change.ParseTarget(plan.Target); err == nil {
		if act, err := d.actuator(t.Kind); err == nil {
			if s, err := act.Read(ctx, Scope{WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID}, t); err == nil {
				task.Before = s.Value
			}
		}
	}
	raw, err := json.Marshal(task)
	if err != nil {
		fail(err)
		return
	}
	tk, err := d.Store.CreateTask(ctx, sys(c.WorkspaceID), signoff.TaskInput{CaseID: c.ID, Kind: TaskKindReview, Role: signoff.RoleReviewer, AssigneeID: reviewer.ID, Input: raw})
	if err != nil {
		fail(err)
		return
	}
	if rc.Provider == agent.ProviderExternal {
		return
	}
	if _, err := d.Runtime.Run(ctx, reviewer, tk.ID, cfg); err != nil {
		fail(err)
	}
}

var wordRun = regexp.MustCompile(`[a-z0-9]+`)

// ReviewNote is the builtin reviewer's note: deterministic observations a
// person may want pointed out before signing. It says what it checked and
// never more.
func ReviewNote(task ReviewTask) string {
	plan, err := change.DecodePlan(task.Plan)
	if err != nil {
		return "The builtin reviewer could not read the plan; read it whole on the card."
	}
	var notes []string
	switch plan.Kind {
	case change.KindFlag:
		notes = append(notes, fmt.Sprintf("Deterministic review: the plan sets %s to %s (now %s); its rollback writes %s.",
			plan.Target, compactJSON(plan.Params), orNone(task.Before), compactJSON(plan.Rollback)))
	case change.KindFile:
		notes = append(notes, fmt.Sprintf("Deterministic review: the plan rewrites %s (the whole file is on the card); its rollback restores the file as it is now.", plan.Target))
	case change.KindRunbook:
		notes = append(notes, fmt.Sprintf("Deterministic review: the plan runs %s with %s.", plan.Target, compactJSON(plan.Params)))
		if !hasRollback(plan) {
			notes = append(notes, "It has no rollback: a failed health check is reported, and nothing is undone.")
		}
	}
	hc := plan.HealthCheck
	switch hc.Kind {
	case change.HealthHTTP:
		notes = append(notes, fmt.Sprintf("The health check probes %s %s for %d s, every %d s, expecting %d.", orGET(hc.Method), hc.URL, hc.WindowSeconds, hc.IntervalSeconds, hc.ExpectStatus))
		if t, err := change.ParseTarget(plan.Target); err == nil && !probesTarget(t.Name, hc.URL) {
			notes = append(notes, fmt.Sprintf("The probed path shares no word with %s: the check may pass while what the change controls is broken; consider a probe of the affected endpoint.", t.Name))
		}
	case change.HealthCommand:
		notes = append(notes, fmt.Sprintf("The health check runs %s in the sandbox for %d s.", strings.Join(hc.Command, " "), hc.WindowSeconds))
	}
	notes = append(notes, "This note is advisory: it checks the plan's shape, not whether the change is right, and it is not an approval.")
	return strings.Join(notes, " ")
}

// probesTarget reports whether the probe URL's path shares a word of at
// least four letters with the target's name (checkout_v2_new_payment_flow
// and /checkout do; /healthz does not).
func probesTarget(name, probe string) bool {
	u, err := url.Parse(probe)
	if err != nil {
		return false
	}
	path := wordRun.FindAllString(strings.ToLower(u.Path), -1)
	for _, w := range wordRun.FindAllString(strings.ToLower(name), -1) {
		if len(w) >= 4 && slices.Contains(path, w) {
			return true
		}
	}
	return false
}

func compactJSON(b json.RawMessage) string {
	if len(b) == 0 {
		return "null"
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return string(b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func orNone(b json.RawMessage) string {
	if len(b) == 0 {
		return "unknown"
	}
	return compactJSON(b)
}

func orGET(m string) string {
	if m == "" {
		return "GET"
	}
	return m
}

// BuiltinReviewer is the builtin provider's change review: ReviewNote,
// recorded once.
func BuiltinReviewer(ctx context.Context, req agent.Request) (agent.Response, error) {
	var task ReviewTask
	if err := json.Unmarshal(req.Task.Input, &task); err != nil {
		return agent.Response{}, fmt.Errorf("review task input: %w", err)
	}
	args, err := json.Marshal(reviewNoteArgs{Note: ReviewNote(task)})
	if err != nil {
		return agent.Response{}, err
	}
	return agent.Response{Message: agent.Message{Role: "assistant", ToolCalls: []agent.ToolCall{{ID: "review-1", Name: ToolRecordReview, Arguments: string(args)}}}, FinishReason: "tool_calls"}, nil
}
