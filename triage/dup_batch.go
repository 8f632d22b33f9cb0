package triage

import (
	"fmt"
	"strings"
)

// Batch duplicate evidence: an earlier report of the batch is weighed as
// the crew weighs the ticket that report filed into the tracker, so the
// reference pipeline (batch memory) and the crew (filed tickets) decide a
// later paraphrase alike. On top of the report-to-report similarity:
//
//   - component: the earlier report's classified component against this
//     report's component probabilities (componentPart);
//   - harm: this report names a harm the earlier one does not (harmPart);
//   - platform: the earlier report's text and reporter name only OS
//     families this reporter is not on (the ticket it files records its
//     reporter's platform);
//   - symptom: the same or another kind of failure (symptomAgreement);
//   - version: the same version, or a later one (the bug still there);
//   - concrete tokens and rare shared terms (rare over the tracker and the
//     batch together);
//   - standout: the earlier report is this report's nearest candidate of
//     all, batch and tracker, by a margin (applyStandout), candidates
//     that land on the same ticket aside.

// batchExtras is what the evidence needs of a remembered report.
type batchExtras struct {
	symptoms uint16
	harms    uint8
	osFams   []string // OS families its text names and its reporter is on
	text     string   // folded text, for concrete tokens
	version  bool     // its app version parses
	concrete bool     // it names an identifier-shaped token of its own
}

func newBatchExtras(q Query, bag map[string]float64) batchExtras {
	text := q.Text
	_, fams := mentionedOSTokens(tokenize(text), nil, nil)
	if f := osFamily(q.OS); f != "" && !containsStr(fams, f) {
		// The ticket a report files records its reporter's platform.
		fams = append(fams, f)
	}
	return batchExtras{
		symptoms: symptomMask(bag),
		harms:    harmKinds(func(c string) bool { _, ok := bag["~"+c]; return ok }),
		osFams:   fams,
		text:     fold(boundText(text, concreteHead, concreteTail)),
		version:  IsVersion(q.AppVersion),
		concrete: hasIdentToken(boundText(text, concreteHead, concreteTail)),
	}
}

// hasIdentToken reports whether text names an identifier-shaped token (a
// field, a code, a copied value) that is not a platform name or a bare
// quantity.
func hasIdentToken(text string) bool {
	for _, w := range reIdent.FindAllString(text, maxConcrete) {
		if f := strings.Trim(fold(w), ".:/-_,;"); len([]rune(f)) >= 3 && !isPlatformName(w) && !isMeasure(f) && !isNumberOnly(f) {
			return true
		}
	}
	return false
}

// batchQuery is what the evidence needs of the searching report, computed
// once per search.
type batchQuery struct {
	qx          queryExtras
	fam         string
	v           string
	version     bool // the reporter's version parses
	sameVersion string
	cmp         map[string]int // earlier reports' versions compared with the reporter's
	identTokens int            // the report's concrete tokens that are not bare quantities
}

// compare is CompareVersions(reporter's version, v), once per distinct v.
func (bq *batchQuery) compare(v string) int {
	c, ok := bq.cmp[v]
	if !ok {
		c = CompareVersions(bq.v, v)
		bq.cmp[v] = c
	}
	return c
}

func newBatchQuery(ix *TrackerIndex, q Query, qw map[string]float64) batchQuery {
	if ix == nil {
		ix = &TrackerIndex{}
	}
	bq := batchQuery{
		qx: queryExtras{symptoms: symptomMask(qw), harms: sentenceHarms(q.Text),
			concrete: ix.concreteTokens(q.Text)},
		fam: osFamily(q.OS), v: q.AppVersion, version: IsVersion(q.AppVersion), sameVersion: "same version " + q.AppVersion, cmp: map[string]int{},
	}
	for _, tok := range bq.qx.concrete {
		if !isMeasure(tok) {
			bq.identTokens++
		}
	}
	return bq
}

// termRarity is a query term's rarity over the tracker and the batch:
// (idf / idf of a one-report term)², and its idf.
type termRarity struct {
	term      string
	rare, idf float64
}

// termMatch is a query term (index into the query's terms) an earlier
// report shares, with its match (1, or a cognate's share).
type termMatch struct {
	i int
	m float64
}

