package workflow

import "github.com/signoff-dev/signoff"

// Bug states, named as in SPEC section 3.
const (
	BugReceived                     = "received"
	BugTriaging                     = "triaging"
	BugDropped                      = "dropped"
	BugDuplicate                    = "duplicate"
	BugNeedsInfo                    = "needs_info"
	BugAwaitingTriageApproval       = "awaiting_triage_approval"
	BugTicketed                     = "ticketed"
	BugReproducing                  = "reproducing"
	BugAwaitingReporterRepro        = "awaiting_reporter_repro"
	BugReproduced                   = "reproduced"
	BugFixing                       = "fixing"
	BugVerifying                    = "verifying"
	BugAwaitingApproval             = "awaiting_approval"
	BugNeedsHuman                   = "needs_human"
	BugApproved                     = "approved"
	BugMerged                       = "merged"
	BugReleased                     = "released"
	BugAwaitingReporterConfirmation = "awaiting_reporter_confirmation"
	BugVerified                     = "verified"
	BugReopened                     = "reopened"
	BugUnconfirmed                  = "unconfirmed"
	BugClosed                       = "closed"
)

var bugStates = []string{
	BugReceived, BugTriaging, BugDropped, BugDuplicate, BugNeedsInfo,
	BugAwaitingTriageApproval, BugTicketed, BugReproducing,
	BugAwaitingReporterRepro, BugReproduced, BugFixing, BugVerifying,
	BugAwaitingApproval, BugNeedsHuman, BugApproved, BugMerged, BugReleased,
	BugAwaitingReporterConfirmation, BugVerified, BugReopened, BugUnconfirmed,
	BugClosed,
}

// Bug is the bug loop. Agents move work forward; the steps that decide
// (approve, merge, confirm) belong to humans, and the confirmations to the
// reporter alone. Verdicts are recorded by the system, never by the fixer
// whose candidate is judged.
var Bug = mustNew(signoff.KindBug, BugReceived, bugStates, bugRows())

