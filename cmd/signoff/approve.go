package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/client"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/workflow"
)

// cardView is bugdesk.CardView as it arrives: the card and the policy are
// kept raw so that they can be decoded strictly.
type cardView struct {
	Card          json.RawMessage    `json:"card"`
	SubjectDigest string             `json:"subject_digest"`
	Policy        json.RawMessage    `json:"policy"`
	PolicyDigest  string             `json:"policy_digest"`
	State         string             `json:"state"`
	Approvals     []signoff.Approval `json:"approvals"`
}

// stdinIsTerminal reports whether r is an interactive terminal. It is a
// variable so that tests can play a person at a terminal.
var stdinIsTerminal = func(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	// /dev/null is a character device too, and nobody is typing there.
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(st, null) {
		return false
	}
	return true
}

var errNoTerminal = signoff.Errorf(signoff.EINVALID, "not a terminal: pass --yes to approve without typing the case id; the approval will record that")

func runApprove(ctx context.Context, e *env, args []string) error {
	var (
		sf                    serverFlags
		caseID, reason, kflag string
		reject, yes           bool
	)
	fs := newFlags("approve", "signoff approve --case ID [--reject --reason TEXT] [--yes] [--key FILE] [--server URL]   (token from SIGNOFF_TOKEN)")
	fs.StringVar(&caseID, "case", "", "the case whose approval card to show and sign (required)")
	fs.BoolVar(&reject, "reject", false, "sign a rejection instead of an approval (needs --reason)")
	fs.StringVar(&reason, "reason", "", "why you reject (required with --reject; recorded with the rejection, beside the signed statement)")
	fs.BoolVar(&yes, "yes", false, "sign without typing the case id (recorded as via cli-signed-yes)")
	fs.StringVar(&kflag, "key", "", approverKeyHelp)
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if err := required(fs, e, "case", caseID); err != nil {
		return err
	}
	reason = strings.TrimSpace(reason)
	switch {
	case reject && reason == "":
		fmt.Fprintln(e.stderr, "--reject needs --reason")
		fs.Usage()
		return errUsage
	case !reject && reason != "":
		fmt.Fprintln(e.stderr, "--reason goes with --reject")
		fs.Usage()
		return errUsage
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	_, key, err := loadApproverKey(kflag)
	if err != nil {
		return err
	}
	me, err := c.Me(ctx)
	if err != nil {
		return err
	}
	if me.ID == "" {
		return signoff.Errorf(signoff.EUNAVAILABLE, "the server did not say who this token belongs to")
	}
	rawCard, err := c.ApprovalCard(ctx, caseID)
	if err != nil {
		return err
	}
	var kind struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(rawCard, &kind); err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected approval card: %v", err)
	}
	a := approveArgs{caseID: caseID, me: me, key: key, reject: reject, yes: yes, reason: reason}
	if kind.Kind == "change" {
		return approveChange(ctx, e, c, rawCard, a)
	}
	var view cardView
	if err := json.Unmarshal(rawCard, &view); err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected approval card: %v", err)
	}
	// The card is decoded strictly: a field this CLI does not know would be
	// covered by the digest without being shown.
	var card repair.Card
	if err := strictDecode(view.Card, &card); err != nil {
		return signoff.Errorf(signoff.EINVALID, "the server sent a card this CLI cannot show in full (%v): nothing was signed; upgrade signoff", err)
	}
	var pol approval.Policy
	if err := strictDecode(view.Policy, &pol); err != nil {
		return signoff.Errorf(signoff.EINVALID, "the server sent a policy this CLI cannot show in full (%v): nothing was signed; upgrade signoff", err)
	}

	d := &display{}
	printCard(e.stdout, d, card, view, pol)

	// What is signed is what was shown: the digest of the card as decoded
	// and printed above, which must be the one the server says the
	// approval names, under the policy printed above.
	digest, err := card.Digest()
	if err != nil {
		return fmt.Errorf("digest the card: %w", err)
	}
	switch {
	case card.Case != caseID:
		return signoff.Errorf(signoff.EINVALID, "the server sent the card of case %q for case %s: nothing was signed", card.Case, caseID)
	case digest != view.SubjectDigest:
		return signoff.Errorf(signoff.EINVALID, "the server sent a card whose digest %s does not match the subject digest %s it asks you to sign: nothing was signed", digest, view.SubjectDigest)
	case pol.Digest() != view.PolicyDigest:
		return signoff.Errorf(signoff.EINVALID, "the server sent a policy whose digest %s does not match the policy digest %s it names: nothing was signed", pol.Digest(), view.PolicyDigest)
	case pol.TTLHours <= 0:
		return signoff.Errorf(signoff.EINVALID, "the policy gives approvals no lifetime (ttl_hours %d): nothing was signed", pol.TTLHours)
	}

	out, err := signAndPost(ctx, e, c, d, a, digest, view.PolicyDigest, pol.TTL())
	if err != nil {
		return err
	}
	if !reject && out.Case.State == view.State && view.State == workflow.BugAwaitingApproval {
		fmt.Fprintf(e.stdout, "more approvals are needed: the policy asks for %d distinct approvers\n", pol.Quorum)
	}
	return nil
}

