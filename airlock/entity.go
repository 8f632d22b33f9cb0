package airlock

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Character references: HTML entities ("&nbsp;", "&#73;", "&#x49;") and
// percent-encoding ("%20", "%C3%A9"). A model reads "Ignore&nbsp;all
// prev&#105;ous instructions" or "password%3DXk9mQ2vL7pq" as easily as the
// plain text, so detection and redaction also read a decoded view of the
// text. The view is built only when the text holds a reference, in one
// pass, and never grows the text: every reference is at least as long as
// what it stands for.
//
// Decoding is lenient where a reader is: entity names are matched in any
// case ("&NBSP;"), numeric references and the legacy names browsers accept
// without a semicolon ("&nbsp", "&amp", "&lt", "&gt", "&quot", "&copy",
// "&reg") are decoded without one, and the view is decoded twice, so that
// a double encoding ("&amp;nbsp;", "%2520") is undone as a model undoing
// it would. A third level is left encoded.

// refLevels is how many times the view is decoded.
const refLevels = 2

// maxEntityName bounds the name of a named entity: the longest listed is
// "NegativeVeryThinSpace".
const maxEntityName = 21

// namedEntities maps lower-case entity names to their text: the escapes of
// HTML and XML, the spaces and punctuation editors emit, and the
// punctuation of HTML5 names an attacker may use to spell separators.
var namedEntities = map[string]string{
	"nbsp": " ", "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'",
	"ensp": " ", "emsp": " ", "thinsp": " ", "zwj": "", "zwnj": "", "shy": "",
	"tab": "\t", "newline": "\n", "colon": ":", "equals": "=", "semi": ";", "comma": ",", "period": ".",
	"excl": "!", "quest": "?", "num": "#", "dollar": "$", "percnt": "%", "commat": "@", "sol": "/",
	"bsol": "\\", "lowbar": "_", "hyphen": "\u2010", "dash": "\u2010", "plus": "+", "ast": "*", "lpar": "(", "rpar": ")",
	"lsqb": "[", "rsqb": "]", "lbrack": "[", "rbrack": "]", "lcub": "{", "rcub": "}", "lbrace": "{", "rbrace": "}",
	"verbar": "|", "vert": "|", "grave": "`", "hat": "^", "copy": "\u00a9", "reg": "\u00ae",
	"ndash": "\u2013", "mdash": "\u2014", "lsquo": "\u2018", "rsquo": "\u2019", "ldquo": "\u201c",
	"rdquo": "\u201d", "hellip": "\u2026", "bull": "\u2022", "middot": "\u00b7",
	// HTML5's invisible and format characters and its other spaces: they
	// split a key, a token or a phrase as "&shy;" does ("pass&it;word").
	// Invisible ones decode to nothing, as Normalize removes them.
	"zerowidthspace": "", "negativeverythinspace": "", "negativethinspace": "", "negativemediumspace": "",
	"negativethickspace": "", "nobreak": "", "it": "", "invisibletimes": "", "ic": "", "invisiblecomma": "",
	"af": "", "applyfunction": "", "lrm": "", "rlm": "",
	"thinspace": " ", "verythinspace": " ", "hairsp": " ", "mediumspace": " ", "numsp": " ", "puncsp": " ",
	"emsp13": " ", "emsp14": " ", "nonbreakingspace": " ",
}

// legacyEntities are the names browsers decode without a semicolon.
var legacyEntities = map[string]bool{"nbsp": true, "amp": true, "lt": true, "gt": true, "quot": true, "copy": true, "reg": true}

// refMode says how references are read.
type refMode uint8

const (
	// refPlus also reads a '+' between two letters as a space, as a
	// query string means it.
	refPlus refMode = 1 << iota
	// refHidden keeps tag characters and variation selectors, which
	// scanInvisible decodes, where the view drops them.
	refHidden
	// refShortHex reads a hex reference without ';' as its shortest
	// prefix that is a printable character ("&#x00A0all" as a no-break
	// space and "all", as a model reads it), where browsers read the
	// longest ("&#x00A0A" and "ll").
	refShortHex
)

// modeOf is the mode of the plus flag alone.
func modeOf(plus bool) refMode {
	if plus {
		return refPlus
	}
	return 0
}

