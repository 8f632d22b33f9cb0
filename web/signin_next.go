package web

import (
	"net/http"
	"net/url"
	"path"
	"strings"
)

// Sign-in returns to the page it came from: a signed-in page asked for
// without a session sends the browser to /login?next=<its path>, and
// signing in (with a token or a one-time link) lands there. next is the
// classic open redirect, so it is taken only as a plain path of this site
// (safeNext) and checked again wherever it is read.

// maxNext bounds the length of a next path, in bytes.
const maxNext = 512

// nextCookie remembers the page for a one-time link opened after the
// sign-in page: the link comes from a chat or mail message, outside the
// sign-in page's form. It is SameSite=Strict and HttpOnly like every
// cookie here, and checked with safeNext when read.
const nextCookie = "signoff_next"

// nextCookieAge is how long the page is remembered (a one-time link lives
// 15 minutes).
const nextCookieAge = 30 * 60

// safeNext returns next when it is a local path of this site in canonical
// form, with an optional query; otherwise "". Refused: anything that is not
// a single leading slash ("//host", "/\host", schemes, "host/path"),
// backslashes, control characters, spaces and non-ASCII bytes (raw or
// percent-encoded), encoded slashes, backslashes or percent signs (double
// encoding), dot segments, fragments, values longer than maxNext, the
// sign-in pages themselves (a loop) and the public pages.
func safeNext(next string) string {
	if next == "" || len(next) > maxNext || next[0] != '/' {
		return ""
	}
	if len(next) > 1 && (next[1] == '/' || next[1] == '\\') {
		return ""
	}
	for i := 0; i < len(next); i++ {
		if c := next[i]; c <= ' ' || c >= 0x7f || c == '\\' || c == '#' {
			return ""
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || u.Fragment != "" {
		return ""
	}
	p := u.Path
	if !plainASCII(p) || strings.ContainsAny(p, `\%`) || strings.HasPrefix(p, "//") || path.Clean(p) != p {
		return ""
	}
	if p == "/login" || strings.HasPrefix(p, "/login/") || p == "/logout" {
		return ""
	}
	// The public pages need no sign-in, and a tracking link is a
	// capability that has no business in another page's query.
	if strings.HasPrefix(p, "/t/") || strings.HasPrefix(p, "/p/") {
		return ""
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return ""
	}
	for k, vs := range q {
		if !plainASCII(k) {
			return ""
		}
		for _, v := range vs {
			if !plainASCII(v) {
				return ""
			}
		}
	}
	out := u.EscapedPath()
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	return out
}

// plainASCII reports whether s holds printable ASCII alone (spaces
// allowed: they arrive percent-encoded, or as + in a query).
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// loginPath is where a signed-out request for r goes: the sign-in page,
// with r's path as next (the desk, the default, needs none). The continue
// page's marker is not kept.
func loginPath(r *http.Request) string {
	q := r.URL.Query()
	q.Del("continued")
	p := r.URL.EscapedPath()
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	if p == "/desk" || safeNext(p) == "" {
		return "/login"
	}
	return "/login?next=" + url.QueryEscape(p)
}

// rememberNext keeps a sign-in page's next in a cookie, for a one-time
// link opened afterwards in this browser.
func (s *server) rememberNext(w http.ResponseWriter, r *http.Request, next string) {
	if next != "" {
		http.SetCookie(w, s.cookie(r, nextCookie, url.QueryEscape(next), nextCookieAge))
	}
}

// nextAfterSignIn is where a sign-in post lands: its form's next, else the
// remembered one, else the desk. The form must have been parsed.
func nextAfterSignIn(r *http.Request) string {
	if n := safeNext(r.PostFormValue("next")); n != "" {
		return n
	}
	if c, err := r.Cookie(nextCookie); err == nil {
		if v, err := url.QueryUnescape(c.Value); err == nil {
			if n := safeNext(v); n != "" {
				return n
			}
		}
	}
	return "/desk"
}
