package nextstep

import (
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/workflow"
)

var (
	operator = signoff.Actor{ID: "act_op", Role: signoff.RoleOperator}
	viewer   = signoff.Actor{ID: "act_view", Role: signoff.RoleViewer}
)

func tables() []*workflow.Table { return []*workflow.Table{workflow.Bug, workflow.Change} }

// Every state of both loops has a plain label and a next step that the
// table allows: an agent's step is a row its role (or the system) may
// take from that state, a person's a row people hold, the reporter's a
// row for the reporter. A state added to workflow without a step here
// fails this test.
func TestEveryStateHasALabelAndALegalNextStep(t *testing.T) {
	for _, tb := range tables() {
		for _, st := range tb.States {
			for _, me := range []signoff.Actor{operator, viewer} {
				for _, review := range []bool{false, true} {
					f := Facts{Kind: tb.Kind, State: st, Me: me, HarnessReviewWaits: review}
					s := Next(f)
					name := string(tb.Kind) + "/" + st + "/" + string(me.Role)
					if Label(tb.Kind, st) == "" || s.Label == "" || strings.HasPrefix(s.Label, "Unknown") {
						t.Errorf("%s: no label", name)
					}
					if strings.Contains(Label(tb.Kind, st), "_") {
						t.Errorf("%s: label %q is not plain words", name, Label(tb.Kind, st))
					}
					if s.Text == "" || s.WhoText == "" {
						t.Errorf("%s: step without words: %+v", name, s)
					}
					if s.Done && s.Stuck {
						t.Errorf("%s: both done and stuck", name)
					}
					if (s.Done || s.Stuck) != (s.Who == Nobody) {
						t.Errorf("%s: who %s but done=%v stuck=%v", name, s.Who, s.Done, s.Stuck)
					}
					var want signoff.Role
					switch s.Who {
					case Agent:
						want = s.AgentRole
					case You, Person:
						want = signoff.RoleOperator
					case Reporter:
						want = signoff.RoleReporter
					}
					if want != "" && !moves(tb, st, want) {
						t.Errorf("%s: %s (%s) has no row out of %s", name, s.Who, want, st)
					}
					if me.Role == signoff.RoleViewer && s.Who == You {
						t.Errorf("%s: a viewer is asked to act: %+v", name, s)
					}
				}
			}
		}
	}
}

// moves reports whether role holds a row out of state other than the
// escape hatches every state has (escalate, close).
func moves(tb *workflow.Table, state string, role signoff.Role) bool {
	for _, tr := range tb.Transitions {
		if tr.From == state && tr.Command != "escalate" && tr.Command != "close" && tr.Permits(role) {
			return true
		}
	}
	return false
}

// A state nothing leads out of (but the escape hatches and the system's
// own reopen) is done or stuck, never waiting on someone.
func TestEndStatesWaitOnNobody(t *testing.T) {
	ends := map[string]bool{"escalate": true, "close": true, "reopen": true, "supersede": true, "revert": true}
	for _, tb := range tables() {
		for _, st := range tb.States {
			open := false
			for _, tr := range tb.Transitions {
				if tr.From == st && !ends[tr.Command] {
					open = true
				}
			}
			if s := Next(Facts{Kind: tb.Kind, State: st, Me: operator}); !open && s.Who != Nobody {
				t.Errorf("%s/%s has nowhere to go but waits on %s", tb.Kind, st, s.Who)
			}
		}
	}
}