// approveArgs are what runApprove read from its flags and the server.
type approveArgs struct {
	caseID, reason string
	me             signoff.Actor
	key            ed25519.PrivateKey
	reject, yes    bool
}

// signAndPost asks for the confirmation (the case id typed at a terminal,
// or --yes), signs digest under policyDigest and posts the envelope. The
// caller has shown everything the digest covers.
func signAndPost(ctx context.Context, e *env, c *client.Client, d *display, a approveArgs, digest, policyDigest string, ttl time.Duration) (client.ApprovalResult, error) {
	caseID, me, key, reject, yes, reason := a.caseID, a.me, a.key, a.reject, a.yes, a.reason
	decision, verb := approval.Approve, "approve"
	if reject {
		decision, verb = approval.Reject, "reject"
	}
	via := "cli-signed"
	if yes {
		via = "cli-signed-yes"
	} else {
		if !stdinIsTerminal(e.stdin) {
			return client.ApprovalResult{}, errNoTerminal
		}
		fmt.Fprintf(e.stderr, "\nYou are about to %s subject %s of case %s as %s.\n", verb, digest, caseID, d.line(me.ID))
		fmt.Fprint(e.stderr, "Type the case id to approve (or reject) exactly this digest: ")
		line, err := bufio.NewReader(e.stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return client.ApprovalResult{}, fmt.Errorf("read the confirmation: %w", err)
		}
		if typed := strings.TrimRight(line, "\r\n"); typed != caseID {
			return client.ApprovalResult{}, signoff.Errorf(signoff.EINVALID, "you typed %q, not the case id %s: nothing was signed", typed, caseID)
		}
	}

	st := approval.NewStatement(caseID, digest, decision, policyDigest, me.ID, time.Now(), ttl)
	envelope, err := approval.Sign(st, key)
	if err != nil {
		return client.ApprovalResult{}, err
	}
	if err := approval.Verify(envelope, st, key.Public().(ed25519.PublicKey)); err != nil {
		return client.ApprovalResult{}, fmt.Errorf("the approval key does not verify its own signature: %w", err)
	}
	raw, err := json.Marshal(envelope)
	if err != nil {
		return client.ApprovalResult{}, fmt.Errorf("encode the envelope: %w", err)
	}
	out, err := c.Approve(ctx, caseID, client.ApprovalRequest{Envelope: raw, Via: via, Reason: reason})
	if err != nil {
		return client.ApprovalResult{}, err
	}
	fmt.Fprintf(e.stdout, "\nsigned: %s subject %s of case %s as %s with key %s (via %s, expires %s)\n",
		decision, digest, caseID, d.line(me.ID), envelope.Signatures[0].KeyID, via, st.ExpiresAt.Format(time.RFC3339))
	if reject {
		fmt.Fprintf(e.stdout, "reason (sent beside the signed statement and recorded): %s\n", d.line(reason))
	}
	fmt.Fprintf(e.stdout, "approval %s recorded (%s)\n", d.line(out.Approval.ID), d.line(out.Approval.Status))
	fmt.Fprintf(e.stdout, "case %s is now %s\n", d.line(out.Case.ID), d.line(out.Case.State))
	return out, nil
}

