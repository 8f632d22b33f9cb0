package web_test

import (
	"context"
	"crypto/ed25519"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/web"
)

// rigClock is a settable clock shared by the store and the web UI.
type rigClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *rigClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *rigClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// rig is a workspace with one person of each human role and an agent,
// each with a token, a project, and the web UI over it.
type rig struct {
	store   *sqlstore.DB
	clock   *rigClock
	ws      signoff.Workspace
	owner   signoff.Actor
	proj    signoff.Project
	actors  map[signoff.Role]signoff.Actor
	tokens  map[signoff.Role]string
	bug     *bugdesk.Desk
	change  *changedesk.Desk
	srv     *httptest.Server
	handler http.Handler
}

type rigOptions struct {
	tls  bool
	opts web.Options
}

func newRig(t *testing.T, ro ...rigOptions) *rig {
	t.Helper()
	var o rigOptions
	if len(ro) > 0 {
		o = ro[0]
	}
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := &rigClock{t: time.Now().UTC().Truncate(time.Second)}
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "web.db"), sqlstore.Options{Signer: key, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return newRigOn(t, s, clock, o)
}

func newRigOn(t *testing.T, s *sqlstore.DB, clock *rigClock, o rigOptions) *rig {
	t.Helper()
	ctx := context.Background()
	ws, owner, err := s.CreateWorkspace(ctx, "Acme", "olivia")
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{store: s, clock: clock, ws: ws, owner: owner, actors: map[signoff.Role]signoff.Actor{signoff.RoleOwner: owner}, tokens: map[signoff.Role]string{}}
	if r.proj, err = s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shoplite"}); err != nil {
		t.Fatal(err)
	}
	for _, role := range []signoff.Role{signoff.RoleOperator, signoff.RoleViewer, signoff.RoleTriager, signoff.RoleReporter, signoff.RolePlanner} {
		a, err := s.CreateActor(ctx, owner, string(role)+"-one", role)
		if err != nil {
			t.Fatal(err)
		}
		r.actors[role] = a
	}
	for role, a := range r.actors {
		_, secret, err := s.CreateToken(ctx, owner, a.ID, "test", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.tokens[role] = secret
	}
	r.bug = &bugdesk.Desk{Store: s, Now: clock.Now}
	r.change = &changedesk.Desk{Store: s, Key: s.Signer(), Now: clock.Now,
		Actuators: map[string]changedesk.Actuator{change.KindFlag: changedesk.FlagActuator{Flags: s}},
		Health:    changedesk.HTTPProber{}, Sleep: func(context.Context, time.Duration) error { return nil }, LockWait: 5 * time.Second}
	wo := o.opts
	wo.Store, wo.BugDesk, wo.ChangeDesk, wo.Now = s, r.bug, r.change, clock.Now
	if wo.IntakePerIP == (web.Limit{}) {
		wo.IntakePerIP = web.Limit{Rate: 1000, Burst: 1000}
	}
	if wo.TrackPerIP == (web.Limit{}) {
		wo.TrackPerIP = web.Limit{Rate: 1000, Burst: 1000}
	}
	if wo.LoginPerIP == (web.Limit{}) {
		wo.LoginPerIP = web.Limit{Rate: 1000, Burst: 1000}
	}
	if wo.EventPoll == 0 {
		wo.EventPoll = 20 * time.Millisecond
	}
	r.handler = web.New(wo)
	if o.tls {
		r.srv = httptest.NewTLSServer(r.handler)
	} else {
		r.srv = httptest.NewServer(r.handler)
	}
	t.Cleanup(r.srv.Close)
	return r
}

// visitor is one browser: a cookie jar, no automatic redirects.
type visitor struct {
	t   *testing.T
	r   *rig
	c   *http.Client
	jar *cookiejar.Jar
}

func (r *rig) visitor(t *testing.T) *visitor {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := r.srv.Client()
	c = &http.Client{Transport: c.Transport, Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &visitor{t: t, r: r, c: c, jar: jar}
}

type served struct {
	status int
	header http.Header
	body   string
}

func (b *visitor) do(req *http.Request) served {
	b.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return served{status: res.StatusCode, header: res.Header, body: string(body)}
}

func (b *visitor) get(path string) served {
	b.t.Helper()
	req, err := http.NewRequest("GET", b.r.srv.URL+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// post sends a form as a browser does, with the Origin of the site.
func (b *visitor) post(path string, form url.Values) served {
	b.t.Helper()
	req, err := http.NewRequest("POST", b.r.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.r.srv.URL)
	return b.do(req)
}

var csrfFieldRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf returns the token of the first form on the page at path.
func (b *visitor) csrf(path string) string {
	b.t.Helper()
	got := b.get(path)
	m := csrfFieldRE.FindStringSubmatch(got.body)
	if m == nil {
		b.t.Fatalf("GET %s: no csrf field in %d %s", path, got.status, got.body)
	}
	return m[1]
}

// signIn signs in with role's token and fails unless it works.
func (b *visitor) signIn(role signoff.Role) {
	b.t.Helper()
	got := b.post("/login", url.Values{"csrf": {b.csrf("/login")}, "token": {b.r.tokens[role]}})
	if got.status != http.StatusSeeOther || got.header.Get("Location") != "/desk" {
		b.t.Fatalf("sign in as %s: %d %s", role, got.status, got.body)
	}
}

// cookie returns the value of the visitor's cookie name, or "".
func (b *visitor) cookie(name string) string {
	u, _ := url.Parse(b.r.srv.URL)
	for _, c := range b.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// report files a public report through the store and returns the case
// and its tracking secret.
func (r *rig) report(t *testing.T, text string) (signoff.Case, string) {
	t.Helper()
	c, _, secret, err := r.store.SubmitReport(context.Background(), signoff.ReportInput{ProjectID: r.proj.ID, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return c, secret
}

// element returns the first element with id in body, up to its end tag
// (good enough for the pages' flat markup), or "".
func elementByID(body, id string) string {
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(body[:i], "<")
	tag := body[start+1:]
	tag = tag[:strings.IndexAny(tag, " >")]
	end := strings.Index(body[i:], "</"+tag+">")
	if end < 0 {
		return body[start:]
	}
	return body[start : i+end+len(tag)+3]
}

// mainOf returns the page's <main> element.
func mainElement(body string) string {
	i, j := strings.Index(body, "<main"), strings.Index(body, "</main>")
	if i < 0 || j < i {
		return ""
	}
	return body[i:j]
}
