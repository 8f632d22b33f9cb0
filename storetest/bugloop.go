package storetest

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/workflow"
)

// testBugLoop runs the bug loop's storage tests, each on its own store.
func testBugLoop(t *testing.T, b Backend) {
	for _, tt := range []struct {
		name string
		fn   func(*testing.T, Backend)
	}{
		{"RepoSettings", testRepoSettings},
		{"RepoSettingsValidation", testRepoSettingsValidation},
		{"LoopCreateAndUpdate", testLoopCreateAndUpdate},
		{"LoopWhoMayAdvance", testLoopWhoMayAdvance},
		{"LoopAtomicRefusals", testLoopAtomicRefusals},
		{"LoopFullPath", testLoopFullPath},
		{"LoopJobs", testLoopJobs},
		{"LoopConcurrent", testLoopConcurrent},
		{"ApprovalConsume", testApprovalConsume},
		{"ApprovalRecordRules", testApprovalRecordRules},
		{"ApprovalSupersede", testApprovalSupersede},
		{"ApproverKeys", testApproverKeys},
		{"Deployments", testDeployments},
		{"ResolveTracking", testResolveTracking},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, b)
		})
	}
}

func newWebhookSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

func validSettings() signoff.RepoSettings {
	return signoff.RepoSettings{Path: "/srv/signoff/shoplite", FixPaths: []string{"cart/**"},
		Smoke: []signoff.SmokeCheck{{Name: "health", Method: "GET", Path: "/healthz"}}}
}

