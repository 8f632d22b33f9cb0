package agent

import (
	"context"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/airlock"
)

// BaseTools are the tools every deployment has. Capabilities add their own
// record_* tools to the same registry.
func BaseTools() []*Tool {
	return []*Tool{getTaskTool(), postMessageTool(), recordNoteTool()}
}

type getTaskArgs struct{}

func getTaskTool() *Tool {
	return NewTool("get_task", "Read your current task again: its id, kind, status, input digest and input (untrusted data).",
		func(ctx context.Context, env *Env, _ getTaskArgs) (Result, error) {
			t, err := env.Store.GetTask(ctx, env.Actor, env.Task.ID)
			if err != nil {
				return Result{}, err
			}
			return Result{Text: RenderTask(t, airlock.NewBoundary())}, nil
		})
}

type postMessageArgs struct {
	Text string `json:"text" jsonschema:"the message to post in the case's conversation, plain text"`
}

func postMessageTool() *Tool {
	return NewTool("post_message", "Post a message in the case's conversation, where people and other agents read it. Mentioning an agent (@role) asks it for help only if its addressing policy admits you.",
		func(ctx context.Context, env *Env, in postMessageArgs) (Result, error) {
			if strings.TrimSpace(in.Text) == "" {
				return Result{}, signoff.Errorf(signoff.EINVALID, "text is empty")
			}
			m, err := env.Store.PostMessage(ctx, env.Actor, env.Task.CaseID, in.Text)
			if err != nil {
				return Result{}, err
			}
			var b strings.Builder
			b.WriteString("Posted as " + m.ID + ".")
			for _, men := range m.Mentions {
				if men.Refused != "" {
					b.WriteString(" @" + men.Handle + " was not addressed: " + men.Refused + ".")
				} else {
					b.WriteString(" @" + men.Handle + " got task " + men.TaskID + ".")
				}
			}
			return Result{Text: b.String()}, nil
		})
}

type recordNoteArgs struct {
	Summary string `json:"summary" jsonschema:"what you found or did, in a few sentences"`
}

func recordNoteTool() *Tool {
	return NewTool("record_note", "Record your result for this task as a note. This is how a task that asks for a note or an answer is completed.",
		func(ctx context.Context, env *Env, in recordNoteArgs) (Result, error) {
			s := strings.TrimSpace(in.Summary)
			if s == "" {
				return Result{}, signoff.Errorf(signoff.EINVALID, "summary is empty")
			}
			if len(s) > 8<<10 {
				return Result{}, signoff.Errorf(signoff.EINVALID, "summary is longer than 8 KiB")
			}
			return Result{Text: "Note recorded.", Output: map[string]any{"note": s}}, nil
		})
}
