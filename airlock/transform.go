package airlock

import (
	"strings"
	"unicode/utf8"
)

// Transformed text: instructions written backwards (".snoitcurtsni
// suoiverp lla erongI"), with each word spelled backwards in place, with
// the words in reverse order, or in rot13 ("vtaber nyy cerivbhf"). A model
// asked to read them undoes the transformation; the detector does too, but
// only on the lines where a keyword of the transformed vocabulary shows
// (kindMarkup rules with mkReversed, mkWordOrder and mkRot13 below), so
// ordinary text costs nothing beyond the keyword scan.

// Keywords of the transformed forms: the attack vocabulary spelled
// backwards and in rot13, and word pairs only a reversed word order makes.
// Each is five or more letters that no English or Romance word contains.
var (
	reversedKeywords = []string{"erongi", "dragersid", "tegrof", "noitcurtsni", "suoiverp", "tpmorp", "metsys",
		"evorppa", "egrem", "tekcit", "ytireves", "lacitirc", "tnatsissa", "laever", "etucexe", "eteled", "etalacse",
		"drowssap", "terces", "selur", "esolc", "tseuqer", "sdnammoc", "senilediug", "troper", "eussi", "ytiroirp",
		"nimda", "ssecca", "tnarg",
		// tool calls and modal orders: "llac eht" (call the), "tsum uoy" (you must)
		"llac eht", "tsum uoy", "noitcnuf", "ekovni",
		// exfiltration: environment, comment, credentials, token ("nekot_"
		// and "_nekot" as in reversed GITHUB_TOKEN)
		"tnemnorivne", "tnemmoc", "slaitnederc", "nekot_", "_nekot"}
	rot13Keywords = []string{"vtaber", "qvfertneq", "sbetrg", "vafgehpgvba", "cerivbhf", "cebzcg", "flfgrz",
		"nccebir", "zretr", "gvpxrg", "frirevgl", "pevgvpny", "nffvfgnag", "erirny", "rkrphgr", "qryrgr", "rfpnyngr",
		"cnffjbeq", "frperg", "ehyrf", "pybfr", "erdhrfg", "pbzznaqf", "thvqryvarf", "ercbeg", "vffhr", "cevbevgl",
		"nqzva", "npprff", "tenag",
		"pnyy gur", "lbh zhfg", "shapgvba", "vaibxr",
		"raivebazrag", "pbzzrag", "perqragvnyf", "gbxra_", "_gbxra"}
	wordOrderKeywords = []string{"instructions previous", "instructions prior", "instructions all", "instructions above",
		"instructions your", "prompt system", "rules your", "rules previous", "guidelines your", "guidelines previous"}
)

const (
	// mkReversed: the line holds words spelled backwards; it is read
	// reversed whole and word by word.
	mkReversed markupKind = iota + 32
	// mkWordOrder: the line holds words in reverse order.
	mkWordOrder
	// mkRot13: the line holds rot13.
	mkRot13
)

// transformedFires restores the line around the keyword at f[start:end]
// and returns the families the restored text fires.
func (d *detector) transformedFires(r *rule, f string, start, end int, checked *int) famSet {
	if start < *checked {
		return 0
	}
	// The automaton found a keyword's first bytes: check the whole.
	words := reversedKeywords
	switch r.markup {
	case mkWordOrder:
		words = wordOrderKeywords
	case mkRot13:
		words = rot13Keywords
	}
	whole := false
	for _, w := range words {
		if strings.HasPrefix(f[start:], w) {
			whole = true
			break
		}
	}
	if !whole {
		return 0
	}
	ls := max(0, start-maxTurn)
	if i := strings.LastIndexByte(f[ls:start], '\n'); i >= 0 {
		ls += i + 1
	}
	le := min(len(f), end+maxTurn)
	if i := strings.IndexByte(f[end:le], '\n'); i >= 0 {
		le = end + i
	}
	for ls > 0 && !utf8.RuneStart(f[ls]) {
		ls++
	}
	for le < len(f) && !utf8.RuneStart(f[le]) {
		le++
	}
	*checked = le
	line := f[ls:le]
	var got famSet
	switch r.markup {
	case mkReversed:
		got = d.scan("\n"+reverseRunes(line)+"\n", 1) | d.scan("\n"+reverseEachWord(line)+"\n", 1)
	case mkWordOrder:
		got = d.scan("\n"+reverseWords(line)+"\n", 1)
	case mkRot13:
		got = d.scan("\n"+rot13(line)+"\n", 1)
	}
	return got &^ (famInvisible | famEncoded)
}

// reverseRunes spells s backwards, rune by rune.
func reverseRunes(s string) string {
	b := make([]byte, len(s))
	w := len(b)
	for _, r := range s {
		n := utf8.RuneLen(r)
		if n < 0 {
			n = 1
			r = utf8.RuneError
		}
		w -= n
		utf8.EncodeRune(b[w:], r)
	}
	return string(b[w:])
}

// reverseEachWord spells every word of s backwards in place, keeping the
// order of the words: "erongI lla" becomes "Ignore all". Punctuation that
// ends a reversed word (".tekcit") moves with it.
func reverseEachWord(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] != ' ' {
			j++
		}
		b.WriteString(reverseRunes(s[i:j]))
		if j < len(s) {
			b.WriteByte(' ')
		}
		i = j + 1
	}
	return b.String()
}

// reverseWords puts the words of s in reverse order.
func reverseWords(s string) string {
	w := strings.Fields(s)
	for i, j := 0, len(w)-1; i < j; i, j = i+1, j-1 {
		w[i], w[j] = w[j], w[i]
	}
	return strings.Join(w, " ")
}

// rot13 rotates the ASCII letters of s (folded text is lower case).
func rot13(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = 'a' + (c-'a'+13)%26
		case c >= 'A' && c <= 'Z':
			b[i] = 'A' + (c-'A'+13)%26
		}
	}
	return string(b)
}
