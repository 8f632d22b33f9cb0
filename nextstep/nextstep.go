// Package nextstep says, for one case and the facts a page knows about it,
// who must act next and what that action is, in plain words, and names
// every state of both loops for people. It is pure: it reads only the
// facts it is given and the workflow tables, so the desk, the case page
// and the approval page word the same case the same way.
//
// It decides nothing: a "you" here only means the page may offer the
// action; the desks and the store check the role, the quorum and the
// exclusions again when the action is taken.
package nextstep

import (
	"fmt"
	"slices"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/workflow"
)

// Who is whose move it is.
type Who string

const (
	// You: the signed-in person may take the action now.
	You Who = "you"
	// Person: another person must act (a second approver, a role the
	// signed-in person does not hold, or one not excluded as they are).
	Person Who = "person"
	// Reporter: the person who reported the bug must answer.
	Reporter Who = "reporter"
	// Agent: an agent or the server's own machinery (verifier, gate)
	// works next; Step.Role names which.
	Agent Who = "agent"
	// Nobody: the case is done, or stuck until a person steps in.
	Nobody Who = "nobody"
)

// Action is what the next step is, for a page to turn into a button, a
// link or a command.
type Action string

const (
	ActNone          Action = ""
	ActDecide        Action = "decide"         // a pending decision (the triage gate)
	ActReviewHarness Action = "review_harness" // staff review of a reproduction's test source
	ActApprove       Action = "approve"        // sign the approval subject's digest
	ActMerge         Action = "merge"          // merge an approved candidate
	ActExecute       Action = "execute"        // execute an approved change plan
	ActPlan          Action = "plan"           // plan (or re-plan) a change
	ActResume        Action = "resume"         // send a stuck bug back into the loop
	ActAnswer        Action = "answer"         // the reporter answers on their tracking page
	ActWork          Action = "work"           // an agent or the server works
)

// Facts are what a page knows about a case when it asks. Zero values are
// "unknown" or "none": an unknown quorum is not shown as a count.
type Facts struct {
	Kind  signoff.CaseKind
	State string
	// Me is the signed-in person (ID and Role).
	Me signoff.Actor
	// OpenedBy opened the case (the change request's opener); ProposedBy
	// proposed the subject waiting for approval (the candidate's
	// submitter, the plan's proposer).
	OpenedBy, ProposedBy string
	// Approvers approved the live subject so far (distinct ids); Quorum is
	// how many distinct approvals the policy needs (0: unknown).
	Approvers []string
	Quorum    int
	// NoSelfApproval and ProposerCannotApprove are the policy's exclusions.
	NoSelfApproval, ProposerCannotApprove bool
	// ApproverGroup, when set, is the only people the policy lets approve.
	ApproverGroup []string
	// PendingDecisions counts the case's unexpired pending decisions.
	PendingDecisions int
	// ReporterQuestion says a question to the reporter is open.
	ReporterQuestion bool
	// HarnessReviewWaits says the round's reproduction waits for a staff
	// review of its test source.
	HarnessReviewWaits bool
}

// Step is the next step of a case.
type Step struct {
	Who Who
	// Role is the agent role (or the server's part: "verifier", "gate",
	// "policy review") for Who == Agent, and the roles that may act for
	// Who == Person or You when it matters ("owner or operator").
	Role string
	// AgentRole is the role whose move it is for Who == Agent
	// (signoff.RoleSystem for the server's own steps).
	AgentRole signoff.Role
	// WhoText names who in plain words: "you", "another approver", "the
	// reporter", "the fixer agent", "nobody: stuck".
	WhoText string
	Action  Action
	// Text is the action in plain words.
	Text string
	// Why says, when it is not you, why not (you proposed it, you already
	// approved, your role does not approve).
	Why string
	// Done: nothing more will happen on its own and nothing needs to.
	// Stuck: nothing will happen until a person steps in.
	Done, Stuck bool
	// CanHelp says the signed-in person's role could take the action a
	// stuck case needs (resume, plan again).
	CanHelp bool
	// Label is the state in plain words for this person.
	Label string
}

// Needs reports whether the step waits on the signed-in person, or is a
// stuck case their role can move: the desk's "Needs me".
func (s Step) Needs() bool { return s.Who == You || (s.Stuck && s.CanHelp) }