// refAt decodes the reference that starts at s[i] ('&' or '%'), returning
// its text and length, or n == 0 when there is none.
func refAt(s string, i int, mode refMode) (out string, n int) {
	switch s[i] {
	case '&':
		return entityAt(s, i, mode)
	case '%':
		return percentAt(s, i, mode)
	case '+':
		if mode&refPlus != 0 && plusSpace(s, i) {
			return " ", 1
		}
	}
	return "", 0
}

func entityAt(s string, i int, mode refMode) (string, int) {
	j := i + 1
	if j < len(s) && s[j] == '#' {
		j++
		hex := j < len(s) && (s[j] == 'x' || s[j] == 'X')
		if hex {
			j++
		}
		// Leading zeros are skipped however many there are, as browsers
		// do; the significant digits are capped, so a megabyte of digits
		// is read once and decodes to nothing.
		d := j
		for j < len(s) && s[j] == '0' {
			j++
		}
		z, r := j, rune(0)
		for j < len(s) && j-z < 16 {
			c := s[j]
			var v rune
			switch {
			case c >= '0' && c <= '9':
				v = rune(c - '0')
			case hex && (c|0x20) >= 'a' && (c|0x20) <= 'f':
				v = rune(c|0x20) - 'a' + 10
			default:
				goto done
			}
			if hex {
				r = r*16 + v
			} else {
				r = r*10 + v
			}
			if r > utf8.MaxRune {
				if hex && mode&refShortHex != 0 {
					return shortHexAt(s, i, z, mode)
				}
				return "", 0
			}
			j++
		}
	done:
		semi := j < len(s) && s[j] == ';'
		if hex && !semi && mode&refShortHex != 0 {
			if out, n := shortHexAt(s, i, z, mode); n > 0 {
				return out, n
			}
		}
		if j == d || r == 0 || !utf8.ValidRune(r) {
			return "", 0
		}
		if semi {
			j++
		}
		return viewRune(r, mode, j-i), j - i
	}
	for j < len(s) && j-i <= maxEntityName && isASCIIAlnum(s[j]) {
		j++
	}
	if j == i+1 {
		return "", 0
	}
	var buf [maxEntityName + 1]byte
	name := buf[:0]
	for _, c := range []byte(s[i+1 : j]) {
		name = append(name, c|0x20)
	}
	if j < len(s) && s[j] == ';' {
		if v, ok := namedEntities[string(name)]; ok {
			return v, j + 1 - i
		}
	}
	// Otherwise the legacy names only, as the longest prefix, as browsers
	// read them ("&nbspfoo" and "&nbspall;" are a no-break space and the
	// rest).
	for k := len(name); k >= 2; k-- {
		if legacyEntities[string(name[:k])] {
			return namedEntities[string(name[:k])], k + 1
		}
	}
	return "", 0
}

// shortHexAt reads the hex digits from s[z] of the reference at s[i] up
// to the first prefix that is a printable character or a space.
func shortHexAt(s string, i, z int, mode refMode) (string, int) {
	r := rune(0)
	for k := z; k < len(s) && k-z < 6 && isHexDigit(s[k]); k++ {
		r = r*16 + rune(unhex(s[k]))
		if r >= 0x20 && utf8.ValidRune(r) && (unicode.IsPrint(r) || isSpaceRune(r)) {
			return viewRune(r, mode, k+1-i), k + 1 - i
		}
	}
	return "", 0
}

// percentAt decodes "%xx", or the whole UTF-8 sequence "%C3%A9" that a
// lead byte starts; a byte that does not make valid UTF-8 stays encoded.
func percentAt(s string, i int, mode refMode) (string, int) {
	b0, ok := hexByte(s, i)
	if !ok {
		return "", 0
	}
	if b0 < utf8.RuneSelf {
		return viewRune(rune(b0), mode, 3), 3
	}
	var buf [utf8.UTFMax]byte
	buf[0] = b0
	n := 1
	for n < utf8.UTFMax && !utf8.FullRune(buf[:n]) {
		b, ok := hexByte(s, i+3*n)
		if !ok {
			return "", 0
		}
		buf[n] = b
		n++
	}
	r, size := utf8.DecodeRune(buf[:n])
	if r == utf8.RuneError && size <= 1 {
		return "", 0
	}
	return viewRune(r, mode, 3*n), 3 * n
}

