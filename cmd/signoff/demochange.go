package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/client"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/shoplite"
)

// demoFlagEnv is the flag environment of ShopLite's production.
const demoFlagEnv = "prod"

// demoPolicy is the demo workspace's change policy: prod flags and the
// VERSION file may change, one signature of the operator, any time of
// the week; compensating rollbacks of flags are pre-approved.
func demoPolicy(approver string) string {
	return `# The demo workspace's change policy (signoff change policy shows it).
protected_targets: ["flag:prod/payments_*"]
allowed_targets: ["flag:prod/*", "file:VERSION"]
environments: [prod]
min_reason_length: 20
approvals:
  required: 1
  group: [` + approver + `]
no_self_approval: true
proposer_cannot_approve: true
windows:
  - days: [mon, tue, wed, thu, fri, sat, sun]
    from: "00:00"
    to: "24:00"
    tz: UTC
approval_ttl_hours: 23
emergency_bypass:
  roles: [owner]
  minutes: 30
preapproved_rollbacks: [flag]
`
}

// walkChange runs the checkout incident through the change desk over the
// demo's HTTP API: the first plan disables the flag and holds, the second
// turns it back on and fails its health check (restored automatically),
// and a compensating rollback of the first restores its original state.
func (d *demo) walkChange(ctx context.Context, e *env, log *slog.Logger) error {
	srv := httpapi.NewServer(d.ln.Addr().String(), handlerWith(d.s, log, d.st, nil, false, serveConfig{simulatedPeople: true}))
	go srv.Serve(d.ln)
	defer srv.Close()

	start := time.Now()
	w := &walker{d: d, e: e, ctx: ctx, hc: &http.Client{Timeout: 5 * time.Minute}}
	fmt.Fprintf(e.stdout, "Walking the checkout incident through the change desk (desk %s, ShopLite %s)\n", d.url, d.live.URL)
	fmt.Fprintf(e.stdout, "%-22s %-10s %9s  %s\n", "stage", "evidence", "took", "what happened")
	outcomes, err := w.walkChange()
	fmt.Fprintf(e.stdout, "wall time: %s\n", time.Since(start).Round(time.Millisecond))
	if err != nil {
		fmt.Fprintf(e.stdout, "final: FAILED: %v\n", err)
		return err
	}
	res, err := d.s.VerifyLedger(ctx, d.ws.ID, nil)
	if err != nil {
		return fmt.Errorf("ledger verify: %w", err)
	}
	fmt.Fprintf(e.stdout, "ledger: %d events, chain verified\n", res.Events)
	d.printDesk(ctx, e, w.changeCases)
	fmt.Fprintf(e.stdout, "final: %s\n", strings.Join(outcomes, ", "))
	return nil
}

// checkout probes ShopLite's live checkout once, as a customer would.
func (w *walker) checkout() (int, string, error) {
	req, err := http.NewRequestWithContext(w.ctx, "POST", w.d.live.URL+"/checkout",
		strings.NewReader(`{"items":[{"sku":"lamp","price_cents":10000,"quantity":1}]}`))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, strings.TrimSpace(string(b)), nil
}

func (w *walker) expectCheckout(status int) (string, error) {
	got, body, err := w.checkout()
	if err != nil {
		return "", err
	}
	if got != status {
		return "", fmt.Errorf("ShopLite checkout answered %d (%s), expected %d", got, body, status)
	}
	return fmt.Sprintf("checkout answers %d (%s)", got, firstN(body, 60)), nil
}