// Label is the state of a case of kind in plain words, the same for
// everyone; "" for an unknown state.
func Label(kind signoff.CaseKind, state string) string {
	switch kind {
	case signoff.KindBug:
		return bugLabels[state]
	case signoff.KindChange:
		return changeLabels[state]
	}
	return ""
}

var bugLabels = map[string]string{
	workflow.BugReceived:                     "Received: triage starts next",
	workflow.BugTriaging:                     "Being triaged",
	workflow.BugDropped:                      "Dropped at triage",
	workflow.BugDuplicate:                    "Duplicate of another case",
	workflow.BugNeedsInfo:                    "Waits for the reporter's answer",
	workflow.BugAwaitingTriageApproval:       "Triage waits for a person's decision",
	workflow.BugTicketed:                     "Ticketed: reproduction starts next",
	workflow.BugReproducing:                  "A failing test is being written",
	workflow.BugAwaitingReporterRepro:        "Waits for the reporter to confirm the reproduction",
	workflow.BugReproduced:                   "Reproduced: the fix starts next",
	workflow.BugFixing:                       "A fix is being written",
	workflow.BugVerifying:                    "The fix is being verified",
	workflow.BugAwaitingApproval:             "Verified fix waits for approval",
	workflow.BugNeedsHuman:                   "Stuck: needs a person",
	workflow.BugApproved:                     "Approved: ready to merge",
	workflow.BugMerged:                       "Merged: waits for the release",
	workflow.BugReleased:                     "Released: the reporter is asked next",
	workflow.BugAwaitingReporterConfirmation: "Waits for the reporter to confirm the fix",
	workflow.BugVerified:                     "Fixed, confirmed by the reporter",
	workflow.BugReopened:                     "Reopened: still broken for the reporter",
	workflow.BugUnconfirmed:                  "Fixed, not confirmed: the reporter did not answer",
	workflow.BugClosed:                       "Closed",
}

var changeLabels = map[string]string{
	workflow.ChangeRequested:        "Requested: waits for a plan",
	workflow.ChangePlanned:          "Planned: the policy check runs",
	workflow.ChangeReviewed:         "Plan passed the policy check",
	workflow.ChangeReviewFailed:     "Plan broke the policy: needs a new plan",
	workflow.ChangeAwaitingApproval: "Plan waits for approval",
	workflow.ChangeApproved:         "Approved: ready to execute",
	workflow.ChangeExecuting:        "Being executed by the gate",
	workflow.ChangeExecuted:         "Executed",
	workflow.ChangeRolledBack:       "Failed and rolled back: needs a new plan",
	workflow.ChangeDrifted:          "Not applied: the target changed since the plan",
	workflow.ChangeReverted:         "Executed, then reverted",
	workflow.ChangeExpired:          "Expired before it was executed",
	workflow.ChangeSuperseded:       "Replaced by a newer request",
}

// Next says who must act next on the case f describes, and what.
func Next(f Facts) Step {
	var s Step
	switch f.Kind {
	case signoff.KindBug:
		s = nextBug(f)
	case signoff.KindChange:
		s = nextChange(f)
	default:
		s = Step{Who: Nobody, Stuck: true, Text: fmt.Sprintf("Cases of kind %q have no loop here.", f.Kind)}
	}
	if s.Label == "" {
		s.Label = Label(f.Kind, f.State)
	}
	if s.Label == "" {
		// A state the tables do not know: say so rather than guess.
		s = Step{Who: Nobody, Stuck: true, Label: "Unknown state " + f.State, Text: "This state is not in the loop's table."}
	}
	if s.WhoText == "" {
		s.WhoText = whoText(s)
	}
	return s
}

func whoText(s Step) string {
	switch s.Who {
	case You:
		return "you"
	case Reporter:
		return "the reporter"
	case Agent:
		return "the " + s.Role
	case Person:
		if s.Role != "" {
			return "an " + s.Role
		}
		return "another person"
	case Nobody:
		if s.Stuck {
			return "nobody: stuck"
		}
		return "nobody: done"
	}
	return string(s.Who)
}

func agent(r signoff.Role, name, text string) Step {
	return Step{Who: Agent, Role: name, AgentRole: r, Action: ActWork, Text: text}
}

