package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/clientip"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/ratelimit"
)

// WithPublicLimits shares p, the public routes' buckets, with the web
// pages, so that a client has one budget whichever door it uses. Without
// it the API keeps its own (ratelimit.DefaultBudgets, with the intake's
// limits from WithIntakeLimits).
func WithPublicLimits(p *ratelimit.Public) Option {
	return func(o *options) { o.public = p }
}

// WithTrustedProxies names the proxies whose X-Forwarded-For is believed
// when the rate limits look for the client's address. Without it the
// connection's peer is the client.
func WithTrustedProxies(r clientip.Resolver) Option {
	return func(o *options) { o.clients = r }
}

// client names r's client for the per-address limits.
func (s *server) client(r *http.Request) ratelimit.Client { return s.opts.clients.ClientOf(r) }

// refuse answers 429 with Retry-After and says in plain words when to try
// again.
func refuse(w http.ResponseWriter, wait time.Duration, what string) error {
	w.Header().Set("Retry-After", strconv.Itoa(ratelimit.Retry(wait)))
	return signoff.Errorf(signoff.ERATELIMIT, "%s Please try again %s.", what, ratelimit.Words(wait))
}

// admitReport spends one public report from the client's address, the
// project and the server, once the project is known to exist: a report
// to a made-up project is 404 and spends nothing (its id would otherwise
// be a bucket's key, and spend the server's ceiling for everyone).
func (s *server) admitReport(w http.ResponseWriter, r *http.Request, project string) error {
	if _, err := s.store.IntakeProject(r.Context(), project); err != nil {
		return err
	}
	wait, scope := s.pub.Intake(s.client(r), project, time.Now())
	switch {
	case wait == 0:
		return nil
	case scope == ratelimit.ScopeAddress:
		return refuse(w, wait, "Too many reports came from your network just now.")
	default:
		return refuse(w, wait, "This project is receiving more reports than it can take just now.")
	}
}

// looked settles the budgets of one tracking-link lookup whose outcome
// was err. The link is looked up first, so that only what the lookup
// found decides which budget pays: a lookup that found nothing spends the
// address's strict budget of misses, and past it is answered 429 rather
// than "not found"; a link that was found spends the address's budget of
// link requests and its own reads or writes, keyed on its id, which the
// lookup authenticated. A guesser's misses never spend what a reporter
// on the same address needs to read their own link.
func (s *server) looked(w http.ResponseWriter, r *http.Request, token string, write bool, err error) error {
	now := time.Now()
	switch signoff.ErrorCode(err) {
	case "":
	case signoff.ENOTFOUND:
		if wait := s.pub.Miss(s.client(r), now); wait > 0 {
			return refuse(w, wait, "Too many links that lead nowhere were tried from your network.")
		}
		return err
	default:
		return err
	}
	id, _ := identity.ParseTracking(token)
	wait, scope := s.pub.Found(s.client(r), id, write, now)
	switch {
	case wait == 0:
		return nil
	case scope == ratelimit.ScopeAddress:
		return refuse(w, wait, "Too many requests came from your network just now.")
	case write:
		return refuse(w, wait, "Too many answers were sent through this link just now.")
	default:
		return refuse(w, wait, "This link was opened very many times just now.")
	}
}

// admitLinkWrite checks the link before an answer or decision is taken
// through it, spending its budgets.
func (s *server) admitLinkWrite(w http.ResponseWriter, r *http.Request, token string) error {
	_, _, _, err := s.store.ResolveTracking(r.Context(), token)
	return s.looked(w, r, token, true, err)
}
