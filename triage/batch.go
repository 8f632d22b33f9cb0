package triage

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
)

// BatchPrefix marks a batch hit's id: "batch:<item id>".
const BatchPrefix = "batch:"

// Batch is the memory of the reports already processed in this run. The
// first report of a new crash creates a ticket that the tracker index
// does not contain; the batch lets the second and the fifteenth report of
// that crash find the first, and through it the ticket it created. It is
// safe for concurrent use.
type Batch struct {
	mu   sync.RWMutex
	docs []batchDoc
	df   map[string]int // term → remembered reports holding it
}

type batchDoc struct {
	id       string
	q        Query
	w        map[string]float64 // term → weight
	stems    stemSet
	norm     float64 // Σ w²
	resolves string
	title    string
	ex       batchExtras
}

// NewBatch returns an empty batch memory.
func NewBatch() *Batch { return &Batch{df: map[string]int{}} }

// Add remembers a processed bug report and the ticket it resolved to (the
// ticket it created or duplicated; "" for a report that needs info, which
// later reports cannot be duplicates of). Adding an item id again replaces
// it.
func (b *Batch) Add(itemID string, q Query, resolvedTicket string) {
	w, stems := reportWeights(q.Text)
	d := batchDoc{id: itemID, q: q, w: w, stems: newStemSet(stems), resolves: resolvedTicket, title: firstLine(q.Text, 80), ex: newBatchExtras(q, w)}
	for _, w := range d.w {
		d.norm += w * w
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.df == nil {
		b.df = map[string]int{}
	}
	for t := range d.w {
		b.df[t]++
	}
	for i := range b.docs {
		if b.docs[i].id == itemID {
			for t := range b.docs[i].w {
				b.df[t]--
			}
			b.docs[i] = d
			return
		}
	}
	b.docs = append(b.docs, d)
}

// Len is the number of remembered reports.
func (b *Batch) Len() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.docs)
}

// Resolves maps every remembered item id to the ticket it resolved to.
func (b *Batch) Resolves() map[string]string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	m := map[string]string{}
	for _, d := range b.docs {
		if d.resolves != "" {
			m[d.id] = d.resolves
		}
	}
	return m
}

func reportWeights(text string) (map[string]float64, []string) {
	w := map[string]float64{}
	a := searchAnalyze(tokenize(text))
	for t := range a.bag {
		if t == "~feedback_positive" {
			continue
		}
		w[t] = searchWeight(t)
	}
	return w, a.stems
}

// Search is SearchIndexed without a tracker: rarity and standout over
// the batch alone.
func (b *Batch) Search(q Query, k int) []Hit { return b.SearchIndexed(q, k, nil) }

