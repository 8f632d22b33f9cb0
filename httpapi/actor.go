package httpapi

import (
	"net/http"
	"time"

	"github.com/signoff-dev/signoff"
)

// getMe answers the caller, so a client can learn its own id and role.
func (s *server) getMe(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	writeJSON(w, http.StatusOK, by)
	return nil
}

func (s *server) listActors(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	as, err := s.store.ListActors(r.Context(), by.WorkspaceID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"actors": as})
	return nil
}

func (s *server) getActor(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	a, err := s.store.GetActor(r.Context(), by.WorkspaceID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, a)
	return nil
}

type actorInput struct {
	Name string       `json:"name"`
	Role signoff.Role `json:"role"`
}

func (s *server) createActor(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in actorInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	a, err := s.store.CreateActor(r.Context(), by, in.Name, in.Role)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/actors/"+a.ID)
	writeJSON(w, http.StatusCreated, a)
	return nil
}

func (s *server) listTokens(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	ts, err := s.store.ListTokens(r.Context(), by.WorkspaceID, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": ts})
	return nil
}

type tokenInput struct {
	Label string `json:"label"`
	// ExpiresAt is parsed here rather than by encoding/json so that a bad
	// value gets a message naming the field and the format.
	ExpiresAt *string `json:"expires_at"`
}

// createdToken is the only response that ever carries a secret.
type createdToken struct {
	Token  signoff.Token `json:"token"`
	Secret string        `json:"secret"`
}

func (s *server) createToken(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in tokenInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	var expires *time.Time
	if in.ExpiresAt != nil {
		t, err := time.Parse(time.RFC3339, *in.ExpiresAt)
		if err != nil {
			return signoff.Errorf(signoff.EINVALID, "expires_at must be an RFC 3339 time such as 2030-01-02T15:04:05Z")
		}
		expires = &t
	}
	t, secret, err := s.store.CreateToken(r.Context(), by, r.PathValue("id"), in.Label, expires)
	if err != nil {
		return err
	}
	// Every API response is already no-store; this one says so itself
	// because it holds the secret, the one time it is ever shown.
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, createdToken{Token: t, Secret: secret})
	return nil
}

func (s *server) revokeToken(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	t, err := s.store.RevokeToken(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}
