package airlock

import (
	"math/bits"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// What Normalize does with one character.
const (
	keepChar    uint8 = iota
	dropChar          // invisible or control: removed and counted
	newlineChar       // a line break written differently: becomes "\n"
	crChar            // carriage return: "\r\n" and a lone "\r" become "\n"
)

// asciiAction classifies the ASCII range. Tab and line feed are the only
// C0 controls kept; vertical tab and form feed are line breaks, so they
// become "\n" rather than being removed, which would glue words together.
var asciiAction = func() (t [utf8.RuneSelf]uint8) {
	for c := range 0x20 {
		t[c] = dropChar
	}
	t['\t'] = keepChar
	t['\n'] = keepChar
	t['\v'] = newlineChar
	t['\f'] = newlineChar
	t['\r'] = crChar
	t[0x7F] = dropChar
	return t
}()

// dropBMP is a bitmap of the Basic Multilingual Plane characters Normalize
// removes, so the common case costs one lookup instead of several range
// table searches.
var dropBMP = func() (bits [0x10000 / 64]uint64) {
	for r := rune(0x80); r < 0x10000; r++ {
		if isDropRune(r) {
			bits[r>>6] |= 1 << (r & 63)
		}
	}
	return bits
}()

// isDropRune reports whether r is invisible or a control character: C1
// controls, every format character (Cf: zero-width, bidi controls, soft
// hyphen, tags, ...), variation selectors and the other default-ignorable
// code points (combining grapheme joiner, Hangul fillers). These let a
// reporter hide text from a human reviewer that a model still reads.
func isDropRune(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7F:
		return r != '\t' && r != '\n'
	case r >= 0x80 && r <= 0x9F:
		return r != 0x85
	case r >= 0xE0000 && r <= 0xE0FFF:
		// Tag characters, supplementary variation selectors and the
		// reserved rest of the plane: all default-ignorable.
		return true
	}
	return unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point)
}

// runeAction classifies a non-ASCII rune.
func runeAction(r rune) uint8 {
	switch r {
	case 0x85, 0x2028, 0x2029: // next line, line and paragraph separators
		return newlineChar
	}
	if r < 0x10000 {
		if dropBMP[r>>6]&(1<<(r&63)) != 0 {
			return dropChar
		}
		return keepChar
	}
	if isDropRune(r) {
		return dropChar
	}
	return keepChar
}

// cgj is the combining grapheme joiner that norm inserts after 30
// consecutive combining marks (the Unicode Stream-Safe Text Format).
const cgj = "\u034f"

// Normalize returns text in Unicode NFKC with invisible and control
// characters removed, line breaks ("\r\n", "\r", vertical tab, form feed,
// U+0085, U+2028, U+2029) turned into "\n" and invalid UTF-8 bytes replaced
// by U+FFFD, and the number of characters it removed.
//
// NFKC folds look-alikes (fullwidth letters, ligatures, superscripts) so
// that the redactor and the detector see one spelling of each word, and
// removing invisibles before NFKC lets characters they separated compose.
// Text that needs no change is returned as is, without allocating.
func Normalize(text string) (string, int) {
	// Find the first byte that needs a change; most reports have none.
	// stable stays true while every rune leaves NFKC nothing to do.
	ascii, stable := true, true
	var stableSet *[0x10000 / 64]uint64
	i := 0
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if asciiAction[c] != keepChar {
				break
			}
			i++
			// Printable ASCII, tabs and line feeds need nothing: skip
			// them eight bytes at a time.
			for i+8 <= len(text) {
				x := load64(text, i)
				if m := ^swarRange(x, ' ', 0x7E) & swarHighs &^ swarEq(x, '\n') &^ swarEq(x, '\t'); m != 0 {
					i += bits.TrailingZeros64(m) / 8
					break
				}
				i += 8
			}
			continue
		}
		if ascii {
			ascii, stableSet = false, nfkcStableBMP()
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if (r == utf8.RuneError && size == 1) || runeAction(r) != keepChar {
			break
		}
		stable = stable && r < 0x10000 && stableSet[r>>6]&(1<<(r&63)) != 0
		i += size
	}
	if i == len(text) {
		if ascii || stable {
			return text, 0 // already NFKC
		}
		return nfkc(text, 0)
	}
	if stableSet == nil {
		stableSet = nfkcStableBMP()
	}

	var b strings.Builder
	b.Grow(len(text))
	b.WriteString(text[:i])
	removed := 0
	start := i // start of a run of bytes copied unchanged
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			act := asciiAction[c]
			if act == keepChar {
				i++
				continue
			}
			b.WriteString(text[start:i])
			switch act {
			case dropChar:
				removed++
			case newlineChar:
				b.WriteByte('\n')
			case crChar:
				b.WriteByte('\n')
				if i+1 < len(text) && text[i+1] == '\n' {
					i++
				}
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(text[start:i])
			b.WriteString("\uFFFD")
			i++
			start = i
			continue
		}
		act := runeAction(r)
		if act == keepChar {
			stable = stable && r < 0x10000 && stableSet[r>>6]&(1<<(r&63)) != 0
			i += size
			continue
		}
		b.WriteString(text[start:i])
		if act == dropChar {
			removed++
		} else {
			b.WriteByte('\n')
		}
		i += size
		start = i
	}
	b.WriteString(text[start:])
	if stable {
		// U+FFFD, line breaks and the runes kept are all NFKC-stable:
		// removing the others cannot make a pair that composes.
		return b.String(), removed
	}
	return nfkc(b.String(), removed)
}

// nfkcStableBMP returns the set of Basic Multilingual Plane runes that
// pass the NFKC quick check with "yes" and have canonical combining class
// 0: text made only of such runes (and ASCII) is in NFKC already (Unicode
// Standard Annex #15, quick check), so Normalize need not run the
// normalizer over it. Building it takes a few milliseconds, on first use.
var nfkcStableBMP = sync.OnceValue(func() *[0x10000 / 64]uint64 {
	var set [0x10000 / 64]uint64
	for r := rune(0); r < 0x10000; r++ {
		if utf8.ValidRune(r) && nfkcStable(r) {
			set[r>>6] |= 1 << (r & 63)
		}
	}
	return &set
})

// nfkcStable reports whether r is unchanged by NFKC and cannot combine
// with the rune before it, which is the quick check's "yes" for a rune of
// combining class 0.
func nfkcStable(r rune) bool {
	s := string(r)
	return norm.NFKC.IsNormalString(s) && norm.NFKC.PropertiesString(s).BoundaryBefore()
}

// nfkc applies NFKC. It never lets a combining grapheme joiner through: norm
// inserts one after 30 consecutive combining marks, and removing only the
// joiner would leave text that NFKC changes again. The marks beyond the
// limit are dropped instead and counted as removed; only deliberately
// garbled ("zalgo") text has that many.
func nfkc(s string, removed int) (string, int) {
	s = norm.NFKC.String(s)
	for round := 0; strings.Contains(s, cgj); round++ {
		if round == 4 {
			return strings.ReplaceAll(s, cgj, ""), removed
		}
		var b strings.Builder
		b.Grow(len(s))
		for {
			j := strings.Index(s, cgj)
			if j < 0 {
				break
			}
			b.WriteString(s[:j])
			s = s[j+len(cgj):]
			for len(s) > 0 && !norm.NFKC.PropertiesString(s).BoundaryBefore() {
				_, size := utf8.DecodeRuneInString(s)
				s = s[size:]
				removed++
			}
		}
		b.WriteString(s)
		s = norm.NFKC.String(b.String())
	}
	return s, removed
}
