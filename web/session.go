package web

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/signoff-dev/signoff"
)

// Cookie names.
const (
	// SessionCookie holds a signed-in person's session secret.
	SessionCookie = "signoff_session"
	// CSRFCookie holds the double-submit token of the forms people fill
	// in without a session: sign-in, the public report form and the
	// tracking page's answers.
	CSRFCookie = "signoff_csrf"
)

// maxFormBody bounds every form post. Browsers percent-encode a form's
// UTF-8: one character of a non-Latin script takes up to 12 bytes on the
// wire (4 bytes, each as %XX), so a report at the store's 32 KiB limit
// needs several times that here; the store bounds the decoded text.
const maxFormBody = 12 * (32 << 10)

var (
	errCSRF        = signoff.Errorf(signoff.EFORBIDDEN, "This form has expired or did not come from this site. Go back, reload the page and send it again.")
	errNotSignedIn = signoff.Errorf(signoff.EUNAUTHORIZED, "Please sign in.")
)

// session returns the live session of r's cookie, with its secret.
func (s *server) session(r *http.Request) (signoff.WebSession, string, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" {
		return signoff.WebSession{}, "", false
	}
	sess, err := s.store.WebSession(r.Context(), c.Value)
	if err != nil {
		if signoff.ErrorCode(err) == signoff.EINTERNAL {
			s.log.ErrorContext(r.Context(), "read web session", "err", err)
		}
		return signoff.WebSession{}, "", false
	}
	infoFrom(r.Context()).actorID = sess.Actor.ID
	return sess, c.Value, true
}

// sessionFunc is a page handler for a signed-in person.
type sessionFunc func(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error

// signedIn serves a page to a signed-in person and sends anyone else to
// the sign-in page.
func (s *server) signedIn(fn sessionFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, _, ok := s.session(r)
		if !ok && r.Header.Get("Sec-Fetch-Site") == "cross-site" && r.URL.Query().Get("continued") == "" {
			// A link followed from another site (a chat message, an
			// e-mail) arrives without the SameSite=Strict cookie. A page
			// of this site that loads the same URL again gets it.
			q := r.URL.Query()
			q.Set("continued", "1")
			// The path as it came, escaped: a decoded %2F in an id must
			// not become a path separator of the link.
			s.render(w, r, http.StatusOK, "continue", page{Title: "Continue", Body: r.URL.EscapedPath() + "?" + q.Encode()})
			return
		}
		if !ok {
			// Back here after signing in (signin_next.go).
			http.Redirect(w, r, loginPath(r), http.StatusSeeOther)
			return
		}
		if err := fn(w, r, sess); err != nil {
			s.fail(w, r, err)
		}
	}
}

// signedInAPI serves a fragment to a signed-in person's script; anyone
// else gets 401.
func (s *server) signedInAPI(fn sessionFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, _, ok := s.session(r)
		if !ok {
			s.fail(w, r, errNotSignedIn)
			return
		}
		if err := fn(w, r, sess); err != nil {
			s.fail(w, r, err)
		}
	}
}

// signedInPost serves a state-changing form post of a signed-in person:
// the session is required (401 otherwise, never a redirect that drops the
// post) and the form must carry the session's CSRF token (403).
func (s *server) signedInPost(fn sessionFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := parseForm(w, r); err != nil {
			s.fail(w, r, err)
			return
		}
		sess, _, ok := s.session(r)
		if !ok {
			s.fail(w, r, errNotSignedIn)
			return
		}
		if err := checkCSRF(r, sess); err != nil {
			s.fail(w, r, err)
			return
		}
		if err := fn(w, r, sess); err != nil {
			s.fail(w, r, err)
		}
	}
}

// newToken returns 256 random bits in URL-safe base64.
func newToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("web: crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// tokenShaped reports whether v could be a token from newToken.
func tokenShaped(v string) bool {
	if len(v) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(v)
	return err == nil
}

// cookie returns a cookie with the flags every cookie of the web UI
// carries: HttpOnly, SameSite=Strict, Path=/, Secure when the request came
// over TLS or people reach the server over https (Options.PublicURL: a
// proxy ends TLS and the server sees plain HTTP, but the browser must
// still never send the session to an http:// URL of the host).
func (s *server) cookie(r *http.Request, name, value string, maxAge int) *http.Cookie {
	secure := r.TLS != nil || strings.HasPrefix(s.o.PublicURL, "https://")
	return &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode}
}

