package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/client"
)

// The change desk's commands are API clients like approve: the server
// drafts, reviews and executes; the approval is signed here.

func runChange(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "change", args, "request", "plan", "show", "approve", "execute", "rollback", "policy")
	if err != nil {
		return err
	}
	switch verb {
	case "request":
		return runChangeRequest(ctx, e, rest)
	case "plan":
		return runChangePlan(ctx, e, rest)
	case "show":
		return runChangeShow(ctx, e, rest)
	case "approve":
		return runApprove(ctx, e, rest)
	case "execute":
		return runChangeExecute(ctx, e, rest)
	case "rollback":
		return runChangeRollback(ctx, e, rest)
	}
	return runChangePolicy(ctx, e, rest)
}

func runChangeRequest(ctx context.Context, e *env, args []string) error {
	var sf serverFlags
	var project, reason, title, incident string
	var builtin bool
	fs := newFlags("change request", "signoff change request --project ID --reason TEXT [--title T] [--incident CASE] [--builtin]")
	fs.StringVar(&project, "project", "", "the project whose target changes (required)")
	fs.StringVar(&reason, "reason", "", "what to change and why (required; at least the policy's min_reason_length characters, 20 by default)")
	fs.StringVar(&title, "title", "", "a short title (default: the reason's first line)")
	fs.StringVar(&incident, "incident", "", "the case id of the incident that prompted it")
	fs.BoolVar(&builtin, "builtin", false, "draft the plan at once with the builtin planner (supports enable/disable/set of a flag)")
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if err := required(fs, e, "project", project, "reason", reason); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	in := client.ChangeRequest{Title: title, Reason: reason, Incident: incident}
	if builtin {
		in.Plan = "builtin"
	}
	out, err := c.RequestChange(ctx, project, in)
	if err != nil {
		return err
	}
	d := &display{}
	fmt.Fprintf(e.stdout, "change request %s opened: %s\n", d.line(out.Case.ID), d.line(out.Case.State))
	if out.PlannerError != nil {
		fmt.Fprintf(e.stdout, "the builtin planner could not draft a plan: %s\n", d.line(out.PlannerError.Detail))
		fmt.Fprintf(e.stdout, "draft one with: signoff change plan --case %s --file proposal.json\n", out.Case.ID)
	} else if builtin {
		fmt.Fprintf(e.stdout, "next: signoff change show --case %s\n", out.Case.ID)
	}
	return nil
}

func runChangePlan(ctx context.Context, e *env, args []string) error {
	var sf serverFlags
	var caseID, file string
	var builtin bool
	fs := newFlags("change plan", "signoff change plan --case ID (--builtin | --file PROPOSAL.json)")
	fs.StringVar(&caseID, "case", "", "the change case (required)")
	fs.BoolVar(&builtin, "builtin", false, "draft with the builtin planner")
	fs.StringVar(&file, "file", "", `a proposal: {"target", "params", "health_check", "rollback" (runbooks only)}; "-" reads stdin`)
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if err := required(fs, e, "case", caseID); err != nil {
		return err
	}
	if builtin == (file != "") {
		fmt.Fprintln(e.stderr, "give exactly one of --builtin and --file")
		fs.Usage()
		return errUsage
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	var in any = map[string]bool{"builtin": true}
	if file != "" {
		b, err := readInput(e, file)
		if err != nil {
			return err
		}
		in = b
	}
	out, err := c.Plan(ctx, caseID, in)
	if err != nil {
		return err
	}
	d := &display{}
	fmt.Fprintf(e.stdout, "plan %s (digest %s): case %s is %s\n", d.line(out.Loop.State.PlanID), d.line(out.Loop.State.PlanDigest), d.line(out.Case.ID), d.line(out.Case.State))
	printReview(e.stdout, d, out.Loop.State.Review)
	return nil
}

func readInput(e *env, name string) ([]byte, error) {
	var r io.Reader = e.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, signoff.Errorf(signoff.EINVALID, "%v", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, 1<<20+1))
	if err != nil {
		return nil, err
	}
	if len(b) > 1<<20 {
		return nil, signoff.Errorf(signoff.ETOOLARGE, "%s is larger than 1 MiB", name)
	}
	return b, nil
}

func printReview(w io.Writer, d *display, raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var res change.Result
	if err := json.Unmarshal(raw, &res); err != nil {
		fmt.Fprintf(w, "review: (unreadable: %v)\n", err)
		return
	}
	verdict := "PASSED"
	if !res.OK {
		verdict = "FAILED"
	}
	fmt.Fprintf(w, "Policy review %s (%d rules, every one evaluated):\n", verdict, len(res.Rules))
	for _, r := range res.Rules {
		mark := "ok  "
		if !r.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "  %s %-22s %s\n", mark, d.line(r.Rule), d.line(r.Detail))
	}
}

