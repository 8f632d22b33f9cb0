package httpapi

import (
	"net/http"

	"github.com/signoff-dev/signoff"
)

func (s *server) listProjects(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	ps, err := s.store.ListProjects(r.Context(), by.WorkspaceID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"projects": ps})
	return nil
}

func (s *server) getProject(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	p, err := s.store.GetProject(r.Context(), by.WorkspaceID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

func (s *server) createProject(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in signoff.ProjectInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	p, err := s.store.CreateProject(r.Context(), by, in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/projects/"+p.ID)
	writeJSON(w, http.StatusCreated, p)
	return nil
}

// patchProject applies the given fields; absent fields keep their value.
// The store merges under the row's lock, so concurrent patches of different
// fields both take effect.
func (s *server) patchProject(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in signoff.ProjectPatch
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	p, err := s.store.UpdateProject(r.Context(), by, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}
