package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/web"
)

// settableNotice is a notice the test changes while the server runs, as
// the demo's startup does.
type settableNotice struct {
	mu sync.Mutex
	n  *web.Notice
}

func (s *settableNotice) set(n *web.Notice) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n = n
}

func (s *settableNotice) get() (web.Notice, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == nil {
		return web.Notice{}, false
	}
	return *s.n, true
}

// TestNotice: the server's notice shows on the staff pages, signed in or
// not, and never on the reporters' public pages; /desk/notice answers it
// for the page's script, and 204 once it is gone, when the pages no
// longer show it. Anyone not signed in (the sign-in page, the script
// there) sees its heading only, never its text (a build's error).
func TestNotice(t *testing.T) {
	t.Parallel()
	var n settableNotice
	r := newRig(t, rigOptions{opts: web.Options{Notice: n.get}})
	staff := r.visitor(t)
	staff.signIn(signoff.RoleOperator)
	anon := r.visitor(t)
	building := &web.Notice{Heading: "ShopLite is being built.", Text: "Step 2 of 3: compiling <ShopLite>: 57 of 191 packages, 12s.\nLeft: start it.", Ready: "ShopLite is ready."}
	failed := &web.Notice{Heading: "ShopLite could not be built.", Text: "go: command not found", Failed: true}

	pages := []struct {
		name   string
		who    *visitor
		path   string
		status int
		shown  bool
	}{
		{"sign-in page", anon, "/login", http.StatusOK, true},
		{"desk", staff, "/desk", http.StatusOK, true},
		{"people", staff, "/people", http.StatusOK, true},
		{"a page that is not there", staff, "/cases/case_nothere", http.StatusNotFound, true},
		{"public report form", anon, "/p/" + r.proj.ID + "/report", http.StatusOK, false},
		{"tracking page", anon, "/t/nothere", http.StatusNotFound, false},
	}
	for _, state := range []struct {
		name   string
		notice *web.Notice
		want   []string
		text   string // of the notice, as the page shows it: signed-in people only
	}{
		{"building", building, []string{`class="site-notice callout"`, `data-ready="ShopLite is ready."`, "ShopLite is being built.",
			`<script src="/static/notice.js" defer></script>`}, "compiling &lt;ShopLite&gt;: 57 of 191 packages"},
		{"failed", failed, []string{`class="site-notice alert"`, `data-failed="1"`, "ShopLite could not be built."}, "go: command not found"},
		{"none", nil, nil, ""},
	} {

		n.set(state.notice)
		for _, p := range pages {
			got := p.who.get(p.path)
			if got.status != p.status {
				t.Errorf("%s, %s: GET %s = %d, want %d", state.name, p.name, p.path, got.status, p.status)
				continue
			}
			shown := strings.Contains(got.body, `id="notice"`)
			if want := p.shown && state.notice != nil; shown != want || strings.Contains(got.body, "notice.js") != want {
				t.Errorf("%s, %s: notice shown %v, want %v:\n%s", state.name, p.name, shown, want, elementByID(got.body, "notice"))
				continue
			}
			if !shown {
				continue
			}
			for _, w := range state.want {
				if !strings.Contains(got.body, w) {
					t.Errorf("%s, %s: page lacks %q:\n%s", state.name, p.name, w, elementByID(got.body, "notice"))
				}
			}
			if has, want := strings.Contains(got.body, state.text), p.who == staff; has != want {
				t.Errorf("%s, %s: notice text shown %v, want %v:\n%s", state.name, p.name, has, want, elementByID(got.body, "notice"))
			}
		}

		// The script's view of it, signed in or not.
		for _, who := range []*visitor{anon, staff} {
			got := who.get("/desk/notice")
			if state.notice == nil {
				if got.status != http.StatusNoContent || got.body != "" {
					t.Errorf("%s: /desk/notice = %d %q, want 204", state.name, got.status, got.body)
				}
				continue
			}
			want := *state.notice
			if who == anon {
				want.Text = ""
			}
			var back web.Notice
			if got.status != http.StatusOK || json.Unmarshal([]byte(got.body), &back) != nil || back != want {
				t.Errorf("%s: /desk/notice = %d %s, want %+v", state.name, got.status, got.body, want)
			}
			if cc := got.header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%s: /desk/notice Cache-Control %q, want no-store", state.name, cc)
			}
		}
	}
	if got := anon.get("/static/notice.js"); got.status != http.StatusOK || !strings.Contains(got.body, "/desk/notice") {
		t.Errorf("/static/notice.js = %d", got.status)
	}
}

// TestNoNotice: without Options.Notice no page has one and /desk/notice
// answers 204.
func TestNoNotice(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	b := r.visitor(t)
	if got := b.get("/login"); strings.Contains(got.body, `id="notice"`) || strings.Contains(got.body, "notice.js") {
		t.Errorf("a notice without Options.Notice:\n%s", got.body)
	}
	if got := b.get("/desk/notice"); got.status != http.StatusNoContent {
		t.Errorf("/desk/notice = %d, want 204", got.status)
	}
}
