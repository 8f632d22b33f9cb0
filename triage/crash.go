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

// CrashMatchThreshold is the score from which a crash signature counts as
// confirmed by telemetry for a report: the report's words name what the
// signature's frames name, and the reporter's platform and version fall
// inside the population that crashed.
const CrashMatchThreshold = 0.45

// CrashAggregate is one crash signature summarised over the crash log and,
// after CrashLog.Query, scored against one report.
type CrashAggregate struct {
	Signature string         `json:"signature"`
	StackTop  string         `json:"stack_top"` // the most frequent top of stack
	Events    int            `json:"events"`
	Users     int            `json:"users"` // distinct users
	Versions  map[string]int `json:"versions"`
	Platforms map[string]int `json:"platforms"` // OS as reported ("Android 14")
	Devices   map[string]int `json:"devices"`
	FirstSeen time.Time      `json:"first_seen"`
	LastSeen  time.Time      `json:"last_seen"`
	Score     float64        `json:"score"`
	Matched   bool           `json:"matched"` // telemetry-confirmed: see CrashLog.Query
	Why       []string       `json:"why,omitempty"`
}

// CrashLog aggregates crash events by signature and matches reports to
// signatures.
type CrashLog struct {
	sigs       []*crashSig
	totalUsers int
}

type crashSig struct {
	agg      CrashAggregate
	terms    map[string]float64 // canonical term → weight (signature words 1, stack words 0.6)
	idents   []string           // whole identifiers, lower case (component names appear here verbatim)
	keys     []string           // strings whose presence in a ticket means the ticket names this crash
	termList []string           // terms, sorted (a deterministic order for sums)
	families map[string]int     // OS family → events
	kind     string
}

// cognate scores how well a word matches one of a report's stems that is
// not identical to it: one being a prefix of the other (five letters at
// least: "garag" and "garagem") scores 0.8, a trigram Dice of 0.7 or more
// scores the Dice × 0.8; both must start with the same letter. st carries the stems with their trigrams,
// computed once per text.
func cognate(t string, st stemSet) float64 {
	if len(t) < 5 {
		return 0
	}
	best := 0.0
	var tg []string
	for i, s := range st.stems {
		if len(s) < 5 {
			continue
		}
		if s[0] != t[0] {
			continue // cognates and misspellings keep their first letter
		}
		if strings.HasPrefix(s, t) || strings.HasPrefix(t, s) {
			return 0.8
		}
		if tg == nil {
			tg = trigrams(t)
		}
		sg := st.grams[i]
		shared := 0
		for _, g := range sg {
			if slices.Contains(tg, g) {
				shared++
			}
		}
		if d := 2 * float64(shared) / float64(len(tg)+len(sg)); d >= 0.7 {
			best = max(best, 0.8*d)
		}
	}
	return best
}

// stemSet is a text's stems (five letters or more) with their trigrams.
type stemSet struct {
	stems []string
	grams [][]string
}

func newStemSet(stems []string) stemSet {
	var s stemSet
	for _, st := range stems {
		if len(st) >= 5 && !slices.Contains(s.stems, st) {
			s.stems = append(s.stems, st)
			s.grams = append(s.grams, trigrams(st))
		}
	}
	return s
}

// Kinds of crash signature, by what the user sees.
const (
	kindCrash  = "crash"  // the app dies: NPE, OOM, SIGSEGV, an uncaught exception, a panic
	kindFreeze = "freeze" // the app hangs: ANR, watchdog
	kindError  = "error"  // a logged error the app survives
)

var reCrashKind = regexp.MustCompile(`(?i)exception|fatal|panic|abort|sigsegv|sigabrt|sigbus|sigill|crash|nullpointer|npe\b|oom\b|outofmemory|segfault|exc_`)

func signatureKind(sig string, terms map[string]float64) string {
	switch {
	case terms["~freeze"] > 0 || strings.Contains(strings.ToLower(sig), "watchdog"):
		return kindFreeze
	case terms["~crash"] > 0 || reCrashKind.MatchString(sig):
		return kindCrash
	}
	return kindError
}

