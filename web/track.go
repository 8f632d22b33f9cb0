package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/repair"
)

// The reporter's tracking page. The secret in the path is the capability
// for one case: the page shows that case's state in plain words and, when
// the case asks the reporter something, the question with Yes and No.
// Nothing on it comes from any other case, and every unknown or revoked
// secret is the same plain 404.

// stateWords says where a case is, for the person who reported it.
var stateWords = map[string]string{
	"received":                       "We received your report and are looking into it.",
	"triaging":                       "We are looking into it.",
	"needs_info":                     "We need a little more information from you.",
	"dropped":                        "We read your report. It is not something we will fix as a bug (it may be a question or a request), so this case is closed. Thank you for telling us.",
	"duplicate":                      "This is a problem we already know about. We will ask you here when a fix is live.",
	"awaiting_triage_approval":       "We are looking into it: a person is reviewing what we found.",
	"ticketed":                       "We confirmed the problem and filed it to be fixed.",
	"reproducing":                    "We are reproducing the problem.",
	"awaiting_reporter_repro":        "We need you: is this the bug you saw?",
	"reproduced":                     "We reproduced the problem and are working on a fix.",
	"fixing":                         "We are working on a fix.",
	"verifying":                      "We are checking a fix.",
	"awaiting_approval":              "A fix passed our checks and is waiting for a person to approve it.",
	"needs_human":                    "A person is looking at it.",
	"approved":                       "A fix was approved and will be released.",
	"merged":                         "A fix is ready and on its way to release.",
	"released":                       "A fix is live; we are checking it.",
	"awaiting_reporter_confirmation": "We need you: does the live fix work for you?",
	"verified":                       "Fixed: you confirmed that the fix works. Thank you!",
	"reopened":                       "You told us it still goes wrong, so we are working on it again.",
	"unconfirmed":                    "A fix went live but we did not hear back from you, so the case is closed as unconfirmed.",
	"closed":                         "This case is closed.",
}

// historyWords say, in the past, what each step of a case's history was,
// for the person who reported it. A step without words is not shown.
var historyWords = map[string]string{
	"received":                       "We received your report.",
	"triaging":                       "We started looking into it.",
	"needs_info":                     "We asked you for more information.",
	"answered":                       "We received your answer.",
	"dropped":                        "We closed it: it is not something we fix as a bug.",
	"duplicate":                      "We found it is a problem we already know about.",
	"awaiting_triage_approval":       "A person started reviewing what we found.",
	"ticketed":                       "We confirmed the problem and filed it to be fixed.",
	"reproducing":                    "We started reproducing the problem.",
	"awaiting_reporter_repro":        "We asked you whether our test shows your bug.",
	"reproduced":                     "We reproduced the problem.",
	"fixing":                         "We started working on a fix.",
	"verifying":                      "We checked a fix.",
	"awaiting_approval":              "A fix passed our checks and waited for a person to approve it.",
	"needs_human":                    "A person took it over.",
	"approved":                       "A fix was approved.",
	"merged":                         "The fix was merged.",
	"released":                       "The fix went live.",
	"awaiting_reporter_confirmation": "We asked you whether the live fix works.",
	"verified":                       "You confirmed that the fix works.",
	"reopened":                       "You told us it still goes wrong, so we reopened it.",
	"unconfirmed":                    "We closed it as unconfirmed: we did not hear back.",
	"closed":                         "The case was closed.",
}

// maxHistory bounds the steps the page lists (the newest are kept).
const maxHistory = 40

// historyStep is one line of the page's history.
type historyStep struct {
	At    time.Time
	Words string
}

// history turns a case's steps into plain words. A return to triage
// after the reporter's answer says so.
func history(steps []signoff.TrackStep) []historyStep {
	var out []historyStep
	prev := ""
	for _, st := range steps {
		w, ok := historyWords[st.Step]
		if st.Step == "triaging" && prev == "answered" {
			w = "We started looking at it again with your answer."
		}
		prev = st.Step
		if ok {
			out = append(out, historyStep{At: st.At, Words: w})
		}
	}
	if len(out) > maxHistory {
		out = out[len(out)-maxHistory:]
	}
	return out
}

// received is the page's confirmation of an answer to the last ask, or
// "" when there is none to confirm.
func received(t signoff.Tracking) string {
	if t.AnsweredAt == nil || t.AskedAt == nil || t.State == "needs_info" {
		return ""
	}
	msg := "Thanks — we received your answer on " + when(*t.AnsweredAt)
	if t.State == "triaging" || t.State == "awaiting_triage_approval" {
		return msg + "; triage is looking at it again."
	}
	return msg + "."
}

func words(state string) string {
	if w, ok := stateWords[state]; ok {
		return w
	}
	return "We are working on it."
}

// trackView is the tracking page.
type trackView struct {
	Secret     string
	Title      string
	State      string
	Words      string
	Updated    time.Time
	Question   string
	Kind       string
	Shown      string
	Digest     string
	NeedsInfo  bool
	InfoAsk    string
	CSRF       string
	Error      string
	Answer     string
	Text       string
	ShownLabel string
	// InfoLang is the language of InfoAsk, for the page's lang attribute.
	InfoLang string
	// Received confirms the reporter's answer; History is the case in
	// plain steps.
	Received string
	History  []historyStep
}

// track reads the page of secret: through the bug desk when it runs, which
// adds the question's digest, else from the store.
func (s *server) track(r *http.Request, secret string) (bugdesk.TrackView, error) {
	if s.o.BugDesk != nil {
		return s.o.BugDesk.Track(r.Context(), secret)
	}
	t, err := s.store.Track(r.Context(), secret)
	return bugdesk.TrackView{Tracking: t}, err
}

