package triage

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Numbers are part of what a report says ("reset to 1", "about 2.2
// billion", "80 000 lines") but the text layer drops them. For the
// duplicate search they become terms a ticket can share whatever the
// spelling: a small count (0 to 12, as digits or as a number word of the
// languages the lexicon reads) is "#n<k>", and a large quantity is its
// order of magnitude "#e<k>" (10^k), so "2.2 billion", "2,147,483,647" and
// "-2,094,332,110" meet, and "80 000" meets "~50k".

// smallNumberWords maps number words to their value.
var smallNumberWords = func() map[string]int {
	m := map[string]int{}
	for _, row := range []string{
		"zero one two three four five six seven eight nine ten eleven twelve",
		"cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce",
		"null eins zwei drei vier funf sechs sieben acht neun zehn elf zwolf",
		"zero un deux trois quatre cinq six sept huit neuf dix onze douze",
		"zero um dois tres quatro cinco seis sete oito nove dez onze doze",
		"zero uno due tre quattro cinque sei sette otto nove dieci undici dodici",
		"nul een twee drie vier vijf zes zeven acht negen tien elf twaalf",
	} {
		for i, w := range strings.Fields(row) {
			if _, ok := m[w]; !ok {
				m[w] = i
			}
		}
	}
	// Words that are also articles or pronouns elsewhere count only where
	// they are unambiguous.
	for _, w := range []string{"un", "uno", "um", "een", "null", "once", "sei"} {
		delete(m, w)
	}
	return m
}()

// scaleWords multiply the number before them.
var scaleWords = map[string]float64{
	"hundred": 1e2, "thousand": 1e3, "million": 1e6, "millions": 1e6, "billion": 1e9, "billions": 1e9, "trillion": 1e12,
	"mil": 1e3, "millon": 1e6, "millones": 1e6, "tausend": 1e3, "millionen": 1e6, "milliarde": 1e9, "milliarden": 1e9,
	"mille": 1e3, "milliers": 1e3, "milliard": 1e9, "milliards": 1e9, "milhao": 1e6, "milhoes": 1e6, "bilhao": 1e9, "bilhoes": 1e9,
	"milione": 1e6, "milioni": 1e6, "miliardo": 1e9, "miliardi": 1e9, "duizend": 1e3, "miljoen": 1e6, "miljard": 1e9,
	"k": 1e3, "bn": 1e9,
}

// parseNumber reads a digit token: groups of three digits after "," or
// "." are thousands ("2,147,483,647", "1.450"); a single separator
// followed by other than three digits is a decimal point ("2.2").
func parseNumber(s string) (float64, bool) {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '.' })
	if len(parts) == 0 {
		return 0, false
	}
	thousands := len(parts) > 1
	for _, p := range parts[1:] {
		if len(p) != 3 {
			thousands = false
		}
	}
	if len(parts) > 2 && !thousands {
		return 0, false // a version such as 2.4.1
	}
	var v float64
	var err error
	if thousands {
		v, err = strconv.ParseFloat(strings.Join(parts, ""), 64)
	} else {
		v, err = strconv.ParseFloat(strings.ReplaceAll(s, ",", "."), 64)
	}
	return v, err == nil
}

// numberTerms returns the number terms of tokenized text.
func numberTerms(toks []token) []string {
	var out []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		var v float64
		switch {
		case t.num:
			x, ok := parseNumber(t.s)
			if !ok {
				continue
			}
			v = x
			// "80 000": a digit group of three after a number joins it.
			for i+1 < len(toks) && toks[i+1].num && len(toks[i+1].s) == 3 && isDigits(toks[i+1].s) && v >= 1 && v < 1000 && v == math.Trunc(v) {
				v = v*1000 + mustAtoi(toks[i+1].s)
				i++
			}
		case strings.HasSuffix(t.s, "k") && isDigits(strings.TrimSuffix(t.s, "k")) && len(t.s) > 1:
			v = mustAtoi(strings.TrimSuffix(t.s, "k")) * 1e3
		default:
			n, ok := smallNumberWords[t.s]
			if !ok {
				continue
			}
			v = float64(n)
		}
		if i+1 < len(toks) {
			if m, ok := scaleWords[toks[i+1].s]; ok {
				v *= m
				i++
			}
		}
		switch {
		case v >= 0 && v <= 12 && v == math.Trunc(v):
			out = append(out, fmt.Sprintf("#n%d", int(v)))
		case v >= 1e4:
			out = append(out, fmt.Sprintf("#e%d", int(math.Floor(math.Log10(v)))))
		}
	}
	return out
}

func mustAtoi(s string) float64 {
	n, _ := strconv.Atoi(s)
	return float64(n)
}

// searchAnalyze is analyzeTokens plus the number terms, the reading of a
// text that the tracker index and the batch memory compare.
func searchAnalyze(toks []token) analyzed {
	a := analyzeTokens(toks, true)
	for _, t := range numberTerms(toks) {
		a.add(t)
	}
	return a
}

// isNumberTerm reports whether t is a number term of numberTerms.
func isNumberTerm(t string) bool { return strings.HasPrefix(t, "#") }

// searchWeight is the prior weight of a search term: termWeight, with a
// small count weighing little (every text has a "one" or a "2").
func searchWeight(t string) float64 {
	if strings.HasPrefix(t, "#n") {
		return 0.3
	}
	return termWeight(t)
}