// printCard prints everything on the card, untruncated, in the order an
// approver reads it.
func printCard(w io.Writer, d *display, c repair.Card, v cardView, pol approval.Policy) {
	p := func(label, value string) { fmt.Fprintf(w, "%-18s %s\n", label+":", d.line(value)) }
	p("Case", c.Case)
	p("Title", c.Title)
	p("Project", c.Project)
	p("State", v.State)
	fmt.Fprintf(w, "%-18s %s (attempt %d, submitted by %s, evidence %s)\n", "Candidate:",
		d.line(c.CandidateID), c.Attempt, d.line(c.SubmittedBy), d.line(c.Evidence))
	p("Base", c.Base)
	p("Candidate commit", c.Candidate)
	p("Branch", c.Branch)
	fmt.Fprintf(w, "%-18s %s (digest %s)\n", "Harness:", d.line(c.HarnessID), d.line(c.HarnessDigest))
	fmt.Fprintf(w, "%-18s %s: %s\n", "Verdict:", d.line(c.Verdict), d.line(c.Reason))
	fmt.Fprintf(w, "Verdict table (%d rows):\n", len(c.Table))
	for _, r := range c.Table {
		fmt.Fprintf(w, "  stage %s | run %d | %s | %s", d.line(r.Stage), r.Run, d.line(r.Outcome), d.line(r.Detail))
		if len(r.Tests) > 0 {
			tests := make([]string, 0, len(r.Tests))
			for _, t := range r.Tests {
				tests = append(tests, fmt.Sprintf("%s (%s) %s", d.line(t.Name), d.line(t.Kind), d.line(t.Outcome)))
			}
			fmt.Fprintf(w, " | tests: %s", strings.Join(tests, "; "))
		}
		fmt.Fprintln(w)
	}
	p("Fingerprint", c.Fingerprint)
	review := c.Review
	if review == "" {
		review = "(none)"
	}
	fmt.Fprintf(w, "Review note (advisory only, not an approval): %s\n", d.line(review))
	fmt.Fprintf(w, "Diff (%d bytes, in full):\n", len(c.Diff))
	diff := d.text(c.Diff)
	fmt.Fprint(w, diff)
	if !strings.HasSuffix(diff, "\n") {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "End of diff.")
	fmt.Fprintf(w, "Harness test source (%d file(s), in full; the subject digest covers it):\n", len(c.HarnessSource))
	printSources(w, d, "Harness file", c.HarnessSource)
	hr := c.HarnessReview
	fmt.Fprintf(w, "%-18s %s by %s at %s, over review digest %s (reproduction %s)\n", "Harness review:",
		d.line(hr.Decision), d.line(hr.By), hr.At.Format(time.RFC3339), d.line(hr.ReviewDigest), d.line(hr.HarnessID))
	if hr.Note != "" {
		fmt.Fprintf(w, "%-18s %s\n", "Review note:", d.line(hr.Note))
	}
	df := c.Defences
	fmt.Fprintf(w, "Against a counterfeit verdict: %d protected glob(s) restored from the harness before every run; build changes %s; cache %s\n",
		len(df.Protected), d.line(df.BuildChanges), d.line(df.Cache))
	for _, p := range df.TestOnly {
		fmt.Fprintf(w, "  frozen with the tests (a package only tests use): %s\n", d.line(p))
	}
	for _, e := range df.Unprotected {
		fmt.Fprintf(w, "  exempted from the frozen tree: %s (%s)\n", d.line(e.Glob), d.line(e.Reason))
	}
	fmt.Fprintf(w, "  test edits discarded: %d\n", len(df.TestEdits))
	for _, e := range df.TestEdits {
		fmt.Fprintf(w, "    %s (%s)\n", d.line(e.Path), d.line(e.Change))
	}
	fmt.Fprintf(w, "  static findings: %d\n", len(df.Findings))
	for _, f := range df.Findings {
		fmt.Fprintf(w, "    [%s] %s: %s\n", d.line(f.Severity), d.line(f.Rule), d.line(f.Detail))
	}
	for _, l := range df.Witness {
		fmt.Fprintf(w, "  witness %s\n", d.line(l))
	}
	if len(v.Approvals) > 0 {
		fmt.Fprintf(w, "Approvals so far (%d):\n", len(v.Approvals))
		for _, a := range v.Approvals {
			fmt.Fprintf(w, "  %s: %s by %s, %s, subject %s, via %s, expires %s\n", d.line(a.ID), d.line(a.Decision),
				d.line(a.ApproverID), d.line(a.Status), d.line(a.SubjectDigest), d.line(a.Via), a.ExpiresAt.Format(time.RFC3339))
		}
	}
	p("Subject digest", v.SubjectDigest)
	fmt.Fprintf(w, "%-18s quorum %d, approvals live %d hours, no self-approval %t, proposer cannot approve %t\n",
		"Policy:", pol.Quorum, pol.TTLHours, pol.NoSelfApproval, pol.ProposerCannotApprove)
	p("Policy digest", v.PolicyDigest)
	if d.escaped > 0 {
		fmt.Fprintf(w, "Note: %d characters that a terminal would not show as themselves (control, formatting or invalid UTF-8) are shown escaped as \\xNN or \\uNNNN.\n", d.escaped)
	}
}
