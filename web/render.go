package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
)

// page is what every template gets: the layout's fields and the page's
// own data in Body.
type page struct {
	Title string
	// Me is the signed-in person (nil on public pages); CSRF is their
	// session's token, for the sign-out form.
	Me   *signoff.Actor
	CSRF string
	// Script names a file under /static/ the page loads, if any.
	Script string
	Body   any
	// Notice is the server's note, set by render (Options.Notice).
	Notice *Notice
}

// pageNames are the page templates; each is parsed with the layout and
// the shared partials.
var pageNames = []string{"login", "desk", "case", "approval", "harness", "report", "reported", "track", "error", "continue", "charts", "people", "changenew"}

func parsePages() map[string]*template.Template {
	funcs := template.FuncMap{
		"when":    when,
		"iso":     func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
		"visible": visibleSource,
	}
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t := template.New(name).Funcs(funcs)
		files := []string{"templates/base.html", "templates/partials.html", "templates/" + name + ".html"}
		// A page's sections live in files named after it (case_bug.html).
		more, err := fs.Glob(templateFS, "templates/"+name+"_*.html")
		if err != nil {
			panic(err)
		}
		out[name] = template.Must(t.ParseFS(templateFS, append(files, more...)...))
	}
	return out
}

// when formats a time for people: UTC, to the second.
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// age says how long ago t was, briefly.
func age(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	default:
		return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
	}
}

// render writes a page. It renders into a buffer first, so that a
// template error is a clean 500 rather than half a page.
func (s *server) render(w http.ResponseWriter, r *http.Request, status int, name string, p page) {
	p.Notice = s.notice(r)
	var buf bytes.Buffer
	if err := s.pages[name].ExecuteTemplate(&buf, "base", p); err != nil {
		s.log.ErrorContext(r.Context(), "render page", "page", name, "err", err)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("internal error\n"))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// errorPage is the body of the error template.
type errorPage struct {
	Status  int
	Heading string
	Message string
	// Home is where the page offers to go next.
	Home, HomeText string
	// Again is the page to try again, for a GET that was refused for a
	// while (429).
	Again string
	// Kept is what the person wrote in a form that was refused, shown so
	// that it is not lost.
	Kept string
}

// fail answers err as a page. Domain errors take their status and message
// from signoff.Mapping; anything else is logged in full and shown only as
// "internal error".
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, code := signoff.Mapping(err).HTTPStatus, signoff.ErrorCode(err)
	msg := signoff.ErrorMessage(err)
	if code == signoff.EINTERNAL {
		s.log.ErrorContext(r.Context(), "internal error", "route", infoFrom(r.Context()).route, "err", err)
		msg = "Something went wrong on our side. Please try again in a moment."
	}
	ep := errorPage{Message: msg}
	if k, ok := errors.AsType[keptError](err); ok {
		ep.Kept = k.kept
	}
	s.errorPage(w, r, status, ep)
}

// errorPage renders a plain page for status. Public pages (the report
// form, the tracking page) point nowhere: a reporter has no account.
func (s *server) errorPage(w http.ResponseWriter, r *http.Request, status int, ep errorPage) {
	headings := map[int]string{
		http.StatusNotFound:              "Not found",
		http.StatusForbidden:             "Not allowed",
		http.StatusUnauthorized:          "Please sign in",
		http.StatusConflict:              "This has changed",
		http.StatusUnprocessableEntity:   "Please check what you entered",
		http.StatusTooManyRequests:       "Please wait a moment",
		http.StatusMethodNotAllowed:      "Not allowed here",
		http.StatusRequestEntityTooLarge: "Too much text",
		http.StatusServiceUnavailable:    "Not available",
	}
	h, ok := headings[status]
	if !ok {
		h = http.StatusText(status)
	}
	ep.Status, ep.Heading = status, h
	if status == http.StatusTooManyRequests && r.Method == http.MethodGet {
		ep.Again = r.URL.EscapedPath()
	}
	p := page{Title: h, Body: &ep}
	if !public(r) {
		ep.Home, ep.HomeText = "/login", "Sign in"
		if sess, _, ok := s.session(r); ok {
			me := sess.Actor
			p.Me, p.CSRF = &me, sess.CSRF
			ep.Home, ep.HomeText = "/desk", "Back to the desk"
		}
	}
	s.render(w, r, status, "error", p)
}

// public reports whether r is for a page people without an account use.
func public(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/t/") || strings.HasPrefix(r.URL.Path, "/p/")
}

// indentJSON shows raw JSON indented, or as it is when it is not JSON.
func indentJSON(raw []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// asset is one embedded static file.
type asset struct {
	body  []byte
	ctype string
	etag  string
}

func loadAssets() map[string]asset {
	out := map[string]asset{}
	types := map[string]string{".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}
	err := fs.WalkDir(assetFS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(assetFS(), p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[p] = asset{body: b, ctype: types[path.Ext(p)], etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic(err)
	}
	return out
}

// serveStatic serves an embedded asset. Browsers revalidate it (no-cache
// with an ETag), so a new binary's assets are used at once.
func (s *server) serveStatic(w http.ResponseWriter, r *http.Request) {
	a, ok := s.static[r.PathValue("file")]
	if !ok || a.ctype == "" {
		s.errorPage(w, r, http.StatusNotFound, errorPage{Message: "There is no such file."})
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", a.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