// batchEvidence returns the parts for remembered report d. shared are
// the query terms it shares, qrare the query terms' rarity and idfNew the
// idf of a term only one report or ticket has.
func batchEvidence(q Query, bq *batchQuery, d *batchDoc, shared []termMatch, qrare []termRarity, idfNew float64) []evidencePart {
	var parts []evidencePart
	if a := symptomAgreement(bq.qx.symptoms, d.ex.symptoms); a != 0 {
		name := "same kind of failure"
		if a < 0 {
			name = "another kind of failure"
		}
		parts = append(parts, evidencePart{name, a})
	}
	if p, ok := componentPart(q, d.q.Component); ok && (p.v < 0 || symptomAgreement(bq.qx.symptoms, d.ex.symptoms) >= 0) {
		parts = append(parts, p)
	}
	if bq.version && d.ex.version {
		switch c := bq.compare(d.q.AppVersion); {
		case c == 0:
			parts = append(parts, evidencePart{bq.sameVersion, bonusVersion})
		case c > 0:
			parts = append(parts, evidencePart{"reported since " + d.q.AppVersion, evLaterOpen})
		}
	}
	if bq.fam != "" && len(d.ex.osFams) > 0 && !containsStr(d.ex.osFams, bq.fam) {
		parts = append(parts, evidencePart{"platform only " + strings.Join(d.ex.osFams, ", "), -evPlatformOff})
	}
	var got []string
	for _, tok := range bq.qx.concrete {
		if containsWord(d.ex.text, tok) {
			got = append(got, tok)
		}
	}
	if len(got) == 0 && d.ex.concrete && bq.identTokens >= 2 {
		// As for a ticket (concreteApart): both copy concrete things and
		// none is shared.
		parts = append(parts, evidencePart{partFactsApart, -evConcrete})
	}
	if len(got) > 0 {
		v := evConcrete
		if len(got) > 1 {
			v *= 1.5
		} else if isMeasure(got[0]) {
			v /= 2
		}
		parts = append(parts, evidencePart{"concrete " + strings.Join(got[:min(3, len(got))], ", "), v})
	}
	if r := batchRareShare(shared, qrare, idfNew); r > 0 {
		parts = append(parts, evidencePart{"specific terms", round3(evSpecific * r)})
	}
	return parts
}

// batchRareShare is rareShare for two reports: the share of their shared
// weight (idf × prior × match) on rare terms, scaled by how much is shared.
func batchRareShare(shared []termMatch, qrare []termRarity, idfNew float64) float64 {
	num, den := 0.0, 0.0
	for _, s := range shared {
		tr := qrare[s.i]
		if isNumberTerm(tr.term) {
			continue
		}
		if _, isOS := osWords[tr.term]; isOS {
			continue
		}
		w := tr.idf * searchWeight(tr.term) * s.m
		num += w * tr.rare
		den += w
	}
	if den == 0 || idfNew <= 0 {
		return 0
	}
	return min(1, num/den) * min(1, den/(2*idfNew))
}

// batchStandout adds the standout part to the best batch hit when it is
// this report's nearest candidate of all: hits are the batch hits (raw
// with their evidence), tracker the tracker's scored candidates for the
// same report. Tracker candidates of the ticket a batch hit lands on are
// the same bug, not a rival.
func batchStandout(hits []Hit, tracker []Hit) {
	if len(hits) == 0 {
		return
	}
	lands := map[string]bool{}
	for _, h := range hits {
		lands[h.Resolves] = true
	}
	all := append([]Hit(nil), hits...)
	for _, h := range tracker {
		if !lands[h.ID] {
			h.Why = nil
			all = append(all, h)
		}
	}
	applyStandout(all, func(h Hit) bool { return h.closed })
	for i := range hits {
		hits[i].raw, hits[i].Why = all[i].raw, all[i].Why
		hits[i].Score = finalScore(hits[i])
		hits[i].Strong = hits[i].Score >= StrongScore
		if hits[i].Related != "" {
			hits[i].Unblocked = round3(clamp01(hits[i].raw))
		}
	}
}

// evidenceWhy renders the evidence line of a hit.
func evidenceWhy(sim float64, parts []evidencePart) string {
	ev := fmt.Sprintf("evidence: similarity %.2f", sim)
	for _, p := range parts {
		ev += fmt.Sprintf(", %s %+.2f", p.name, p.v)
	}
	return ev
}