func done(text string) Step { return Step{Who: Nobody, Done: true, Text: text} }

// staff is the step a desk role takes (decide, review, merge, execute): the
// signed-in person when their role holds op, else another person.
func staff(f Facts, op identity.Operation, a Action, text string) Step {
	if identity.Can(f.Me.Role, op) {
		return Step{Who: You, Action: a, Text: text}
	}
	return Step{Who: Person, Role: "owner or operator", Action: a, Text: text,
		Why: fmt.Sprintf("your role (%s) does not do this", f.Me.Role)}
}

func nextBug(f Facts) Step {
	switch f.State {
	case workflow.BugReceived:
		return agent(signoff.RoleTriager, "triager agent", "Start triage: search for duplicates and weigh the crash data.")
	case workflow.BugTriaging:
		return agent(signoff.RoleTriager, "triager agent", "Triage the report: ticket it, ask the reporter, or drop it.")
	case workflow.BugDropped:
		return done("Nothing more: triage dropped the report.")
	case workflow.BugDuplicate:
		return done("Nothing here: the primary case carries the fix, and this reporter is asked when it is live.")
	case workflow.BugNeedsInfo:
		return Step{Who: Reporter, Action: ActAnswer, Text: "Answer the triager's question on the tracking page."}
	case workflow.BugAwaitingTriageApproval:
		s := staff(f, identity.OpDecisionDecide, ActDecide, "Approve or reject the triage (ticket, severity) it held for a person.")
		if s.Who == You {
			s.Label = "Triage waits for your decision"
		}
		return s
	case workflow.BugTicketed:
		return agent(signoff.RoleReproducer, "reproducer agent", "Write a test that fails the way the report says.")
	case workflow.BugReproducing:
		return agent(signoff.RoleReproducer, "reproducer agent", "Write a test that fails the way the report says.")
	case workflow.BugAwaitingReporterRepro:
		if f.HarnessReviewWaits && identity.Can(f.Me.Role, identity.OpHarnessReview) {
			return Step{Who: You, Action: ActReviewHarness, Label: "Reproduction waits for the reporter and your review",
				Text: "Read the reproduction's test source and approve or reject it (the reporter is asked too)."}
		}
		return Step{Who: Reporter, Action: ActAnswer, Text: "Say whether the reproduction is the bug they saw."}
	case workflow.BugReproduced:
		if f.HarnessReviewWaits {
			s := staff(f, identity.OpHarnessReview, ActReviewHarness, "Read the reproduction's test source and approve or reject it: the fix starts after that.")
			s.Label = "Reproduced: the test waits for a staff review"
			if s.Who == You {
				s.Label = "Reproduced: the test waits for your review"
			}
			return s
		}
		return agent(signoff.RoleFixer, "fixer agent", "Start the fix against the frozen test.")
	case workflow.BugFixing:
		return agent(signoff.RoleFixer, "fixer agent", "Propose a fix that makes the frozen test pass.")
	case workflow.BugVerifying:
		return agent(signoff.RoleSystem, "verifier", "Run the frozen test on the base and on the candidate fix.")
	case workflow.BugAwaitingApproval:
		return approve(f, "the verified fix", "Verified fix waits for your approval")
	case workflow.BugNeedsHuman:
		return Step{Who: Nobody, Stuck: true, Action: ActResume, CanHelp: identity.Can(f.Me.Role, identity.OpLoopStart),
			Text: "A person must look: resume triage, the reproduction or the fix, or close the case."}
	case workflow.BugApproved:
		return staff(f, identity.OpMerge, ActMerge, "Merge the approved fix.")
	case workflow.BugMerged:
		return agent(signoff.RoleRecorder, "recorder agent", "Record the release once a deployment ships the fix.")
	case workflow.BugReleased:
		return agent(signoff.RoleRecorder, "recorder agent", "Ask the reporter whether the fix works for them.")
	case workflow.BugAwaitingReporterConfirmation:
		return Step{Who: Reporter, Action: ActAnswer, Text: "Say whether the live fix works for them."}
	case workflow.BugVerified:
		return done("Done: the reporter confirmed the fix.")
	case workflow.BugReopened:
		return agent(signoff.RoleReproducer, "reproducer agent", "Reproduce it again: the reporter says it is still broken.")
	case workflow.BugUnconfirmed:
		return done("Done: the fix shipped; the reporter did not answer in time.")
	case workflow.BugClosed:
		return done("Done: the case is closed.")
	}
	return Step{}
}