// changeView is GET /cases/{id}/change.
type changeView struct {
	Case     signoff.Case         `json:"case"`
	Loop     signoff.ChangeLoop   `json:"loop"`
	Plans    []signoff.ChangePlan `json:"plans"`
	Receipts []signoff.Receipt    `json:"receipts"`
}

func runChangeShow(ctx context.Context, e *env, args []string) error {
	var asJSON bool
	caseID, c, err := caseCommand(e, "change show", "signoff change show --case ID [--json]", "the change case (required)", args,
		func(fs *flag.FlagSet) []*string {
			fs.BoolVar(&asJSON, "json", false, "print the raw JSON")
			return nil
		})
	if err != nil {
		return err
	}
	raw, err := c.Change(ctx, caseID)
	if err != nil {
		return err
	}
	if asJSON {
		_, err := e.stdout.Write(append(raw, '\n'))
		return err
	}
	var v changeView
	if err := json.Unmarshal(raw, &v); err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected answer: %v", err)
	}
	d := &display{}
	w := e.stdout
	fmt.Fprintf(w, "Change %s: %s\n", d.line(v.Case.ID), d.line(v.Case.Title))
	fmt.Fprintf(w, "State:   %s\n", d.line(v.Case.State))
	fmt.Fprintf(w, "Reason:  %s\n", d.line(v.Loop.State.Reason))
	if v.Loop.State.RevertOf != "" {
		fmt.Fprintf(w, "Reverts: %s\n", d.line(v.Loop.State.RevertOf))
	}
	if v.Loop.State.RevertedBy != "" {
		fmt.Fprintf(w, "Reverted by: %s\n", d.line(v.Loop.State.RevertedBy))
	}
	for _, p := range v.Plans {
		cur := ""
		if p.ID == v.Loop.State.PlanID {
			cur = " (current)"
		}
		fmt.Fprintf(w, "Plan %s%s by %s via %s, digest %s:\n", d.line(p.ID), cur, d.line(p.Proposer), d.line(p.Via), d.line(p.Digest))
		fmt.Fprintf(w, "%s\n", d.text(indentJSON(p.Body)))
	}
	printReview(w, d, v.Loop.State.Review)
	if v.Loop.State.ApprovedDigest != "" {
		how := fmt.Sprintf("by approvals %s", strings.Join(v.Loop.State.ApprovalIDs, ", "))
		if v.Loop.State.Preapproved {
			how = "by the policy (pre-approved rollback)"
		}
		fmt.Fprintf(w, "Approved digest %s %s\n", d.line(v.Loop.State.ApprovedDigest), d.line(how))
	}
	for _, r := range v.Receipts {
		b, err := changedesk.OpenReceipt(r, nil)
		if err != nil {
			fmt.Fprintf(w, "Receipt %s: unreadable (%v)\n", d.line(r.ID), err)
			continue
		}
		fmt.Fprintf(w, "Receipt %s (%s, digest %s, signature not checked here: signoff evidence export and verify check it offline): %s\n",
			d.line(r.ID), d.line(r.Kind), d.line(r.Digest), d.line(b.Outcome))
		fmt.Fprintf(w, "  before %s  after %s  restored %s\n", d.line(b.Before.Digest), d.line(digestOf(b.After)), d.line(digestOf(b.Restored)))
		fmt.Fprintf(w, "  health %s (%d probes)\n", passFail(b.Health.Passed), len(b.Health.Probes))
		for _, p := range b.Health.Probes {
			fmt.Fprintf(w, "    %s %s status %d %s\n", p.At.Format(time.RFC3339), passFail(p.OK), p.Status, d.line(p.Detail))
		}
		if b.RestoredMatchesOriginal != nil {
			fmt.Fprintf(w, "  restored content %s == original %s: %t\n", d.line(b.RestoredContentDigest), d.line(b.OriginalContentDigest), *b.RestoredMatchesOriginal)
		}
	}
	return nil
}

func digestOf(s *changedesk.State) string {
	if s == nil {
		return "-"
	}
	return s.Digest
}

func passFail(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

func indentJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "  ", "  ")
	if err != nil {
		return string(raw)
	}
	return "  " + string(b)
}

func runChangeExecute(ctx context.Context, e *env, args []string) error {
	caseID, c, err := caseCommand(e, "change execute", "signoff change execute --case ID", "the approved change case (required)", args, nil)
	if err != nil {
		return err
	}
	var x changedesk.Execution
	if err := c.Execute(ctx, caseID, &x); err != nil {
		return err
	}
	printExecution(e.stdout, &display{}, x)
	return nil
}

