package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/airlock"
)

// LoadConfig returns a workspace's role configuration: its own when it set
// one, else the built-in defaults.
func LoadConfig(ctx context.Context, st signoff.AgentService, ws string, tools *Registry) (Config, error) {
	b, err := st.GetSetting(ctx, ws, SettingKey)
	if signoff.ErrorCode(err) == signoff.ENOTFOUND {
		return tools.Defaults(), nil
	} else if err != nil {
		return Config{}, fmt.Errorf("load role configuration: %w", err)
	}
	return ParseConfig(b, tools)
}

// SaveConfig checks a YAML role configuration and stores it for the
// workspace.
func SaveConfig(ctx context.Context, st signoff.AgentService, by signoff.Actor, yamlText []byte, tools *Registry) (Config, error) {
	c, err := ParseConfig(yamlText, tools)
	if err != nil {
		return Config{}, err
	}
	if err := st.PutSetting(ctx, by, SettingKey, yamlText); err != nil {
		return Config{}, fmt.Errorf("save role configuration: %w", err)
	}
	return c, nil
}

// Handoff closes by's recorded task and opens the next one for role to, if
// the task's role may hand off there. Both the runtime's handoff tool and
// the MCP server come through here, so the handoff graph holds on every
// path.
func Handoff(ctx context.Context, st signoff.Store, cfg Config, by signoff.Actor, taskID, inputDigest, to, reason string) (signoff.Task, signoff.Task, error) {
	t, err := st.GetTask(ctx, by, taskID)
	if err != nil {
		return signoff.Task{}, signoff.Task{}, err
	}
	rc, err := cfg.ForTask(t)
	if err != nil {
		return signoff.Task{}, signoff.Task{}, err
	}
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return signoff.Task{}, signoff.Task{}, signoff.Errorf(signoff.EINVALID, "a handoff needs a reason")
	}
	if !cfg.CanHandOff(rc.Name, to) {
		return signoff.Task{}, signoff.Task{}, signoff.Errorf(signoff.EFORBIDDEN,
			"role %s may not hand off to %q; allowed: %s", rc.Name, to, quoteList(rc.Handoffs))
	}
	if t.Status == signoff.TaskOpen {
		return signoff.Task{}, signoff.Task{}, signoff.Errorf(signoff.ECONFLICT, "record your result before handing off")
	}
	target := cfg.Roles[to]
	next := map[string]any{
		"from_task": t.ID, "from_role": rc.Name, "reason": reason, "case_id": t.CaseID, "previous": t.Output,
	}
	// What the work is about (e.g. the report being triaged) travels with
	// it from role to role.
	var in struct {
		Subject json.RawMessage `json:"subject"`
	}
	if json.Unmarshal(t.Input, &in) == nil && len(in.Subject) > 0 {
		next["subject"] = in.Subject
	}
	input, err := json.Marshal(next)
	if err != nil {
		return signoff.Task{}, signoff.Task{}, err
	}
	return st.HandoffTask(ctx, by, signoff.Handoff{
		TaskID: taskID, InputDigest: inputDigest, To: target.Actor, Reason: reason, Kind: to, Input: input,
	})
}

func quoteList(xs []string) string {
	if len(xs) == 0 {
		return "none (this role ends its task by recording its result)"
	}
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = "'" + x + "'"
	}
	return strings.Join(q, ", ")
}

// RenderTask is how a task reaches a model or an external agent: trusted
// framing written by Signoff, and the task's input as untrusted data,
// sanitized by the airlock and spotlighted. Whatever the input holds (a
// dossier, a colleague's message, a previous agent's output), it can only
// ever be evidence, never instructions.
func RenderTask(t signoff.Task, boundary string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s (%s) on case %s, assigned to you as %s.\n", t.ID, t.Kind, t.CaseID, t.Role)
	fmt.Fprintf(&b, "Input digest: %s\nStatus: %s\n", t.InputDigest, t.Status)
	if t.Status == signoff.TaskRecorded {
		b.WriteString("Your result is already recorded; what is left is the handoff.\n")
	}
	b.WriteString("\nThe task input follows.\n")
	pretty, err := json.MarshalIndent(json.RawMessage(t.Input), "", "  ")
	if err != nil {
		pretty = t.Input
	}
	b.WriteString(airlock.Spotlight(airlock.Sanitize(string(pretty)), boundary))
	return b.String()
}
