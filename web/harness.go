package web

import (
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/identity"
)

// The reproduction review page (the SYNKAI rule): a reproduction test is
// agent-written code, so before any fix is tried a member of staff reads
// its source in full, with what fails on the base and what the static
// checks found, and approves or rejects it over the review digest the
// page shows. Viewers read it; owners and operators decide, except the
// one who proposed it. Everything is read live from the bug desk; the
// reporter's tracking page never shows it.

// harnessPage is the review page.
type harnessPage struct {
	Case signoff.Case
	// Closed, when set, says why there is no reproduction to show.
	Closed string
	H      bugdesk.HarnessView
	// CanReview: the reproduction waits for a staff decision and the
	// signed-in person may give it. Why says why not, when it waits.
	CanReview bool
	Why       string
	// Names names the proposer and the reviewer (ids on hover).
	Names map[string]string
}

// maxWebNote bounds a staff note typed on the page.
const maxWebNote = 4000

func (s *server) harnessPage(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx, by := r.Context(), sess.Actor
	c, err := s.store.GetCase(ctx, by, r.PathValue("id"))
	if err != nil {
		return notFoundCase(err)
	}
	v := harnessPage{Case: c, Names: map[string]string{}}
	switch {
	case c.Kind != signoff.KindBug:
		v.Closed = "Only bug cases have reproductions."
	case s.o.BugDesk == nil:
		v.Closed = "The bug desk is not running in this server."
	default:
		v.H, err = s.o.BugDesk.Harness(ctx, by, c.ID)
		switch code := signoff.ErrorCode(err); {
		case err == nil:
		case code == signoff.ECONFLICT || code == signoff.EUNAVAILABLE:
			v.Closed = "There is no reproduction to review: " + signoff.ErrorMessage(err)
		default:
			return err
		}
	}
	if v.Closed == "" && v.H.Reviewable {
		switch {
		case !identity.Can(by.Role, identity.OpHarnessReview):
			v.Why = fmt.Sprintf("Your role (%s) reads reproductions; owners and operators decide on them.", by.Role)
		case by.ID == v.H.ProposedBy:
			v.Why = "You proposed this reproduction: another member of staff reviews it."
		default:
			v.CanReview = true
		}
	}
	me := by
	names := s.timelineActors(ctx, c.WorkspaceID)
	v.Names[v.H.ProposedBy] = names.name(v.H.ProposedBy)
	if v.H.StaffReview != nil {
		v.Names[v.H.StaffReview.By] = names.name(v.H.StaffReview.By)
	}
	s.render(w, r, http.StatusOK, "harness", page{Title: "Reproduction review: " + c.Title, Me: &me, CSRF: sess.CSRF, Body: v})
	return nil
}

// reviewHarness takes the decision from the review page's form. The form
// carries the review digest the page showed: a reproduction that changed
// since is refused as a conflict, never decided on unseen.
func (s *server) reviewHarness(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx, by := r.Context(), sess.Actor
	caseID := r.PathValue("id")
	if !identity.Can(by.Role, identity.OpHarnessReview) {
		return signoff.Errorf(signoff.EFORBIDDEN, "Your role (%s) does not review reproductions.", by.Role)
	}
	if s.o.BugDesk == nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "The bug desk is not running in this server.")
	}
	decision := r.PostFormValue("decision")
	if decision != signoff.HarnessApprove && decision != signoff.HarnessReject {
		return signoff.Errorf(signoff.EINVALID, "Choose Approve or Reject.")
	}
	note := strings.TrimSpace(r.PostFormValue("note"))
	if decision == signoff.HarnessReject && note == "" {
		return signoff.Errorf(signoff.EINVALID, "Say why you reject the reproduction: your note goes to the next reproducer.")
	}
	if len(note) > maxWebNote {
		return signoff.Errorf(signoff.EINVALID, "The note is too long (at most %d characters).", maxWebNote)
	}
	digest := r.PostFormValue("review_digest")
	if digest == "" {
		return signoff.Errorf(signoff.EINVALID, "The form carries no review digest: reload the page and decide on what it shows.")
	}
	if _, _, err := s.o.BugDesk.ReviewHarness(ctx, by, caseID, bugdesk.HarnessDecision{ReviewDigest: digest, Decision: decision, Note: note}); err != nil {
		return fmt.Errorf("review the reproduction of %s: %w", caseID, err)
	}
	http.Redirect(w, r, "/cases/"+caseID+"/harness#staff-review", http.StatusSeeOther)
	return nil
}

// visibleSource renders agent-written text for review: HTML-escaped, with
// every character a browser would not show as itself (control and format
// characters such as bidirectional overrides, invalid UTF-8) replaced by
// a marked escape (\xNN, \uNNNN), so what a test holds cannot hide from
// the person reading it. Tabs and newlines stay.
func visibleSource(s string) template.HTML {
	var b strings.Builder
	mark := func(esc string) {
		b.WriteString(`<mark class="hidden-char">`)
		b.WriteString(template.HTMLEscapeString(esc))
		b.WriteString(`</mark>`)
	}
	start := 0
	flush := func(end int) {
		b.WriteString(template.HTMLEscapeString(s[start:end]))
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		var esc string
		switch {
		case r == utf8.RuneError && n == 1:
			esc = fmt.Sprintf(`\x%02x`, s[i])
		case r == '\t' || r == '\n':
		case r < 0x80 && !unicode.IsPrint(r):
			esc = fmt.Sprintf(`\x%02x`, r)
		case !unicode.IsPrint(r):
			esc = fmt.Sprintf(`\u%04x`, r)
		}
		if esc != "" {
			flush(i)
			mark(esc)
			start = i + n
		}
		i += n
	}
	flush(len(s))
	return template.HTML(b.String())
}
