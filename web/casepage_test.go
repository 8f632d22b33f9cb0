package web_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/evidence"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/verify"
	"github.com/signoff-dev/signoff/web"
)

// casePageRig is a rig for the case page's tests (its routes are the
// web UI's own: caseRoutes).
func casePageRig(t *testing.T) *rig {
	t.Helper()
	return newRig(t)
}

// caseTask opens a task for the triager on c, records n model calls on
// it and its output, closed: one agent task's machine events.
func (r *rig) caseTask(t *testing.T, c signoff.Case, kind string, n int, evidenceType string) signoff.Task {
	t.Helper()
	ctx := context.Background()
	tr := r.actors[signoff.RoleTriager]
	tk, err := r.store.CreateTask(ctx, r.owner, signoff.TaskInput{CaseID: c.ID, Kind: kind, Role: tr.Role, AssigneeID: tr.ID, Input: json.RawMessage(`{"k":"` + kind + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		if _, err := r.store.RecordCall(ctx, tr, signoff.ModelCall{TaskID: tk.ID, Turn: i, Provider: "builtin", Evidence: evidenceType, Outcome: "ok",
			Request: json.RawMessage(`{"messages":[]}`), Response: json.RawMessage(`{"ok":true}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.store.SubmitTask(ctx, tr, signoff.Submission{TaskID: tk.ID, InputDigest: tk.InputDigest, Output: json.RawMessage(`{}`), Evidence: evidenceType, Final: true}); err != nil {
		t.Fatal(err)
	}
	return tk
}

var timelineLineRE = regexp.MustCompile(`(?s)<li data-seq="(\d+)" data-type="([^"]+)" class="line( task-group)?"(?: data-task="([^"]+)")?>(.*?)</details>\n</li>`)

// TestCaseTimelineLines: an agent task's model calls and records are one
// line that names the task and its agent; every other event is a line of
// its own with a plain summary; actors are named, their ids on hover; the
// evidence types are each event's own.
func TestCaseTimelineLines(t *testing.T) {
	t.Parallel()
	r := casePageRig(t)
	c, _ := r.report(t, "the coupon is applied twice <script>alert(1)</script>")
	tk := r.caseTask(t, c, "reproducer", 3, signoff.EvidenceReplayed)
	other := r.caseTask(t, c, "fixer", 1, signoff.EvidenceSimulated)
	b := r.visitor(t)
	b.signIn(signoff.RoleViewer)
	got := b.get("/cases/" + c.ID)
	if got.status != http.StatusOK {
		t.Fatalf("case page: %d", got.status)
	}
	tl := elementByID(got.body, "timeline")
	lines := timelineLineRE.FindAllStringSubmatch(tl, -1)
	groups := map[string]string{}
	var plain []string
	for _, m := range lines {
		if m[3] != "" {
			groups[m[4]] = m[5]
			continue
		}
		plain = append(plain, m[2])
	}
	if len(groups) != 2 || groups[tk.ID] == "" || groups[other.ID] == "" {
		t.Fatalf("task lines %v in %s", groups, tl)
	}
	g := groups[tk.ID]
	tr := r.actors[signoff.RoleTriager]
	for _, want := range []string{
		"reproducer task: 3 model calls, 1 output recorded, closed",
		`<span class="actor" title="` + tr.ID + `">` + tr.Name + `</span>`,
		`data-type="agent.call"`, `data-type="task.created"`, `data-type="task.recorded"`,
		// A task's line shows its events' own types, never one upgraded:
		// the opening is the server's (live), the calls replayed.
		`<span class="badge evidence-live">live</span> <span class="badge evidence-replayed">replayed</span> <span class="what">`,
	} {
		if !strings.Contains(g, want) {
			t.Errorf("task line lacks %s:\n%s", want, g)
		}
	}
	if strings.Count(g, `data-type="agent.call"`) != 3 {
		t.Errorf("task line holds %d model calls", strings.Count(g, `data-type="agent.call"`))
	}
	if !strings.Contains(groups[other.ID], "evidence-simulated") || strings.Contains(groups[other.ID], "evidence-replayed") {
		t.Errorf("the fixer task's badges: %s", groups[other.ID])
	}
	if strings.Join(plain, " ") != "case.created report.received" {
		t.Errorf("lines of their own: %v", plain)
	}
	for _, want := range []string{"opened as received: the coupon is applied twice &lt;script&gt;", "the public report form", "the report arrived through the airlock"} {
		if !strings.Contains(tl, want) {
			t.Errorf("timeline lacks %q", want)
		}
	}
	if strings.Contains(tl, "<script>alert") || strings.Contains(tl, "Payload of event") && !strings.Contains(tl, `class="json"`) {
		t.Error("reporter text unescaped, or payloads gone")
	}
	// No line reads by an id where a name is known.
	if regexp.MustCompile(`class="actor" title="[^"]+">act_`).MatchString(tl) {
		t.Errorf("an actor shown by id: %s", tl)
	}
	if !strings.Contains(got.body, `<script src="/static/case.js" defer></script>`) {
		t.Error("the case page does not load case.js")
	}
}

// caseBundle writes a real, signed verification bundle as the server
// would (evidence.WriteBundle under the store's key) and stores it for a
// candidate of c.
func (r *rig) caseBundle(t *testing.T, c signoff.Case) (string, ed25519.PublicKey) {
	t.Helper()
	h := verify.Harness{Base: strings.Repeat("1", 40), TestsFrom: strings.Repeat("2", 40), TestFiles: []string{"cart/coupon_repro_test.go"},
		Command: []string{"go", "test", "-json", "./..."}, Format: verify.FormatGoTestJSON,
		FailToPass: []string{"TestCouponAppliesOnce"}, PassToPass: []string{"TestZeroCoupon"}, ExpectedFailure: "8100", TimeoutSeconds: 60, Runs: 1}
	raw, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"cart/coupon_repro_test.go": []byte("package cart\n")}
	hd, err := verify.DigestHarness(h, files)
	if err != nil {
		t.Fatal(err)
	}
	run := func(name, outcome string) verify.Stage {
		stdout := []byte(fmt.Sprintf(`{"Action":"%s","Package":"example.com/shop/cart","Test":"TestCouponAppliesOnce","Output":"x"}`+"\n", outcome))
		return verify.Stage{Name: name, Run: 1, Outcome: outcome, Detail: name, DurationMS: 10,
			Runner: &verify.RunSummary{Backend: "bwrap", Isolated: true, Limits: sandbox.Limits{WallTime: 60e9}, ExitCode: 1, DurationMS: 10,
				RunnerDigest: "r", StdoutSHA256: verify.SHA256(stdout), StderrSHA256: verify.SHA256(nil)},
			Tests:  []verify.TestOutcome{{Name: "TestCouponAppliesOnce", Kind: verify.FailToPass, Outcome: verify.Fail}},
			Stdout: stdout, Stderr: []byte{}}
	}
	cand := run(verify.StageCandidate, verify.Passed)
	cand.Witness = &verify.WitnessCheck{Applied: true, Instrumented: 1, Checked: 1}
	rep := verify.Report{Base: h.Base, Candidate: strings.Repeat("3", 40), CandidateRev: "fix", HarnessDigest: hd, RunnerDigest: "r", Runs: 1,
		Environment: verify.Environment{GoVersion: "go1.26", GOOS: "linux", GOARCH: "amd64", Sandbox: "bwrap", Isolated: true},
		Changed:     []string{"cart/cart.go"}, HarnessEdits: []string{}, TestFiles: files, Protected: h.ProtectedGlobs(), BuildChanges: h.BuildPolicy(), Cache: "layered",
		Stages: []verify.Stage{{Name: verify.StageDiff, Outcome: verify.OK, Detail: "1 file changed"}, run(verify.StageBase, verify.Reproduced), cand}}
	rep.Verdict = verify.Decide(rep.Stages)
	if rep.Fingerprint, err = verify.Fingerprint(rep.Identity()); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := evidence.WriteBundle(dir, rep, raw, r.store.Signer(), false); err != nil {
		t.Fatal(err)
	}
	archive, err := evidence.Pack(dir)
	if err != nil {
		t.Fatal(err)
	}
	candID := signoff.NewID(signoff.PrefixCandidate)
	if _, err := r.store.PutEvidence(context.Background(), signoff.SystemActor(r.ws.ID), c.ID, candID, archive); err != nil {
		t.Fatal(err)
	}
	return candID, r.store.Signer().Public().(ed25519.PublicKey)
}

// unpackBundle unpacks a downloaded bundle as a person would before
// `signoff evidence verify DIR`.
func unpackBundle(t *testing.T, archive []byte) string {
	t.Helper()
	dir := t.TempDir()
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return dir
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("entry %q escapes", hdr.Name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCaseEvidenceDownload: the bundle the page offers downloads as a
// gzip'd tar attachment that the evidence verifier accepts under the
// server's key; a reporter, another workspace and a signed-out browser get
// nothing.
func TestCaseEvidenceDownload(t *testing.T) {
	t.Parallel()
	r := casePageRig(t)
	c, _ := r.report(t, "the basket total is wrong")
	candID, pub := r.caseBundle(t, c)
	path := "/cases/" + c.ID + "/candidates/" + candID + "/evidence"
	for _, role := range []signoff.Role{signoff.RoleOwner, signoff.RoleViewer} {
		b := r.visitor(t)
		b.signIn(role)
		got := b.get(path)
		if got.status != http.StatusOK || got.header.Get("Content-Type") != "application/gzip" ||
			got.header.Get("Content-Disposition") != `attachment; filename="evidence-`+candID+`.tar.gz"` {
			t.Fatalf("%s: %d %q %q", role, got.status, got.header.Get("Content-Type"), got.header.Get("Content-Disposition"))
		}
		assertSecurityHeaders(t, "download", got.header)
		f, err := evidence.VerifyBundle(unpackBundle(t, []byte(got.body)), []ed25519.PublicKey{pub})
		if err != nil || !f.OK() {
			t.Fatalf("%s: the downloaded bundle does not verify: %v\n%s", role, err, f)
		}
		if len(f.With(evidence.StatusFailed)) != 0 || !strings.Contains(f.String(), "signature") {
			t.Fatalf("%s: findings %s", role, f)
		}
		// A byte changed is caught by the same verifier: the test can fail.
		bad := []byte(got.body)
		dir := unpackBundle(t, bad)
		if err := os.WriteFile(filepath.Join(dir, "harness.json"), []byte(`{"tampered":true}`), 0o644); err != nil {
			t.Fatal(err)
		}
		if f, err := evidence.VerifyBundle(dir, []ed25519.PublicKey{pub}); err == nil && f.OK() {
			t.Fatal("a tampered bundle verifies")
		}
	}
	// Nothing for a browser without a session, nor across workspaces.
	if got := r.visitor(t).get(path); got.status != http.StatusSeeOther || got.body != "" && strings.Contains(got.body, "harness") {
		t.Errorf("signed out: %d", got.status)
	}
	other := newRigOn(t, r.store, r.clock, rigOptions{})
	ob := other.visitor(t)
	ob.signIn(signoff.RoleOwner)
	ob.r = r // same server, the other workspace's session cookie is for r.srv's host
	if got := ob.get(path); got.status == http.StatusOK {
		t.Errorf("another workspace's owner downloads the bundle")
	}
	b := r.visitor(t)
	b.signIn(signoff.RoleViewer)
	if got := b.get("/cases/" + c.ID + "/candidates/cand_nope/evidence"); got.status != http.StatusNotFound {
		t.Errorf("a malformed candidate: %d", got.status)
	}
}

// TestCaseMergeRefusals: the merge form's refusals are shown on the case
// page and merge nothing: a page of another version (stale), a viewer, a
// form without its CSRF token. A viewer is offered no merge form at all.
func TestCaseMergeRefusals(t *testing.T) {
	t.Parallel()
	r := casePageRig(t)
	c := r.bugWithEvidence(t)
	ctx := context.Background()
	path := "/cases/" + c.ID + "/merge"
	merged := func() bool {
		l, err := r.store.GetLoop(ctx, r.owner, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		return l.State.Merge != nil
	}
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	csrf := op.csrf("/cases/" + c.ID)
	// The bug section names who proposed, submitted and reviewed, ids on hover.
	tr, opr := r.actors[signoff.RoleTriager], r.actors[signoff.RoleOperator]
	cands := elementByID(op.get("/cases/"+c.ID).body, "candidates")
	if !strings.Contains(cands, `by <span class="actor" title="`+tr.ID+`">`+tr.Name+`</span> (triager)`) {
		t.Errorf("the candidate does not name its submitter: %s", cands)
	}
	if h := elementByID(op.get("/cases/"+c.ID).body, "reproduction"); !strings.Contains(h, "("+opr.Name+")") || !strings.Contains(h, `title="`+tr.ID+`">`+tr.Name) {
		t.Errorf("the reproduction does not name its proposer and reviewer: %s", h)
	}
	// A stale page: the case moved since it was shown.
	got := op.post(path, url.Values{"csrf": {csrf}, "version": {fmt.Sprint(c.Version - 1 + 100)}, "candidate": {"cand_1"}, "subject_digest": {"x"}})
	refused := elementByID(got.body, "merge-refused")
	if got.status != http.StatusConflict || !strings.Contains(refused, "Nothing was merged: the case changed since you loaded the page") || !strings.Contains(got.body, `id="case-title"`) {
		t.Fatalf("stale page: %d %s", got.status, refused)
	}
	// The current version, but the case is not approved: the desk says so.
	cur, err := r.store.GetCase(ctx, r.owner, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	got = op.post(path, url.Values{"csrf": {csrf}, "version": {fmt.Sprint(cur.Version)}, "candidate": {"cand_1"}, "subject_digest": {"x"}})
	if refused := elementByID(got.body, "merge-refused"); got.status != http.StatusConflict || !strings.Contains(refused, "there is no card to approve") {
		t.Fatalf("not approved: %d %s", got.status, refused)
	}
	// A viewer: no form on the page, and a forged post is refused.
	v := r.visitor(t)
	v.signIn(signoff.RoleViewer)
	page := v.get("/cases/" + c.ID)
	if strings.Contains(page.body, `id="merge-form"`) {
		t.Fatal("a viewer is offered the merge form")
	}
	vcsrf := csrfFieldRE.FindStringSubmatch(page.body)[1]
	got = v.post(path, url.Values{"csrf": {vcsrf}, "version": {fmt.Sprint(cur.Version)}, "candidate": {"cand_1"}, "subject_digest": {"x"}})
	if got.status/100 != 4 || elementByID(got.body, "merge-refused") == "" {
		t.Fatalf("viewer: %d %s", got.status, elementByID(got.body, "merge-refused"))
	}
	// Without the CSRF token: 403, the error page.
	if got := op.post(path, url.Values{"version": {fmt.Sprint(cur.Version)}}); got.status != http.StatusForbidden {
		t.Fatalf("no csrf: %d", got.status)
	}
	if merged() {
		t.Fatal("a refused merge merged")
	}
}

// TestCaseEventsStream: the case's live stream sends the events after the
// page's last one, with their timeline line (names, summaries, the task),
// marks a state change "moved", keeps other cases' events out, and refuses
// another workspace and a signed-out browser.
func TestCaseEventsStream(t *testing.T) {
	t.Parallel()
	r := casePageRig(t)
	ctx := context.Background()
	c, _ := r.report(t, "checkout fails")
	noise, _ := r.report(t, "another case")
	evs, err := r.store.ListEvents(ctx, r.owner, c.ID, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1].Seq
	b := r.visitor(t)
	b.signIn(signoff.RoleViewer)
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", fmt.Sprintf("%s/cases/%s/events?after=%d", r.srv.URL, c.ID, last), nil)
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	assertSecurityHeaders(t, "case stream", res.Header)
	tk := r.caseTask(t, c, "reproducer", 1, signoff.EvidenceReplayed)
	if _, _, err := r.store.TransitionCase(ctx, r.owner, noise.ID, signoff.TransitionInput{Command: "start_triage"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.store.TransitionCase(ctx, r.owner, c.ID, signoff.TransitionInput{Command: "start_triage"}); err != nil {
		t.Fatal(err)
	}
	type event struct {
		id, name string
		data     map[string]any
	}
	sc := bufio.NewScanner(res.Body)
	var got []event
	var e event
	for len(got) == 0 || got[len(got)-1].name != "moved" {
		if !sc.Scan() {
			t.Fatalf("the stream ended after %+v", got)
		}
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			e.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			e.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &e.data); err != nil {
				t.Fatal(err)
			}
		case line == "" && e.name != "":
			got = append(got, e)
			e = event{}
		}
	}
	tr := r.actors[signoff.RoleTriager]
	var calls, moved int
	for _, e := range got {
		if e.data["seq"].(float64) <= float64(last) || e.id != fmt.Sprint(e.data["seq"]) {
			t.Fatalf("event %+v: not after %d, or its id is not its seq", e, last)
		}
		switch e.data["type"] {
		case "agent.call":
			calls++
			if e.data["task"] != tk.ID || e.data["actor"] != tr.Name || e.data["actor_id"] != tr.ID || e.data["evidence"] != "replayed" || e.name != "event" {
				t.Errorf("model call: %+v", e)
			}
		case "case.transitioned":
			moved++
			if e.name != "moved" || e.data["state"] != "triaging" || !strings.Contains(e.data["summary"].(string), "moved from received to triaging") {
				t.Errorf("transition: %+v", e)
			}
		}
	}
	if calls != 1 || moved != 1 {
		t.Fatalf("calls %d, moves %d in %+v", calls, moved, got)
	}
	// Another workspace's person and a signed-out browser get no stream.
	other := newRigOn(t, r.store, r.clock, rigOptions{})
	ob := other.visitor(t)
	ob.signIn(signoff.RoleOwner)
	ob.r = r
	if got := ob.get("/cases/" + c.ID + "/events"); got.status != http.StatusNotFound {
		t.Errorf("another workspace: %d", got.status)
	}
	if got := r.visitor(t).get("/cases/" + c.ID + "/events"); got.status != http.StatusUnauthorized {
		t.Errorf("signed out: %d", got.status)
	}
	if got := b.get("/cases/" + c.ID + "/events?after=-1"); got.status != http.StatusUnprocessableEntity {
		t.Errorf("a bad start: %d", got.status)
	}
}

// TestCaseEventsPath: the case stream's path, which web.go exempts from a
// request's deadline like the desk's stream.
func TestCaseEventsPath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{"/cases/case_1/events": true, "/cases//events": false, "/cases/a/b/events": false, "/cases/case_1": false, "/desk/events": false} {
		if web.IsCaseEventsPath(p) != want {
			t.Errorf("%s: %v", p, !want)
		}
	}
}

// TestCaseHarnessPageNames: the reproduction review page names who
// proposed the test, its id on hover.
func TestCaseHarnessPageNames(t *testing.T) {
	t.Parallel()
	r := casePageRig(t)
	tr := r.actors[signoff.RoleOperator]
	c, _ := r.riggedRepro(t, tr)
	b := r.visitor(t)
	b.signIn(signoff.RoleViewer)
	got := b.get("/cases/" + c.ID + "/harness")
	if got.status != http.StatusOK || !strings.Contains(got.body, `by <span class="actor" title="`+tr.ID+`">`+tr.Name+`</span> (round`) {
		t.Fatalf("harness page: %d, proposer not named", got.status)
	}
}
