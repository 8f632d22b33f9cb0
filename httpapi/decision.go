package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/signoff-dev/signoff"
)

func (s *server) getDecision(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	d, err := s.store.GetDecision(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

type decideInput struct {
	// SubjectDigest is the digest of exactly what the person was shown; a
	// decision is never given by id alone.
	SubjectDigest string `json:"subject_digest"`
	// Approve is a pointer so that leaving it out is an error rather than
	// a rejection.
	Approve *bool  `json:"approve"`
	Reason  string `json:"reason"`
	// Amendment is what the person answers beyond yes or no, e.g.
	// {"severity":"critical"} at the triage gate.
	Amendment json.RawMessage `json:"amendment,omitempty"`
}

// decide approves or rejects a pending decision over its subject digest.
// The route is closed to every agent role by policy, and the store refuses
// agents again.
func (s *server) decide(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in decideInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.SubjectDigest == "" {
		return signoff.Errorf(signoff.EINVALID, "subject_digest is required: the digest of what you were shown")
	}
	if in.Approve == nil {
		return signoff.Errorf(signoff.EINVALID, "approve is required: true to approve, false to reject")
	}
	d, err := s.store.DecideAmended(r.Context(), by, r.PathValue("id"), in.SubjectDigest, *in.Approve, in.Reason, in.Amendment)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}
