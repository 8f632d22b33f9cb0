package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/workflow"
)

// The change desk's commands against a real server: the API with a change
// desk over SQLite, served in-process, and the CLI run in-process as the
// people in the loop would run it (the owner asks and drafts, alice signs
// with her own approval key and runs the gate).

const (
	chgFlag   = "checkout_v2"
	chgTarget = "flag:prod/" + chgFlag
	chgReason = "Disable checkout_v2 in prod: checkout answers 500 since the v2 payment flow went live"
)

// chgClock is the desk's clock: tests move it to expire approvals or to
// leave a change window.
type chgClock struct{ off atomic.Int64 }

func (c *chgClock) Now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *chgClock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// chgPolicy is a change policy in YAML: prod flags, approved by required
// of group, on days (UTC, the whole day), approvals living ttlHours (0:
// the default), flag rollbacks pre-approved; extra is appended.
type chgPolicy struct {
	required int
	group    []string
	days     []string
	ttlHours int
	extra    string
}

func (p chgPolicy) yaml() string {
	days := p.days
	if len(days) == 0 {
		days = []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}
	}
	y := `allowed_targets: ["flag:prod/*"]
environments: [prod]
min_reason_length: 20
approvals:
  required: ` + fmt.Sprint(p.required) + `
  group: [` + strings.Join(p.group, ", ") + `]
no_self_approval: true
proposer_cannot_approve: true
windows:
  - days: [` + strings.Join(days, ", ") + `]
    from: "00:00"
    to: "24:00"
    tz: UTC
preapproved_rollbacks: [flag]
`
	if p.ttlHours > 0 {
		y += fmt.Sprintf("approval_ttl_hours: %d\n", p.ttlHours)
	}
	return y + p.extra
}

// chgEnv is a workspace with the project shoplite, whose flag checkout_v2
// in prod is on (the incident); an app whose /checkout fails while the
// flag is on and whose /healthz always answers; repository settings
// naming the app as the live URL with /healthz as the first smoke check
// (the builtin planner's health check); alice, an operator with an
// approval key made and registered with the CLI; and the API served with
// a change desk whose clock the test holds.
type chgEnv struct {
	t          *testing.T
	ctx        context.Context
	s          *sqlstore.DB
	desk       *changedesk.Desk
	clock      *chgClock
	srv        *httptest.Server
	app        *httptest.Server
	ws         string
	owner      signoff.Actor
	alice      signoff.Actor
	ownerToken string
	aliceToken string
	aliceKey   string // the path of alice's approval key
	project    string
	// tamper, when set, rewrites the approval cards the server sends.
	tamper atomic.Pointer[func([]byte) []byte]
}

func newChgEnv(t *testing.T, pol func(e *chgEnv) chgPolicy) *chgEnv {
	t.Helper()
	ctx := context.Background()
	_, serverKey, _ := ed25519.GenerateKey(nil)
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "signoff.db"), sqlstore.Options{Signer: serverKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e := &chgEnv{t: t, ctx: ctx, s: s, clock: &chgClock{}}
	ws, owner, err := s.CreateWorkspace(ctx, "Acme", "olga")
	if err != nil {
		t.Fatal(err)
	}
	e.ws, e.owner = ws.ID, owner
	if e.alice, err = s.CreateActor(ctx, owner, "alice", signoff.RoleOperator); err != nil {
		t.Fatal(err)
	}
	cliActor := signoff.CLIActor(ws.ID)
	if _, e.ownerToken, err = s.CreateToken(ctx, cliActor, owner.ID, "cli", nil); err != nil {
		t.Fatal(err)
	}
	if _, e.aliceToken, err = s.CreateToken(ctx, cliActor, e.alice.ID, "cli", nil); err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shoplite"})
	if err != nil {
		t.Fatal(err)
	}
	e.project = p.ID
	if _, err := s.CreateFlag(ctx, owner, p.ID, "prod", chgFlag, signoff.FlagBoolean, json.RawMessage("true")); err != nil {
		t.Fatal(err)
	}
	e.app = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			w.Write([]byte("ok"))
			return
		}
		f, err := s.GetFlag(r.Context(), signoff.SystemActor(ws.ID), p.ID, "prod", chgFlag)
		if err != nil || string(f.Value) == "true" {
			http.Error(w, "payment provider v2 unavailable", http.StatusInternalServerError)
			return
		}
		w.Write([]byte("order total 9000"))
	}))
	t.Cleanup(e.app.Close)
	if _, err := s.SetRepoSettings(ctx, cliActor, p.ID, signoff.RepoSettings{Path: t.TempDir(), LiveURL: e.app.URL,
		Smoke: []signoff.SmokeCheck{{Name: "healthz", Method: "GET", Path: "/healthz", ExpectBody: "ok"}}}); err != nil {
		t.Fatal(err)
	}
	e.desk = &changedesk.Desk{Store: s, Key: s.Signer(), Now: e.clock.Now,
		Actuators: map[string]changedesk.Actuator{change.KindFlag: changedesk.FlagActuator{Flags: s}},
		Health:    changedesk.HTTPProber{},
		Sleep:     func(context.Context, time.Duration) error { return nil },
		// Short: the lock test holds the target; nothing else waits.
		LockWait: 300 * time.Millisecond}
	api := httpapi.New(s, slog.New(slog.DiscardHandler), httpapi.WithChangeDesk(e.desk))
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tp := e.tamper.Load()
		if tp == nil || r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/approval") {
			api.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		api.ServeHTTP(rec, r)
		w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
		w.WriteHeader(rec.Code)
		w.Write((*tp)(rec.Body.Bytes()))
	}))
	t.Cleanup(e.srv.Close)

	// Alice's approval key, made and registered as she would.
	e.aliceKey = filepath.Join(t.TempDir(), "cfg", "signoff", "approver.key")
	e.ok("", nil, "keys", "init", "--key", e.aliceKey)
	e.ok(e.aliceToken, nil, "keys", "register", "--key", e.aliceKey)

	pp := chgPolicy{required: 1, group: []string{e.alice.ID}}
	if pol != nil {
		pp = pol(e)
	}
	e.setPolicy(pp)
	return e
}