// anonCSRF returns the double-submit token for an anonymous form: the one
// the browser holds, or a new one set as a cookie.
func (s *server) anonCSRF(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(CSRFCookie); err == nil && tokenShaped(c.Value) {
		return c.Value
	}
	v := newToken()
	// A session cookie: it lives as long as the browser session.
	http.SetCookie(w, s.cookie(r, CSRFCookie, v, 0))
	return v
}

// parseForm reads a url-encoded form of at most maxFormBody.
func parseForm(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBody)
	if err := r.ParseForm(); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return signoff.Errorf(signoff.ETOOLARGE, "That is more text than we can take at once (at most %d KiB).", maxFormBody>>10)
		}
		return signoff.Errorf(signoff.EINVALID, "The form could not be read.")
	}
	return nil
}

// sameOrigin refuses a request that a browser says came from another
// site: Sec-Fetch-Site other than same-origin (or none, typed by the
// user), or an Origin naming another host. Under Referrer-Policy
// no-referrer browsers send "Origin: null" even from this site, so null
// proves nothing either way; the CSRF token is what every post must carry.
func sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return false
	}
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return true
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// submittedToken is the CSRF token a request carries: the form field, or
// the X-CSRF-Token header for a script.
func submittedToken(r *http.Request) string {
	if v := r.Header.Get("X-CSRF-Token"); v != "" {
		return v
	}
	return r.PostFormValue("csrf")
}