func printExecution(w io.Writer, d *display, x changedesk.Execution) {
	b := x.Predicate
	fmt.Fprintf(w, "gate passed: %s\n", d.line(strings.Join(b.GateChecks, ", ")))
	fmt.Fprintf(w, "applied %s to %s: before %s, after %s\n", d.line(b.Kind), d.line(b.Target), d.line(b.Before.Digest), d.line(digestOf(b.After)))
	fmt.Fprintf(w, "health check %s (%d probes)\n", passFail(b.Health.Passed), len(b.Health.Probes))
	if b.Restored != nil {
		fmt.Fprintf(w, "restored automatically: %s\n", d.line(b.Restored.Digest))
	}
	fmt.Fprintf(w, "outcome %s; case %s is %s\n", d.line(x.Outcome), d.line(x.Case.ID), d.line(x.Case.State))
	fmt.Fprintf(w, "receipt %s (DSSE, digest %s)\n", d.line(x.Receipt.ID), d.line(x.Receipt.Digest))
}

func runChangeRollback(ctx context.Context, e *env, args []string) error {
	var reason string
	caseID, c, err := caseCommand(e, "change rollback", "signoff change rollback --case ID --reason TEXT", "the executed change to compensate (required)", args,
		func(fs *flag.FlagSet) []*string {
			fs.StringVar(&reason, "reason", "", "why (required; at least the policy's min_reason_length characters, 20 by default)")
			return []*string{&reason}
		}, "reason")
	if err != nil {
		return err
	}
	var out struct {
		Case      signoff.Case          `json:"case"`
		Execution *changedesk.Execution `json:"execution"`
	}
	if err := c.Rollback(ctx, caseID, reason, &out); err != nil {
		return err
	}
	d := &display{}
	fmt.Fprintf(e.stdout, "compensating change %s: %s\n", d.line(out.Case.ID), d.line(out.Case.State))
	if out.Execution != nil {
		printExecution(e.stdout, d, *out.Execution)
		return nil
	}
	// Why it needs people: the rollback rule's decision, from the card.
	var card struct {
		Compensation *change.CompensationDecision `json:"compensation"`
	}
	if raw, err := c.ApprovalCard(ctx, out.Case.ID); err == nil && json.Unmarshal(raw, &card) == nil && card.Compensation != nil {
		printCompensation(e.stdout, d, card.Compensation)
	}
	switch out.Case.State {
	case "awaiting_approval":
		fmt.Fprintf(e.stdout, "it needs approval: signoff approve --case %s, then signoff change execute --case %s\n", out.Case.ID, out.Case.ID)
	case "review_failed":
		fmt.Fprintf(e.stdout, "its review failed: signoff change show --case %s\n", out.Case.ID)
	}
	return nil
}

// printCompensation shows the rollback rule's decision on a compensating
// change: pre-approved or why people must sign, and the difference
// between what the original left and what the target holds now.
func printCompensation(w io.Writer, d *display, c *change.CompensationDecision) {
	fmt.Fprintf(w, "%-16s %s: %s\n", "Rollback rule:", d.line(c.Verdict), d.line(c.Reason))
	if c.Verdict == change.CompensationPreapproved {
		return
	}
	if c.LiveDigest != c.RecordedAfterDigest {
		fmt.Fprintf(w, "%-16s the original left %s; the target holds %s now\n", "Difference:", d.line(orNoneCLI(c.RecordedAfterDigest)), d.line(orNoneCLI(c.LiveDigest)))
	}
	for _, l := range c.Later {
		fmt.Fprintf(w, "%-16s %s %s (left %s) would be overwritten\n", "Later change:", d.line(l.CaseID), d.line(l.Title), d.line(orNoneCLI(l.AfterStateDigest)))
	}
}

