package triage

import (
	"regexp"
	"slices"
	"strings"
)

// Blocks and qualifiers: evidence that a near match is another bug.
//
// A duplicate outcome carries no severity and passes no gate, so a report
// merged into a ticket that does not name its harm (money taken or sent
// wrongly, data lost, secrets or private data exposed, an account locked)
// would hide that harm. Such a candidate is never claimable: its Score is
// held below the floor (blockedCap) and it is recorded in Hit.Related, so
// the report is filed as new (the gate sees its severity) and the ticket
// is linked as possibly related.
//
// A ticket's restrictive qualifiers (what it says the bug needs: "only",
// "when", "if", "containing", "above", compounds such as "multi-line") are
// its distinguishing facts: a report naming none of them is weaker
// evidence, and a report that names what the ticket says works ("single-
// line values are masked correctly") describes another bug (blocked). A
// report's own qualifier clauses ("when …", "instead of …", "with …")
// whose words the ticket has none of lower the evidence the same way.

// blockedCap is the highest Score a blocked candidate keeps: under the
// floor by more than the calibration margin.
const blockedCap = 0.45

// evQualifier is the part when one side's restrictive qualifiers are all
// absent from the other.
const evQualifier = 0.06

// qualifierMarkers open a restrictive clause (the words after them, up to
// the clause's end or qualifierSpan words, are the condition). English
// first (tickets are usually written in it), then es, de, fr, pt, it, nl, pl.
// ("instead of" in a ticket names the correct behaviour, not a condition.)
var qualifierMarkers = makeSet(`only when whenever if unless containing contains contain above exceeding beyond except
	solo solamente cuando si contiene nur wenn falls enthält seulement quand lorsque contient sauf
	apenas somente quando se contém solamente contiene alleen wanneer als bevat tylko gdy kiedy jeśli zawiera`)

// fineMarkers say a clause's subject is unaffected: the ticket's statement
// of what works.
var fineMarkers = makeSet(`fine correctly correct unaffected ok okay normally
	bien correctamente funktioniert korrekt richtig correctement funcionam corretamente correttamente funzionano goed prawidłowo`)

const qualifierSpan = 4

var reClause = regexp.MustCompile(`[.;:,()!?\n]+`)
var reCompound = regexp.MustCompile(`\b([\p{L}]{3,})-[\p{L}]{2,}\b`)

// clauseTerms returns the search terms of text's restrictive clauses
// (quals) and of its "what works" clauses (fine). Concepts (general
// vocabulary) and numbers are left out: a condition is what is specific.
func clauseTerms(text string) (quals, fine []string) {
	add := func(dst []string, toks []token) []string {
		for t := range searchAnalyze(toks).bag {
			if isConcept(t) || isNumberTerm(t) {
				continue
			}
			if _, isOS := osWords[t]; isOS {
				continue
			}
			if !slices.Contains(dst, t) {
				dst = append(dst, t)
			}
		}
		return dst
	}
	for _, cl := range reClause.Split(text, -1) {
		toks := tokenize(cl)
		isFine := false
		for _, t := range toks {
			if fineMarkers[t.s] {
				isFine = true
			}
		}
		if isFine {
			// Devices named as unaffected are the device evidence's to
			// weigh: a report names other people's phones as often as its
			// own ("my husband's iPhone works").
			devs := strings.Join(mentionedDevices(cl), " ")
			var keep []token
			for _, t := range toks {
				if !isPlatformName(t.s) && !containsWord(devs, t.s) {
					keep = append(keep, t)
				}
			}
			fine = add(fine, keep)
			continue
		}
		for i, t := range toks {
			if qualifierMarkers[t.s] {
				quals = add(quals, toks[i+1:min(len(toks), i+1+qualifierSpan)])
			}
		}
	}
	return quals, fine
}

