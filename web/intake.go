package web

import (
	"context"
	"net/http"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/mail"
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
	// Contact says what happens with the e-mail address the reporter
	// gave, "" when they gave none.
	Contact string
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
	// The limits come after the form is read, so that a refused report
	// is shown again with what the reporter wrote.
	if err := s.admitReport(w, r, id); err != nil {
		return again(http.StatusTooManyRequests, signoff.ErrorMessage(err))
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
	v := reportedView{Project: name, Path: p, URL: scheme + "://" + r.Host + p, Title: c.Title, Contact: s.contactNote(r.Context(), c.WorkspaceID, in.Contact)}
	s.render(w, r, http.StatusCreated, "reported", page{Title: "Thank you", Script: "track.js", Body: v})
	return nil
}

// contactNote tells a reporter who left an e-mail address what it is used
// for, and only what the code does: the tracking link is never mailed (the
// server keeps only its hash, so it could not send it later either), and
// the address gets news of the case only when the workspace has an enabled
// e-mail channel (notify's sendMail writes reporters on the moves that
// concern them, without the link).
func (s *server) contactNote(ctx context.Context, ws, contact string) string {
	if contact == "" {
		return ""
	}
	const notMailed = "We did not send this link by e-mail, and cannot send it later: we keep only a fingerprint of it. "
	if _, ok := mail.ValidAddress(contact); ok && s.mailsReporters(ctx, ws) {
		return notMailed + "We will write to the address you gave when we need your answer and when your report is closed; those messages do not carry the link, so keep it."
	}
	return notMailed + "We do not send news by e-mail: this link is how you follow your report. Only the team's owners see the address you gave."
}

// mailsReporters reports whether the workspace has an enabled e-mail
// channel. An error counts as no: the page must not promise a message.
func (s *server) mailsReporters(ctx context.Context, ws string) bool {
	chs, err := s.store.ListChannels(ctx, signoff.SystemActor(ws))
	if err != nil {
		s.log.ErrorContext(ctx, "list channels for the report page", "err", err)
		return false
	}
	for _, ch := range chs {
		if ch.Kind == signoff.ChannelEmail && ch.Enabled {
			return true
		}
	}
	return false
}