// SearchIndexed returns the remembered reports most similar to q, best
// first, as hits "batch:<item id>" whose Resolves is the ticket that
// report resolved to. Reports that resolved to no ticket are not
// returned. ix is the project's tracker (nil: none): a term's rarity
// counts its tickets too, and an earlier report stands out only when it
// is nearer than every tracker candidate of another ticket.
//
// Two reports are compared on their terms (concepts and stems weighted
// by specificity; a stem matching a cognate or misspelling of the other
// report's counts 0.8): the mean of the cosine and of the overlap
// coefficient (shared weight over the smaller report's weight, smoothed),
// so a short report contained in a long one still scores. Telemetry then
// decides what words cannot: when both reports are confirmed by the same
// crash signature (each shares specific words with it, and their device,
// OS and version each fit its population) and they share any term, they
// are the same crash and score at least 0.70; when they are confirmed by
// different signatures they are different crashes (−0.30). The same OS
// family (+0.02) and device (+0.03) add a little. The hit's Score is then
// the duplicate evidence, as for a ticket (dup_batch.go).
func (b *Batch) SearchIndexed(q Query, k int, ix *TrackerIndex) []Hit {
	qw, _ := reportWeights(q.Text)
	qn := 0.0
	qkeys := make([]string, 0, len(qw))
	for t, w := range qw {
		qn += w * w
		qkeys = append(qkeys, t)
	}
	sort.Strings(qkeys)
	var tracker []Hit
	if ix != nil {
		tracker = ix.candidates(q, SearchK, -1)
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	if len(b.docs) == 0 || qn == 0 {
		return nil
	}
	bq := newBatchQuery(ix, q, qw)
	nDocs := float64(len(b.docs))
	if ix != nil {
		nDocs += float64(len(ix.tickets))
	}
	idfNew := bm25IDF(nDocs, 1)
	// Each query term's rarity over the tracker and the batch, once per
	// search.
	qrare := make([]termRarity, len(qkeys))
	for i, t := range qkeys {
		df := b.df[t]
		if ix != nil {
			if id, ok := ix.vocab[t]; ok {
				df += int(ix.df[id])
			}
		}
		idf := bm25IDF(nDocs, float64(max(1, df)))
		r := idf / idfNew
		qrare[i] = termRarity{term: t, rare: r * r, idf: idf}
	}
	hits := make([]Hit, 0, len(b.docs))
	recs := make([]batchRec, 0, len(b.docs)) // why each hit scores, rendered only for the hits returned
	src := make([]int, 0, len(b.docs))       // hits[i] is recs[src[i]]
	var match []termMatch
	for i := range b.docs {
		d := &b.docs[i]
		if d.resolves == "" || d.norm == 0 {
			continue
		}
		shared := 0.0
		var terms []string
		match = match[:0]
		for j, t := range qkeys {
			w := qw[t]
			if dw, ok := d.w[t]; ok {
				shared += w * dw
				terms = append(terms, t)
				match = append(match, termMatch{j, 1})
				continue
			}
			if !isConcept(t) {
				// A cognate or a misspelling of the other report's word
				// ("garagem", "garage") counts for most of a match.
				if m := cognate(t, d.stems); m > 0 {
					shared += m * w * termWeight(t)
					terms = append(terms, t+"≈")
					match = append(match, termMatch{j, m})
				}
			}
		}
		rec := batchRec{terms: terms}
		rec.cos = shared / math.Sqrt(qn*d.norm)
		rec.ovl = shared / (min(qn, d.norm) + 0.5) // smoothed: a three-word report is not "contained" in everything
		s := 0.5*rec.cos + 0.5*rec.ovl
		rec.text = s
		if q.Signature != "" && d.q.Signature != "" {
			if q.Signature == d.q.Signature {
				if shared > 0 {
					s = max(s+0.35, 0.70+0.2*rec.ovl)
				} else {
					s += 0.2
				}
				rec.notes = append(rec.notes, "both confirmed by crash signature "+q.Signature)
			} else {
				s -= 0.30
				rec.notes = append(rec.notes, "different crash signatures: "+q.Signature+" vs "+d.q.Signature)
			}
		}
		if bq.fam != "" && bq.fam == osFamily(d.q.OS) {
			s += 0.02
		}
		if q.Device != "" && normDevice(q.Device) == normDevice(d.q.Device) {
			s += 0.03
			rec.notes = append(rec.notes, "same device "+q.Device)
		}
		rec.sim = s
		rec.parts = batchEvidence(q, &bq, d, match, qrare, idfNew)
		for _, p := range rec.parts {
			s += p.v
		}
		src = append(src, len(recs))
		recs = append(recs, rec)
		h := Hit{ID: BatchPrefix + d.id, Title: d.title, Status: "batch", Resolves: d.resolves, Words: round3(rec.text), raw: s,
			kindOff: symptomAgreement(bq.qx.symptoms, d.ex.symptoms) < 0, factsApart: factsApart(rec.parts), Related: harmBlock(bq.qx.harms, d.ex.harms)}
		if h.Related != "" {
			recs[len(recs)-1].notes = append(recs[len(recs)-1].notes, "not claimable: "+h.Related)
		}
		h.Score = finalScore(h)
		hits = append(hits, h)
	}
	hits, src = chainToFirst(hits, src, b.docs)
	batchStandout(hits, tracker)
	order := make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, c := &hits[order[i]], &hits[order[j]]
		if a.Score != c.Score {
			return a.Score > c.Score
		}
		if a.raw != c.raw {
			return a.raw > c.raw
		}
		return a.ID < c.ID
	})
	if k > 0 && len(order) > k {
		order = order[:k]
	}
	out := make([]Hit, len(order))
	for i, j := range order {
		out[i] = hits[j]
		out[i].Why = append(recs[src[j]].why(), hits[j].Why...)
	}
	return out
}

// batchRec is why a remembered report scores what it does.
type batchRec struct {
	text, cos, ovl, sim float64
	terms, notes        []string
	parts               []evidencePart
}

func (r batchRec) why() []string {
	why := []string{fmt.Sprintf("text %.2f (cosine %.2f, overlap %.2f)", r.text, r.cos, r.ovl)}
	if len(r.terms) > 0 {
		why = append(why, "shared terms: "+strings.Join(r.terms, ", "))
	}
	why = append(why, r.notes...)
	return append(why, evidenceWhy(r.sim, r.parts))
}

// firstLine returns the first sentence or line of s, cut to n runes.
func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\n.!?"); i > 0 {
		s = s[:i]
	}
	r := []rune(s)
	if len(r) > n {
		return strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return s
}

// chainToFirst folds the hits that resolve to the same ticket into one hit
// named after the first report of the batch that resolved to it (the one
// that filed it or first matched it), with the best score among them and
// the reasons of the best-matching report. A third report of a bug then
// links to the report that became the ticket, not to the second report.
// docs are in arrival order.
//
// src holds each hit's parallel value (its score record), returned
// aligned with the folded hits.
func chainToFirst(hits []Hit, src []int, docs []batchDoc) ([]Hit, []int) {
	first, titles := map[string]string{}, map[string]string{}
	for _, d := range docs {
		if _, ok := first[d.resolves]; !ok && d.resolves != "" {
			first[d.resolves] = d.id
			titles[d.id] = d.title
		}
	}
	best := map[string]int{}
	var out []Hit
	var osrc []int
	for j, h := range hits {
		i, ok := best[h.Resolves]
		if !ok {
			best[h.Resolves] = len(out)
			out = append(out, h)
			osrc = append(osrc, src[j])
			continue
		}
		if h.Score > out[i].Score {
			out[i], osrc[i] = h, src[j]
		}
	}
	for i := range out {
		if f := first[out[i].Resolves]; f != "" && BatchPrefix+f != out[i].ID {
			out[i].Why = append(out[i].Why, "best match "+strings.TrimPrefix(out[i].ID, BatchPrefix)+", first report of "+out[i].Resolves+" "+f)
			out[i].ID = BatchPrefix + f
			out[i].Title = titles[f]
		}
	}
	return out, osrc
}
