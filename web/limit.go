package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/ratelimit"
)

// client names r's client for the per-address limits: the peer, or what a
// trusted proxy says it forwarded for.
func (s *server) client(r *http.Request) ratelimit.Client { return s.o.Proxies.ClientOf(r) }

// refuse answers 429 with Retry-After and a page that says in plain words
// when to try again.
func refuse(w http.ResponseWriter, wait time.Duration, what string) error {
	w.Header().Set("Retry-After", strconv.Itoa(ratelimit.Retry(wait)))
	return signoff.Errorf(signoff.ERATELIMIT, "%s Please try again %s.", what, ratelimit.Words(wait))
}

// admitLogin spends one sign-in attempt from the client's address.
func (s *server) admitLogin(w http.ResponseWriter, r *http.Request) error {
	if wait := s.loginIP.Take(s.client(r).Addr, time.Now()); wait > 0 {
		return refuse(w, wait, "Too many sign-in attempts came from your network just now.")
	}
	return nil
}

// admitReport spends one public report from the client's address, the
// project and the server: the same budgets as the API's intake. The
// caller has found the project.
func (s *server) admitReport(w http.ResponseWriter, r *http.Request, project string) error {
	if wait, scope := s.pub.Intake(s.client(r), project, time.Now()); wait > 0 {
		return refuse(w, wait, ratelimit.IntakeWords(scope)+" What you wrote is still below; it was not sent.")
	}
	return nil
}

// lookTrack checks the tracking link secret and spends the public link
// budgets (ratelimit.Public.Looked), before anything else is read or
// written for the request. It resolves the link alone (one indexed
// query), so that only what that found decides which budget pays, and a
// refused request costs no more. write says the request answers through
// the link.
func (s *server) lookTrack(w http.ResponseWriter, r *http.Request, secret string, write bool) error {
	_, _, _, err := s.store.ResolveTracking(r.Context(), secret)
	code := signoff.ErrorCode(err)
	if code != "" && code != signoff.ENOTFOUND {
		return err
	}
	id, _ := identity.ParseTracking(secret)
	if wait, why := s.pub.Looked(s.client(r), id, code == "", write, time.Now()); wait > 0 {
		return refuse(w, wait, why)
	}
	if code != "" {
		return errNoTracking
	}
	return nil
}

// keptError is a refusal of a form whose text was not sent: the error
// page shows the text, so that nothing the person wrote is lost, without
// reading anything more for a request that was refused.
type keptError struct {
	error
	kept string
}

func (e keptError) Unwrap() error { return e.error }

// keep attaches what the person wrote to err, when they wrote anything.
func keep(err error, text string) error {
	if err == nil || strings.TrimSpace(text) == "" {
		return err
	}
	return keptError{err, text}
}
