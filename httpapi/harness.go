package httpapi

import (
	"net/http"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
)

// The staff review of a reproduction (the SYNKAI rule): people read the
// harness's test source in full, with what fails on the base and what the
// static checks found, and approve or reject it over its review digest
// before any fix is tried. Agents and reporters reach neither route.

// getHarness serves the case's current reproduction for review.
func (s *server) getHarness(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	d, err := s.needDesk()
	if err != nil {
		return err
	}
	v, err := d.Harness(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, v)
	return nil
}

// reviewHarness records a person's decision on the reproduction they
// read: {"review_digest", "decision": "approve"|"reject", "note"}.
func (s *server) reviewHarness(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in bugdesk.HarnessDecision
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	d, err := s.needDesk()
	if err != nil {
		return err
	}
	v, c, err := d.ReviewHarness(r.Context(), by, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"harness": v, "case": c})
	return nil
}
