package httpapi

import (
	"net/http"

	"github.com/signoff-dev/signoff"
)

type attentionInput struct {
	Note string `json:"note"`
}

// requestAttention records a case.attention event on the case and moves
// nothing. It is what an agent does where it may not act (a state a
// person's decision produced): the people who run the desk see it on the
// case and on the event stream. The store decides who may ask.
func (s *server) requestAttention(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in attentionInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	e, err := s.store.RequestAttention(r.Context(), by, r.PathValue("id"), in.Note)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"event": e})
	return nil
}