var errNoTracking = signoff.Errorf(signoff.ENOTFOUND, "There is nothing at this link.")

// renderTrack renders the page of secret with status; v carries what the
// reporter just sent when it is shown again with an error.
func (s *server) renderTrack(w http.ResponseWriter, r *http.Request, secret string, status int, v trackView) error {
	t, err := s.track(r, secret)
	if signoff.ErrorCode(err) == signoff.ENOTFOUND {
		return errNoTracking
	} else if err != nil {
		return err
	}
	v.Secret, v.Title, v.State, v.Words, v.Updated = secret, t.Title, t.State, words(t.State), t.UpdatedAt
	if t.Digest != "" {
		v.Question, v.Kind, v.Shown, v.Digest, v.ShownLabel = t.Question, t.Kind, t.Shown, t.Digest, questionLabel(t.Kind)
	}
	if t.State == "needs_info" {
		v.NeedsInfo, v.InfoAsk, v.InfoLang = true, t.Question, t.QuestionLanguage
	}
	v.Received, v.History = received(t.Tracking), history(t.History)
	v.CSRF = s.anonCSRF(w, r)
	title := "Your report"
	if v.Question != "" {
		title = v.Question
	}
	s.render(w, r, status, "track", page{Title: title, Script: "track.js", Body: v})
	return nil
}

func (s *server) trackPage(w http.ResponseWriter, r *http.Request) error {
	if err := admit(w, limitKey{s.trackIP, clientIP(r)}); err != nil {
		return err
	}
	return s.renderTrack(w, r, r.PathValue("secret"), http.StatusOK, trackView{})
}

// trackAnswer takes the reporter's Yes or No to the question on their
// page, bound to the digest of the question they saw. No needs what is
// different or still goes wrong.
func (s *server) trackAnswer(w http.ResponseWriter, r *http.Request) error {
	if err := admit(w, limitKey{s.trackIP, clientIP(r)}); err != nil {
		return err
	}
	if err := parseForm(w, r); err != nil {
		return err
	}
	if err := checkAnonCSRF(r); err != nil {
		return err
	}
	secret := r.PathValue("secret")
	if _, err := s.track(r, secret); err != nil {
		if signoff.ErrorCode(err) == signoff.ENOTFOUND {
			return errNoTracking
		}
		return err
	}
	ans := bugdesk.Answer{Digest: r.PostFormValue("digest"), Answer: r.PostFormValue("answer"), Text: r.PostFormValue("text")}
	again := func(status int, msg string) error {
		return s.renderTrack(w, r, secret, status, trackView{Error: msg, Answer: ans.Answer, Text: ans.Text})
	}
	switch {
	case ans.Answer != "yes" && ans.Answer != "no":
		return again(http.StatusUnprocessableEntity, "Please choose Yes or No.")
	case ans.Answer == "no" && strings.TrimSpace(ans.Text) == "":
		return again(http.StatusUnprocessableEntity, "Please tell us what is different or still goes wrong: we need it to try again.")
	case s.o.BugDesk == nil:
		return signoff.Errorf(signoff.EUNAVAILABLE, "Answers cannot be taken right now. Please try again later.")
	}
	_, err := s.o.BugDesk.ReporterAnswer(r.Context(), secret, ans)
	switch signoff.ErrorCode(err) {
	case "":
	case signoff.ENOTFOUND:
		return errNoTracking
	case signoff.ECONFLICT, signoff.EINVALID:
		status := http.StatusConflict
		if signoff.ErrorCode(err) == signoff.EINVALID {
			status = http.StatusUnprocessableEntity
		}
		return again(status, signoff.ErrorMessage(err))
	default:
		return err
	}
	http.Redirect(w, r, "/t/"+secret, http.StatusSeeOther)
	return nil
}

// trackInfo takes more information from a reporter whose case needs it.
// It goes through the airlock like the report, and the store sends the
// case back to triage with it in the same transaction; a case that needs
// nothing from them refuses it (409) and stores nothing.
func (s *server) trackInfo(w http.ResponseWriter, r *http.Request) error {
	if err := admit(w, limitKey{s.trackIP, clientIP(r)}); err != nil {
		return err
	}
	if err := parseForm(w, r); err != nil {
		return err
	}
	if err := checkAnonCSRF(r); err != nil {
		return err
	}
	secret := r.PathValue("secret")
	text := r.PostFormValue("text")
	if _, err := s.track(r, secret); err != nil {
		if signoff.ErrorCode(err) == signoff.ENOTFOUND {
			return errNoTracking
		}
		return err
	}
	if strings.TrimSpace(text) == "" {
		return s.renderTrack(w, r, secret, http.StatusUnprocessableEntity, trackView{Error: "Please write what you can tell us."})
	}
	_, err := s.store.Answer(r.Context(), secret, text)
	switch signoff.ErrorCode(err) {
	case "":
	case signoff.ENOTFOUND:
		return errNoTracking
	case signoff.EINVALID:
		return s.renderTrack(w, r, secret, http.StatusUnprocessableEntity, trackView{Error: signoff.ErrorMessage(err), Text: text})
	case signoff.ECONFLICT:
		// Answered already, or the case moved on: nothing was stored.
		return s.renderTrack(w, r, secret, http.StatusConflict, trackView{Error: signoff.ErrorMessage(err)})
	default:
		return err
	}
	http.Redirect(w, r, "/t/"+secret, http.StatusSeeOther)
	return nil
}

// questionLabel is the form's heading for a question kind.
func questionLabel(kind string) string {
	switch kind {
	case repair.AskRepro:
		return "This is what our test shows when it reproduces the problem:"
	case repair.AskFix:
		return "This is what went live:"
	}
	return ""
}
