package triage

import (
	"fmt"
	"math"
	"regexp"
	"slices"
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
// Severity rubric (first rule that applies):
//
//   - critical: data loss (progress, saves, account, notes, balance...
//     lost, wiped or reset), or money taken without delivery at scale
//     (≥ 20 distinct users in telemetry);
//   - high: money charged wrongly (twice, wrong amount, not delivered); a
//     crash, freeze or blank screen in a core flow (launch, sign-in,
//     purchase, store, payment, transfer, saving, account); a crash
//     affecting many users (≥ 20 distinct users or a quarter of the crash
//     log's users), or at least 5 users on a version most users run (≥ 50%
//     share); a core flow that fails outright (sign-in fails, payment does
//     not go through);
//   - medium: any other crash, or a broken feature, error or slowdown;
//   - low: cosmetic or minor problems (display, layout, wording, sound).
//
// Telemetry raises: a medium or low problem with many crash users becomes
// high. Words such as "minor" or "cosmetic" lower by one level, except
// for data loss and money.
func Assess(in AssessInput) Assessment {
	a := analyze(in.Item.Text)
	has := func(c string) bool { return a.bag["~"+c] > 0 }
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

	many := users >= 20 || (in.CrashUsers >= 20 && float64(users) >= 0.25*float64(in.CrashUsers))
	some := users >= 5
	majority := hasShare && share >= 50
	crash := has("crash") || has("freeze") || has("blank_screen") || (agg != nil && signatureKindOf(agg.Signature) != kindError)
	core := has("launch") || has("login") || has("purchase") || has("charge") || has("store") || has("save") || has("sync") ||
		has("account") || has("transfer") || has("balance") || has("subscription")
	dataLoss := dataLossCue(a.bag)
	moneyWrong := has("charge") && (has("duplicate") || has("wrong") || has("not_received"))
	undelivered := (has("charge") || has("purchase")) && has("not_received")
	cosmetic := !crash && (has("display") || has("button") || has("theme") || has("accessibility") || has("language") || has("audio") || has("screen"))
	minor := reMinor.FindString(in.Item.Text)
	failure := has("broken") || has("error") || has("unable") || reNotWorking.MatchString(in.Item.Text)

	var sev string
	var reasons []string
	switch {
	case dataLoss:
		sev = "critical"
		reasons = append(reasons, "data loss: the reporter's data was lost, wiped or reset")
	case undelivered && many:
		sev = "critical"
		reasons = append(reasons, fmt.Sprintf("money taken without delivery, at scale (%d users)", users))
	case moneyWrong || undelivered:
		sev = "high"
		reasons = append(reasons, "money charged wrongly")
	case crash && core:
		sev = "high"
		reasons = append(reasons, "a crash blocks a core flow ("+coreFlows(has)+")")
	case crash && many:
		sev = "high"
		reasons = append(reasons, fmt.Sprintf("a crash affecting many users (%d)", users))
	case crash && majority && some:
		sev = "high"
		reasons = append(reasons, fmt.Sprintf("a crash on the version %.0f%% of users run, %d users", share, users))
	case crash:
		sev = "medium"
		reasons = append(reasons, "a crash outside the core flows")
	case core && failure:
		sev = "high"
		reasons = append(reasons, "a core flow fails ("+coreFlows(has)+")")
	case cosmetic:
		sev = "low"
		reasons = append(reasons, "a cosmetic or minor malfunction")
	default:
		sev = "medium"
		reasons = append(reasons, "a broken feature")
	}
	if many && SeverityRank(sev) < SeverityRank("high") {
		sev = "high"
		reasons = append(reasons, fmt.Sprintf("raised: %d distinct users in telemetry", users))
	}
	if minor != "" && !dataLoss && !moneyWrong && !undelivered && SeverityRank(sev) > 0 && !many {
		sev = Severities[SeverityRank(sev)-1]
		reasons = append(reasons, fmt.Sprintf("lowered: the reporter calls it %q", strings.ToLower(minor)))
	}

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
		fmt.Fprintf(&b, ", top of stack %s. ", agg.StackTop)
	} else {
		b.WriteString("Telemetry: no crash signature matches this report (0 events, 0 distinct users). ")
	}
	if hasShare {
		fmt.Fprintf(&b, "%.0f%% of active users are on %s. ", share, version)
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

var reMinor = regexp.MustCompile(`(?i)\bminor\b|\bcosmetic\b|\bnot\s+a\s+big\s+deal\b|\bsmall\s+(?:issue|thing|bug)\b|\bslight(?:ly)?\b|\bnur\s+kosmetisch|\bkleinigkeit|\bmenor\b|\bleve\b|\bmineur\b|\bpas\s+grave\b|\bminore\b|\bpiccolo\s+problema\b|\bsin\s+importancia\b`)

func coreFlows(has func(string) bool) string {
	var out []string
	for _, c := range []string{"launch", "login", "purchase", "charge", "store", "save", "sync", "account", "transfer", "balance", "subscription"} {
		if has(c) {
			out = append(out, c)
		}
	}
	return strings.Join(out, ", ")
}

// dataLossCue reports a loss word together with something that holds the
// user's data.
func dataLossCue(bag terms) bool {
	if bag["~data_loss"] == 0 {
		return false
	}
	for _, c := range []string{"progress", "save", "account", "sync", "note", "file", "balance", "level", "message", "camera", "purchase"} {
		if bag["~"+c] > 0 {
			return true
		}
	}
	return false
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

// ComponentModel chooses a CODEOWNERS component for a report. It knows
// each component's name (and the concepts the name stands for:
// "billing" is about charges, "photosync" about photos and syncing) and
// learns each component's vocabulary from the tracker's tickets.
type ComponentModel struct {
	comps []compInfo
}

type compInfo struct {
	owner    Owner
	name     string   // folded
	words    []string // the name's words ("in-app-purchases" → in, app, purchases)
	concepts []string
	vocab    map[string]float64 // term → tf-idf weight, L2-normalised
}

// NewComponentModel builds the model from CODEOWNERS and the tracker.
func NewComponentModel(owners []Owner, tickets []Ticket) *ComponentModel {
	m := &ComponentModel{}
	tf := map[string]map[string]float64{}
	for _, t := range tickets {
		c := fold(t.Component)
		if tf[c] == nil {
			tf[c] = map[string]float64{}
		}
		for term, n := range analyze(t.Title).bag {
			tf[c][term] += 2 * float64(n)
		}
		for term, n := range analyze(t.Description).bag {
			tf[c][term] += float64(n)
		}
	}
	df := map[string]int{}
	for _, v := range tf {
		for term := range v {
			df[term]++
		}
	}
	nc := float64(max(1, len(tf)))
	for _, o := range owners {
		ci := compInfo{owner: o, name: fold(o.Component), words: splitIdent(o.Component), concepts: conceptsOfName(o.Component), vocab: map[string]float64{}}
		norm := 0.0
		for term, n := range tf[ci.name] {
			w := (1 + math.Log(n)) * math.Log(1+nc/float64(df[term])) * termWeight(term)
			ci.vocab[term] = w
			norm += w * w
		}
		if norm > 0 {
			norm = math.Sqrt(norm)
			for term := range ci.vocab {
				ci.vocab[term] /= norm
			}
		}
		m.comps = append(m.comps, ci)
	}
	return m
}

// Choose scores every component and returns the best with a short
// explanation. Evidence and points:
//
//   - the matched crash signature: the component's name is a word of the
//     signature (3) or of a stack frame (2), or starts or ends one of their
//     identifiers ("photosync" in PhotoSyncWorker); the name's concepts
//     among the signature's terms (1.5, 0.9 from the stack);
//   - the report: the name as a word or two joined words (2); the share of
//     the name's concepts the report mentions (1.5); the name standing for
//     the report's main problem ("billing" for a duplicate charge, 1.5); a
//     concept of the same area as the name's ("store" for a purchase,
//     0.75);
//   - the component's vocabulary learned from its tickets: 2 × cosine;
//   - related tickets: the ticket this is a regression of (3), other
//     tracker hits 2 × their score from 0.45 (below that a hit is noise).
//
// Ties go to the component listed first in CODEOWNERS. When nothing
// points anywhere, a catch-all component (core, app, general, misc,
// other) or the first listed is chosen.
func (m *ComponentModel) Choose(text string, agg *CrashAggregate, regressed *Ticket, related []Hit) (string, string) {
	if len(m.comps) == 0 {
		return "", "no CODEOWNERS"
	}
	a := analyze(text)
	words := map[string]bool{}
	toks := tokenize(text)
	for i, t := range toks {
		words[t.s] = true
		words[stem(t.s)] = true
		if i > 0 {
			words[toks[i-1].s+t.s] = true
		}
	}
	var sigWords, stackWords, idents map[string]bool
	var sigTerms map[string]float64
	if agg != nil {
		sigWords, stackWords, idents = map[string]bool{}, map[string]bool{}, map[string]bool{}
		sigTerms = map[string]float64{}
		for _, w := range splitIdent(agg.Signature) {
			sigWords[w] = true
			sigWords[stem(w)] = true
		}
		for t := range analyzeIdent(agg.Signature).bag {
			sigTerms[t] = 1
		}
		for _, w := range identWords(agg.Signature) {
			idents[w] = true
		}
		st := stripFileRefs(agg.StackTop)
		for _, w := range splitIdent(st) {
			stackWords[w] = true
			stackWords[stem(w)] = true
		}
		for t := range analyzeIdent(st).bag {
			sigTerms[t] = max(sigTerms[t], 0.6)
		}
		for _, w := range identWords(st) {
			idents[w] = true
		}
	}
	_, problem := problemLabel(a.bag)
	best, bestScore, bestWhy := -1, 0.0, ""
	for i, c := range m.comps {
		score := 0.0
		var why []string
		for _, pc := range problem {
			if slices.Contains(c.concepts, "~"+pc) {
				score += 1.5
				why = append(why, "the problem is about "+pc)
			}
		}
		if agg != nil {
			switch {
			case sigWords[c.name] || sigWords[stem(c.name)] || identMatch(c.name, identWords(agg.Signature)):
				score += 3
				why = append(why, "the crash signature names it")
			case stackWords[c.name] || stackWords[stem(c.name)] || identMatch(c.name, keys(idents)):
				score += 2
				why = append(why, "the stack names it")
			}
			for _, cc := range c.concepts {
				if w := sigTerms[cc]; w > 0 {
					score += 1.5 * w
					why = append(why, "signature is about "+cc[1:])
				}
			}
		}
		if words[c.name] || words[stem(c.name)] {
			score += 2
			why = append(why, "the report names it")
		}
		for _, cc := range c.concepts {
			for _, rc := range relatedConcepts[cc] {
				if a.bag[rc] > 0 {
					score += 0.75
					why = append(why, fmt.Sprintf("%s goes with %s", rc[1:], cc[1:]))
					break
				}
			}
		}
		if len(c.concepts) > 0 {
			n := 0
			for _, cc := range c.concepts {
				if a.bag[cc] > 0 {
					n++
				}
			}
			if n > 0 {
				score += 1.5 * float64(n) / float64(len(c.concepts))
				why = append(why, fmt.Sprintf("the report is about %s", strings.Join(trimTilde(c.concepts), "+")))
			}
		}
		if len(c.vocab) > 0 {
			dot, rn := 0.0, 0.0
			for t := range a.bag {
				w := termWeight(t)
				rn += w * w
				dot += w * c.vocab[t]
			}
			if rn > 0 && dot > 0 {
				cos := dot / math.Sqrt(rn)
				score += 2 * cos
				if cos >= 0.2 {
					why = append(why, fmt.Sprintf("its tickets' words (%.2f)", cos))
				}
			}
		}
		if regressed != nil && strings.EqualFold(regressed.Component, c.owner.Component) {
			score += 3
			why = append(why, "the regressed ticket "+regressed.ID+" is in it")
		}
		for _, h := range related {
			if !strings.EqualFold(h.Component, c.owner.Component) || (regressed != nil && h.ID == regressed.ID) {
				continue
			}
			if h.Score >= 0.45 {
				score += 2 * h.Score
				why = append(why, fmt.Sprintf("similar ticket %s (%.2f)", h.ID, h.Score))
			}
		}
		if score > bestScore+1e-9 {
			best, bestScore, bestWhy = i, score, strings.Join(why, ", ")
		}
	}
	if best < 0 {
		for _, name := range []string{"core", "app", "general", "misc", "other", "default"} {
			for _, c := range m.comps {
				if c.name == name {
					return c.owner.Component, "nothing points to a component: catch-all"
				}
			}
		}
		return m.comps[0].owner.Component, "nothing points to a component: first in CODEOWNERS"
	}
	return m.comps[best].owner.Component, fmt.Sprintf("%s, %.1f points", bestWhy, bestScore)
}

// relatedConcepts are concepts that belong to the same area of an app:
// a purchase happens in the store and is a charge; progress is what a
// save holds. A component named for one is a fair owner of the other.
var relatedConcepts = map[string][]string{
	"~store":        {"~purchase", "~discount", "~price"},
	"~purchase":     {"~store", "~charge", "~discount", "~price"},
	"~charge":       {"~purchase", "~card", "~subscription", "~price"},
	"~subscription": {"~charge", "~purchase"},
	"~save":         {"~progress", "~sync", "~data_loss"},
	"~sync":         {"~save", "~progress"},
	"~progress":     {"~save", "~sync"},
	"~login":        {"~account", "~signup", "~password", "~biometric", "~logout"},
	"~account":      {"~login", "~signup", "~password"},
	"~notification": {"~alarm", "~message"},
	"~camera":       {"~upload", "~file"},
	"~file":         {"~export", "~upload", "~download"},
	"~export":       {"~file"},
	"~transfer":     {"~balance", "~charge"},
	"~delivery":     {"~map"},
	"~map":          {"~delivery"},
	"~audio":        {"~call", "~video"},
	"~video":        {"~audio", "~camera"},
}

// identMatch reports whether name (or its stem: "transfers" → "transfer")
// starts or ends one of the identifiers, at least three letters, so "ui"
// does not match "uikit".
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