// NewCrashLog aggregates events by signature.
func NewCrashLog(events []CrashEvent) *CrashLog {
	bySig := map[string]*crashSig{}
	users := map[string]map[string]bool{}
	stacks := map[string]map[string]int{}
	allUsers := map[string]bool{}
	var order []string
	for _, e := range events {
		s := bySig[e.Signature]
		if s == nil {
			s = &crashSig{agg: CrashAggregate{Signature: e.Signature, Versions: map[string]int{}, Platforms: map[string]int{}, Devices: map[string]int{},
				FirstSeen: e.Time, LastSeen: e.Time}, families: map[string]int{}}
			bySig[e.Signature] = s
			users[e.Signature] = map[string]bool{}
			stacks[e.Signature] = map[string]int{}
			order = append(order, e.Signature)
		}
		a := &s.agg
		a.Events++
		if e.UserID != "" {
			users[e.Signature][e.UserID] = true
			allUsers[e.UserID] = true
		}
		if e.AppVersion != "" {
			a.Versions[e.AppVersion]++
		}
		if e.OS != "" {
			a.Platforms[e.OS]++
			s.families[osFamily(e.OS)]++
		}
		if e.Device != "" {
			a.Devices[e.Device]++
		}
		if e.StackTop != "" {
			stacks[e.Signature][e.StackTop]++
		}
		if e.Time.Before(a.FirstSeen) {
			a.FirstSeen = e.Time
		}
		if e.Time.After(a.LastSeen) {
			a.LastSeen = e.Time
		}
	}
	cl := &CrashLog{totalUsers: len(allUsers)}
	for _, sig := range order {
		s := bySig[sig]
		s.agg.Users = len(users[sig])
		s.agg.StackTop = topKey(stacks[sig])
		s.terms = map[string]float64{}
		for t := range analyzeIdent(sig).bag {
			s.terms[t] = max(s.terms[t], codeWeight(t))
		}
		for st := range stacks[sig] {
			for t := range analyzeIdent(stripFileRefs(st)).bag {
				s.terms[t] = max(s.terms[t], 0.6*codeWeight(t))
			}
			s.idents = append(s.idents, identWords(stripFileRefs(st))...)
		}
		s.idents = append(s.idents, identWords(sig)...)
		s.keys = signatureKeys(sig, stacks[sig])
		s.kind = signatureKind(sig, s.terms)
		// What the user saw is part of the signature: a crash-kind
		// signature is a crash even when its name only says "exception".
		switch s.kind {
		case kindCrash:
			s.terms["~crash"] = max(s.terms["~crash"], termWeight("~crash"))
		case kindFreeze:
			s.terms["~freeze"] = max(s.terms["~freeze"], termWeight("~freeze"))
		}
		for t := range s.terms {
			s.termList = append(s.termList, t)
		}
		sort.Strings(s.termList)
		cl.sigs = append(cl.sigs, s)
	}
	return cl
}

// TotalUsers is the number of distinct users in the whole crash log.
func (cl *CrashLog) TotalUsers() int { return cl.totalUsers }

// Aggregates returns every signature's aggregate, most events first.
func (cl *CrashLog) Aggregates() []CrashAggregate {
	out := make([]CrashAggregate, 0, len(cl.sigs))
	for _, s := range cl.sigs {
		out = append(out, s.agg)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Events > out[j].Events })
	return out
}

// Get returns the aggregate of one signature.
func (cl *CrashLog) Get(signature string) (CrashAggregate, bool) {
	for _, s := range cl.sigs {
		if s.agg.Signature == signature {
			return s.agg, true
		}
	}
	return CrashAggregate{}, false
}

var reFileRef = regexp.MustCompile(`\([^)]*\)`)

