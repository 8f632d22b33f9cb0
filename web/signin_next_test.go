package web_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/web"
)

var nextFieldRE = regexp.MustCompile(`<input type="hidden" name="next" value="([^"]*)">`)

// TestSignInReturnsToThePage: a signed-in page asked for without a
// session sends the browser to /login?next=<path>, and signing in with a
// token, or with a one-time link opened afterwards, lands on that page.
func TestSignInReturnsToThePage(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := r.report(t, "checkout fails")
	casePath := "/cases/" + c.ID

	b := r.visitor(t)
	got := b.get(casePath)
	wantLogin := "/login?next=" + url.QueryEscape(casePath)
	if got.status != http.StatusSeeOther || got.header.Get("Location") != wantLogin {
		t.Fatalf("signed out: %d %q, want %q", got.status, got.header.Get("Location"), wantLogin)
	}
	// The query goes along; the continue page's marker does not; the
	// desk, where sign-in goes anyway, needs no next.
	for path, want := range map[string]string{
		casePath + "?continued=1":         wantLogin,
		"/desk?kind=bug":                  "/login?next=" + url.QueryEscape("/desk?kind=bug"),
		"/desk":                           "/login",
		"/cases/" + c.ID + "/approval":    "/login?next=" + url.QueryEscape(casePath+"/approval"),
		"/charts?days=30&continued=1":     "/login?next=" + url.QueryEscape("/charts?days=30"),
		"/cases/" + c.ID + "?q=%0d%0aX:1": "/login",
	} {
		if got := r.visitor(t).get(path); got.header.Get("Location") != want {
			t.Errorf("GET %s: Location %q, want %q", path, got.header.Get("Location"), want)
		}
	}
	form := b.get(wantLogin)
	m := nextFieldRE.FindStringSubmatch(form.body)
	if form.status != http.StatusOK || m == nil || m[1] != casePath || !strings.Contains(form.body, `id="login-next"`) {
		t.Fatalf("sign-in page: %d %v", form.status, m)
	}
	// A wrong token shows the form again, still going back to the case.
	bad := b.post("/login", url.Values{"csrf": {csrfFieldRE.FindStringSubmatch(form.body)[1]}, "token": {"sot_wrong"}, "next": {casePath}})
	if m := nextFieldRE.FindStringSubmatch(bad.body); bad.status != http.StatusUnauthorized || m == nil || m[1] != casePath {
		t.Fatalf("wrong token: %d %v", bad.status, m)
	}
	in := b.post("/login", url.Values{"csrf": {csrfFieldRE.FindStringSubmatch(form.body)[1]}, "token": {r.tokens[signoff.RoleOperator]}, "next": {m[1]}})
	if in.status != http.StatusSeeOther || in.header.Get("Location") != casePath {
		t.Fatalf("sign in: %d %q", in.status, in.header.Get("Location"))
	}
	if got := b.get(casePath); got.status != http.StatusOK || !strings.Contains(got.body, c.Title) {
		t.Fatalf("the case after signing in: %d", got.status)
	}
	if b.cookie("signoff_next") != "" {
		t.Error("the remembered page outlives the sign-in")
	}
	// Signed in already: the sign-in page goes straight on, and only to a
	// local path.
	if got := b.get(wantLogin); got.status != http.StatusSeeOther || got.header.Get("Location") != casePath {
		t.Errorf("signed in, /login?next: %d %q", got.status, got.header.Get("Location"))
	}
	if got := b.get("/login?next=" + url.QueryEscape("//evil.example/x")); got.header.Get("Location") != "/desk" {
		t.Errorf("signed in, hostile next: %q", got.header.Get("Location"))
	}

	// A one-time link, opened after the sign-in page sent this browser
	// there (from a chat message: no next on the link), lands on the case.
	code, _, err := r.store.CreateLoginLink(context.Background(), r.actors[signoff.RoleViewer].ID, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	v := r.visitor(t)
	v.get(v.get(casePath).header.Get("Location"))
	if got := v.useLink(code); got.status != http.StatusSeeOther || got.header.Get("Location") != casePath || v.cookie(web.SessionCookie) == "" {
		t.Fatalf("one-time link: %d %q", got.status, got.header.Get("Location"))
	}
	// A link with next carries it in its form.
	code2, _, err := r.store.CreateLoginLink(context.Background(), r.actors[signoff.RoleViewer].ID, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	page := r.visitor(t).get("/login/" + code2 + "?next=" + url.QueryEscape(casePath))
	if m := nextFieldRE.FindAllStringSubmatch(page.body, -1); len(m) != 2 || m[0][1] != casePath {
		t.Fatalf("link page next fields: %v", m)
	}
}

// TestSignInRefusesHostileNext: no next value, from the form, the query
// or the cookie, sends a person anywhere but a local path: each lands on
// the desk and none is reflected into the page.
func TestSignInRefusesHostileNext(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	for _, next := range []string{
		"//evil.example", "///evil.example", "/\\evil.example", "\\\\evil.example", "https://evil.example/cases/x",
		"javascript:alert(1)", "/%2f%2fevil.example", "/%5cevil.example", "/%252f%252fevil.example", "/cases/x%0d%0aSet-Cookie:a=b",
		"/cases/x\r\nLocation:https://evil.example", "/\t/evil.example", "/../evil", "/cases/x#frag", "/%E2%80%AEevil",
		"/" + strings.Repeat("a", 600), "/login", "/logout", "evil.example", "",
	} {
		b := r.visitor(t)
		page := b.get("/login?next=" + url.QueryEscape(next))
		if next != "" && nextFieldRE.MatchString(page.body) {
			t.Errorf("next %q is carried by the sign-in form", next)
		}
		if b.cookie("signoff_next") != "" {
			t.Errorf("next %q is remembered", next)
		}
		got := b.post("/login", url.Values{"csrf": {csrfFieldRE.FindStringSubmatch(page.body)[1]}, "token": {r.tokens[signoff.RoleOperator]}, "next": {next}})
		if got.status != http.StatusSeeOther || got.header.Get("Location") != "/desk" {
			t.Errorf("next %q: %d %q", next, got.status, got.header.Get("Location"))
		}
	}
	// A hostile cookie (set by some other means) is no better.
	b := r.visitor(t)
	u, _ := url.Parse(r.srv.URL)
	b.jar.SetCookies(u, []*http.Cookie{{Name: "signoff_next", Value: url.QueryEscape("//evil.example"), Path: "/"}})
	if got := b.post("/login", url.Values{"csrf": {b.csrf("/login")}, "token": {r.tokens[signoff.RoleOperator]}}); got.header.Get("Location") != "/desk" {
		t.Errorf("hostile cookie: %q", got.header.Get("Location"))
	}
}