// compoundTerms returns the first parts of a title's hyphenated compounds
// ("multi-line", "split-tender"): a qualifier the title names the bug by.
func compoundTerms(title string) []string {
	var out []string
	for _, m := range reCompound.FindAllStringSubmatch(fold(title), -1) {
		for t := range searchAnalyze(tokenize(m[1])).bag {
			if !isConcept(t) && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// ticketQualifiers returns the vocabulary ids of a ticket's restrictive
// qualifiers and of the terms of its "what works" clauses that name
// neither its title nor a qualifier (what sets the working case apart).
func (ix *TrackerIndex) ticketQualifiers(t Ticket, title []int32) (quals, fine []int32) {
	q1, f1 := clauseTerms(t.Title)
	q2, f2 := clauseTerms(t.Description)
	ids := func(terms []string) []int32 {
		var out []int32
		for _, term := range terms {
			if id, ok := ix.vocab[term]; ok && !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
		return out
	}
	quals = ids(append(append(q1, q2...), compoundTerms(t.Title)...))
	for _, id := range ids(append(f1, f2...)) {
		if !has32(title, id) && !slices.Contains(quals, id) {
			fine = append(fine, id)
		}
	}
	return quals, fine
}

// qualifierParts weighs the ticket's qualifiers against the report's
// terms (qm) and the report's own qualifier terms (qx.quals) against the
// ticket. contradicted is true when the report names what the ticket
// says works and none of the ticket's conditions.
func (ix *TrackerIndex) qualifierParts(d *tdoc, qm map[int32]float64, qx queryExtras) (parts []evidencePart, contradicted string) {
	covered := false
	for _, id := range d.quals {
		if qm[id] > 0 {
			covered = true
			break
		}
	}
	if len(d.quals) > 0 && !covered {
		var names []string
		for _, id := range d.quals[:min(3, len(d.quals))] {
			names = append(names, ix.terms[id])
		}
		parts = append(parts, evidencePart{"ticket's condition (" + strings.Join(names, ", ") + ") not in report", -evQualifier})
		for _, id := range d.fine {
			if qm[id] >= 1 && !slices.Contains(qx.fine, ix.terms[id]) {
				// The report names what the ticket says works, and not
				// as something that works for it too.
				contradicted = ix.terms[id]
				break
			}
		}
	}
	if len(qx.quals) > 0 {
		in := false
		for _, t := range qx.quals {
			if id, ok := ix.vocab[t]; ok && (has32(d.title, id) || has32(d.desc, id)) {
				in = true
				break
			}
		}
		if !in {
			parts = append(parts, evidencePart{"report's condition (" + strings.Join(qx.quals[:min(3, len(qx.quals))], ", ") + ") not in ticket", -evQualifier})
		}
	}
	return parts, contradicted
}

// harmBlock names the harms the report states that the ticket (harms)
// names none of, or "".
func harmBlock(report, ticket uint8) string {
	if report == 0 || report&ticket != 0 {
		return ""
	}
	var names []string
	for i, n := range harmNames {
		if report&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return "the report names " + strings.Join(names, ", ") + " and the candidate does not"
}

// finalScore is a hit's Score from its raw evidence: the quote cap, and
// the block cap for a blocked candidate.
func finalScore(h Hit) float64 {
	s := quoteCapped(h.raw, h.quote)
	if h.Related != "" {
		s = min(s, blockedCap)
	}
	return s
}

// contrastMarkers open a report's statement of the value it expected
// ("shows A instead of B"): the words around them are the precise wrong
// value, which a ticket of the same bug names too. (A report's other
// clauses, "when I …", are paraphrase as often as condition.)
var contrastMarkers = makeSet(`instead rather statt anstatt lugar vez lieu invece plaats zamiast`)

// reportQualifiers returns the content terms of a report's contrast
// clauses (the marker's clause, both sides of it), and the terms of its
// own "what works" clauses.
func reportQualifiers(text string) (quals, fine []string) {
	text = boundText(text, concreteHead, concreteTail)
	for _, cl := range reClause.Split(text, -1) {
		toks := tokenize(cl)
		for i, t := range toks {
			if !contrastMarkers[t.s] {
				continue
			}
			for term := range searchAnalyze(append(append([]token(nil), toks[max(0, i-qualifierSpan):i]...), toks[i+1:min(len(toks), i+1+qualifierSpan)]...)).bag {
				if isConcept(term) || isNumberTerm(term) || slices.Contains(quals, term) {
					continue
				}
				if _, isOS := osWords[term]; !isOS {
					quals = append(quals, term)
				}
			}
		}
	}
	_, fine = clauseTerms(text)
	return quals, fine
}

// sentenceHarms is harmKinds over each sentence of a report: a harm is a
// money word with a wrong or repeated amount in one statement, not a
// purchase in one sentence and a reinstall done twice in another.
func sentenceHarms(text string) uint8 {
	var m uint8
	for _, sent := range reSentence.Split(boundText(text, searchHead, searchTail), -1) {
		bag := searchAnalyze(tokenize(sent)).bag
		if len(bag) == 0 {
			continue
		}
		m |= harmKinds(func(c string) bool { return bag["~"+c] > 0 })
	}
	return m
}

var reSentence = regexp.MustCompile(`[.;!?\n]+(?:\s|$)|\n`)
