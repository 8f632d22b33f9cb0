package bugdesk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/netguard"
	"github.com/signoff-dev/signoff/webhook"
	"github.com/signoff-dev/signoff/workflow"
)

// DeploymentEvent is the body of a deployment webhook.
type DeploymentEvent struct {
	Type string `json:"type"` // "deployment"
	Data struct {
		Commit      string `json:"commit"`
		Environment string `json:"environment"`
		URL         string `json:"url,omitempty"`
	} `json:"data"`
}

var commitRE = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// WebhookTolerance is how old (or how far ahead) a webhook timestamp may
// be.
const WebhookTolerance = 5 * time.Minute

// ReceiveWebhook authenticates a deployment webhook with the project's
// secret (Standard Webhooks), stores the deployment (a repeated delivery
// is stored once) and asks for reconciliation. Every signature problem is
// EUNAUTHORIZED; a stale timestamp says so.
func (d *Desk) ReceiveWebhook(ctx context.Context, projectID string, h http.Header, body []byte) (signoff.Deployment, bool, error) {
	ws, secret, err := d.Store.WebhookSecret(ctx, projectID)
	if err != nil {
		// An unknown project and a project without a secret answer the
		// same as a bad signature: the caller proved nothing.
		return signoff.Deployment{}, false, signoff.Errorf(signoff.EUNAUTHORIZED, "webhook signature does not verify")
	}
	key, err := webhook.ParseSecret(secret)
	if err != nil {
		return signoff.Deployment{}, false, fmt.Errorf("project %s webhook secret: %w", projectID, err)
	}
	id, _, err := webhook.Verify(key, h, body, d.now(), WebhookTolerance)
	switch {
	case errors.Is(err, webhook.ErrTimestamp):
		return signoff.Deployment{}, false, signoff.Errorf(signoff.EUNAUTHORIZED, "webhook timestamp is stale or in the future: refused (replays are not accepted)")
	case err != nil:
		return signoff.Deployment{}, false, signoff.Errorf(signoff.EUNAUTHORIZED, "webhook signature does not verify")
	}
	var ev DeploymentEvent
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		return signoff.Deployment{}, false, signoff.Errorf(signoff.EINVALID, "webhook body: %v", err)
	}
	if ev.Type != "deployment" {
		return signoff.Deployment{}, false, signoff.Errorf(signoff.EINVALID, "webhook type %q is not handled (want deployment)", ev.Type)
	}
	dep, created, err := d.recordDeployment(ctx, signoff.Deployment{ID: id, WorkspaceID: ws, ProjectID: projectID, Commit: ev.Data.Commit,
		Environment: ev.Data.Environment, URL: ev.Data.URL, Source: "webhook"})
	return dep, created, err
}

func (d *Desk) recordDeployment(ctx context.Context, dep signoff.Deployment) (signoff.Deployment, bool, error) {
	if !commitRE.MatchString(dep.Commit) {
		return dep, false, signoff.Errorf(signoff.EINVALID, "deployment commit must be a full lower-case commit id")
	}
	if dep.Environment == "" {
		dep.Environment = "production"
	}
	stored, created, err := d.Store.RecordDeployment(ctx, dep)
	if err != nil {
		return stored, false, err
	}
	// The store enqueued the reconciliation with the deployment. A desk
	// without a job queue (Enqueue nil) reconciles here instead.
	if created && d.Enqueue == nil {
		if err := d.Reconcile(ctx, stored.WorkspaceID, stored.ProjectID); err != nil {
			d.log().ErrorContext(ctx, "reconcile", "project_id", stored.ProjectID, "err", err)
		}
	}
	return stored, created, nil
}