// cli runs the CLI in-process with token and the server's URL in its
// environment and checks that the token shows up in none of its output.
func (e *chgEnv) cli(token string, stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	vars := map[string]string{"SIGNOFF_TOKEN": token, "SIGNOFF_URL": e.srv.URL}
	var out, errOut bytes.Buffer
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	code = run(e.ctx, &env{stdin: stdin, stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }}, args)
	if token != "" && strings.Contains(out.String()+errOut.String(), token) {
		e.t.Errorf("signoff %v printed the API token", args)
	}
	return out.String(), errOut.String(), code
}

// ok runs the CLI and fails the test unless it exits 0; it returns stdout.
func (e *chgEnv) ok(token string, stdin io.Reader, args ...string) string {
	e.t.Helper()
	out, errOut, code := e.cli(token, stdin, args...)
	if code != 0 {
		e.t.Fatalf("signoff %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// writeFile writes a file for the CLI to read and returns its path.
func (e *chgEnv) writeFile(name, content string) string {
	e.t.Helper()
	path := filepath.Join(e.t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// setPolicy sets the workspace's change policy with signoff change policy
// --file, as the owner.
func (e *chgEnv) setPolicy(p chgPolicy) string {
	e.t.Helper()
	y := p.yaml()
	out := e.ok(e.ownerToken, nil, "change", "policy", "--file", e.writeFile("policy.yaml", y))
	parsed, err := change.Parse([]byte(y))
	if err != nil {
		e.t.Fatal(err)
	}
	if !strings.Contains(out, "stored, digest "+parsed.Digest()) {
		e.t.Fatalf("change policy --file: %s", out)
	}
	return parsed.Digest()
}

func (e *chgEnv) policyVersion() int64 {
	e.t.Helper()
	cur, err := e.s.GetChangePolicy(e.ctx, e.owner)
	if err != nil {
		e.t.Fatal(err)
	}
	return cur.Version
}

// setPolicyBehindTheDesk sets the policy in the store alone and makes the
// approvals of caseID valid again, as an edit of the database would: the
// gate must still refuse them on its own checks.
func (e *chgEnv) setPolicyBehindTheDesk(p chgPolicy, caseID string) {
	e.t.Helper()
	if _, err := e.s.SetChangePolicy(e.ctx, e.owner, p.yaml(), e.policyVersion(), change.PolicyDigest); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.s.SQL().ExecContext(e.ctx, `UPDATE approvals SET status = 'valid' WHERE case_id = $1 AND status = 'superseded'`, caseID); err != nil {
		e.t.Fatal(err)
	}
}

var chgCaseRE = regexp.MustCompile(`change request (case_[0-9a-z]+) opened: (\S+)`)

// request opens a change request with signoff change request; builtin
// drafts the plan at once.
func (e *chgEnv) request(reason string, builtin bool) (caseID, state, out string) {
	e.t.Helper()
	args := []string{"change", "request", "--project", e.project, "--reason", reason}
	if builtin {
		args = append(args, "--builtin")
	}
	out = e.ok(e.ownerToken, nil, args...)
	m := chgCaseRE.FindStringSubmatch(out)
	if m == nil {
		e.t.Fatalf("change request: no case in\n%s", out)
	}
	return m[1], m[2], out
}

// approved opens the builtin disable request and has alice sign it.
func (e *chgEnv) approved() string {
	e.t.Helper()
	id, state, _ := e.request(chgReason, true)
	if state != workflow.ChangeAwaitingApproval {
		e.t.Fatalf("request: %s", state)
	}
	out := e.ok(e.aliceToken, nil, "approve", "--case", id, "--yes", "--key", e.aliceKey)
	if !strings.Contains(out, "case "+id+" is now approved") {
		e.t.Fatalf("approve:\n%s", out)
	}
	return id
}

func (e *chgEnv) flag() signoff.Flag {
	e.t.Helper()
	f, err := e.s.GetFlag(e.ctx, e.owner, e.project, "prod", chgFlag)
	if err != nil {
		e.t.Fatal(err)
	}
	return f
}

func (e *chgEnv) state(caseID string) string {
	e.t.Helper()
	c, err := e.s.GetCase(e.ctx, e.owner, caseID)
	if err != nil {
		e.t.Fatal(err)
	}
	return c.State
}

func (e *chgEnv) approvals(caseID string) []signoff.Approval {
	e.t.Helper()
	as, err := e.s.ListApprovals(e.ctx, signoff.SystemActor(e.ws), caseID)
	if err != nil {
		e.t.Fatal(err)
	}
	return as
}

func (e *chgEnv) plan(caseID string) (signoff.ChangePlan, change.Plan) {
	e.t.Helper()
	l, err := e.s.GetChangeLoop(e.ctx, signoff.SystemActor(e.ws), caseID)
	if err != nil {
		e.t.Fatal(err)
	}
	rec, err := e.s.GetPlan(e.ctx, signoff.SystemActor(e.ws), l.State.PlanID)
	if err != nil {
		e.t.Fatal(err)
	}
	p, err := change.DecodePlan(rec.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return rec, p
}

func exitOf(code string) int { return signoff.Codes[code].ExitCode }

// TestChangeCLI walks two changes and a compensating rollback through the
// CLI: the policy, a request with the builtin plan, the plan shown, the
// signature refused without a terminal, signed with --yes, the gate and
// its receipt, a second execution refused; a person's plan from a file,
// signed with signoff change approve, whose health check fails and is
// restored; then the first change rolled back (pre-approved).
func TestChangeCLI(t *testing.T) {
	t.Parallel()
	e := newChgEnv(t, nil)

	// The policy: as stored, only the owner sets it, and a typo is
	// caught before anything is sent.
	defaultPolicy := chgPolicy{required: 1, group: []string{e.alice.ID}}
	parsed, err := change.Parse([]byte(defaultPolicy.yaml()))
	if err != nil {
		t.Fatal(err)
	}
	polDigest := parsed.Digest()
	out := e.ok(e.aliceToken, nil, "change", "policy")
	if !strings.Contains(out, "policy version 1, digest "+polDigest) || !strings.Contains(out, "group: ["+e.alice.ID+"]") {
		t.Fatalf("change policy:\n%s", out)
	}
	if _, errOut, code := e.cli(e.aliceToken, nil, "change", "policy", "--file", e.writeFile("p.yaml", defaultPolicy.yaml())); code != exitOf(signoff.EFORBIDDEN) {
		t.Fatalf("policy set by an operator: exit %d %s", code, errOut)
	}
	if _, errOut, code := e.cli(e.ownerToken, nil, "change", "policy", "--file", e.writeFile("p.yaml", "allowed_targetz: [x]\n")); code != exitOf(signoff.EINVALID) {
		t.Fatalf("a policy with a typo: exit %d %s", code, errOut)
	}
	if out := e.ok(e.aliceToken, nil, "change", "policy"); !strings.Contains(out, "policy version 1,") {
		t.Fatalf("a refused policy changed the stored one:\n%s", out)
	}

	// The request, drafted by the builtin planner.
	id, state, out := e.request(chgReason, true)
	if state != workflow.ChangeAwaitingApproval || !strings.Contains(out, "next: signoff change show --case "+id) {
		t.Fatalf("change request:\n%s", out)
	}
	rec, plan := e.plan(id)
	if plan.Target != chgTarget || string(plan.Params) != `{"value":false}` || string(plan.Rollback) != `{"value":true}` ||
		plan.HealthCheck.URL != e.app.URL+"/healthz" || rec.Via != "builtin" || rec.Proposer != e.owner.ID {
		t.Fatalf("the builtin plan: %+v (via %s, by %s)", plan, rec.Via, rec.Proposer)
	}
	out = e.ok(e.aliceToken, nil, "change", "show", "--case", id)
	for _, want := range []string{
		"Change " + id + ": Disable checkout_v2 in prod", "State:   awaiting_approval", "Reason:  " + chgReason,
		"Plan " + rec.ID + " (current) by " + e.owner.ID + " via builtin, digest " + rec.Digest,
		`"target": "flag:prod/checkout_v2"`, `"url": "` + e.app.URL + `/healthz"`, "Policy review PASSED",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("change show lacks %q\n%s", want, out)
		}
	}
	out = e.ok(e.aliceToken, nil, "change", "show", "--case", id, "--json")
	var view struct {
		Case  signoff.Case
		Plans []signoff.ChangePlan
	}
	if err := json.Unmarshal([]byte(out), &view); err != nil || view.Case.ID != id || len(view.Plans) != 1 || view.Plans[0].Digest != rec.Digest {
		t.Fatalf("change show --json: %v\n%s", err, out)
	}

	// Without --yes and without a terminal nothing is signed, but the
	// plan was shown in full, with both digests.
	out, errOut, code := e.cli(e.aliceToken, strings.NewReader(id+"\n"), "approve", "--case", id, "--key", e.aliceKey)
	if code != exitOf(signoff.EINVALID) || !strings.Contains(errOut, "not a terminal: pass --yes") {
		t.Fatalf("approve without a terminal: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		fmt.Sprintf("%-16s %s", "Case:", id), "The plan, in full", `"value": false`, `"value": true`, chgTarget,
		fmt.Sprintf("%-16s %s", "Subject digest:", rec.Digest), fmt.Sprintf("%-16s %s", "Policy digest:", polDigest),
		"1 of [" + e.alice.ID + "]", "Policy review PASSED",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the card lacks %q\n%s", want, out)
		}
	}
	if n := len(e.approvals(id)); n != 0 {
		t.Fatalf("%d approvals recorded without a terminal or --yes", n)
	}

	// Signed with --yes: the digest shown is the digest signed.
	out = e.ok(e.aliceToken, nil, "approve", "--case", id, "--yes", "--key", e.aliceKey)
	if !strings.Contains(out, "case "+id+" is now approved") || !strings.Contains(out, "next: signoff change execute --case "+id) ||
		!strings.Contains(out, "signed: approve subject "+rec.Digest) {
		t.Fatalf("approve --yes:\n%s", out)
	}
	as := e.approvals(id)
	if len(as) != 1 || as[0].SubjectDigest != rec.Digest || as[0].PolicyDigest != polDigest || as[0].Via != "cli-signed-yes" || as[0].ApproverID != e.alice.ID {
		t.Fatalf("approvals %+v", as)
	}

	// The gate, the flag write, the health check, the receipt.
	out = e.ok(e.aliceToken, nil, "change", "execute", "--case", id)
	for _, want := range []string{
		"gate passed: " + strings.Join(change.GateChecks, ", "), "applied flag to " + chgTarget, "health check PASS",
		"outcome executed; case " + id + " is executed", "receipt rcpt_",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("change execute lacks %q\n%s", want, out)
		}
	}
	if f := e.flag(); string(f.Value) != "false" || f.Version != 2 {
		t.Fatalf("flag after the change: %s v%d", f.Value, f.Version)
	}
	// One approval, one execution.
	_, errOut, code = e.cli(e.aliceToken, nil, "change", "execute", "--case", id)
	if code != exitOf(signoff.ECONFLICT) || !strings.Contains(errOut, "gate refused (consumed)") {
		t.Fatalf("second execution: exit %d, stderr %q", code, errOut)
	}
	out = e.ok(e.aliceToken, nil, "change", "show", "--case", id)
	if !regexp.MustCompile(`Receipt rcpt_\S+ \(execute, digest [0-9a-f]{64}, signature not checked here[^)]*\): executed`).MatchString(out) || !strings.Contains(out, "health PASS") ||
		!strings.Contains(out, "Approved digest "+rec.Digest+" by approvals "+as[0].ID) {
		t.Fatalf("change show after execution:\n%s", out)
	}

	// A person's plan from a file turns the flag back on, with a health
	// check on checkout itself, which fails: the gate restores the flag.
	id2, state, _ := e.request("Turn checkout_v2 back on in prod: the provider says v2 is fixed", false)
	if state != workflow.ChangeRequested {
		t.Fatalf("a request without a plan is %s", state)
	}
	if _, errOut, code := e.cli(e.ownerToken, nil, "change", "plan", "--case", id2, "--builtin", "--file", "x.json"); code != 2 || !strings.Contains(errOut, "give exactly one of --builtin and --file") {
		t.Fatalf("plan with --builtin and --file: exit %d %q", code, errOut)
	}
	proposal := e.writeFile("proposal.json", fmt.Sprintf(`{"target": %q, "params": {"value": true},
		"health_check": {"kind": "http", "method": "GET", "url": %q, "expect_status": 200, "expect_body": "total", "window_seconds": 2, "interval_seconds": 1}}`,
		chgTarget, e.app.URL+"/checkout"))
	out = e.ok(e.ownerToken, nil, "change", "plan", "--case", id2, "--file", proposal)
	rec2, plan2 := e.plan(id2)
	if !strings.Contains(out, "plan "+rec2.ID+" (digest "+rec2.Digest+"): case "+id2+" is awaiting_approval") || !strings.Contains(out, "Policy review PASSED") ||
		rec2.Via != "human" || string(plan2.Params) != `{"value":true}` || plan2.HealthCheck.URL != e.app.URL+"/checkout" {
		t.Fatalf("change plan --file: %+v\n%s", plan2, out)
	}
	out = e.ok(e.aliceToken, nil, "change", "approve", "--case", id2, "--yes", "--key", e.aliceKey)
	if !strings.Contains(out, "case "+id2+" is now approved") {
		t.Fatalf("change approve:\n%s", out)
	}
	out = e.ok(e.aliceToken, nil, "change", "execute", "--case", id2)
	for _, want := range []string{"health check FAIL", "restored automatically: ", "outcome rolled_back; case " + id2 + " is rolled_back"} {
		if !strings.Contains(out, want) {
			t.Errorf("the failing change's execution lacks %q\n%s", want, out)
		}
	}
	if f := e.flag(); string(f.Value) != "false" || f.Version != 4 {
		t.Fatalf("flag after the automatic restore: %s v%d, want false v4", f.Value, f.Version)
	}

	// The compensating rollback of the first change: the policy
	// pre-approves flag rollbacks, so it runs at once through the gate and
	// restores the first change's before-state.
	if _, errOut, code := e.cli(e.ownerToken, nil, "change", "rollback", "--case", id); code != 2 || !strings.Contains(errOut, "flag --reason is required") {
		t.Fatalf("rollback without a reason: exit %d %q", code, errOut)
	}
	if _, errOut, code := e.cli(e.ownerToken, nil, "change", "rollback", "--case", id2, "--reason", "roll back the change that already rolled back"); code != exitOf(signoff.ECONFLICT) {
		t.Fatalf("rollback of a rolled back change: exit %d %q", code, errOut)
	}
	out = e.ok(e.ownerToken, nil, "change", "rollback", "--case", id, "--reason", "Drill: restore the state before the first change")
	m := regexp.MustCompile(`compensating change (case_[0-9a-z]+): executed`).FindStringSubmatch(out)
	if m == nil || !strings.Contains(out, "outcome executed") || !strings.Contains(out, "gate passed: ") {
		t.Fatalf("change rollback:\n%s", out)
	}
	comp := m[1]
	if f := e.flag(); string(f.Value) != "true" || f.Version != 5 {
		t.Fatalf("flag after the rollback: %s v%d, want true v5", f.Value, f.Version)
	}
	if s := e.state(id); s != workflow.ChangeReverted {
		t.Fatalf("the original is %s, want reverted", s)
	}
	out = e.ok(e.aliceToken, nil, "change", "show", "--case", comp)
	if !strings.Contains(out, "Reverts: "+id) || !strings.Contains(out, "by the policy (pre-approved rollback)") ||
		!regexp.MustCompile(`restored content [0-9a-f]{64} == original [0-9a-f]{64}: true`).MatchString(out) {
		t.Fatalf("change show of the compensating change:\n%s", out)
	}
	if out := e.ok(e.aliceToken, nil, "change", "show", "--case", id); !strings.Contains(out, "Reverted by: "+comp) || !strings.Contains(out, "State:   reverted") {
		t.Fatalf("change show of the reverted change:\n%s", out)
	}
	if _, errOut, code := e.cli(e.ownerToken, nil, "change", "rollback", "--case", id, "--reason", "roll it back a second time, please"); code != exitOf(signoff.ECONFLICT) {
		t.Fatalf("second rollback: exit %d %q", code, errOut)
	}

	// Every receipt verifies under the server's key; the ledger too.
	pub := e.desk.Key.Public().(ed25519.PublicKey)
	for caseID, want := range map[string]string{id: changedesk.OutcomeExecuted, id2: changedesk.OutcomeRolledBack, comp: changedesk.OutcomeExecuted} {
		rs, err := e.s.ListReceipts(e.ctx, e.owner, caseID)
		if err != nil || len(rs) != 1 {
			t.Fatalf("receipts of %s: %d, %v", caseID, len(rs), err)
		}
		b, err := changedesk.OpenReceipt(rs[0], pub)
		if err != nil || b.Outcome != want {
			t.Fatalf("receipt of %s: %v, outcome %s, want %s", caseID, err, b.Outcome, want)
		}
	}
	if _, err := e.s.VerifyLedger(e.ctx, e.ws, map[string]ed25519.PublicKey{keys.ID(pub): pub}); err != nil {
		t.Fatalf("ledger: %v", err)
	}
}

// TestChangeApproveRefusesATamperedCard: the CLI recomputes the plan's and
// the policy's digests from what it shows and signs nothing when the
// server names other digests, or sends a card it cannot show in full.
func TestChangeApproveRefusesATamperedCard(t *testing.T) {
	t.Parallel()
	e := newChgEnv(t, nil)
	id, _, _ := e.request(chgReason, true)
	edit := func(f func(card map[string]any)) func([]byte) []byte {
		return func(b []byte) []byte {
			var card map[string]any
			if err := json.Unmarshal(b, &card); err != nil {
				t.Errorf("card: %v", err)
				return b
			}
			f(card)
			out, _ := json.Marshal(card)
			return out
		}
	}
	for _, tc := range []struct {
		name, want string
		tamper     func([]byte) []byte
	}{
		// The server shows one plan and asks for the digest of another.
		{"plan", "the plan shown digests to", func(b []byte) []byte {
			out := bytes.Replace(b, []byte(`"params":{"value":false}`), []byte(`"params":{"value":true}`), 1)
			if bytes.Equal(out, b) {
				t.Errorf("the card has no params to edit: %s", b)
			}
			return out
		}},
		{"plan as an object", "the plan shown digests to", edit(func(card map[string]any) {
			var p map[string]any
			json.Unmarshal(mustRaw(card["plan"]), &p)
			p["params"] = map[string]any{"value": true}
			card["plan"] = p
		})},
		// The policy shown is not the one whose digest the server names.
		{"policy", "the policy shown digests to", edit(func(card map[string]any) {
			card["policy_yaml"] = strings.Replace(card["policy_yaml"].(string), "min_reason_length: 20", "min_reason_length: 21", 1)
		})},
		// A consistent card of another case.
		{"other case", "the server sent the card of case", edit(func(card map[string]any) {
			card["case_id"] = signoff.NewID(signoff.PrefixCase)
		})},
		// A field this CLI does not know would be signed unseen.
		{"unknown field", "cannot show in full", edit(func(card map[string]any) { card["also_runs"] = "rm -rf /" })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.tamper
			e.tamper.Store(&f)
			defer e.tamper.Store(nil)
			_, errOut, code := e.cli(e.aliceToken, nil, "approve", "--case", id, "--yes", "--key", e.aliceKey)
			if code != exitOf(signoff.EINVALID) || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "nothing was signed") {
				t.Fatalf("exit %d, stderr %q; want %q", code, errOut, tc.want)
			}
			if n := len(e.approvals(id)); n != 0 {
				t.Fatalf("%d approvals recorded", n)
			}
		})
	}
	// The untampered card is signed.
	if out := e.ok(e.aliceToken, nil, "change", "approve", "--case", id, "--yes", "--key", e.aliceKey); !strings.Contains(out, "is now approved") {
		t.Fatalf("approve:\n%s", out)
	}
}

func mustRaw(v any) []byte {
	switch x := v.(type) {
	case string:
		return []byte(x)
	default:
		b, _ := json.Marshal(x)
		return b
	}
}

// TestChangeApproveTypedCaseID plays alice at a terminal, so it does not
// run in parallel with the tests that have none.
func TestChangeApproveTypedCaseID(t *testing.T) {
	e := newChgEnv(t, nil)
	id, _, _ := e.request(chgReason, true)
	old := stdinIsTerminal
	stdinIsTerminal = func(io.Reader) bool { return true }
	t.Cleanup(func() { stdinIsTerminal = old })
	_, errOut, code := e.cli(e.aliceToken, strings.NewReader("case_0\n"), "change", "approve", "--case", id, "--key", e.aliceKey)
	if code != exitOf(signoff.EINVALID) || !strings.Contains(errOut, "nothing was signed") {
		t.Fatalf("a mistyped case id: exit %d, stderr %q", code, errOut)
	}
	if n := len(e.approvals(id)); n != 0 {
		t.Fatalf("%d approvals recorded for a mistyped case id", n)
	}
	e.ok(e.aliceToken, strings.NewReader(id+"\n"), "change", "approve", "--case", id, "--key", e.aliceKey)
	if as := e.approvals(id); len(as) != 1 || as[0].Via != "cli-signed" {
		t.Fatalf("approvals %+v, want one via cli-signed", as)
	}
}

// TestChangeRequestBuiltinPlannerFails: a request the builtin planner
// cannot read is opened all the same, and the CLI says what to do.
func TestChangeRequestBuiltinPlannerFails(t *testing.T) {
	t.Parallel()
	e := newChgEnv(t, nil)
	id, state, out := e.request("Make checkout faster for everyone, somehow, before the sale", true)
	if state != workflow.ChangeRequested || !strings.Contains(out, "the builtin planner could not draft a plan: ") ||
		!strings.Contains(out, "draft one with: signoff change plan --case "+id+" --file proposal.json") {
		t.Fatalf("change request --builtin:\n%s", out)
	}
	if s := e.state(id); s != workflow.ChangeRequested {
		t.Fatalf("case %s", s)
	}
}

// TestChangeGateRefusalsCLI reaches every gate check through signoff
// change execute: the exit code follows the refusal's HTTP status, stderr
// names the check, the refusal is on the case's ledger and nothing is
// applied.
func TestChangeGateRefusalsCLI(t *testing.T) {
	t.Parallel()
	// The change window of the target_allowed case: every day but the
	// two after the day after tomorrow (UTC), so that three days on the
	// target is outside it even if midnight passes while the test runs.
	today := time.Now().UTC().Weekday()
	var windowDays []string
	for i := range 7 {
		if d := (int(today) + i) % 7; i != 3 && i != 4 {
			windowDays = append(windowDays, strings.ToLower(time.Weekday(d).String()[:3]))
		}
	}
	tests := []struct {
		check  string
		policy func(e *chgEnv) chgPolicy                       // the policy the change is approved under; nil: the default
		setup  func(t *testing.T, e *chgEnv, id string) string // returns the case id to execute
		code   string
		state  string // the case's state after the refusal; "" when there is no case
	}{
		{check: change.CheckIDFormat, code: signoff.EINVALID, setup: func(*testing.T, *chgEnv, string) string { return "case_1" }},
		{check: change.CheckSignature, code: signoff.EFORBIDDEN, state: workflow.ChangeApproved, setup: func(t *testing.T, e *chgEnv, id string) string {
			ks, err := e.s.ListKeys(e.ctx, e.alice)
			if err != nil || len(ks) != 1 {
				t.Fatalf("keys %v %v", ks, err)
			}
			if _, err := e.s.SQL().ExecContext(e.ctx, `UPDATE approver_keys SET revoked_at = 1 WHERE id = $1`, ks[0].ID); err != nil {
				t.Fatal(err)
			}
			return id
		}},
		// A policy set through the API reviews waiting cases again at
		// once, and the store voids their approvals; these rows set it in
		// the store alone and revive the approvals, as a database edit
		// would, to reach the gate's own checks. The refused case is then
		// reviewed under the policy in force (here it fails: no eligible
		// approver is left), so it has a next action.
		{check: change.CheckApprover, code: signoff.EFORBIDDEN, state: workflow.ChangeReviewFailed, setup: func(t *testing.T, e *chgEnv, id string) string {
			e.setPolicyBehindTheDesk(chgPolicy{required: 1, group: []string{e.owner.ID}}, id)
			return id
		}},
		{check: change.CheckQuorum, code: signoff.EFORBIDDEN, state: workflow.ChangeReviewFailed, setup: func(t *testing.T, e *chgEnv, id string) string {
			e.setPolicyBehindTheDesk(chgPolicy{required: 2, group: []string{e.alice.ID, e.owner.ID}}, id)
			return id
		}},
		// The plan expired with the approval: the case is expired, to be
		// planned again.
		{check: change.CheckExpired, code: signoff.ECONFLICT, state: workflow.ChangeExpired, setup: func(t *testing.T, e *chgEnv, id string) string {
			e.clock.Advance((change.DefaultApprovalTTLHours + 1) * time.Hour)
			return id
		}},
		{check: change.CheckConsumed, code: signoff.ECONFLICT, state: workflow.ChangeExecuted, setup: func(t *testing.T, e *chgEnv, id string) string {
			e.ok(e.aliceToken, nil, "change", "execute", "--case", id)
			return id
		}},
		{check: change.CheckPlanDigest, code: signoff.ECONFLICT, state: workflow.ChangeApproved, setup: func(t *testing.T, e *chgEnv, id string) string {
			res, err := e.s.SQL().ExecContext(e.ctx, `UPDATE change_plans SET body = replace(body, '"value":false', '"value":true') WHERE case_id = $1`, id)
			if err != nil {
				t.Fatal(err)
			}
			if n, _ := res.RowsAffected(); n != 1 {
				t.Fatalf("edited %d plans", n)
			}
			return id
		}},
		// Set behind the desk, the new policy voided the approval: the
		// gate refuses it, and the case waits for a signature under the
		// policy in force.
		{check: change.CheckPolicyDigest, code: signoff.ECONFLICT, state: workflow.ChangeAwaitingApproval, setup: func(t *testing.T, e *chgEnv, id string) string {
			if _, err := e.s.SetChangePolicy(e.ctx, e.owner, chgPolicy{required: 1, group: []string{e.alice.ID}, extra: "protected_targets: [\"flag:prod/payments_*\"]\n"}.yaml(), e.policyVersion(), change.PolicyDigest); err != nil {
				t.Fatal(err)
			}
			return id
		}},
		{check: change.CheckBeforeState, code: signoff.ECONFLICT, state: workflow.ChangeDrifted, setup: func(t *testing.T, e *chgEnv, id string) string {
			f := e.flag()
			if _, _, err := e.s.SetFlag(e.ctx, signoff.SystemActor(e.ws), signoff.FlagWrite{ProjectID: e.project, Env: "prod", Key: chgFlag,
				Value: json.RawMessage("false"), ExpectedVersion: f.Version, Reason: "test: someone flips it by hand"}); err != nil {
				t.Fatal(err)
			}
			return id
		}},
		{check: change.CheckTargetAllowed, code: signoff.EFORBIDDEN, state: workflow.ChangeApproved,
			policy: func(e *chgEnv) chgPolicy {
				return chgPolicy{required: 1, group: []string{e.alice.ID}, days: windowDays, ttlHours: change.MaxApprovalTTLHours}
			},
			setup: func(t *testing.T, e *chgEnv, id string) string {
				e.clock.Advance(72 * time.Hour)
				return id
			}},
		{check: change.CheckLock, code: signoff.ECONFLICT, state: workflow.ChangeApproved, setup: func(t *testing.T, e *chgEnv, id string) string {
			ok, err := e.s.LockTarget(e.ctx, signoff.SystemActor(e.ws), chgTarget, "another-execution", time.Hour)
			if err != nil || !ok {
				t.Fatalf("lock: %v %v", ok, err)
			}
			return id
		}},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.check] = true
		t.Run(tt.check, func(t *testing.T) {
			t.Parallel()
			e := newChgEnv(t, tt.policy)
			id := e.approved()
			target := tt.setup(t, e, id)
			before := e.flag()
			out, errOut, code := e.cli(e.aliceToken, nil, "change", "execute", "--case", target)
			if code != exitOf(tt.code) || !strings.Contains(errOut, "gate refused ("+tt.check+")") {
				t.Fatalf("change execute: exit %d (want %d), stdout %q, stderr %q; want the refusal named %s", code, exitOf(tt.code), out, errOut, tt.check)
			}
			if strings.Contains(out, "gate passed") {
				t.Fatalf("a refusal printed %q", out)
			}
			if f := e.flag(); f.Version != before.Version {
				t.Fatalf("flag written: v%d -> v%d", before.Version, f.Version)
			}
			if tt.state == "" {
				return
			}
			if s := e.state(id); s != tt.state {
				t.Fatalf("case %s, want %s", s, tt.state)
			}
			if tt.check == change.CheckBeforeState && !strings.Contains(errOut, "the case is drifted") {
				t.Fatalf("the drift does not say the case is drifted: %q", errOut)
			}
			evs, err := e.s.ListEvents(e.ctx, signoff.SystemActor(e.ws), id, 0, 1000)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, ev := range evs {
				found = found || (ev.Type == "gate.refused" && strings.Contains(string(ev.Payload), `"check":"`+tt.check+`"`))
			}
			if !found {
				t.Fatal("no gate.refused event names the check")
			}
		})
	}
	for _, c := range change.GateChecks {
		if !seen[c] {
			t.Errorf("no case for gate check %s", c)
		}
	}
}