// plusSpace reports whether the '+' at s[i] joins two letters and another
// such '+' follows or precedes it across one word, as in "Ignore+all+previous": a
// lone one ("jane+bugs@example.com") is left as it is, which spares its
// line a rescan.
func plusSpace(s string, i int) bool {
	if i == 0 || i+1 >= len(s) || !isASCIILetter(s[i-1]) || !isASCIILetter(s[i+1]) {
		return false
	}
	for j := i + 2; j < min(len(s)-1, i+24); j++ {
		if c := s[j]; c == '+' && isASCIILetter(s[j+1]) {
			return true
		} else if !isASCIILetter(c) {
			break
		}
	}
	for j := i - 2; j > max(0, i-24); j-- {
		if c := s[j]; c == '+' && isASCIILetter(s[j-1]) {
			return true
		} else if !isASCIILetter(c) {
			break
		}
	}
	return false
}

// viewRune spells a decoded rune in the view as Normalize would leave it:
// invisible and control characters go ("pass&#8203;word", "%00"), which
// would otherwise split a key or a phrase only in the view, no-break and
// typographic spaces are plain spaces, which the redactStages read
// between a key and its value, and compatibility characters are in NFKC
// ("p&#xFF41;ssword", "&#xFF47;hp_…"), as Normalize leaves them in the
// text. The NFKC form is used only when it is no longer than the
// reference (n bytes), so the view never grows.
func viewRune(r rune, mode refMode, n int) string {
	switch {
	case r == '\t' || r == '\n':
	case isSpaceRune(r):
		return " "
	case isDropRune(r):
		if mode&refHidden != 0 && isHiddenCarrier(r) {
			return string(r)
		}
		return ""
	}
	if r < utf8.RuneSelf || r < 0x10000 && nfkcStableBMP()[r>>6]&(1<<(r&63)) != 0 {
		return string(r)
	}
	var in [utf8.UTFMax]byte
	src := in[:utf8.EncodeRune(in[:], r)]
	// The common case, a look-alike of ASCII ("&#xFF41;"), is its
	// decomposition, read without running the normalizer.
	if d := norm.NFKC.Properties(src).Decomposition(); len(d) > 0 && len(d) <= n && isASCII(string(d)) {
		return string(d)
	}
	var buf [64]byte
	y := norm.NFKC.Append(buf[:0], src...)
	if len(y) <= n {
		return string(y)
	}
	return string(r)
}

// isHiddenCarrier reports whether r is a tag character or a variation
// selector: what scanInvisible reads.
func isHiddenCarrier(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0000 && r <= 0xE01EF
}

// isSpaceRune reports whether r is a no-break or typographic space.
func isSpaceRune(r rune) bool { return r == 0xa0 || r >= 0x2000 && r <= 0x200a || r == 0x202f }

// sepRefAt returns the length of the reference at s[i] when it stands for
// a space or a quote, which may separate a key from its value
// ("Password:&nbsp;…", "password=&quot;…&quot;", "password=%22…"), or 0.
func sepRefAt(s string, i int) int {
	if i >= len(s) || s[i] != '&' && s[i] != '%' {
		return 0
	}
	out, n := refAt(s, i, 0)
	if n == 0 || len(out) != 1 || !isHSpace(out[0]) && !isQuoteByte(out[0]) {
		return 0
	}
	return n
}

// hexByte reads "%xx" at s[i].
func hexByte(s string, i int) (byte, bool) {
	if i+2 >= len(s) || s[i] != '%' {
		return 0, false
	}
	if !isHexDigit(s[i+1]) || !isHexDigit(s[i+2]) {
		return 0, false
	}
	return unhex(s[i+1])<<4 | unhex(s[i+2]), true
}

// refScanner finds the references of s in order. It keeps the next
// position of each byte that may start one, so that each is found with
// one vectorized search per occurrence, however the three interleave.
type refScanner struct {
	s    string
	mode refMode
	next [3]int // next '&', '%' and '+' at or after the cursor; len(s) if none
	from [3]int // where next was searched from
	// out and n are what refAt read at the position at last returned.
	out string
	n   int
}

var refStartBytes = [3]byte{'&', '%', '+'}

func newRefScanner(s string, mode refMode) refScanner {
	r := refScanner{s: s, mode: mode}
	for k := range r.next {
		r.from[k] = -1
	}
	return r
}

