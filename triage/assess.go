package triage

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Assessment is the triage role's record for a confirmed new bug.
type Assessment struct {
	Severity  string         `json:"severity"`
	Component string         `json:"component"`
	Owner     string         `json:"owner"`
	Rationale string         `json:"rationale"`
	Evidence  map[string]any `json:"evidence"`
}

// AssessInput is what triage decides from: the item and its records, the
// crash log's ranking for it, the release data and CODEOWNERS, and the
// tracker (whose tickets teach each component's vocabulary).
type AssessInput struct {
	Item          Item
	Intake        Intake
	Investigation Investigation
	Crashes       []CrashAggregate // CrashLog.Query for this item
	CrashUsers    int              // distinct users in the whole crash log (0: unknown)
	Releases      Releases
	Owners        []Owner
	TrackerHits   []Hit
	Tickets       map[string]Ticket
	Components    *ComponentModel // nil: built from Owners and Tickets
}

// Assess assigns severity, component and owner, and argues the severity
// from numbers.
//
// Severity comes from severityOf: harm (data loss, money, lockout,
// security, an unusable app) and where the report's crash falls in the
// project's own crash distribution and release data.
func Assess(in AssessInput) Assessment {
	a := analyze(in.Item.Text)
	ev := map[string]any{}
	var agg *CrashAggregate
	for i := range in.Crashes {
		if in.Crashes[i].Signature == in.Investigation.Signature && in.Investigation.Signature != "" {
			agg = &in.Crashes[i]
			break
		}
	}
	users, events := 0, 0
	if agg != nil {
		users, events = agg.Users, agg.Events
		ev["signature"] = agg.Signature
		ev["stack_top"] = agg.StackTop
		ev["events"] = agg.Events
		ev["users"] = agg.Users
		ev["versions"] = agg.Versions
		ev["platforms"] = agg.Platforms
		ev["devices"] = agg.Devices
		ev["first_seen"] = agg.FirstSeen.Format(time.RFC3339)
		ev["last_seen"] = agg.LastSeen.Format(time.RFC3339)
	} else {
		ev["events"] = 0
		ev["users"] = 0
	}
	if in.CrashUsers > 0 {
		ev["crash_log_users"] = in.CrashUsers
	}
	version := in.Intake.AppVersion
	share, hasShare := versionShare(in.Releases, version)
	if version != "" {
		ev["reporter_version"] = version
	}
	if hasShare {
		ev["version_share_pct"] = share
	}
	days, hasDays := daysToFreeze(in.Item.ReceivedAt, in.Releases.NextRelease.CodeFreeze)
	if hasDays {
		ev["days_to_code_freeze"] = days
		ev["code_freeze"] = in.Releases.NextRelease.CodeFreeze
		ev["next_release"] = in.Releases.NextRelease.Version
	}
	if in.Investigation.RegressionOf != "" {
		ev["regression_of"] = in.Investigation.RegressionOf
	}

	sev, reasons := severityOf(a.bag, in.Item.Text, agg, in.Crashes, in.Releases, version, ev)

	cm := in.Components
	if cm == nil {
		var ts []Ticket
		for _, t := range in.Tickets {
			ts = append(ts, t)
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i].ID < ts[j].ID })
		cm = NewComponentModel(in.Owners, ts)
	}
	var regressed *Ticket
	if r, ok := in.Tickets[in.Investigation.RegressionOf]; ok {
		regressed = &r
	}
	comp, compWhy := cm.Choose(in.Item.Text, agg, regressed, in.TrackerHits)
	owner := ""
	if o, err := OwnerOf(comp, in.Owners); err == nil {
		owner = o.Team
		comp = o.Component
	}
	ev["component_why"] = compWhy

	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s. ", sev, strings.Join(reasons, "; "))
	if agg != nil {
		fmt.Fprintf(&b, "Telemetry: %s, %d events from %d distinct users", agg.Signature, events, users)
		if version != "" {
			fmt.Fprintf(&b, " (%d events on %s)", versionCount(agg.Versions, version), version)
		}
		if in.CrashUsers > 0 {
			fmt.Fprintf(&b, ", %.0f%% of the %d users in the crash log", 100*float64(users)/float64(in.CrashUsers), in.CrashUsers)
		}
		if r, ok := ev["signature_rank"].(int); ok {
			fmt.Fprintf(&b, "; #%d of %d signatures by distinct users (median %v per signature)", r, ev["signatures"], ev["median_users_per_signature"])
		}
		fmt.Fprintf(&b, ", top of stack %s. ", agg.StackTop)
	} else {
		b.WriteString("Telemetry: no crash signature matches this report (0 events, 0 distinct users). ")
	}
	if hasShare {
		fmt.Fprintf(&b, "%.0f%% of active users are on %s (the most-used version has %.0f%%). ", share, version, topVersionShare(in.Releases))
	} else if version != "" {
		fmt.Fprintf(&b, "No user share is known for %s. ", version)
	}
	if hasDays {
		if days >= 0 {
			fmt.Fprintf(&b, "%d days to the %s code freeze (%s). ", days, in.Releases.NextRelease.Version, in.Releases.NextRelease.CodeFreeze)
		} else {
			fmt.Fprintf(&b, "The %s code freeze (%s) passed %d days ago. ", in.Releases.NextRelease.Version, in.Releases.NextRelease.CodeFreeze, -days)
		}
	}
	if in.Investigation.RegressionOf != "" {
		fmt.Fprintf(&b, "Regression of %s. ", in.Investigation.RegressionOf)
	}
	fmt.Fprintf(&b, "Component %s (%s), owner %s.", comp, compWhy, owner)
	return Assessment{Severity: sev, Component: comp, Owner: owner, Rationale: b.String(), Evidence: ev}
}