// testRepoSettings: a round trip fills defaults, the webhook secret is
// write-only and kept when a later write leaves it empty, and only owners
// (and the server) write.
func testRepoSettings(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	viewer := tb.actor(t, "vi", signoff.RoleViewer)
	fixer := tb.actor(t, "fix", signoff.RoleFixer)
	op := tb.actor(t, "op", signoff.RoleOperator)
	rep := tb.actor(t, "rep", signoff.RoleReporter)
	sys := signoff.SystemActor(tb.ws.ID)

	_, err := s.GetRepoSettings(ctx, tb.owner, tb.proj.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	_, _, err = s.WebhookSecret(ctx, tb.proj.ID)
	wantCode(t, err, signoff.ENOTFOUND)

	secret := newWebhookSecret()
	in := validSettings()
	in.WebhookSecret, in.HasWebhookSecret = secret, false
	got, err := s.SetRepoSettings(ctx, signoff.CLIActor(tb.ws.ID), tb.proj.ID, in)
	if err != nil {
		t.Fatal(err)
	}
	if got.WebhookSecret != "" || !got.HasWebhookSecret || got.MainBranch != "main" || got.Quorum != 1 || got.MaxFixAttempts != 2 ||
		got.ApprovalTTLHours != signoff.DefaultApprovalTTLHours || got.TestFormat != "go-test-json" || len(got.HarnessPaths) != 0 || got.HarnessPaths == nil {
		t.Fatalf("set returned %+v", got)
	}
	for _, by := range []signoff.Actor{tb.owner, viewer, fixer, op, sys} {
		r, err := s.GetRepoSettings(ctx, by, tb.proj.ID)
		if err != nil {
			t.Fatalf("get as %s: %v", by.Role, err)
		}
		if r.WebhookSecret != "" || !r.HasWebhookSecret || r.Path != in.Path || r.FixPaths[0] != "cart/**" || r.Smoke[0].Path != "/healthz" {
			t.Fatalf("get as %s: %+v", by.Role, r)
		}
	}
	_, err = s.GetRepoSettings(ctx, rep, tb.proj.ID)
	wantCode(t, err, signoff.EFORBIDDEN)
	ws, sec, err := s.WebhookSecret(ctx, tb.proj.ID)
	if err != nil || ws != tb.ws.ID || sec != secret {
		t.Fatalf("WebhookSecret = %s %q %v", ws, sec, err)
	}

	// An empty secret keeps the stored one; the server may write too.
	in2 := validSettings()
	in2.Quorum, in2.MainBranch = 2, "release/v2"
	got, err = s.SetRepoSettings(ctx, sys, tb.proj.ID, in2)
	if err != nil {
		t.Fatal(err)
	}
	if !got.HasWebhookSecret || got.Quorum != 2 || got.MainBranch != "release/v2" {
		t.Fatalf("second set %+v", got)
	}
	if _, sec, _ := s.WebhookSecret(ctx, tb.proj.ID); sec != secret {
		t.Fatal("an empty webhook_secret replaced the stored one")
	}
	secret2 := newWebhookSecret()
	in2.WebhookSecret = secret2
	if _, err := s.SetRepoSettings(ctx, signoff.CLIActor(tb.ws.ID), tb.proj.ID, in2); err != nil {
		t.Fatal(err)
	}
	if _, sec, _ := s.WebhookSecret(ctx, tb.proj.ID); sec != secret2 {
		t.Fatal("a new webhook secret was not stored")
	}

	// Who may write.
	before := tb.head(t)
	for _, by := range []signoff.Actor{op, viewer, fixer, rep} {
		_, err := s.SetRepoSettings(ctx, by, tb.proj.ID, validSettings())
		wantCode(t, err, signoff.EFORBIDDEN)
	}
	// The repository's place on the host, its clone URL and the deploy
	// hook are the server operator's: an owner over the API cannot move
	// them, only keep them.
	for name, mod := range map[string]func(*signoff.RepoSettings){
		"path":        func(r *signoff.RepoSettings) { r.Path = "/elsewhere" },
		"deploy_hook": func(r *signoff.RepoSettings) { r.DeployHook = []string{"/bin/sh", "-c", "id"} },
	} {
		cur, err := s.GetRepoSettings(ctx, tb.owner, tb.proj.ID)
		if err != nil {
			t.Fatal(err)
		}
		mod(&cur)
		_, err = s.SetRepoSettings(ctx, tb.owner, tb.proj.ID, cur)
		if signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Errorf("owner changing %s over the API: %v", name, err)
		}
	}
	// Another workspace sees no such project.
	_, otherOwner, err := s.CreateWorkspace(ctx, "Other", "bob")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.GetRepoSettings(ctx, otherOwner, tb.proj.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.SetRepoSettings(ctx, otherOwner, tb.proj.ID, validSettings())
	wantCode(t, err, signoff.ENOTFOUND)
	tb.unchanged(t, before, "refused settings")

	// A project with settings but no secret has no webhook.
	p2, err := s.CreateProject(ctx, tb.owner, signoff.ProjectInput{Name: "quiet"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetRepoSettings(ctx, signoff.CLIActor(tb.ws.ID), p2.ID, validSettings()); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.GetRepoSettings(ctx, tb.owner, p2.ID); r.HasWebhookSecret {
		t.Fatal("HasWebhookSecret without a secret")
	}
	for _, id := range []string{p2.ID, "prj_bogus", signoff.NewID(signoff.PrefixProject)} {
		_, _, err = s.WebhookSecret(ctx, id)
		wantCode(t, err, signoff.ENOTFOUND)
	}

	// The secret is in neither the settings column nor the ledger.
	var stored string
	if err := s.SQL().QueryRowContext(ctx, `SELECT settings FROM repo_settings WHERE project_id = $1`, tb.proj.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, "whsec_") {
		t.Fatalf("settings column holds the secret: %s", stored)
	}
	evs := tb.eventsOf(t, "project.repo_settings")
	if len(evs) != 4 {
		t.Fatalf("%d settings events, want 4", len(evs))
	}
	changed := []bool{true, false, true, false}
	for i, e := range evs {
		if strings.Contains(string(e.Payload), "whsec_") {
			t.Fatalf("ledger holds the secret: %s", e.Payload)
		}
		if payloadOf(t, e)["webhook_secret_changed"] != changed[i] {
			t.Fatalf("event %d: %s", i, e.Payload)
		}
	}
	tb.verify(t)
}

// testRepoSettingsValidation: each bad field is refused with EINVALID and
// nothing is written.
func testRepoSettingsValidation(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx := tb.store, tb.ctx
	short := "whsec_" + base64.StdEncoding.EncodeToString(make([]byte, 16))
	cases := []struct {
		name string
		edit func(*signoff.RepoSettings)
		msg  string
	}{
		{"no path", func(r *signoff.RepoSettings) { r.Path = "" }, "path is required"},
		{"relative path", func(r *signoff.RepoSettings) { r.Path = "srv/repo" }, "absolute"},
		{"NUL in path", func(r *signoff.RepoSettings) { r.Path = "/srv/\x00repo" }, "control"},
		{"option branch", func(r *signoff.RepoSettings) { r.MainBranch = "-f" }, "main_branch"},
		{"dotdot branch", func(r *signoff.RepoSettings) { r.MainBranch = "a..b" }, "main_branch"},
		{"lock branch", func(r *signoff.RepoSettings) { r.MainBranch = "main.lock" }, "main_branch"},
		{"space branch", func(r *signoff.RepoSettings) { r.MainBranch = "my branch" }, "main_branch"},
		{"quorum high", func(r *signoff.RepoSettings) { r.Quorum = 11 }, "quorum"},
		{"quorum negative", func(r *signoff.RepoSettings) { r.Quorum = -1 }, "quorum"},
		{"ttl high", func(r *signoff.RepoSettings) { r.ApprovalTTLHours = 169 }, "approval_ttl_hours"},
		{"attempts high", func(r *signoff.RepoSettings) { r.MaxFixAttempts = 21 }, "max_fix_attempts"},
		{"confirm window high", func(r *signoff.RepoSettings) { r.ConfirmWindowHours = 8761 }, "confirm_window_hours"},
		{"smoke method", func(r *signoff.RepoSettings) { r.Smoke[0].Method = "DELETE" }, "method"},
		{"smoke relative path", func(r *signoff.RepoSettings) { r.Smoke[0].Path = "healthz" }, "path"},
		{"smoke other host", func(r *signoff.RepoSettings) { r.Smoke[0].Path = "//evil.example/x" }, "path"},
		{"smoke status", func(r *signoff.RepoSettings) { r.Smoke[0].ExpectStatus = 600 }, "expect_status"},
		{"secret prefix", func(r *signoff.RepoSettings) { r.WebhookSecret = "hunter2hunter2hunter2hunter2" }, "whsec_"},
		{"secret short", func(r *signoff.RepoSettings) { r.WebhookSecret = short }, "24 bytes"},
		{"secret not base64", func(r *signoff.RepoSettings) { r.WebhookSecret = "whsec_!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!" }, "whsec_"},
		{"fix path escapes", func(r *signoff.RepoSettings) { r.FixPaths = []string{"../etc/**"} }, "fix_paths"},
		{"clone url credentials", func(r *signoff.RepoSettings) { r.URL = "https://u:p@example.com/r.git" }, "credentials"},
		{"ssh url password", func(r *signoff.RepoSettings) { r.URL = "ssh://git:hunter2@example.com/r.git" }, "password"},
		{"live url scheme", func(r *signoff.RepoSettings) { r.LiveURL = "ftp://example.com" }, "live_url"},
		{"empty test command", func(r *signoff.RepoSettings) { r.TestCommand = []string{""} }, "test_command"},
	}
	before := tb.head(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := validSettings()
			c.edit(&in)
			_, err := s.SetRepoSettings(ctx, signoff.CLIActor(tb.ws.ID), tb.proj.ID, in)
			wantCode(t, err, signoff.EINVALID)
			if !strings.Contains(signoff.ErrorMessage(err), c.msg) {
				t.Fatalf("message %q does not mention %q", signoff.ErrorMessage(err), c.msg)
			}
		})
	}
	tb.unchanged(t, before, "invalid settings")
	in := validSettings()
	in.Smoke[0].ExpectStatus, in.URL, in.LiveURL = 204, "/srv/upstream/shoplite", "https://shop.example.com"
	if _, err := s.SetRepoSettings(ctx, signoff.CLIActor(tb.ws.ID), tb.proj.ID, in); err != nil {
		t.Fatalf("valid settings refused: %v", err)
	}
}

// loopKit drives one bug case through its loop.
type loopKit struct {
	*bundle
	sys signoff.Actor
}

func newLoopKit(t *testing.T, b Backend) *loopKit {
	tb := setup(t, b)
	return &loopKit{bundle: tb, sys: signoff.SystemActor(tb.ws.ID)}
}

// advance applies an update and fails the test on error.
func (k *loopKit) advance(t *testing.T, by signoff.Actor, u signoff.LoopUpdate) (signoff.BugLoop, signoff.Case) {
	t.Helper()
	l, c, err := k.store.AdvanceLoop(k.ctx, by, u)
	if err != nil {
		t.Fatalf("AdvanceLoop(%s, %q) as %s: %v", u.CaseID, u.Command, by.Role, err)
	}
	return l, c
}

// step moves the loop on by one command, bumping the round so the state
// changes.
func (k *loopKit) step(t *testing.T, by signoff.Actor, l signoff.BugLoop, cmd string) (signoff.BugLoop, signoff.Case) {
	t.Helper()
	st := l.State
	st.Round++
	return k.advance(t, by, signoff.LoopUpdate{CaseID: l.CaseID, Version: l.Version, State: st, Command: cmd})
}

func (k *loopKit) loop(t *testing.T, caseID string) signoff.BugLoop {
	t.Helper()
	l, err := k.store.GetLoop(k.ctx, k.owner, caseID)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// testLoopCreateAndUpdate: version 0 creates, a second create conflicts,
// updates need the current version, reads and lists by case state.
func testLoopCreateAndUpdate(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	c := k.bug(t, "")
	_, err := s.GetLoop(ctx, k.owner, c.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	_, _, err = s.AdvanceLoop(ctx, k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: 3})
	wantCode(t, err, signoff.ENOTFOUND)

	now := k.clock.Now()
	st := signoff.BugLoopState{Round: 1, Harnesses: []signoff.HarnessRecord{{ID: "har_1", Round: 1, Status: signoff.HarnessProposed,
		Spec: json.RawMessage(`{"tests": ["TestCoupon"], "b": 1}`), ProposedAt: now}}}
	l, cs := k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c.ID, State: st, MaxFixAttempts: 3})
	if l.Version != 1 || l.CaseID != c.ID || l.ProjectID != k.proj.ID || l.WorkspaceID != k.ws.ID || l.State.Round != 1 || len(l.State.Harnesses) != 1 {
		t.Fatalf("created %+v", l)
	}
	if cs.MaxFixAttempts != 3 || cs.State != workflow.BugReceived {
		t.Fatalf("case after create %+v", cs)
	}
	if got, _ := s.GetCase(ctx, k.owner, c.ID); got.MaxFixAttempts != 3 {
		t.Fatalf("max_fix_attempts not stored: %d", got.MaxFixAttempts)
	}
	got := k.loop(t, c.ID)
	if got.Version != 1 || !got.CreatedAt.Equal(now) || got.State.Harnesses[0].ID != "har_1" || got.State.Candidates == nil ||
		!got.State.Harnesses[0].ProposedAt.Equal(now) {
		t.Fatalf("read back %+v", got)
	}
	var spec map[string]any
	if err := json.Unmarshal(got.State.Harnesses[0].Spec, &spec); err != nil || spec["b"] != 1.0 {
		t.Fatalf("spec %s", got.State.Harnesses[0].Spec)
	}
	_, _, err = s.AdvanceLoop(ctx, k.sys, signoff.LoopUpdate{CaseID: c.ID, State: st})
	wantCode(t, err, signoff.ECONFLICT)

	k.clock.Advance(time.Minute)
	st.Round = 2
	l2, _ := k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: 1, State: st, Events: []signoff.LoopEvent{{Type: "harness.checked", Payload: map[string]any{"ok": true}}}})
	if l2.Version != 2 || l2.State.Round != 2 || !l2.CreatedAt.Equal(now) || !l2.UpdatedAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("updated %+v", l2)
	}
	_, _, err = s.AdvanceLoop(ctx, k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: 1, State: st})
	wantCode(t, err, signoff.ECONFLICT)
	if !strings.Contains(signoff.ErrorMessage(err), "changed since version 1") {
		t.Fatalf("stale message %q", signoff.ErrorMessage(err))
	}
	// Every update shows in the ledger, with its digest; the update's own
	// events come before it.
	ups := k.eventsOf(t, "loop.updated")
	if len(ups) != 2 || ups[0].CaseID != c.ID || payloadOf(t, ups[1])["version"] != 2.0 || len(payloadOf(t, ups[1])["state_digest"].(string)) != 64 {
		t.Fatalf("loop.updated events %+v", ups)
	}
	if hc := k.eventsOf(t, "harness.checked"); len(hc) != 1 || hc[0].Seq != ups[1].Seq-1 || hc[0].ActorID != "system" {
		t.Fatalf("harness.checked %+v", hc)
	}

	// Lists filter by the case's state.
	c2 := k.bug(t, "")
	l3, _ := k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c2.ID})
	k.step(t, k.sys, l3, "start_triage")
	for _, f := range []struct {
		states []string
		want   []string
	}{
		{nil, []string{c.ID, c2.ID}},
		{[]string{workflow.BugReceived}, []string{c.ID}},
		{[]string{workflow.BugTriaging, workflow.BugFixing}, []string{c2.ID}},
		{[]string{workflow.BugClosed}, nil},
	} {
		list, err := s.ListLoops(ctx, k.owner, k.proj.ID, f.states...)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, l := range list {
			ids = append(ids, l.CaseID)
		}
		if strings.Join(ids, ",") != strings.Join(f.want, ",") {
			t.Fatalf("ListLoops(%v) = %v, want %v", f.states, ids, f.want)
		}
	}
	_, err = s.ListLoops(ctx, k.owner, k.proj.ID, "nonsense")
	wantCode(t, err, signoff.EINVALID)

	// Change cases have no bug loop.
	ch, err := s.CreateCase(ctx, k.owner, signoff.CaseInput{ProjectID: k.proj.ID, Kind: signoff.KindChange, Title: "rename"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.AdvanceLoop(ctx, k.sys, signoff.LoopUpdate{CaseID: ch.ID})
	wantCode(t, err, signoff.EINVALID)
	k.verify(t)
}

// testLoopWhoMayAdvance: roles, reporters of other cases and other
// workspaces.
func testLoopWhoMayAdvance(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	rep := k.actor(t, "rep", signoff.RoleReporter)
	otherRep := k.actor(t, "rep2", signoff.RoleReporter)
	c := k.bug(t, rep.ID)
	l, _ := k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c.ID})
	_, otherOwner, err := s.CreateWorkspace(ctx, "Other", "bob")
	if err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		by   signoff.Actor
		code string
	}{
		{k.actor(t, "vi", signoff.RoleViewer), signoff.EFORBIDDEN},
		{k.actor(t, "tri", signoff.RoleTriager), signoff.EFORBIDDEN},
		{k.actor(t, "con", signoff.RoleConcierge), signoff.EFORBIDDEN},
		{k.actor(t, "plan", signoff.RolePlanner), signoff.EFORBIDDEN},
		{otherRep, signoff.ENOTFOUND},
		{otherOwner, signoff.ENOTFOUND},
	}
	before := k.head(t)
	for _, r := range refused {
		_, _, err := s.AdvanceLoop(ctx, r.by, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version})
		if signoff.ErrorCode(err) != r.code {
			t.Fatalf("%s (%s): %v, want %s", r.by.Name, r.by.Role, err, r.code)
		}
	}
	_, err = s.GetLoop(ctx, rep, c.ID)
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.ListLoops(ctx, rep, k.proj.ID)
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.GetLoop(ctx, otherOwner, c.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.ListLoops(ctx, otherOwner, k.proj.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	k.unchanged(t, before, "refused updates")

	allowed := []signoff.Actor{
		k.owner, k.actor(t, "op", signoff.RoleOperator), rep, signoff.CLIActor(k.ws.ID), k.sys,
		k.actor(t, "repro", signoff.RoleReproducer), k.actor(t, "fix", signoff.RoleFixer),
		k.actor(t, "rev", signoff.RoleReviewer), k.actor(t, "rec", signoff.RoleRecorder),
	}
	for _, by := range allowed {
		if by.Role.IsAgent() {
			GiveTask(t, s, k.owner, by, c.ID) // an agent writes on its open task
		}
		l, _ = k.advance(t, by, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, State: l.State})
	}
	if l.Version != int64(1+len(allowed)) {
		t.Fatalf("version %d after %d updates", l.Version, len(allowed))
	}
}

