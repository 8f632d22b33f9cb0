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

// lookTrack reads the tracking page of secret within the public link
// budgets. The link is looked up first, so that only what the lookup
// found decides which budget pays: a lookup that finds nothing spends the
// address's strict budget of misses (past it the answer is 429, not
// "nothing here", so a guesser learns no more); a link that was found
// spends the address's budget of link requests and its own reads or
// writes, keyed on its id, which the lookup authenticated. A guesser's
// misses never spend what a reporter on the same address needs. found
// says the link was found: an error with it is a budget refusing, and
// the caller may show the page again with what the reporter wrote.
func (s *server) lookTrack(w http.ResponseWriter, r *http.Request, secret string, write bool) (t bugdesk.TrackView, found bool, err error) {
	c := s.client(r)
	t, err = s.track(r, secret)
	now := time.Now()
	switch signoff.ErrorCode(err) {
	case "":
	case signoff.ENOTFOUND:
		if wait := s.pub.Miss(c, now); wait > 0 {
			return t, false, refuse(w, wait, "Too many links that lead nowhere were tried from your network.")
		}
		return t, false, errNoTracking
	default:
		return t, false, err
	}
	id, _ := identity.ParseTracking(secret)
	wait, scope := s.pub.Found(c, id, write, now)
	switch {
	case wait == 0:
		return t, true, nil
	case scope == ratelimit.ScopeAddress:
		return t, true, refuse(w, wait, "Too many requests came from your network just now.")
	case write:
		return t, true, refuse(w, wait, "Too many answers were sent through this link just now. What you wrote is still below; it was not sent.")
	default:
		return t, true, refuse(w, wait, "This link was opened very many times just now.")
	}
}
