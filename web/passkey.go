package web

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/passkey"
)

// Passkey approvals (WebAuthn). A person registers a passkey on the
// people page; on an approval page the server builds the approval
// statement exactly as `signoff approve` does (approval.NewStatement:
// case, the digest on the card now, decision, a fresh nonce, issued and
// expiry times within the policy's lifetime, the policy digest, the
// signed-in approver), and asks the authenticator to sign a challenge
// that is SHA-256 of the statement's canonical JSON. The assertion comes
// back, the server checks it against the pending statement and the
// person's registered credential, and hands the envelope (statement +
// assertion) to the same desk Approve as the CLI's signed envelopes: the
// gate checks (registered key, quorum, self-approval, proposer, single
// use, expiry, revocation, stale digest) apply unchanged. The private key
// never leaves the authenticator.

// passkeyStore is the storage passkeys need beyond Store; *sqlstore.DB
// implements it (checked in storeiface_internal_test.go).
type passkeyStore interface {
	RegisterPasskey(ctx context.Context, by signoff.Actor, cred passkey.Credential, signCount uint32, origin string) (signoff.ApproverKey, error)
	AdvancePasskeyCounter(ctx context.Context, ws, keyID, origin string, got uint32) error
	WebSessionByToken(ctx context.Context, secret string) (bool, error)
	Authenticate(ctx context.Context, secret string) (signoff.Actor, error)
}

const (
	// passkeyPendingTTL bounds the time from asking the authenticator to
	// its answer: a pending statement or registration is single use and
	// lapses after it.
	passkeyPendingTTL = 5 * time.Minute
	// passkeyFreshSession: registering a passkey adds a way to approve in
	// someone's name, so it asks for a session opened in the last few
	// minutes, not one left open on a shared screen all day.
	passkeyFreshSession = 15 * time.Minute
	passkeyTimeoutMS    = 120000
	passkeyMaxPending   = 10000
	// passkeyMaxPerActor bounds one person's open requests, so that no
	// one fills the table for everyone else.
	passkeyMaxPerActor = 20
)

// passkeyCeremony is one request to the authenticator waiting for its
// answer. It is bound to the session (its CSRF token, unique to it) and
// the person, kept in this process only (like the rate limits: with
// several server processes, a sticky load balancer), and taken once.
type passkeyCeremony struct {
	register  bool
	session   string // the session's CSRF token
	actor     string
	caseID    string
	challenge []byte
	statement []byte // the approval statement's canonical JSON
	reason    string
	rpID      string
	origin    string
	expires   time.Time
}

// ceremonies are the pending passkey requests of one web UI (server).
type ceremonies struct {
	sync.Mutex
	m map[string]passkeyCeremony
}

func (cs *ceremonies) put(c passkeyCeremony, now time.Time) (string, error) {
	cs.Lock()
	defer cs.Unlock()
	if cs.m == nil {
		cs.m = map[string]passkeyCeremony{}
	}
	for id, p := range cs.m {
		if !now.Before(p.expires) {
			delete(cs.m, id)
		}
	}
	mine := 0
	for _, p := range cs.m {
		if p.actor == c.actor {
			mine++
		}
	}
	if mine >= passkeyMaxPerActor {
		return "", signoff.Errorf(signoff.ERATELIMIT, "You have too many passkey requests open; wait a few minutes.")
	}
	if len(cs.m) >= passkeyMaxPending {
		return "", signoff.Errorf(signoff.EUNAVAILABLE, "Too many passkey requests are waiting; try again in a few minutes.")
	}
	id := newToken()
	cs.m[id] = c
	return id, nil
}

// take removes and returns the pending ceremony id of sess, when
// it is live: a second answer to one challenge finds nothing.
func (cs *ceremonies) take(id string, sess signoff.WebSession, register bool, now time.Time) (passkeyCeremony, error) {
	cs.Lock()
	defer cs.Unlock()
	p, ok := cs.m[id]
	if !ok || p.session != sess.CSRF || p.actor != sess.Actor.ID || p.register != register {
		return p, signoff.Errorf(signoff.ECONFLICT, "This passkey request is unknown, used or not yours: start again.")
	}
	delete(cs.m, id)
	if !now.Before(p.expires) {
		return p, signoff.Errorf(signoff.ECONFLICT, "This passkey request expired: start again.")
	}
	return p, nil
}

