package triage

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Duplicate evidence: retrieval similarity alone does not separate "the
// same bug in other words" from "another bug of the same feature" (both
// share the feature's vocabulary). What does is agreement on what the
// words do not carry and standing out from the rest of the tracker:
//
//   - component: how much more (+) or less (−) likely the report's
//     classification (Query.Component and ComponentP, computed once per
//     report) makes the ticket's component than the best other one;
//   - harm: the report names a harm (money sent wrongly or taken, data
//     lost, exposure, lockout) that the ticket does not (−, dup_harm.go);
//   - platform: the ticket names only OS families the reporter is not on
//     (−, on top of the similarity's own platform term);
//   - specificity: the terms report and ticket share are rare in this
//     tracker (terms only this ticket uses), not the feature's common words;
//   - standout: the ticket is the report's nearest open ticket and its
//     similarity stands apart from every other ticket's for this report
//     (margin over the runner-up and z-score over this report's
//     candidates), which means the same on a ten-ticket tracker and on a
//     hundred-thousand-ticket one.
//
// The evidence is the similarity (itself text coverage plus crash
// signature, device, OS, version, failure kind and quote agreement) plus
// these parts; Hit.Score is the evidence, so the duplicate guard keeps a
// single floor (StrongScore) and a model cannot make a weak hit count.
const (
	evComponentSame = 0.05
	evComponentDiff = 0.05
	evPlatformOff   = 0.10
	evSpecific      = 0.06 // × the rare share of the shared weight
	evStandout      = 0.12 // × the standout strength in [0, 1]
	standoutMargin  = 0.06 // the runner-up must trail by at least this much
	standoutFull    = 0.30 // … and gives the full standout from this margin
	standoutMinText = 0.18 // words alone must match this much (text coverage) to stand out
	evConcrete      = 0.10 // the first concrete token in common, half for a second
	evMaker         = 0.05 // the ticket names the reporter's device maker (not the model)
	evLaterOpen     = 0.03 // an open ticket, the reporter on a later version than all affected
)

// laterThanAll reports whether v follows every version in vs that parses.
func laterThanAll(v string, vs []string) bool {
	n := 0
	for _, x := range vs {
		if !IsVersion(x) {
			continue
		}
		if CompareVersions(v, x) <= 0 {
			return false
		}
		n++
	}
	return n > 0
}

// offPlatform reports whether ticket i names OS families and none is the
// reporter's: a bug seen only on Linux is not the Windows user's.
func (ix *TrackerIndex) offPlatform(i int, q Query) bool {
	fam := osFamily(q.OS)
	d := &ix.docs[i]
	return fam != "" && len(d.osFams) > 0 && !containsStr(d.osFams, fam)
}

// deviceMaker is the first word of a device name ("xiaomi" of "Xiaomi
// Redmi Note 13"), folded, unless it is an OS word or too short to name a
// maker; a ticket naming the maker says the bug is the maker's devices'.
func deviceMaker(device string) string {
	f := strings.Fields(fold(device))
	if len(f) < 2 || len([]rune(f[0])) < 3 || stopwords[f[0]] {
		return ""
	}
	if _, isOS := osWords[f[0]]; isOS {
		return ""
	}
	for _, r := range f[0] {
		if r >= '0' && r <= '9' {
			return ""
		}
	}
	return f[0]
}

// singleMaker are the OS families whose devices come from one maker: the
// maker's name says nothing the reporter's OS does not.
var singleMaker = map[string]bool{"ios": true, "macos": true, "watchos": true}

// reMeasure is a concrete token that is only a number with a unit.
var reMeasure = regexp.MustCompile(`^\d+(?:[.,]\d+)?\s?[a-z%]{0,4}$`)

func isMeasure(tok string) bool { return reMeasure.MatchString(tok) }

// evidencePart is one named part of a hit's duplicate evidence.
type evidencePart struct {
	name string
	v    float64
}

