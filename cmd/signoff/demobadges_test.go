package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// badgesEvidence is the evidence type an event's payload names, as the
// web's timeline reads it: the payload's "evidence" string, or live.
func badgesEvidence(p json.RawMessage) string {
	var v struct {
		Evidence json.RawMessage `json:"evidence"`
	}
	var s string
	if json.Unmarshal(p, &v) != nil || len(v.Evidence) == 0 || json.Unmarshal(v.Evidence, &s) != nil {
		return signoff.EvidenceLive
	}
	return s
}

// badgesWalked is what a walk left in dir's database: its workspace's
// events of the given cases, and which actors are people.
type badgesWalked struct {
	s      *sqlstore.DB
	ws     string
	owner  signoff.Actor
	events []signoff.Event
	human  map[string]bool
}

func badgesOpen(t *testing.T, dir string, caseIDs []string) *badgesWalked {
	t.Helper()
	ctx := context.Background()
	key, err := keys.Load(filepath.Join(dir, "signoff.key"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(ctx, filepath.Join(dir, "signoff.db"), sqlstore.Options{Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	wss, err := s.ListWorkspaces(ctx)
	if err != nil || len(wss) != 1 {
		t.Fatalf("workspaces: %v %v", wss, err)
	}
	w := &badgesWalked{s: s, ws: wss[0].ID, human: map[string]bool{}}
	as, err := s.ListActors(ctx, w.ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		w.human[a.ID] = a.Role.IsHuman()
		if a.Role == signoff.RoleOwner {
			w.owner = a
		}
	}
	for _, id := range caseIDs {
		evs, err := s.ListEvents(ctx, signoff.SystemActor(w.ws), id, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		w.events = append(w.events, evs...)
	}
	if len(w.events) == 0 {
		t.Fatal("the walk's cases have no events")
	}
	return w
}

// checkHonest checks every event of the walk: the people the walk plays
// (the demo's owner and operator, the public intake's reporter, the
// reporter's tracking link) are simulated; agents and the server keep
// the evidence they had, never simulated. simulated and live name event
// types that must be there with that evidence.
func (w *badgesWalked) checkHonest(t *testing.T, simulated, live []string) {
	t.Helper()
	seen := map[string]map[string]bool{}
	for _, e := range w.events {
		ev := badgesEvidence(e.Payload)
		person := w.human[e.ActorID] || e.ActorID == sqlstore.IntakeActor || strings.HasPrefix(e.ActorID, signoff.PrefixTracking+"_")
		if person != (ev == signoff.EvidenceSimulated) {
			t.Errorf("event %d %s by %s is %s (a person the walk plays: %v)", e.Seq, e.Type, e.ActorID, ev, person)
		}
		if seen[e.Type] == nil {
			seen[e.Type] = map[string]bool{}
		}
		seen[e.Type][ev] = true
	}
	for _, typ := range simulated {
		if !seen[typ][signoff.EvidenceSimulated] || len(seen[typ]) != 1 {
			t.Errorf("%s events: %v, want simulated only", typ, seen[typ])
		}
	}
	for _, typ := range live {
		if len(seen[typ]) == 0 || seen[typ][signoff.EvidenceSimulated] {
			t.Errorf("%s events: %v, want some and none simulated", typ, seen[typ])
		}
	}
}

// badgeRE finds a timeline entry and the first badge after it.
var badgeRE = regexp.MustCompile(`data-seq="(\d+)"[^>]*>[\s\S]*?class="badge evidence-([a-z]+)"`)

// checkPage renders the case's page on the desk (the real web UI over
// the walk's database, signed in with a new owner token) and checks that
// each timeline entry of the want types carries the same badge as its
// payload's evidence, and that entries of each type are on the page.
func (w *badgesWalked) checkPage(t *testing.T, caseID string, want ...string) {
	t.Helper()
	ctx := context.Background()
	_, token, err := w.s.CreateToken(ctx, signoff.CLIActor(w.ws), w.owner.ID, "badges test", nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
	st, err := newStack(e, w.s, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler(w.s, slog.New(slog.DiscardHandler), st))
	defer srv.Close()
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	get := func(path string) string {
		t.Helper()
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", path, resp.StatusCode)
		}
		return string(b)
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(get("/login"))
	if csrf == nil {
		t.Fatal("no csrf field on the sign-in page")
	}
	req, _ := http.NewRequest("POST", srv.URL+"/login", strings.NewReader(url.Values{"csrf": {csrf[1]}, "token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", srv.URL)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	page := get("/cases/" + caseID)
	badges := map[string]string{}
	for _, m := range badgeRE.FindAllStringSubmatch(page, -1) {
		badges[m[1]] = m[2]
	}
	found := map[string]int{}
	for _, ev := range w.events {
		if ev.CaseID != caseID || !slices.Contains(want, ev.Type) {
			continue
		}
		got, ok := badges[fmt.Sprint(ev.Seq)]
		if !ok {
			continue // folded into a group on the page
		}
		found[ev.Type]++
		if wantEv := badgesEvidence(ev.Payload); got != wantEv {
			t.Errorf("the case page badges event %d %s %s, its payload says %s", ev.Seq, ev.Type, got, wantEv)
		}
	}
	for _, typ := range want {
		if found[typ] == 0 {
			t.Errorf("the case page shows no %s entry with a badge", typ)
		}
	}
}

// badgesFreeAddr is a loopback address nothing listens on, for --addr.
func badgesFreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestDemoWalkBugBadges runs `signoff demo --walk bug` on the --addr it
// is given and checks that the case's timeline is honest: the report,
// the reporter's answers, the staff review, the approval and the merge,
// which the walk plays, are simulated in the ledger and on the case
// page; triage, reproduction runs, verification and the release, which
// ran here, are not; and the walk says where to open the case on the
// desk.
func TestDemoWalkBugBadges(t *testing.T) {
	needLoop(t)
	dir := t.TempDir()
	addr := badgesFreeAddr(t)
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	if code := run(context.Background(), e, []string{"demo", "--walk", "bug", "--dir", dir, "--addr", addr}); code != 0 {
		t.Fatalf("demo --walk bug exited %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	text := out.String()
	m := regexp.MustCompile(`case +http://` + regexp.QuoteMeta(addr) + `/cases/(case_[0-9a-z]+)`).FindStringSubmatch(text)
	if m == nil || !strings.Contains(text, "signoff serve --db "+filepath.Join(dir, "signoff.db")+" --addr "+addr) ||
		!strings.Contains(text, "http://"+addr+"/login/") || !strings.Contains(text, "final: verified") {
		t.Fatalf("the walk does not say how to open its case at %s:\n%s", addr, text)
	}
	if strings.Contains(errb.String(), "http request") {
		t.Errorf("access lines in the terminal:\n%s", errb.String())
	}
	w := badgesOpen(t, dir, []string{m[1]})
	w.checkHonest(t,
		[]string{"case.created", "report.received", "reporter.decided", "harness.reviewed", "approval.recorded", "merge.recorded"},
		[]string{"triage.started", "triage.updated", "reproduction.proposed", "verification.completed", "release.smoke", "candidate.submitted"})
	w.checkPage(t, m[1], "report.received", "approval.recorded", "merge.recorded", "verification.completed")
}