// relyingParty is the RP id (the host name the browser is on) and the
// exact origin of r, or of Options.PublicURL when it is set (behind a
// proxy that terminates TLS). Forwarded headers are not trusted: behind
// such a proxy without PublicURL the origin does not match and passkeys
// fail closed.
func (s *server) relyingParty(r *http.Request) (rpID, origin string, err error) {
	base, host := requestBaseURL(r), strings.ToLower(r.Host)
	if s.o.PublicURL != "" {
		base, host = s.o.PublicURL, strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(s.o.PublicURL, "https://"), "http://"))
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
		host = host[:i]
	}
	if base == "" || host == "" || strings.ContainsAny(host, "[]:") || isIPLiteral(host) {
		return "", "", signoff.Errorf(signoff.EINVALID, "Passkeys need this server to be opened by its host name (not an IP address), for example http://localhost:PORT.")
	}
	return host, strings.ToLower(base), nil
}

func isIPLiteral(h string) bool {
	for _, c := range h {
		if (c < '0' || c > '9') && c != '.' {
			return false
		}
	}
	return true
}

func (s *server) passkeyRoutes() {
	s.mux.HandleFunc("POST /people/passkeys/begin", s.passkeyPost(s.passkeyRegisterBegin))
	s.mux.HandleFunc("POST /people/passkeys/finish", s.passkeyPost(s.passkeyRegisterFinish))
	s.mux.HandleFunc("POST /people/passkeys/{key}/revoke", s.signedInPost(s.passkeyRevoke))
	s.mux.HandleFunc("POST /cases/{id}/approval/passkey/begin", s.passkeyPost(s.passkeyApproveBegin))
	s.mux.HandleFunc("POST /cases/{id}/approval/passkey/finish", s.passkeyPost(s.passkeyApproveFinish))
}

// passkeyPost is signedInPost for passkey.js: the same session and CSRF
// checks, answered in JSON ({"error": ...} with the status on a refusal).
func (s *server) passkeyPost(fn func(r *http.Request, sess signoff.WebSession, secret string) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		out, err := func() (any, error) {
			if err := parseForm(w, r); err != nil {
				return nil, err
			}
			sess, secret, ok := s.session(r)
			if !ok {
				return nil, errNotSignedIn
			}
			if err := checkCSRF(r, sess); err != nil {
				return nil, err
			}
			return fn(r, sess, secret)
		}()
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			msg := signoff.ErrorMessage(err)
			if signoff.ErrorCode(err) == signoff.EINTERNAL {
				s.log.ErrorContext(r.Context(), "internal error", "route", infoFrom(r.Context()).route, "err", err)
				msg = "Something went wrong on our side. Please try again in a moment."
			}
			w.WriteHeader(signoff.Mapping(err).HTTPStatus)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
			return
		}
		_ = json.NewEncoder(w).Encode(out)
	}
}

func (s *server) passkeyStorage() (passkeyStore, error) {
	ps, ok := s.store.(passkeyStore)
	if !ok {
		return nil, signoff.Errorf(signoff.EUNAVAILABLE, "Passkeys are not available with this store.")
	}
	return ps, nil
}

var b64 = base64.RawURLEncoding

// myPasskeys are the signed-in person's live passkeys for rpID.
func (s *server) myPasskeys(ctx context.Context, me signoff.Actor, rpID string) ([]signoff.ApproverKey, []passkey.Credential, error) {
	all, err := s.store.ListKeys(ctx, me)
	if err != nil {
		return nil, nil, err
	}
	var ks []signoff.ApproverKey
	var cs []passkey.Credential
	for _, k := range all {
		if k.ActorID != me.ID || k.RevokedAt != nil || !passkey.IsCredential(k.PublicKey) {
			continue
		}
		c, err := passkey.ParseCredential(k.PublicKey)
		if err != nil || (rpID != "" && c.RPID != rpID) {
			continue
		}
		ks, cs = append(ks, k), append(cs, c)
	}
	return ks, cs, nil
}

func credentialList(cs []passkey.Credential) []map[string]any {
	out := []map[string]any{}
	for _, c := range cs {
		out = append(out, map[string]any{"type": "public-key", "id": b64.EncodeToString(c.ID)})
	}
	return out
}

