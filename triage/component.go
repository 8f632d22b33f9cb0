package triage

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// ComponentModel chooses a CODEOWNERS component for a report. Everything
// it knows comes from the workspace: each component's name, read word by
// word through the general vocabulary (a name word is its stem, the
// lexicon concepts it spells and, for an acronym, the words it stands
// for (abbreviations in lexicon.go); how specific each name word is in
// this tracker (a word the tickets of every component use, such as the
// product's main noun, says little about which one a report is for);
// and each component's vocabulary learned from its tickets (tf-idf).
type ComponentModel struct {
	comps    []compInfo
	fallback int // the component with most tickets, else the first listed
	tickets  int
	df       map[string]int // components whose tickets use a term
	nc       float64        // components with tickets
	// platformTickets counts the tracker's tickets naming each platform
	// family.
	platformTickets map[string]int
}

type compInfo struct {
	owner   Owner
	name    string // folded
	parts   []namePart
	words   []string // the name's words, split ("in-app-purchases" → in, app, purchases)
	vocab   map[string]float64
	tickets int
	text    string // its tickets' titles and descriptions, folded (where crash identifiers are named)
	// team are the words of its owning team and channel that few other
	// components share (a team named for the area it owns).
	team []namePart
	// concepts are all the name's concepts, for signature matching.
	concepts []string
	// docs are its tickets one by one as unit tf-idf vectors: a report
	// paraphrasing one ticket is near that ticket even when the
	// component's other tickets dilute its centroid.
	docs []map[string]float64
	// platforms counts its tickets naming each platform family (see
	// platformFamilies), for the report's own device and OS.
	platforms map[string]int
}

// namePart is one word of a component's name.
type namePart struct {
	word     string   // folded
	stem     string   // stem(word)
	concepts []string // "~id" concepts the word stands for
	spec     float64  // 1 when no other component's tickets use it, lower the more do
}