func tokensMatch(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// checkCSRF checks a signed-in person's post against their session's
// token. The form must have been parsed.
func checkCSRF(r *http.Request, sess signoff.WebSession) error {
	if !sameOrigin(r) || !tokensMatch(submittedToken(r), sess.CSRF) {
		return errCSRF
	}
	return nil
}

// checkAnonCSRF checks an anonymous post: the form's token must equal the
// cookie's (double submit). The form must have been parsed.
func checkAnonCSRF(r *http.Request) error {
	c, err := r.Cookie(CSRFCookie)
	if err != nil || !sameOrigin(r) || !tokenShaped(c.Value) || !tokensMatch(submittedToken(r), c.Value) {
		return errCSRF
	}
	return nil
}

// loginView is the sign-in page.
type loginView struct {
	CSRF  string
	Error string
	// Link is the one-time sign-in link's path, when the page confirms
	// one.
	Link string
	// Next is the local path signing in returns to ("" for the desk),
	// checked by safeNext.
	Next string
}

func (s *server) loginForm(w http.ResponseWriter, r *http.Request) {
	next := safeNext(r.URL.Query().Get("next"))
	if _, _, ok := s.session(r); ok {
		dest := next
		if dest == "" {
			dest = "/desk"
		}
		http.Redirect(w, r, dest, http.StatusSeeOther)
		return
	}
	s.rememberNext(w, r, next)
	s.render(w, r, http.StatusOK, "login", page{Title: "Sign in", Body: loginView{CSRF: s.anonCSRF(w, r), Next: next}})
}

// login signs a person in with an API token. Agents and reporters are
// refused: the web UI is for the people who run and watch the desk.
func (s *server) login(w http.ResponseWriter, r *http.Request) error {
	if err := s.admitLogin(w, r); err != nil {
		return err
	}
	if err := parseForm(w, r); err != nil {
		return err
	}
	if err := checkAnonCSRF(r); err != nil {
		return err
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	next := safeNext(r.PostFormValue("next"))
	if token == "" {
		s.render(w, r, http.StatusUnprocessableEntity, "login", page{Title: "Sign in", Body: loginView{CSRF: s.anonCSRF(w, r), Next: next, Error: "Paste your API token to sign in."}})
		return nil
	}
	secret, sess, err := s.store.SignIn(r.Context(), token, s.o.SessionTTL)
	switch signoff.ErrorCode(err) {
	case "":
	case signoff.EUNAUTHORIZED:
		s.render(w, r, http.StatusUnauthorized, "login", page{Title: "Sign in", Body: loginView{CSRF: s.anonCSRF(w, r), Next: next, Error: "That token did not work: it is unknown, revoked or expired."}})
		return nil
	case signoff.EFORBIDDEN:
		return errForPeople
	default:
		return err
	}
	s.startSession(w, r, secret, sess)
	return nil
}

var errForPeople = signoff.Errorf(signoff.EFORBIDDEN, "The web UI is for people: owners, operators and viewers sign in here. Agents work through the API and MCP; reporters follow their tracking link.")

// loginLinkForm answers a one-time sign-in link with a button. Opening the
// link uses nothing up: chat and mail clients fetch links to preview them,
// and a GET that signed in would spend the link on the preview bot (and
// hand it the session). The person's click posts the form.
func (s *server) loginLinkForm(w http.ResponseWriter, r *http.Request) error {
	if !tokenShapedCode(r.PathValue("code")) {
		return errBadLink
	}
	s.render(w, r, http.StatusOK, "login", page{Title: "Sign in", Body: loginView{CSRF: s.anonCSRF(w, r), Link: "/login/" + r.PathValue("code"),
		Next: safeNext(r.URL.Query().Get("next"))}})
	return nil
}

var errBadLink = signoff.Errorf(signoff.EFORBIDDEN, "This sign-in link is unknown, has expired or was already used. Ask for a new one (signoff login-link), or sign in with your API token.")

// tokenShapedCode reports whether a link's code could be one: the rest is
// the store's to judge, on the post.
func tokenShapedCode(code string) bool {
	return strings.HasPrefix(code, signoff.LoginLinkPrefix) && len(code) <= 64
}

// loginLink signs a person in with a one-time link from signoff
// login-link, on the post of the link's page.
func (s *server) loginLink(w http.ResponseWriter, r *http.Request) error {
	if err := s.admitLogin(w, r); err != nil {
		return err
	}
	if err := parseForm(w, r); err != nil {
		return err
	}
	if err := checkAnonCSRF(r); err != nil {
		return err
	}
	secret, sess, err := s.store.SignInWithLink(r.Context(), r.PathValue("code"), s.o.SessionTTL)
	switch signoff.ErrorCode(err) {
	case "":
	case signoff.EUNAUTHORIZED:
		return errBadLink
	case signoff.EFORBIDDEN:
		return errForPeople
	default:
		return err
	}
	s.startSession(w, r, secret, sess)
	return nil
}

// startSession ends the browser's previous session, if any, sets the new
// session's cookie and goes to the page the person came from
// (nextAfterSignIn), else the desk. The form must have been parsed.
func (s *server) startSession(w http.ResponseWriter, r *http.Request, secret string, sess signoff.WebSession) {
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		if err := s.store.SignOut(r.Context(), c.Value); err != nil {
			s.log.ErrorContext(r.Context(), "end previous web session", "err", err)
		}
	}
	infoFrom(r.Context()).actorID = sess.Actor.ID
	c := s.cookie(r, SessionCookie, secret, int(s.o.SessionTTL.Seconds()))
	c.Expires = sess.ExpiresAt
	http.SetCookie(w, c)
	dest := nextAfterSignIn(r)
	if _, err := r.Cookie(nextCookie); err == nil {
		http.SetCookie(w, s.cookie(r, nextCookie, "", -1))
	}
	http.Redirect(w, r, dest, http.StatusSeeOther)
}

// logout ends the session. The post must carry the session's token, or,
// from a browser without a live session, its double-submit token.
func (s *server) logout(w http.ResponseWriter, r *http.Request) error {
	if err := parseForm(w, r); err != nil {
		return err
	}
	sess, secret, ok := s.session(r)
	if ok {
		if err := checkCSRF(r, sess); err != nil {
			return err
		}
		if err := s.store.SignOut(r.Context(), secret); err != nil {
			return err
		}
	} else if err := checkAnonCSRF(r); err != nil {
		// Nothing to end: the session is over already. Its cookie goes
		// (that changes nothing on the server), but the post is still
		// refused like any other without a valid token.
		if _, err := r.Cookie(SessionCookie); err == nil {
			http.SetCookie(w, s.cookie(r, SessionCookie, "", -1))
		}
		return err
	}
	http.SetCookie(w, s.cookie(r, SessionCookie, "", -1))
	http.Redirect(w, r, "/login", http.StatusSeeOther)
	return nil
}