// Deploy runs the project's deployer for a merged commit: the in-process
// one if set, else the deploy hook. Without either, deployments can only
// arrive by webhook.
//
// It deploys main's head as it is now (which contains merge), one deploy
// per project at a time, and nothing when a recorded deployment already
// contains the merge: jobs for two merges may run in either order, and a
// retried job must not deploy again.
func (d *Desk) Deploy(ctx context.Context, ws, projectID, merge string) error {
	unlock := d.lock("deploy:" + projectID)
	defer unlock()
	p, err := d.project(ctx, ws, projectID)
	if err != nil {
		return err
	}
	s := p.Settings
	deps, err := d.Store.ListDeployments(ctx, sys(ws), projectID, 50)
	if err != nil {
		return err
	}
	for _, dep := range deps {
		if ok, err := p.Repo.IsAncestor(ctx, merge, dep.Commit); err == nil && ok && slices.Contains(s.LiveEnvironments, dep.Environment) {
			return nil
		}
	}
	commit, err := p.Repo.RevParse(ctx, "refs/heads/"+s.MainBranch)
	if err != nil {
		return err
	}
	if ok, err := p.Repo.IsAncestor(ctx, merge, commit); err != nil || !ok {
		return fmt.Errorf("main (%s) does not contain merge %s: not deploying", short(commit), short(merge))
	}
	req := DeployRequest{WorkspaceID: ws, ProjectID: projectID, Settings: s, Commit: commit}
	if dp, ok := d.Deployers[projectID]; ok {
		return dp.Deploy(ctx, req)
	}
	if len(s.DeployHook) == 0 {
		return nil
	}
	return d.runHook(ctx, req)
}

// runHook runs the deploy hook and records the commit it says it deployed.
func (d *Desk) runHook(ctx context.Context, req DeployRequest) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, req.Settings.DeployHook[0], req.Settings.DeployHook[1:]...)
	cmd.Dir = req.Settings.Path
	cmd.Env = append(os.Environ(), "SIGNOFF_REPO="+req.Settings.Path, "SIGNOFF_COMMIT="+req.Commit, "SIGNOFF_BRANCH="+req.Settings.MainBranch)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("deploy hook: %w: %s", err, tailOf(errb.String(), 500))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	deployed := strings.TrimSpace(lines[len(lines)-1])
	_, _, err := d.recordDeployment(ctx, signoff.Deployment{ID: "hook-" + signoff.NewID(signoff.PrefixDeployment), WorkspaceID: req.WorkspaceID,
		ProjectID: req.ProjectID, Commit: deployed, Environment: req.Settings.WithDefaults().LiveEnvironments[0], URL: req.Settings.LiveURL, Source: "deploy_hook"})
	return err
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Reconcile checks the project's deployments against its merged fixes. A
// fix is live when its merge commit is an ancestor of a deployed commit;
// deployments of commits this repository does not know yet are kept and
// checked again on the next call. A deployment that carries the same tree
// as the merge (or as the release) without containing the merge commit is
// history rewritten after the fact: it is recorded as an observation, and
// it never marks a fix live or stands in for an approval.
func (d *Desk) Reconcile(ctx context.Context, ws, projectID string) error {
	unlock := d.lock("reconcile:" + projectID)
	defer unlock()
	p, err := d.project(ctx, ws, projectID)
	if err != nil {
		return err
	}
	loops, err := d.Store.ListLoops(ctx, sys(ws), projectID, workflow.BugMerged, workflow.BugReleased,
		workflow.BugAwaitingReporterConfirmation, workflow.BugVerified, workflow.BugUnconfirmed)
	if err != nil {
		return err
	}
	if len(loops) == 0 {
		return nil
	}
	deps, err := d.Store.ListDeployments(ctx, sys(ws), projectID, 200)
	if err != nil {
		return err
	}
	for _, l := range loops {
		if l.State.Merge == nil {
			continue
		}
		if err := d.reconcileCase(ctx, p, l.CaseID, deps); err != nil {
			d.log().ErrorContext(ctx, "reconcile case", "case_id", l.CaseID, "err", err)
		}
	}
	return nil
}