// evidenceParts returns the per-ticket parts (component, platform,
// specificity) for doc i; standout is added over all candidates by
// applyStandout.
func (ix *TrackerIndex) evidenceParts(i int, q Query, qm map[int32]float64, qx queryExtras, kindOff bool) ([]evidencePart, string) {
	t := ix.tickets[i]
	d := &ix.docs[i]
	var parts []evidencePart
	if p, ok := componentPart(q, t.Component); ok && (p.v < 0 || !kindOff) {
		// The same component is evidence only for the same kind of failure.
		parts = append(parts, p)
	}
	qparts, contradicted := ix.qualifierParts(d, qm, qx)
	parts = append(parts, qparts...)
	if v := q.AppVersion; IsVersion(v) && !isClosed(t) && len(t.AffectedVersions) > 0 && laterThanAll(v, t.AffectedVersions) {
		// Still open, and the reporter is on a later version than any it
		// was seen on: the bug is expected to be there (the similarity
		// already counts a version among the affected ones).
		parts = append(parts, evidencePart{"open since " + t.AffectedVersions[len(t.AffectedVersions)-1], evLaterOpen})
	}
	if ix.offPlatform(i, q) {
		parts = append(parts, evidencePart{"platform only " + strings.Join(d.osFams, ", "), -evPlatformOff})
	}
	if mk := deviceMaker(q.Device); mk != "" && !singleMaker[osFamily(q.OS)] && !containsStr(d.devices, normDevice(q.Device)) && containsWord(fold(t.Title+"\n"+t.Description), mk) {
		parts = append(parts, evidencePart{"device maker " + mk, evMaker})
	}
	got := concreteAgreement(qx.concrete, t)
	if len(got) == 0 && ix.concreteApart(qx.concrete, t) {
		// Both name concrete things (identifiers, codes, copied values)
		// and none is shared: two reports of one bug copy the same field
		// or message; a coupon code against a price field is another bug
		// of the same screen.
		parts = append(parts, evidencePart{partFactsApart, -evConcrete})
	}
	if len(got) > 0 {
		v := evConcrete
		if len(got) > 1 {
			v *= 1.5
		} else if isMeasure(got[0]) {
			// A number with a unit alone ("10k", "5 min") is as often a
			// common quantity of the domain as a copied value.
			v /= 2
		}
		parts = append(parts, evidencePart{"concrete " + strings.Join(got[:min(3, len(got))], ", "), v})
	}
	if r := ix.rareShare(d, qm); r > 0 {
		parts = append(parts, evidencePart{"specific terms", round3(evSpecific * r)})
	}
	return parts, contradicted
}

// rareShare is the share of the weight report and ticket share that lies
// on terms few tickets use: each shared term weighs its coverage weight,
// and counts as rare by (idf / idf of a term only one ticket has)², so a
// term only this ticket uses counts fully and a feature word half the
// tracker uses barely. Concepts (general vocabulary) and platform words
// are not specific to a ticket.
func (ix *TrackerIndex) rareShare(d *tdoc, qm map[int32]float64) float64 {
	if ix.idfNew <= 0 {
		return 0
	}
	num, den := 0.0, 0.0
	add := func(id int32) {
		m := qm[id]
		if m == 0 {
			return
		}
		term := ix.terms[id]
		if isNumberTerm(term) {
			return
		}
		if _, isOS := osWords[term]; isOS {
			return
		}
		w := ix.omega[id] * m
		r := ix.idf[id] / ix.idfNew
		num += w * r * r
		den += w
	}
	for _, id := range d.title {
		add(id)
	}
	for _, id := range d.desc {
		if !has32(d.title, id) {
			add(id)
		}
	}
	if den == 0 {
		return 0
	}
	// Rare share of what is shared, scaled by how much is shared (a
	// single rare word in common is not specific evidence).
	return min(1, num/den) * min(1, den/(2*ix.idfNew))
}

// applyStandout adds the standout part to the nearest open ticket among
// hits (all of this report's scored candidates, with their evidence so
// far in raw) and recomputes every hit's Score and Strong.
func applyStandout(hits []Hit, closed func(Hit) bool) {
	if len(hits) == 0 {
		return
	}
	best, second := -1, math.Inf(-1)
	for i, h := range hits {
		if closed(h) || h.offPlatform {
			continue
		}
		if best < 0 || h.raw > hits[best].raw {
			best = i
		}
	}
	if best < 0 {
		return
	}
	mean, n := 0.0, 0.0
	for i, h := range hits {
		mean += h.raw
		n++
		if i != best {
			second = max(second, h.raw)
		}
	}
	mean /= n
	sd := 0.0
	for _, h := range hits {
		sd += (h.raw - mean) * (h.raw - mean)
	}
	sd = math.Sqrt(sd / n)
	b := &hits[best]
	if math.IsInf(second, -1) {
		second = 0
	}
	margin := b.raw - second
	z := 0.0
	if sd > 0 {
		z = (b.raw - mean) / sd
	}
	if b.Words >= standoutMinText && margin >= standoutMargin && !b.kindOff && !b.factsApart {
		// Strength: the margin's share of a full margin, tempered by the
		// z-score (a top that is only a little above a crowd of close
		// candidates stands out less).
		st := min(1, (margin-standoutMargin)/(standoutFull-standoutMargin)) * min(1, z/2)
		if st > 0 {
			v := round3(evStandout * st)
			b.raw += v
			b.Why = append(b.Why, fmt.Sprintf("stands out: nearest open ticket by %.2f (z %.1f) %+.2f", margin, z, v))
		}
	}
	for i := range hits {
		hits[i].Score = finalScore(hits[i])
		hits[i].Strong = hits[i].Score >= StrongScore
		if hits[i].Related != "" {
			hits[i].Unblocked = quoteCapped(hits[i].raw, hits[i].quote)
		}
	}
}

