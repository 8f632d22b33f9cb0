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

	"github.com/signoff-dev/signoff"
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

// The project data types live in the domain package, so that the store
// persists them without importing this package's rules; the names here
// stay for the crew and the eval.
type (
	Ticket      = signoff.Ticket
	Comment     = signoff.Comment
	CrashEvent  = signoff.CrashEvent
	Release     = signoff.Release
	NextRelease = signoff.NextRelease
	Releases    = signoff.Releases
	Owner       = signoff.Owner
	Item        = signoff.Item
	Metadata    = signoff.Metadata
	Expected    = signoff.Expected
	Dataset     = signoff.Dataset
)

// Severities in increasing order (signoff.Severities).
var Severities = signoff.Severities

// SeverityRank is the position of s in Severities, or -1.
func SeverityRank(s string) int { return signoff.SeverityRank(s) }

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