// stripFileRefs drops "(File.kt:12)" parts of a stack frame: file names and
// line numbers repeat the class name and add noise.
func stripFileRefs(s string) string { return reFileRef.ReplaceAllString(s, " ") }

// signatureKeys are the strings that, found in a ticket, mean the ticket
// talks about this crash: the signature, its parts longer than a generic
// prefix ("NPE", "ANR"), and the Class.method of its frames.
func signatureKeys(sig string, stacks map[string]int) []string {
	var keys []string
	add := func(k string) {
		k = strings.ToLower(strings.TrimSpace(k))
		if len(k) >= 6 && !genericCode[k] && !containsStr(keys, k) {
			keys = append(keys, k)
		}
	}
	add(sig)
	for _, p := range strings.Split(sig, ":") {
		if len(splitIdent(p)) >= 2 { // one word ("NPE", "10", "timeout") is not a name
			add(p)
		}
	}
	for st := range stacks {
		for _, frame := range strings.Split(stripFileRefs(st), "<-") {
			add(frame)
		}
	}
	return keys
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func topKey(m map[string]int) string {
	best, n := "", -1
	for k, v := range m {
		if v > n || (v == n && k < best) {
			best, n = k, v
		}
	}
	return best
}

// osFamily reduces an OS string to its family: android, ios (iPadOS
// included), windows, macos, linux, or the folded first word.
func osFamily(os string) string {
	f := fold(os)
	switch {
	case f == "":
		return ""
	case strings.Contains(f, "android"):
		return "android"
	case strings.Contains(f, "ipados") || strings.Contains(f, "iphone os") || strings.HasPrefix(f, "ios") || strings.Contains(f, " ios"):
		return "ios"
	case strings.Contains(f, "windows"):
		return "windows"
	case strings.Contains(f, "mac"):
		return "macos"
	case strings.Contains(f, "linux") || strings.Contains(f, "ubuntu"):
		return "linux"
	}
	return strings.Fields(f)[0]
}

// osMajor returns "family major" ("android 14", "ios 18") or the family
// alone when no version is given.
func osMajor(os string) string {
	fam := osFamily(os)
	if fam == "" {
		return ""
	}
	for _, f := range strings.Fields(fold(os)) {
		if n, _ := splitVersion(f); len(n) > 0 {
			return fmt.Sprintf("%s %d", fam, n[0])
		}
	}
	return fam
}

// Query ranks the signatures by how well they fit a report: the report's
// terms (concepts and stems of q.Text) against the words of the signature
// and its stack frames, each shared term weighted by its specificity and
// by how few signatures share it; then the population: a report from an
// OS family that never produced this crash cannot be it (score 0), a
// version that never produced it weighs 0.55, an unknown version 0.8, and
// the same device or OS major adds a little.
//
// text = S/(S+1) where S is the sum of shared terms' weights, so one
// specific word gives 0.5, two give about 0.67. A signature is Matched
// (telemetry-confirmed) when its score reaches CrashMatchThreshold and at
// least one shared term is specific (weight ≥ 0.6), with two shared terms
// or more: one word in common ("payment") is a coincidence, and sharing
// only "crash" and "game" proves nothing. Words of the signature match the report's words exactly or as
// cognates (see cognate), so "garagem" meets GarageScene.
func (cl *CrashLog) Query(q Query) []CrashAggregate {
	if len(cl.sigs) == 0 {
		return nil
	}
	qa := analyze(q.Text)
	qstems := newStemSet(qa.stems)
	df := map[string]int{}
	for _, s := range cl.sigs {
		for t := range s.terms {
			df[t]++
		}
	}
	n := float64(len(cl.sigs))
	fam, major := osFamily(q.OS), osMajor(q.OS)
	out := make([]CrashAggregate, 0, len(cl.sigs))
	for _, s := range cl.sigs {
		a := s.agg
		sum, specific := 0.0, false
		var shared []string
		for _, t := range s.termList {
			w := s.terms[t]
			m := 0.0
			switch {
			case qa.bag[t] > 0:
				m = 1
			case !isConcept(t):
				m = cognate(t, qstems)
			}
			if m == 0 {
				continue
			}
			rarity := 1.0
			if n > 1 {
				rarity = math.Log(1+n/float64(df[t])) / math.Log(1+n)
			}
			sum += w * rarity * m
			if w >= 0.6 && !genericCode[t] {
				specific = true
			}
			shared = append(shared, t)
		}
		sort.Strings(shared)
		text := sum / (sum + 1)
		if qa.bag["~crash"] > 0 && s.kind != kindCrash && s.kind != kindFreeze {
			// The reporter saw the app close; a logged error that does not
			// kill the app is a weaker explanation than a crash.
			text *= 0.75
		}
		pop := 0.8
		var why []string
		if len(shared) > 0 {
			why = append(why, "shared terms: "+strings.Join(shared, ", "))
		}
		if q.AppVersion != "" {
			if n := versionCount(a.Versions, q.AppVersion); n > 0 {
				pop = 1
				why = append(why, fmt.Sprintf("%d events on %s", n, q.AppVersion))
			} else {
				pop = 0.55
				why = append(why, "no events on "+q.AppVersion)
			}
		}
		if fam != "" && len(s.families) > 0 && s.families[fam] == 0 {
			pop = 0
			why = append(why, "no events on "+fam)
		}
		if pop > 0 {
			bonus := 1.0
			if n := deviceCount(a.Devices, q.Device); n > 0 {
				bonus += 0.1
				why = append(why, fmt.Sprintf("%d events on %s", n, q.Device))
			}
			for p, c := range a.Platforms {
				if major != fam && osMajor(p) == major {
					bonus += 0.05
					why = append(why, fmt.Sprintf("%d events on %s", c, p))
					break
				}
			}
			pop = min(1, pop*bonus)
		}
		a.Score = round3(text * pop)
		a.Matched = a.Score >= CrashMatchThreshold && specific && len(shared) >= 2
		if a.Matched && (s.kind == kindCrash || s.kind == kindFreeze) && !reportsDeath(qa.bag) {
			// Telemetry of a crash or a hang explains a report only when the
			// reporter saw the app die or stop: words shared with the stack
			// of a crash in the same feature do not make a wrong value, a
			// refused sign-in or a cut stream that crash.
			a.Matched = false
			why = append(why, "the report describes no crash or hang")
			a.Why = why
		}
		a.Why = why
		out = append(out, a)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Events > out[j].Events
	})
	return out
}