func firstN(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// signChange signs the change card as the demo operator (a simulated
// person; the Ed25519 signature is real).
func (w *walker) signChange(caseID string) (signoff.Case, error) {
	op, err := w.api(w.d.operatorToken)
	if err != nil {
		return signoff.Case{}, err
	}
	raw, err := op.ApprovalCard(w.ctx, caseID)
	if err != nil {
		return signoff.Case{}, fmt.Errorf("read the approval card of change %s: %w", caseID, err)
	}
	var card struct {
		changedesk.Card
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &card); err != nil {
		return signoff.Case{}, fmt.Errorf("the approval card of change %s: %w", caseID, err)
	}
	plan, err := change.DecodePlan(card.Plan)
	if err != nil {
		return signoff.Case{}, err
	}
	digest, err := change.PlanDigest(plan)
	if err != nil {
		return signoff.Case{}, err
	}
	if digest != card.SubjectDigest {
		return signoff.Case{}, fmt.Errorf("the card's plan digests to %s, the server asks for %s", digest, card.SubjectDigest)
	}
	st := approval.NewStatement(caseID, digest, approval.Approve, card.PolicyDigest, w.d.operator.ID, time.Now(), card.Policy.TTL())
	env, err := approval.Sign(st, w.d.opKey)
	if err != nil {
		return signoff.Case{}, err
	}
	envelope, err := json.Marshal(env)
	if err != nil {
		return signoff.Case{}, err
	}
	out, err := op.Approve(w.ctx, caseID, client.ApprovalRequest{Envelope: envelope, Via: "cli-signed-yes"})
	if err != nil {
		return out.Case, fmt.Errorf("approve change %s: %w", caseID, err)
	}
	return out.Case, nil
}

func (w *walker) execute(caseID string) (changedesk.Execution, error) {
	var x changedesk.Execution
	op, err := w.api(w.d.operatorToken)
	if err != nil {
		return x, err
	}
	if err := op.Execute(w.ctx, caseID, &x); err != nil {
		return x, fmt.Errorf("execute change %s: %w", caseID, err)
	}
	return x, nil
}

// changeView reads a change case's view.
func (w *walker) changeView(c *client.Client, caseID string) (changeView, error) {
	var v changeView
	raw, err := c.Change(w.ctx, caseID)
	if err != nil {
		return v, fmt.Errorf("read change %s: %w", caseID, err)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("the view of change %s: %w", caseID, err)
	}
	return v, nil
}

func passed(r changedesk.HealthReport) string {
	ok := 0
	for _, p := range r.Probes {
		if p.OK {
			ok++
		}
	}
	return fmt.Sprintf("%d/%d probes passed", ok, len(r.Probes))
}

func (w *walker) walkChange() ([]string, error) {
	d := w.d
	flagTarget := change.Target{Kind: change.KindFlag, Env: demoFlagEnv, Name: shoplite.CheckoutFlag}.String()
	var outcomes []string

	// 0. The incident: someone turned the new payment flow on in prod
	// with direct database access (the CLI's path, outside the desk).
	f, err := d.s.GetFlag(w.ctx, d.owner, d.shop.ID, demoFlagEnv, shoplite.CheckoutFlag)
	if err != nil {
		return nil, err
	}
	if _, _, err := d.s.SetFlag(w.ctx, signoff.CLIActor(d.ws.ID), signoff.FlagWrite{ProjectID: d.shop.ID, Env: demoFlagEnv,
		Key: shoplite.CheckoutFlag, Value: json.RawMessage("true"), ExpectedVersion: f.Version,
		Reason: "demo: the incident (a person turned the new payment flow on in prod)"}); err != nil {
		return nil, err
	}
	what, err := w.expectCheckout(http.StatusInternalServerError)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w.e.stdout, "%-22s %-10s %9s  %s is on; ShopLite reads it over OFREP: %s\n", "incident", "["+signoff.EvidenceSimulated+"]", "-", flagTarget, what)

	// 1. The request and the builtin planner's plan.
	owner, err := w.api(d.ownerToken)
	if err != nil {
		return nil, err
	}
	created, err := owner.RequestChange(w.ctx, d.shop.ID, client.ChangeRequest{
		Reason: "Disable " + shoplite.CheckoutFlag + " in prod: checkout answers 500 since the new payment flow went live",
		Plan:   "builtin"})
	if err != nil {
		return nil, fmt.Errorf("request the first change: %w", err)
	}
	first := created.Case.ID
	w.changeCases = append(w.changeCases, first)
	if pe := created.PlannerError; pe != nil {
		return nil, fmt.Errorf("the builtin planner failed: %s: %s", pe.Code, pe.Detail)
	}
	if created.Case.State != "awaiting_approval" {
		return nil, fmt.Errorf("change %s is %s after planning, not awaiting_approval", first, created.Case.State)
	}
	view, err := w.changeView(owner, first)
	if err != nil {
		return nil, err
	}
	var rev change.Result
	if err := json.Unmarshal(view.Loop.State.Review, &rev); err != nil {
		return nil, err
	}
	if err := w.stage(first, "request, plan, review", signoff.EvidenceLive, fmt.Sprintf("request %s; the planner agent (builtin provider, through the runtime) drafted %s := false (plan %s); policy review: %d of %d rules passed",
		first, flagTarget, short(view.Loop.State.PlanDigest), countOK(rev), len(rev.Rules))); err != nil {
		return nil, err
	}

	// The advisory reviewer's note on the card (builtin, deterministic).
	if view, err = w.changeView(owner, first); err != nil {
		return nil, err
	}
	note := "no note"
	if strings.Contains(view.Loop.State.ReviewNote, "shares no word") {
		note = "it points out that the health check probes /healthz, which does not exercise checkout"
	} else if view.Loop.State.ReviewNote != "" {
		note = "noted, no caveat"
	}
	if err := w.stage(first, "advisory review", signoff.EvidenceLive, "the builtin reviewer's note on the card (advisory, not a verdict): "+note); err != nil {
		return nil, err
	}

	// 2. A person signs the exact plan digest.
	c, err := w.signChange(first)
	if err != nil {
		return nil, err
	}
	if c.State != "approved" {
		return nil, fmt.Errorf("change %s is %s after the approval", first, c.State)
	}
	if err := w.stage(first, "signed approval", signoff.EvidenceSimulated, "the demo operator signed plan digest "+short(view.Loop.State.PlanDigest)+" (a simulated person; the Ed25519 signature is real)"); err != nil {
		return nil, err
	}

	// 3. The gate, the flag write, the health check, the receipt.
	x, err := w.execute(first)
	if err != nil {
		return nil, err
	}
	if x.Outcome != changedesk.OutcomeExecuted {
		return nil, fmt.Errorf("change %s: %s, expected executed", first, x.Outcome)
	}
	outcomes = append(outcomes, x.Outcome)
	probe, err := w.expectCheckout(http.StatusOK)
	if err != nil {
		return nil, err
	}
	if err := w.stage(first, "gate, apply, health", signoff.EvidenceLive, fmt.Sprintf("gate passed %d checks; flag written; health %s; receipt %s (DSSE); %s",
		len(x.Predicate.GateChecks), passed(x.Predicate.Health), x.Receipt.ID, probe)); err != nil {
		return nil, err
	}

	// 4. A second plan, drafted by a person, turns the flow back on with a
	// health check on checkout itself: it fails, and the gate restores the
	// flag on its own.
	if created, err = owner.RequestChange(w.ctx, d.shop.ID, client.ChangeRequest{
		Reason: "Turn " + shoplite.CheckoutFlag + " back on in prod: the payment provider says v2 is fixed"}); err != nil {
		return nil, fmt.Errorf("request the second change: %w", err)
	}
	second := created.Case.ID
	w.changeCases = append(w.changeCases, second)
	hc := change.HealthCheck{Kind: change.HealthHTTP, Method: "POST", URL: d.live.URL + "/checkout",
		Body: `{"items":[{"sku":"lamp","price_cents":10000,"quantity":1}]}`, ExpectStatus: 200, WindowSeconds: 4, IntervalSeconds: 2}
	planned, err := owner.Plan(w.ctx, second, map[string]any{
		"target": flagTarget, "params": json.RawMessage(`{"value":true}`), "health_check": hc})
	if err != nil {
		return nil, fmt.Errorf("plan change %s: %w", second, err)
	}
	if planned.Case.State != "awaiting_approval" {
		return nil, fmt.Errorf("change %s is %s after planning", second, planned.Case.State)
	}
	if err := w.stage(second, "second plan", signoff.EvidenceSimulated, "request "+second+": a person's plan sets the flag on, health check POST /checkout expecting 200; review passed"); err != nil {
		return nil, err
	}
	if _, err := w.signChange(second); err != nil {
		return nil, err
	}
	x2, err := w.execute(second)
	if err != nil {
		return nil, err
	}
	if x2.Outcome != changedesk.OutcomeRolledBack || x2.Predicate.Restored == nil || x2.Predicate.Restored.Content != x2.Predicate.Before.Content {
		return nil, fmt.Errorf("change %s: %s, expected rolled_back to the before-state", second, x2.Outcome)
	}
	outcomes = append(outcomes, x2.Outcome)
	probe, err = w.expectCheckout(http.StatusOK)
	if err != nil {
		return nil, err
	}
	detail := ""
	for _, p := range x2.Predicate.Health.Probes {
		if !p.OK {
			detail = p.Detail
		}
	}
	if err := w.stage(second, "apply, health FAILS", signoff.EvidenceLive, fmt.Sprintf("signed (simulated person), gate passed, flag on; health %s (%s); restored automatically; receipt %s; %s",
		passed(x2.Predicate.Health), firstN(detail, 50), x2.Receipt.ID, probe)); err != nil {
		return nil, err
	}

	// 5. A compensating rollback of the first change (a drill). The policy
	// pre-approves flag rollbacks, so it runs at once through the gate.
	var rb struct {
		Case      signoff.Case          `json:"case"`
		Execution *changedesk.Execution `json:"execution"`
	}
	if err := owner.Rollback(w.ctx, first, "Drill: roll the first change back and prove the restored state equals the original", &rb); err != nil {
		return nil, fmt.Errorf("roll change %s back: %w", first, err)
	}
	if rb.Execution == nil || rb.Execution.Outcome != changedesk.OutcomeExecuted || rb.Execution.Predicate.RestoredMatchesOriginal == nil || !*rb.Execution.Predicate.RestoredMatchesOriginal {
		return nil, fmt.Errorf("the compensating rollback %s is %s and did not restore the original state (execution %+v)", rb.Case.ID, rb.Case.State, rb.Execution)
	}
	w.changeCases = append(w.changeCases, rb.Case.ID)
	orig, err := w.waitState(first, []string{"reverted"})
	if err != nil {
		return nil, err
	}
	outcomes = append(outcomes, orig.State)
	probe, err = w.expectCheckout(http.StatusInternalServerError)
	if err != nil {
		return nil, err
	}
	p := rb.Execution.Predicate
	if err := w.stage(rb.Case.ID, "compensating rollback", signoff.EvidenceLive, fmt.Sprintf("%s (pre-approved by policy) restored content %s == original %s; %s is reverted; receipt %s; %s: the incident's state, which is what a rollback restores",
		rb.Case.ID, short(p.RestoredContentDigest), short(p.OriginalContentDigest), first, rb.Execution.Receipt.ID, probe)); err != nil {
		return nil, err
	}
	return outcomes, nil
}

func countOK(r change.Result) int {
	n := 0
	for _, x := range r.Rules {
		if x.OK {
			n++
		}
	}
	return n
}
