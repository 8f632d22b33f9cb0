package airlock

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Invisible payloads ("ASCII smuggling"). Unicode tag characters
// (U+E0020-U+E007E) mirror printable ASCII and render as nothing, yet a
// model reads them; variation selectors (U+FE00-U+FE0F, U+E0100-U+E01EF)
// can carry one byte each after any visible character. Normalize removes
// both, so the dossier shows nothing of them, but the text they spell is
// exactly what an attacker meant the model to read: it is decoded here and
// scanned on its own.
//
// The hidden characters need not stand together: one tag character after
// each zero-width space, or one selector after each emoji or letter, still
// spells a sentence to a model. So every tag character of the text is
// gathered, in order, into one payload whatever stands between them, and
// likewise every selector that carries a byte; only the tags of a
// subdivision flag, and the selectors whose byte is a control character
// (U+FE00-U+FE08, FE0B, FE0C, FE0E, FE0F and U+E0100-U+E010F: the emoji
// and text presentation selectors, keycaps, and nearly all ideographic
// variation sequences), are left out.

// The tag characters and the supplementary variation selectors all start
// with these two bytes in UTF-8: text without them has no payload that can
// spell printable ASCII (the sixteen basic selectors only reach bytes
// 0-15, of which only white space is kept).
const invisiblePrefix = "\xf3\xa0"

// The basic variation selectors U+FE00-U+FE0F start with these two bytes
// (so do other characters up to U+FE3F).
const basicVSPrefix = "\xef\xb8"

// blackFlagUTF8 is U+1F3F4, the base of subdivision flags.
const blackFlagUTF8 = "\xf0\x9f\x8f\xb4"

const (
	tagBase   = 0xE0000
	tagCancel = 0xE007F // ends a tag run, and a subdivision flag
)

// scanInvisible decodes the text s spells in tag characters and variation
// selectors and returns famInvisible with the families that text fires, or
// 0 when s hides nothing readable.
func (d *detector) scanInvisible(s string) famSet {
	if !strings.Contains(s, invisiblePrefix) {
		return 0
	}
	h := gatherInvisible(s)
	var fams famSet
	scan := func(p []byte) {
		fams |= famInvisible | d.scan(foldedForScan(string(p)), 1) | d.scanEncoded(string(p))
	}
	if readableHidden(string(h.tags)) || asciiLetters(h.tags) >= minHiddenLetters {
		scan(h.tags)
	}
	if readable(h.vs) || asciiLetters(h.vs) >= minHiddenLetters {
		scan(h.vs)
	}
	// Both kinds: they may spell one text between them, in turns.
	if len(h.tags) > 0 && len(h.vs) > 0 && (readableHidden(string(h.all)) || asciiLetters(h.all) >= minHiddenLetters) {
		scan(h.all)
	}
	return fams
}

// minHiddenLetters is how many letters hidden text needs to count as
// deliberate whatever else it holds: the ratio tests alone would let an
// attacker dilute a sentence with hidden punctuation, and no ordinary use
// of tags or selectors spells a dozen letters.
const minHiddenLetters = 12

func asciiLetters(p []byte) int {
	n := 0
	for _, c := range p {
		if c|0x20 >= 'a' && c|0x20 <= 'z' {
			n++
		}
	}
	return n
}

// hiddenText is what the invisible characters of a text spell: the tag
// characters, the bytes of the variation selectors, and both in text
// order.
type hiddenText struct{ tags, vs, all []byte }

// gatherInvisible collects every tag character and every byte-carrying
// variation selector of s, in order, up to maxDecodeTotal bytes. It jumps
// from one candidate to the next with strings.Index, so it costs little
// more than the search for the prefixes.
func gatherInvisible(s string) hiddenText {
	var h hiddenText
	nextTag := strings.Index(s, invisiblePrefix)
	if nextTag < 0 {
		return h
	}
	nextVS := strings.Index(s, basicVSPrefix)
	for len(h.all) < maxDecodeTotal {
		var i int
		switch {
		case nextTag < 0 && nextVS < 0:
			return h
		case nextVS < 0 || nextTag >= 0 && nextTag < nextVS:
			i = nextTag
		default:
			i = nextVS
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r >= tagBase && r <= tagCancel:
			if n := flagTags(s, i); n > 0 {
				size = n
			} else if r >= tagBase+0x20 && r < tagCancel {
				c := byte(r - tagBase)
				h.tags = append(h.tags, c)
				h.all = append(h.all, c)
			}
		case r >= 0xE0100 && r <= 0xE01EF:
			h.addSelector(byte(r - 0xE0100 + 16))
		case r >= 0xFE00 && r <= 0xFE0F:
			h.addSelector(byte(r - 0xFE00))
		}
		pos := i + max(size, 1)
		if nextTag >= 0 && nextTag < pos {
			nextTag = indexFrom(s, invisiblePrefix, pos)
		}
		if nextVS >= 0 && nextVS < pos {
			nextVS = indexFrom(s, basicVSPrefix, pos)
		}
	}
	return h
}

// addSelector keeps the byte a variation selector carries unless it is a
// control character other than white space: the selectors in ordinary
// use (emoji and text presentation, keycaps, the ideographic variation
// sequences up to U+E010F) all carry such bytes, and text has none.
func (h *hiddenText) addSelector(c byte) {
	if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
		return
	}
	h.vs = append(h.vs, c)
	h.all = append(h.all, c)
}

// indexFrom is strings.Index from s[from:], as an index into s.
func indexFrom(s, sub string, from int) int {
	if from >= len(s) {
		return -1
	}
	if k := strings.Index(s[from:], sub); k >= 0 {
		return from + k
	}
	return -1
}

// flagTags returns the length in bytes of the tag sequence of a
// subdivision flag at s[i:], or 0 when there is none: right after U+1F3F4,
// a region and subdivision code (two lowercase letters, then lowercase
// letters or digits, three to seven tags in all) ended by the cancel tag,
// or by the end of the tags when the flag was cut short.
func flagTags(s string, i int) int {
	if !strings.HasSuffix(s[:i], blackFlagUTF8) {
		return 0
	}
	j, n := i, 0
	for j < len(s) {
		r, size := utf8.DecodeRuneInString(s[j:])
		if r == tagCancel {
			if n < 3 {
				return 0
			}
			return j + size - i
		}
		c := r - tagBase
		letter := c >= 'a' && c <= 'z'
		if !(letter || n >= 2 && c >= '0' && c <= '9') {
			if r >= tagBase && r < tagCancel {
				return 0 // more tags follow: not a flag
			}
			break
		}
		if n++; n > 7 {
			return 0
		}
		j += size
	}
	if n < 3 {
		return 0
	}
	return j - i
}

// readableHidden reports whether decoded hidden text says something: a
// few characters, mostly letters. Any such text outside a flag is
// deliberate, since tag characters have no other use left in Unicode.
func readableHidden(run string) bool {
	t := strings.TrimSpace(run)
	if len(t) < 4 {
		return false
	}
	letters := 0
	for _, r := range t {
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters*2 >= len(t)
}
