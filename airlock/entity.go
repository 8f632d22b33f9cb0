package airlock

import (
	"strings"
	"unicode/utf8"
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

// maxEntityName bounds the name of a named entity.
const maxEntityName = 8

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
}

// legacyEntities are the names browsers decode without a semicolon.
var legacyEntities = map[string]bool{"nbsp": true, "amp": true, "lt": true, "gt": true, "quot": true, "copy": true, "reg": true}

// refAt decodes the reference that starts at s[i] ('&' or '%'), returning
// its text and length, or n == 0 when there is none. plus also reads a '+'
// between two letters as a space, as a query string means it.
func refAt(s string, i int, plus bool) (out string, n int) {
	switch s[i] {
	case '&':
		return entityAt(s, i)
	case '%':
		return percentAt(s, i)
	case '+':
		if plus && plusSpace(s, i) {
			return " ", 1
		}
	}
	return "", 0
}

func entityAt(s string, i int) (string, int) {
	j := i + 1
	if j < len(s) && s[j] == '#' {
		j++
		hex := j < len(s) && (s[j] == 'x' || s[j] == 'X')
		if hex {
			j++
		}
		d, r := j, rune(0)
		// Leading zeros are allowed; the value is capped, so a megabyte of
		// digits is read once and decodes to nothing.
		for j < len(s) && j-d < 16 {
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
				return "", 0
			}
			j++
		}
	done:
		if j == d || r == 0 || !utf8.ValidRune(r) {
			return "", 0
		}
		if j < len(s) && s[j] == ';' {
			j++
		}
		return viewRune(r), j - i
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
		return "", 0
	}
	// No semicolon: the legacy names only, as the longest prefix
	// ("&nbspfoo" is a no-break space and "foo").
	for k := len(name); k >= 2; k-- {
		if legacyEntities[string(name[:k])] {
			return namedEntities[string(name[:k])], k + 1
		}
	}
	return "", 0
}

// percentAt decodes "%xx", or the whole UTF-8 sequence "%C3%A9" that a
// lead byte starts; a byte that does not make valid UTF-8 stays encoded.
func percentAt(s string, i int) (string, int) {
	b0, ok := hexByte(s, i)
	if !ok {
		return "", 0
	}
	if b0 < utf8.RuneSelf {
		return viewRune(rune(b0)), 3
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
	return viewRune(r), 3 * n
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
// would otherwise split a key or a phrase only in the view, and no-break
// and typographic spaces are plain spaces, which the redactStages read
// between a key and its value.
func viewRune(r rune) string {
	switch {
	case r == '\t' || r == '\n':
	case isSpaceRune(r):
		return " "
	case isDropRune(r):
		return ""
	}
	return string(r)
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
	out, n := refAt(s, i, false)
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
	plus bool
	next [3]int // next '&', '%' and '+' at or after the cursor; len(s) if none
	from [3]int // where next was searched from
}

var refStartBytes = [3]byte{'&', '%', '+'}

func newRefScanner(s string, plus bool) refScanner {
	r := refScanner{s: s, plus: plus}
	for k := range r.next {
		r.from[k] = -1
	}
	return r
}

// at returns the first reference at or after i, or -1. Calls must not go
// backwards.
func (r *refScanner) at(i int) int {
	n := 2
	if r.plus {
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
		if _, m := refAt(r.s, p, r.plus); m > 0 {
			return p
		}
		i = p + 1
	}
	return -1
}

// nextRef returns the index of the first reference in s at or after i, or
// -1.
func nextRef(s string, i int, plus bool) int {
	sc := newRefScanner(s, plus)
	return sc.at(i)
}

// hasRef reports whether s holds a reference.
func hasRef(s string, plus bool) bool { return nextRef(s, 0, plus) >= 0 }

// refView is a decoded view of a text: text, and for each of its bytes
// where in the original text the reference or byte it comes from starts.
type refView struct {
	text string
	// src[l][i] is where the byte i of level l comes from in level l-1
	// (level -1 being the original); src[l] has one more entry, the
	// length of level l-1.
	src [][]int32
}

// decodeRefs decodes s one level: the decoded text and its src map.
func decodeRefs(s string, plus bool) (string, []int32) {
	var b strings.Builder
	b.Grow(len(s))
	src := make([]int32, 0, len(s)+1)
	last := 0
	sc := newRefScanner(s, plus)
	for i := sc.at(0); i >= 0; i = sc.at(last) {
		for k := last; k < i; k++ {
			src = append(src, int32(k))
		}
		b.WriteString(s[last:i])
		out, n := refAt(s, i, plus)
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
	return b.String(), append(src, int32(len(s)))
}

// newRefView decodes s refLevels times (fewer when a level leaves no
// reference); ok is false when s holds none.
func newRefView(s string, plus bool) (refView, bool) {
	if !hasRef(s, plus) {
		return refView{}, false
	}
	v := refView{text: s}
	for l := 0; l < refLevels; l++ {
		if l > 0 && !hasRef(v.text, plus) {
			break
		}
		t, src := decodeRefs(v.text, plus)
		v.text = t
		v.src = append(v.src, src)
	}
	return v, true
}

// span maps the range [a, b) of the view back to the original text,
// widened to whole references.
func (v refView) span(a, b int) (int, int) {
	for l := len(v.src) - 1; l >= 0; l-- {
		src := v.src[l]
		e := b
		if b > a {
			// The end of the reference byte b-1 comes from.
			e = b
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
func (d *detector) scanRefs(text string, plain famSet) famSet {
	var b strings.Builder
	sc := newRefScanner(text, true)
	for i := sc.at(0); i >= 0; {
		ls := strings.LastIndexByte(text[:i], '\n') + 1
		le := len(text)
		if k := strings.IndexByte(text[i:], '\n'); k >= 0 {
			le = i + k
		}
		v, _ := newRefView(text[ls:le], true)
		b.WriteString(v.text)
		b.WriteByte('\n')
		if le == len(text) {
			break
		}
		i = sc.at(le + 1)
	}
	if b.Len() == 0 {
		return 0
	}
	// Decoded references may spell invisible characters or look-alikes
	// ("&#8203;", "&#x456;"): the view is normalized as the text was.
	norm, _ := Normalize(b.String())
	// Depth 0: the view is the text as a reader sees it, so comments,
	// hidden elements and chat markup spelled in entities count
	// ("&lt;!-- … --&gt;", "&lt;|im_start|&gt;system").
	got := d.scan(foldedForScan(norm), 0) &^ plain
	if got&^(famInvisible|famEncoded) == 0 {
		return 0
	}
	return got | famEncoded
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
// All stages read the same view, which the spans of earlier stages do not
// change: where two stages' spans overlap, they are merged (disjoint).
func (r *redactor) refSpans(text string, spans []redSpan) []redSpan {
	v, ok := newRefView(text, false)
	if !ok {
		return spans
	}
	var found []redSpan
	for _, find := range redactStages {
		found = find(v.text, found[:0])
		for _, s := range found {
			a, b := v.span(s.start, s.end)
			r.remember(v.text[s.start:s.end], s.kind)
			spans = append(spans, redSpan{a, b, s.kind})
		}
	}
	return disjoint(spans)
}
