package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/airlock"
	"github.com/signoff-dev/signoff/bugdesk"
)

// listTasks lists tasks newest first. An agent sees only its own whatever
// it filters by: the store enforces that.
func (s *server) listTasks(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	q, err := query(r, "status", "case_id", "assignee_id", "role", "limit")
	if err != nil {
		return err
	}
	f := signoff.TaskFilter{Status: q["status"], CaseID: q["case_id"], AssigneeID: q["assignee_id"], Role: signoff.Role(q["role"])}
	if f.Limit, err = limitParam(q); err != nil {
		return err
	}
	ts, err := s.store.ListTasks(r.Context(), by, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"tasks": ts})
	return nil
}

func (s *server) createTask(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in signoff.TaskInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	t, err := s.store.CreateTask(r.Context(), by, in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/tasks/"+t.ID)
	writeJSON(w, http.StatusCreated, t)
	return nil
}

func (s *server) getTask(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	t, err := s.store.GetTask(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// taskPrompt is the task as a model or an external agent is shown it:
// Signoff's framing, and the input as spotlighted, untrusted data inside a
// boundary made fresh for this response, so text in the input cannot guess
// it and close the data block early.
type taskPrompt struct {
	TaskID      string `json:"task_id"`
	InputDigest string `json:"input_digest"`
	Prompt      string `json:"prompt"`
}

func (s *server) taskPrompt(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	t, err := s.store.GetTask(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, taskPrompt{TaskID: t.ID, InputDigest: t.InputDigest, Prompt: agent.RenderTask(t, airlock.NewBoundary())})
	return nil
}

// submitInput is a signoff.Submission whose task id is the path's.
type submitInput struct {
	InputDigest string          `json:"input_digest"`
	Output      json.RawMessage `json:"output"`
	// Evidence defaults to live: an agent submitting over the API ran
	// its step just now. Replayed, authored and simulated results must
	// say so; the type is never upgraded later.
	Evidence string `json:"evidence"`
	Final    bool   `json:"final"`
}

// submitTask records an agent's result against its receipt: the task id in
// the path and the input digest it was given. The store refuses a task
// assigned to another identity (403), and a replay, a closed task or a
// changed input (409), leaving the ledger as it was.
func (s *server) submitTask(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in submitInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.InputDigest == "" {
		return signoff.Errorf(signoff.EINVALID, "input_digest is required: quote the digest of the input you were given")
	}
	if in.Evidence == "" {
		in.Evidence = signoff.EvidenceLive
	}
	if cur, err := s.store.GetTask(r.Context(), by, r.PathValue("id")); err == nil && s.opts.desk != nil && bugdesk.ProposalKind(cur.Kind) {
		return signoff.Errorf(signoff.EFORBIDDEN, "a %s task ends with its proposal, which the bug desk checks (run in the sandbox, path guards, verification): it is not submitted as a bare result", cur.Kind)
	}
	t, err := s.store.SubmitTask(r.Context(), by, signoff.Submission{
		TaskID: r.PathValue("id"), InputDigest: in.InputDigest, Output: in.Output, Evidence: in.Evidence, Final: in.Final,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

type handoffInput struct {
	InputDigest string `json:"input_digest"`
	To          string `json:"to"`
	Reason      string `json:"reason"`
}

type handoffResult struct {
	Closed signoff.Task `json:"closed"`
	Next   signoff.Task `json:"next"`
}

// handoffTask closes the caller's recorded task and opens the next one, if
// the workspace's role configuration lets the task's role hand off there.
// It goes through agent.Handoff, as the runtime and MCP do, so the handoff
// graph holds on every path.
func (s *server) handoffTask(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in handoffInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.InputDigest == "" {
		return signoff.Errorf(signoff.EINVALID, "input_digest is required: quote the digest of the input you were given")
	}
	if in.To == "" {
		return signoff.Errorf(signoff.EINVALID, "to is required: the role to hand off to")
	}
	cfg, err := agent.LoadConfig(r.Context(), s.store, by.WorkspaceID, s.tools)
	if err != nil {
		return err
	}
	closed, next, err := agent.Handoff(r.Context(), s.store, cfg, by, r.PathValue("id"), in.InputDigest, in.To, in.Reason)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/tasks/"+next.ID)
	writeJSON(w, http.StatusCreated, handoffResult{Closed: closed, Next: next})
	return nil
}

type closeInput struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
}

// closeTask ends a task without a result: an agent gives up its own
// (needs_human), a person cancels any.
func (s *server) closeTask(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in closeInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Outcome == "" {
		return signoff.Errorf(signoff.EINVALID, "outcome is required (%s or %s)", signoff.OutcomeNeedsHuman, signoff.OutcomeCancelled)
	}
	t, err := s.store.CloseTask(r.Context(), by, r.PathValue("id"), in.Outcome, in.Reason)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// listCalls returns a task's model transcripts, the evidence of what its
// agent was shown and answered.
func (s *server) listCalls(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	cs, err := s.store.ListCalls(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"calls": cs})
	return nil
}
