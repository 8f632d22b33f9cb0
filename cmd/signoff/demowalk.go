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
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/client"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/ratelimit"
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
	// changeCases are the change walk's cases, for the desk's links.
	changeCases []string

	mu      sync.Mutex
	clients map[string]*client.Client // by token; see api
}

// stageTimeout bounds how long the walk waits for one stage.
const stageTimeout = 5 * time.Minute

// api is the API client that calls as the holder of token ("" for the
// public endpoints). The walk plays the people of the loop: every call is
// marked as made by a simulated person (the demo's server honours this; no
// other does).
func (w *walker) api(token string) (*client.Client, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.clients[token]; ok {
		return c, nil
	}
	c, err := client.New(w.d.url, token, client.WithHTTPClient(w.hc),
		client.WithHeader(signoff.SimulatedPersonHeader, signoff.SimulatedPersonValue))
	if err != nil {
		return nil, fmt.Errorf("demo API client: %w", err)
	}
	if w.clients == nil {
		w.clients = map[string]*client.Client{}
	}
	w.clients[token] = c
	return c, nil
}

// call sends one API request as the holder of token and returns the HTTP
// status of a refused request (0 for any other outcome).
func (w *walker) call(method, path, token string, in, out any) (int, error) {
	c, err := w.api(token)
	if err != nil {
		return 0, err
	}
	err = c.Do(w.ctx, method, path, in, out)
	if p, ok := errors.AsType[*client.Problem](err); ok {
		return p.Status, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return 0, err
}

// caseState reads a case as the owner.
func (w *walker) caseState(id string) (signoff.Case, error) {
	c, err := w.api(w.d.ownerToken)
	if err != nil {
		return signoff.Case{}, err
	}
	cs, err := c.Case(w.ctx, id)
	if err != nil {
		return cs, fmt.Errorf("read case %s: %w", id, err)
	}
	return cs, nil
}

// waitState polls the case until it is in one of states; a state in fail
// ends the walk.
func (w *walker) waitState(caseID string, states []string, fail ...string) (signoff.Case, error) {
	deadline := time.Now().Add(stageTimeout)
	for {
		c, err := w.caseState(caseID)
		if err != nil {
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
	c, err := w.api(w.d.ownerToken)
	if err != nil {
		return signoff.BugLoop{}, err
	}
	l, err := c.Loop(w.ctx, caseID)
	if err != nil {
		return l, fmt.Errorf("read the loop of case %s: %w", caseID, err)
	}
	return l, nil
}

// stage prints one line: the stage, its evidence type, what happened and
// how long it took by the ledger's clock (from the previous stage's last
// event to this one's).
func (w *walker) stage(caseID, name, evidence, what string) error {
	c, err := w.api(w.d.ownerToken)
	if err != nil {
		return err
	}
	at := w.last
	for {
		events, err := c.Events(w.ctx, caseID, w.seq, 500)
		if err != nil {
			return fmt.Errorf("read the events of case %s: %w", caseID, err)
		}
		if len(events) == 0 {
			break
		}
		last := events[len(events)-1]
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

// bugStory is one bug the walk reports, in a reporter's words written by
// the demo (simulated), and how that reporter answers.
type bugStory struct {
	name   string
	report map[string]string
	// staffNote is the member of staff's note when they approve the test.
	staffNote string
	// stillBroken, when set, is the reporter's first answer to "Does the
	// live fix work for you?": no, with this text. The case reopens and
	// is walked again from its reproduction; the next live fix is
	// confirmed.
	stillBroken string
}

// ShopLite's bugs, as their reporters tell them. The authored walk has
// fixtures for the coupon bug only; a model walks all three, and the
// overflow's reporter finds the first live fix incomplete.
var (
	couponStory = bugStory{name: "coupon", report: map[string]string{
		"text":   "Coupon SAVE10 is applied twice at checkout: my 100.00 lamp cost 81.00 instead of 90.00. Contact me at ana@example.com",
		"device": "Firefox 133", "os": "Linux", "app_version": "1.0.0",
		"steps": "add the lamp to the cart, apply SAVE10, check out",
	}, staffNote: "the test checks the total a coupon leaves, which is what the reporter described"}
	negativeStory = bugStory{name: "negative total", report: map[string]string{
		"text":   "Negative total at checkout: coupon SAVE300 on my 2.00 sticker made the total -1.00. A total should never go below zero.",
		"device": "Safari 18", "os": "macOS 15", "app_version": "1.0.0",
		"steps": "add one sticker (2.00), apply SAVE300, check out",
	}, staffNote: "the test checks that a coupon worth more than the cart leaves nothing to pay, as reported"}
	overflowStory = bugStory{name: "overflow", report: map[string]string{
		"text":   "Bulk order through the checkout API: two lines at price_cents 5000000000000000000, quantity 1 each, came back with total_cents -8446744073709551616 instead of an error.",
		"device": "curl 8.5", "os": "Debian 13", "app_version": "1.0.0",
		"steps": "POST /checkout with two items of price_cents 5000000000000000000 and quantity 1",
	}, staffNote: "the test checks that a subtotal too large for the shop's integers is refused, as reported",
		stillBroken: "Still wrong on the live shop: one line with price_cents 4000000000000000000 and quantity 5 checks out with total_cents 1553255926290448384, less than one item costs. It should be refused like the two-line order."}
)

// walkResult is how one story ended.
type walkResult struct {
	story  bugStory
	caseID string
	rounds int
}

func (d *demo) walkBug(ctx context.Context, e *env, log *slog.Logger, stories []bugStory) error {
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
	cfg := serveConfig{simulatedPeople: true}
	if len(stories) > 1 {
		// The walk plays several reporters from one address: the public
		// intake's limit per address is for the public, not for them.
		lim := ratelimit.Limit{Rate: 100, Burst: 100}
		cfg.budgets.IntakePerAddress, cfg.budgets.IntakePerProject = lim, lim
	}
	srv := httpapi.NewServer(d.ln.Addr().String(), handlerWith(d.s, log, d.st, nil, false, cfg))
	go srv.Serve(d.ln)
	defer srv.Close()

	start := time.Now()
	w := &walker{d: d, e: e, ctx: ctx, hc: &http.Client{Timeout: 2 * time.Minute}, notify: nt}
	if len(stories) == 1 {
		fmt.Fprintf(e.stdout, "Walking the ShopLite %s bug (desk %s, ShopLite %s, repository %s)\n", stories[0].name, d.url, d.live.URL, d.sample.Dir)
	} else {
		fmt.Fprintf(e.stdout, "Walking ShopLite's %d bugs, one after the other, with the reproducer and fixer on %s (desk %s, ShopLite %s, repository %s)\n",
			len(stories), d.agents.describe(), d.url, d.live.URL, d.sample.Dir)
	}
	fmt.Fprintf(e.stdout, "%-22s %-10s %9s  %s\n", "stage", "evidence", "took", "what happened")
	var done []walkResult
	for i, b := range stories {
		if len(stories) > 1 {
			fmt.Fprintf(e.stdout, "-- bug %d of %d: %s\n", i+1, len(stories), b.name)
		}
		var res walkResult
		res, err = w.walkStory(b)
		if err != nil {
			err = fmt.Errorf("bug %q: %w", b.name, err)
			break
		}
		done = append(done, res)
	}
	fmt.Fprintf(e.stdout, "wall time: %s\n", time.Since(start).Round(time.Millisecond))
	if d.agents.model() {
		for _, r := range done {
			fmt.Fprintf(e.stdout, "%s\n", w.callSummary(r))
		}
	}
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
	ids := make([]string, 0, len(done))
	for _, r := range done {
		ids = append(ids, r.caseID)
	}
	d.printDesk(ctx, e, ids)
	fmt.Fprintln(e.stdout, "final: verified")
	return nil
}

// callSummary says how many model calls each role of a walked case made,
// from the transcripts the runtime recorded.
func (w *walker) callSummary(r walkResult) string {
	ctx, ws := w.ctx, w.d.ws.ID
	ts, err := w.d.s.ListTasks(ctx, signoff.SystemActor(ws), signoff.TaskFilter{CaseID: r.caseID, Limit: 200})
	if err != nil {
		return fmt.Sprintf("model calls for %s: cannot list its tasks: %v", r.story.name, err)
	}
	calls := map[string]int{}
	tasks := map[string]int{}
	evidence := map[string]bool{}
	for _, t := range ts {
		if t.Kind != bugdesk.RoleReproducer && t.Kind != bugdesk.RoleFixer {
			continue
		}
		mcs, err := w.d.s.ListCalls(ctx, signoff.SystemActor(ws), t.ID)
		if err != nil {
			return fmt.Sprintf("model calls for %s: %v", r.story.name, err)
		}
		tasks[t.Kind]++
		calls[t.Kind] += len(mcs)
		for _, mc := range mcs {
			evidence[mc.Provider+" "+mc.Evidence] = true
		}
	}
	return fmt.Sprintf("model calls, bug %s (case %s, %d round(s)): reproducer %d in %d task(s), fixer %d in %d task(s), %d in all [%s]",
		r.story.name, r.caseID, r.rounds, calls[bugdesk.RoleReproducer], tasks[bugdesk.RoleReproducer], calls[bugdesk.RoleFixer], tasks[bugdesk.RoleFixer],
		calls[bugdesk.RoleReproducer]+calls[bugdesk.RoleFixer], strings.Join(slices.Sorted(maps.Keys(evidence)), ", "))
}

// walkStory walks one bug from its report to the reporter's last word.
func (w *walker) walkStory(b bugStory) (walkResult, error) {
	d := w.d
	res := walkResult{story: b}
	// 1. The report: a person's words, here written by the demo.
	public, err := w.api("")
	if err != nil {
		return res, err
	}
	rep, err := public.SubmitReport(w.ctx, d.shop.ID, b.report)
	if err != nil {
		return res, fmt.Errorf("report the %s bug: %w", b.name, err)
	}
	id, tok := rep.CaseID, rep.Tracking.Token
	res.caseID = id
	// Each case's stages are timed from its own events.
	w.seq, w.last = 0, time.Time{}
	what := "report text written by the demo; airlocked and case " + id + " opened"
	if strings.Contains(b.report["text"], "@") {
		what = "report text written by the demo; airlocked (the e-mail address is redacted) and case " + id + " opened"
	}
	if err := w.stage(id, "report", signoff.EvidenceSimulated, what); err != nil {
		return res, err
	}

	// 2. Triage by the builtin crew; a person answers the gate if asked.
	c, err := w.waitState(id, []string{"ticketed", "reproducing", "awaiting_reporter_repro", "awaiting_triage_approval"}, "dropped", "duplicate", "needs_info", "needs_human")
	if err != nil {
		return res, err
	}
	how := "the builtin triage crew ticketed it"
	if c.State == "awaiting_triage_approval" {
		if w.notify != nil {
			if err := w.answerGate(w.notify, id); err != nil {
				return res, err
			}
			how = "the builtin triage crew asked the human gate; the demo operator approved in chat: a signed Slack command quoting the card's digest (simulated person; signature checked live)"
		} else {
			if err := w.decideGate(id); err != nil {
				return res, err
			}
			how = "the builtin triage crew asked the human gate; the demo operator approved (simulated person)"
		}
	}
	if err := w.stage(id, "triage", signoff.EvidenceLive, how); err != nil {
		return res, err
	}

	for round := 1; ; round++ {
		res.rounds = round
		if err := w.reproduceAndFix(id, tok, b); err != nil {
			return res, err
		}
		if err := w.ship(id); err != nil {
			return res, err
		}
		// The reporter's last word: the live fix works, or (once, when
		// the story says so) it does not and the case reopens.
		if round == 1 && b.stillBroken != "" {
			if err := w.reporterSays(tok, "no", b.stillBroken); err != nil {
				return res, err
			}
			if _, err := w.waitState(id, []string{"reopened", "reproducing", "awaiting_reporter_repro"}, "needs_human"); err != nil {
				return res, err
			}
			if err := w.stage(id, "reporter: still broken", signoff.EvidenceSimulated, "the demo answers as the reporter: no, with what still fails; the confirmations are cleared and the case reopens for round 2"); err != nil {
				return res, err
			}
			continue
		}
		if err := w.reporterSays(tok, "yes", ""); err != nil {
			return res, err
		}
		if _, err := w.waitState(id, []string{"verified"}); err != nil {
			return res, err
		}
		return res, w.stage(id, "reporter: fix works", signoff.EvidenceSimulated, "the demo answers as the reporter: verified")
	}
}

// reproduceAndFix walks one round from the reproducer's test to a
// verified candidate waiting for approval. The evidence of the test and
// of each candidate is what the loop recorded for them: authored
// fixtures, a model (live) or a recorded model run (replayed).
func (w *walker) reproduceAndFix(id, tok string, b bugStory) error {
	// 3. Reproduction: the reproducer's test, run on main in the sandbox.
	if _, err := w.waitState(id, []string{"awaiting_reporter_repro"}, "needs_human"); err != nil {
		return w.needsPerson(id, err)
	}
	l, err := w.loop(id)
	if err != nil {
		return err
	}
	h := l.State.Harnesses[len(l.State.Harnesses)-1]
	if err := w.stage(id, "reproduction", h.Evidence, fmt.Sprintf("test %s; it fails on main %s in the sandbox (live): harness %s", wroteTest(h.Evidence), short(h.Base), short(h.Digest))); err != nil {
		return err
	}

	// 4. A member of staff reads the test's source and approves it (the
	// SYNKAI rule): nothing is fixed on a test no person has read.
	v, err := w.staffReviewsNote(id, w.d.operatorToken, b.staffNote)
	if err != nil {
		return err
	}
	if err := w.stage(id, "staff: test reviewed", signoff.EvidenceSimulated, fmt.Sprintf("the demo operator read the test source (%d file(s), %d static finding(s)) and approved it (simulated person): review digest %s",
		len(v.TestFiles), len(v.Findings), v.ReviewDigest)); err != nil {
		return err
	}

	// 5. The reporter recognises their bug; with both agreed, the harness
	// freezes and the fix starts.
	seen := len(l.State.Candidates)
	if err := w.reporterSays(tok, "yes", ""); err != nil {
		return err
	}
	if _, err := w.waitState(id, []string{"reproduced", "fixing", "verifying", "awaiting_approval"}, "needs_human"); err != nil {
		return w.needsPerson(id, err)
	}
	if err := w.stage(id, "reporter: it is my bug", signoff.EvidenceSimulated, "the demo answers as the reporter; reporter and staff agree: the harness is frozen (digest on the ledger)"); err != nil {
		return err
	}

	// 6. Each candidate's verdict from the frozen harness, until one is
	// verified.
	for i := seen; ; i++ {
		cand, err := w.verdictOf(id, i)
		if err != nil {
			return err
		}
		if cand.Verdict != "VERIFIED" {
			name := "rejected fix"
			if cand.Evidence == signoff.EvidenceAuthored {
				name = "false fix"
			}
			if err := w.stage(id, name, cand.Evidence, fmt.Sprintf("candidate %d (%s) %s by the frozen harness (live): %s", cand.Attempt, wroteFix(cand.Evidence), cand.Verdict, cand.Reason)); err != nil {
				return err
			}
			continue
		}
		if _, err := w.waitState(id, []string{"awaiting_approval"}, "needs_human"); err != nil {
			return w.needsPerson(id, err)
		}
		name := "verified fix"
		if cand.Evidence == signoff.EvidenceAuthored {
			name = "genuine fix"
		}
		return w.stage(id, name, cand.Evidence, fmt.Sprintf("candidate %d (%s) VERIFIED (live), fingerprint %s; reviewer note recorded (advisory)", cand.Attempt, wroteFix(cand.Evidence), short(cand.Fingerprint)))
	}
}

// ship walks a verified candidate to production: the signed approval,
// the merge, the redeploy and the live smoke checks.
func (w *walker) ship(id string) error {
	d := w.d
	// 8. Approval of the exact card (its test source included), signed
	// with the operator's key.
	op, err := w.api(d.operatorToken)
	if err != nil {
		return err
	}
	raw, err := op.ApprovalCard(w.ctx, id)
	if err != nil {
		return fmt.Errorf("read the approval card of case %s: %w", id, err)
	}
	var card bugdesk.CardView
	if err := json.Unmarshal(raw, &card); err != nil {
		return fmt.Errorf("the approval card of case %s: %w", id, err)
	}
	if dg, err := card.Card.Digest(); err != nil || dg != card.SubjectDigest {
		return fmt.Errorf("the card's digest %s is not the subject digest %s", dg, card.SubjectDigest)
	}
	st := approval.NewStatement(id, card.SubjectDigest, approval.Approve, card.Policy.Digest(), d.operator.ID, time.Now(), card.Policy.TTL())
	env, err := approval.Sign(st, d.opKey)
	if err != nil {
		return err
	}
	envelope, err := json.Marshal(env)
	if err != nil {
		return err
	}
	if _, err := op.Approve(w.ctx, id, client.ApprovalRequest{Envelope: envelope, Via: "cli-signed-yes"}); err != nil {
		return fmt.Errorf("approve case %s: %w", id, err)
	}
	if _, err := w.waitState(id, []string{"approved"}); err != nil {
		return err
	}
	if err := w.stage(id, "signed approval", signoff.EvidenceSimulated, "the demo operator signed subject "+short(card.SubjectDigest)+" with an Ed25519 key (real signature, simulated person, via --yes)"); err != nil {
		return err
	}

	// 9. The merge, a person's act.
	m, err := op.Merge(w.ctx, id)
	if err != nil {
		return fmt.Errorf("merge case %s: %w", id, err)
	}
	if err := w.stage(id, "merge", signoff.EvidenceSimulated, "the demo operator merged; merge commit "+short(m.Commit)+" on main (git, live)"); err != nil {
		return err
	}

	// 10. Redeploy, ancestry and smoke.
	if _, err := w.waitState(id, []string{"awaiting_reporter_confirmation"}, "needs_human"); err != nil {
		return err
	}
	l, err := w.loop(id)
	if err != nil {
		return err
	}
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
	return w.stage(id, "live smoke", signoff.EvidenceLive, fmt.Sprintf("%d/%d smoke checks passed against the live service", passed, len(rel.Smoke)))
}

// wroteTest and wroteFix say who wrote a reproduction or a candidate, by
// the evidence the loop recorded for it.
func wroteTest(evidence string) string {
	switch evidence {
	case signoff.EvidenceAuthored:
		return "written by people (authored)"
	case signoff.EvidenceLive:
		return "written by the model (live)"
	case signoff.EvidenceReplayed:
		return "written by a model in a recorded run (replayed)"
	}
	return "of evidence " + evidence
}

func wroteFix(evidence string) string {
	switch evidence {
	case signoff.EvidenceAuthored:
		return "authored"
	case signoff.EvidenceLive:
		return "the model's, live"
	case signoff.EvidenceReplayed:
		return "a recorded model's, replayed"
	}
	return evidence
}

// verdictOf waits for the loop's candidate at index i to get a verdict.
// A case handed to a person meanwhile ends the wait with why.
func (w *walker) verdictOf(id string, i int) (signoff.Candidate, error) {
	deadline := time.Now().Add(stageTimeout)
	for time.Now().Before(deadline) {
		l, err := w.loop(id)
		if err != nil {
			return signoff.Candidate{}, err
		}
		if i < len(l.State.Candidates) && l.State.Candidates[i].Verdict != "" {
			return l.State.Candidates[i], nil
		}
		c, err := w.caseState(id)
		if err != nil {
			return signoff.Candidate{}, err
		}
		if c.State == "needs_human" {
			return signoff.Candidate{}, w.needsPerson(id, fmt.Errorf("case %s needs a person before candidate %d had a verdict", id, i+1))
		}
		select {
		case <-w.ctx.Done():
			return signoff.Candidate{}, w.ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return signoff.Candidate{}, fmt.Errorf("no verdict for candidate %d after %s", i+1, stageTimeout)
}

// needsPerson adds to err why the case went to a person, when it did:
// the reason its last agent task was closed with.
func (w *walker) needsPerson(id string, err error) error {
	ts, lerr := w.d.s.ListTasks(w.ctx, signoff.SystemActor(w.d.ws.ID), signoff.TaskFilter{CaseID: id, Status: signoff.TaskClosed, Limit: 200})
	if lerr != nil {
		return err
	}
	for i := len(ts) - 1; i >= 0; i-- {
		if ts[i].Outcome == signoff.OutcomeNeedsHuman {
			return fmt.Errorf("%w: %s task %s: %s", err, ts[i].Kind, ts[i].ID, ts[i].Reason)
		}
	}
	return err
}

// staffReviews reads the case's reproduction as the person with token,
// checks that its review digest is the digest of what it holds, and
// approves it over that digest.
func (w *walker) staffReviews(id, token string) (bugdesk.HarnessView, error) {
	return w.staffReviewsNote(id, token, couponStory.staffNote)
}

// staffReviewsNote is staffReviews with the reviewer's note.
func (w *walker) staffReviewsNote(id, token, note string) (bugdesk.HarnessView, error) {
	var v bugdesk.HarnessView
	c, err := w.api(token)
	if err != nil {
		return v, err
	}
	raw, err := c.Harness(w.ctx, id)
	if err != nil {
		return v, fmt.Errorf("read the reproduction of case %s: %w", id, err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("the reproduction of case %s: %w", id, err)
	}
	if dg, err := v.Subject().Digest(); err != nil || dg != v.ReviewDigest {
		return v, fmt.Errorf("the reproduction's digest %s is not its review digest %s (%v)", dg, v.ReviewDigest, err)
	}
	if len(v.TestFiles) == 0 {
		return v, fmt.Errorf("the reproduction of %s shows no test source", id)
	}
	if err := c.ReviewHarness(w.ctx, id, bugdesk.HarnessDecision{ReviewDigest: v.ReviewDigest, Decision: signoff.HarnessApprove,
		Note: note}, nil); err != nil {
		return v, fmt.Errorf("review the reproduction of case %s: %w", id, err)
	}
	return v, nil
}

func (w *walker) reporterSays(tok, answer, text string) error {
	public, err := w.api("")
	if err != nil {
		return err
	}
	raw, err := public.Track(w.ctx, tok)
	if err != nil {
		return fmt.Errorf("read the tracking page: %w", err)
	}
	var page bugdesk.TrackView
	if err := json.Unmarshal(raw, &page); err != nil {
		return fmt.Errorf("the tracking page: %w", err)
	}
	if page.Digest == "" {
		return fmt.Errorf("the tracking page asks nothing (state %s)", page.State)
	}
	if err := public.TrackDecision(w.ctx, tok, bugdesk.Answer{Digest: page.Digest, Answer: answer, Text: text}); err != nil {
		return fmt.Errorf("answer on the tracking page: %w", err)
	}
	return nil
}

// decideGate approves the triage gate's pending decision as the operator.
func (w *walker) decideGate(id string) error {
	op, err := w.api(w.d.operatorToken)
	if err != nil {
		return err
	}
	decisions, err := op.Decisions(w.ctx, id)
	if err != nil {
		return fmt.Errorf("read the triage of case %s: %w", id, err)
	}
	for _, dec := range decisions {
		if dec.Status == signoff.DecisionPending {
			if err := op.Decide(w.ctx, dec.ID, dec.SubjectDigest, true); err != nil {
				return fmt.Errorf("decide %s: %w", dec.ID, err)
			}
			return nil
		}
	}
	return fmt.Errorf("case %s waits at the gate but has no pending decision", id)
}

// printDesk says how to open a walk's cases on the web desk: the walk's
// server stops with it, so `signoff serve` on the walk's database serves
// them again, at the address the walk used, and a one-time link signs the
// operator in.
func (d *demo) printDesk(ctx context.Context, e *env, caseIDs []string) {
	db := filepath.Join(d.dir, "signoff.db")
	fmt.Fprintf(e.stdout, "\nOpen the walk on the web desk (the walk's server has stopped; this serves its database again):\n  signoff serve --db %s --addr %s\n", db, d.ln.Addr())
	if code, _, err := d.s.CreateLoginLink(ctx, d.operator.ID, loginLinkTTL); err == nil {
		fmt.Fprintf(e.stdout, "  sign in     %s/login/%s   (the operator, once, within 15 minutes)\n", d.url, code)
	}
	fmt.Fprintf(e.stdout, "  or later    signoff login-link --db %s --actor %s --url %s\n", db, d.operator.ID, d.url)
	for _, id := range caseIDs {
		fmt.Fprintf(e.stdout, "  case        %s/cases/%s\n", d.url, id)
	}
}
