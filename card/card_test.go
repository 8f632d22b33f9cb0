package card

import (
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

const digest = "3f1c9a0b7d2e4f6a8b1c3d5e7f9a0b2c4d6e8f0a1b3c5d7e9f1a3b5c7d9e1f3a"

func TestEvaluate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	base := signoff.Card{ID: "c", CaseID: "case_1", Kind: TriageGate, CaseState: "awaiting_triage_approval", CaseVersion: 4,
		DecisionID: "dec_1", SubjectDigest: digest, Options: []string{"approve", "reject"}, Addressee: approvers,
		Status: signoff.CardOpen, Asked: 1, OpenedAt: now.Add(-time.Hour), ExpiresAt: now.Add(22 * time.Hour)}
	here := Current{State: "awaiting_triage_approval", Version: 4, DecisionPending: true}
	op := Responder{ActorID: "act_op", Role: signoff.RoleOperator}
	with := func(f func(*signoff.Card)) signoff.Card { c := base; f(&c); return c }
	tests := []struct {
		name   string
		c      signoff.Card
		r      Responder
		option string
		prefix string
		cur    Current
		at     time.Time
		want   Outcome
	}{
		{"operator approves quoting the digest", base, op, "approve", digest[:12], here, now, Accepted},
		{"whole digest with sha256 prefix", base, op, "approve", "sha256:" + digest, here, now, Accepted},
		{"button without a digest", base, op, "reject", "", here, now, Accepted},
		{"viewer is the wrong responder", base, Responder{ActorID: "act_v", Role: signoff.RoleViewer}, "approve", digest[:12], here, now, WrongResponder},
		{"agent is the wrong responder", base, Responder{ActorID: "act_t", Role: signoff.RoleTriager}, "approve", digest[:12], here, now, WrongResponder},
		{"unmapped chat user", base, Responder{}, "approve", digest[:12], here, now, WrongResponder},
		{"reporter on an operators' card", base, Responder{ActorID: "rep", Reporter: true}, "approve", "", here, now, WrongResponder},
		{"case moved on", base, op, "approve", digest[:12], Current{State: "ticketed", Version: 5}, now, Stale},
		{"same state, newer version", base, op, "approve", digest[:12], Current{State: "awaiting_triage_approval", Version: 6, DecisionPending: true}, now, Stale},
		{"decision settled elsewhere", base, op, "approve", digest[:12], Current{State: "awaiting_triage_approval", Version: 4}, now, Stale},
		{"card closed", with(func(c *signoff.Card) { c.Status = signoff.CardClosed }), op, "approve", digest[:12], here, now, Stale},
		{"card answered", with(func(c *signoff.Card) { c.Status = signoff.CardAnswered }), op, "approve", digest[:12], here, now, Stale},
		{"expired at the instant", base, op, "approve", digest[:12], here, base.ExpiresAt, ExpiredCard},
		{"expired beats wrong responder", base, Responder{}, "approve", "", here, now.Add(23 * time.Hour), ExpiredCard},
		{"stale beats wrong responder", base, Responder{}, "approve", "", Current{State: "ticketed", Version: 5}, now, Stale},
		{"short prefix", base, op, "approve", digest[:11], here, now, DigestMismatch},
		{"other digest", base, op, "approve", "ffffffffffff", here, now, DigestMismatch},
		{"non-hex prefix", base, op, "approve", "3f1c9a0b7d2g", here, now, DigestMismatch},
		{"unknown option", base, op, "merge", digest[:12], here, now, BadOption},
		{"named person", with(func(c *signoff.Card) { c.Addressee = signoff.Addressee{Kind: signoff.AddressActor, Actor: "act_op"} }), op, "approve", "", here, now, Accepted},
		{"not the named person", with(func(c *signoff.Card) { c.Addressee = signoff.Addressee{Kind: signoff.AddressActor, Actor: "act_x"} }), op, "approve", "", here, now, WrongResponder},
		{"reporter card, reporter answers", with(func(c *signoff.Card) {
			c.Kind, c.DecisionID, c.Addressee, c.Options = FixConfirmation, "", signoff.Addressee{Kind: signoff.AddressReporter}, []string{"yes", "no"}
		}), Responder{ActorID: "rep", Reporter: true}, "yes", "", here, now, Accepted},
		{"reporter card, owner answers", with(func(c *signoff.Card) {
			c.Kind, c.DecisionID, c.Addressee, c.Options = FixConfirmation, "", signoff.Addressee{Kind: signoff.AddressReporter}, []string{"yes", "no"}
		}), Responder{ActorID: "act_o", Role: signoff.RoleOwner}, "yes", "", here, now, WrongResponder},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Evaluate(tt.c, tt.r, tt.option, tt.prefix, tt.cur, tt.at); got != tt.want {
				t.Fatalf("Evaluate = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSpecs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		kind   signoff.CaseKind
		state  string
		want   string
		signed bool
	}{
		{signoff.KindBug, workflow.BugAwaitingReporterRepro, ReproConfirmation, false},
		{signoff.KindBug, workflow.BugAwaitingApproval, CandidateApproval, true},
		{signoff.KindBug, workflow.BugAwaitingReporterConfirmation, FixConfirmation, false},
		{signoff.KindChange, workflow.ChangeAwaitingApproval, ChangeApproval, true},
		{signoff.KindBug, workflow.BugAwaitingTriageApproval, "", false},
		{signoff.KindBug, workflow.BugFixing, "", false},
	}
	for _, tt := range tests {
		s, ok := ForState(tt.kind, tt.state)
		if ok != (tt.want != "") || s.Kind != tt.want || s.Signed != tt.signed {
			t.Errorf("ForState(%s, %s) = %+v %v, want %s signed=%v", tt.kind, tt.state, s, ok, tt.want, tt.signed)
		}
	}
	if ForDecision(TriageDecisionKind).Kind != TriageGate || ForDecision("merge").Kind != "decision:merge" {
		t.Error("ForDecision kinds")
	}
	for k, want := range map[string]bool{TriageGate: true, "decision:merge": true, CandidateApproval: false, ChangeApproval: false, FixConfirmation: false, ReproConfirmation: false, "bogus": false} {
		if ChatApprovable(k) != want {
			t.Errorf("ChatApprovable(%s) != %v", k, want)
		}
	}
}

// The store enqueues a card job only for the states workflow.AsksPerson
// lists (it does not import this package): every state of every kind
// must agree with ForState, or a card would never open.
func TestForStateAgreesWithWorkflow(t *testing.T) {
	t.Parallel()
	for _, tbl := range []*workflow.Table{workflow.Bug, workflow.Change} {
		for _, s := range tbl.States {
			_, ok := ForState(tbl.Kind, s)
			if got := workflow.AsksPerson(tbl.Kind, s); got != ok {
				t.Errorf("%s %s: workflow.AsksPerson = %v, ForState = %v", tbl.Kind, s, got, ok)
			}
		}
	}
}