func nextChange(f Facts) Step {
	replan := func(text string) Step {
		return Step{Who: Nobody, Stuck: true, Action: ActPlan, CanHelp: identity.Can(f.Me.Role, identity.OpChangePlan), Text: text}
	}
	switch f.State {
	case workflow.ChangeRequested:
		if f.PendingDecisions > 0 {
			return staff(f, identity.OpDecisionDecide, ActDecide, "Answer the decision the request waits for.")
		}
		s := agent(signoff.RolePlanner, "planner agent", "Draft a plan for the request (a person may plan it by hand).")
		s.CanHelp = identity.Can(f.Me.Role, identity.OpChangePlan)
		return s
	case workflow.ChangePlanned:
		return agent(signoff.RoleSystem, "policy check", "Check the plan against the change policy.")
	case workflow.ChangeReviewed:
		return agent(signoff.RoleSystem, "policy check", "Ask for the approvals the policy needs.")
	case workflow.ChangeReviewFailed:
		s := agent(signoff.RolePlanner, "planner agent", "Draft a new plan that keeps to the policy.")
		s.CanHelp = identity.Can(f.Me.Role, identity.OpChangePlan)
		return s
	case workflow.ChangeAwaitingApproval:
		return approve(f, "the plan", "Plan waits for your approval")
	case workflow.ChangeApproved:
		return staff(f, identity.OpChangeExecute, ActExecute, "Execute the approved plan through the gate.")
	case workflow.ChangeExecuting:
		return agent(signoff.RoleSystem, "gate", "Apply the signed plan and record the receipt.")
	case workflow.ChangeExecuted:
		return done("Done: the gate applied the plan.")
	case workflow.ChangeRolledBack:
		return replan("The execution failed and was rolled back: plan it again against the state as it is now.")
	case workflow.ChangeDrifted:
		return replan("Nothing was applied: the target changed since the plan. Plan it again against the state as it is now.")
	case workflow.ChangeReverted:
		return done("Done: executed, then reverted.")
	case workflow.ChangeExpired:
		return done("Ended unexecuted: the approval window passed. Plan it again if it is still needed.")
	case workflow.ChangeSuperseded:
		return done("Done here: a newer request replaced this one.")
	}
	return Step{}
}

// approve is the approval step: the signed-in person, unless their role
// does not approve, the policy excludes them, or they already approved.
func approve(f Facts, what, yourLabel string) Step {
	count := ""
	if f.Quorum > 0 {
		count = fmt.Sprintf(" (%d of %d approvals so far)", len(f.Approvers), f.Quorum)
	}
	s := Step{Who: You, Action: ActApprove, Text: "Approve or reject " + what + count + "."}
	switch {
	case !identity.Can(f.Me.Role, identity.OpApprove):
		s.Who, s.Role, s.Why = Person, "owner or operator", fmt.Sprintf("your role (%s) does not approve", f.Me.Role)
		s.WhoText = "an owner or operator"
		return s
	case len(f.ApproverGroup) > 0 && !slices.Contains(f.ApproverGroup, f.Me.ID):
		s.Who, s.Why = Person, "the policy names other approvers"
		s.WhoText = "an approver the policy names"
		return s
	case f.ProposerCannotApprove && f.ProposedBy != "" && f.ProposedBy == f.Me.ID:
		s.Who, s.Why = Person, "you proposed it, so the policy needs someone else"
	case f.NoSelfApproval && f.OpenedBy != "" && f.OpenedBy == f.Me.ID:
		s.Who, s.Why = Person, "you opened the case, so the policy needs someone else"
	case slices.Contains(f.Approvers, f.Me.ID):
		s.Who, s.Why = Person, "you already approved"
	default:
		s.Label = yourLabel
		return s
	}
	s.WhoText = "another approver"
	if len(f.Approvers) > 0 || f.Quorum > 1 {
		s.WhoText = "a second approver"
		if len(f.Approvers) > 1 {
			s.WhoText = "another approver"
		}
	}
	return s
}
