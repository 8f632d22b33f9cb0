package httpapi

import (
	"net/http"

	"github.com/signoff-dev/signoff"
)

// getTriage shows a case's triage as it stands: the run (status, outcome,
// the ticket it landed on, the crew's recorded state with the evidence and
// the search results the investigator saw) and the case's decisions, so
// the desk sees the gate and who answered it.
func (s *server) getTriage(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	run, err := s.store.GetTriage(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	ds, err := s.store.ListDecisions(r.Context(), by, run.CaseID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"run": run, "decisions": ds})
	return nil
}