// testLoopAtomicRefusals: an update refused anywhere (the table, an agent
// sending a human command, an approval, a reserved event type) leaves the
// loop, the case, the ledger and the job queue as they were.
func testLoopAtomicRefusals(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	fixer := k.actor(t, "fix", signoff.RoleFixer)
	reviewer := k.actor(t, "rev", signoff.RoleReviewer)
	c := k.bug(t, "")
	l, _ := k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c.ID, State: signoff.BugLoopState{Round: 1}})
	l, cs := k.step(t, k.sys, l, "start_triage")
	if cs.State != workflow.BugTriaging || cs.Version != 2 || l.Version != 2 {
		t.Fatalf("after start_triage: case %s v%d, loop v%d", cs.State, cs.Version, l.Version)
	}
	next := l.State
	next.Round = 99
	withEffects := func(u signoff.LoopUpdate) signoff.LoopUpdate {
		u.CaseID, u.Version, u.State = c.ID, l.Version, next
		u.Events = []signoff.LoopEvent{{Type: "fix.started", Payload: map[string]any{"x": 1}}}
		u.Jobs = []signoff.JobRequest{{Args: signoff.FixJob{WorkspaceID: k.ws.ID, CaseID: c.ID, Round: 99, Attempt: 1}}}
		return u
	}
	refusals := []struct {
		name  string
		by    signoff.Actor
		u     signoff.LoopUpdate
		code  string
		state string
	}{
		{"not in this state", k.sys, withEffects(signoff.LoopUpdate{Command: "start_fix"}), signoff.ECONFLICT, workflow.BugTriaging},
		{"role not in the table", fixer, withEffects(signoff.LoopUpdate{Command: "ticket"}), signoff.EFORBIDDEN, ""},
		{"agent approves", fixer, withEffects(signoff.LoopUpdate{Command: "approve"}), signoff.EFORBIDDEN, ""},
		{"agent merges", reviewer, withEffects(signoff.LoopUpdate{Command: "merge"}), signoff.EFORBIDDEN, ""},
		{"agent resumes", fixer, withEffects(signoff.LoopUpdate{Command: "resume_fix"}), signoff.EFORBIDDEN, ""},
		{"agent approves a reproduction", reviewer, withEffects(signoff.LoopUpdate{Command: "approve_harness"}), signoff.EFORBIDDEN, ""},
		{"agent rejects a reproduction", fixer, withEffects(signoff.LoopUpdate{Command: "reject_harness"}), signoff.EFORBIDDEN, ""},
		{"unknown command", k.sys, withEffects(signoff.LoopUpdate{Command: "teleport"}), signoff.EINVALID, ""},
		{"unknown approval", k.sys, withEffects(signoff.LoopUpdate{Consume: []string{signoff.NewID(signoff.PrefixApproval)}}), signoff.ECONFLICT, workflow.BugTriaging},
		{"reserved event", k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Events: []signoff.LoopEvent{{Type: "case.transitioned"}}}, signoff.EINVALID, ""},
		{"forged public question", k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Events: []signoff.LoopEvent{{Type: "reporter.asked", Payload: map[string]any{"question": "Log in at evil.example/reset"}}}}, signoff.EINVALID, ""},
		{"forged reporter answer", k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Events: []signoff.LoopEvent{{Type: "reporter.answered"}}}, signoff.EINVALID, ""},
		{"stale version", k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: 1, Command: "ticket"}, signoff.ECONFLICT, workflow.BugTriaging},
		{"attempts out of range", k.sys, withEffects(signoff.LoopUpdate{MaxFixAttempts: 99}), signoff.EINVALID, ""},
		{"job without args", k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Jobs: []signoff.JobRequest{{}}}, signoff.EINVALID, ""},
		{"oversized state", k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version,
			State: signoff.BugLoopState{Candidates: []signoff.Candidate{{Diff: strings.Repeat("+", 5<<20)}}}}, signoff.EINVALID, ""},
	}
	before := k.head(t)
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			_, _, err := s.AdvanceLoop(ctx, r.by, r.u)
			wantCode(t, err, r.code)
			if r.state != "" && signoff.ErrorState(err) != r.state {
				t.Fatalf("conflict carries state %q, want %q", signoff.ErrorState(err), r.state)
			}
		})
	}
	k.unchanged(t, before, "refused updates")
	if got := k.loop(t, c.ID); got.Version != l.Version || got.State.Round != l.State.Round {
		t.Fatalf("loop moved: v%d round %d", got.Version, got.State.Round)
	}
	if got, _ := s.GetCase(ctx, k.owner, c.ID); got.State != workflow.BugTriaging || got.Version != cs.Version {
		t.Fatalf("case moved: %s v%d", got.State, got.Version)
	}
	var jobs int
	if err := s.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job WHERE kind = 'bug_fix'`).Scan(&jobs); err != nil {
		t.Fatal(err)
	}
	if jobs != 0 {
		t.Fatalf("%d jobs left by refused updates", jobs)
	}
	k.verify(t)
}

// approver is a person with a registered key.
type approver struct {
	actor signoff.Actor
	key   ed25519.PrivateKey
	keyID string
}

func newPEM(t *testing.T) (ed25519.PrivateKey, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p, err := keys.EncodePublic(pub)
	if err != nil {
		t.Fatal(err)
	}
	return priv, string(p)
}

func (k *loopKit) approver(t *testing.T, name string, role signoff.Role) approver {
	t.Helper()
	a := k.actor(t, name, role)
	priv, p := newPEM(t)
	key, err := k.store.RegisterKey(k.ctx, a, p)
	if err != nil {
		t.Fatal(err)
	}
	return approver{actor: a, key: priv, keyID: key.ID}
}

var nonceSeq struct {
	sync.Mutex
	n int
}

func nonce() string {
	nonceSeq.Lock()
	defer nonceSeq.Unlock()
	nonceSeq.n++
	b := make([]byte, 16)
	rand.Read(b)
	return fmt.Sprintf("%s%04d", hex.EncodeToString(b), nonceSeq.n)
}

func digestHex(s string) string {
	return strings.Repeat(s, 64)[:64]
}

// approval builds an approval of c by a over digest, valid for ttl from
// the store's clock. An approval of a change case names the change policy
// in force (the store refuses any other).
func (k *loopKit) approval(c signoff.Case, a approver, digest string, ttl time.Duration) signoff.Approval {
	now := k.clock.Now()
	pd := digestHex("e")
	if c.Kind == signoff.KindChange {
		if p, err := k.store.GetChangePolicy(k.ctx, signoff.SystemActor(c.WorkspaceID)); err == nil {
			pd = p.Digest
		} else if empty, err := change.Parse(nil); err == nil {
			pd = empty.Digest()
		}
	}
	return signoff.Approval{CaseID: c.ID, SubjectDigest: digest, Decision: "approve", ApproverID: a.actor.ID, KeyID: a.keyID,
		Nonce: nonce(), PolicyDigest: pd, IssuedAt: now, ExpiresAt: now.Add(ttl),
		Envelope: json.RawMessage(`{"payloadType":"application/vnd.signoff.approval+json","payload":"e30=","signatures":[]}`), Via: "cli-signed"}
}

func (k *loopKit) record(t *testing.T, by signoff.Actor, a signoff.Approval) signoff.Approval {
	t.Helper()
	got, err := k.store.RecordApproval(k.ctx, by, a)
	if err != nil {
		t.Fatalf("RecordApproval: %v", err)
	}
	return got
}

// testLoopFullPath walks a public report from intake to approval through
// AdvanceLoop: the reporter answers for their own case, and a human's
// verified approval is consumed as the case is approved.
func testLoopFullPath(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	c, _, secret, err := s.SubmitReport(ctx, signoff.ReportInput{ProjectID: k.proj.ID, Text: "the coupon is applied twice"})
	if err != nil {
		t.Fatal(err)
	}
	ws, caseID, reporterID, err := s.ResolveTracking(ctx, secret)
	if err != nil || ws != k.ws.ID || caseID != c.ID || reporterID != c.ReporterID {
		t.Fatalf("ResolveTracking = %s %s %s %v", ws, caseID, reporterID, err)
	}
	reporter := signoff.Actor{ID: reporterID, WorkspaceID: ws, Role: signoff.RoleReporter}
	repro := k.actor(t, "repro", signoff.RoleReproducer)
	fixer := k.actor(t, "fix", signoff.RoleFixer)
	op := k.approver(t, "op", signoff.RoleOperator)
	GiveTask(t, s, k.owner, repro, c.ID)
	GiveTask(t, s, k.owner, fixer, c.ID)

	l, _ := k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c.ID, MaxFixAttempts: 1})
	l, _ = k.step(t, k.sys, l, "start_triage")
	l, _ = k.step(t, k.owner, l, "ticket")
	l, _ = k.step(t, k.sys, l, "start_reproduction")
	l, _ = k.step(t, repro, l, "propose_reproduction")
	// Someone else's reporter cannot answer; this one can.
	stranger := signoff.Actor{ID: signoff.NewID(signoff.PrefixTracking), WorkspaceID: ws, Role: signoff.RoleReporter}
	_, _, err = s.AdvanceLoop(ctx, stranger, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Command: "confirm_reproduction"})
	wantCode(t, err, signoff.ENOTFOUND)
	l, _ = k.step(t, reporter, l, "confirm_reproduction")
	// A member of staff approves the test; the reporter and agents cannot.
	for _, who := range []signoff.Actor{reporter, repro} {
		_, _, err = s.AdvanceLoop(ctx, who, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Command: "approve_harness"})
		wantCode(t, err, signoff.EFORBIDDEN)
	}
	l, cs := k.step(t, op.actor, l, "approve_harness")
	if cs.State != workflow.BugReproduced {
		t.Fatalf("after approve_harness: %s", cs.State)
	}
	l, _ = k.step(t, k.sys, l, "start_fix")
	l, cs = k.step(t, fixer, l, "submit_candidate")
	if cs.FixAttempts != 1 || cs.MaxFixAttempts != 1 {
		t.Fatalf("attempts %d/%d", cs.FixAttempts, cs.MaxFixAttempts)
	}
	l, _ = k.step(t, k.sys, l, "record_verified")

	digest := digestHex("ab")
	a := k.record(t, op.actor, k.approval(cs, op, digest, time.Hour))
	if a.Status != signoff.ApprovalValid || a.WorkspaceID != ws || !signoff.ValidID(signoff.PrefixApproval, a.ID) {
		t.Fatalf("recorded %+v", a)
	}
	// The fixer cannot carry the approval in; the approver's own update
	// (the bug desk verified the envelope) approves and consumes it.
	_, _, err = s.AdvanceLoop(ctx, fixer, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Command: "approve", Consume: []string{a.ID}})
	wantCode(t, err, signoff.EFORBIDDEN)
	l, cs = k.advance(t, op.actor, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, State: l.State, Command: "approve", Consume: []string{a.ID},
		Events: []signoff.LoopEvent{{Type: "approval.quorum", Payload: map[string]any{"approvals": []string{a.ID}}}}})
	if cs.State != workflow.BugApproved {
		t.Fatalf("case %s after approve", cs.State)
	}
	list, err := s.ListApprovals(ctx, k.owner, c.ID)
	if err != nil || len(list) != 1 || list[0].Status != signoff.ApprovalConsumed || list[0].ConsumedAt == nil {
		t.Fatalf("approvals %+v %v", list, err)
	}
	evs, err := s.ListEvents(ctx, k.owner, c.ID, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
	}
	tail := strings.Join(types[len(types)-3:], " ")
	if tail != "case.transitioned approval.quorum loop.updated" {
		t.Fatalf("last events %s", tail)
	}
	k.verify(t)
}

// testLoopJobs: jobs are enqueued with the update, once per argument set,
// at their scheduled time.
func testLoopJobs(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	c := k.bug(t, "")
	fix := signoff.FixJob{WorkspaceID: k.ws.ID, CaseID: c.ID, Round: 1, Attempt: 1}
	later := time.Now().Add(48 * time.Hour)
	l, _ := k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c.ID, Jobs: []signoff.JobRequest{{Args: fix},
		{Args: signoff.ConfirmTimeoutJob{WorkspaceID: k.ws.ID, CaseID: c.ID, Round: 1}, At: later}}})
	k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Jobs: []signoff.JobRequest{{Args: fix}}})
	count := func(kind string) (n int, state string) {
		t.Helper()
		if err := s.SQL().QueryRowContext(ctx, `SELECT COUNT(*), MIN(state) FROM river_job WHERE kind = $1`, kind).Scan(&n, &state); err != nil {
			t.Fatal(err)
		}
		return n, state
	}
	if n, _ := count("bug_fix"); n != 1 {
		t.Fatalf("%d fix jobs, want 1 (unique by args)", n)
	}
	if n, st := count("bug_confirm_timeout"); n != 1 || st != "scheduled" {
		t.Fatalf("confirm timeout jobs: %d in state %s, want 1 scheduled", n, st)
	}
	ups := k.eventsOf(t, "loop.updated")
	if jobs := payloadOf(t, ups[0])["jobs"].([]any); len(jobs) != 2 || jobs[0] != "bug_fix" {
		t.Fatalf("loop.updated jobs %v", jobs)
	}
}

// testLoopConcurrent: racers updating one version, or creating one loop,
// leave exactly one winner and a ledger that verifies.
func testLoopConcurrent(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	c := k.bug(t, "")
	run := func(u func(i int) signoff.LoopUpdate) (wins int) {
		errs := make([]error, racers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, _, errs[i] = k.store.AdvanceLoop(k.ctx, k.sys, u(i))
			}()
		}
		close(start)
		wg.Wait()
		for _, err := range errs {
			if err == nil {
				wins++
			} else if signoff.ErrorCode(err) != signoff.ECONFLICT {
				t.Fatalf("loser got %v, want conflict", err)
			}
		}
		return wins
	}
	if w := run(func(i int) signoff.LoopUpdate {
		return signoff.LoopUpdate{CaseID: c.ID, State: signoff.BugLoopState{Round: i}}
	}); w != 1 {
		t.Fatalf("%d creators won, want 1", w)
	}
	l := k.loop(t, c.ID)
	if w := run(func(i int) signoff.LoopUpdate {
		return signoff.LoopUpdate{CaseID: c.ID, Version: 1, State: signoff.BugLoopState{Round: 100 + i}, Command: "start_triage",
			Events: []signoff.LoopEvent{{Type: "racer.won", Payload: map[string]any{"i": i}}}}
	}); w != 1 {
		t.Fatalf("%d updaters won, want 1", w)
	}
	got := k.loop(t, c.ID)
	cs, _ := k.store.GetCase(k.ctx, k.owner, c.ID)
	won := k.eventsOf(t, "racer.won")
	if got.Version != l.Version+1 || got.State.Round < 100 || cs.Version != 2 || len(won) != 1 ||
		payloadOf(t, won[0])["i"] != float64(got.State.Round-100) {
		t.Fatalf("after the race: loop v%d round %d, case v%d, %d winner events", got.Version, got.State.Round, cs.Version, len(won))
	}
	if n := len(k.eventsOf(t, "loop.updated")); n != 2 {
		t.Fatalf("%d loop.updated events, want 2", n)
	}
	k.verify(t)
}

// testApprovalConsume: an approval is consumed once, only for its case,
// and not after it expired.
func testApprovalConsume(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	op := k.approver(t, "op", signoff.RoleOperator)
	c, other := k.bug(t, ""), k.bug(t, "")
	l, _ := k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c.ID})
	lo, _ := k.advance(t, k.sys, signoff.LoopUpdate{CaseID: other.ID})
	a := k.record(t, k.sys, k.approval(c, op, digestHex("1"), time.Hour))

	// Not for another case.
	_, _, err := s.AdvanceLoop(ctx, k.sys, signoff.LoopUpdate{CaseID: other.ID, Version: lo.Version, Consume: []string{a.ID}})
	wantCode(t, err, signoff.ECONFLICT)
	l, _ = k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Consume: []string{a.ID}})
	before := k.head(t)
	_, _, err = s.AdvanceLoop(ctx, k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Consume: []string{a.ID}})
	wantCode(t, err, signoff.ECONFLICT)
	if !strings.Contains(signoff.ErrorMessage(err), "expired, superseded or already used") {
		t.Fatalf("message %q", signoff.ErrorMessage(err))
	}
	_, _, err = s.AdvanceLoop(ctx, k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Consume: []string{a.ID, a.ID}})
	wantCode(t, err, signoff.EINVALID)

	// Expiry is judged by the store's clock at consumption.
	b1 := k.record(t, k.sys, k.approval(c, op, digestHex("2"), time.Hour))
	before = k.head(t)
	k.clock.Advance(time.Hour)
	_, _, err = s.AdvanceLoop(ctx, k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Consume: []string{b1.ID}})
	wantCode(t, err, signoff.ECONFLICT)
	k.unchanged(t, before, "refused consumptions")
	list, _ := s.ListApprovals(ctx, k.owner, c.ID)
	if len(list) != 2 || list[0].Status != signoff.ApprovalConsumed || list[1].Status != signoff.ApprovalValid || list[1].ConsumedAt != nil {
		t.Fatalf("approvals %+v", list)
	}
	k.verify(t)
}

// testApprovalRecordRules: who records, which keys count, single-use
// nonces, and what the ledger keeps.
func testApprovalRecordRules(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	op := k.approver(t, "op", signoff.RoleOperator)
	op2 := k.approver(t, "op2", signoff.RoleOperator)
	viewer := k.actor(t, "vi", signoff.RoleViewer)
	fixer := k.actor(t, "fix", signoff.RoleFixer)
	c := k.bug(t, "")
	good := k.approval(c, op, digestHex("c"), time.Hour)
	foreignKey := good
	foreignKey.KeyID = op2.keyID
	unknownKey := good
	unknownKey.KeyID = "0123456789abcdef"
	expired := good
	expired.IssuedAt, expired.ExpiresAt = good.IssuedAt.Add(-2*time.Hour), good.IssuedAt.Add(-time.Hour)
	agentApprover := good
	agentApprover.ApproverID = fixer.ID
	badEnvelope := good
	badEnvelope.Envelope = json.RawMessage(`{not json`)
	otherCase := good
	otherCase.CaseID = signoff.NewID(signoff.PrefixCase)
	refusals := []struct {
		name string
		by   signoff.Actor
		a    signoff.Approval
		code string
	}{
		{"viewer records", viewer, good, signoff.EFORBIDDEN},
		{"agent records", fixer, good, signoff.EFORBIDDEN},
		{"someone else's approval", op2.actor, good, signoff.EFORBIDDEN},
		{"key of another approver", k.sys, foreignKey, signoff.EINVALID},
		{"unregistered key", k.sys, unknownKey, signoff.EINVALID},
		{"already expired", k.sys, expired, signoff.EINVALID},
		{"agent as approver", k.sys, agentApprover, signoff.EFORBIDDEN},
		{"bad envelope", k.sys, badEnvelope, signoff.EINVALID},
		{"unknown case", k.sys, otherCase, signoff.ENOTFOUND},
	}
	before := k.head(t)
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			_, err := s.RecordApproval(ctx, r.by, r.a)
			wantCode(t, err, r.code)
		})
	}
	k.unchanged(t, before, "refused approvals")

	a := k.record(t, op.actor, good)
	again := good // the same nonce, even over another digest or case
	again.SubjectDigest = digestHex("d")
	_, err := s.RecordApproval(ctx, k.sys, again)
	wantCode(t, err, signoff.ECONFLICT)
	if signoff.ErrorMessage(err) != "approval nonce already used" {
		t.Fatalf("message %q", signoff.ErrorMessage(err))
	}
	evs := k.eventsOf(t, "approval.recorded")
	if len(evs) != 1 {
		t.Fatalf("%d approval.recorded events", len(evs))
	}
	p := payloadOf(t, evs[0])
	if p["approval_id"] != a.ID || p["nonce"] != good.Nonce || p["key_id"] != op.keyID || p["envelope"] != nil || len(p["envelope_sha256"].(string)) != 64 {
		t.Fatalf("approval.recorded payload %v", p)
	}
	rep := k.actor(t, "rep", signoff.RoleReporter)
	_, err = s.ListApprovals(ctx, rep, c.ID)
	wantCode(t, err, signoff.EFORBIDDEN)
	k.verify(t)
}

// testApprovalSupersede: valid approvals of another subject are
// superseded; consumed ones and those of the kept subject stay.
func testApprovalSupersede(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	op := k.approver(t, "op", signoff.RoleOperator)
	c := k.bug(t, "")
	l, _ := k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c.ID})
	oldA := k.record(t, k.sys, k.approval(c, op, digestHex("a"), time.Hour))
	used := k.record(t, k.sys, k.approval(c, op, digestHex("a"), time.Hour))
	k.advance(t, k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Consume: []string{used.ID}})
	keepB := k.record(t, k.sys, k.approval(c, op, digestHex("b"), time.Hour))

	_, err := s.SupersedeApprovals(ctx, k.actor(t, "fix", signoff.RoleFixer), c.ID, digestHex("b"))
	wantCode(t, err, signoff.EFORBIDDEN)
	n, err := s.SupersedeApprovals(ctx, k.sys, c.ID, digestHex("b"))
	if err != nil || n != 1 {
		t.Fatalf("supersede = %d %v, want 1", n, err)
	}
	if n, err := s.SupersedeApprovals(ctx, k.sys, c.ID, digestHex("b")); err != nil || n != 0 {
		t.Fatalf("second supersede = %d %v, want 0", n, err)
	}
	list, _ := s.ListApprovals(ctx, k.owner, c.ID)
	want := map[string]string{oldA.ID: signoff.ApprovalSuperseded, used.ID: signoff.ApprovalConsumed, keepB.ID: signoff.ApprovalValid}
	for _, a := range list {
		if want[a.ID] != a.Status {
			t.Fatalf("approval %s is %s, want %s", a.ID, a.Status, want[a.ID])
		}
	}
	// A superseded approval cannot be consumed.
	l = k.loop(t, c.ID)
	_, _, err = s.AdvanceLoop(ctx, k.sys, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Consume: []string{oldA.ID}})
	wantCode(t, err, signoff.ECONFLICT)
	if n, err := s.SupersedeApprovals(ctx, k.owner, c.ID, ""); err != nil || n != 1 {
		t.Fatalf("supersede all = %d %v, want 1", n, err)
	}
	evs := k.eventsOf(t, "approvals.superseded")
	if len(evs) != 2 || payloadOf(t, evs[0])["count"] != 1.0 || evs[0].CaseID != c.ID {
		t.Fatalf("approvals.superseded events %+v", evs)
	}
	k.verify(t)
}

// testApproverKeys: people register their own Ed25519 keys once; agents
// and the CLI never get one.
func testApproverKeys(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	op := k.actor(t, "op", signoff.RoleOperator)
	_, p := newPEM(t)
	key, err := s.RegisterKey(ctx, op, p)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode([]byte(p))
	pub, _ := x509.ParsePKIXPublicKey(blk.Bytes)
	if key.ID != keys.ID(pub.(ed25519.PublicKey)) || key.ActorID != op.ID || key.WorkspaceID != k.ws.ID || key.PublicKey != p {
		t.Fatalf("registered %+v", key)
	}
	got, err := s.GetKey(ctx, k.ws.ID, key.ID)
	if err != nil || got.ID != key.ID || got.RevokedAt != nil {
		t.Fatalf("GetKey = %+v %v", got, err)
	}
	otherWS, otherOwner, err := s.CreateWorkspace(ctx, "Other", "bob")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.GetKey(ctx, otherWS.ID, key.ID)
	wantCode(t, err, signoff.ENOTFOUND)
	_, err = s.GetKey(ctx, k.ws.ID, "0000000000000000")
	wantCode(t, err, signoff.ENOTFOUND)

	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	ecPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: ecDER}))
	_, p2 := newPEM(t)
	refusals := []struct {
		name string
		by   signoff.Actor
		pem  string
		code string
	}{
		{"duplicate", op, p, signoff.ECONFLICT},
		{"fixer", k.actor(t, "fix", signoff.RoleFixer), p2, signoff.EFORBIDDEN},
		{"reviewer", k.actor(t, "rev", signoff.RoleReviewer), p2, signoff.EFORBIDDEN},
		{"viewer", k.actor(t, "vi", signoff.RoleViewer), p2, signoff.EFORBIDDEN},
		{"reporter", k.actor(t, "rep", signoff.RoleReporter), p2, signoff.EFORBIDDEN},
		{"system", k.sys, p2, signoff.EFORBIDDEN},
		{"cli", signoff.CLIActor(k.ws.ID), p2, signoff.EFORBIDDEN},
		{"not PEM", op, "ssh-ed25519 AAAA", signoff.EINVALID},
		{"ECDSA", op, ecPEM, signoff.EINVALID},
		{"two keys", op, p2 + p2, signoff.EINVALID},
		{"private key block", op, strings.ReplaceAll(p2, "PUBLIC KEY", "PRIVATE KEY"), signoff.EINVALID},
	}
	before := k.head(t)
	for _, r := range refusals {
		t.Run(r.name, func(t *testing.T) {
			_, err := s.RegisterKey(ctx, r.by, r.pem)
			wantCode(t, err, r.code)
		})
	}
	k.unchanged(t, before, "refused keys")

	own, err := s.RegisterKey(ctx, k.owner, p2)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := s.ListKeys(ctx, op)
	if err != nil || len(mine) != 1 || mine[0].ID != key.ID {
		t.Fatalf("operator's keys %+v %v", mine, err)
	}
	all, err := s.ListKeys(ctx, k.owner)
	if err != nil || len(all) != 2 || (all[0].ID != own.ID && all[1].ID != own.ID) {
		t.Fatalf("owner's view %+v %v", all, err)
	}
	_, err = s.ListKeys(ctx, k.actor(t, "fix2", signoff.RoleFixer))
	wantCode(t, err, signoff.EFORBIDDEN)
	if theirs, _ := s.ListKeys(ctx, otherOwner); len(theirs) != 0 {
		t.Fatalf("another workspace lists %d keys", len(theirs))
	}
	evs := k.eventsOf(t, "key.registered")
	if len(evs) != 2 || payloadOf(t, evs[0])["key_id"] != key.ID || evs[0].ActorID != op.ID {
		t.Fatalf("key.registered %+v", evs)
	}
	k.verify(t)
}

// testDeployments: a repeated delivery is stored once, bad ones are
// refused, lists are newest first.
func testDeployments(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	commit := strings.Repeat("a1", 20)
	d := signoff.Deployment{ID: "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", ProjectID: k.proj.ID, Commit: commit, Environment: "production",
		URL: "https://shop.example.com", Source: "webhook"}
	first, created, err := s.RecordDeployment(ctx, d)
	if err != nil || !created {
		t.Fatalf("RecordDeployment = %v %v", created, err)
	}
	if first.WorkspaceID != k.ws.ID || !first.ReceivedAt.Equal(k.clock.Now()) {
		t.Fatalf("stored %+v", first)
	}
	k.clock.Advance(time.Minute)
	again := d
	again.Environment = "staging"
	got, created, err := s.RecordDeployment(ctx, again)
	if err != nil || created || got.Environment != "production" || !got.ReceivedAt.Equal(first.ReceivedAt) {
		t.Fatalf("repeat = %+v %v %v", got, created, err)
	}
	if evs := k.eventsOf(t, "deployment.received"); len(evs) != 1 || evs[0].CaseID != "" || payloadOf(t, evs[0])["commit"] != commit {
		t.Fatalf("deployment.received %+v", evs)
	}

	otherWS, otherOwner, err := s.CreateWorkspace(ctx, "Other", "bob")
	if err != nil {
		t.Fatal(err)
	}
	before := k.head(t)
	bad := []struct {
		name string
		edit func(*signoff.Deployment)
		code string
	}{
		{"short commit", func(d *signoff.Deployment) { d.Commit = "abc123" }, signoff.EINVALID},
		{"upper-case commit", func(d *signoff.Deployment) { d.Commit = strings.ToUpper(commit) }, signoff.EINVALID},
		{"no environment", func(d *signoff.Deployment) { d.Environment = " " }, signoff.EINVALID},
		{"control in url", func(d *signoff.Deployment) { d.URL = "https://x\n" }, signoff.EINVALID},
		{"bad source", func(d *signoff.Deployment) { d.Source = "carrier-pigeon" }, signoff.EINVALID},
		{"bad id", func(d *signoff.Deployment) { d.ID = "../x" }, signoff.EINVALID},
		{"unknown project", func(d *signoff.Deployment) { d.ProjectID = signoff.NewID(signoff.PrefixProject) }, signoff.ENOTFOUND},
		{"foreign workspace", func(d *signoff.Deployment) { d.WorkspaceID = otherWS.ID }, signoff.ENOTFOUND},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			x := d
			x.ID = "dep-" + strings.ReplaceAll(c.name, " ", "-")
			c.edit(&x)
			_, _, err := s.RecordDeployment(ctx, x)
			wantCode(t, err, c.code)
		})
	}
	k.unchanged(t, before, "refused deployments")

	k.clock.Advance(time.Minute)
	sha256Commit := strings.Repeat("0f", 32)
	if _, created, err := s.RecordDeployment(ctx, signoff.Deployment{ID: signoff.NewID(signoff.PrefixDeployment), ProjectID: k.proj.ID,
		Commit: sha256Commit, Environment: "production", Source: "deploy_hook"}); err != nil || !created {
		t.Fatalf("deploy hook deployment: %v %v", created, err)
	}
	list, err := s.ListDeployments(ctx, k.actor(t, "rec", signoff.RoleRecorder), k.proj.ID, 0)
	if err != nil || len(list) != 2 || list[0].Commit != sha256Commit || list[1].ID != d.ID {
		t.Fatalf("ListDeployments %+v %v", list, err)
	}
	if one, _ := s.ListDeployments(ctx, k.owner, k.proj.ID, 1); len(one) != 1 {
		t.Fatalf("limit 1 gave %d", len(one))
	}
	_, err = s.ListDeployments(ctx, k.actor(t, "rep", signoff.RoleReporter), k.proj.ID, 0)
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.ListDeployments(ctx, otherOwner, k.proj.ID, 0)
	wantCode(t, err, signoff.ENOTFOUND)
	k.verify(t)
}

// testResolveTracking: a tracking secret names its case and reporter;
// every bad secret is the same ENOTFOUND.
func testResolveTracking(t *testing.T, b Backend) {
	k := newLoopKit(t, b)
	s, ctx := k.store, k.ctx
	c, _, secret, err := s.SubmitReport(ctx, signoff.ReportInput{ProjectID: k.proj.ID, Text: "checkout hangs"})
	if err != nil {
		t.Fatal(err)
	}
	ws, caseID, rep, err := s.ResolveTracking(ctx, secret)
	if err != nil || ws != k.ws.ID || caseID != c.ID || rep != c.ReporterID {
		t.Fatalf("ResolveTracking = %s %s %s %v", ws, caseID, rep, err)
	}
	flipped := []byte(secret)
	if flipped[len(flipped)-1] == 'a' {
		flipped[len(flipped)-1] = 'b'
	} else {
		flipped[len(flipped)-1] = 'a'
	}
	for _, bad := range []string{"", "nonsense", string(flipped), secret + "x", strings.ToUpper(secret)} {
		_, _, _, err := s.ResolveTracking(ctx, bad)
		wantCode(t, err, signoff.ENOTFOUND)
	}
}
