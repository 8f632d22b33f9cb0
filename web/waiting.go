package web

import (
	"context"
	"net"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/nextstep"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/workflow"
)

// The "waiting on" line: who must act next on a case and what, from the
// facts the store and the desks hold about it (package nextstep words
// it). Where a person may act in the browser the line links to the form
// that does it; where the step is signed or run from a terminal it shows
// the signoff command as it can be pasted: with SIGNOFF_URL set to this
// server and the approval key's path when the command signs. The API token
// is never on a page: the command reads it from SIGNOFF_TOKEN.

// waitingView is one case's "waiting on" line (template "waiting").
type waitingView struct {
	CaseID string
	// Who is nextstep's who ("you", "person", "reporter", "agent",
	// "nobody"); WhoText says it in words.
	Who     string
	WhoText string
	// Action is nextstep's action ("approve", "merge", ...), for the
	// desk's counts.
	Action string
	// Text is the action in plain words; Why says why it is not yours.
	Text string
	Why  string
	// Label is the state in plain words, State the raw state.
	Label, State string
	Done, Stuck  bool
	// Needs: the case waits on the signed-in person (or is stuck and
	// their role can move it).
	Needs bool
	// Href and LinkText are the page where the signed-in person acts.
	Href, LinkText string
	// Command is the CLI step as pasted; CommandNote what it needs from
	// the person's environment.
	Command, CommandNote string
}

// defaultApprovalKey is where signoff keys init puts the approval key
// (os.UserConfigDir on Linux); spelled with ~ so that it names the
// approver's own home, not the server's.
const defaultApprovalKey = "~/.config/signoff/approver.key"

type waitingURLKey struct{}

// withWaitingURL returns r's context carrying the server's URL as the
// request came in, for the commands the waiting line prints. A page
// handler passes it to waitingOn.
func (s *server) withWaitingURL(r *http.Request) context.Context {
	return context.WithValue(r.Context(), waitingURLKey{}, s.baseURL(r))
}

// baseURL is the URL printed commands name: Options.PublicURL when set,
// else the one r came in on.
func (s *server) baseURL(r *http.Request) string {
	if s.o.PublicURL != "" {
		return s.o.PublicURL
	}
	return requestBaseURL(r)
}

// approvalKey is the key path approve commands name, as one shell word:
// a configured path with spaces, quotes or $(...) in it is quoted, so the
// pasted command never runs what the path holds (a leading ~/ stays
// unquoted for the shell to expand).
func (s *server) approvalKey() string {
	if s.o.ApprovalKey == "" {
		return defaultApprovalKey
	}
	if rest, ok := strings.CutPrefix(s.o.ApprovalKey, "~/"); ok {
		return "~/" + shellWord(rest)
	}
	return shellWord(s.o.ApprovalKey)
}

// shellPlain is a word the shell reads as itself.
var shellPlain = regexp.MustCompile(`^[A-Za-z0-9_./:@%+,=-]+$`)

