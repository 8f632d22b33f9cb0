// Package card is the pure logic of approval cards: which pending human
// decisions open a card, who a card asks, and what becomes of an answer.
// A card is opened for every pending decision (the triage gate and other
// requested decisions, reproduction and fix confirmations, candidate and
// change approvals); it names the exact subject digest, its addressee and
// an expiry. An answer from the wrong responder is discarded and the card
// asked again; an answer for a case that has moved on is acknowledged and
// dropped; an expired card fails closed.
package card

import (
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

// Kinds of card.
const (
	TriageGate        = "triage_gate"
	ReproConfirmation = "repro_confirmation"
	CandidateApproval = "candidate_approval"
	ChangeApproval    = "change_approval"
	FixConfirmation   = "fix_confirmation"
	// DecisionPrefix starts the kind of a card for any other requested
	// decision: "decision:<kind>".
	DecisionPrefix = "decision:"
)

// TriageDecisionKind is the decision kind of the triage gate (the crew's
// GateKind; card does not import crew).
const TriageDecisionKind = signoff.TriageDecisionKind

// DefaultTTL is how long a card stays open when its decision has no
// expiry of its own.
const DefaultTTL = 23 * time.Hour

var approvers = signoff.Addressee{Kind: signoff.AddressRole, Roles: []string{string(signoff.RoleOwner), string(signoff.RoleOperator)}}

// Spec is what a pending decision asks, before the subject is known.
type Spec struct {
	Kind      string
	Options   []string
	Addressee signoff.Addressee
	// Signed: the decision is a signed approval (SPEC 5); a chat command
	// cannot carry the signature, so chat never answers it.
	Signed bool
}

// ForState returns the card a case in state asks for, if any. The triage
// gate is not here: it is a requested decision (ForDecision), which
// carries its own digest and expiry.
func ForState(kind signoff.CaseKind, state string) (Spec, bool) {
	yesNo := []string{"yes", "no"}
	switch {
	case kind == signoff.KindBug && state == workflow.BugAwaitingReporterRepro:
		return Spec{Kind: ReproConfirmation, Options: yesNo, Addressee: signoff.Addressee{Kind: signoff.AddressReporter}}, true
	case kind == signoff.KindBug && state == workflow.BugAwaitingReporterConfirmation:
		return Spec{Kind: FixConfirmation, Options: yesNo, Addressee: signoff.Addressee{Kind: signoff.AddressReporter}}, true
	case kind == signoff.KindBug && state == workflow.BugAwaitingApproval:
		return Spec{Kind: CandidateApproval, Options: []string{"approve", "reject"}, Addressee: approvers, Signed: true}, true
	case kind == signoff.KindChange && state == workflow.ChangeAwaitingApproval:
		return Spec{Kind: ChangeApproval, Options: []string{"approve", "reject"}, Addressee: approvers, Signed: true}, true
	}
	return Spec{}, false
}

// ForDecision returns the card of a requested decision of kind.
func ForDecision(kind string) Spec {
	k := DecisionPrefix + kind
	if kind == TriageDecisionKind {
		k = TriageGate
	}
	return Spec{Kind: k, Options: []string{"approve", "reject"}, Addressee: approvers}
}

// Kinds lists the card kinds a channel's chat approval may name.
var Kinds = []string{TriageGate, ReproConfirmation, CandidateApproval, ChangeApproval, FixConfirmation}

// ChatApprovable reports whether chat may ever answer cards of kind: not
// signed approvals, and not the reporter's confirmations (only the
// reporter's own capability answers those).
func ChatApprovable(kind string) bool {
	switch kind {
	case CandidateApproval, ChangeApproval, ReproConfirmation, FixConfirmation:
		return false
	}
	return kind == TriageGate || strings.HasPrefix(kind, DecisionPrefix)
}

// The answer's vocabulary lives in the domain package, so that the store
// records answers without importing this package (it is handed Evaluate
// as a signoff.CardRule).
type (
	// Responder is who answered, as the server established it.
	Responder = signoff.CardResponder
	// Current is where the card's case is now.
	Current = signoff.CardCurrent
	// Outcome is what becomes of an answer.
	Outcome = signoff.CardOutcome
)

// Outcomes (see signoff.CardOutcome).
const (
	Accepted       = signoff.AnswerAccepted
	WrongResponder = signoff.AnswerWrongResponder
	Stale          = signoff.AnswerStale
	ExpiredCard    = signoff.AnswerExpired
	BadOption      = signoff.AnswerBadOption
	DigestMismatch = signoff.AnswerDigestMismatch
	Refused        = signoff.AnswerRefused
)

// Evaluate is the rule the store applies to an answer, in the transaction
// that records it.
var _ signoff.CardRule = Evaluate

// MinDigestPrefix is the shortest digest prefix a command may quote.
const MinDigestPrefix = 12

// Evaluate decides what becomes of an answer to c from r choosing option
// and quoting digestPrefix (empty when the channel does not ask for one)
// while the case is at cur. The order matters: a settled or moved-on card
// is dropped whoever answers; an expired one fails closed; only then is
// the responder checked, and last what they quoted.
func Evaluate(c signoff.Card, r Responder, option, digestPrefix string, cur Current, now time.Time) Outcome {
	c = c.Effective(now)
	switch {
	case c.Status == signoff.CardExpired:
		return ExpiredCard
	case c.Status != signoff.CardOpen:
		return Stale
	case cur.State != c.CaseState || cur.Version != c.CaseVersion:
		return Stale
	case c.DecisionID != "" && !cur.DecisionPending:
		return Stale
	case !slices.Contains(c.Options, option):
		return BadOption
	case !Addressed(c.Addressee, r):
		return WrongResponder
	case digestPrefix != "" && !QuotesDigest(c.SubjectDigest, digestPrefix):
		return DigestMismatch
	}
	return Accepted
}

// Addressed reports whether r is who a asks.
func Addressed(a signoff.Addressee, r Responder) bool {
	switch a.Kind {
	case signoff.AddressReporter:
		return r.Reporter
	case signoff.AddressActor:
		return !r.Reporter && r.ActorID != "" && r.ActorID == a.Actor
	case signoff.AddressRole:
		return !r.Reporter && r.ActorID != "" && slices.Contains(a.Roles, string(r.Role))
	}
	return false
}

// QuotesDigest reports whether prefix is at least MinDigestPrefix hex
// characters of digest ("sha256:" prefixes on either side are ignored).
func QuotesDigest(digest, prefix string) bool {
	digest = strings.ToLower(strings.TrimPrefix(digest, "sha256:"))
	prefix = strings.ToLower(strings.TrimPrefix(prefix, "sha256:"))
	if len(prefix) < MinDigestPrefix || len(prefix) > len(digest) {
		return false
	}
	for _, r := range prefix {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return strings.HasPrefix(digest, prefix)
}