func signatureKindOf(sig string) string {
	terms := map[string]float64{}
	for t := range analyzeIdent(sig).bag {
		terms[t] = 1
	}
	return signatureKind(sig, terms)
}

// versionShare is the percentage of active users on v. Shares given as
// fractions (summing to about 1) are read as percentages.
func versionShare(r Releases, v string) (float64, bool) {
	if v == "" || len(r.ActiveUsersByVersion) == 0 {
		return 0, false
	}
	scale, sum := 1.0, 0.0
	for _, s := range r.ActiveUsersByVersion {
		sum += s
	}
	if sum > 0 && sum <= 1.5 {
		scale = 100
	}
	if s, ok := r.ActiveUsersByVersion[v]; ok {
		return s * scale, true
	}
	for k, s := range r.ActiveUsersByVersion {
		if IsVersion(k) && CompareVersions(k, v) == 0 {
			return s * scale, true
		}
	}
	return 0, false
}

// daysToFreeze counts whole days from the item's arrival to the code
// freeze (negative once it passed).
func daysToFreeze(receivedAt, freeze string) (int, bool) {
	if receivedAt == "" || freeze == "" {
		return 0, false
	}
	r, err := parseDate(receivedAt)
	if err != nil {
		return 0, false
	}
	f, err := parseDate(freeze)
	if err != nil {
		return 0, false
	}
	ry, rm, rd := r.Date()
	fy, fm, fd := f.Date()
	a := time.Date(ry, rm, rd, 0, 0, 0, 0, time.UTC)
	b := time.Date(fy, fm, fd, 0, 0, 0, 0, time.UTC)
	return int(math.Round(b.Sub(a).Hours() / 24)), true
}

func parseDate(s string) (time.Time, error) {
	for _, l := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(l, strings.TrimSpace(s)); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("not a date: %q", s)
}

// identMatch reports whether name (or its stem: "transfers" → "transfer")
// starts or ends one of the identifiers, at least three letters, so a
// two-letter name does not match every identifier starting with it.
func identMatch(name string, idents []string) bool {
	for _, n := range []string{name, stem(name)} {
		if len(n) < 3 {
			continue
		}
		for _, id := range idents {
			if id == n || (len(id) > len(n) && (strings.HasPrefix(id, n) || strings.HasSuffix(id, n))) {
				return true
			}
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func trimTilde(s []string) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = strings.TrimPrefix(x, "~")
	}
	return out
}
