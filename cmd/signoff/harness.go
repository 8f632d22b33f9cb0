package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/client"
	"github.com/signoff-dev/signoff/repair"
)

// runHarness dispatches "harness": a person reads a case's reproduction
// (its test source in full, what fails on the base, the static checks'
// findings) and approves or rejects it over the review digest shown,
// before any fix is tried (the SYNKAI rule). Both are API clients.
func runHarness(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "harness", args, "init", "show", "review")
	if err != nil {
		return err
	}
	if verb == "init" {
		// Local: it derives a harness from a fix and needs no server.
		return runHarnessInit(ctx, e, rest)
	}
	if verb == "show" {
		return runHarnessShow(ctx, e, rest)
	}
	return runHarnessReview(ctx, e, rest)
}

func runHarnessShow(ctx context.Context, e *env, args []string) error {
	caseID, c, err := caseCommand(e, "harness show", "signoff harness show --case ID [--server URL]   (token from SIGNOFF_TOKEN)",
		"the case whose reproduction to show (required)", args, nil)
	if err != nil {
		return err
	}
	v, err := fetchHarness(ctx, c, caseID)
	if err != nil {
		return err
	}
	d := &display{}
	printHarness(e.stdout, d, v)
	if v.Reviewable {
		fmt.Fprintf(e.stdout, "\nIt waits for a member of staff: signoff harness review --case %s --approve|--reject --note TEXT\n", caseID)
	}
	return nil
}

