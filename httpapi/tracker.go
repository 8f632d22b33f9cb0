package httpapi

import (
	"net/http"
	"net/url"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/triage"
)

// maxDataBody bounds the bodies that carry bulk project data (a dataset,
// a batch of crash events): 100,000 crash events are about 20 MB of JSON.
const maxDataBody = 32 << 20

func ticketPath(projectID, ticketID string) string {
	return "/api/v1/projects/" + projectID + "/tickets/" + url.PathEscape(ticketID)
}

func (s *server) listTickets(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	ts, err := s.store.ListTickets(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"tickets": ts})
	return nil
}

// createTicket files a ticket; an empty id gets the tracker's next one.
// Who approved a ticket is recorded by the triage crew's gate, never
// claimed by an agent over the API.
func (s *server) createTicket(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in triage.Ticket
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if by.Role.IsAgent() && in.ApprovedBy != "" {
		return signoff.Errorf(signoff.EFORBIDDEN, "agents do not record approvals: leave approved_by empty")
	}
	p := r.PathValue("id")
	t, err := s.store.CreateTicket(r.Context(), by, p, in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", ticketPath(p, t.ID))
	writeJSON(w, http.StatusCreated, t)
	return nil
}

func (s *server) getTicket(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	t, err := s.store.GetTicket(r.Context(), by, r.PathValue("id"), r.PathValue("ticket"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// patchTicket applies the given fields; absent fields keep their value.
// The store merges under the ticket's lock. Comments are added through
// their own route and approved_by is history: neither is patchable.
func (s *server) patchTicket(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in signoff.TicketPatch
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	t, err := s.store.PatchTicket(r.Context(), by, r.PathValue("id"), r.PathValue("ticket"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

// addComment appends a +1 or a note and answers the whole ticket.
func (s *server) addComment(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in triage.Comment
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	p, id := r.PathValue("id"), r.PathValue("ticket")
	t, err := s.store.AddComment(r.Context(), by, p, id, in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", ticketPath(p, t.ID))
	writeJSON(w, http.StatusCreated, t)
	return nil
}

type crashesDoc struct {
	Crashes []triage.CrashEvent `json:"crashes"`
}

func (s *server) listCrashes(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	cs, err := s.store.ListCrashes(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, crashesDoc{Crashes: cs})
	return nil
}

// addCrashes appends a batch of crash events to the project's log.
func (s *server) addCrashes(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in crashesDoc
	if err := decodeJSONLimit(w, r, &in, maxDataBody); err != nil {
		return err
	}
	if err := s.store.AddCrashes(r.Context(), by, r.PathValue("id"), in.Crashes); err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]int{"added": len(in.Crashes)})
	return nil
}

func (s *server) getReleases(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	rel, err := s.store.GetReleases(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rel)
	return nil
}

// putReleases replaces the project's release data and answers it as
// stored.
func (s *server) putReleases(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in triage.Releases
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	p := r.PathValue("id")
	if err := s.store.PutReleases(r.Context(), by, p, in); err != nil {
		return err
	}
	rel, err := s.store.GetReleases(r.Context(), by, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rel)
	return nil
}

type ownersDoc struct {
	Owners []triage.Owner `json:"owners"`
}

func (s *server) getOwners(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	o, err := s.store.GetOwners(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ownersDoc{Owners: o})
	return nil
}

// putOwners replaces the project's CODEOWNERS. The list must be given,
// even empty (no CODEOWNERS: components are then free), so that a body
// missing it by mistake does not silently clear them.
func (s *server) putOwners(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in ownersDoc
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	if in.Owners == nil {
		return signoff.Errorf(signoff.EINVALID, "owners is required; an empty list removes the project's CODEOWNERS")
	}
	p := r.PathValue("id")
	if err := s.store.PutOwners(r.Context(), by, p, in.Owners); err != nil {
		return err
	}
	o, err := s.store.GetOwners(r.Context(), by, p)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ownersDoc{Owners: o})
	return nil
}

// importResult says how much project data an import stored.
type importResult struct {
	Tickets  int `json:"tickets"`
	Crashes  int `json:"crashes"`
	Owners   int `json:"owners"`
	Releases int `json:"releases"`
}

// importDataset replaces the project's tickets, crash log, release data
// and CODEOWNERS with a dataset's (triage.Dataset JSON). Feedback items
// and expected outcomes are not project data: reports come in through
// intake, so a dataset carrying them is refused rather than half taken.
func (s *server) importDataset(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in triage.Dataset
	if err := decodeJSONLimit(w, r, &in, maxDataBody); err != nil {
		return err
	}
	if len(in.Items) > 0 || len(in.Expected) > 0 {
		return signoff.Errorf(signoff.EINVALID, "items and expected are not project data: submit reports through intake and leave both empty")
	}
	if err := s.store.ImportDataset(r.Context(), by, r.PathValue("id"), in); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, importResult{Tickets: len(in.Tickets), Crashes: len(in.Crashes), Owners: len(in.Owners), Releases: len(in.Releases.Releases)})
	return nil
}
