package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/web"
)

// Attacks on the case page, the desk, sign-in and the tracking page
// through real HTTP, each kept as a regression test of its fix.

// webAttackHidden are characters that hide or reorder text: a right-to-left
// override, a left-to-right isolate, a zero-width space and a tag
// character (outside the BMP).
const webAttackHidden = "\u202e\u2066\u200b\U000E0041"

// TestWebAttackTimelineHiddenCharacters: an agent's note (here an attention
// request; hand-off reasons and call outcomes are the same) carries bidi
// overrides and invisible characters. The timeline line, its payload and
// the live stream's summary show each as a visible mark, never raw: an
// unterminated override would otherwise reverse the rest of the line,
// "by <actor>" and the time included.
func TestWebAttackTimelineHiddenCharacters(t *testing.T) {
	t.Parallel()
	r := casePageRig(t)
	ctx := context.Background()
	c, _ := r.report(t, "checkout fails")
	r.caseTask(t, c, "triage", 1, signoff.EvidenceReplayed) // the agent holds a task on the case
	evs, err := r.store.ListEvents(ctx, r.owner, c.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1].Seq
	note := "all checks passed " + webAttackHidden + "devorppa"
	if _, err := r.store.RequestAttention(ctx, r.actors[signoff.RoleTriager], c.ID, note); err != nil {
		t.Fatal(err)
	}
	b := r.visitor(t)
	b.signIn(signoff.RoleViewer)
	got := b.get("/cases/" + c.ID)
	if got.status != http.StatusOK {
		t.Fatalf("case page: %d", got.status)
	}
	tl := html.UnescapeString(elementByID(got.body, "timeline"))
	if !strings.Contains(tl, "devorppa") {
		t.Fatalf("the note is not on the timeline: %s", tl)
	}
	for _, ch := range webAttackHidden {
		if strings.ContainsRune(tl, ch) {
			t.Errorf("the timeline holds %U raw", ch)
		}
	}
	for _, mark := range []string{"U+202E", "U+2066", "U+200B", "U+E0041"} {
		if !strings.Contains(tl, mark) {
			t.Errorf("the summary does not mark %s", mark)
		}
	}
	// The payload stays the same JSON value: the characters escaped.
	if !strings.Contains(tl, `\u202e\u2066\u200b\udb40\udc41devorppa`) {
		t.Errorf("the payload does not escape the hidden characters: %s", tl)
	}

	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", fmt.Sprintf("%s/cases/%s/events?after=%d", r.srv.URL, c.ID, last), nil)
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var d struct{ Type, Summary string }
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatal(err)
		}
		if d.Type != "case.attention" {
			continue
		}
		if strings.ContainsAny(d.Summary, webAttackHidden) || !strings.Contains(d.Summary, "U+202E") {
			t.Errorf("stream summary %q", d.Summary)
		}
		return
	}
	t.Fatal("the stream ended without the attention event")
}

// TestWebAttackApprovalKeyCommand: the approval key path the server is
// configured with is printed in the approve command people paste into a
// shell (the waiting-on line and the approval page). A path with spaces,
// quotes or $(...) must reach signoff as one argument and run nothing:
// the command is run here through sh with a stand-in signoff that prints
// its arguments.
func TestWebAttackApprovalKeyCommand(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	stub := filepath.Join(dir, "signoff")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"/keys/$(touch " + pwned + ")/it's my key", "~/my keys/`touch " + pwned + "`.key", "/etc/signoff/ana.key"} {
		r := newRig(t, rigOptions{opts: web.Options{ApprovalKey: key}})
		c, _ := r.changeAwaitingApproval(t)
		b := r.visitor(t)
		b.signIn(signoff.RoleOperator)
		for page, id := range map[string]string{"/cases/" + c.ID: "waiting-command", "/cases/" + c.ID + "/approval": "approve-command"} {
			cmd := textOf(elementByID(b.get(page).body, id))
			if cmd == "" {
				t.Fatalf("%s: no #%s", page, id)
			}
			run := exec.Command(sh, "-c", cmd)
			run.Env = []string{"PATH=" + dir + ":/usr/bin:/bin", "HOME=/home/ana"}
			out, err := run.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %q: %v %s", page, cmd, err, out)
			}
			if _, err := os.Stat(pwned); err == nil {
				t.Fatalf("%s: the command %q ran what the key path holds", page, cmd)
			}
			want := key
			if rest, ok := strings.CutPrefix(key, "~/"); ok {
				want = "/home/ana/" + rest
			}
			args := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if got := args[len(args)-1]; got != want || len(args) != 5 {
				t.Errorf("%s: %q gave the arguments %q, want the key %q last of 5", page, cmd, args, want)
			}
		}
	}
}