func bugRows() []Transition {
	var (
		triager    = one(signoff.RoleTriager)
		reproducer = one(signoff.RoleReproducer)
		fixer      = one(signoff.RoleFixer)
		recorder   = one(signoff.RoleRecorder)
		reporter   = one(signoff.RoleReporter)
	)
	rows := []Transition{
		{From: BugReceived, Command: "start_triage", To: BugTriaging, Roles: roles(triager, humans, system)},

		{From: BugTriaging, Command: "drop", To: BugDropped, Roles: roles(triager, humans)},
		{From: BugTriaging, Command: "mark_duplicate", To: BugDuplicate, Roles: roles(triager, humans)},
		{From: BugTriaging, Command: "request_info", To: BugNeedsInfo, Roles: roles(triager, humans)},
		// The human gate for high severity or low confidence is entered by
		// the triager's ticket tool or by the system, never skipped by a prompt.
		{From: BugTriaging, Command: "request_triage_approval", To: BugAwaitingTriageApproval, Roles: roles(triager, system)},
		{From: BugTriaging, Command: "ticket", To: BugTicketed, Roles: roles(triager, humans)},

		{From: BugAwaitingTriageApproval, Command: "approve_triage", To: BugTicketed, Roles: roles(humans)},
		{From: BugAwaitingTriageApproval, Command: "reject_triage", To: BugTriaging, Roles: roles(humans)},

		// The concierge and humans relay what the reporter said.
		{From: BugNeedsInfo, Command: "provide_info", To: BugTriaging, Roles: roles(reporter, one(signoff.RoleConcierge), humans)},

		{From: BugTicketed, Command: "start_reproduction", To: BugReproducing, Roles: roles(reproducer, humans, system)},
		{From: BugReproducing, Command: "propose_reproduction", To: BugAwaitingReporterRepro, Roles: roles(reproducer, humans)},

		// "Is this the bug you saw?" only the reporter can answer.
		{From: BugAwaitingReporterRepro, Command: "confirm_reproduction", To: BugReproduced, Roles: roles(reporter)},
		{From: BugAwaitingReporterRepro, Command: "reject_reproduction", To: BugReproducing, Roles: roles(reporter)},

		// "Does this test check the reported behaviour?" a member of staff
		// answers after reading its source, and nothing is fixed until both
		// they and the reporter accepted it (the SYNKAI rule). A staff
		// approval given while the reporter is still asked is recorded on
		// the harness and moves nothing; given after the reporter's yes it
		// freezes the harness where the case stands, and the fix starts.
		// A staff rejection sends the case back to reproducing with why.
		{From: BugReproduced, Command: "approve_harness", To: BugReproduced, Roles: roles(humans)},
		{From: BugAwaitingReporterRepro, Command: "reject_harness", To: BugReproducing, Roles: roles(humans)},
		{From: BugReproduced, Command: "reject_harness", To: BugReproducing, Roles: roles(humans)},

		{From: BugReproduced, Command: "start_fix", To: BugFixing, Roles: roles(fixer, humans, system)},
		{From: BugFixing, Command: "submit_candidate", To: BugVerifying, Roles: roles(fixer, humans), Guard: AttemptLeft, Effect: CountAttempt},

		// Only the verifier (system) records verdicts. A rejection with no
		// attempt left goes to a human, and so does an inconclusive run: fail
		// closed, never retry silently.
		{From: BugVerifying, Command: "record_verified", To: BugAwaitingApproval, Roles: roles(system)},
		{From: BugVerifying, Command: "record_rejected", To: BugFixing, Roles: roles(system), Guard: AttemptLeft},
		{From: BugVerifying, Command: "record_rejected", To: BugNeedsHuman, Roles: roles(system), Guard: NoAttemptLeft},
		{From: BugVerifying, Command: "record_inconclusive", To: BugNeedsHuman, Roles: roles(system)},

		{From: BugAwaitingApproval, Command: "approve", To: BugApproved, Roles: roles(humans)},
		{From: BugAwaitingApproval, Command: "reject", To: BugFixing, Roles: roles(humans), Guard: AttemptLeft},
		{From: BugAwaitingApproval, Command: "reject", To: BugNeedsHuman, Roles: roles(humans), Guard: NoAttemptLeft},

		{From: BugApproved, Command: "merge", To: BugMerged, Roles: roles(humans)},
		// Main moved in a way that changes what would ship: a person has
		// the candidate rebased onto the current main and verified again.
		{From: BugApproved, Command: "reverify", To: BugVerifying, Roles: roles(humans)},
		{From: BugAwaitingApproval, Command: "reverify", To: BugVerifying, Roles: roles(humans)},
		{From: BugMerged, Command: "record_release", To: BugReleased, Roles: roles(recorder, system)},
		{From: BugReleased, Command: "ask_reporter", To: BugAwaitingReporterConfirmation, Roles: roles(recorder, system)},

		// The reporter has the last word; silence is unconfirmed, not verified.
		{From: BugAwaitingReporterConfirmation, Command: "confirm_fix", To: BugVerified, Roles: roles(reporter)},
		{From: BugAwaitingReporterConfirmation, Command: "report_still_broken", To: BugReopened, Roles: roles(reporter)},
		{From: BugAwaitingReporterConfirmation, Command: "confirmation_timeout", To: BugUnconfirmed, Roles: roles(system)},

		// A reopened case starts a new round from a new reproduction, so
		// its fixer gets a fresh budget of attempts.
		// Duplicates (SPEC section 7): each report is its own case. When
		// the primary's fix is live, every duplicate's reporter is asked
		// on their own page; a "no" from one of them puts their case back
		// behind the primary and reopens the primary.
		{From: BugDuplicate, Command: "ask_reporter", To: BugAwaitingReporterConfirmation, Roles: roles(recorder, system)},
		{From: BugAwaitingReporterConfirmation, Command: "still_broken_on_primary", To: BugDuplicate, Roles: roles(reporter)},
		{From: BugAwaitingReporterConfirmation, Command: "withdraw_question", To: BugDuplicate, Roles: roles(system)},
		{From: BugAwaitingReporterConfirmation, Command: "reopen", To: BugReopened, Roles: roles(system)},
		{From: BugVerified, Command: "reopen", To: BugReopened, Roles: roles(system)},
		{From: BugUnconfirmed, Command: "reopen", To: BugReopened, Roles: roles(system)},

		{From: BugReopened, Command: "start_reproduction", To: BugReproducing, Roles: roles(reproducer, humans, system), Effect: ResetAttempts},

		{From: BugNeedsHuman, Command: "resume_triage", To: BugTriaging, Roles: roles(humans)},
		{From: BugNeedsHuman, Command: "resume_reproduction", To: BugReproducing, Roles: roles(humans)},
		{From: BugNeedsHuman, Command: "resume_fix", To: BugFixing, Roles: roles(humans), Effect: ResetAttempts},
	}
	// Anyone doing the work may hand a case to a human at any point (out of
	// autonomy scope); only the owner closes. The reporter cannot escalate:
	// their channel is provide_info and report_still_broken.
	escalators := roles(signoff.AgentRoles, humans, system)
	for _, s := range bugStates {
		if s != BugNeedsHuman && s != BugClosed {
			rows = append(rows, Transition{From: s, Command: "escalate", To: BugNeedsHuman, Roles: roles(escalators)})
		}
	}
	for _, s := range bugStates {
		if s != BugClosed {
			rows = append(rows, Transition{From: s, Command: "close", To: BugClosed, Roles: one(signoff.RoleOwner)})
		}
	}
	return rows
}

// loopSteps are the bug commands that carry something the bug loop must
// check or record with them: a proposal run in the sandbox, a candidate, a
// verdict, a deployment found by ancestry, a smoke check. Sent as a bare
// transition they would move the case without that evidence, so they
// exist only on the loop's own paths (package bugdesk), never on the
// generic transition endpoint.
var loopSteps = map[string]bool{
	"start_reproduction": true, "propose_reproduction": true, "start_fix": true, "submit_candidate": true,
	"record_verified": true, "record_rejected": true, "record_inconclusive": true, "reverify": true,
	"record_release": true, "ask_reporter": true, "confirmation_timeout": true,
	"withdraw_question": true, "reopen": true,
}

// LoopStep reports whether a bug command belongs to the loop's own paths.
func LoopStep(command string) bool { return loopSteps[command] }

// triageOutcomes are decided by the triage crew's tools, which hold the
// guards (duplicate score, regression, actionability) and the human gate.
// An agent sending one as a bare transition would skip all of that; a
// person may still decide them by hand.
var triageOutcomes = map[string]bool{
	"ticket": true, "drop": true, "mark_duplicate": true, "request_info": true, "request_triage_approval": true,
}

// TriageOutcome reports whether a bug command is a triage outcome.
func TriageOutcome(command string) bool { return triageOutcomes[command] }
