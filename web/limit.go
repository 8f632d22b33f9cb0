package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/ratelimit"
)

// client is the key of r's client address for the per-address limits:
// the peer, or what a trusted proxy says it forwarded for.
func (s *server) client(r *http.Request) string { return s.o.Proxies.KeyOf(r) }

// refuse answers 429 with Retry-After and a page that says in plain words
// when to try again.
func refuse(w http.ResponseWriter, wait time.Duration, what string) error {
	w.Header().Set("Retry-After", strconv.Itoa(ratelimit.Retry(wait)))
	return signoff.Errorf(signoff.ERATELIMIT, "%s Please try again %s.", what, ratelimit.Words(wait))
}

// admitLogin spends one sign-in attempt from the client's address.
func (s *server) admitLogin(w http.ResponseWriter, r *http.Request) error {
	if wait := s.loginIP.Take(s.client(r), time.Now()); wait > 0 {
		return refuse(w, wait, "Too many sign-in attempts came from your network just now.")
	}
	return nil
}

// admitReport spends one public report from the client's address, the
// project and the server: the same budgets as the API's intake.
func (s *server) admitReport(w http.ResponseWriter, r *http.Request, project string) error {
	wait, scope := s.pub.Intake(s.client(r), project, time.Now())
	switch {
	case wait == 0:
		return nil
	case scope == ratelimit.ScopeAddress:
		return refuse(w, wait, "Too many reports came from your network just now. What you wrote is still below; it was not sent.")
	default:
		return refuse(w, wait, "This project is receiving more reports than it can take just now. What you wrote is still below; it was not sent.")
	}
}

// linkUse is what a request does with a tracking link.
type linkUse bool

const (
	linkRead  linkUse = false
	linkWrite linkUse = true
)

// lookTrack reads the tracking page of secret within the public link
// budgets: one request from the client's address before the lookup; a
// lookup that finds nothing spends the address's strict budget of misses
// (past it the answer is 429, not "nothing here", so a guesser learns no
// more); a link that was found spends its own reads or writes, keyed on
// its id, which the lookup authenticated. found says the link was found:
// an error with it is the link's own budget refusing, and the caller may
// show the page again with what the reporter wrote.
func (s *server) lookTrack(w http.ResponseWriter, r *http.Request, secret string, use linkUse) (t bugdesk.TrackView, found bool, err error) {
	addr := s.client(r)
	if wait := s.pub.Link(addr, time.Now()); wait > 0 {
		return t, false, refuse(w, wait, "Too many requests came from your network just now.")
	}
	t, err = s.track(r, secret)
	now := time.Now()
	switch signoff.ErrorCode(err) {
	case "":
	case signoff.ENOTFOUND:
		if wait := s.pub.Miss(addr, now); wait > 0 {
			return t, false, refuse(w, wait, "Too many links that lead nowhere were tried from your network.")
		}
		return t, false, errNoTracking
	default:
		return t, false, err
	}
	id, _ := identity.ParseTracking(secret)
	if use == linkWrite {
		if wait := s.pub.Write(id, now); wait > 0 {
			return t, true, refuse(w, wait, "Too many answers were sent through this link just now. What you wrote is still below; it was not sent.")
		}
	} else if wait := s.pub.Read(id, now); wait > 0 {
		return t, true, refuse(w, wait, "This link was opened very many times just now.")
	}
	return t, true, nil
}