// NewComponentModel builds the model from CODEOWNERS and the tracker.
func NewComponentModel(owners []Owner, tickets []Ticket) *ComponentModel {
	m := &ComponentModel{}
	tf := map[string]map[string]float64{}
	count := map[string]int{}
	type ticketText struct {
		comp  string
		words map[string]bool // tokens, stems and joined pairs
		bag   terms
	}
	var texts []ticketText
	for _, t := range tickets {
		c := fold(t.Component)
		count[c]++
		if tf[c] == nil {
			tf[c] = map[string]float64{}
		}
		ta, da := componentBag(t.Title), componentBag(t.Description)
		for term, n := range ta {
			tf[c][term] += 2 * float64(n)
		}
		for term, n := range da {
			tf[c][term] += float64(n)
		}
		bag := terms{}
		for k, v := range ta {
			bag[k] += v
		}
		for k, v := range da {
			bag[k] += v
		}
		texts = append(texts, ticketText{comp: c, words: wordSet(t.Title + " " + t.Description), bag: bag})
	}
	df := map[string]int{}
	for _, v := range tf {
		for term := range v {
			df[term]++
		}
	}
	nc := float64(max(1, len(tf)))
	blob := map[string]*strings.Builder{}
	for _, t := range tickets {
		c := fold(t.Component)
		if blob[c] == nil {
			blob[c] = &strings.Builder{}
		}
		blob[c].WriteString(fold(t.Title + "\n" + t.Description + "\n"))
	}
	teamWords := map[string]int{}
	for _, o := range owners {
		seen := map[string]bool{}
		for _, w := range splitIdent(o.Team + " " + o.Channel) {
			if !seen[w] {
				seen[w] = true
				teamWords[w]++
			}
		}
	}
	// Each ticket alone, weighted like the centroids, and the platform
	// families it names.
	docs := map[string][]map[string]float64{}
	plats := map[string]map[string]int{}
	for _, t := range tickets {
		c := fold(t.Component)
		v := map[string]float64{}
		for term, n := range componentBag(t.Title + "\n" + t.Title + "\n" + t.Description) {
			if df[term] == 0 {
				continue
			}
			v[term] = (1 + math.Log(float64(n))) * math.Log(1+nc/float64(df[term])) * termWeight(term)
		}
		docs[c] = append(docs[c], unit(v))
		if plats[c] == nil {
			plats[c] = map[string]int{}
		}
		for _, f := range platformsNamed(t.Title + " " + t.Description) {
			plats[c][f]++
		}
	}
	m.tickets = len(tickets)
	m.df, m.nc = df, nc
	m.platformTickets = map[string]int{}
	for _, ps := range plats {
		for f, n := range ps {
			m.platformTickets[f] += n
		}
	}
	most := -1
	for i, o := range owners {
		ci := compInfo{owner: o, name: fold(o.Component), words: splitIdent(o.Component), concepts: conceptsOfName(o.Component), vocab: map[string]float64{}}
		ci.tickets = count[ci.name]
		ci.docs, ci.platforms = docs[ci.name], plats[ci.name]
		if b := blob[ci.name]; b != nil {
			ci.text = b.String()
		}
		if ci.tickets > 0 && (most < 0 || ci.tickets > owners2count(owners, most, count)) {
			most = i
		}
		for _, w := range ci.words {
			if isDigits(w) {
				continue
			}
			p := namePart{word: w, stem: stem(w), concepts: wordConcepts(w)}
			// Specificity: the share of other components' tickets that
			// use the word (or what it stands for).
			other, uses := 0, 0
			for _, tt := range texts {
				if tt.comp == ci.name {
					continue
				}
				other++
				if n, _ := p.count(tt.words, tt.bag); n > 0 {
					uses++
				}
			}
			p.spec = 1
			if other > 0 {
				p.spec = 1 / (1 + 3*float64(uses)/float64(other))
			}
			// A word whose concepts the lexicon calls broad ("money")
			// is as broad in any product's reports.
			if len(p.concepts) > 0 {
				lw := 0.0
				for _, c := range p.concepts {
					lw = max(lw, termWeight(c))
				}
				p.spec *= lw
			}
			ci.parts = append(ci.parts, p)
			for _, c := range p.concepts {
				ci.concepts = appendUnique(ci.concepts, c)
			}
		}
		// Team and channel words name the area too, when they are not
		// the boilerplate every owner line shares ("team", "eng").
		for _, w := range splitIdent(o.Team + " " + o.Channel) {
			if len(w) < 3 || isDigits(w) || stopwords[w] || slices.Contains(ci.words, w) || 3*teamWords[w] > len(owners) {
				continue
			}
			if slices.ContainsFunc(ci.team, func(p namePart) bool { return p.word == w }) {
				continue
			}
			ci.team = append(ci.team, namePart{word: w, stem: stem(w), concepts: wordConcepts(w), spec: 1 / float64(teamWords[w])})
		}
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
	m.fallback = max(0, most)
	return m
}

func owners2count(owners []Owner, i int, count map[string]int) int {
	return count[fold(owners[i].Component)]
}

// wordConcepts are the concepts one word of a name stands for: its
// lexicon concepts, those of the words it breaks into ("photosync" →
// photo + sync), or those of the words an acronym abbreviates.
func wordConcepts(w string) []string {
	var out []string
	add := func(words []string) {
		a := analyzeTokens(toTokens(words), false)
		for t := range a.bag {
			if isConcept(t) {
				out = appendUnique(out, t)
			}
		}
	}
	if long, ok := abbreviations[w]; ok {
		add(strings.Fields(long))
	}
	add([]string{w})
	if len(out) == 0 {
		add(wordBreak(w))
	}
	sort.Strings(out)
	return out
}

// wordSet holds a text's words, their stems and each pair of neighbours
// joined ("build cache" → buildcache), for matching names.
func wordSet(text string) map[string]bool {
	words := map[string]bool{}
	toks := tokenize(text)
	for i, t := range toks {
		words[t.s] = true
		words[stem(t.s)] = true
		if i > 0 {
			words[toks[i-1].s+t.s] = true
		}
	}
	return words
}

// count is how often a text uses the name word, and whether it says the
// word itself (or its stem) rather than only a concept it stands for
// (counted by the concept's uses).
func (p namePart) count(words map[string]bool, bag terms) (n int, literal bool) {
	if words[p.word] || words[p.stem] {
		n, literal = max(1, bag[p.stem]+bag[p.word]), true
	}
	for _, c := range p.concepts {
		n = max(n, bag[c])
	}
	return n, literal
}

// Choose scores every component and returns the best with a short
// explanation. Evidence and points:
//
//   - the report names it: for each name word the report uses, 3 × the
//     word's specificity in this tracker × (1 + ½ ln uses) (× 0.6 when
//     only a concept the word stands for is used, nothing when that
//     concept is only a device class such as a watch or a phone, which a
//     report names whatever its problem), over the
//     square root of the number of name words ("savings" and "pots" both
//     count, a product noun every ticket uses barely counts). A
//     component with no tickets wins on its name alone;
//   - the matched crash signature: the name is a word of the signature
//     (3) or of a stack frame (2), or starts or ends one of their
//     identifiers; the name's concepts among the signature's terms (1.5,
//     0.9 from the stack);
//   - the report's main problem is what a name word stands for (the
//     word's specificity); a
//     concept of the same part of the app as the name's (0.75);
//   - the component's vocabulary learned from its tickets: 2 × cosine
//     (normalised, so a component with many tickets does not win by
//     size);
//   - the nearest of its tickets alone: 2.5 × its cosine above the
//     centroid's (a paraphrase of one ticket, diluted in the centroid); code identifiers count by
//     their words (LogPane → log, pane);
//   - the report's platform (device and OS: a family such as macOS and
//     its class, a computer or a phone) named by its tickets more often
//     than by the tracker's: 0.4 × the smoothed log lift, halves each;
//   - its tickets name the matched crash's class or function (2);
//   - a word of its owning team or channel that few owners share, said
//     in the report (1 / owners sharing it);
//   - related tickets: the ticket this is a regression of (3), other
//     tracker hits 2 × their score from 0.45.
//
// Ties go to the component listed first in CODEOWNERS. When nothing
// points anywhere, the component with most tickets is chosen (the
// tracker's busiest area), or the first listed.
func (m *ComponentModel) Choose(text string, agg *CrashAggregate, regressed *Ticket, related []Hit) (string, string) {
	d := m.Decide(ComponentReport{Text: text, Crash: agg, Regressed: regressed, Related: related})
	return d.Component, d.Why
}

// ComponentReport is what a component decision reads: the report's text,
// the device and OS its channel or text gave, the crash matched to it,
// the ticket it is a regression of and similar tracker tickets.
type ComponentReport struct {
	Text      string
	Device    string
	OS        string
	Crash     *CrashAggregate
	Regressed *Ticket
	Related   []Hit
}

// ComponentDecision is the chosen component, why, and how sure: the
// softmax probability of the choice over every component's evidence
// (Confidence) and the gap to the runner-up in points (Margin). A guess
// (nothing points anywhere) has Confidence 0.
type ComponentDecision struct {
	Component  string  `json:"component"`
	Why        string  `json:"why"`
	Confidence float64 `json:"confidence"`
	Margin     float64 `json:"margin"`
	RunnerUp   string  `json:"runner_up,omitempty"`
	// Probability is each component's softmax share (CODEOWNERS
	// spelling), so a caller can weigh agreement with a ticket's
	// component by how likely that component is, not only the choice.
	Probability map[string]float64 `json:"probability,omitempty"`
	// whys are each component's reasons, for debugging.
	whys []string
}

// ReportComponentOf classifies a report before any search from its query
// (text, device, OS, confirmed signature) and the crash log's matches.
// A nil model gives the zero decision.
func ReportComponentOf(cm *ComponentModel, q Query, crashes []CrashAggregate) ComponentDecision {
	if cm == nil {
		return ComponentDecision{}
	}
	var agg *CrashAggregate
	for i := range crashes {
		if q.Signature != "" && crashes[i].Signature == q.Signature {
			agg = &crashes[i]
			break
		}
	}
	return cm.Decide(ComponentReport{Text: q.Text, Device: q.Device, OS: q.OS, Crash: agg})
}

// Decide scores every component for the report (see Choose for the
// evidence) and returns the best with its confidence.
func (m *ComponentModel) Decide(r ComponentReport) ComponentDecision {
	if len(m.comps) == 0 {
		return ComponentDecision{Why: "no CODEOWNERS"}
	}
	text, agg, regressed, related := r.Text, r.Crash, r.Regressed, r.Related
	a := analyze(text)
	rbag := componentBag(text)
	rvec := map[string]float64{}
	for t, n := range rbag {
		idf := 1.0
		if m.df[t] > 0 {
			idf = math.Log(1 + m.nc/float64(m.df[t]))
		}
		rvec[t] = (1 + math.Log(float64(n))) * idf * termWeight(t)
	}
	rvec = unit(rvec)
	rplat := platformsNamed(r.Device + " " + r.OS + " " + text)
	scores := make([]float64, len(m.comps))
	whys := make([]string, len(m.comps))
	words := wordSet(text)
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
			for _, p := range c.parts {
				if slices.Contains(p.concepts, "~"+pc) {
					score += p.spec
					why = append(why, "the problem is about "+pc)
					break
				}
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
		if len(c.parts) > 0 {
			sum := 0.0
			var used []string
			for _, p := range c.parts {
				if n, literal := p.count(words, a.bag); n > 0 {
					// A word said is firmer evidence than a concept it
					// stands for ("refund" for a name word "payment").
					w := 0.6
					if literal {
						w = 1
					} else if onlyDevice(p.concepts) {
						// The device a report runs on ("my watch", "el
						// móvil") is named whatever its problem: a name
						// word standing for a device class counts only
						// when said.
						w, n = componentDeviceWeight, 1
					}
					sum += w * p.spec * (1 + 0.5*math.Log(float64(n)))
					used = append(used, p.word)
				}
			}
			if sum > 0 {
				s := 3 * sum / math.Sqrt(float64(len(c.parts)))
				score += s
				why = append(why, fmt.Sprintf("the report speaks of %s (%.1f)", strings.Join(used, "+"), s))
			}
		}
		if agg != nil && c.text != "" {
			if id := namedCrashIdent(agg, c.text); id != "" {
				score += 2
				why = append(why, "its tickets name "+id)
			}
		}
		for _, p := range c.team {
			if n, literal := p.count(words, a.bag); n > 0 && literal {
				score += p.spec
				why = append(why, "its team's name says "+p.word)
			}
		}
		for _, cc := range c.concepts {
			for _, rc := range conceptNeighbours[cc] {
				if a.bag[rc] > 0 {
					score += 0.75
					why = append(why, fmt.Sprintf("%s goes with %s", rc[1:], cc[1:]))
					break
				}
			}
		}
		if len(c.docs) > 0 {
			near := 0.0
			for _, d := range c.docs {
				near = max(near, dot(rvec, d))
			}
			// Only what one ticket holds beyond the centroid counts: a
			// paraphrase of one ticket stands out from its siblings; a
			// word every ticket of the component shares is already in
			// the centroid's cosine below.
			if near -= c.centroidCos(rbag); near > 0 {
				score += componentNearWeight * near
				if near >= 0.2 {
					why = append(why, fmt.Sprintf("one of its tickets is near (%.2f)", near))
				}
			}
		}
		if lift := m.platformLift(c, rplat); lift > 0 {
			score += lift
			why = append(why, fmt.Sprintf("its tickets name the report's platform (%.1f)", lift))
		}
		if len(c.vocab) > 0 {
			dot, rn := 0.0, 0.0
			for t := range rbag {
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
		scores[i] = score
		whys[i] = fmt.Sprintf("%s %.2f: %s", c.owner.Component, score, strings.Join(why, ", "))
		if score > bestScore+1e-9 {
			best, bestScore, bestWhy = i, score, strings.Join(why, ", ")
		}
	}
	if best < 0 {
		c := m.comps[m.fallback]
		if c.tickets > 0 {
			return ComponentDecision{Component: c.owner.Component, Why: "nothing points to a component: the one with most tickets"}
		}
		return ComponentDecision{Component: c.owner.Component, Why: "nothing points to a component: first in CODEOWNERS"}
	}
	d := ComponentDecision{Component: m.comps[best].owner.Component, Why: fmt.Sprintf("%s, %.1f points", bestWhy, bestScore)}
	// Softmax over the points: the share of the evidence the choice
	// holds, and the gap to the runner-up.
	second, sum := -1, 0.0
	for i, sc := range scores {
		sum += math.Exp((sc - bestScore) / componentTemperature)
		if i != best && (second < 0 || sc > scores[second]) {
			second = i
		}
	}
	d.Confidence = round3(1 / sum)
	d.Probability = map[string]float64{}
	for i, sc := range scores {
		d.Probability[m.comps[i].owner.Component] = round3(math.Exp((sc-bestScore)/componentTemperature) / sum)
	}
	d.whys = whys
	if second >= 0 {
		d.Margin = round3(bestScore - scores[second])
		d.RunnerUp = m.comps[second].owner.Component
	} else {
		d.Margin = round3(bestScore)
	}
	return d
}

// centroidCos is the cosine of the report's terms to the component's
// tf-idf centroid (its learned vocabulary).
func (c compInfo) centroidCos(rbag terms) float64 {
	d, rn := 0.0, 0.0
	for t := range rbag {
		w := termWeight(t)
		rn += w * w
		d += w * c.vocab[t]
	}
	if rn == 0 || d <= 0 {
		return 0
	}
	return d / math.Sqrt(rn)
}

// onlyDevice reports whether every concept of a name word is a device
// class.
func onlyDevice(concepts []string) bool {
	if len(concepts) == 0 {
		return false
	}
	for _, c := range concepts {
		if !deviceConcepts[c] {
			return false
		}
	}
	return true
}

// Weights of the learned evidence, in the points of Choose.
const (
	// componentDeviceWeight is the weight of a name word matched only by
	// the device class it stands for (1 when said, 0.6 for other
	// concepts). At 0.2 the Spanish and Portuguese word for a watch sent
	// a wearable's sync and update reports to its watch-faces component.
	componentDeviceWeight = 0
	// componentNearWeight scales the cosine to the nearest single ticket.
	componentNearWeight = 2.5
	// componentPlatformWeight scales the lift of the report's platform
	// among a component's tickets over the tracker's.
	componentPlatformWeight = 0.4
	// componentTemperature is the softmax temperature over points: a
	// lead of this many points is e times as likely.
	componentTemperature = 1.5
)

// platformFamilies maps the words a device or OS is named with to its
// platform, and each platform to its class (a computer or a phone). A
// component whose tickets name the report's platform more often than
// the tracker's other tickets is likelier its owner: a desktop client's
// tickets name Windows and macOS, a mobile app's iOS and Android.
var platformFamilies = func() map[string][]string {
	m := map[string][]string{}
	for fam, words := range map[string]string{
		"windows": "windows win10 win11",
		"mac":     "macos mac macbook imac osx",
		"linux":   "linux ubuntu debian fedora centos rhel alpine",
		"ios":     "ios ipados iphone ipad",
		"android": "android miui pixel huawei galaxy oppo samsung vivo xiaomi oneplus redmi moto poco motorola hyperos",
		"browser": "browser chrome chromium firefox safari",
	} {
		class := "phone"
		switch fam {
		case "windows", "mac", "linux":
			class = "computer"
		case "browser":
			class = "web"
		}
		for _, w := range strings.Fields(words) {
			m[w] = []string{"os:" + fam, "class:" + class}
		}
	}
	return m
}()

// platformsNamed are the platform families and classes a text names.
func platformsNamed(text string) []string {
	var out []string
	for _, t := range tokenize(text) {
		for _, f := range platformFamilies[t.s] {
			out = appendUnique(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// platformLift is the evidence of the report's platforms for component c:
// for each, the log of how much more often c's tickets name it than the
// tracker's (smoothed toward the tracker's rate), when positive.
func (m *ComponentModel) platformLift(c compInfo, rplat []string) float64 {
	if m.tickets == 0 || c.tickets == 0 {
		return 0
	}
	lift := 0.0
	for _, f := range rplat {
		all := m.platformTickets[f]
		if all == 0 {
			continue
		}
		prior := float64(all) / float64(m.tickets)
		p := (float64(c.platforms[f]) + 2*prior) / (float64(c.tickets) + 2)
		if l := math.Log(p / prior); l > 0 {
			// A family (macOS) and its class (a computer) each count half.
			lift += 0.5 * l
		}
	}
	return componentPlatformWeight * lift
}

// componentBag is a text's terms for the component model: its prose
// terms and the words of the code identifiers it names, split
// ("LogPane" → log, pane; "account_tile" → account, tile), so a report's
// words meet the identifiers in tickets and stack frames.
func componentBag(text string) terms {
	bag := terms{}
	for t, n := range analyze(text).bag {
		bag[t] += n
	}
	for _, id := range reCodeIdent.FindAllString(text, -1) {
		for t, n := range analyzeIdent(id).bag {
			if !genericCode[t] {
				bag[t] += n
			}
		}
	}
	return bag
}

// reCodeIdent finds camelCase, PascalCase and snake_case identifiers.
var reCodeIdent = regexp.MustCompile(`\b[A-Za-z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b|\b[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*\b|\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b`)

// unit scales a vector to length 1.
func unit(v map[string]float64) map[string]float64 {
	n := 0.0
	for _, x := range v {
		n += x * x
	}
	if n == 0 {
		return v
	}
	n = math.Sqrt(n)
	for k := range v {
		v[k] /= n
	}
	return v
}

// dot is the dot product of two sparse vectors.
func dot(a, b map[string]float64) float64 {
	if len(b) < len(a) {
		a, b = b, a
	}
	s := 0.0
	for k, x := range a {
		s += x * b[k]
	}
	return s
}

// namedCrashIdent returns an identifier of the crash (a word of its
// signature or top frame of eight letters or more that is not generic
// code vocabulary) that a component's ticket text names, or "".
func namedCrashIdent(agg *CrashAggregate, text string) string {
	for _, src := range []string{agg.Signature, stripFileRefs(agg.StackTop)} {
		for _, w := range identWords(src) {
			if len(w) >= 8 && !genericCode[w] && !isDigits(w) && strings.Contains(text, w) {
				return w
			}
		}
	}
	return ""
}