// reportsDeath reports whether a report's terms describe the app dying or
// hanging (crash, freeze, a blank screen).
func reportsDeath(bag terms) bool {
	return bag["~crash"] > 0 || bag["~freeze"] > 0 || bag["~blank_screen"] > 0
}

// ConfirmedSignature returns the best Matched signature of a Query result,
// or "" when telemetry confirms none.
func ConfirmedSignature(aggs []CrashAggregate) string {
	if len(aggs) > 0 && aggs[0].Matched {
		return aggs[0].Signature
	}
	return ""
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// versionCount is the count of v in a per-version map, comparing versions
// as versions ("v2.4" and "2.4.0" are the same).
func versionCount(m map[string]int, v string) int {
	if v == "" {
		return 0
	}
	if n, ok := m[v]; ok {
		return n
	}
	if !IsVersion(v) {
		return 0
	}
	n := 0
	for k, c := range m {
		if IsVersion(k) && CompareVersions(k, v) == 0 {
			n += c
		}
	}
	return n
}

// deviceCount is the count of a device in a per-device map, comparing
// names without brand prefixes ("Samsung Galaxy S23" and "Galaxy S23").
func deviceCount(m map[string]int, device string) int {
	if device == "" {
		return 0
	}
	if n, ok := m[device]; ok {
		return n
	}
	want := normDevice(device)
	n := 0
	for k, c := range m {
		if normDevice(k) == want {
			n += c
		}
	}
	return n
}