// ---- Registration ----

func (s *server) passkeyRegisterBegin(r *http.Request, sess signoff.WebSession, secret string) (any, error) {
	ctx, me := r.Context(), sess.Actor
	if me.Role != signoff.RoleOwner && me.Role != signoff.RoleOperator {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "Only owners and operators approve, so only they register passkeys.")
	}
	ps, err := s.passkeyStorage()
	if err != nil {
		return nil, err
	}
	// A one-time sign-in link may not register a passkey. The link is
	// made by whoever runs the CLI on the server (signoff login-link
	// --actor ANYONE), not by the person: letting it add a credential
	// would let that operator approve in anyone's name from then on. An
	// API token is the person's own credential, the one that registers
	// an Ed25519 key through the API, so the session must be opened with
	// it, and recently.
	byToken, err := ps.WebSessionByToken(ctx, secret)
	if err != nil {
		return nil, err
	}
	if !byToken {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "This session was opened with a one-time sign-in link. To register a passkey, sign out and sign in with your own API token.")
	}
	if s.o.Now().Sub(sess.CreatedAt) > passkeyFreshSession {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "Registering a passkey needs a fresh session: sign out and sign in again with your API token (sessions older than %d minutes cannot).", int(passkeyFreshSession/time.Minute))
	}
	// The token itself, typed again: the session's cookie and CSRF token
	// alone (taken from the browser, or a screen left open) must not mint
	// a passkey, which would outlive the session as a way to approve in
	// this person's name.
	if who, err := ps.Authenticate(ctx, strings.TrimSpace(r.PostFormValue("token"))); err != nil || who.ID != me.ID || who.WorkspaceID != me.WorkspaceID {
		if err != nil && signoff.ErrorCode(err) != signoff.EUNAUTHORIZED {
			return nil, err
		}
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "Type your own API token to register a passkey (the one you sign in with).")
	}
	rpID, origin, err := s.relyingParty(r)
	if err != nil {
		return nil, err
	}
	_, existing, err := s.myPasskeys(ctx, me, rpID)
	if err != nil {
		return nil, err
	}
	challenge := []byte(newToken())
	now := s.o.Now()
	id, err := s.passkeys.put(passkeyCeremony{register: true, session: sess.CSRF, actor: me.ID, challenge: challenge, rpID: rpID, origin: origin, expires: now.Add(passkeyPendingTTL)}, now)
	if err != nil {
		return nil, err
	}
	params := []map[string]any{}
	for _, a := range passkey.Algorithms {
		params = append(params, map[string]any{"type": "public-key", "alg": int(a)})
	}
	return map[string]any{"pending": id, "publicKey": map[string]any{
		"challenge":              b64.EncodeToString(challenge),
		"rp":                     map[string]any{"id": rpID, "name": "Signoff"},
		"user":                   map[string]any{"id": b64.EncodeToString([]byte(me.ID)), "name": me.Name, "displayName": me.Name},
		"pubKeyCredParams":       params,
		"timeout":                passkeyTimeoutMS,
		"attestation":            "none",
		"authenticatorSelection": map[string]any{"residentKey": "preferred", "userVerification": "required"},
		"excludeCredentials":     credentialList(existing),
	}}, nil
}

func (s *server) passkeyRegisterFinish(r *http.Request, sess signoff.WebSession, _ string) (any, error) {
	ctx, me := r.Context(), sess.Actor
	ps, err := s.passkeyStorage()
	if err != nil {
		return nil, err
	}
	p, err := s.passkeys.take(r.PostFormValue("pending"), sess, true, s.o.Now())
	if err != nil {
		return nil, err
	}
	reg, err := passkey.VerifyRegistration([]byte(r.PostFormValue("credential")), p.challenge, p.rpID, []string{p.origin})
	if err != nil {
		return nil, signoff.Errorf(signoff.EINVALID, "The passkey could not be registered: %v", err)
	}
	k, err := ps.RegisterPasskey(ctx, me, reg.Credential, reg.SignCount, p.origin)
	if err != nil {
		return nil, err
	}
	// A new query: the same path with only a fragment would not reload.
	return map[string]any{"key_id": k.ID, "redirect": "/people?registered=" + k.ID + "#passkeys"}, nil
}