// at returns the first reference at or after i, or -1. Calls must not go
// backwards.
func (r *refScanner) at(i int) int {
	n := 2
	if r.mode&refPlus != 0 {
		n = 3
	}
	for i < len(r.s) {
		p := len(r.s)
		for k := 0; k < n; k++ {
			if r.next[k] < i || r.from[k] < 0 {
				r.next[k], r.from[k] = nextByte(r.s, i, refStartBytes[k]), i
			}
			p = min(p, r.next[k])
		}
		if p == len(r.s) {
			return -1
		}
		if out, m := refAt(r.s, p, r.mode); m > 0 {
			r.out, r.n = out, m
			return p
		}
		i = p + 1
	}
	return -1
}

// nextRef returns the index of the first reference in s at or after i, or
// -1.
func nextRef(s string, i int, mode refMode) int {
	sc := newRefScanner(s, mode)
	return sc.at(i)
}

// hasRef reports whether s holds a reference.
func hasRef(s string, mode refMode) bool { return nextRef(s, 0, mode) >= 0 }

// refView is a decoded view of a text: text, and for each of its bytes
// where in the original text the reference or byte it comes from starts.
type refView struct {
	text string
	// src[l][i] is where the byte i of level l comes from in level l-1
	// (level -1 being the original); src[l] has one more entry, the
	// length of level l-1.
	src [][]int32
}

// decodeRefs decodes s one level: the decoded text and its src map, and
// the modes of refHidden and refShortHex not in mode that would read s
// differently (a reference dropped here that refHidden keeps, a hex one
// without ';').
func decodeRefs(s string, mode refMode) (string, []int32, refMode) {
	var b strings.Builder
	b.Grow(len(s))
	src := make([]int32, 0, len(s)+1)
	last := 0
	var other refMode
	sc := newRefScanner(s, mode)
	for i := sc.at(0); i >= 0; i = sc.at(last) {
		for k := last; k < i; k++ {
			src = append(src, int32(k))
		}
		b.WriteString(s[last:i])
		out, n := sc.out, sc.n
		if out == "" && mode&refHidden == 0 {
			if h, _ := refAt(s, i, mode|refHidden); h != "" {
				other |= refHidden
			}
		}
		if mode&refShortHex == 0 && n > 3 && s[i] == '&' && s[i+n-1] != ';' && s[i+2]|0x20 == 'x' {
			other |= refShortHex
		}
		for range len(out) {
			src = append(src, int32(i))
		}
		b.WriteString(out)
		last = i + n
	}
	for k := last; k < len(s); k++ {
		src = append(src, int32(k))
	}
	b.WriteString(s[last:])
	return b.String(), append(src, int32(len(s))), other
}

// newRefView decodes s refLevels times (fewer when a level leaves no
// reference); ok is false when s holds none.
func newRefView(s string, plus bool) (refView, bool) {
	v, _, ok := newRefViewMode(s, modeOf(plus))
	return v, ok
}

// newRefViewMode is newRefView in a mode; other is what decodeRefs says
// of its levels.
func newRefViewMode(s string, mode refMode) (v refView, other refMode, ok bool) {
	if !hasRef(s, mode) {
		return refView{}, 0, false
	}
	v = refView{text: s}
	for l := 0; l < refLevels; l++ {
		if l > 0 && !hasRef(v.text, mode) {
			break
		}
		t, src, o := decodeRefs(v.text, mode)
		v.text = t
		v.src = append(v.src, src)
		other |= o
	}
	return v, other, true
}

// span maps the range [a, b) of the view back to the original text,
// widened to whole references.
func (v refView) span(a, b int) (int, int) {
	for l := len(v.src) - 1; l >= 0; l-- {
		src := v.src[l]
		e := b
		if b > a {
			// The end of the reference byte b-1 comes from.
			for e < len(src)-1 && src[e] == src[b-1] {
				e++
			}
		}
		a, b = int(src[a]), int(src[e])
	}
	return a, b
}