// WithComponent returns q with the component its report is classified
// into before any search (ReportComponentOf: its words, device, OS and
// the crash telemetry confirmed for it) and every component's
// probability, for the duplicate evidence. It runs once per report, not
// per ticket. A nil model leaves q without a component (no component
// agreement is weighed).
func WithComponent(cm *ComponentModel, q Query, crashes []CrashAggregate) Query {
	d := ReportComponentOf(cm, q, crashes)
	q.Component, q.ComponentP = d.Component, d.Probability
	return q
}

// ReportComponent is the component WithComponent classifies a report's
// text into (for callers that need only its name).
func ReportComponent(cm *ComponentModel, text string, crashes []CrashAggregate, signature string) string {
	return ReportComponentOf(cm, Query{Text: text, Signature: signature}, crashes).Component
}

// componentPart weighs whether ticket component tc is the report's: by
// how much more (or less) likely the report's classification makes tc
// than the best other component, (p(tc) − max p(other)) / 0.5, within
// ±1, times evComponentSame (or evComponentDiff when negative). A sure
// classification gives the full part; a 0.3 guess against a 0.25
// runner-up barely counts, either way. Without probabilities the
// component counts as certain.
func componentPart(q Query, tc string) (evidencePart, bool) {
	if q.Component == "" || tc == "" {
		return evidencePart{}, false
	}
	if q.ComponentP == nil {
		if strings.EqualFold(q.Component, tc) {
			return evidencePart{"component " + tc, evComponentSame}, true
		}
		return evidencePart{"component " + tc + " (report: " + q.Component + ")", -evComponentDiff}, true
	}
	pt, other, known := 0.0, 0.0, false
	for c, p := range q.ComponentP {
		if strings.EqualFold(c, tc) {
			pt, known = p, true
		} else {
			other = max(other, p)
		}
	}
	if !known {
		return evidencePart{}, false // a component CODEOWNERS does not list
	}
	s := max(-1, min(1, (pt-other)/componentPScale))
	v := round3(evComponentSame * s)
	if s < 0 {
		v = round3(evComponentDiff * s)
	}
	if v == 0 {
		return evidencePart{}, false
	}
	if s > 0 {
		return evidencePart{fmt.Sprintf("component %s (p %.2f)", tc, pt), v}, true
	}
	return evidencePart{fmt.Sprintf("component %s (p %.2f, report: %s)", tc, pt, q.Component), v}, true
}

// componentPScale is the probability lead over the best other component
// at which component agreement counts fully.
const componentPScale = 0.5

