package triage

import (
	"container/heap"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// StrongScore is the duplicate evidence (Hit.Score: the similarity plus
// the agreement and standout parts of dup_evidence.go) from which a
// search hit may be claimed as the duplicate target (the duplicate
// guard's floor).
//
// It is measured (TestCalibrationTable, dup_calib_test.go): over the
// sample, the four evaluation sets and the four generalisation sets, each
// run as the reference pipeline and with created tickets filed into the
// tracker (18 runs, 116 true duplicate pairs), the highest false candidate
// scores 0.480 (a ticket naming the same crash signature as a report
// whose duplicate is an earlier report of the batch), so the measured
// floor (the highest false plus the 0.03 safety margin) is 0.51; 0.51 and
// 0.52 accept the same 91 of 116 true pairs with no false one (the first
// 14 runs: 75 of 88 at 0.52). TestCalibration fails when a change brings
// any false candidate of any set within 0.03 of the floor.
const StrongScore = 0.52

// Query is what the investigator searches with: the report's text, its
// reporter's device, OS and app version, and the crash signature that
// telemetry confirmed for it (if any).
type Query struct {
	Text       string `json:"text"`
	Device     string `json:"device,omitempty"`
	OS         string `json:"os,omitempty"`
	AppVersion string `json:"app_version,omitempty"`
	Signature  string `json:"signature,omitempty"`
	// Component is the component the report is classified into
	// (ComponentModel.Choose, once per report); the duplicate evidence
	// weighs whether a ticket is of the same one.
	Component string `json:"component,omitempty"`
	// ComponentP is the report's probability of belonging to each
	// component (ComponentDecision.Probability), so agreement with a
	// ticket's component weighs how sure the classification is; nil:
	// Component counts as certain.
	ComponentP map[string]float64 `json:"component_p,omitempty"`
}

// Hit is one search result. Strong hits (Score >= StrongScore) may be
// claimed as duplicates; weak ones may not. Batch hits have IDs
// "batch:<item id>" and carry the ticket that item resolved to.
type Hit struct {
	ID        string   `json:"id"`
	Title     string   `json:"title"`
	Status    string   `json:"status,omitempty"`
	Score     float64  `json:"score"`
	Strong    bool     `json:"strong"`
	Why       []string `json:"why,omitempty"`
	FixedIn   string   `json:"fixed_in,omitempty"`
	Component string   `json:"component,omitempty"`
	Resolves  string   `json:"resolves,omitempty"`
	// Words is the similarity of the words alone (text coverage for a
	// ticket, cosine and overlap for an earlier report), before crash
	// signature, platform and evidence parts: what says two texts
	// describe the same thing (the regression rule compares it).
	Words       float64 `json:"words,omitempty"`
	raw         float64 // the score before clamping to [0, 1], to order ties at 1
	closed      bool    // the ticket is closed (never the standout target)
	offPlatform bool    // the ticket names only other OS families (never the standout target)
	quote       float64 // the quote agreement in raw (it may confirm a STRONG hit, never make one)
	kindOff     bool    // report and ticket name different kinds of failure (never the standout target)
	factsApart  bool    // both copy concrete things and share none (never the standout target)
	// Related, when set, says why this near match is another bug (the
	// report names a harm it does not, or what it says works): never
	// claimable, its Score held under the floor (dup_block.go); a
	// candidate that would have been STRONG is linked as possibly related.
	Related string `json:"related,omitempty"`
	// Unblocked is a blocked candidate's Score before the block.
	Unblocked float64 `json:"unblocked,omitempty"`
}

// Label is "STRONG" or "weak", the word a small model reads instead of a
// float.
func (h Hit) Label() string {
	if h.Strong {
		return "STRONG"
	}
	return "weak"
}

// TrackerIndex is an inverted index over a tracker's tickets. It is
// immutable after NewTrackerIndex and LinkCrashLog, and safe for
// concurrent Search.
//
// Retrieval runs in two stages. BM25F (title weighted twice the
// description) over canonical terms (concepts and stems, see text.go)
// ranks every ticket sharing a term with the report, through the postings
// lists only; query stems the tracker does not know are first expanded to
// known stems by character-trigram similarity (typos, inflections, cognates)
// through a trigram index of the vocabulary. The best BM25 candidates are
// then re-scored with the calibrated similarity documented on score.
type TrackerIndex struct {
	tickets []Ticket
	vocab   map[string]int32
	terms   []string
	df      []int32
	post    [][]posting
	idf     []float64
	omega   []float64 // coverage weight: idf × prior
	docs    []tdoc
	avgT    float64
	avgD    float64
	grams   map[string][]int32 // trigram → stem term ids
	ngrams  []uint16           // distinct trigrams per term
	idfNew  float64            // idf of a term no ticket has
	byID    map[string]int32   // ticket id → index
	pool    sync.Pool
}

type tdoc struct {
	title, desc []int32 // unique term ids, sorted
	lenT, lenD  int32
	osMajors    []string
	osFams      []string
	devices     []string
	sigs        []string // crash signatures the ticket names (LinkCrashLog)
	symptoms    uint16   // failure kinds the ticket names (symptomMask)
	harms       uint8    // harms the ticket names (harmKinds)
	quals, fine []int32  // restrictive qualifiers and "what works" terms (dup_block.go)
	thinTitle   bool     // fewer than two title terms name anything (see score)
}

// posting is one ticket containing a term, with the term's saturated
// BM25F frequency in it precomputed (title and description weighted and
// length-normalised), so a query only multiplies by idf and adds.
type posting struct {
	doc int32
	sat float32
}

type scratch struct {
	acc      []float32
	touched  []int32
	grams    []uint16 // trigram counts per term (fuzzy)
	gtouched []int32
}

const (
	bm25K1      = 1.2
	bm25B       = 0.75
	titleWeight = 2.0
	descWeight  = 1.0
)

// NewTrackerIndex indexes tickets.
func NewTrackerIndex(tickets []Ticket) *TrackerIndex {
	ix := &TrackerIndex{tickets: tickets, vocab: map[string]int32{}, grams: map[string][]int32{}, byID: make(map[string]int32, len(tickets))}
	var sumT, sumD int
	tfs := make([][]uint32, 0) // per term, parallel to post: title tf << 16 | description tf
	tf := map[int32][2]uint16{}
	for i, t := range tickets {
		if _, dup := ix.byID[t.ID]; !dup {
			ix.byID[t.ID] = int32(i)
		}
		tt, dt := tokenize(t.Title), tokenize(t.Description)
		ta, da := searchAnalyze(tt), searchAnalyze(dt)
		d := tdoc{lenT: int32(len(ta.seq)), lenD: int32(len(da.seq)), symptoms: symptomMask(ta.bag) | symptomMask(da.bag),
			harms: harmKinds(func(c string) bool { return ta.bag["~"+c] > 0 || da.bag["~"+c] > 0 })}
		sumT += len(ta.seq)
		sumD += len(da.seq)
		clear(tf)
		for term, c := range ta.bag {
			id := ix.termID(term)
			x := tf[id]
			x[0] += uint16(min(c, 1000))
			tf[id] = x
			d.title = append(d.title, id)
		}
		for term, c := range da.bag {
			id := ix.termID(term)
			x := tf[id]
			x[1] += uint16(min(c, 1000))
			tf[id] = x
			d.desc = append(d.desc, id)
		}
		slices.Sort(d.title)
		slices.Sort(d.desc)
		content := 0
		for t := range ta.bag {
			if _, isOS := osWords[t]; !isOS && !isNumberTerm(t) {
				content++
			}
		}
		d.thinTitle = content < 2
		for len(tfs) < len(ix.terms) {
			tfs = append(tfs, nil)
		}
		ids := make([]int32, 0, len(tf))
		for id := range tf {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			x := tf[id]
			ix.post[id] = append(ix.post[id], posting{doc: int32(i)})
			tfs[id] = append(tfs[id], uint32(x[0])<<16|uint32(x[1]))
			ix.df[id]++
		}
		d.osMajors, d.osFams = mentionedOSTokens(tt, nil, nil)
		d.osMajors, d.osFams = mentionedOSTokens(dt, d.osMajors, d.osFams)
		d.devices = mentionedDevices(t.Title + "\n" + t.Description)
		ix.docs = append(ix.docs, d)
	}
	n := float64(len(tickets))
	if n > 0 {
		ix.avgT = max(1, float64(sumT)/n)
		ix.avgD = max(1, float64(sumD)/n)
	}
	for id, ps := range ix.post {
		for j := range ps {
			d := &ix.docs[ps[j].doc]
			x := tfs[id][j]
			tfw := titleWeight*float64(x>>16)/(1-bm25B+bm25B*float64(d.lenT)/ix.avgT) +
				descWeight*float64(x&0xffff)/(1-bm25B+bm25B*float64(d.lenD)/ix.avgD)
			ps[j].sat = float32(tfw * (bm25K1 + 1) / (tfw + bm25K1))
		}
	}
	ix.idf = make([]float64, len(ix.terms))
	ix.omega = make([]float64, len(ix.terms))
	ix.ngrams = make([]uint16, len(ix.terms))
	for id, term := range ix.terms {
		ix.idf[id] = bm25IDF(n, float64(ix.df[id]))
		ix.omega[id] = ix.idf[id] * searchWeight(term)
		if !isConcept(term) && !isNumberTerm(term) && len(term) >= 4 {
			g := trigrams(term)
			for _, x := range g {
				ix.grams[x] = append(ix.grams[x], int32(id))
			}
			ix.ngrams[id] = uint16(min(len(g), 1<<15))
		}
	}
	ix.idfNew = bm25IDF(n, 1)
	for i := range ix.docs {
		ix.docs[i].quals, ix.docs[i].fine = ix.ticketQualifiers(tickets[i], ix.docs[i].title)
	}
	ix.pool.New = func() any { return &scratch{acc: make([]float32, len(tickets))} }
	return ix
}

func bm25IDF(n, df float64) float64 { return math.Log(1 + (n-df+0.5)/(df+0.5)) }

func (ix *TrackerIndex) termID(t string) int32 {
	if id, ok := ix.vocab[t]; ok {
		return id
	}
	id := int32(len(ix.terms))
	ix.vocab[t] = id
	ix.terms = append(ix.terms, t)
	ix.df = append(ix.df, 0)
	ix.post = append(ix.post, nil)
	return id
}

// Len is the number of indexed tickets.
func (ix *TrackerIndex) Len() int { return len(ix.tickets) }

// Ticket returns an indexed ticket by id.
func (ix *TrackerIndex) Ticket(id string) (Ticket, bool) {
	if i, ok := ix.byID[id]; ok {
		return ix.tickets[i], true
	}
	return Ticket{}, false
}

// LinkCrashLog records which crash signatures each ticket names (the
// signature, its class/method name or a frame of its stack). Search then
// rewards a ticket that names the report's confirmed signature and
// penalises one that names a different signature. Call it before
// searching concurrently.
func (ix *TrackerIndex) LinkCrashLog(cl *CrashLog) {
	if cl == nil {
		return
	}
	for i, t := range ix.tickets {
		text := strings.ToLower(t.Title + "\n" + t.Description)
		var sigs []string
		for _, s := range cl.sigs {
			for _, k := range s.keys {
				if strings.Contains(text, k) {
					sigs = append(sigs, s.agg.Signature)
					break
				}
			}
		}
		ix.docs[i].sigs = sigs
	}
}

// queryTerm is one term of a query with its coverage weight and, when the
// tracker knows it (directly or through n-gram expansion), its term ids.
type queryTerm struct {
	term  string
	omega float64
	ids   []int32
	match []float64 // match strength per id (1 direct, < 1 fuzzy)
}

func (ix *TrackerIndex) prepare(q Query, sc *scratch) []queryTerm {
	a := searchAnalyze(tokenize(q.Text))
	bag := a.bag
	if fam := osFamily(q.OS); fam != "" {
		bag[fam]++ // the report's platform is part of what it says
	}
	keys := make([]string, 0, len(bag))
	for t := range bag {
		if t == "~feedback_positive" {
			continue
		}
		keys = append(keys, t)
	}
	sort.Strings(keys)
	expand := ix.fuzzyCandidates(keys)
	out := make([]queryTerm, 0, len(keys))
	for _, t := range keys {
		qt := queryTerm{term: t}
		if id, ok := ix.vocab[t]; ok {
			qt.ids, qt.match = []int32{id}, []float64{1}
			qt.omega = ix.omega[id]
		} else {
			qt.omega = ix.idfNew * searchWeight(t)
			if !isConcept(t) && !isNumberTerm(t) {
				// A word no ticket uses says little about which ticket is
				// meant; it still dilutes the report's coverage a little.
				qt.omega *= 0.3
				if expand[t] {
					for _, f := range ix.fuzzy(t, sc) {
						qt.ids = append(qt.ids, f.id)
						qt.match = append(qt.match, f.sim)
					}
					if len(qt.ids) > 0 {
						qt.omega = ix.omega[qt.ids[0]]
					}
				}
			}
		}
		out = append(out, qt)
	}
	return out
}

// maxFuzzy is how many unknown words of one query are expanded by
// trigram similarity. A report has a handful of typos; a query of
// thousands of invented words must not cost thousands of trigram lookups
// (each walks the postings of its trigrams over the whole vocabulary).
const maxFuzzy = 24

// maxFuzzyWork caps the trigram postings one query's expansion may walk
// in all: a word's cost is the postings of its trigrams, so 24 long words
// made of common trigrams cost as much as hundreds of rare ones. A few
// typos of a real report walk a few thousand postings each on a
// 100,000-ticket tracker.
const maxFuzzyWork = 60_000

// fuzzyCandidates returns the query's words the tracker does not know that
// trigram expansion may look up: at most maxFuzzy and maxFuzzyWork
// postings in all, the longest first (a long word carries more of its
// meaning in its trigrams, and a short one matches many stems by chance),
// ties in alphabetical order; a word that would exceed the budget is
// skipped and a cheaper one may still fit.
func (ix *TrackerIndex) fuzzyCandidates(keys []string) map[string]bool {
	var unknown []string
	for _, t := range keys {
		if _, ok := ix.vocab[t]; ok || len(t) < 4 || isConcept(t) || isNumberTerm(t) {
			continue
		}
		unknown = append(unknown, t)
	}
	sort.SliceStable(unknown, func(i, j int) bool { return len(unknown[i]) > len(unknown[j]) })
	set := make(map[string]bool, min(len(unknown), maxFuzzy))
	work := 0
	for _, t := range unknown {
		if len(set) == maxFuzzy {
			break
		}
		c := 0
		for _, g := range trigrams(t) {
			c += len(ix.grams[g])
		}
		if work+c > maxFuzzyWork {
			continue
		}
		work += c
		set[t] = true
	}
	return set
}

type fuzzyMatch struct {
	id  int32
	sim float64
}

// fuzzy finds known stems whose character trigrams overlap t's (Dice ≥
// 0.6), at most two, for typos and inflections no stemmer catches.
func (ix *TrackerIndex) fuzzy(t string, sc *scratch) []fuzzyMatch {
	g := trigrams(t)
	// Trigram counts per stem in the scratch's reusable array (a map per
	// word would allocate for every stem sharing a trigram).
	if len(sc.grams) < len(ix.terms) {
		sc.grams = make([]uint16, len(ix.terms))
	}
	defer func() {
		for _, id := range sc.gtouched {
			sc.grams[id] = 0
		}
		sc.gtouched = sc.gtouched[:0]
	}()
	for _, x := range g {
		for _, id := range ix.grams[x] {
			if sc.grams[id] == 0 {
				sc.gtouched = append(sc.gtouched, id)
			}
			sc.grams[id]++
		}
	}
	var out []fuzzyMatch
	for _, id := range sc.gtouched {
		c := int(sc.grams[id])
		if 2*float64(c)/float64(len(g)) < 0.6 {
			continue // cannot reach 0.6 whatever the other word's length
		}
		dice := 2 * float64(c) / float64(len(g)+int(ix.ngrams[id]))
		if dice >= 0.6 {
			out = append(out, fuzzyMatch{id: id, sim: round3(dice * 0.9)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].sim != out[j].sim {
			return out[i].sim > out[j].sim
		}
		return out[i].id < out[j].id
	})
	if len(out) > 2 {
		out = out[:2]
	}
	return out
}

// trigrams returns the distinct character trigrams of " w ".
func trigrams(w string) []string {
	r := []rune(" " + w + " ")
	var out []string
	for i := 0; i+3 <= len(r); i++ {
		g := string(r[i : i+3])
		if !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// Search returns the k tickets most similar to the report, best first,
// each with a calibrated Score in [0, 1] and the reasons for it.
func (ix *TrackerIndex) Search(q Query, k int) []Hit {
	if k <= 0 {
		return nil
	}
	hits := ix.candidates(q, k, -1)
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// Rescore returns ticket id's hit for q as Search scores it among q's
// candidates (with the standout over them), whether or not it ranks in
// Search's top k: the duplicate guard re-scores a claimed ticket against
// the report's own query this way.
func (ix *TrackerIndex) Rescore(q Query, id string) (Hit, bool) {
	i, ok := ix.byID[id]
	if !ok {
		return Hit{}, false
	}
	for _, h := range ix.candidates(q, SearchK, i) {
		if h.ID == id {
			return h, true
		}
	}
	return Hit{}, false
}

// candidates scores q's best BM25 candidates for a top k (and doc force
// among them, when it is not -1), best first.
func (ix *TrackerIndex) candidates(q Query, k int, force int32) []Hit {
	if len(ix.tickets) == 0 {
		return nil
	}
	// A report longer than the window is a pasted log or a flood: its head
	// and tail say what it is about, and the search's cost stays bounded.
	q.Text = boundText(q.Text, searchHead, searchTail)
	sc := ix.pool.Get().(*scratch)
	defer func() {
		for _, d := range sc.touched {
			sc.acc[d] = 0
		}
		sc.touched = sc.touched[:0]
		ix.pool.Put(sc)
	}()
	qts := ix.prepare(q, sc)
	if len(qts) == 0 {
		return nil
	}
	// Term at a time, rarest first. Terms that a large share of the
	// tracker contains (over commonDF tickets) are skipped once the rarer
	// terms brought in enough candidates: their idf is small, they barely
	// reorder the candidates, and walking their long postings lists is
	// most of the cost on a large tracker. The calibrated score of the
	// candidates still counts them.
	type termRef struct {
		id  int32
		idf float64
	}
	var refs []termRef
	for _, qt := range qts {
		for j, id := range qt.ids {
			refs = append(refs, termRef{id, ix.idf[id] * qt.match[j]})
		}
	}
	sort.Slice(refs, func(i, j int) bool {
		if len(ix.post[refs[i].id]) != len(ix.post[refs[j].id]) {
			return len(ix.post[refs[i].id]) < len(ix.post[refs[j].id])
		}
		return refs[i].id < refs[j].id
	})
	m := max(64, 4*k)
	commonDF := max(2000, len(ix.tickets)/20)
	for _, ref := range refs {
		ps := ix.post[ref.id]
		idf := float32(ref.idf)
		if len(ps) > commonDF && len(sc.touched) >= m {
			break
		}
		for _, p := range ps {
			if sc.acc[p.doc] == 0 {
				sc.touched = append(sc.touched, p.doc)
			}
			sc.acc[p.doc] += idf * p.sat
		}
	}
	h := &docHeap{}
	for _, d := range sc.touched {
		if h.Len() < m {
			heap.Push(h, scored{d, sc.acc[d]})
		} else if sc.acc[d] > (*h)[0].s {
			(*h)[0] = scored{d, sc.acc[d]}
			heap.Fix(h, 0)
		}
	}
	if force >= 0 && !slices.ContainsFunc(*h, func(c scored) bool { return c.d == force }) {
		*h = append(*h, scored{force, sc.acc[force]})
	}
	qx := queryExtras{symptoms: ix.querySymptoms(qts), harms: sentenceHarms(q.Text), quotes: contentQuotes(quotedStrings(q.Text), ix.rareWord), concrete: ix.concreteTokens(q.Text)}
	qx.quals, qx.fine = reportQualifiers(q.Text)
	qm := map[int32]float64{}
	for _, qt := range qts {
		for j, id := range qt.ids {
			qm[id] = max(qm[id], qt.match[j])
		}
	}
	hits := make([]Hit, 0, h.Len())
	for _, c := range *h {
		hits = append(hits, ix.score(int(c.d), q, qts, qm, qx, float64(c.s)))
	}
	applyStandout(hits, func(h Hit) bool { return h.closed })
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].Score != hits[j].Score {
			return hits[i].Score > hits[j].Score
		}
		if hits[i].raw != hits[j].raw {
			return hits[i].raw > hits[j].raw
		}
		return hits[i].ID < hits[j].ID
	})
	return hits
}

// The window of a report's text the search reads (see Search).
const searchHead, searchTail = 8 << 10, 2 << 10

type scored struct {
	d int32
	s float32
}

type docHeap []scored

func (h docHeap) Len() int { return len(h) }
func (h docHeap) Less(i, j int) bool {
	if h[i].s != h[j].s {
		return h[i].s < h[j].s
	}
	return h[i].d > h[j].d
}
func (h docHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *docHeap) Push(x any)   { *h = append(*h, x.(scored)) }
func (h *docHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Weights of the calibrated similarity (see score).
const (
	wTitle         = 0.55
	wDesc          = 0.15
	wQuery         = 0.30
	bonusSig       = 0.20
	penaltySig     = 0.25
	bonusDevice    = 0.06
	bonusOS        = 0.05
	penaltyOS      = 0.10
	penaltyOSMajor = 0.05
	bonusVersion   = 0.05
	penaltyOld     = 0.08
	sigFloor       = 0.70
)

// score is the calibrated similarity between a report and a ticket.
//
// BM25 ranks well but its values grow with the report's length and the
// tracker's size, so no fixed threshold means "same bug" across projects.
// The calibrated score is built from ratios instead, each in [0, 1]:
//
//   - title coverage: the share of the ticket title's weighted terms the
//     report contains. A title names the bug, so a report that covers it
//     describes the same thing (weight 0.55);
//   - description coverage, the same over the description (0.15);
//   - report coverage: the share of the report's weighted terms the ticket
//     contains (0.30). It keeps a long report about something else (a lost
//     save that mentions signing in) from matching a short ticket whose
//     few words it happens to contain.
//
// Terms weigh idf × the lexicon's specificity, so "crash" counts less than
// "playlist", and words no ticket uses count 0.3 of a rare word.
// Context then moves the score: the ticket naming the report's
// telemetry-confirmed crash signature +0.20, naming a different signature
// −0.25 (two crashes with different stacks are different bugs, whatever
// their words share); the reporter's device named +0.06; the reporter's
// OS family and major version named +0.05, only another OS named −0.10,
// only other major versions of the same OS named −0.05;
// the reporter's version among the affected versions of an open ticket
// +0.05, older than every affected version −0.08.
//
// Calibration: the floor is measured on the evidence score (StrongScore's
// comment, TestCalibrationTable); TestCalibration holds every false
// candidate of every dataset at hand 0.03 below it.
//
// The hit's Score is then the duplicate evidence: this similarity plus the
// named parts of dup_evidence.go (component, platform exclusivity, device
// maker, concrete tokens, rare shared terms) and, for the nearest open
// ticket, how far it stands out (applyStandout), listed in Why.
func (ix *TrackerIndex) score(i int, q Query, qts []queryTerm, qm map[int32]float64, qx queryExtras, bm25 float64) Hit {
	t := ix.tickets[i]
	d := &ix.docs[i]
	cov := func(ids []int32) (float64, []string) {
		num, den := 0.0, 0.0
		var got []string
		for _, id := range ids {
			den += ix.omega[id]
			if m := qm[id]; m > 0 {
				num += ix.omega[id] * m
				got = append(got, ix.terms[id])
			}
		}
		if den == 0 {
			return 0, nil
		}
		return num / den, got
	}
	tc, tgot := cov(d.title)
	dc, _ := cov(d.desc)
	if d.thinTitle {
		// A title such as "Here we go again [Android 15]" names nothing
		// but a platform: covering it says nothing, so the description
		// stands in for it.
		tc = min(tc, dc)
	}
	num, den := 0.0, 0.0
	for _, qt := range qts {
		den += qt.omega
		best := 0.0
		for j, id := range qt.ids {
			if has32(d.title, id) || has32(d.desc, id) {
				best = max(best, qt.match[j])
			}
		}
		num += qt.omega * best
	}
	qc := 0.0
	if den > 0 {
		qc = num / den
	}
	s := wTitle*tc + wDesc*dc + wQuery*qc
	text := s
	why := []string{fmt.Sprintf("title %.2f, description %.2f, report %.2f (bm25 %.1f)", tc, dc, qc, bm25)}
	if len(tgot) > 0 {
		why = append(why, "title terms: "+strings.Join(tgot, ", "))
	}
	if q.Signature != "" && len(d.sigs) > 0 {
		if slices.Contains(d.sigs, q.Signature) {
			s += bonusSig
			why = append(why, "names crash signature "+q.Signature)
		} else {
			s -= penaltySig
			why = append(why, "names a different crash signature: "+strings.Join(d.sigs, ", "))
		}
	}
	if q.Signature != "" && slices.Contains(d.sigs, q.Signature) && len(tgot) >= 2 && symptomAgreement(qx.symptoms, d.symptoms) >= 0 {
		// Telemetry names the bug better than words: the ticket names the
		// crash that telemetry confirmed for this report, the report
		// describes the same kind of failure and shares two words of its title.
		// The batch memory applies the same floor to two reports.
		s = max(s, sigFloor)
	}
	if dev := normDevice(q.Device); dev != "" && slices.Contains(d.devices, dev) {
		s += bonusDevice
		why = append(why, "names device "+q.Device)
	}
	if fam := osFamily(q.OS); fam != "" && len(d.osFams) > 0 {
		switch maj := osMajor(q.OS); {
		case maj != fam && slices.Contains(d.osMajors, maj):
			s += bonusOS
			why = append(why, "names "+q.OS)
		case !slices.Contains(d.osFams, fam):
			s -= penaltyOS
			why = append(why, "names only "+strings.Join(d.osFams, ", "))
		case maj != fam && slices.ContainsFunc(d.osMajors, func(m string) bool { return strings.HasPrefix(m, fam+" ") }):
			// Only when the ticket names versions of this family: a ticket
			// that says "macOS" without one is not about another version.
			s -= penaltyOSMajor
			why = append(why, "names another "+fam+" version: "+strings.Join(d.osMajors, ", "))
		}
	}
	if v := q.AppVersion; v != "" && len(t.AffectedVersions) > 0 && !isClosed(t) {
		if slices.ContainsFunc(t.AffectedVersions, func(x string) bool { return x == v || (IsVersion(x) && CompareVersions(x, v) == 0) }) {
			s += bonusVersion
			why = append(why, "affects "+v)
		} else if older(v, t.AffectedVersions) {
			s -= penaltyOld
			why = append(why, v+" predates the affected versions")
		}
	}
	kindOff := false
	if a := symptomAgreement(qx.symptoms, d.symptoms); a != 0 {
		kindOff = a < 0
		s += a
		if a > 0 {
			why = append(why, "same kind of failure")
		} else {
			why = append(why, "another kind of failure")
		}
	}
	quote := 0.0
	if qs := quoteAgreement(qx.quotes, t); qs != "" {
		quote = bonusQuote
		s += quote
		why = append(why, "quotes "+strconvQuote(qs))
	}
	sim := s
	ev := fmt.Sprintf("evidence: similarity %.2f", sim)
	parts, contradicted := ix.evidenceParts(i, q, qm, qx, kindOff)
	for _, p := range parts {
		s += p.v
		ev += fmt.Sprintf(", %s %+.2f", p.name, p.v)
	}
	why = append(why, ev)
	related := harmBlock(qx.harms, d.harms)
	if related == "" && contradicted != "" {
		related = "the report names " + strconvQuote(contradicted) + ", which the candidate says works"
	}
	if related != "" {
		why = append(why, "not claimable: "+related)
	}
	h := Hit{ID: t.ID, Title: t.Title, Status: t.Status, Why: why, Component: t.Component, raw: s, closed: isClosed(t), Words: round3(text), offPlatform: ix.offPlatform(i, q), quote: quote, kindOff: kindOff, factsApart: factsApart(parts), Related: related}
	h.Score = finalScore(h)
	h.Strong = h.Score >= StrongScore
	if t.FixedIn != nil {
		h.FixedIn = *t.FixedIn
	}
	return h
}

func has32(s []int32, v int32) bool {
	_, ok := slices.BinarySearch(s, v)
	return ok
}

func isClosed(t Ticket) bool {
	s := strings.ToLower(t.Status)
	return s == "closed" || s == "resolved" || s == "done" || s == "fixed"
}

// older reports whether v precedes every version in vs.
func older(v string, vs []string) bool {
	for _, x := range vs {
		if CompareVersions(v, x) >= 0 {
			return false
		}
	}
	return true
}

var reDeviceBrand = regexp.MustCompile(`\b(?:samsung|galaxy|google|apple)\b`)

// normDevice reduces a device name to a comparable key: folded, brand
// prefixes dropped, spaces collapsed ("Samsung Galaxy A54" → "a54").
func normDevice(s string) string {
	s = reDeviceBrand.ReplaceAllString(fold(s), " ")
	return strings.Join(strings.Fields(s), " ")
}

func mentionedDevices(text string) []string {
	var out []string
	lower := strings.ToLower(text)
	for _, re := range deviceRes {
		for _, m := range re.findAll(text, lower) {
			if k := normDevice(m); k != "" && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}

// osWords are the tokens that name an operating system family.
var osWords = map[string]string{"android": "android", "ios": "ios", "ipados": "ios", "windows": "windows", "macos": "macos",
	"linux": "linux", "ubuntu": "linux", "chromeos": "chromeos", "harmonyos": "harmonyos", "watchos": "watchos", "wearos": "wearos"}

var orWords = makeSet("and or und oder y o et ou e ed")

// mentionedOSTokens adds the OS families and "family major" versions that
// tokenized text names ("Android 14", "iOS 17.5") to majors and fams.
func mentionedOSTokens(toks []token, majors, fams []string) ([]string, []string) {
	for i, t := range toks {
		fam, ok := osWords[t.s]
		if !ok {
			continue
		}
		if !slices.Contains(fams, fam) {
			fams = append(fams, fam)
		}
		// "Android 13 and 14", "iOS 17/18": every number that follows.
		for j := i + 1; j < len(toks); j++ {
			if !toks[j].num {
				if orWords[toks[j].s] && j+1 < len(toks) && toks[j+1].num {
					continue
				}
				break
			}
			if n, _ := splitVersion(toks[j].s); len(n) > 0 {
				if k := fmt.Sprintf("%s %d", fam, n[0]); !slices.Contains(majors, k) {
					majors = append(majors, k)
				}
			}
		}
	}
	return majors, fams
}

// queryExtras is what the agreement needs of a query beyond its terms.
type queryExtras struct {
	symptoms uint16
	quotes   []string
	concrete []string // concreteTokens of the report
	harms    uint8    // harms the report names (harmKinds)
	quals    []string // terms of the report's contrast clauses (dup_block.go)
	fine     []string // terms of the report's "what works" clauses
}

func (ix *TrackerIndex) querySymptoms(qts []queryTerm) uint16 {
	var m uint16
	for _, qt := range qts {
		m |= symptomClasses[qt.term]
	}
	return m
}

func strconvQuote(s string) string { return "\u201c" + s + "\u201d" }
