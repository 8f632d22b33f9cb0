package httpapi

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// maxLimit is the largest page a client may ask for.
const maxLimit = 500

func (s *server) listCases(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	q, err := query(r, "project_id", "kind", "state", "cursor", "limit")
	if err != nil {
		return err
	}
	f := signoff.CaseFilter{ProjectID: q["project_id"], Kind: signoff.CaseKind(q["kind"]), State: q["state"], Cursor: q["cursor"]}
	if f.Limit, err = limitParam(q); err != nil {
		return err
	}
	page, err := s.store.ListCases(r.Context(), by.WorkspaceID, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

func (s *server) createCase(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in signoff.CaseInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	// A change request has a reason, a loop and a plan: it is opened at
	// the change desk's route, never as a bare case no plan can reach.
	if in.Kind == signoff.KindChange {
		return signoff.Errorf(signoff.EINVALID, "a change request is opened at POST /api/v1/projects/{id}/changes, with its reason, not as a bare case")
	}
	c, err := s.store.CreateCase(r.Context(), by, in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/v1/cases/"+c.ID)
	writeJSON(w, http.StatusCreated, c)
	return nil
}

func (s *server) getCase(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	c, err := s.store.GetCase(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

type transitionResult struct {
	Case  signoff.Case  `json:"case"`
	Event signoff.Event `json:"event"`
}

// transitionCase asks the store to apply one command. The store holds the
// rest of the decision: the transition table per role, the reporter's
// ownership of the case and the optimistic version check.
func (s *server) transitionCase(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in signoff.TransitionInput
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Command == "" {
		return signoff.Errorf(signoff.EINVALID, "command is required")
	}
	// The store refuses the bug loop's own steps for everyone. Triage
	// outcomes are refused here for agents only: the crew's tools apply
	// them in-process, through the store, after their guards and gate.
	if by.Role.IsAgent() && workflow.TriageOutcome(in.Command) {
		c, err := s.store.GetCase(r.Context(), by, r.PathValue("id"))
		if err != nil {
			return err
		}
		if c.Kind == signoff.KindBug {
			return signoff.Errorf(signoff.EFORBIDDEN, "%s is a triage outcome: an agent reaches it only through the triage tools, which hold the guards and the human gate", in.Command)
		}
	}
	c, e, err := s.store.TransitionCase(r.Context(), by, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, transitionResult{Case: c, Event: e})
	return nil
}

func (s *server) listEvents(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	q, err := query(r, "after", "limit")
	if err != nil {
		return err
	}
	var after int64
	if v, ok := q["after"]; ok {
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			return signoff.Errorf(signoff.EINVALID, "after must be an integer of at least 0")
		}
	}
	limit, err := limitParam(q)
	if err != nil {
		return err
	}
	evs, err := s.store.ListEvents(r.Context(), by, r.PathValue("id"), after, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": evs})
	return nil
}

// query returns the query parameters of r, refusing unknown and repeated
// ones: a misspelled filter must not silently widen a listing.
func query(r *http.Request, allowed ...string) (map[string]string, error) {
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, signoff.Errorf(signoff.EINVALID, "malformed query string")
	}
	known := map[string]bool{}
	for _, k := range allowed {
		known[k] = true
	}
	out := map[string]string{}
	for k, vs := range vals {
		if !known[k] {
			return nil, signoff.Errorf(signoff.EINVALID, "unknown query parameter %q", k)
		}
		if len(vs) != 1 {
			return nil, signoff.Errorf(signoff.EINVALID, "query parameter %q given more than once", k)
		}
		out[k] = vs[0]
	}
	return out, nil
}

// limitParam reads the page size. Absent means the store's default; the
// store would clamp a bad value, but a client that asks for -1 or 10000 has
// a bug it should hear about.
func limitParam(q map[string]string) (int, error) {
	v, ok := q["limit"]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxLimit {
		return 0, signoff.Errorf(signoff.EINVALID, "limit must be an integer from 1 to %d", maxLimit)
	}
	return n, nil
}
