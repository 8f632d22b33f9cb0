package web

import (
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"

	"github.com/signoff-dev/signoff/ledger"
	"github.com/signoff-dev/signoff/ratelimit"
)

// NewWithCaseRoutes is New with the case page's routes (caseRoutes)
// registered, whether or not routes() registers them itself yet: the
// tests of the case page's stream, download and merge run through it.
func NewWithCaseRoutes(o Options) http.Handler {
	o = o.withDefaults()
	s := &server{o: o, store: o.Store, log: o.Log, mux: http.NewServeMux(), pages: parsePages(), static: loadAssets(),
		intakeIP: ratelimit.New(o.IntakePerIP), intakeProject: ratelimit.New(o.IntakePerProject),
		trackIP: ratelimit.New(o.TrackPerIP), loginIP: ratelimit.New(o.LoginPerIP), trusted: o.Trusted}
	if s.trusted == nil {
		if k, ok := o.Store.(interface{ Signer() ed25519.PrivateKey }); ok && k.Signer() != nil {
			s.trusted = ledger.Trust(k.Signer().Public().(ed25519.PublicKey))
		}
	}
	s.streams.Max = maxStreamsPerActor
	s.routes()
	if _, pattern := s.mux.Handler(httptest.NewRequest("POST", "/cases/case_x/merge", nil)); pattern == "" {
		s.caseRoutes()
	}
	return s.withRequest(s.recoverPanics(http.HandlerFunc(s.route)))
}

// IsCaseEventsPath exports isCaseEventsPath to the tests.
var IsCaseEventsPath = isCaseEventsPath