func (d *Desk) reconcileCase(ctx context.Context, p project, caseID string, deps []signoff.Deployment) error {
	unlock := d.lock(caseID)
	defer unlock()
	c, l, err := d.loop(ctx, sys(p.WS), caseID)
	if err != nil || l.State.Merge == nil {
		return err
	}
	m := l.State.Merge
	seen := map[string]bool{}
	for _, o := range l.State.Observed {
		seen[o] = true
	}
	var events []signoff.LoopEvent
	var live *signoff.Deployment
	// Oldest first, so the release is the first deployment that carried
	// the fix.
	for i := len(deps) - 1; i >= 0; i-- {
		dep := deps[i]
		if seen[dep.ID] || !slices.Contains(p.Settings.LiveEnvironments, dep.Environment) {
			continue // judged already, or not an environment reporters use
		}
		if _, err := p.Repo.RevParse(ctx, dep.Commit+"^{commit}"); err != nil {
			continue // not in this repository (yet): kept for a later pass
		}
		contains, err := p.Repo.IsAncestor(ctx, m.Commit, dep.Commit)
		if err != nil {
			return err
		}
		if contains {
			if c.State == workflow.BugMerged && live == nil {
				live = &dep
			}
			continue
		}
		tree, err := p.Repo.Tree(ctx, dep.Commit)
		if err != nil {
			return err
		}
		rewritten := tree == m.Tree
		if rel := l.State.Release; rel != nil && !rewritten {
			if rt, err := p.Repo.Tree(ctx, rel.Commit); err == nil && rt == tree {
				rewritten = true
			}
		}
		if rewritten {
			l.State.Observed = append(l.State.Observed, dep.ID)
			events = append(events, signoff.LoopEvent{Type: "release.history_rewritten", Payload: map[string]any{
				"deployment_id": dep.ID, "deployed": dep.Commit, "merge": m.Commit, "tree": tree,
				"note": "the deployed commit has the fix's tree but does not contain the merge commit: recorded as an observation only; it neither marks the fix live nor stands for an approval"}})
		}
	}
	u := signoff.LoopUpdate{CaseID: caseID, Version: l.Version, State: l.State, Events: events}
	if live == nil && c.State == workflow.BugReleased && l.State.Release != nil && l.State.Release.SmokeAt == nil {
		// Released before a stop, never smoke-checked: finish that step.
		if len(events) > 0 {
			if l, _, err = d.Store.AdvanceLoop(ctx, sys(p.WS), u); err != nil {
				return err
			}
		}
		return d.smokeAndAsk(ctx, p, caseID, l)
	}
	if live == nil {
		if len(events) == 0 {
			return nil
		}
		_, _, err = d.Store.AdvanceLoop(ctx, sys(p.WS), u)
		return err
	}
	rel := signoff.ReleaseRecord{DeploymentID: live.ID, Commit: live.Commit, Environment: live.Environment, URL: live.URL, At: live.ReceivedAt}
	if rel.URL == "" {
		rel.URL = p.Settings.LiveURL
	}
	u.State.Release = &rel
	u.State.Observed = append(u.State.Observed, live.ID)
	u.Command = "record_release"
	u.Events = append(u.Events, signoff.LoopEvent{Type: "release.observed", Payload: map[string]any{
		"deployment_id": live.ID, "deployed": live.Commit, "merge": m.Commit, "environment": live.Environment,
		"source": live.Source, "ancestry": "merge is an ancestor of the deployed commit", "evidence": signoff.EvidenceLive}})
	l, _, err = d.Store.AdvanceLoop(ctx, sys(p.WS), u)
	if err != nil {
		return err
	}
	return d.smokeAndAsk(ctx, p, caseID, l)
}

