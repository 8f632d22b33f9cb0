package signoff

import "time"

// The web UI's storage types: a browser session and the desk's case list.
// They live in the domain so that the web door names them without
// importing the store that keeps them.

// WebSession is a person's browser session. CSRF is the token every form
// of the session must carry.
type WebSession struct {
	Actor     Actor
	CSRF      string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// LoginLinkPrefix starts every one-time sign-in code, so secret scanners
// can find a leaked one.
const LoginLinkPrefix = "sol_"

// DeskCase is a case as the desk lists it: with the severity and owner of
// its ticket, when triage filed one, its project's name, and the facts the
// desk needs to say who must act next on it (read in a few batched
// queries for the whole page, never one per row).
type DeskCase struct {
	Case
	Severity    string `json:"severity,omitempty"`
	Owner       string `json:"owner,omitempty"`
	ProjectName string `json:"project_name,omitempty"`
	// PendingDecisions counts its unexpired pending decisions.
	PendingDecisions int `json:"pending_decisions,omitempty"`
	// Approvers approved it and their approvals still count (valid and
	// unexpired); read for cases awaiting approval only.
	Approvers []string `json:"approvers,omitempty"`
	// PlanProposer proposed the change case's newest plan.
	PlanProposer string `json:"plan_proposer,omitempty"`
	// Loop is the bug loop's record, read only for bug cases in a state
	// where it says who acts (awaiting approval, a reproduction under
	// review).
	Loop *BugLoopState `json:"-"`
}

// DeskFilter selects the desk's cases; empty fields select all. Query
// matches titles (case-insensitive for ASCII). Before pages: cases older
// than that case id. ID selects one case. States, when set, selects cases
// in any of them (the inbox's states, read through the cases_state index).
type DeskFilter struct {
	Kind   CaseKind
	State  string
	States []string
	Query  string
	Before string
	ID     string
	Limit  int
}
