package signoff

import (
	"time"
)

// What the desk's charts read from the store, in the domain so that the
// web door names it without importing the store.

// StateChange is one change of a case's state: its creation (From is
// empty) or a transition.
type StateChange struct {
	Seq    int64
	CaseID string
	Time   time.Time
	From   string
	To     string
}

// CaseStates are the states of a workspace's cases now and the changes
// that led there since a time, read as of one instant.
type CaseStates struct {
	// Now counts the workspace's cases per state now.
	Now map[string]int
	// Changes are the creations and transitions from Since on, oldest
	// first (ledger order).
	Changes []StateChange
	// Since is the time from which Changes are complete: the time asked
	// for, or a later one when the limit cut older changes off.
	Since time.Time
	// Truncated says the limit cut older changes off.
	Truncated bool
}

// CrashWindow is the part of a project's crash log the charts draw: the
// events of the days before its newest one (newest first, at most the
// limit asked for), and how many are older.
type CrashWindow struct {
	Events []CrashEvent
	// Older counts the events before the window; Cut those inside it
	// left out by the limit (the oldest of the window).
	Older, Cut int
}
