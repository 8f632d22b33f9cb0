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

// client is the key of r's client address for the per-address limits.
func (s *server) client(r *http.Request) string { return s.opts.clients.KeyOf(r) }

// refuse answers 429 with Retry-After and says in plain words when to try
// again.
func refuse(w http.ResponseWriter, wait time.Duration, what string) error {
	w.Header().Set("Retry-After", strconv.Itoa(ratelimit.Retry(wait)))
	return signoff.Errorf(signoff.ERATELIMIT, "%s Please try again %s.", what, ratelimit.Words(wait))
}

// admitReport spends one public report from the client's address, the
// project and the server.
func (s *server) admitReport(w http.ResponseWriter, r *http.Request, project string) error {
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

// linkUse is what a request does with a tracking link.
type linkUse bool

const (
	linkRead  linkUse = false
	linkWrite linkUse = true
)

// admitLink spends one tracking-link request from the client's address,
// before the link is looked up.
func (s *server) admitLink(w http.ResponseWriter, r *http.Request) error {
	if wait := s.pub.Link(s.client(r), time.Now()); wait > 0 {
		return refuse(w, wait, "Too many requests came from your network just now.")
	}
	return nil
}

// looked settles the budgets of one tracking-link lookup whose outcome
// was err. A lookup that found nothing spends the address's strict budget
// of misses, and past it is answered 429 rather than "not found"; a link
// that was found spends its own budget of reads or writes. The link's
// bucket is keyed on its id, which a lookup authenticated, never on what
// a caller claims, so nobody can spend someone else's.
func (s *server) looked(w http.ResponseWriter, r *http.Request, token string, use linkUse, err error) error {
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
	if use == linkWrite {
		if wait := s.pub.Write(id, now); wait > 0 {
			return refuse(w, wait, "Too many answers were sent through this link just now.")
		}
		return nil
	}
	if wait := s.pub.Read(id, now); wait > 0 {
		return refuse(w, wait, "This link was opened very many times just now.")
	}
	return nil
}

// admitLinkWrite checks the link before an answer or decision is taken
// through it, spending its budgets.
func (s *server) admitLinkWrite(w http.ResponseWriter, r *http.Request, token string) error {
	if err := s.admitLink(w, r); err != nil {
		return err
	}
	_, _, _, err := s.store.ResolveTracking(r.Context(), token)
	return s.looked(w, r, token, linkWrite, err)
}