// smokeAndAsk runs the smoke checks against the live service and, if
// they pass, asks the reporter. A failing smoke check sends the case to a
// person: the reporter is not asked to try a fix that is not working.
func (d *Desk) smokeAndAsk(ctx context.Context, p project, caseID string, l signoff.BugLoop) error {
	rel := *l.State.Release
	results, passed := d.smoke(ctx, rel.URL, p.Settings.Smoke)
	now := d.now()
	rel.Smoke, rel.SmokePassed, rel.SmokeAt = results, passed, &now
	st := l.State
	st.Release = &rel
	ev := signoff.LoopEvent{Type: "release.smoke", Payload: map[string]any{"url": rel.URL, "passed": passed, "checks": results, "evidence": signoff.EvidenceLive}}
	u := signoff.LoopUpdate{CaseID: caseID, Version: l.Version, State: st, Events: []signoff.LoopEvent{ev}}
	if passed {
		st.AskedAt = &now
		u.State = st
		u.Command = "ask_reporter"
		u.Jobs = []signoff.JobRequest{{Args: signoff.ConfirmTimeoutJob{WorkspaceID: p.WS, CaseID: caseID, Round: st.Round},
			At: now.Add(time.Duration(p.Settings.ConfirmWindowHours) * time.Hour)},
			{Args: signoff.DuplicatesJob{WorkspaceID: p.WS, ProjectID: p.ID, Primary: caseID, Action: "ask", Round: st.Round}}}
	} else {
		u.Command, u.Note = "escalate", "the smoke check failed against the live service"
		if len(p.Settings.Smoke) == 0 {
			u.Note = "the project has no smoke checks: nothing was checked against the live service, so the reporter is not asked"
		}
	}
	if _, _, err := d.Store.AdvanceLoop(ctx, sys(p.WS), u); err != nil {
		return err
	}
	if passed {
		return d.askDuplicates(ctx, p, caseID)
	}
	return nil
}

// smoke runs each check once. No checks configured is a pass with nothing
// to show, and the event says there were none.
func (d *Desk) smoke(ctx context.Context, base string, checks []signoff.SmokeCheck) ([]signoff.SmokeResult, bool) {
	client := d.HTTP
	if client == nil {
		client = smokeClient()
	}
	out := []signoff.SmokeResult{}
	if len(checks) == 0 {
		// Fail closed: with nothing checked against the live service, the
		// reporter is not asked to try it; a person looks first.
		return []signoff.SmokeResult{{Name: "smoke", Detail: "the project has no smoke checks: nothing was checked against the live service"}}, false
	}
	ok := true
	for _, ch := range checks {
		start := time.Now()
		r := signoff.SmokeResult{Name: ch.Name}
		r.OK, r.Status, r.Detail = runCheck(ctx, client, base, ch)
		r.DurationMS = time.Since(start).Milliseconds()
		ok = ok && r.OK
		out = append(out, r)
	}
	return out, ok
}

// smokeClient is what smoke checks run with. It follows no redirect: a
// check judges the live service's own answer, and a redirect would take
// the request (and the body a failed check quotes into the ledger)
// wherever the answer points, the cloud's metadata endpoint among them.
// Nor does it connect to a cloud metadata address, whatever a name
// resolved to: the dialer checks the address it actually connects to.
func smokeClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("smoke check: address %s: %w", address, err)
			}
			if netguard.Classify(ap.Addr()) == netguard.Metadata {
				return fmt.Errorf("smoke check: refused %s, a cloud metadata address", ap.Addr())
			}
			return nil
		}}
	tr.DialContext = dialer.DialContext
	return &http.Client{Timeout: 10 * time.Second, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func runCheck(ctx context.Context, client *http.Client, base string, ch signoff.SmokeCheck) (bool, int, string) {
	if base == "" {
		return false, 0, "no live URL: the deployment named none and the project has no live_url"
	}
	method := ch.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(base, "/")+ch.Path, strings.NewReader(ch.Body))
	if err != nil {
		return false, 0, err.Error()
	}
	if ch.Body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	want := ch.ExpectStatus
	if want == 0 {
		want = http.StatusOK
	}
	if resp.StatusCode != want {
		return false, resp.StatusCode, fmt.Sprintf("status %d, want %d", resp.StatusCode, want)
	}
	if ch.ExpectBody != "" && !strings.Contains(string(body), ch.ExpectBody) {
		return false, resp.StatusCode, fmt.Sprintf("body does not contain %q: %s", ch.ExpectBody, tailOf(strings.TrimSpace(string(body)), 200))
	}
	return true, resp.StatusCode, "ok"
}