func TestNextStep(t *testing.T) {
	bug, chg := signoff.KindBug, signoff.KindChange
	other := "act_other"
	cases := []struct {
		name string
		f    Facts
		who  Who
		act  Action
		// whoText and text are substrings the step must contain.
		whoText, text, label string
	}{
		{"triage gate, operator decides", Facts{Kind: bug, State: workflow.BugAwaitingTriageApproval, Me: operator}, You, ActDecide, "you", "triage", "Triage waits for your decision"},
		{"triage gate, viewer watches", Facts{Kind: bug, State: workflow.BugAwaitingTriageApproval, Me: viewer}, Person, ActDecide, "owner or operator", "triage", "Triage waits for a person's decision"},
		{"needs info", Facts{Kind: bug, State: workflow.BugNeedsInfo, Me: operator, ReporterQuestion: true}, Reporter, ActAnswer, "the reporter", "question", ""},
		{"triaging", Facts{Kind: bug, State: workflow.BugTriaging, Me: operator}, Agent, ActWork, "the triager agent", "Triage", "Being triaged"},
		{"reproduced, review waits, operator", Facts{Kind: bug, State: workflow.BugReproduced, Me: operator, HarnessReviewWaits: true}, You, ActReviewHarness, "you", "test source", "your review"},
		{"reproduced, review waits, viewer", Facts{Kind: bug, State: workflow.BugReproduced, Me: viewer, HarnessReviewWaits: true}, Person, ActReviewHarness, "owner or operator", "test source", "staff review"},
		{"reproduced, reviewed", Facts{Kind: bug, State: workflow.BugReproduced, Me: operator}, Agent, ActWork, "fixer", "fix", ""},
		{"reporter asked about repro", Facts{Kind: bug, State: workflow.BugAwaitingReporterRepro, Me: operator}, Reporter, ActAnswer, "reporter", "reproduction", ""},
		{"reporter asked, staff review open", Facts{Kind: bug, State: workflow.BugAwaitingReporterRepro, Me: operator, HarnessReviewWaits: true}, You, ActReviewHarness, "you", "reporter is asked too", ""},
		{"verifying", Facts{Kind: bug, State: workflow.BugVerifying, Me: operator}, Agent, ActWork, "verifier", "candidate", ""},
		{"approval: mine to give", Facts{Kind: bug, State: workflow.BugAwaitingApproval, Me: operator, Quorum: 2, Approvers: []string{other}, OpenedBy: other, ProposedBy: "act_fixer", NoSelfApproval: true, ProposerCannotApprove: true},
			You, ActApprove, "you", "1 of 2 approvals", "Verified fix waits for your approval"},
		{"approval: already approved", Facts{Kind: bug, State: workflow.BugAwaitingApproval, Me: operator, Quorum: 2, Approvers: []string{operator.ID}},
			Person, ActApprove, "a second approver", "1 of 2", ""},
		{"approval: opener excluded", Facts{Kind: bug, State: workflow.BugAwaitingApproval, Me: operator, Quorum: 1, OpenedBy: operator.ID, NoSelfApproval: true},
			Person, ActApprove, "another approver", "0 of 1", ""},
		{"approval: opener allowed without the rule", Facts{Kind: bug, State: workflow.BugAwaitingApproval, Me: operator, Quorum: 1, OpenedBy: operator.ID},
			You, ActApprove, "you", "0 of 1", ""},
		{"approval: proposer excluded", Facts{Kind: chg, State: workflow.ChangeAwaitingApproval, Me: operator, Quorum: 1, ProposedBy: operator.ID, ProposerCannotApprove: true},
			Person, ActApprove, "another approver", "plan", ""},
		{"approval: not in the policy's group", Facts{Kind: chg, State: workflow.ChangeAwaitingApproval, Me: operator, Quorum: 1, ApproverGroup: []string{other}},
			Person, ActApprove, "approver the policy names", "plan", ""},
		{"approval: in the policy's group", Facts{Kind: chg, State: workflow.ChangeAwaitingApproval, Me: operator, Quorum: 1, ApproverGroup: []string{other, operator.ID}},
			You, ActApprove, "you", "plan", "Plan waits for your approval"},
		{"approval: viewer", Facts{Kind: chg, State: workflow.ChangeAwaitingApproval, Me: viewer, Quorum: 1}, Person, ActApprove, "owner or operator", "plan", ""},
		{"merge", Facts{Kind: bug, State: workflow.BugApproved, Me: operator}, You, ActMerge, "you", "Merge", "ready to merge"},
		{"merge, viewer", Facts{Kind: bug, State: workflow.BugApproved, Me: viewer}, Person, ActMerge, "owner or operator", "Merge", ""},
		{"needs human", Facts{Kind: bug, State: workflow.BugNeedsHuman, Me: operator}, Nobody, ActResume, "nobody: stuck", "resume", "Stuck"},
		{"verified", Facts{Kind: bug, State: workflow.BugVerified, Me: operator}, Nobody, ActNone, "nobody: done", "Done", ""},
		{"dropped", Facts{Kind: bug, State: workflow.BugDropped, Me: operator}, Nobody, ActNone, "done", "dropped", ""},
		{"change requested", Facts{Kind: chg, State: workflow.ChangeRequested, Me: operator}, Agent, ActWork, "planner", "plan", ""},
		{"change requested with a decision", Facts{Kind: chg, State: workflow.ChangeRequested, Me: operator, PendingDecisions: 1}, You, ActDecide, "you", "decision", ""},
		{"review failed", Facts{Kind: chg, State: workflow.ChangeReviewFailed, Me: operator}, Agent, ActWork, "planner", "new plan", "broke the policy"},
		{"execute", Facts{Kind: chg, State: workflow.ChangeApproved, Me: operator}, You, ActExecute, "you", "Execute", "ready to execute"},
		{"executing", Facts{Kind: chg, State: workflow.ChangeExecuting, Me: operator}, Agent, ActWork, "gate", "Apply", ""},
		{"drifted", Facts{Kind: chg, State: workflow.ChangeDrifted, Me: operator}, Nobody, ActPlan, "stuck", "Plan it again", ""},
		{"executed", Facts{Kind: chg, State: workflow.ChangeExecuted, Me: operator}, Nobody, ActNone, "done", "applied", ""},
		{"unknown state", Facts{Kind: chg, State: "no_such_state", Me: operator}, Nobody, ActNone, "stuck", "not in the loop", "Unknown state"},
	}
	for _, tc := range cases {
		s := Next(tc.f)
		if s.Who != tc.who || s.Action != tc.act || !strings.Contains(s.WhoText, tc.whoText) || !strings.Contains(s.Text, tc.text) || !strings.Contains(s.Label, tc.label) {
			t.Errorf("%s: got who=%s action=%q whoText=%q text=%q label=%q; want who=%s action=%q whoText~%q text~%q label~%q",
				tc.name, s.Who, s.Action, s.WhoText, s.Text, s.Label, tc.who, tc.act, tc.whoText, tc.text, tc.label)
		}
		if s.Who != You && s.Who != Nobody && s.Who != Agent && s.Who != Reporter && s.Why == "" && tc.f.Me.Role == signoff.RoleViewer {
			t.Errorf("%s: a viewer is not told why not", tc.name)
		}
	}
}

// Needs is the desk's "Needs me": a step that is yours, or a stuck case
// your role can move; never an agent's or the reporter's.
func TestNeeds(t *testing.T) {
	for _, tb := range tables() {
		for _, st := range tb.States {
			for _, me := range []signoff.Actor{operator, viewer} {
				s := Next(Facts{Kind: tb.Kind, State: st, Me: me})
				want := s.Who == You || (s.Stuck && s.CanHelp)
				if s.Needs() != want {
					t.Errorf("%s/%s: Needs %v", tb.Kind, st, s.Needs())
				}
				if me.Role == signoff.RoleViewer && s.Needs() {
					t.Errorf("%s/%s: a viewer's inbox holds it", tb.Kind, st)
				}
			}
		}
	}
	if !slices.Contains(workflow.Bug.States, workflow.BugNeedsHuman) || !Next(Facts{Kind: signoff.KindBug, State: workflow.BugNeedsHuman, Me: operator}).Needs() {
		t.Error("a stuck bug is not in an operator's inbox")
	}
}