// webAttackCountingStore counts the reads of the workspace's actors.
type webAttackCountingStore struct {
	*sqlstore.DB
	actorReads atomic.Int64
}

func (s *webAttackCountingStore) ListActors(ctx context.Context, ws string) ([]signoff.Actor, error) {
	s.actorReads.Add(1)
	return s.DB.ListActors(ctx, ws)
}

// TestWebAttackCaseStreamNameReads: events by an id that is no actor (the
// CLI with database access) do not make an open case stream read every
// actor of the workspace once per event (a few hundred events, times
// every open stream, on each poll).
func TestWebAttackCaseStreamNameReads(t *testing.T) {
	t.Parallel()
	r := casePageRig(t)
	ctx := context.Background()
	counting := &webAttackCountingStore{DB: r.store}
	srv := httptest.NewServer(web.New(web.Options{Store: counting, Now: r.clock.Now, EventPoll: 20 * time.Millisecond}))
	t.Cleanup(srv.Close)
	rc := *r
	rc.srv = srv
	c, _ := r.report(t, "checkout fails")
	b := rc.visitor(t)
	b.signIn(signoff.RoleViewer)
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", srv.URL+"/cases/"+c.ID+"/events", nil)
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	const n = 60
	cli := signoff.CLIActor(r.ws.ID)
	for i := range n {
		if _, err := r.store.RequestAttention(ctx, cli, c.ID, fmt.Sprintf("note %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	sc := bufio.NewScanner(res.Body)
	seen := 0
	for seen < n && sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			seen++
		}
	}
	if seen < n {
		t.Fatalf("the stream ended after %d events", seen)
	}
	if reads := counting.actorReads.Load(); reads > 3 {
		t.Errorf("%d events by the CLI read the actors %d times", n, reads)
	}
}

// TestWebAttackCookiesSecureBehindTLSProxy: behind a proxy that ends TLS
// (Options.PublicURL https://...) the server sees plain HTTP, yet every
// cookie it sets must be Secure: a session cookie without it is sent in
// the clear to any http:// URL of the host an attacker on the network
// sends the browser to.
func TestWebAttackCookiesSecureBehindTLSProxy(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{opts: web.Options{PublicURL: "https://signoff.example.com"}})
	b := r.visitor(t)
	login := b.get("/login?next=/desk%3Fkind%3Dbug")
	got := b.post("/login", url.Values{"csrf": {b.csrf("/login")}, "token": {r.tokens[signoff.RoleOperator]}})
	if got.status != http.StatusSeeOther {
		t.Fatalf("sign in: %d", got.status)
	}
	out := b.post("/logout", url.Values{"csrf": {b.csrf("/desk")}})
	var names []string
	for _, res := range []served{login, got, out} {
		for _, line := range res.header.Values("Set-Cookie") {
			c, err := http.ParseSetCookie(line)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, c.Name)
			if !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode {
				t.Errorf("cookie %s: Secure=%v HttpOnly=%v SameSite=%v", c.Name, c.Secure, c.HttpOnly, c.SameSite)
			}
		}
	}
	for _, want := range []string{web.SessionCookie, web.CSRFCookie, "signoff_next"} {
		if !slices.Contains(names, want) {
			t.Errorf("no %s cookie was set (%v)", want, names)
		}
	}
}

// TestWebAttackDeskTitleHidden: a case title with a right-to-left
// override (titles are checked for controls only) shows the override as a
// mark on the desk, in the list and in a live row.
func TestWebAttackDeskTitleHidden(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	by := r.actors[signoff.RoleTriager]
	c, err := r.store.CreateCase(ctx, by, signoff.CaseInput{ProjectID: r.proj.ID, Kind: signoff.KindBug, Title: "refund \u202eevil"})
	if err != nil {
		if c, err = r.store.CreateCase(ctx, r.owner, signoff.CaseInput{ProjectID: r.proj.ID, Kind: signoff.KindBug, Title: "refund \u202eevil"}); err != nil {
			t.Fatal(err)
		}
	}
	b := r.visitor(t)
	b.signIn(signoff.RoleViewer)
	for _, page := range []string{"/desk", "/desk/rows/" + c.ID} {
		got := b.get(page)
		if got.status != http.StatusOK {
			t.Fatalf("%s: %d", page, got.status)
		}
		body := html.UnescapeString(got.body)
		if strings.ContainsRune(body, '\u202e') || !strings.Contains(body, "refund ⟨U+202E⟩evil") {
			t.Errorf("%s shows the override raw or unmarked", page)
		}
	}
}
