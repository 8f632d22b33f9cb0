package httpapi

import (
	"net/http"

	"github.com/signoff-dev/signoff"
)

// getWorkspace answers the caller's own workspace; there is no way to name
// another one.
func (s *server) getWorkspace(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	ws, err := s.store.GetWorkspace(r.Context(), by.WorkspaceID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ws)
	return nil
}

type workspacePatch struct {
	Name *string `json:"name"`
}

// patchWorkspace renames the caller's workspace.
func (s *server) patchWorkspace(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in workspacePatch
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Name == nil {
		return signoff.Errorf(signoff.EINVALID, "name is required")
	}
	ws, err := s.store.RenameWorkspace(r.Context(), by, by.WorkspaceID, *in.Name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ws)
	return nil
}