func runHarnessReview(ctx context.Context, e *env, args []string) error {
	var (
		sf                   serverFlags
		caseID, note, digest string
		approve, reject, yes bool
	)
	fs := newFlags("harness review", "signoff harness review --case ID (--approve | --reject --note TEXT) [--note TEXT] [--digest HEX] [--yes] [--server URL]   (token from SIGNOFF_TOKEN)")
	fs.StringVar(&caseID, "case", "", "the case whose reproduction you decide on (required)")
	fs.BoolVar(&approve, "approve", false, "the test checks the reported behaviour")
	fs.BoolVar(&reject, "reject", false, "it does not (needs --note: why, for the next reproducer)")
	fs.StringVar(&note, "note", "", "why (required with --reject; recorded with the decision)")
	fs.StringVar(&digest, "digest", "", "the review digest you read (e.g. from signoff harness show); refused unless the reproduction still has it")
	fs.BoolVar(&yes, "yes", false, "decide without typing the case id")
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if err := required(fs, e, "case", caseID); err != nil {
		return err
	}
	note = strings.TrimSpace(note)
	switch {
	case approve == reject:
		fmt.Fprintln(e.stderr, "give exactly one of --approve and --reject")
		fs.Usage()
		return errUsage
	case reject && note == "":
		fmt.Fprintln(e.stderr, "--reject needs --note: say why, it goes to the next reproducer")
		fs.Usage()
		return errUsage
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	v, err := fetchHarness(ctx, c, caseID)
	if err != nil {
		return err
	}
	d := &display{}
	printHarness(e.stdout, d, v)
	switch {
	case !v.Reviewable:
		return &signoff.Error{Code: signoff.ECONFLICT, State: v.State, Message: fmt.Sprintf("reproduction %s of case %s does not wait for a staff review (staff review %s, reporter %s): nothing was sent",
			d.line(v.ID), caseID, d.line(v.StaffStatus), d.line(v.ReporterAnswer))}
	case digest != "" && digest != v.ReviewDigest:
		return &signoff.Error{Code: signoff.ECONFLICT, State: v.State, Message: fmt.Sprintf("the reproduction's review digest is now %s, not the %s you read: read it again (signoff harness show); nothing was sent", v.ReviewDigest, d.line(digest))}
	}
	decision, verb := signoff.HarnessApprove, "approve"
	if reject {
		decision, verb = signoff.HarnessReject, "reject"
	}
	if !yes {
		if !stdinIsTerminal(e.stdin) {
			return signoff.Errorf(signoff.EINVALID, "not a terminal: pass --yes to %s without typing the case id", verb)
		}
		fmt.Fprintf(e.stderr, "\nYou are about to %s reproduction %s of case %s: review digest %s.\n", verb, d.line(v.ID), caseID, v.ReviewDigest)
		fmt.Fprint(e.stderr, "Type the case id to decide on exactly what is shown above: ")
		line, err := bufio.NewReader(e.stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read the confirmation: %w", err)
		}
		if typed := strings.TrimRight(line, "\r\n"); typed != caseID {
			return signoff.Errorf(signoff.EINVALID, "you typed %q, not the case id %s: nothing was sent", typed, caseID)
		}
	}
	var out struct {
		Harness bugdesk.HarnessView `json:"harness"`
		Case    signoff.Case        `json:"case"`
	}
	in := bugdesk.HarnessDecision{ReviewDigest: v.ReviewDigest, Decision: decision, Note: note}
	if err := c.ReviewHarness(ctx, caseID, in, &out); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\n%sd reproduction %s of case %s over review digest %s\n", verb, d.line(v.ID), caseID, v.ReviewDigest)
	switch {
	case reject:
		fmt.Fprintf(e.stdout, "case %s is now %s: a new reproduction is asked for, with your note\n", caseID, d.line(out.Case.State))
	case out.Harness.Status == signoff.HarnessFrozen:
		fmt.Fprintf(e.stdout, "the reporter confirmed it too: the harness is frozen and the fix starts (case %s is %s)\n", caseID, d.line(out.Case.State))
	default:
		fmt.Fprintf(e.stdout, "case %s is %s: the harness freezes once the reporter confirms it is their bug\n", caseID, d.line(out.Case.State))
	}
	return nil
}

// fetchHarness reads the case's reproduction and checks what the CLI is
// about to show: decoded strictly (a field this CLI does not know would be
// covered by the review digest without being shown), for this case, and
// with the review digest of exactly what it holds.
func fetchHarness(ctx context.Context, c *client.Client, caseID string) (bugdesk.HarnessView, error) {
	raw, err := c.Harness(ctx, caseID)
	if err != nil {
		return bugdesk.HarnessView{}, err
	}
	var v bugdesk.HarnessView
	if err := strictDecode(raw, &v); err != nil {
		return v, signoff.Errorf(signoff.EINVALID, "the server sent a reproduction this CLI cannot show in full (%v): upgrade signoff", err)
	}
	if v.CaseID != caseID {
		return v, signoff.Errorf(signoff.EINVALID, "the server sent the reproduction of case %q for case %s", v.CaseID, caseID)
	}
	digest, err := v.Subject().Digest()
	if err != nil {
		return v, fmt.Errorf("digest the reproduction: %w", err)
	}
	if digest != v.ReviewDigest {
		return v, signoff.Errorf(signoff.EINVALID, "the server sent a reproduction whose digest %s is not the review digest %s it names", digest, v.ReviewDigest)
	}
	return v, nil
}

// printHarness prints a reproduction for review, its test files in full.
func printHarness(w io.Writer, d *display, v bugdesk.HarnessView) {
	p := func(label, value string) { fmt.Fprintf(w, "%-18s %s\n", label+":", d.line(value)) }
	p("Case", v.CaseID)
	p("State", v.State)
	fmt.Fprintf(w, "%-18s %s (%s, round %d)\n", "Reproduction:", d.line(v.ID), d.line(v.Status), v.Round)
	p("Harness digest", v.Digest)
	fmt.Fprintf(w, "%-18s by %s (evidence %s) at %s\n", "Proposed:", d.line(v.ProposedBy), d.line(v.Evidence), v.ProposedAt.Format(time.RFC3339))
	if v.RebasedFrom != "" {
		p("Rebased from", v.RebasedFrom)
	}
	p("Base", v.Base)
	fmt.Fprintf(w, "%-18s %s on branch %s\n", "Tests from:", d.line(v.TestsFrom), d.line(v.Branch))
	p("Fail to pass", strings.Join(v.FailToPass, ", "))
	p("Pass to pass", strings.Join(v.PassToPass, ", "))
	p("Expected failure", v.ExpectedFailure)
	reporter := v.ReporterAnswer
	if v.ReporterNote != "" {
		reporter += ": " + v.ReporterNote
	}
	p("Reporter answer", reporter)
	staff := v.StaffStatus
	if r := v.StaffReview; r != nil {
		staff = fmt.Sprintf("%s by %s at %s over %s", r.Decision, r.By, r.At.Format(time.RFC3339), r.ReviewDigest)
		if r.Note != "" {
			staff += ": " + r.Note
		}
	}
	p("Staff review", staff)
	fmt.Fprintln(w, "Failing output on the base (what the reporter is shown):")
	printBlock(w, d, v.FailingOutput)
	fmt.Fprintf(w, "Static findings (advisory: they decide nothing; %d):\n", len(v.Findings))
	if len(v.Findings) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, f := range v.Findings {
		where := f.Path
		if f.Line > 0 {
			where += fmt.Sprintf(":%d", f.Line)
		}
		fmt.Fprintf(w, "  [%s] %s %s: %s\n", d.line(f.Severity), d.line(f.Rule), d.line(where), d.line(f.Detail))
	}
	printSources(w, d, "Test file", v.TestFiles)
	p("Review digest", v.ReviewDigest)
	if d.escaped > 0 {
		fmt.Fprintf(w, "Note: %d characters that a terminal would not show as themselves (control, formatting or invalid UTF-8) are shown escaped as \\xNN or \\uNNNN.\n", d.escaped)
	}
}

// printSources prints source files in full, each with its digest, saying
// so when a file's bytes are not what its text shows (not valid UTF-8).
func printSources(w io.Writer, d *display, label string, files []repair.SourceFile) {
	for _, f := range files {
		sum := sha256.Sum256([]byte(f.Content))
		fmt.Fprintf(w, "%s %s (sha256 %s, %d bytes, in full):\n", label, d.line(f.Path), d.line(f.SHA256), len(f.Content))
		if hex.EncodeToString(sum[:]) != f.SHA256 {
			fmt.Fprintf(w, "  (its bytes are not valid UTF-8: the text below shows them with replacement characters; the sha256 is of the bytes)\n")
		}
		printBlock(w, d, f.Content)
		fmt.Fprintf(w, "End of %s.\n", d.line(f.Path))
	}
}

// printBlock prints multi-line server text safely, ending with a newline.
func printBlock(w io.Writer, d *display, s string) {
	t := d.text(s)
	fmt.Fprint(w, t)
	if !strings.HasSuffix(t, "\n") {
		fmt.Fprintln(w)
	}
}
