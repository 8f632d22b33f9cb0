package agent

import (
	"bytes"
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
	d := airlock.Sanitize(string(pretty))
	strs, recorded := inputStrings(t.Input)
	// The input's texts are also read together, in the order the model
	// reads them: an instruction cut across fields (text, steps, device)
	// fires there. Signals the airlock recorded earlier (on the report at
	// intake) are named again.
	d = airlock.MergeSignals(d, airlock.JoinSignals(d.Signals, airlock.DetectTogether(strs...)))
	d = airlock.MergeSignals(d, recorded)
	b.WriteString(airlock.Spotlight(d, boundary))
	return b.String()
}

// inputStrings returns the string values of a JSON document in document
// order, and the airlock signal names found in any "signals" array.
// Invalid JSON yields what was read before the error.
func inputStrings(raw []byte) (strs, signals []string) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	// stack holds, per open container, whether it is an object and, for an
	// object, whether the next string is a key; key is the last key read.
	type level struct{ object, wantKey bool }
	var stack []level
	key := ""
	inSignals := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return strs, signals
		}
		top := len(stack) - 1
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if v == '[' && top >= 0 && stack[top].object && key == "signals" {
					inSignals = len(stack) + 1
				}
				if top >= 0 && stack[top].object {
					stack[top].wantKey = true
				}
				stack = append(stack, level{object: v == '{', wantKey: v == '{'})
			default:
				if inSignals == len(stack) {
					inSignals = 0
				}
				stack = stack[:top]
				if n := len(stack) - 1; n >= 0 && stack[n].object {
					stack[n].wantKey = true
				}
			}
		case string:
			if top >= 0 && stack[top].object && stack[top].wantKey {
				key, stack[top].wantKey = v, false
				continue
			}
			if top >= 0 && stack[top].object {
				stack[top].wantKey = true
			}
			if inSignals == len(stack) && airlock.KnownSignal(v) {
				signals = append(signals, v)
			}
			strs = append(strs, v)
		default:
			if top >= 0 && stack[top].object {
				stack[top].wantKey = true
			}
		}
	}
}
