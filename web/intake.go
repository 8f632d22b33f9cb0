package web

import (
	"net/http"
	"strings"

	"github.com/signoff-dev/signoff"
)

// The public report form: no account, no CAPTCHA, rate limited per client
// address and per project like the API's intake, and filed through the
// same airlocked SubmitReport.

// reportFormView is the report form.
type reportFormView struct {
	ProjectID, Project string
	CSRF               string
	Error              string
	In                 signoff.ReportInput
}

// reportedView is the page after filing: the tracking link, shown once.
type reportedView struct {
	Project string
	Path    string
	URL     string
	Title   string
}

func (s *server) reportForm(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("project")
	name, err := s.store.IntakeProject(r.Context(), id)
	if err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "report", page{Title: "Report a problem with " + name, Body: reportFormView{ProjectID: id, Project: name, CSRF: s.anonCSRF(w, r)}})
	return nil
}

func (s *server) submitReport(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("project")
	if err := admit(w, limitKey{s.intakeIP, clientIP(r)}, limitKey{s.intakeProject, id}); err != nil {
		return err
	}
	if err := parseForm(w, r); err != nil {
		return err
	}
	if err := checkAnonCSRF(r); err != nil {
		return err
	}
	name, err := s.store.IntakeProject(r.Context(), id)
	if err != nil {
		return err
	}
	f := r.PostForm
	in := signoff.ReportInput{ProjectID: id, Text: f.Get("text"), Steps: f.Get("steps"), Contact: strings.TrimSpace(f.Get("contact")),
		AppVersion: strings.TrimSpace(f.Get("app_version")), Device: strings.TrimSpace(f.Get("device")), OS: strings.TrimSpace(f.Get("os"))}
	again := func(status int, msg string) error {
		s.render(w, r, status, "report", page{Title: "Report a problem with " + name,
			Body: reportFormView{ProjectID: id, Project: name, CSRF: s.anonCSRF(w, r), Error: msg, In: in}})
		return nil
	}
	if strings.TrimSpace(in.Text) == "" {
		return again(http.StatusUnprocessableEntity, "Please tell us what happened.")
	}
	c, _, secret, err := s.store.SubmitReport(r.Context(), in)
	if signoff.ErrorCode(err) == signoff.EINVALID {
		return again(http.StatusUnprocessableEntity, signoff.ErrorMessage(err))
	} else if err != nil {
		return err
	}
	p := "/t/" + secret
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	s.render(w, r, http.StatusCreated, "reported", page{Title: "Thank you", Body: reportedView{Project: name, Path: p, URL: scheme + "://" + r.Host + p, Title: c.Title}})
	return nil
}