func (s *server) passkeyRevoke(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	// The store decides who may revoke what (the holder their own, an
	// owner any) and voids the approvals made with it.
	if _, _, err := s.store.RevokeKey(r.Context(), sess.Actor, r.PathValue("key")); err != nil {
		return err
	}
	http.Redirect(w, r, "/people#passkeys", http.StatusSeeOther)
	return nil
}

// ---- Approval ----

// passkeyCard is what a statement is built from: the live card's digest
// and policy.
func (s *server) passkeyCard(ctx context.Context, by signoff.Actor, c signoff.Case) (digest string, pol approval.Policy, err error) {
	switch c.Kind {
	case signoff.KindBug:
		if s.o.BugDesk == nil {
			return "", pol, signoff.Errorf(signoff.EUNAVAILABLE, "The bug desk is not running in this server.")
		}
		cv, err := s.o.BugDesk.Card(ctx, by, c.ID)
		if err != nil {
			return "", pol, err
		}
		return cv.SubjectDigest, cv.Policy, nil
	case signoff.KindChange:
		if s.o.ChangeDesk == nil {
			return "", pol, signoff.Errorf(signoff.EUNAVAILABLE, "The change desk is not running in this server.")
		}
		cd, err := s.o.ChangeDesk.Card(ctx, by, c.ID)
		if err != nil {
			return "", pol, err
		}
		// cd.Policy carries Of (the change policy's digest) only through
		// PolicyDigest: name that, as the CLI does.
		p := cd.Policy
		p.Of = cd.PolicyDigest
		return cd.SubjectDigest, p, nil
	}
	return "", pol, signoff.Errorf(signoff.ECONFLICT, "Cases of kind %s have no approval card.", c.Kind)
}

func (s *server) passkeyApproveBegin(r *http.Request, sess signoff.WebSession, _ string) (any, error) {
	ctx, me := r.Context(), sess.Actor
	c, err := s.store.GetCase(ctx, me, r.PathValue("id"))
	if err != nil {
		return nil, notFoundCase(err)
	}
	decision, reason := r.PostFormValue("decision"), strings.TrimSpace(r.PostFormValue("reason"))
	switch {
	case decision != approval.Approve && decision != approval.Reject:
		return nil, signoff.Errorf(signoff.EINVALID, "Choose approve or reject.")
	case decision == approval.Reject && reason == "":
		return nil, signoff.Errorf(signoff.EINVALID, "A rejection needs a reason: say what should change.")
	case len(reason) > approval.MaxReason:
		return nil, signoff.Errorf(signoff.EINVALID, "The reason is longer than %d bytes.", approval.MaxReason)
	}
	digest, pol, err := s.passkeyCard(ctx, me, c)
	if err != nil {
		return nil, err
	}
	// The statement names the digest on the card now; a page that showed
	// another subject is stale and signs nothing.
	if shown := r.PostFormValue("digest"); shown != digest {
		return nil, signoff.Errorf(signoff.ECONFLICT, "The subject changed since this page was loaded (it showed %s, the card is now %s): reload the page and read it again.", shortDigest(shown), shortDigest(digest))
	}
	rpID, origin, err := s.relyingParty(r)
	if err != nil {
		return nil, err
	}
	_, creds, err := s.myPasskeys(ctx, me, rpID)
	if err != nil {
		return nil, err
	}
	if len(creds) == 0 {
		return nil, signoff.Errorf(signoff.ECONFLICT, "You have no passkey for %s: register one on the People page first.", rpID)
	}
	now := s.o.Now()
	st := approval.NewStatement(c.ID, digest, decision, pol.Digest(), me.ID, now, pol.TTL())
	body, err := st.Canonical()
	if err != nil {
		return nil, err
	}
	challenge := passkey.Challenge(body)
	id, err := s.passkeys.put(passkeyCeremony{session: sess.CSRF, actor: me.ID, caseID: c.ID, challenge: challenge, statement: body,
		reason: reason, rpID: rpID, origin: origin, expires: now.Add(passkeyPendingTTL)}, now)
	if err != nil {
		return nil, err
	}
	return map[string]any{"pending": id, "statement": string(body), "publicKey": map[string]any{
		"challenge":        b64.EncodeToString(challenge),
		"rpId":             rpID,
		"allowCredentials": credentialList(creds),
		"userVerification": "required",
		"timeout":          passkeyTimeoutMS,
	}}, nil
}

