package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/signoff-dev/signoff"
)

// The case page's own routes besides the page itself: its live stream
// (caseevents.go), a candidate's evidence bundle as a download, and the
// merge of an approved candidate.

// caseRoutes registers them; routes() calls it.
func (s *server) caseRoutes() {
	s.mux.HandleFunc("GET "+caseEventsPattern, s.caseEvents)
	s.mux.HandleFunc("GET /cases/{id}/candidates/{candidate}/evidence", s.signedIn(s.evidenceDownload))
	s.mux.HandleFunc("POST /cases/{id}/merge", s.signedInPost(s.mergeFromPage))
}

// evidenceDownload serves a candidate's signed evidence bundle (the gzip'd
// tar `signoff evidence verify` checks once unpacked) as a file to save.
// The store decides who reads it, as for the API: people of the
// workspace, never reporters or agents.
func (s *server) evidenceDownload(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	caseID, candID := r.PathValue("id"), r.PathValue("candidate")
	b, digest, err := s.store.GetEvidence(r.Context(), sess.Actor, caseID, candID)
	if err != nil {
		if signoff.ErrorCode(err) == signoff.EINVALID {
			return signoff.Errorf(signoff.ENOTFOUND, "There is no such evidence bundle.")
		}
		return notFoundCase(err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/gzip")
	h.Set("X-Signoff-Bundle-Digest", digest)
	// The store checked the candidate id's format: it is safe in the header.
	h.Set("Content-Disposition", `attachment; filename="evidence-`+candID+`.tar.gz"`)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	if _, err := w.Write(b); err != nil {
		s.log.DebugContext(r.Context(), "write evidence download", "err", err)
	}
	return nil
}

// mergeRefusal carries why a merge was refused to the case page rendered
// in answer (bugSection reads it).
type mergeRefusalKey struct{}

func mergeRefusalFrom(ctx context.Context) string {
	v, _ := ctx.Value(mergeRefusalKey{}).(string)
	return v
}

// mergeFromPage merges an approved candidate from the case page through
// the bug desk's Merge, the one the API's POST /api/v1/cases/{id}/merge
// calls: the desk checks the role, the quorum for the card's exact subject
// and that main still yields the candidate's tree. The page adds one
// check of its own: the form names the case version and the subject the
// person saw, and a case that moved since is refused, not merged. A
// refusal is the case page again with the reason above the merge form.
func (s *server) mergeFromPage(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx, by := r.Context(), sess.Actor
	caseID := r.PathValue("id")
	if s.o.BugDesk == nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "The bug desk is not running in this server: merge with the API or the CLI.")
	}
	c, err := s.store.GetCase(ctx, by, caseID)
	if err != nil {
		return notFoundCase(err)
	}
	if c.Kind != signoff.KindBug {
		return signoff.Errorf(signoff.ENOTFOUND, "Only a bug case has a candidate to merge.")
	}
	refuse := func(status int, msg string) error {
		return s.caseWithRefusal(w, r, sess, status, msg)
	}
	version, err := strconv.ParseInt(r.PostFormValue("version"), 10, 64)
	if err != nil {
		return refuse(http.StatusUnprocessableEntity, "the form carries no case version: reload the page and try again.")
	}
	if version != c.Version {
		return refuse(http.StatusConflict, fmt.Sprintf("the case changed since you loaded the page (it is now %s, version %d; the page showed version %d). Read it again, then merge from the fresh page.",
			plainState(c.State), c.Version, version))
	}
	cv, err := s.o.BugDesk.Card(ctx, by, caseID)
	if err != nil {
		return s.mergeRefused(w, r, sess, fmt.Errorf("approval card of %s: %w", caseID, err))
	}
	if cv.SubjectDigest != r.PostFormValue("subject_digest") || cv.Card.CandidateID != r.PostFormValue("candidate") {
		return refuse(http.StatusConflict, "the approved subject is no longer the one this page showed. Read the case again, then merge from the fresh page.")
	}
	if _, err := s.o.BugDesk.Merge(ctx, by, caseID); err != nil {
		return s.mergeRefused(w, r, sess, fmt.Errorf("merge %s: %w", caseID, err))
	}
	http.Redirect(w, r, "/cases/"+caseID+"#merge-receipt", http.StatusSeeOther)
	return nil
}

// mergeRefused shows a desk's refusal (a role that may not merge, a
// quorum that lapsed, main that moved) on the case page; anything else is
// an error page.
func (s *server) mergeRefused(w http.ResponseWriter, r *http.Request, sess signoff.WebSession, err error) error {
	switch signoff.ErrorCode(err) {
	case signoff.EFORBIDDEN, signoff.ECONFLICT, signoff.EINVALID, signoff.EUNAVAILABLE:
		return s.caseWithRefusal(w, r, sess, signoff.Mapping(err).HTTPStatus, signoff.ErrorMessage(err))
	}
	return err
}

// caseWithRefusal renders the case page with status and the refusal msg
// in its merge section.
func (s *server) caseWithRefusal(w http.ResponseWriter, r *http.Request, sess signoff.WebSession, status int, msg string) error {
	r = r.WithContext(context.WithValue(r.Context(), mergeRefusalKey{}, msg))
	return s.casePage(statusWriter{ResponseWriter: w, status: status}, r, sess)
}

// statusWriter answers with its own status instead of the one the
// handler writes (the case page writes 200).
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w statusWriter) WriteHeader(int) { w.ResponseWriter.WriteHeader(w.status) }
