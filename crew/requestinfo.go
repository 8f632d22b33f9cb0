package crew

import (
	"context"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/triage"
)

type infoArgs struct {
	Message  string `json:"message" jsonschema:"the clarification request, in the reporter's own language"`
	Language string `json:"language" jsonschema:"ISO 639-1 code of the message's language"`
}

func requestInfoTool() *agent.Tool {
	return agent.NewTool("request_info", "Ask the reporter for what is missing (device, app version, steps), in their own language.",
		func(ctx context.Context, env *agent.Env, in infoArgs) (agent.Result, error) {
			if strings.TrimSpace(in.Message) == "" || len(in.Message) > 4000 {
				return agent.Result{}, signoff.Errorf(signoff.EINVALID, "message must be 1 to 4000 bytes")
			}
			r, err := loadRun(ctx, env.Store, env.Actor, env.Task.CaseID)
			if err != nil {
				return agent.Result{}, err
			}
			if r.st.Investigation == nil || r.st.Investigation.Verdict != triage.VerdictNeedsInfo {
				return agent.Result{}, signoff.Errorf(signoff.ECONFLICT, "request_info follows an investigation that recorded needs_info")
			}
			r.st.Action = &triage.Action{Kind: "clarify", Body: in.Message, Language: in.Language}
			r.Status, r.Outcome = signoff.TriageDone, triage.OutcomeNeedsInfo
			if err := r.save(ctx, env.Store, env.Actor); err != nil {
				return agent.Result{}, err
			}
			if _, err := env.Store.PostMessage(ctx, env.Actor, r.CaseID, in.Message); err != nil {
				return agent.Result{}, err
			}
			if err := transition(ctx, env, "request_info", "clarification asked in "+in.Language); err != nil {
				return agent.Result{}, err
			}
			return agent.Result{Text: "Clarification recorded.", Output: map[string]any{"language": in.Language}, Final: true}, nil
		})
}
