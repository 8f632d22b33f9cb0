package signoff

import (
	"slices"
	"time"
)

// A project's triage data as the store keeps it: the tracker, the crash
// log, release data and CODEOWNERS, and a dataset folder's items. They
// live here, not in package triage, so that the store persists them
// without importing the crew's rules (issue 27); triage keeps aliases.

// Severities in increasing order.
var Severities = []string{"low", "medium", "high", "critical"}

// SeverityRank is the position of s in Severities, or -1.
func SeverityRank(s string) int { return slices.Index(Severities, s) }

// Ticket is one entry of a project's tracker.
type Ticket struct {
	ID               string    `json:"id"`
	Title            string    `json:"title"`
	Status           string    `json:"status"` // open or closed
	Severity         string    `json:"severity"`
	Component        string    `json:"component"`
	AffectedVersions []string  `json:"affected_versions"`
	FixedIn          *string   `json:"fixed_in"`
	Owner            string    `json:"owner"`
	Created          string    `json:"created"`
	Description      string    `json:"description"`
	Comments         []Comment `json:"comments,omitempty"`
	// ApprovedBy says who let the ticket be filed: "human:<actor id>" or
	// "auto" (below the gate's floor). Empty for imported tickets.
	ApprovedBy string `json:"approved_by,omitempty"`
}

// Comment is a +1 or note on a ticket.
type Comment struct {
	Author string `json:"author"`
	Body   string `json:"body"`
	Time   string `json:"time"`
}

// CrashEvent is one row of the crash log.
type CrashEvent struct {
	Time       time.Time `json:"timestamp"`
	AppVersion string    `json:"app_version"`
	Device     string    `json:"device"`
	OS         string    `json:"os"`
	Signature  string    `json:"signature"`
	StackTop   string    `json:"stack_top"`
	UserID     string    `json:"user_id"`
}

// Release is one shipped version.
type Release struct {
	Version string `json:"version"`
	Date    string `json:"date"`
	Notes   string `json:"notes"`
}

// NextRelease is the upcoming version and its code freeze.
type NextRelease struct {
	Version    string `json:"version"`
	CodeFreeze string `json:"code_freeze"`
	Date       string `json:"date"`
}

// Releases is a project's release data. ActiveUsersByVersion holds the
// share of users per version (percent; an "older" bucket may appear).
type Releases struct {
	Product              string             `json:"product"`
	Company              string             `json:"company"`
	CurrentVersion       string             `json:"current_version"`
	Releases             []Release          `json:"releases"`
	NextRelease          NextRelease        `json:"next_release"`
	ActiveUsersByVersion map[string]float64 `json:"active_users_by_version"`
}

// Owner maps a component to the team that owns it.
type Owner struct {
	Component string `json:"component"`
	Team      string `json:"team"`
	Channel   string `json:"channel,omitempty"`
}

// Item is one piece of incoming feedback.
type Item struct {
	ID         string   `json:"id"`
	Source     string   `json:"source"`
	ReceivedAt string   `json:"received_at"`
	Author     string   `json:"author"`
	Rating     *float64 `json:"rating"`
	Metadata   Metadata `json:"metadata"`
	Text       string   `json:"text"`
	// Steps are the reproduction steps the reporter gave in the form's
	// own field, one per item (see SplitSteps); the text may hold more.
	Steps []string `json:"steps,omitempty"`
	// Signals are the airlock signals raised on the report's fields, read
	// apart and together, when it came in: every prompt that shows the
	// item names them again.
	Signals []string `json:"signals,omitempty"`
}

// Metadata is what the feedback channel reported about the device.
type Metadata struct {
	Device     string `json:"device"`
	OS         string `json:"os"`
	AppVersion string `json:"app_version"`
}

// Expected is the eval's answer for one item.
type Expected struct {
	Category    string `json:"category"`
	Outcome     string `json:"outcome"`
	DuplicateOf string `json:"duplicate_of,omitempty"` // a ticket id, or "batch:<item id>"
	Component   string `json:"component,omitempty"`
	MinSeverity string `json:"min_severity,omitempty"`
}

// Dataset is a project's triage data in the dataset folder layout.
type Dataset struct {
	Items    []Item              `json:"items"`
	Tickets  []Ticket            `json:"tickets"`
	Crashes  []CrashEvent        `json:"crashes"`
	Releases Releases            `json:"releases"`
	Owners   []Owner             `json:"owners"`
	Expected map[string]Expected `json:"expected,omitempty"`
}
