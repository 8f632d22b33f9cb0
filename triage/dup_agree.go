package triage

import (
	"math/bits"
	"strings"
	"unicode/utf8"
)

// Agreement: two texts that share words may still describe different
// bugs. A report and a ticket agree when the failure they describe is of
// the same kind (the app dies, hangs, is slow, shows a wrong value, loses
// something, refuses access, reports an error, loses its connection), and
// when what the reporter quotes from the screen appears in the ticket.

// symptomClasses maps a lexicon concept to the failure kind it names.
var symptomClasses = map[string]uint16{
	"~crash": 1 << 0, "~blank_screen": 1 << 0,
	"~freeze":      1 << 1,
	"~performance": 1 << 2, "~battery": 1 << 2,
	"~wrong": 1 << 3, "~negative": 1 << 3, "~duplicate": 1 << 3, "~display": 1 << 3,
	"~data_loss": 1 << 4, "~not_received": 1 << 4,
	"~login": 1 << 5, "~logout": 1 << 5, "~password": 1 << 5, "~verification": 1 << 5, "~permission": 1 << 5,
	"~error":      1 << 6,
	"~disconnect": 1 << 7, "~network": 1 << 7,
}

// symptomMask is the set of failure kinds a bag of terms names.
func symptomMask[V int | float64](bag map[string]V) uint16 {
	var m uint16
	for t := range bag {
		m |= symptomClasses[t]
	}
	return m
}

// Weights of the agreement (see score).
const (
	bonusSymptom   = 0.05
	penaltySymptom = 0.08
	bonusQuote     = 0.10
	// maxSymptomKinds is how many failure kinds a report may name and
	// still earn the agreement bonus (a crash with an error message and a
	// freeze before it are three).
	maxSymptomKinds = 3
)

// symptomAgreement is +bonusSymptom when report and ticket name a common
// failure kind, −penaltySymptom when both name kinds and none is common
// (a wrong total and a crash in the same screen are different bugs), 0
// when either names none.
//
// A report naming more than maxSymptomKinds kinds earns no bonus: a text
// that names every failure there is agrees with any ticket, which says
// nothing (and is how a query would be stuffed to agree with all).
func symptomAgreement(report, ticket uint16) float64 {
	switch {
	case report == 0 || ticket == 0:
		return 0
	case report&ticket != 0:
		if bits.OnesCount16(report) > maxSymptomKinds {
			return 0
		}
		return bonusSymptom
	default:
		return -penaltySymptom
	}
}

var quotePairs = map[rune]rune{'"': '"', '\'': '\'', '“': '”', '”': '”', '‘': '’', '„': '“', '«': '»', '`': '`', '‚': '‘'}

// quotedStrings returns what a text quotes (between quotation marks or
// backquotes), folded, of 4 to 60 characters: the labels, messages and
// commands a reporter copies from the screen.
func quotedStrings(text string) []string {
	var out []string
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		closeR, ok := quotePairs[rs[i]]
		if !ok {
			continue
		}
		// An apostrophe inside a word ("don't") opens nothing.
		if rs[i] == '\'' && i > 0 && isWordRune(rs[i-1]) {
			continue
		}
		j := i + 1
		for j < len(rs) && rs[j] != closeR && rs[j] != '\n' && j-i <= 61 {
			j++
		}
		if j >= len(rs) || rs[j] != closeR {
			continue
		}
		q := strings.TrimSpace(fold(string(rs[i+1 : j])))
		if n := utf8.RuneCountInString(q); n >= 4 && n <= 60 && strings.ContainsFunc(q, isWordRune) {
			out = append(out, q)
		}
		i = j
	}
	return out
}

// quoteAgreement returns the first quoted string of the report that the
// ticket's text contains as whole words (a quoted fragment of a word,
// "tion", is found in any ticket), or "". Only quotes that carry content
// count (see contentQuotes).
func quoteAgreement(quotes []string, t Ticket) string {
	if len(quotes) == 0 {
		return ""
	}
	text := fold(t.Title + "\n" + t.Description)
	for _, q := range quotes {
		if containsWord(text, q) {
			return q
		}
	}
	return ""
}

// contentQuotes keeps the quotes that can name what a reporter saw: two
// content words (three letters or more, not a stopword, not a number), or
// one that few of the tracker's tickets use (rare says). "ing the" or
// "tion" names nothing a screen shows, and any ticket contains it.
func contentQuotes(quotes []string, rare func(string) bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, q := range quotes {
		if seen[q] || len(out) >= maxQuotes {
			continue
		}
		seen[q] = true
		var content []string
		for _, w := range strings.FieldsFunc(q, func(r rune) bool { return !isWordRune(r) }) {
			if utf8.RuneCountInString(w) >= 3 && !stopwords[w] && !isNumberOnly(w) {
				content = append(content, w)
			}
		}
		if len(content) >= 2 || len(content) == 1 && utf8.RuneCountInString(content[0]) >= 4 && rare(content[0]) {
			out = append(out, q)
		}
	}
	return out
}

// maxQuotes is how many distinct content quotes a report is matched on.
const maxQuotes = 16

// quoteCapped is the score of a hit whose raw evidence includes a quote
// bonus of quote: the quote confirms a match, it never makes one, so a hit
// the quote alone lifts to StrongScore stays just below it.
func quoteCapped(raw, quote float64) float64 {
	if quote > 0 && raw >= StrongScore && raw-quote < StrongScore {
		raw = StrongScore - 0.01
	}
	return round3(clamp01(raw))
}
