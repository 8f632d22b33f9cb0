package httpapi

import (
	"net/http"

	"github.com/signoff-dev/signoff"
)

// maxReportBody bounds a public report: far more than any honest report,
// far less than the general API limit.
const maxReportBody = 64 << 10

// public registers an unauthenticated route.
func (s *server) public(pattern string, fn func(w http.ResponseWriter, r *http.Request) error) {
	s.handle(Route{Pattern: pattern, Public: true}, func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			s.fail(w, r, err)
		}
	})
}

type reportCreated struct {
	CaseID   string          `json:"case_id"`
	Report   signoff.Report  `json:"report"`
	Tracking trackingCreated `json:"tracking"`
}

type trackingCreated struct {
	// Token is the reporter's capability for this one case, shown once.
	Token string `json:"token"`
	Path  string `json:"path"`
}

func (s *server) submitReport(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("id")
	if err := s.admitReport(w, r, project); err != nil {
		return err
	}
	var in signoff.ReportInput
	if err := decodeJSONLimit(w, r, &in, maxReportBody); err != nil {
		return err
	}
	in.ProjectID = project
	c, rep, secret, err := s.store.SubmitReport(r.Context(), in)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, reportCreated{CaseID: c.ID, Report: rep, Tracking: trackingCreated{Token: secret, Path: "/api/v1/track/" + secret}})
	return nil
}

func (s *server) track(w http.ResponseWriter, r *http.Request) error {
	token := r.PathValue("token")
	if err := s.admitLink(w, r, token, false); err != nil {
		return err
	}
	if s.opts.desk != nil {
		v, err := s.opts.desk.Track(r.Context(), token)
		if err != nil {
			return err
		}
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, http.StatusOK, v)
		return nil
	}
	t, err := s.store.Track(r.Context(), token)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, t)
	return nil
}

type answerInput struct {
	Text string `json:"text"`
}

func (s *server) answer(w http.ResponseWriter, r *http.Request) error {
	if err := s.admitLink(w, r, r.PathValue("token"), true); err != nil {
		return err
	}
	var in answerInput
	if err := decodeJSONLimit(w, r, &in, maxReportBody); err != nil {
		return err
	}
	rep, err := s.store.Answer(r.Context(), r.PathValue("token"), in.Text)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, rep)
	return nil
}

func (s *server) listReports(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	reps, err := s.store.ListReports(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"reports": reps})
	return nil
}
