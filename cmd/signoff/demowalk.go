package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/webhook"
)

// shopDeployer is the demo's continuous deployment for ShopLite: it
// rebuilds and restarts the production server from the merged commit and
// then tells the desk, as any CD system would, with a signed webhook
// carrying the commit the server itself reports on /version.
type shopDeployer struct {
	srv    *shoplite.Server
	hook   string
	secret string
}

func (sd *shopDeployer) Deploy(ctx context.Context, req bugdesk.DeployRequest) error {
	dep, err := sd.srv.Deploy(ctx, req.Settings.Path, req.Commit)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]any{"type": "deployment", "data": map[string]string{"commit": dep.Commit, "environment": "production", "url": dep.URL}})
	if err != nil {
		return err
	}
	key, err := webhook.ParseSecret(sd.secret)
	if err != nil {
		return err
	}
	var n [8]byte
	if _, err := rand.Read(n[:]); err != nil {
		return err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, sd.hook, bytes.NewReader(body))
	if err != nil {
		return err
	}
	for k, v := range webhook.Headers(key, "msg_deploy_"+hex.EncodeToString(n[:]), time.Now(), body) {
		hreq.Header[k] = v
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return fmt.Errorf("deployment webhook: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("deployment webhook: %s: %s", resp.Status, b)
	}
	return nil
}

// walker drives the demo's HTTP API as the people in the loop would.
type walker struct {
	d    *demo
	e    *env
	ctx  context.Context
	hc   *http.Client
	last time.Time
	seq  int64
	// notify, in the bug walk, is where notifications go; the triage gate
	// is then answered in (stand-in) Slack.
	notify *demoNotify
}

// stageTimeout bounds how long the walk waits for one stage.
const stageTimeout = 5 * time.Minute

