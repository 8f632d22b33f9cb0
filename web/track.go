package web

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

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
	"awaiting_reporter_repro":        "We need your answer: does our test show your problem?",
	"reproduced":                     "We reproduced the problem and are working on a fix.",
	"fixing":                         "We are working on a fix.",
	"verifying":                      "We are checking a fix.",
	"awaiting_approval":              "A fix passed our checks and is waiting for a person to approve it.",
	"needs_human":                    "A person is looking at it.",
	"approved":                       "A fix was approved and will be released.",
	"merged":                         "A fix is ready and on its way to release.",
	"released":                       "A fix is live; we are checking it.",
	"awaiting_reporter_confirmation": "We need your answer: a fix is live. Does it work for you?",
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
	Secret   string
	Title    string
	State    string
	Words    string
	Updated  time.Time
	Question string
	Kind     string
	// Plain says what the question is about in plain words; Technical is
	// what the reporter's answer is bound to (the question's digest covers
	// it), folded under "Technical details".
	Plain     string
	Technical string
	TechNote  string
	Digest    string
	NeedsInfo bool
	InfoAsk   string
	CSRF      string
	Error     string
	Answer    string
	Text      string
	// InfoLang is the language of InfoAsk, for the page's lang attribute.
	InfoLang string
	// Received confirms the reporter's answer; History is the case in
	// plain steps.
	Received string
	History  []historyStep
	// Path is the page's own address, for its Refresh link and track.js's
	// polling; Version changes whenever anything the page shows changes.
	Path    string
	Version string
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
		v.Question, v.Kind, v.Digest = t.Question, t.Kind, t.Digest
		v.Plain, v.Technical, v.TechNote = questionWords(t.Kind), technical(t.Shown), technicalNote(t.Kind)
	}
	if t.State == "needs_info" {
		v.NeedsInfo, v.InfoAsk, v.InfoLang = true, t.Question, t.QuestionLanguage
	}
	v.Received, v.History = received(t.Tracking), history(t.History)
	v.Path, v.Version = "/t/"+secret, trackVersion(t)
	v.CSRF = s.anonCSRF(w, r)
	title := "Your report"
	if v.Question != "" {
		title = v.Question
	}
	s.render(w, r, status, "track", page{Title: title, Script: "track.js", Body: v})
	return nil
}

func (s *server) trackPage(w http.ResponseWriter, r *http.Request) error {
	secret := r.PathValue("secret")
	if err := s.lookTrack(w, r, secret, false); err != nil {
		return err
	}
	return s.renderTrack(w, r, secret, http.StatusOK, trackView{})
}

// trackAnswer takes the reporter's Yes or No to the question on their
// page, bound to the digest of the question they saw. No needs what is
// different or still goes wrong.
func (s *server) trackAnswer(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	if err := checkAnonCSRF(r); err != nil {
		return err
	}
	secret := r.PathValue("secret")
	ans := bugdesk.Answer{Digest: r.PostFormValue("digest"), Answer: r.PostFormValue("answer"), Text: r.PostFormValue("text")}
	again := func(status int, msg string) error {
		return s.renderTrack(w, r, secret, status, trackView{Error: msg, Answer: ans.Answer, Text: ans.Text})
	}
	// A form that cannot be sent is shown again: a read of the page, not
	// one of the link's answers.
	var invalid string
	switch {
	case ans.Answer != "yes" && ans.Answer != "no":
		invalid = "Please choose Yes or No."
	case ans.Answer == "no" && strings.TrimSpace(ans.Text) == "":
		invalid = "Please tell us what is different or still goes wrong: we need it to try again."
	}
	if err := s.lookTrack(w, r, secret, invalid == ""); err != nil {
		return keep(err, ans.Text)
	}
	if invalid != "" {
		return again(http.StatusUnprocessableEntity, invalid)
	}
	if s.o.BugDesk == nil {
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
	if err := parseForm(w, r); err != nil {
		return err
	}
	if err := checkAnonCSRF(r); err != nil {
		return err
	}
	secret := r.PathValue("secret")
	text := r.PostFormValue("text")
	empty := strings.TrimSpace(text) == ""
	if err := s.lookTrack(w, r, secret, !empty); err != nil {
		return keep(err, text)
	}
	if empty {
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

// questionWords says in plain words what a question is about, for a
// reporter who does not read test output.
func questionWords(kind string) string {
	switch kind {
	case repair.AskRepro:
		return "We wrote an automatic test that shows the problem: it fails the way you described. " +
			"If this is the problem you saw, answer Yes and we start working on a fix. If it is not, answer No and tell us what is different, and we try again."
	case repair.AskFix:
		return "A fix for your report is live. Please try again what went wrong before, and tell us whether it works now. " +
			"If it still goes wrong, answer No and tell us what happens: we reopen your report."
	}
	return ""
}

// technicalNote says where the technical details come from.
func technicalNote(kind string) string {
	if kind == repair.AskRepro {
		return "The names of our tests and the first lines of their output, written by our automated tools, not by a person."
	}
	return "What our tools recorded about the release."
}

// maxTechnical bounds the technical details the page shows, in bytes.
const maxTechnical = 8 << 10

// technical is what a question shows under "Technical details": for a
// reproduction, the failing tests' names and the first lines of their
// output; for a live fix, the commits and the smoke checks.
//
// The test output is written by an agent (the reproducer's test and its
// failure messages), so it is agent text on a public page. It is still
// shown, folded and labelled as machine output, because the reporter's Yes
// is bound to it: the question's digest covers exactly this text, and a
// confirmation of something the reporter could not look at would be
// worthless as evidence. It is never trusted: html/template escapes it,
// the template's "visible" marks control, bidi and invalid bytes (nothing
// can hide or reorder text), no link in it is made clickable, it is
// bounded, and the page says it never asks the reporter to do anything.
// Staff notes, actors and agent prose (investigations, reasons) are not on
// the page at all: only this one text, which the bug desk chose to show.
func technical(shown string) string {
	shown = strings.TrimSpace(shown)
	if len(shown) <= maxTechnical {
		return shown
	}
	cut := maxTechnical
	for cut > 0 && !utf8.RuneStart(shown[cut]) {
		cut--
	}
	return shown[:cut] + "\n… (cut: the rest is longer than this page shows)"
}

// trackVersion is a short digest of everything the page shows that can
// change, so track.js can tell an update from the same page again.
func trackVersion(t bugdesk.TrackView) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00%s\x00%d", t.State, t.UpdatedAt.UnixNano(), t.Digest, t.Question, len(t.History))
	if t.AnsweredAt != nil {
		fmt.Fprintf(h, "\x00%d", t.AnsweredAt.UnixNano())
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
