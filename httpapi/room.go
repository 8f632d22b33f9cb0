package httpapi

import (
	"net/http"

	"github.com/signoff-dev/signoff"
)

func (s *server) listMessages(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	ms, err := s.store.ListMessages(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": ms})
	return nil
}

type messageInput struct {
	Body string `json:"body"`
}

// postMessage adds the caller's message to the case room. A mention that
// the agent's addressing policy refuses does not fail the post: the message
// is stored and its mentions say, each, which task was opened or why none
// was, so a refused sender learns the reason.
func (s *server) postMessage(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in messageInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	m, err := s.store.PostMessage(r.Context(), by, r.PathValue("id"), in.Body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, m)
	return nil
}