// shellWord is s as one word of a POSIX shell: itself when plain, else in
// single quotes (each quote inside closes the quoting, is escaped and
// reopens it).
func shellWord(s string) string {
	if shellPlain.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// safeHost is what a Host header may hold to be printed in a shell
// command: a name or an address and a port, nothing a shell reads.
var safeHost = regexp.MustCompile(`^[A-Za-z0-9.\-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$`)

// requestBaseURL is scheme://host of r, or "" when the Host header is not
// one to print. Forwarded headers are not trusted: the command must not
// send a token where the person's browser did not go.
func requestBaseURL(r *http.Request) string {
	if !safeHost.MatchString(r.Host) {
		return ""
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// waitingBaseURL is the URL commands name: the request's, or the address
// the server listens on when the page handler gave none.
func waitingBaseURL(ctx context.Context) string {
	if u, ok := ctx.Value(waitingURLKey{}).(string); ok && u != "" {
		return u
	}
	if a, ok := ctx.Value(http.LocalAddrContextKey).(net.Addr); ok && safeHost.MatchString(a.String()) {
		return "http://" + a.String()
	}
	return ""
}

// waitingOn gathers what the store and the desks know about c (pending
// decisions, the approval card's approvers, proposer and quorum, a
// reproduction waiting for staff review) and says who must act next. A
// fact it cannot read is left out (nextstep then words the step without
// it), never guessed.
func (s *server) waitingOn(ctx context.Context, by signoff.Actor, c signoff.Case) waitingView {
	f := nextstep.Facts{Kind: c.Kind, State: c.State, Me: by, OpenedBy: c.CreatedBy}
	if ds, err := s.store.ListDecisions(ctx, by, c.ID); err == nil {
		now := s.o.Now()
		for _, d := range ds {
			if d.Status == signoff.DecisionPending && now.Before(d.ExpiresAt) {
				f.PendingDecisions++
			}
		}
	}
	switch {
	case c.Kind == signoff.KindBug && c.State == workflow.BugAwaitingApproval && s.o.BugDesk != nil:
		if cv, err := s.o.BugDesk.Card(ctx, by, c.ID); err == nil {
			f.ProposedBy, f.Quorum = cv.Card.SubmittedBy, cv.Policy.Quorum
			f.NoSelfApproval, f.ProposerCannotApprove = cv.Policy.NoSelfApproval, cv.Policy.ProposerCannotApprove
			f.Approvers = approversOf(cv.Approvals, cv.SubjectDigest, s.o.Now())
		}
	case c.Kind == signoff.KindChange && c.State == workflow.ChangeAwaitingApproval && s.o.ChangeDesk != nil:
		if cd, err := s.o.ChangeDesk.Card(ctx, by, c.ID); err == nil {
			f.OpenedBy, f.ProposedBy, f.Quorum, f.ApproverGroup = cd.Opener, cd.Proposer, cd.Policy.Quorum, cd.Approvers
			f.NoSelfApproval, f.ProposerCannotApprove = cd.Policy.NoSelfApproval, cd.Policy.ProposerCannotApprove
			f.Approvers = approversOf(cd.Approvals, cd.SubjectDigest, s.o.Now())
		}
	case c.Kind == signoff.KindBug && (c.State == workflow.BugAwaitingReporterRepro || c.State == workflow.BugReproduced):
		if l, err := s.store.GetLoop(ctx, by, c.ID); err == nil {
			if h := repair.CurrentHarness(l.State); h != nil {
				f.HarnessReviewWaits = repair.AwaitsStaff(c.State, *h)
			}
		}
	}
	return waitingFor(nextstep.Next(f), c, waitingBaseURL(ctx), s.approvalKey())
}

// approversOf are the distinct people whose approvals of digest still
// count at now (valid and unexpired, as the gate's quorum and the desk's
// inbox count them, or consumed by the step they allowed): an approver
// whose approval expired is asked to sign again, not told they did.
func approversOf(as []signoff.Approval, digest string, now time.Time) []string {
	var out []string
	for _, a := range as {
		if a.Decision != "approve" || a.SubjectDigest != digest || (a.Status != signoff.ApprovalValid && a.Status != signoff.ApprovalConsumed) ||
			(a.Status == signoff.ApprovalValid && !now.Before(a.ExpiresAt)) {
			continue
		}
		if !slices.Contains(out, a.ApproverID) {
			out = append(out, a.ApproverID)
		}
	}
	return out
}

// waitingFor turns a step into the line: the link where the signed-in
// person acts, and the command for the steps a terminal takes.
func waitingFor(st nextstep.Step, c signoff.Case, base, key string) waitingView {
	v := waitingView{CaseID: c.ID, Who: string(st.Who), WhoText: st.WhoText, Action: string(st.Action), Text: st.Text, Why: st.Why,
		Label: st.Label, State: c.State, Done: st.Done, Stuck: st.Stuck, Needs: st.Needs()}
	mine := st.Who == nextstep.You || (st.Stuck && st.CanHelp)
	if !mine {
		return v
	}
	page := "/cases/" + c.ID
	var args []string
	switch st.Action {
	case nextstep.ActDecide:
		v.Href, v.LinkText = page+"#decisions", "Decide"
	case nextstep.ActReviewHarness:
		v.Href, v.LinkText = page+"/harness", "Review the reproduction"
		args = []string{"harness", "review", "--case", c.ID, "--approve"}
	case nextstep.ActApprove:
		v.Href, v.LinkText = page+"/approval", "Review and approve"
		args = []string{"approve", "--case", c.ID, "--key", key}
	case nextstep.ActMerge:
		v.Href, v.LinkText = page+"#merge", "Merge"
		args = []string{"merge", "--case", c.ID}
	case nextstep.ActExecute:
		v.Href, v.LinkText = page+"#change-actions", "Execute"
		args = []string{"change", "execute", "--case", c.ID}
	case nextstep.ActPlan:
		v.Href, v.LinkText = page+"#change-actions", "Plan it again"
		args = []string{"change", "plan", "--case", c.ID, "--builtin"}
	case nextstep.ActResume:
		v.Href, v.LinkText = page+"#resume-triage", "Resume"
	}
	if len(args) > 0 && base != "" {
		v.Command = waitingCommand(base, args)
		v.CommandNote = "Reads your API token from SIGNOFF_TOKEN."
		if st.Action == nextstep.ActApprove {
			v.CommandNote = "Reads your API token from SIGNOFF_TOKEN; signs with your approval key (signoff keys init, then signoff keys register, if you have none)."
		}
	}
	return v
}

// waitingCommand is the signoff command line with SIGNOFF_URL set. Every
// part is an id, a flag, a URL checked by safeHost or a key path made one
// shell word by approvalKey; a key path's leading ~ stays unquoted so the
// shell expands it.
func waitingCommand(base string, args []string) string {
	return "SIGNOFF_URL=" + base + " signoff " + strings.Join(args, " ")
}
