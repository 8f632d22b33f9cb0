package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/signoff-dev/signoff"
)

const maxTurn = 100_000

const callColumns = `id, workspace_id, task_id, case_id, actor_id, turn, provider, model, evidence, prompt_digest, request, response,
	prompt_tokens, completion_tokens, cost_micros, latency_ms, outcome, error, created_at`

func scanCall(sc scanner, c *signoff.ModelCall) error {
	var req string
	var resp sql.NullString
	var at int64
	if err := sc.Scan(&c.ID, &c.WorkspaceID, &c.TaskID, &c.CaseID, &c.ActorID, &c.Turn, &c.Provider, &c.Model, &c.Evidence, &c.PromptDigest, &req, &resp,
		&c.PromptTokens, &c.CompletionTokens, &c.CostMicros, &c.LatencyMS, &c.Outcome, &c.Error, &at); err != nil {
		return err
	}
	c.Request, c.CreatedAt = json.RawMessage(req), fromMicros(at)
	if resp.Valid {
		c.Response = json.RawMessage(resp.String)
	}
	return nil
}

// RecordCall implements signoff.CallService. The store fills the id, the
// workspace and case (from the task), the actor (the task's assignee, on
// whose behalf the call was made, even when the server records it) and the
// time. A call may be recorded whatever the task's status: a transcript is
// evidence of what happened, including a call that outlived its task. An
// empty PromptDigest is computed from Request; an over-long Error is cut.
func (s *DB) RecordCall(ctx context.Context, by signoff.Actor, c signoff.ModelCall) (signoff.ModelCall, error) {
	if err := signoff.CheckID("task", signoff.PrefixTask, c.TaskID); err != nil {
		return signoff.ModelCall{}, err
	}
	if err := checkToken("provider", c.Provider); err != nil {
		return signoff.ModelCall{}, err
	}
	if err := signoff.CheckText("model", c.Model, false, 200); err != nil {
		return signoff.ModelCall{}, err
	}
	if !signoff.ValidEvidence(c.Evidence) {
		return signoff.ModelCall{}, signoff.Errorf(signoff.EINVALID, "evidence must be live, replayed, authored or simulated")
	}
	switch c.Outcome {
	case "ok", "error", "timeout":
	default:
		return signoff.ModelCall{}, signoff.Errorf(signoff.EINVALID, "outcome must be ok, error or timeout")
	}
	if c.Turn < 0 || c.Turn > maxTurn {
		return signoff.ModelCall{}, signoff.Errorf(signoff.EINVALID, "turn must be between 0 and %d", maxTurn)
	}
	if c.PromptTokens < 0 || c.CompletionTokens < 0 || c.CostMicros < 0 || c.LatencyMS < 0 {
		return signoff.ModelCall{}, signoff.Errorf(signoff.EINVALID, "tokens, cost and latency must not be negative")
	}
	req, reqDigest, err := canonicalJSON("request", c.Request, maxCallJSON, false, nil)
	if err != nil {
		return signoff.ModelCall{}, err
	}
	c.Request = req
	if c.PromptDigest == "" {
		c.PromptDigest = reqDigest
	} else if err := checkDigest("prompt_digest", c.PromptDigest); err != nil {
		return signoff.ModelCall{}, err
	}
	var resp sql.NullString
	respDigest := ""
	if len(c.Response) > 0 {
		r, d, err := canonicalJSON("response", c.Response, maxCallJSON, false, nil)
		if err != nil {
			return signoff.ModelCall{}, err
		}
		c.Response, respDigest, resp = r, d, sql.NullString{String: string(r), Valid: true}
	} else {
		c.Response = nil
	}
	c.Error = truncateBytes(c.Error, maxCallError)
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		t, err := s.getTask(ctx, tx, by.WorkspaceID, c.TaskID)
		if err != nil {
			return err
		}
		if by.ID != t.AssigneeID && !isServer(by) {
			return signoff.Errorf(signoff.EFORBIDDEN, "only the task's assignee records its calls")
		}
		c.ID, c.WorkspaceID, c.CaseID, c.ActorID, c.CreatedAt = signoff.NewID(signoff.PrefixCall), t.WorkspaceID, t.CaseID, t.AssigneeID, s.clock()
		if _, err := tx.ExecContext(ctx, `INSERT INTO model_calls (`+callColumns+`, response_digest)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
			c.ID, c.WorkspaceID, c.TaskID, c.CaseID, c.ActorID, c.Turn, c.Provider, c.Model, c.Evidence, c.PromptDigest, string(c.Request), resp,
			c.PromptTokens, c.CompletionTokens, c.CostMicros, c.LatencyMS, c.Outcome, c.Error, micros(c.CreatedAt), respDigest); err != nil {
			return err
		}
		_, err = s.appendEvent(ctx, tx, c.WorkspaceID, c.CaseID, "agent.call", by.ID, map[string]any{
			"call_id": c.ID, "task_id": c.TaskID, "actor_id": c.ActorID, "turn": c.Turn, "provider": c.Provider, "model": c.Model,
			"evidence": c.Evidence, "prompt_digest": c.PromptDigest, "response_digest": respDigest,
			"prompt_tokens": c.PromptTokens, "completion_tokens": c.CompletionTokens, "cost_micros": c.CostMicros,
			"latency_ms": c.LatencyMS, "outcome": c.Outcome,
		})
		return err
	})
	if err != nil {
		return signoff.ModelCall{}, fmt.Errorf("record call for %s: %w", c.TaskID, err)
	}
	return c, nil
}

// ListCalls implements signoff.CallService.
func (s *DB) ListCalls(ctx context.Context, by signoff.Actor, taskID string) ([]signoff.ModelCall, error) {
	t, err := s.visibleTask(ctx, s.db, by, taskID)
	if err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db, scanCall, `SELECT `+callColumns+` FROM model_calls WHERE workspace_id = $1 AND task_id = $2 ORDER BY turn, id`, t.WorkspaceID, t.ID)
	if err != nil {
		return nil, fmt.Errorf("list calls of %s: %w", taskID, err)
	}
	return out, nil
}