func orNoneCLI(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func runChangePolicy(ctx context.Context, e *env, args []string) error {
	var sf serverFlags
	var file string
	fs := newFlags("change policy", "signoff change policy [--file POLICY.yaml]   (without --file: show)")
	fs.StringVar(&file, "file", "", `set the workspace's policy from this YAML file ("-" reads stdin); owners only`)
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	cur, err := c.ChangePolicy(ctx)
	if err != nil {
		return err
	}
	d := &display{}
	if file == "" {
		fmt.Fprintf(e.stdout, "policy version %d, digest %s\n%s\n", cur.Version, d.line(cur.Digest), d.text(cur.YAML))
		return nil
	}
	b, err := readInput(e, file)
	if err != nil {
		return err
	}
	// Parsed here first, so a typo is reported before anything is sent.
	p, err := change.Parse(b)
	if err != nil {
		return err
	}
	out, err := c.SetChangePolicy(ctx, string(b), cur.Version)
	if err != nil {
		return err
	}
	if out.Digest != p.Digest() {
		return signoff.Errorf(signoff.EUNAVAILABLE, "the server stored policy digest %s, this CLI computed %s", out.Digest, p.Digest())
	}
	fmt.Fprintf(e.stdout, "policy version %d stored, digest %s: approvals made under the old policy no longer count\n", out.Version, out.Digest)
	return nil
}

// changeCard is the change desk's approval card as it arrives, decoded
// strictly: a field this CLI does not know would be covered by the digest
// without being shown.
type changeCard struct {
	Kind string `json:"kind"`
	changedesk.Card
}

// approveChange shows a change's card in full, recomputes the plan's
// digest and the policy's digest from what it shows, and signs that.
func approveChange(ctx context.Context, e *env, c *client.Client, raw []byte, a approveArgs) error {
	var card changeCard
	if err := strictDecode(raw, &card); err != nil {
		return signoff.Errorf(signoff.EINVALID, "the server sent a change card this CLI cannot show in full (%v): nothing was signed; upgrade signoff", err)
	}
	plan, err := change.DecodePlan(card.Plan)
	if err != nil {
		return signoff.Errorf(signoff.EINVALID, "the card's plan does not decode (%v): nothing was signed", err)
	}
	digest, err := change.PlanDigest(plan)
	if err != nil {
		return err
	}
	pol, err := change.Parse([]byte(card.PolicyYAML))
	if err != nil {
		return signoff.Errorf(signoff.EINVALID, "the card's policy does not parse (%v): nothing was signed", err)
	}
	switch {
	case card.CaseID != a.caseID:
		return signoff.Errorf(signoff.EINVALID, "the server sent the card of case %q for case %s: nothing was signed", card.CaseID, a.caseID)
	case digest != card.SubjectDigest:
		return signoff.Errorf(signoff.EINVALID, "the plan shown digests to %s, but the server asks to sign %s: nothing was signed", digest, card.SubjectDigest)
	case pol.Digest() != card.PolicyDigest:
		return signoff.Errorf(signoff.EINVALID, "the policy shown digests to %s, but the server names %s: nothing was signed", pol.Digest(), card.PolicyDigest)
	}
	d := &display{}
	w := e.stdout
	p := func(label, value string) { fmt.Fprintf(w, "%-16s %s\n", label+":", d.line(value)) }
	p("Case", card.CaseID)
	p("Title", card.Title)
	p("State", card.State)
	p("Reason", card.Reason)
	p("Opened by", card.Opener)
	fmt.Fprintf(w, "%-16s %s by %s via %s\n", "Plan:", d.line(card.PlanID), d.line(card.Proposer), d.line(card.Via))
	canon, err := canonical.Marshal(plan)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "The plan, in full (its canonical JSON is what the digest covers):\n%s\n", d.text(indentJSON(canon)))
	if card.BeforeState != nil {
		fmt.Fprintf(w, "%-16s %s (live now: %s)\n", "Before-state:", d.line(card.BeforeState.Digest), d.line(string(card.BeforeState.Value)))
	}
	printReview(w, d, card.Review)
	if card.RevertOf != "" {
		p("Reverts", card.RevertOf)
	}
	if card.Compensation != nil {
		printCompensation(w, d, card.Compensation)
	}
	if card.ReviewNote != "" {
		fmt.Fprintf(w, "Review note (advisory only, not an approval): %s\n", d.line(card.ReviewNote))
	}
	for _, ap := range card.Approvals {
		fmt.Fprintf(w, "  approval %s: %s by %s, %s, subject %s\n", d.line(ap.ID), d.line(ap.Decision), d.line(ap.ApproverID), d.line(ap.Status), d.line(ap.SubjectDigest))
	}
	fmt.Fprintf(w, "%-16s %d of [%s]; approvals live %d hours; no self-approval %t; proposer cannot approve %t\n", "Policy:",
		pol.Approvals.Required, d.line(strings.Join(pol.Approvals.Group, ", ")), pol.ApprovalTTLHours, pol.NoSelfApproval, pol.ProposerCannotApprove)
	p("Policy digest", card.PolicyDigest)
	p("Action digest", card.ActionDigest)
	p("Subject digest", digest)
	if d.escaped > 0 {
		fmt.Fprintf(w, "Note: %d characters that a terminal would not show as themselves are shown escaped.\n", d.escaped)
	}
	out, err := signAndPost(ctx, e, c, d, a, digest, card.PolicyDigest, pol.TTL())
	if err != nil {
		return err
	}
	if out.Case.State == "approved" {
		fmt.Fprintf(w, "next: signoff change execute --case %s\n", a.caseID)
	}
	return nil
}
