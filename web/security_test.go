package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/web"
)

const cspWant = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'"

func assertSecurityHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	for k, want := range map[string]string{
		"Content-Security-Policy": cspWant,
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("%s: %s = %q, want %q", what, k, got, want)
		}
	}
}

// TestSecurityHeadersOnEveryPage: the CSP and the other headers go on
// every response: pages, fragments, assets, redirects, errors.
func TestSecurityHeadersOnEveryPage(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, secret := r.report(t, "the coupon is applied twice")
	anon, op := r.visitor(t), r.visitor(t)
	op.signIn(signoff.RoleOperator)
	for _, tc := range []struct {
		b      *visitor
		method string
		path   string
		status int
	}{
		{anon, "GET", "/", http.StatusSeeOther},
		{anon, "GET", "/login", http.StatusOK},
		{anon, "GET", "/desk", http.StatusSeeOther},
		{anon, "GET", "/p/" + r.proj.ID + "/report", http.StatusOK},
		{anon, "GET", "/t/" + secret, http.StatusOK},
		{anon, "GET", "/t/sot_nothing_here", http.StatusNotFound},
		{anon, "GET", "/static/site.css", http.StatusOK},
		{anon, "GET", "/static/desk.js", http.StatusOK},
		{anon, "GET", "/static/nothing.js", http.StatusNotFound},
		{anon, "GET", "/login/sol_unknown", http.StatusOK},
		{anon, "GET", "/login/unknown", http.StatusForbidden},
		{anon, "POST", "/login/sol_unknown", http.StatusForbidden},
		{anon, "GET", "/cases/" + c.ID, http.StatusSeeOther},
		{anon, "POST", "/login", http.StatusForbidden},
		{anon, "PUT", "/desk", http.StatusMethodNotAllowed},
		{anon, "GET", "/desk/../login", http.StatusNotFound},
		{op, "GET", "/desk", http.StatusOK},
		{op, "GET", "/desk/rows/" + c.ID, http.StatusOK},
		{op, "GET", "/cases/" + c.ID, http.StatusOK},
		{op, "GET", "/cases/" + c.ID + "/approval", http.StatusOK},
		{op, "GET", "/cases/" + c.ID + "/harness", http.StatusOK},
		{anon, "GET", "/cases/" + c.ID + "/harness", http.StatusSeeOther},
		{op, "GET", "/cases/case_00000000000000000000000000", http.StatusNotFound},
	} {
		req, err := http.NewRequest(tc.method, r.srv.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.URL.Opaque = "//" + req.URL.Host + tc.path // keep dot segments as sent
		got := tc.b.do(req)
		what := tc.method + " " + tc.path
		if got.status != tc.status {
			t.Errorf("%s: status %d, want %d (%s)", what, got.status, tc.status, got.body)
		}
		assertSecurityHeaders(t, what, got.header)
		if strings.Contains(got.body, "<script>") || strings.Contains(got.body, " style=") || strings.Contains(got.body, " onclick=") {
			t.Errorf("%s: inline script or style in %s", what, got.body)
		}
	}
}

// TestCSRFMissingIs403 posts to every state-changing route without the
// token and with a wrong one: each answers the 403 page and changes
// nothing.
func TestCSRFMissingIs403(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, secret := r.report(t, "checkout fails")
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	anon := r.visitor(t)
	anon.csrf("/login") // the browser holds a double-submit cookie
	routes := []struct {
		path string
		form url.Values
	}{
		{"/login", url.Values{"token": {r.tokens[signoff.RoleOperator]}}},
		{"/logout", url.Values{}},
		{"/p/" + r.proj.ID + "/report", url.Values{"text": {"another report"}}},
		{"/t/" + secret + "/answer", url.Values{"answer": {"yes"}, "digest": {"x"}}},
		{"/t/" + secret + "/info", url.Values{"text": {"more"}}},
	}
	before, err := r.store.HeadSeq(context.Background(), r.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []*visitor{anon, op} {
		for _, rt := range routes {
			for _, token := range []string{"", "wrong-token", strings.Repeat("A", 43)} {
				form := url.Values{}
				for k, v := range rt.form {
					form[k] = v
				}
				if token != "" {
					form.Set("csrf", token)
				}
				got := b.post(rt.path, form)
				if got.status != http.StatusForbidden || !strings.Contains(got.body, `id="error"`) {
					t.Errorf("POST %s with csrf %q: %d, want the 403 page: %s", rt.path, token, got.status, got.body)
				}
				assertSecurityHeaders(t, "POST "+rt.path, got.header)
			}
		}
	}
	// A form from another site is refused even with the right token.
	tok := op.csrf("/desk")
	req, _ := http.NewRequest("POST", r.srv.URL+"/logout", strings.NewReader(url.Values{"csrf": {tok}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://evil.example")
	if got := op.do(req); got.status != http.StatusForbidden {
		t.Errorf("cross-origin logout: %d", got.status)
	}
	// Nothing happened: no sign-out, no report, no answer.
	if got := op.get("/desk"); got.status != http.StatusOK {
		t.Fatalf("operator signed out by a forged post: %d", got.status)
	}
	after, err := r.store.HeadSeq(context.Background(), r.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("ledger moved from %d to %d on refused posts", before, after)
	}
	if got := anon.cookie(web.SessionCookie); got != "" {
		t.Fatalf("signed in without a csrf token")
	}
	_ = c
}

func setCookieNamed(t *testing.T, h http.Header, name string) *http.Cookie {
	t.Helper()
	for _, raw := range h.Values("Set-Cookie") {
		c, err := http.ParseSetCookie(raw)
		if err == nil && c.Name == name {
			return c
		}
	}
	t.Fatalf("no Set-Cookie %s in %v", name, h.Values("Set-Cookie"))
	return nil
}

// TestCookieFlags: the session and CSRF cookies are HttpOnly,
// SameSite=Strict and Path=/, and Secure exactly when the request came
// over TLS; the session lasts 12 hours.
func TestCookieFlags(t *testing.T) {
	t.Parallel()
	for _, tls := range []bool{false, true} {
		r := newRig(t, rigOptions{tls: tls})
		b := r.visitor(t)
		form := b.get("/login")
		csrf := setCookieNamed(t, form.header, web.CSRFCookie)
		got := b.post("/login", url.Values{"csrf": {csrfFieldRE.FindStringSubmatch(form.body)[1]}, "token": {r.tokens[signoff.RoleOwner]}})
		if got.status != http.StatusSeeOther {
			t.Fatalf("tls=%v: sign in %d %s", tls, got.status, got.body)
		}
		sess := setCookieNamed(t, got.header, web.SessionCookie)
		for _, c := range []*http.Cookie{csrf, sess} {
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure != tls {
				t.Errorf("tls=%v: cookie %s: HttpOnly=%v SameSite=%v Path=%q Secure=%v", tls, c.Name, c.HttpOnly, c.SameSite, c.Path, c.Secure)
			}
		}
		if sess.MaxAge != int((12*time.Hour).Seconds()) || sess.Expires.IsZero() || len(sess.Value) < 40 {
			t.Errorf("tls=%v: session cookie MaxAge=%d Expires=%v value length %d", tls, sess.MaxAge, sess.Expires, len(sess.Value))
		}
		// Signing out clears it with the same flags.
		out := b.post("/logout", url.Values{"csrf": {b.csrf("/desk")}})
		cleared := setCookieNamed(t, out.header, web.SessionCookie)
		if out.status != http.StatusSeeOther || cleared.MaxAge >= 0 || !cleared.HttpOnly || cleared.Secure != tls {
			t.Errorf("tls=%v: sign-out %d, cookie %+v", tls, out.status, cleared)
		}
	}
}

// TestOnlyPeopleSignIn: owners, operators and viewers sign in; agent and
// reporter tokens get the 403 page and no session; a bad token is 401.
func TestOnlyPeopleSignIn(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	for _, role := range []signoff.Role{signoff.RoleOwner, signoff.RoleOperator, signoff.RoleViewer} {
		b := r.visitor(t)
		b.signIn(role)
		if got := b.get("/desk"); got.status != http.StatusOK || !strings.Contains(got.body, `id="cases"`) {
			t.Errorf("%s: desk %d", role, got.status)
		}
	}
	for _, tc := range []struct {
		token  string
		status int
	}{
		{r.tokens[signoff.RoleTriager], http.StatusForbidden},
		{r.tokens[signoff.RolePlanner], http.StatusForbidden},
		{r.tokens[signoff.RoleReporter], http.StatusForbidden},
		{"so_not_a_token", http.StatusUnauthorized},
		{r.tokens[signoff.RoleOwner] + "x", http.StatusUnauthorized},
	} {
		b := r.visitor(t)
		got := b.post("/login", url.Values{"csrf": {b.csrf("/login")}, "token": {tc.token}})
		if got.status != tc.status {
			t.Errorf("token %.12s…: %d, want %d: %s", tc.token, got.status, tc.status, got.body)
		}
		if tc.status == http.StatusForbidden && !strings.Contains(got.body, "for people") {
			t.Errorf("refusal does not say why: %s", got.body)
		}
		if b.cookie(web.SessionCookie) != "" {
			t.Errorf("token %.12s…: a session cookie was set", tc.token)
		}
		if got := b.get("/desk"); got.status != http.StatusSeeOther {
			t.Errorf("token %.12s…: desk answers %d", tc.token, got.status)
		}
	}
	// The store refuses them too, whatever calls it.
	if _, _, err := r.store.SignIn(context.Background(), "", time.Hour); signoff.ErrorCode(err) != signoff.EUNAUTHORIZED {
		t.Fatalf("store SignIn(no token) = %v, want unauthorized", err)
	}
	if _, _, err := r.store.SignIn(context.Background(), r.tokens[signoff.RoleTriager], time.Hour); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("store SignIn(agent) = %v, want forbidden", err)
	}
	if _, _, err := r.store.CreateLoginLink(context.Background(), r.actors[signoff.RoleReporter].ID, time.Minute); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("login link for a reporter = %v, want forbidden", err)
	}
}

// TestLoginLinkSingleUseAndExpiry: a link signs in once, within its 15
// minutes, and never again.
func TestLoginLinkSingleUseAndExpiry(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	code, link, err := r.store.CreateLoginLink(ctx, r.actors[signoff.RoleViewer].ID, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !link.ExpiresAt.Equal(r.clock.Now().Add(15 * time.Minute)) {
		t.Fatalf("expires %v", link.ExpiresAt)
	}
	b := r.visitor(t)
	// Opening the link (a chat client's preview does) uses nothing up.
	if got := r.visitor(t).get("/login/" + code); got.status != http.StatusOK || !strings.Contains(got.body, `id="link-form"`) {
		t.Fatalf("opening the link: %d", got.status)
	}
	got := b.useLink(code)
	if got.status != http.StatusSeeOther || got.header.Get("Location") != "/desk" || b.cookie(web.SessionCookie) == "" {
		t.Fatalf("first use: %d %v", got.status, got.header)
	}
	if got := b.get("/desk"); got.status != http.StatusOK || !strings.Contains(got.body, "viewer-one") {
		t.Fatalf("desk after link: %d", got.status)
	}
	// Used: the second use, from anywhere, is refused.
	other := r.visitor(t)
	if got := other.useLink(code); got.status != http.StatusForbidden || other.cookie(web.SessionCookie) != "" {
		t.Fatalf("second use: %d", got.status)
	}
	// Expired: 15 minutes and one second later.
	code2, _, err := r.store.CreateLoginLink(ctx, r.actors[signoff.RoleOperator].ID, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(15*time.Minute + time.Second)
	late := r.visitor(t)
	if got := late.useLink(code2); got.status != http.StatusForbidden || late.cookie(web.SessionCookie) != "" {
		t.Fatalf("expired link: %d", got.status)
	}
	// Only the hash is stored; the ledger records the link without it.
	var n int
	if err := r.store.SQL().QueryRow(`SELECT count(*) FROM web_login_links WHERE code_sha256 = ?`, code).Scan(&n); err != nil || n != 0 {
		t.Fatalf("code stored in clear: %d %v", n, err)
	}
	evs, err := r.store.StreamEvents(ctx, r.owner, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range evs {
		if e.Type == "login_link.created" {
			seen++
			if strings.Contains(string(e.Payload), code) || e.ActorID != "cli" {
				t.Fatalf("ledger event %+v", e)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("%d login_link.created events, want 2", seen)
	}
	// Garbage in the path is the same refusal.
	for _, c := range []string{"x", "sol_" + strings.Repeat("a", 43), code + "a"} {
		if got := r.visitor(t).useLink(c); got.status != http.StatusForbidden {
			t.Errorf("link %q: %d", c, got.status)
		}
	}
}

// TestSessionExpiry: a session ends 12 hours after sign-in, on the server
// too (a kept cookie does not help), and the live stream refuses it.
func TestSessionExpiry(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	b := r.visitor(t)
	b.signIn(signoff.RoleOperator)
	r.clock.Advance(12*time.Hour - time.Second)
	if got := b.get("/desk"); got.status != http.StatusOK {
		t.Fatalf("before expiry: %d", got.status)
	}
	r.clock.Advance(time.Second)
	if got := b.get("/desk"); got.status != http.StatusSeeOther || got.header.Get("Location") != "/login" {
		t.Fatalf("after expiry: %d %v", got.status, got.header.Get("Location"))
	}
	if got := b.get("/desk/events"); got.status != http.StatusUnauthorized {
		t.Fatalf("stream after expiry: %d", got.status)
	}
	if got := b.get("/desk/rows/case_00000000000000000000000000"); got.status != http.StatusUnauthorized {
		t.Fatalf("row after expiry: %d", got.status)
	}
}

// TestSessionEndsWithItsToken: a session opened with a token ends when
// the token is revoked.
func TestSessionEndsWithItsToken(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	a, err := r.store.CreateActor(ctx, r.owner, "oscar", signoff.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	tok, secret, err := r.store.CreateToken(ctx, r.owner, a.ID, "laptop", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := r.visitor(t)
	if got := b.post("/login", url.Values{"csrf": {b.csrf("/login")}, "token": {secret}}); got.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", got.status)
	}
	if got := b.get("/desk"); got.status != http.StatusOK {
		t.Fatalf("desk: %d", got.status)
	}
	if _, err := r.store.RevokeToken(ctx, r.owner, tok.ID); err != nil {
		t.Fatal(err)
	}
	if got := b.get("/desk"); got.status != http.StatusSeeOther {
		t.Fatalf("desk after the token was revoked: %d", got.status)
	}
}

// TestLogout ends the session on the server: the old cookie no longer
// opens anything.
func TestLogout(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	b := r.visitor(t)
	b.signIn(signoff.RoleOwner)
	old := b.cookie(web.SessionCookie)
	got := b.post("/logout", url.Values{"csrf": {b.csrf("/desk")}})
	if got.status != http.StatusSeeOther || got.header.Get("Location") != "/login" {
		t.Fatalf("logout: %d %v", got.status, got.header)
	}
	if b.cookie(web.SessionCookie) != "" {
		t.Fatal("cookie kept after logout")
	}
	// Replaying the old cookie: the session is gone on the server.
	replay := r.visitor(t)
	u, _ := url.Parse(r.srv.URL)
	replay.jar.SetCookies(u, []*http.Cookie{{Name: web.SessionCookie, Value: old, Path: "/"}})
	for _, p := range []string{"/desk", "/desk/events"} {
		if got := replay.get(p); got.status != http.StatusSeeOther && got.status != http.StatusUnauthorized {
			t.Fatalf("%s with the old cookie: %d", p, got.status)
		}
	}
	if _, err := r.store.WebSession(context.Background(), old); signoff.ErrorCode(err) != signoff.EUNAUTHORIZED {
		t.Fatalf("store session after logout: %v", err)
	}
	// Signing out a dead session with its old token is refused, and the
	// dead cookie goes.
	if got := replay.post("/logout", url.Values{"csrf": {"anything"}}); got.status != http.StatusForbidden || replay.cookie(web.SessionCookie) != "" {
		t.Fatalf("logout of a dead session: %d", got.status)
	}
}

// TestOriginChecks: under Referrer-Policy no-referrer a browser sends
// "Origin: null" from this very site, so null with the right token works;
// a browser that says the post came from another site is refused even
// with the right token.
func TestOriginChecks(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	for _, tc := range []struct {
		header map[string]string
		status int
	}{
		{map[string]string{"Origin": "null", "Sec-Fetch-Site": "same-origin"}, http.StatusSeeOther},
		{map[string]string{}, http.StatusSeeOther},
		{map[string]string{"Origin": "null", "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
	} {
		b := r.visitor(t)
		form := url.Values{"csrf": {b.csrf("/login")}, "token": {r.tokens[signoff.RoleOperator]}}
		req, _ := http.NewRequest("POST", r.srv.URL+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		if got := b.do(req); got.status != tc.status {
			t.Errorf("sign in with %v: %d, want %d", tc.header, got.status, tc.status)
		}
	}
}

// useLink opens a sign-in link's page and presses its button.
func (b *visitor) useLink(code string) served {
	b.t.Helper()
	csrf := ""
	if m := csrfFieldRE.FindStringSubmatch(b.get("/login/" + code).body); m != nil {
		csrf = m[1]
	}
	return b.post("/login/"+code, url.Values{"csrf": {csrf}})
}

// TestRoleRouteMatrix checks every signed-in route for each kind of
// visitor: no session, owner, operator, viewer. Posts carry the visitor's
// valid CSRF token, so what answers is the authorization: the decision is
// refused on its stale digest (409) only after the role may decide, the
// rollback on the case's state (409) only after the role may roll back.
func TestRoleRouteMatrix(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := r.report(t, "the coupon is applied twice")
	d := r.decisionOn(t, c)
	chg, _ := r.changeAwaitingApproval(t)
	visitors := map[string]*visitor{"anon": r.visitor(t)}
	for _, role := range []signoff.Role{signoff.RoleOwner, signoff.RoleOperator, signoff.RoleViewer} {
		b := r.visitor(t)
		b.signIn(role)
		visitors[string(role)] = b
	}
	stale := url.Values{"subject_digest": {strings.Repeat("0", 64)}, "answer": {"approve"}}
	rollback := url.Values{"reason": {"the matrix asks for a rollback"}}
	type want struct{ anon, owner, operator, viewer int }
	const (
		ok, see, unauth, forbid, conflict = http.StatusOK, http.StatusSeeOther, http.StatusUnauthorized, http.StatusForbidden, http.StatusConflict
	)
	routes := []struct {
		method, path string
		form         url.Values
		want         want
	}{
		{"GET", "/desk", nil, want{see, ok, ok, ok}},
		{"GET", "/desk/rows/" + c.ID, nil, want{unauth, ok, ok, ok}},
		{"GET", "/cases/" + c.ID, nil, want{see, ok, ok, ok}},
		{"GET", "/cases/" + c.ID + "/approval", nil, want{see, ok, ok, ok}},
		{"GET", "/cases/" + chg.ID, nil, want{see, ok, ok, ok}},
		{"GET", "/cases/" + chg.ID + "/approval", nil, want{see, ok, ok, ok}},
		{"GET", "/charts", nil, want{see, ok, ok, ok}},
		{"POST", "/cases/" + c.ID + "/decisions/" + d.ID, stale, want{unauth, conflict, conflict, forbid}},
		{"POST", "/cases/" + chg.ID + "/rollback", rollback, want{unauth, conflict, conflict, forbid}},
	}
	for _, rt := range routes {
		for name, b := range visitors {
			exp := map[string]int{"anon": rt.want.anon, "owner": rt.want.owner, "operator": rt.want.operator, "viewer": rt.want.viewer}[name]
			var got served
			if rt.method == "GET" {
				got = b.get(rt.path)
			} else {
				form := url.Values{}
				for k, v := range rt.form {
					form[k] = v
				}
				if name != "anon" {
					form.Set("csrf", b.csrf("/desk"))
				}
				got = b.post(rt.path, form)
			}
			if got.status != exp {
				t.Errorf("%s %s as %s: %d, want %d: %s", rt.method, rt.path, name, got.status, exp, mainElement(got.body))
			}
		}
	}
	if got, err := r.store.GetDecision(context.Background(), r.owner, d.ID); err != nil || got.Status != signoff.DecisionPending {
		t.Fatalf("the matrix changed the decision: %+v %v", got.Status, err)
	}
}