func (w *walker) call(method, path, token string, in, out any) (int, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(w.ctx, method, w.d.url+path, body)
	if err != nil {
		return 0, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := w.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	if out != nil {
		return resp.StatusCode, json.Unmarshal(b, out)
	}
	return resp.StatusCode, nil
}

// waitState polls the case until it is in one of states; a state in fail
// ends the walk.
func (w *walker) waitState(caseID string, states []string, fail ...string) (signoff.Case, error) {
	deadline := time.Now().Add(stageTimeout)
	for {
		var c signoff.Case
		if _, err := w.call("GET", "/api/v1/cases/"+caseID, w.d.ownerToken, nil, &c); err != nil {
			return c, err
		}
		if slices.Contains(states, c.State) {
			return c, nil
		}
		if slices.Contains(fail, c.State) {
			return c, fmt.Errorf("case %s went to %s, not %v", caseID, c.State, states)
		}
		if time.Now().After(deadline) {
			return c, fmt.Errorf("case %s is still %s after %s, waiting for %v", caseID, c.State, stageTimeout, states)
		}
		select {
		case <-w.ctx.Done():
			return c, w.ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (w *walker) loop(caseID string) (signoff.BugLoop, error) {
	var l signoff.BugLoop
	_, err := w.call("GET", "/api/v1/cases/"+caseID+"/loop", w.d.ownerToken, nil, &l)
	return l, err
}

// stage prints one line: the stage, its evidence type, what happened and
// how long it took by the ledger's clock (from the previous stage's last
// event to this one's).
func (w *walker) stage(caseID, name, evidence, what string) error {
	at := w.last
	for {
		var out struct {
			Events []signoff.Event `json:"events"`
		}
		if _, err := w.call("GET", fmt.Sprintf("/api/v1/cases/%s/events?limit=500&after=%d", caseID, w.seq), w.d.ownerToken, nil, &out); err != nil {
			return err
		}
		if len(out.Events) == 0 {
			break
		}
		last := out.Events[len(out.Events)-1]
		at, w.seq = last.Time, last.Seq
	}
	took := "-"
	if !w.last.IsZero() {
		took = at.Sub(w.last).Round(time.Millisecond).String()
	}
	w.last = at
	fmt.Fprintf(w.e.stdout, "%-22s %-10s %9s  %s\n", name, "["+evidence+"]", took, what)
	return nil
}

func (d *demo) walkBug(ctx context.Context, e *env, log *slog.Logger) error {
	stopJobs, err := d.s.StartJobs(ctx, d.st.workers(log), 4)
	if err != nil {
		return err
	}
	defer stopJobs(context.Background())
	nt, err := d.startNotify(ctx)
	if err != nil {
		return fmt.Errorf("notifications: %w", err)
	}
	defer nt.close()
	srv := httpapi.NewServer(d.ln.Addr().String(), handler(d.s, log, d.st))
	go srv.Serve(d.ln)
	defer srv.Close()

	start := time.Now()
	w := &walker{d: d, e: e, ctx: ctx, hc: &http.Client{Timeout: 2 * time.Minute}, notify: nt}
	fmt.Fprintf(e.stdout, "Walking the ShopLite coupon bug (desk %s, ShopLite %s, repository %s)\n", d.url, d.live.URL, d.sample.Dir)
	fmt.Fprintf(e.stdout, "%-22s %-10s %9s  %s\n", "stage", "evidence", "took", "what happened")
	err = w.walk()
	fmt.Fprintf(e.stdout, "wall time: %s\n", time.Since(start).Round(time.Millisecond))
	if err != nil {
		fmt.Fprintf(e.stdout, "final: FAILED: %v\n", err)
		return err
	}
	sum, err := nt.summary(ctx, d)
	if err != nil {
		fmt.Fprintf(e.stdout, "final: FAILED: %v\n", err)
		return err
	}
	fmt.Fprintln(e.stdout, sum)
	res, err := d.s.VerifyLedger(ctx, d.ws.ID, nil)
	if err != nil {
		return fmt.Errorf("ledger verify: %w", err)
	}
	fmt.Fprintf(e.stdout, "ledger: %d events, chain verified\n", res.Events)
	fmt.Fprintln(e.stdout, "final: verified")
	return nil
}

func (w *walker) walk() error {
	d := w.d
	// 1. The report: a person's words, here written by the demo.
	var rep struct {
		CaseID   string `json:"case_id"`
		Tracking struct {
			Token string `json:"token"`
		} `json:"tracking"`
	}
	if _, err := w.call("POST", "/api/v1/projects/"+d.shop.ID+"/reports", "", map[string]string{
		"text":   "Coupon SAVE10 is applied twice at checkout: my 100.00 lamp cost 81.00 instead of 90.00. Contact me at ana@example.com",
		"device": "Firefox 133", "os": "Linux", "app_version": "1.0.0",
		"steps": "add the lamp to the cart, apply SAVE10, check out",
	}, &rep); err != nil {
		return err
	}
	id, tok := rep.CaseID, rep.Tracking.Token
	if err := w.stage(id, "report", signoff.EvidenceSimulated, "report text written by the demo; airlocked (the e-mail address is redacted) and case "+id+" opened"); err != nil {
		return err
	}

	// 2. Triage by the builtin crew; a person answers the gate if asked.
	c, err := w.waitState(id, []string{"ticketed", "reproducing", "awaiting_reporter_repro", "awaiting_triage_approval"}, "dropped", "duplicate", "needs_info", "needs_human")
	if err != nil {
		return err
	}
	how := "the builtin triage crew ticketed it"
	if c.State == "awaiting_triage_approval" {
		if w.notify != nil {
			if err := w.answerGate(w.notify, id); err != nil {
				return err
			}
			how = "the builtin triage crew asked the human gate; the demo operator approved in chat: a signed Slack command quoting the card's digest (simulated person; signature checked live)"
		} else {
			if err := w.decideGate(id); err != nil {
				return err
			}
			how = "the builtin triage crew asked the human gate; the demo operator approved (simulated person)"
		}
	}
	if err := w.stage(id, "triage", signoff.EvidenceLive, how); err != nil {
		return err
	}

	// 3. Reproduction: the authored test, run on main in the sandbox.
	if _, err := w.waitState(id, []string{"awaiting_reporter_repro"}, "needs_human"); err != nil {
		return err
	}
	l, err := w.loop(id)
	if err != nil {
		return err
	}
	h := l.State.Harnesses[len(l.State.Harnesses)-1]
	if err := w.stage(id, "reproduction", signoff.EvidenceAuthored, fmt.Sprintf("test written by people (authored); it fails on main %s in the sandbox (live): harness %s", short(h.Base), short(h.Digest))); err != nil {
		return err
	}

	// 4. A member of staff reads the test's source and approves it (the
	// SYNKAI rule): nothing is fixed on a test no person has read.
	v, err := w.staffReviews(id, d.operatorToken)
	if err != nil {
		return err
	}
	if err := w.stage(id, "staff: test reviewed", signoff.EvidenceSimulated, fmt.Sprintf("the demo operator read the test source (%d file(s), %d static finding(s)) and approved it (simulated person): review digest %s",
		len(v.TestFiles), len(v.Findings), v.ReviewDigest)); err != nil {
		return err
	}

	// 5. The reporter recognises their bug; with both agreed, the harness
	// freezes and the fix starts.
	if err := w.reporterSays(tok, "yes", ""); err != nil {
		return err
	}
	if _, err := w.waitState(id, []string{"reproduced", "fixing", "verifying"}); err != nil {
		return err
	}
	if err := w.stage(id, "reporter: it is my bug", signoff.EvidenceSimulated, "the demo answers as the reporter; reporter and staff agree: the harness is frozen (digest on the ledger)"); err != nil {
		return err
	}

	// 6. The false fix is rejected, 7. the genuine one verified.
	if err := w.waitCandidate(id, 1, "REJECTED"); err != nil {
		return err
	}
	l, _ = w.loop(id)
	if err := w.stage(id, "false fix", signoff.EvidenceAuthored, "candidate 1 (authored) REJECTED by the frozen harness (live): "+l.State.Candidates[0].Reason); err != nil {
		return err
	}
	if _, err := w.waitState(id, []string{"awaiting_approval"}, "needs_human"); err != nil {
		return err
	}
	l, _ = w.loop(id)
	gen := l.State.Candidates[len(l.State.Candidates)-1]
	if gen.Verdict != "VERIFIED" {
		return fmt.Errorf("candidate %d is %s", gen.Attempt, gen.Verdict)
	}
	if err := w.stage(id, "genuine fix", signoff.EvidenceAuthored, fmt.Sprintf("candidate %d (authored) VERIFIED (live), fingerprint %s; reviewer note recorded (advisory)", gen.Attempt, short(gen.Fingerprint))); err != nil {
		return err
	}

	// 8. Approval of the exact card (its test source included), signed
	// with the operator's key.
	var card bugdesk.CardView
	if _, err := w.call("GET", "/api/v1/cases/"+id+"/approval", d.operatorToken, nil, &card); err != nil {
		return err
	}
	if dg, err := card.Card.Digest(); err != nil || dg != card.SubjectDigest {
		return fmt.Errorf("the card's digest %s is not the subject digest %s", dg, card.SubjectDigest)
	}
	st := approval.NewStatement(id, card.SubjectDigest, approval.Approve, card.Policy.Digest(), d.operator.ID, time.Now(), card.Policy.TTL())
	env, err := approval.Sign(st, d.opKey)
	if err != nil {
		return err
	}
	if _, err := w.call("POST", "/api/v1/cases/"+id+"/approvals", d.operatorToken, map[string]any{"envelope": env, "via": "cli-signed-yes"}, nil); err != nil {
		return err
	}
	if _, err := w.waitState(id, []string{"approved"}); err != nil {
		return err
	}
	if err := w.stage(id, "signed approval", signoff.EvidenceSimulated, "the demo operator signed subject "+short(card.SubjectDigest)+" with an Ed25519 key (real signature, simulated person, via --yes)"); err != nil {
		return err
	}

	// 9. The merge, a person's act.
	var m signoff.MergeRecord
	if _, err := w.call("POST", "/api/v1/cases/"+id+"/merge", d.operatorToken, nil, &m); err != nil {
		return err
	}
	if err := w.stage(id, "merge", signoff.EvidenceSimulated, "the demo operator merged; merge commit "+short(m.Commit)+" on main (git, live)"); err != nil {
		return err
	}

	// 10. Redeploy, ancestry and smoke.
	if _, err := w.waitState(id, []string{"awaiting_reporter_confirmation"}, "needs_human"); err != nil {
		return err
	}
	l, _ = w.loop(id)
	rel := l.State.Release
	if err := w.stage(id, "release", signoff.EvidenceLive, fmt.Sprintf("ShopLite rebuilt and redeployed at %s; signed webhook; merge is an ancestor of deployed %s", rel.URL, short(rel.Commit))); err != nil {
		return err
	}
	passed := 0
	for _, s := range rel.Smoke {
		if s.OK {
			passed++
		}
	}
	if !rel.SmokePassed {
		return fmt.Errorf("smoke failed: %+v", rel.Smoke)
	}
	if err := w.stage(id, "live smoke", signoff.EvidenceLive, fmt.Sprintf("%d/%d smoke checks passed against the live service", passed, len(rel.Smoke))); err != nil {
		return err
	}

	// 11. The reporter's last word.
	if err := w.reporterSays(tok, "yes", ""); err != nil {
		return err
	}
	if _, err := w.waitState(id, []string{"verified"}); err != nil {
		return err
	}
	return w.stage(id, "reporter: fix works", signoff.EvidenceSimulated, "the demo answers as the reporter: verified")
}

func (w *walker) waitCandidate(id string, attempt int, verdict string) error {
	deadline := time.Now().Add(stageTimeout)
	for time.Now().Before(deadline) {
		l, err := w.loop(id)
		if err != nil && !errors.Is(err, context.Canceled) {
			var c signoff.Case
			w.call("GET", "/api/v1/cases/"+id, w.d.ownerToken, nil, &c)
			if c.State == "needs_human" {
				return fmt.Errorf("case %s needs a person", id)
			}
		}
		for _, c := range l.State.Candidates {
			if c.Attempt == attempt && c.Verdict != "" {
				if c.Verdict != verdict {
					return fmt.Errorf("candidate %d is %s (%s), want %s", attempt, c.Verdict, c.Reason, verdict)
				}
				return nil
			}
		}
		select {
		case <-w.ctx.Done():
			return w.ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("no verdict for candidate %d after %s", attempt, stageTimeout)
}

// staffReviews reads the case's reproduction as the person with token,
// checks that its review digest is the digest of what it holds, and
// approves it over that digest.
func (w *walker) staffReviews(id, token string) (bugdesk.HarnessView, error) {
	var v bugdesk.HarnessView
	if _, err := w.call("GET", "/api/v1/cases/"+id+"/harness", token, nil, &v); err != nil {
		return v, err
	}
	if dg, err := v.Subject().Digest(); err != nil || dg != v.ReviewDigest {
		return v, fmt.Errorf("the reproduction's digest %s is not its review digest %s (%v)", dg, v.ReviewDigest, err)
	}
	if len(v.TestFiles) == 0 {
		return v, fmt.Errorf("the reproduction of %s shows no test source", id)
	}
	_, err := w.call("POST", "/api/v1/cases/"+id+"/harness/review", token, bugdesk.HarnessDecision{ReviewDigest: v.ReviewDigest, Decision: signoff.HarnessApprove,
		Note: "the test checks the total a coupon leaves, which is what the reporter described"}, nil)
	return v, err
}

func (w *walker) reporterSays(tok, answer, text string) error {
	var page bugdesk.TrackView
	if _, err := w.call("GET", "/api/v1/track/"+tok, "", nil, &page); err != nil {
		return err
	}
	if page.Digest == "" {
		return fmt.Errorf("the tracking page asks nothing (state %s)", page.State)
	}
	_, err := w.call("POST", "/api/v1/track/"+tok+"/decision", "", bugdesk.Answer{Digest: page.Digest, Answer: answer, Text: text}, nil)
	return err
}

// decideGate approves the triage gate's pending decision as the operator.
func (w *walker) decideGate(id string) error {
	var tr struct {
		Decisions []signoff.Decision `json:"decisions"`
	}
	if _, err := w.call("GET", "/api/v1/cases/"+id+"/triage", w.d.operatorToken, nil, &tr); err != nil {
		return err
	}
	for _, dec := range tr.Decisions {
		if dec.Status == signoff.DecisionPending {
			_, err := w.call("POST", "/api/v1/decisions/"+dec.ID+"/decide", w.d.operatorToken, map[string]any{"subject_digest": dec.SubjectDigest, "approve": true}, nil)
			return err
		}
	}
	return fmt.Errorf("case %s waits at the gate but has no pending decision", id)
}