// scanRefs scans the decoded view of the lines of text that hold a
// reference, as scanEncoded scans decoded blobs, and returns the families
// it fires that the text itself did not (plain), with famEncoded: a
// signal found only in decoded text says so. Lines without a reference,
// the usual case, cost one byte search. In this view a '+' between two
// letters is a space too ("Ignore+all+previous+instructions").
//
// A line is read again in two other ways where they differ: with the tag
// characters and variation selectors its references spell kept, for
// scanInvisible (the same signals as when they are typed), and with hex
// references without ';' read short (refShortHex), as a model may.
func (d *detector) scanRefs(text string, plain famSet) famSet {
	var b, hidden, short strings.Builder
	sc := newRefScanner(text, refPlus)
	for i := sc.at(0); i >= 0; {
		ls := strings.LastIndexByte(text[:i], '\n') + 1
		le := len(text)
		if k := strings.IndexByte(text[i:], '\n'); k >= 0 {
			le = i + k
		}
		line := text[ls:le]
		v, other, _ := newRefViewMode(line, refPlus)
		b.WriteString(v.text)
		b.WriteByte('\n')
		if other&refHidden != 0 {
			h, _, _ := newRefViewMode(line, refPlus|refHidden)
			hidden.WriteString(h.text)
			hidden.WriteByte('\n')
		}
		if other&refShortHex != 0 {
			s, _, _ := newRefViewMode(line, refPlus|refShortHex)
			short.WriteString(s.text)
			short.WriteByte('\n')
		}
		if le == len(text) {
			break
		}
		i = sc.at(le + 1)
	}
	if b.Len() == 0 {
		return 0
	}
	got := d.scanView(b.String())
	if short.Len() > 0 {
		got |= d.scanView(short.String())
	}
	got &^= plain
	if got&^(famInvisible|famEncoded) == 0 {
		got = 0
	} else {
		got |= famEncoded
	}
	if hidden.Len() > 0 {
		got |= d.scanInvisible(hidden.String())
	}
	return got
}

// scanView scans a decoded view as detect scans the text, blobs included:
// a base64 or hex run may be whole only once its references are decoded
// ("SWdu&#8203;b3Jl…", "&#52;9676e…").
func (d *detector) scanView(view string) famSet {
	// Decoded references may spell invisible characters or look-alikes
	// ("&#8203;", "&#x456;"): the view is normalized as the text was.
	norm, _ := Normalize(view)
	// Depth 0: the view is the text as a reader sees it, so comments,
	// hidden elements and chat markup spelled in entities count
	// ("&lt;!-- … --&gt;", "&lt;|im_start|&gt;system").
	return d.scan(foldedForScan(norm), 0) | d.scanEncoded(norm)
}

// refSpans runs the redactStages over the decoded view of text and
// returns what they find there, mapped back to text: each span widened to
// the whole references it covers, so that a value written as
// "Xk9m%51vL7pq" or "Tr0ub4dor&amp;3", or set off from its key by
// "&nbsp;", "&quot;" or "%3D", goes whole, and the text around it stays as
// written. Spans the ordinary stages would find too are found here first,
// which only makes the round after cheaper. The decoded values are
// remembered, so that their plain occurrences elsewhere go as well.
//
// Each stage reads the view with the placeholders of the stages before
// it in, as it reads the text in Redact, so that the view gives what the
// same text written plain gives ("bob:Xk9mQ2vL7pq&#64;example.com" is
// "[url-credentials]@example.com", not one address). Spans that still
// overlap once widened to whole references are merged (disjoint).
func (r *redactor) refSpans(text string, spans []redSpan) []redSpan {
	v, ok := newRefView(text, false)
	if !ok {
		return spans
	}
	var found []redSpan
	for _, find := range redactStages {
		found = disjoint(find(v.text, found[:0]))
		if len(found) == 0 {
			continue
		}
		for _, s := range found {
			a, b := v.span(s.start, s.end)
			r.remember(v.text[s.start:s.end], s.kind)
			spans = append(spans, redSpan{a, b, s.kind})
		}
		v = v.replaced(found)
	}
	return disjoint(spans)
}

// replaced returns v with spans (sorted, disjoint) of its text replaced by
// their placeholders: one more level, where a placeholder comes from the
// start of its span as a reference's text does, so that span maps a range
// that meets a placeholder to the whole span it stands for.
func (v refView) replaced(spans []redSpan) refView {
	var b strings.Builder
	src := make([]int32, 0, len(v.text)+1)
	last := 0
	for _, s := range spans {
		for k := last; k < s.start; k++ {
			src = append(src, int32(k))
		}
		b.WriteString(v.text[last:s.start])
		p := placeholders[s.kind]
		for range len(p) {
			src = append(src, int32(s.start))
		}
		b.WriteString(p)
		last = s.end
	}
	for k := last; k < len(v.text); k++ {
		src = append(src, int32(k))
	}
	b.WriteString(v.text[last:])
	return refView{text: b.String(), src: append(v.src[:len(v.src):len(v.src)], append(src, int32(len(v.text))))}
}
