package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// heldDemo is `signoff demo` run in this process with ShopLite's compile
// step held at its start: the test sees the demo as it is while ShopLite
// is being built, then lets the build go on (release) or stops the demo.
type heldDemo struct {
	t       *testing.T
	out     *lockedBuffer
	errb    *lockedBuffer
	cancel  context.CancelFunc
	gate    chan struct{}
	done    chan error
	buildCx context.Context // the build's context, as the hook saw it
	url     string
	c       *http.Client
}

// startHeldDemo runs the demo with args until ShopLite's compile step,
// where it holds it.
func startHeldDemo(t *testing.T, args ...string) *heldDemo {
	t.Helper()
	for _, b := range []string{"git", "go"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed", b)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &heldDemo{t: t, out: &lockedBuffer{}, errb: &lockedBuffer{}, cancel: cancel, gate: make(chan struct{}), done: make(chan error, 1)}
	held := make(chan context.Context, 1)
	hooks := demoHooks{beforeCompile: func(ctx context.Context) error {
		held <- ctx
		select {
		case <-h.gate:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}}
	e := &env{stdin: strings.NewReader(""), stdout: h.out, stderr: h.errb, getenv: func(string) string { return "" }}
	go func() { h.done <- runDemoWith(ctx, e, append([]string{"--addr", "127.0.0.1:0"}, args...), hooks) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-h.done:
		case <-time.After(time.Minute):
			t.Error("the demo did not stop")
		}
	})
	// A bound for a stuck setup, not a timing assertion.
	select {
	case h.buildCx = <-held:
	case err := <-h.done:
		t.Fatalf("the demo ended before ShopLite's build: %v\nstdout:\n%s\nstderr:\n%s", err, h.out, h.errb)
	case <-time.After(2 * time.Minute):
		t.Fatalf("ShopLite's build never began:\nstdout:\n%s\nstderr:\n%s", h.out, h.errb)
	}
	m := regexp.MustCompile(`The desk is up at (http://\S+) `).FindStringSubmatch(h.out.String())
	if m == nil {
		t.Fatalf("the demo does not say where its desk is while ShopLite builds:\n%s", h.out)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	h.url = m[1]
	h.c = &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return h
}

// get answers GET path: status and body.
func (h *heldDemo) get(path string) (int, string) {
	h.t.Helper()
	resp, err := h.c.Get(h.url + path)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// signIn follows the operator's sign-in link the demo printed first.
func (h *heldDemo) signIn() {
	h.t.Helper()
	m := regexp.MustCompile(`(/login/sol_\S+)`).FindStringSubmatch(h.out.String())
	if m == nil {
		h.t.Fatalf("no sign-in link printed:\n%s", h.out)
	}
	_, page := h.get(m[1])
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		h.t.Fatalf("the sign-in link's page has no form:\n%s", page)
	}
	req, _ := http.NewRequest("POST", h.url+m[1], strings.NewReader(url.Values{"csrf": {csrf[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", h.url)
	resp, err := h.c.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		h.t.Fatalf("sign in with the printed link: %s", resp.Status)
	}
}

// waitOut waits until the terminal shows want.
func (h *heldDemo) waitOut(want string) {
	h.t.Helper()
	deadline := time.Now().Add(3 * time.Minute) // a bound, not a timing assertion
	for !strings.Contains(h.out.String(), want) {
		select {
		case err := <-h.done:
			h.t.Fatalf("the demo ended (%v) before printing %q:\n%s\nstderr:\n%s", err, want, h.out, h.errb)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the demo never printed %q:\n%s\nstderr:\n%s", want, h.out, h.errb)
		}
	}
}

// stop stops the demo as Ctrl-C does and returns how it ended.
func (h *heldDemo) stop() error {
	h.t.Helper()
	h.cancel()
	select {
	case err := <-h.done:
		h.done <- err // for the cleanup
		return err
	case <-time.After(time.Minute):
		h.t.Fatal("the demo did not stop")
		return nil
	}
}

// TestDemoServesBeforeShopLite holds ShopLite's compile step and finds the
// demo already talking and serving: its first line and the desk's address
// printed, /healthz answering, the desk saying ShopLite is being built and
// what is left, and no ShopLite project offered yet. Released, the build
// finishes: the walkthrough is printed, the notice is gone, ShopLite's
// project is there.
func TestDemoServesBeforeShopLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h := startHeldDemo(t, "--dir", dir)

	text := h.out.String()
	if !strings.HasPrefix(text, "Signoff demo: a workspace on SQLite with ShopLite") || !strings.Contains(strings.SplitN(text, "\n", 2)[0], dir) {
		t.Errorf("the first line does not say what the demo is and where:\n%s", text)
	}
	for _, w := range []string{"[1/3] setting up the workspace", "done in", "[2/3] compiling ShopLite's production server (go build) …"} {
		if !strings.Contains(text, w) {
			t.Errorf("while ShopLite builds the terminal lacks %q:\n%s", w, text)
		}
	}
	for _, w := range []string{"Press Ctrl-C", "=== Signoff demo is ready", "[3/3]", "token: so_"} {
		if strings.Contains(text, w) {
			t.Errorf("before ShopLite is built the terminal already says %q:\n%s", w, text)
		}
	}
	if st, body := h.get("/healthz"); st != http.StatusOK {
		t.Fatalf("/healthz while ShopLite builds: %d %s", st, body)
	}

	// The desk while building: the notice on every staff page, with the
	// step under way and what is left once signed in, its heading only
	// before; ShopLite's project is not offered, the triage sample's is.
	building := []string{"ShopLite is being built.", "Step 2 of 3: compiling ShopLite&#39;s production server (go build)",
		"Left: starting ShopLite and adding its project.", "the triage sample project works already"}
	_, login := h.get("/login")
	if !strings.Contains(login, building[0]) || strings.Contains(login, building[1]) {
		t.Errorf("the sign-in page while ShopLite builds: want the notice's heading only:\n%s", login)
	}
	if st, body := h.get("/desk/notice"); st != http.StatusOK || !strings.Contains(body, `"text":""`) {
		t.Errorf("/desk/notice while ShopLite builds, not signed in: %d %s, want no text", st, body)
	}
	h.signIn()
	_, desk := h.get("/desk")
	_, change := h.get("/changes/new")
	for name, page := range map[string]string{"desk": desk, "change form": change} {
		for _, w := range building {
			if !strings.Contains(page, w) {
				t.Errorf("%s while ShopLite builds lacks %q:\n%s", name, w, page)
			}
		}
	}
	if !strings.Contains(change, ">triage-sample</option>") || strings.Contains(change, ">shoplite</option>") {
		t.Errorf("the change form offers ShopLite before it is built, or not the triage sample:\n%s", change)
	}
	if st, body := h.get("/desk/notice"); st != http.StatusOK || !strings.Contains(body, `"heading":"ShopLite is being built."`) {
		t.Errorf("/desk/notice while ShopLite builds: %d %s", st, body)
	}

	close(h.gate)
	h.waitOut("Press Ctrl-C to stop.")
	text = h.out.String()
	// One sign-in link: the first, printed again at the end.
	links := map[string]bool{}
	for _, m := range regexp.MustCompile(`/login/(sol_\S+)`).FindAllStringSubmatch(text, -1) {
		links[m[1]] = true
	}
	if len(links) != 1 {
		t.Errorf("%d sign-in links printed, want one:\n%s", len(links), text)
	}
	for _, w := range []string{"[2/3] compiling ShopLite's production server (go build) … done in", "[3/3] starting ShopLite and adding its project … done in",
		"=== Signoff demo is ready", "operator    token: so_"} {
		if !strings.Contains(text, w) {
			t.Errorf("once ShopLite is ready the terminal lacks %q:\n%s", w, text)
		}
	}
	for name, path := range map[string]string{"desk": "/desk", "change form": "/changes/new"} {
		if _, page := h.get(path); strings.Contains(page, `id="notice"`) || strings.Contains(page, "being built") {
			t.Errorf("the %s still shows the notice once ShopLite is ready:\n%s", name, page)
		}
	}
	if _, change := h.get("/changes/new"); !strings.Contains(change, ">shoplite</option>") {
		t.Errorf("the change form does not offer ShopLite once it is ready:\n%s", change)
	}
	if st, body := h.get("/desk/notice"); st != http.StatusNoContent {
		t.Errorf("/desk/notice once ShopLite is ready: %d %s", st, body)
	}
	if err := h.stop(); err != nil {
		t.Errorf("Ctrl-C once ready: %v", err)
	}
}

// TestDemoStopWhileBuilding stops the demo (Ctrl-C) while ShopLite's build
// is held: the build is cancelled, the demo stops cleanly, and the folder
// it made is deleted; a --dir stays.
func TestDemoStopWhileBuilding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		dir       string
		temporary bool
	}{
		{"a temporary folder", "", true},
		{"a --dir", t.TempDir(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var args []string
			if tc.dir != "" {
				args = []string{"--dir", tc.dir}
			}
			h := startHeldDemo(t, args...)
			m := regexp.MustCompile(`^Signoff demo: .* in (\S+) \(`).FindStringSubmatch(h.out.String())
			if m == nil {
				t.Fatalf("the first line does not name the folder:\n%s", h.out)
			}
			dir := m[1]
			if _, err := os.Stat(filepath.Join(dir, "operator-approval.key")); err != nil {
				t.Fatalf("the demo's folder %s has no approval key: %v", dir, err)
			}
			if err := h.stop(); err != nil {
				t.Errorf("Ctrl-C while ShopLite builds: %v, want a clean stop", err)
			}
			if !errors.Is(h.buildCx.Err(), context.Canceled) {
				t.Errorf("the build's context after Ctrl-C: %v, want cancelled", h.buildCx.Err())
			}
			_, err := os.Stat(dir)
			if gone := os.IsNotExist(err); gone != tc.temporary {
				t.Errorf("folder %s gone %v (%v), want %v; stderr:\n%s", dir, gone, err, tc.temporary, h.errb)
			}
			if text := h.out.String(); strings.Contains(text, "could not be built") || strings.Contains(text, "FAILED") ||
				!strings.Contains(text, "[2/3] compiling ShopLite's production server (go build) … stopped after") {
				t.Errorf("a stop reads as a failed build, or not as a stop:\n%s", text)
			}
		})
	}
}

// TestDemoNoticeShopTaken: a start that failed because a project named
// shoplite was made on the desk meanwhile says so, not that ShopLite
// could not be built.
func TestDemoNoticeShopTaken(t *testing.T) {
	st := &demoStart{out: io.Discard}
	st.begin(stepStart)
	st.fail(errShopTaken)
	n, ok := st.notice()
	if !ok || !n.Failed || n.Heading != "ShopLite could not be added: a project named shoplite already exists." ||
		!strings.Contains(n.Text, "a project named shoplite already exists") {
		t.Errorf("notice %+v, %v; want the project's name taken", n, ok)
	}
	if got := shopFailed(fmt.Errorf("start: %w", errShopTaken)); !strings.Contains(got, "already exists") {
		t.Errorf("shopFailed = %q", got)
	}
	if got := shopFailed(errors.New("go: not found")); got != "ShopLite could not be built" {
		t.Errorf("shopFailed of a build error = %q", got)
	}
}
