// Package triage holds the triage crew's domain: a project's tracker, crash
// log, releases and CODEOWNERS; the four roles' decisions (intake,
// investigator, triage, writer); the guards that refuse claims the evidence
// does not support; and the eval. Everything here is pure: no I/O beyond
// reading a dataset folder, no storage, no model.
package triage

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// Categories of feedback (intake's decision).
const (
	CategoryBug      = "bug"
	CategoryFeature  = "feature_request"
	CategoryPraise   = "praise"
	CategorySpam     = "spam"
	CategorySupport  = "support_question"
	VerdictNew       = "new"
	VerdictDuplicate = "duplicate"
	VerdictNeedsInfo = "needs_info"
)

// Outcomes an item can end with.
const (
	OutcomeNewTicket = "new_ticket"
	OutcomeDuplicate = "duplicate"
	OutcomeNeedsInfo = "needs_info"
	OutcomeDropped   = "dropped"
	// OutcomeNeedsHuman ends a run an agent could not finish: no ticket,
	// the case is with a person.
	OutcomeNeedsHuman = "needs_human"
)

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

// LoadDataset reads a dataset folder: inbox/*.json,
// tickets.json, crashes.csv, releases.json, CODEOWNERS and, optionally,
// expected.json. Items are returned in arrival order (received_at, then
// id).
func LoadDataset(fsys fs.FS) (Dataset, error) {
	var d Dataset
	entries, err := fs.Glob(fsys, "inbox/*.json")
	if err != nil {
		return d, err
	}
	for _, p := range entries {
		var it Item
		if err := readJSON(fsys, p, &it); err != nil {
			return d, err
		}
		if it.ID == "" {
			it.ID = strings.TrimSuffix(path.Base(p), ".json")
		}
		d.Items = append(d.Items, it)
	}
	slices.SortStableFunc(d.Items, func(a, b Item) int {
		if c := strings.Compare(a.ReceivedAt, b.ReceivedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if err := readJSON(fsys, "tickets.json", &d.Tickets); err != nil {
		return d, err
	}
	if err := readJSON(fsys, "releases.json", &d.Releases); err != nil {
		return d, err
	}
	f, err := fsys.Open("crashes.csv")
	if err != nil {
		return d, fmt.Errorf("crashes.csv: %w", err)
	}
	d.Crashes, err = ParseCrashes(f)
	f.Close()
	if err != nil {
		return d, fmt.Errorf("crashes.csv: %w", err)
	}
	b, err := fs.ReadFile(fsys, "CODEOWNERS")
	if err != nil {
		return d, fmt.Errorf("CODEOWNERS: %w", err)
	}
	d.Owners = ParseCodeOwners(string(b))
	if err := readJSON(fsys, "expected.json", &d.Expected); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return d, err
	}
	return d, nil
}

func readJSON(fsys fs.FS, p string, v any) error {
	b, err := fs.ReadFile(fsys, p)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	return nil
}

// ParseCrashes reads a crash log CSV with a header row naming at least
// timestamp, app_version, device, os, signature, stack_top and user_id, in
// any order.
func ParseCrashes(r io.Reader) ([]CrashEvent, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	for _, need := range []string{"timestamp", "app_version", "device", "os", "signature", "stack_top", "user_id"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("header lacks column %q", need)
		}
	}
	var out []CrashEvent
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		get := func(k string) string {
			if i := col[k]; i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		ts, err := time.Parse(time.RFC3339, get("timestamp"))
		if err != nil {
			return nil, fmt.Errorf("line %d: timestamp: %w", line, err)
		}
		out = append(out, CrashEvent{Time: ts, AppVersion: get("app_version"), Device: get("device"), OS: get("os"),
			Signature: get("signature"), StackTop: get("stack_top"), UserID: get("user_id")})
	}
}

// ParseCodeOwners reads "component team [channel]" lines. A line starting
// with # is a comment; a later # is part of the line (Slack channels are
// written #name).
func ParseCodeOwners(s string) []Owner {
	var out []Owner
	for line := range strings.SplitSeq(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		o := Owner{Component: f[0], Team: f[1]}
		if len(f) > 2 {
			o.Channel = f[2]
		}
		out = append(out, o)
	}
	return out
}
