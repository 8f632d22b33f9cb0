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
	if wait, scope := s.pub.Intake(s.client(r), project, time.Now()); wait > 0 {
		return refuse(w, wait, ratelimit.IntakeWords(scope))
	}
	return nil
}

// admitLink checks the tracking link token and spends the public link
// budgets (ratelimit.Public.Looked), before anything else is read or
// written for the request. It resolves the link alone (one indexed
// query), so that only what that found decides which budget pays, and a
// refused request costs no more. write says the request answers through
// the link.
func (s *server) admitLink(w http.ResponseWriter, r *http.Request, token string, write bool) error {
	_, _, _, err := s.store.ResolveTracking(r.Context(), token)
	code := signoff.ErrorCode(err)
	if code != "" && code != signoff.ENOTFOUND {
		return err
	}
	id, _ := identity.ParseTracking(token)
	if wait, why := s.pub.Looked(s.client(r), id, code == "", write, time.Now()); wait > 0 {
		return refuse(w, wait, why)
	}
	return err
}
