package httpapi_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/webhook"
)

// deployedCommit is the commit the test deployments name.
var deployedCommit = strings.Repeat("c0ffee", 6) + "c0de"

// deploymentBody is a deployment webhook's body.
var deploymentBody = `{"type":"deployment","data":{"commit":"` + deployedCommit + `","environment":"production"}}`

// newApproverKey makes an Ed25519 key and its public half as PEM.
func newApproverKey(t testing.TB) (ed25519.PrivateKey, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pemKey, err := keys.EncodePublic(pub)
	if err != nil {
		t.Fatal(err)
	}
	return priv, string(pemKey)
}

// keyBody is the body of POST /api/v1/keys with a new key.
func keyBody(t testing.TB) string {
	t.Helper()
	_, pemKey := newApproverKey(t)
	b, err := json.Marshal(map[string]string{"public_key": pemKey})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// approvalBody is the body of POST /api/v1/cases/{id}/approvals: an
// approval of caseID by approver, signed with key, over a subject and a
// policy that are well formed but not the case's.
func approvalBody(t testing.TB, key ed25519.PrivateKey, caseID, approver string) string {
	t.Helper()
	digest := strings.Repeat("5a", 32)
	env, err := approval.Sign(approval.NewStatement(caseID, digest, approval.Approve, digest, approver, time.Now(), time.Hour), key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"envelope": env, "via": "cli-signed"})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// hookRequest is a deployment webhook for project, signed with secret as
// message id at ts.
func hookRequest(t testing.TB, project, secret, id string, ts time.Time, body string) request {
	t.Helper()
	key, err := webhook.ParseSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	h := map[string]string{}
	for k, v := range webhook.Headers(key, id, ts, []byte(body)) {
		h[k] = v[0]
	}
	return request{method: "POST", path: "/api/v1/hooks/deployments/" + project, body: body, header: h}
}

// toApproval are the commands that take a new bug to awaiting_approval:
// the reporter confirms the reproduction and a member of staff approves
// its test (the owner, here) before the fix starts.
var toApproval = []string{"start_triage", "ticket", "start_reproduction", "propose_reproduction",
	"confirm_reproduction", "approve_harness", "start_fix", "submit_candidate", "record_verified"}

// drive moves c through commands with the store's loop updates, each as
// whoever the transition table lets run it: the reporter for their
// answers, the server for what it records, else the owner. Only the case's
// state moves; the loop record stays empty.
func (w *workspace) drive(t *testing.T, c signoff.Case, reporter signoff.Actor, commands ...string) signoff.Case {
	t.Helper()
	ctx := context.Background()
	sys := signoff.SystemActor(w.ws.ID)
	for _, cmd := range commands {
		by := w.owner
		switch cmd {
		case "confirm_reproduction":
			by = reporter
		case "start_reproduction", "start_fix", "record_verified":
			by = sys
		}
		var version int64
		l, err := w.store.GetLoop(ctx, sys, c.ID)
		if err == nil {
			version = l.Version
		} else if signoff.ErrorCode(err) != signoff.ENOTFOUND {
			t.Fatalf("GetLoop: %v", err)
		}
		if _, c, err = w.store.AdvanceLoop(ctx, by, signoff.LoopUpdate{CaseID: c.ID, Version: version, Command: cmd}); err != nil {
			t.Fatalf("%s as %s: %v", cmd, by.Role, err)
		}
	}
	return c
}

// TestAgentsCannotApproveOrMerge sends every agent role at a case that
// waits for approval and one that waits for its merge, carrying a genuine
// approval signed by the owner: none of them reads the card, approves,
// merges or registers a key, and nothing moves.
func TestAgentsCannotApproveOrMerge(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serveDesk(t, store)
	ctx := context.Background()
	reporter := w.actor(t, "rita", signoff.RoleReporter)
	awaiting := w.drive(t, w.newCase(t, signoff.KindBug, reporter.ID), reporter, toApproval...)
	approved := w.drive(t, w.newCase(t, signoff.KindBug, reporter.ID), reporter, append(toApproval, "approve")...)
	if awaiting.State != "awaiting_approval" || approved.State != "approved" {
		t.Fatalf("states = %s, %s", awaiting.State, approved.State)
	}
	ownerKey, ownerPEM := newApproverKey(t)
	if _, err := store.RegisterKey(ctx, w.owner, ownerPEM); err != nil {
		t.Fatalf("RegisterKey: %v", err)
	}
	signed := approvalBody(t, ownerKey, awaiting.ID, w.owner.ID)
	tokens := map[signoff.Role]string{}
	for _, role := range signoff.AgentRoles {
		tokens[role] = w.token(t, w.actor(t, string(role)+" bot", role))
	}
	head := w.head(t)

	for _, role := range signoff.AgentRoles {
		for _, rq := range []request{
			{method: "POST", path: "/api/v1/cases/" + awaiting.ID + "/approvals", body: signed},
			{method: "GET", path: "/api/v1/cases/" + awaiting.ID + "/approval"},
			{method: "POST", path: "/api/v1/cases/" + approved.ID + "/merge"},
			{method: "POST", path: "/api/v1/keys", body: keyBody(t)},
		} {
			rq.token = tokens[role]
			got := do(t, srv, rq)
			if got.status != http.StatusForbidden {
				t.Fatalf("%s %s as %s: status = %d, want 403 (body %s)", rq.method, rq.path, role, got.status, got.body)
			}
			if p := got.problem(t); p.Code != signoff.EFORBIDDEN {
				t.Fatalf("%s %s as %s: code = %s", rq.method, rq.path, role, p.Code)
			}
		}
	}

	for _, want := range []signoff.Case{awaiting, approved} {
		c, err := store.GetCase(ctx, w.owner, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c.State != want.State || c.Version != want.Version {
			t.Fatalf("case %s is %s at version %d, want %s at %d", c.ID, c.State, c.Version, want.State, want.Version)
		}
		if apvs, err := store.ListApprovals(ctx, w.owner, c.ID); err != nil || len(apvs) != 0 {
			t.Fatalf("approvals of %s = %v, %v; want none", c.ID, apvs, err)
		}
	}
	if got := w.head(t); got != head {
		t.Fatalf("ledger head moved from %d to %d", head, got)
	}
	if ks, err := store.ListKeys(ctx, w.owner); err != nil || len(ks) != 1 || ks[0].ActorID != w.owner.ID {
		t.Fatalf("keys = %v, %v; want the owner's only", ks, err)
	}
	// The routes themselves are open to the owner: the refusals above are
	// the role's. The cases carry no verified candidate, so there is no
	// card to show or merge.
	for _, rq := range []request{
		{method: "GET", path: "/api/v1/cases/" + awaiting.ID + "/approval"},
		{method: "POST", path: "/api/v1/cases/" + approved.ID + "/merge"},
	} {
		rq.token = w.ownerToken
		if got := do(t, srv, rq); got.status != http.StatusConflict {
			t.Fatalf("%s %s as the owner: status = %d, want 409 (body %s)", rq.method, rq.path, got.status, got.body)
		}
	}
}

// TestDeploymentWebhook checks that the signature is the webhook's only
// credential: forged, replayed-late and unaddressed deliveries are refused
// alike and record nothing; a genuine one is recorded once however often
// it is delivered.
func TestDeploymentWebhook(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serveDesk(t, store)
	ctx := context.Background()
	secret := webhook.NewSecret()
	proj := w.dataProject(t)
	if _, err := store.SetRepoSettings(ctx, signoff.CLIActor(w.owner.WorkspaceID), proj.ID, signoff.RepoSettings{Path: t.TempDir(), WebhookSecret: secret}); err != nil {
		t.Fatalf("SetRepoSettings: %v", err)
	}
	// The secret is write-only.
	got := do(t, srv, request{method: "GET", path: "/api/v1/projects/" + proj.ID + "/repo", token: w.ownerToken})
	var rs signoff.RepoSettings
	got.decode(t, &rs)
	if strings.Contains(string(got.body), strings.TrimPrefix(secret, webhook.SecretPrefix)) || rs.WebhookSecret != "" || !rs.HasWebhookSecret {
		t.Fatalf("repository settings show the secret: %s", got.body)
	}

	now := time.Now()
	refused := []struct {
		name, project, secret string
		ts                    time.Time
		detail                string
	}{
		{"bad signature", proj.ID, webhook.NewSecret(), now, "signature"},
		{"stale timestamp", proj.ID, secret, now.Add(-10 * time.Minute), "timestamp"},
		{"unknown project", signoff.NewID(signoff.PrefixProject), secret, now, "signature"},
		{"project without a secret", w.proj.ID, secret, now, "signature"},
	}
	var forged httpapi.Problem
	for i, tt := range refused {
		got := do(t, srv, hookRequest(t, tt.project, tt.secret, "msg-refused-"+strings.ReplaceAll(tt.name, " ", "-"), tt.ts, deploymentBody))
		if got.status != http.StatusUnauthorized {
			t.Fatalf("%s: status = %d, want 401 (body %s)", tt.name, got.status, got.body)
		}
		checkShape(t, got)
		p := got.problem(t)
		if p.Code != signoff.EUNAUTHORIZED || !strings.Contains(p.Detail, tt.detail) {
			t.Fatalf("%s: problem = %+v, want %s mentioning %q", tt.name, p, signoff.EUNAUTHORIZED, tt.detail)
		}
		// A project that is unknown or has no secret answers exactly as
		// a forgery does.
		if i == 0 {
			forged = p
		} else if tt.detail == "signature" && (p.Code != forged.Code || p.Detail != forged.Detail) {
			t.Fatalf("%s: problem %+v differs from a forgery's %+v", tt.name, p, forged)
		}
	}
	if n := deploymentsOf(t, srv, w, proj.ID); n != 0 {
		t.Fatalf("refused webhooks recorded %d deployments", n)
	}

	hook := hookRequest(t, proj.ID, secret, "msg-1", now, deploymentBody)
	var first, again struct {
		Deployment signoff.Deployment `json:"deployment"`
		Created    bool               `json:"created"`
	}
	got = do(t, srv, hook)
	if got.status != http.StatusAccepted {
		t.Fatalf("first delivery: status = %d, want 202 (body %s)", got.status, got.body)
	}
	got.decode(t, &first)
	d := first.Deployment
	if !first.Created || d.ID != "msg-1" || d.ProjectID != proj.ID || d.WorkspaceID != w.ws.ID || d.Commit != deployedCommit ||
		d.Environment != "production" || d.Source != "webhook" {
		t.Fatalf("first delivery = %+v", first)
	}
	got = do(t, srv, hook)
	if got.status != http.StatusOK {
		t.Fatalf("repeated delivery: status = %d, want 200 (body %s)", got.status, got.body)
	}
	got.decode(t, &again)
	if again.Created || again.Deployment.ID != d.ID || !again.Deployment.ReceivedAt.Equal(d.ReceivedAt) {
		t.Fatalf("repeated delivery = %+v, first %+v", again, first)
	}
	if n := deploymentsOf(t, srv, w, proj.ID); n != 1 {
		t.Fatalf("deployments = %d, want 1", n)
	}
}

// deploymentsOf counts a project's deployments as its owner reads them.
func deploymentsOf(t *testing.T, srv *httptest.Server, w *workspace, project string) int {
	t.Helper()
	var list struct {
		Deployments []signoff.Deployment `json:"deployments"`
	}
	do(t, srv, request{method: "GET", path: "/api/v1/projects/" + project + "/deployments", token: w.ownerToken}).decode(t, &list)
	return len(list.Deployments)
}

// TestReporterDecisionLink checks that only the exact tracking secret of
// a case reaches its question: a link id with another case's secret, and
// garbage, are both "no case", alike and without a trace.
func TestReporterDecisionLink(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serveDesk(t, store)
	ctx := context.Background()
	var secrets [2]string
	for i := range secrets {
		_, _, s, err := store.SubmitReport(ctx, signoff.ReportInput{ProjectID: w.proj.ID, Text: "the coupon applies twice"})
		if err != nil {
			t.Fatal(err)
		}
		secrets[i] = s
	}
	// The first case's link id with the second case's secret symbols.
	idA, _, _ := strings.Cut(strings.TrimPrefix(secrets[0], identity.TrackingPrefix), "_")
	_, symB, _ := strings.Cut(strings.TrimPrefix(secrets[1], identity.TrackingPrefix), "_")
	spliced := identity.TrackingPrefix + idA + "_" + symB
	_, unknown, _ := identity.NewTracking()
	body := `{"question_digest":"` + strings.Repeat("0", 64) + `","answer":"yes"}`
	head := w.head(t)

	var first httpapi.Problem
	for i, tok := range []string{spliced, "garbage", unknown, "sot_garbage_" + strings.Repeat("a", 32)} {
		got := do(t, srv, request{method: "POST", path: "/api/v1/track/" + tok + "/decision", body: body})
		if got.status != http.StatusNotFound {
			t.Fatalf("token %d: status = %d, want 404 (body %s)", i, got.status, got.body)
		}
		p := got.problem(t)
		if i == 0 {
			first = p
		} else if p.Code != first.Code || p.Detail != first.Detail {
			t.Fatalf("token %d answers %+v, the spliced one %+v", i, p, first)
		}
	}
	// The genuine link reaches the case, which is not asking anything.
	if got := do(t, srv, request{method: "POST", path: "/api/v1/track/" + secrets[0] + "/decision", body: body}); got.status != http.StatusConflict {
		t.Fatalf("own link: status = %d, want 409 (body %s)", got.status, got.body)
	}
	if got := w.head(t); got != head {
		t.Fatalf("ledger head moved from %d to %d", head, got)
	}
}

// TestLoopStepsAreNotBareTransitions: the steps that carry evidence (a
// proposal run in the sandbox, a candidate, a verdict, a deployment found
// by ancestry) cannot be sent as a bare transition by anyone, so a
// recorder cannot mark a fix released without a deployment and an owner
// cannot skip a reproduction.
func TestLoopStepsAreNotBareTransitions(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serveDesk(t, store)
	reporter := w.actor(t, "rita", signoff.RoleReporter)
	merged := w.drive(t, w.newCase(t, signoff.KindBug, reporter.ID), reporter, append(toApproval, "approve", "merge")...)
	ticketed := w.drive(t, w.newCase(t, signoff.KindBug, reporter.ID), reporter, "start_triage", "ticket")
	triaging := w.drive(t, w.newCase(t, signoff.KindBug, reporter.ID), reporter, "start_triage")
	triager := w.token(t, w.actor(t, "triage bot", signoff.RoleTriager))
	recorder := w.token(t, w.actor(t, "recorder bot", signoff.RoleRecorder))
	reproducer := w.token(t, w.actor(t, "reproducer bot", signoff.RoleReproducer))
	owner := w.token(t, w.owner)
	head := w.head(t)
	for _, tc := range []struct {
		token, caseID, command string
	}{
		{recorder, merged.ID, "record_release"},
		{owner, merged.ID, "record_release"},
		{owner, ticketed.ID, "start_reproduction"},
		{reproducer, ticketed.ID, "start_reproduction"},
		// The triager's outcomes go through its tools and their gate.
		{triager, triaging.ID, "ticket"},
		{triager, triaging.ID, "drop"},
		{triager, triaging.ID, "request_triage_approval"},
	} {
		got := do(t, srv, request{method: "POST", path: "/api/v1/cases/" + tc.caseID + "/transitions", token: tc.token, body: `{"command":"` + tc.command + `"}`})
		if got.status != http.StatusForbidden {
			t.Errorf("%s on %s: status %d, want 403 (%s)", tc.command, tc.caseID, got.status, got.body)
		}
	}
	if w.head(t) != head {
		t.Error("a refused loop step changed the ledger")
	}
}