// Concrete tokens: what a reporter copies rather than paraphrases (code
// identifiers, config keys, file names, error codes, numbers with units).
// Two texts sharing one are far more likely about the same thing than two
// sharing a feature word.
var (
	reBacktick = regexp.MustCompile("`([^`\n]{1,80})`")
	reIdent    = regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*(?:[_./][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]+|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b[A-Z]+[0-9][A-Z0-9]*\b|\b\d+(?:[.,]\d+)?\s?(?:ms|s|sec|secs|min|mins|h|kb|mb|gb|tb|k|px|%)\b`)
	reWordTok  = regexp.MustCompile(`[\p{L}\p{N}_./:-]+`)
)

// concreteTokens returns the report's concrete tokens, folded, each at
// least 3 characters: identifier-shaped words anywhere (snake_case,
// dotted or slashed names, camelCase, error codes, numbers with units;
// not hyphenated prose compounds), and the keys of a backquoted span (a
// `timezone:` key names a setting however it is spelt around it), and its
// words that few tickets use (a plain word in backquotes is as often the
// product's own command, which every ticket names).
func (ix *TrackerIndex) concreteTokens(text string) []string {
	// What a reporter copies sits at the start (the message they saw) or
	// the end (a log's last lines); the identifier patterns cost about a
	// millisecond per 6 KB, so a 32 KB report is read in a bounded window.
	text = boundText(text, concreteHead, concreteTail)
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		s = strings.Trim(fold(s), ".:/-_,;")
		if len(out) >= maxConcrete || len([]rune(s)) < 3 || seen[s] || isNumberOnly(s) {
			return
		}
		seen[s] = true
		out = append(out, s)
	}
	for _, m := range reBacktick.FindAllStringSubmatch(text, -1) {
		for _, w := range reWordTok.FindAllString(m[1], -1) {
			if strings.HasSuffix(w, ":") && !stopwords[fold(strings.TrimSuffix(w, ":"))] || ix.rareWord(w) {
				add(w)
			}
		}
	}
	for _, w := range reIdent.FindAllString(text, -1) {
		if isPlatformName(w) {
			continue // iPhone, iPadOS, macOS: camel-cased names of platforms, not copied identifiers
		}
		add(w)
	}
	return out
}

// The window concreteTokens reads, and how many tokens it keeps (each is
// looked for in every candidate ticket).
const (
	concreteHead, concreteTail = 4 << 10, 1 << 10
	maxConcrete                = 32
)

// rareWord reports whether every term of w is known to the tracker and
// used by at most one ticket in twenty (at least one ticket).
func (ix *TrackerIndex) rareWord(w string) bool {
	bag := searchAnalyze(tokenize(w)).bag
	if len(bag) == 0 {
		return false
	}
	limit := max(1, int32(len(ix.tickets)/20))
	for t := range bag {
		id, ok := ix.vocab[t]
		if !ok || ix.df[id] > limit {
			return false
		}
	}
	return true
}

// isPlatformName reports whether w names an OS or a device line
// (camel-cased like an identifier, but every report of that platform has it).
func isPlatformName(w string) bool {
	f := fold(w)
	if _, ok := osWords[f]; ok {
		return true
	}
	return f == "iphone" || f == "ipad" || f == "ipod" || f == "airpods" || f == "macbook" || f == "imac"
}

func isNumberOnly(s string) bool {
	for _, r := range s {
		if (r < '0' || r > '9') && r != '.' && r != ',' {
			return false
		}
	}
	return true
}

// partFactsApart names the evidence part of a report and a candidate that
// both copy concrete things and share none: the candidate is then never
// the report's standout either (being nearest in words says little when
// the facts differ).
const partFactsApart = "concrete: none shared"

// factsApart reports whether parts hold partFactsApart.
func factsApart(parts []evidencePart) bool {
	for _, p := range parts {
		if p.name == partFactsApart {
			return true
		}
	}
	return false
}

// concreteApart reports whether the report names at least two concrete
// tokens that are not bare quantities, and the ticket names at least one of
// its own, none of them shared (the caller has found no agreement).
func (ix *TrackerIndex) concreteApart(tokens []string, t Ticket) bool {
	n := 0
	for _, tok := range tokens {
		if !isMeasure(tok) {
			n++
		}
	}
	if n < 2 {
		return false
	}
	for _, tok := range ix.concreteTokens(t.Title + "\n" + t.Description) {
		if !isMeasure(tok) {
			return true
		}
	}
	return false
}

// concreteAgreement returns the report's concrete tokens the ticket's
// text contains as whole words.
func concreteAgreement(tokens []string, t Ticket) []string {
	if len(tokens) == 0 {
		return nil
	}
	text := fold(t.Title + "\n" + t.Description)
	var got []string
	for _, tok := range tokens {
		if containsWord(text, tok) {
			got = append(got, tok)
		}
	}
	return got
}

// containsWord reports whether w occurs in text not inside a longer word.
func containsWord(text, w string) bool {
	for off := 0; ; {
		i := strings.Index(text[off:], w)
		if i < 0 {
			return false
		}
		i += off
		j := i + len(w)
		before, after := i == 0, j >= len(text)
		if !before {
			r, _ := utf8.DecodeLastRuneInString(text[:i])
			before = !isWordRune(r)
		}
		if !after {
			r, _ := utf8.DecodeRuneInString(text[j:])
			after = !isWordRune(r)
		}
		if before && after {
			return true
		}
		off = i + 1
	}
}