// assertionJSON is the browser's PublicKeyCredential from
// navigator.credentials.get, with its buffers in base64url.
type assertionJSON struct {
	ID       string `json:"id"`
	RawID    string `json:"rawId"`
	Type     string `json:"type"`
	Response struct {
		ClientDataJSON    string `json:"clientDataJSON"`
		AuthenticatorData string `json:"authenticatorData"`
		Signature         string `json:"signature"`
		UserHandle        string `json:"userHandle"`
	} `json:"response"`
}

func (s *server) passkeyApproveFinish(r *http.Request, sess signoff.WebSession, _ string) (any, error) {
	ctx, me := r.Context(), sess.Actor
	ps, err := s.passkeyStorage()
	if err != nil {
		return nil, err
	}
	p, err := s.passkeys.take(r.PostFormValue("pending"), sess, false, s.o.Now())
	if err != nil {
		return nil, err
	}
	if p.caseID != r.PathValue("id") {
		return nil, signoff.Errorf(signoff.ECONFLICT, "This passkey request is for another case.")
	}
	c, err := s.store.GetCase(ctx, me, p.caseID)
	if err != nil {
		return nil, notFoundCase(err)
	}
	var a assertionJSON
	if err := json.Unmarshal([]byte(r.PostFormValue("credential")), &a); err != nil || a.Type != "public-key" {
		return nil, signoff.Errorf(signoff.EINVALID, "The authenticator's answer could not be read.")
	}
	dec := func(v string) []byte {
		b, e := b64.DecodeString(strings.TrimRight(v, "="))
		if e != nil {
			err = e
		}
		return b
	}
	env := passkey.Envelope{Format: passkey.Format, Statement: p.statement, CredentialID: dec(a.RawID),
		AuthenticatorData: dec(a.Response.AuthenticatorData), ClientDataJSON: dec(a.Response.ClientDataJSON), Signature: dec(a.Response.Signature)}
	if err != nil {
		return nil, signoff.Errorf(signoff.EINVALID, "The authenticator's answer is not base64url.")
	}
	keys, creds, err := s.myPasskeys(ctx, me, p.rpID)
	if err != nil {
		return nil, err
	}
	var key signoff.ApproverKey
	var cred passkey.Credential
	for i := range creds {
		if bytes.Equal(creds[i].ID, env.CredentialID) {
			key, cred = keys[i], creds[i]
		}
	}
	if key.ID == "" {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "The authenticator used a passkey that is not a live passkey of yours here.")
	}
	env.KeyID = key.ID
	// Online checks beyond the offline ones the desk repeats: the exact
	// origin of this page, which must be the one the passkey was
	// registered on (the store checks: p.origin comes from the Host
	// header, which whoever holds the session chooses, and the browser
	// lets a page on any port of the host use the passkey), and the
	// signature counter.
	ck, err := passkey.Verify(env, cred, passkey.Expect{Origins: []string{p.origin}})
	if err != nil {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "The passkey's answer does not verify: %v", err)
	}
	if err := ps.AdvancePasskeyCounter(ctx, me.WorkspaceID, key.ID, p.origin, ck.SignCount); err != nil {
		return nil, err
	}
	raw, err := env.Marshal()
	if err != nil {
		return nil, err
	}
	switch c.Kind {
	case signoff.KindBug:
		if s.o.BugDesk == nil {
			return nil, signoff.Errorf(signoff.EUNAVAILABLE, "The bug desk is not running in this server.")
		}
		_, _, err = s.o.BugDesk.Approve(ctx, me, c.ID, raw, approval.ViaWebPasskey, p.reason)
	case signoff.KindChange:
		if s.o.ChangeDesk == nil {
			return nil, signoff.Errorf(signoff.EUNAVAILABLE, "The change desk is not running in this server.")
		}
		_, _, err = s.o.ChangeDesk.Approve(ctx, me, c.ID, raw, approval.ViaWebPasskey, p.reason)
	default:
		err = signoff.Errorf(signoff.ECONFLICT, "Cases of kind %s have no approval card.", c.Kind)
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"redirect": "/cases/" + c.ID + "/approval"}, nil
}

func shortDigest(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}
