package airlock

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf8"
)

// Fold returns a detection-only skeleton of s: lowercase, look-alike letters
// from other scripts mapped to the Latin letter they imitate, accents
// dropped, fullwidth and mathematical letters mapped to ASCII, invisible
// characters dropped, whitespace runs collapsed, words spelled out letter by
// letter ("i.g.n.o.r.e", "i g n o r e") joined, and leetspeak inside words
// ("1gn0r3") undone.
//
// Fold destroys information on purpose so that one set of patterns catches
// the disguised forms of a phrase. Nothing shown to a person or a model is
// ever folded: only Detect reads the result.
func Fold(s string) string {
	return string(foldBytes(make([]byte, 0, len(s)+2), s))
}

// foldBytes appends the folded form of s to dst and returns it. All three
// passes work in one buffer: joining and leetspeak only ever shorten or
// rewrite in place.
func foldBytes(dst []byte, s string) []byte {
	n := len(dst)
	dst = foldRunes(dst, s)
	tail := joinSpelled(dst[n:])
	foldLeet(tail)
	return dst[:n+len(tail)]
}

// foldRunes maps every rune to its detection skeleton and collapses
// whitespace: runs without a line break become one space, runs with one
// become one newline, so that line-anchored patterns still see lines.
func foldRunes(b []byte, s string) []byte {
	// pending is 0, ' ' or '\n': whitespace seen but not yet written.
	var pending byte
	wrote := false
	for i := 0; i < len(s); {
		c := s[i]
		if asciiPrint[c] {
			// A run of printable ASCII, with single spaces between its
			// words: copy it whole, then lower-case it in place.
			j := printableRunEnd(s, i+1)
			if pending != 0 {
				if wrote {
					b = append(b, pending)
				}
				pending = 0
			}
			n := len(b)
			b = append(b, s[i:j]...)
			lowerASCII(b[n:])
			wrote = true
			i = j
			continue
		}
		if c < utf8.RuneSelf {
			i++
			switch m := asciiFold[c]; m {
			case ' ':
				if pending == 0 {
					pending = ' '
				}
			case '\n':
				pending = '\n'
			case 0:
				// Control characters carry nothing to detect.
			default:
				if pending != 0 {
					if wrote {
						b = append(b, pending)
					}
					pending = 0
				}
				b = append(b, m)
				wrote = true
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == utf8.RuneError && size == 1 {
			continue
		}
		m, fr, ws := foldRuneFast(r)
		switch {
		case ws == '\n':
			pending = '\n'
		case ws == ' ':
			if pending == 0 {
				pending = ' '
			}
		case m != "" || fr != 0:
			if pending != 0 {
				if wrote {
					b = append(b, pending)
				}
				pending = 0
			}
			if m != "" {
				b = append(b, m...)
			} else {
				b = utf8.AppendRune(b, fr)
			}
			wrote = true
		}
	}
	return b
}

// foldTableEnd bounds the runes foldRuneFast looks up in a table: Latin
// with accents, Greek, Cyrillic, Armenian, the general punctuation, and
// the CJK punctuation and kana. Each costs foldRune two map lookups and
// several Unicode table searches.
const foldTableEnd = 0x3100

// A foldTable entry is a kind in the top byte and a rune or an index into
// foldTableStrings below it.
const (
	foldDrop = iota << 24
	foldToRune
	foldToString
	foldToSpace
	foldToNewline
)

var foldTable, foldTableStrings = func() (*[foldTableEnd]uint32, []string) {
	var t [foldTableEnd]uint32
	var strs []string
	index := map[string]uint32{}
	for r := rune(utf8.RuneSelf); r < foldTableEnd; r++ {
		m, fr, ws := foldRune(r)
		switch {
		case m != "":
			i, ok := index[m]
			if !ok {
				i = uint32(len(strs))
				index[m] = i
				strs = append(strs, m)
			}
			t[r] = foldToString | i
		case fr != 0:
			t[r] = foldToRune | uint32(fr)
		case ws == ' ':
			t[r] = foldToSpace
		case ws == '\n':
			t[r] = foldToNewline
		}
	}
	return &t, strs
}()

// foldRuneFast is foldRune, from a table for the common scripts. CJK
// ideographs fold to themselves (TestFoldRuneTable checks every rune).
func foldRuneFast(r rune) (string, rune, byte) {
	switch {
	case r < foldTableEnd:
		e := foldTable[r]
		switch e &^ (1<<24 - 1) {
		case foldToRune:
			return "", rune(e & (1<<24 - 1)), 0
		case foldToString:
			return foldTableStrings[e&(1<<24-1)], 0, 0
		case foldToSpace:
			return "", 0, ' '
		case foldToNewline:
			return "", 0, '\n'
		}
		return "", 0, 0
	case r >= 0x4E00 && r <= 0x9FFF:
		return "", r, 0
	}
	return foldRune(r)
}

// printableRunEnd returns where the run of printable ASCII that continues
// at j ends: at a byte that is not printable, or at a space that is not
// followed by a printable byte (the start of a run of whitespace).
func printableRunEnd(s string, j int) int {
	for ; j+9 <= len(s); j += 8 {
		x, next := load64(s, j), load64(s, j+1)
		stop := ^swarRange(x, ' ', 0x7E) & swarHighs
		stop |= swarEq(x, ' ') &^ swarRange(next, 0x21, 0x7E)
		if stop != 0 {
			return j + bits.TrailingZeros64(stop)/8
		}
	}
	for j < len(s) {
		if d := s[j]; asciiPrint[d] {
			j++
		} else if d == ' ' && j+1 < len(s) && asciiPrint[s[j+1]] {
			j++
		} else {
			break
		}
	}
	return j
}

// foldRune folds one non-ASCII rune. It returns replacement text or a
// single replacement rune, or a whitespace kind (' ' or '\n') when the rune
// is a space or line break, or nothing at all when the rune is invisible.
func foldRune(r rune) (string, rune, byte) {
	if m, ok := runeFold[r]; ok {
		return m, 0, 0
	}
	switch {
	case r == 0x85 || r == 0x2028 || r == 0x2029:
		return "", 0, '\n'
	case unicode.IsSpace(r):
		return "", 0, ' '
	case r >= 0xFF01 && r <= 0xFF5E: // fullwidth ASCII
		return "", rune(asciiFold[r-0xFEE0]), 0
	case r >= 0x1D400 && r <= 0x1D6A3: // mathematical alphanumeric letters
		return "", 'a' + (r-0x1D400)%52%26, 0
	case r >= 0x1D7CE && r <= 0x1D7FF: // mathematical digits
		return "", '0' + (r-0x1D7CE)%10, 0
	case r >= 0x24B6 && r <= 0x24E9: // circled letters
		return "", 'a' + (r-0x24B6)%26, 0
	case r >= 0x249C && r <= 0x24B5: // parenthesized letters
		return "", 'a' + (r - 0x249C), 0
	case r >= 0x1F130 && r <= 0x1F189 && (r-0x1F130)%0x20 < 26: // squared and circled letters
		return "", 'a' + (r-0x1F130)%0x20, 0
	case r >= 0x1F1E6 && r <= 0x1F1FF: // regional indicators
		return "", 'a' + (r - 0x1F1E6), 0
	case r >= 0xE0020 && r <= 0xE007E:
		// Unicode tag characters spell invisible ASCII ("ASCII
		// smuggling"); read them as the text they hide.
		return "", rune(asciiFold[r-0xE0000]), 0
	case r >= 0x064B && r <= 0x065F, r == 0x0670, r == 0x0640:
		// Arabic vowel marks and the tatweel (kashida) are optional in
		// writing: patterns are written without them.
		return "", 0, 0
	case isInvisible(r), r >= 0x0300 && r <= 0x036F, unicode.IsControl(r):
		// Invisible characters and combining accents carry nothing to
		// detect, and dropping them rejoins the words they split.
		return "", 0, 0
	}
	l := unicode.ToLower(r)
	if m, ok := runeFold[l]; ok {
		return m, 0, 0
	}
	return "", l, 0
}

// isInvisible reports format characters that render as nothing: zero-width
// spaces and joiners, bidi controls, soft hyphens, variation selectors.
func isInvisible(r rune) bool {
	switch {
	case r == 0xAD, r == 0x34F, r == 0x61C, r == 0x115F, r == 0x1160, r == 0x17B4, r == 0x17B5,
		r == 0x180E, r == 0x3164, r == 0xFEFF, r == 0xFFA0:
		return true
	case r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E, r >= 0x2060 && r <= 0x206F:
		return true
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0000 && r <= 0xE0FFF:
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// asciiFold lowercases ASCII and classifies whitespace; 0 drops the byte.
var asciiFold = func() (t [128]byte) {
	for c := 0x20; c < 0x7F; c++ {
		t[c] = byte(c)
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = byte(c + 'a' - 'A')
	}
	t[' '], t['\t'], t['\v'], t['\f'] = ' ', ' ', ' ', ' '
	t['\n'], t['\r'] = '\n', '\n'
	return t
}()

// asciiPrint marks the printable ASCII bytes other than space: Fold keeps
// them, lower-cased.
var asciiPrint = func() (t [256]bool) {
	for c := 0x21; c < 0x7F; c++ {
		t[c] = true
	}
	return t
}()

// runeFold maps look-alike letters, accented Latin letters and typographic
// punctuation to the ASCII an attacker meant a reader to see. Upper-case
// entries are looked up before lower-casing because some capitals imitate a
// different letter than their small form (Greek Η looks like H, η like n).
var runeFold = func() map[rune]string {
	m := make(map[rune]string, 512)
	add := func(to string, from string) {
		for _, r := range from {
			m[r] = to
		}
	}
	// Cyrillic capitals and small letters.
	add("a", "АаӐӑӒӓ")
	add("b", "ВвЬьБ")
	add("c", "СсϹϲҪҫ")
	add("d", "ԁԀ")
	add("e", "ЕеЁёЄєӖӗ")
	add("g", "ɡԌԍ")
	add("h", "НнҺһ")
	add("i", "ІіЇїӀӏıɩɪ")
	add("j", "Јјϳ")
	add("k", "КкҚқ")
	add("l", "ℓ")
	add("m", "Мм")
	add("n", "п")
	add("o", "ОоӦӧօ")
	add("p", "Рр")
	add("q", "ԚԛǪǫ")
	add("r", "г")
	add("s", "Ѕѕ")
	add("t", "Тт")
	add("u", "ս")
	add("w", "ԜԝѡѠ")
	add("x", "Хх")
	add("y", "УуҮү")
	// Greek capitals, then small letters.
	add("a", "Αα")
	add("b", "Ββ")
	add("e", "Εε")
	add("z", "Ζ")
	add("h", "Η")
	add("i", "Ιι")
	add("k", "Κκ")
	add("m", "Μ")
	add("n", "Νη")
	add("o", "Οοσ")
	add("p", "Ρρ")
	add("t", "Ττ")
	add("y", "Υγ")
	add("u", "υμ")
	add("v", "ν")
	add("x", "Χχ")
	add("w", "ω")
	add("s", "ς")
	// Armenian and small capitals.
	add("h", "հ")
	add("a", "ᴀɑ")
	add("b", "ʙ")
	add("c", "ᴄ")
	add("d", "ᴅ")
	add("e", "ᴇ")
	add("f", "ғ")
	add("g", "ɢ")
	add("h", "ʜ")
	add("j", "ᴊ")
	add("k", "ᴋ")
	add("l", "ʟ")
	add("m", "ᴍ")
	add("n", "ɴ")
	add("o", "ᴏ")
	add("p", "ᴘ")
	add("r", "ʀ")
	add("t", "ᴛ")
	add("u", "ᴜ")
	add("v", "ᴠ")
	add("w", "ᴡ")
	add("y", "ʏ")
	add("z", "ᴢ")
	// Accented Latin letters: patterns are written without accents, and
	// attackers drop them anyway.
	add("a", "àáâãäåāăąǎȁȃȧ")
	add("c", "çćĉċč")
	add("d", "ďđ")
	add("e", "èéêëēĕėęěȅȇ")
	add("g", "ĝğġģ")
	add("h", "ĥħ")
	add("i", "ìíîïĩīĭįǐȉȋ")
	add("j", "ĵ")
	add("k", "ķ")
	add("l", "ĺļľŀł")
	add("n", "ñńņňŉ")
	add("o", "òóôõöøōŏőǒȍȏ")
	add("r", "ŕŗř")
	add("s", "śŝşšș")
	add("t", "ţťŧț")
	add("u", "ùúûüũūŭůűųǔȕȗ")
	add("w", "ŵ")
	add("y", "ýÿŷ")
	add("z", "źżž")
	add("ss", "ß")
	add("ae", "æ")
	add("oe", "œ")
	// Arabic letters written several ways: alef with or without hamza or
	// madda (أ إ آ ٱ), final yeh as alef maksura (ى), teh marbuta (ة) as
	// heh; and the Arabic comma, semicolon and question mark.
	add("\u0627", "\u0623\u0625\u0622\u0671")
	add("\u064a", "\u0649")
	add("\u0647", "\u0629")
	add(",", "\u060c")
	add(";", "\u061b")
	add("?", "\u061f")
	// Typographic punctuation that patterns write in ASCII.
	add("'", "‘’‚‛′`´")
	add("\"", "“”„‟″«»")
	add("-", "‐‑‒–—―−")
	add(".", "。｡")
	add(",", "、")
	add("<", "‹〈＜")
	add(">", "›〉＞")
	add("...", "…")
	return m
}()

// joinSpelled joins words spelled out one character at a time: three or more
// single letters or digits separated each time by the same short separator
// ("i.g.n.o.r.e", "i g n o r e", "i-g-n-o-r-e"). Ordinary prose rarely
// has three one-letter words in a row, and when it does ("A, B, C") joining
// them only makes a harmless token. It works in place and returns the
// shortened slice.
func joinSpelled(b []byte) []byte {
	if !maySpell(b) {
		return b
	}
	s := string(b) // the reads below must not see the writes
	w := 0
	i := 0
	for i < len(s) {
		st, en, ok := nextSingle(s, i)
		if !ok {
			w += copy(b[w:], s[i:])
			break
		}
		end, n := spelledChain(s, st, en)
		if n < 3 || !hasLetter(s[st:end]) {
			// Too short, or a number such as "1.2.3".
			w += copy(b[w:], s[i:en])
			i = en
			continue
		}
		w += copy(b[w:], s[i:st])
		// Keep the chain's characters, drop their separators.
		for j := st; j < end; {
			r, size := utf8.DecodeRuneInString(s[j:])
			if isWordRune(r) {
				w += copy(b[w:], s[j:j+size])
			}
			j += size
		}
		i = end
	}
	return b[:w]
}

// maySpell is a quick byte test for what every spelled-out word has: three
// one-character words (one of them a letter) with the same separator
// between them. Most text has none and skips joinSpelled entirely. Text
// with a non-ASCII one-character word next to a separator ("忽 略 之") is
// left to the exact test.
func maySpell(b []byte) bool {
	// Eight bytes at a time, find the candidates: a one-character ASCII
	// word, or a byte that starts a rune, before an ASCII byte that is
	// not part of a word. spellAt judges each. w and h mark the word
	// bytes and the non-ASCII bytes of the current eight bytes, wPrev and
	// hPrev those of the eight before, wNext and hNext those after.
	i := 0
	if len(b) >= 16 {
		var wPrev, hPrev uint64
		x := binary.LittleEndian.Uint64(b)
		w, h := swarWord(x), x&swarHighs
		for ; i+16 <= len(b); i += 8 {
			xNext := binary.LittleEndian.Uint64(b[i+8:])
			// swarWord, written out so that the compiler inlines it.
			wNext := swarRange(xNext, 'a', 'z') | swarRange(xNext, '0', '9') | swarEq(xNext, '@') | swarEq(xNext, '$')
			hNext := xNext & swarHighs
			before := w<<8 | wPrev>>56 | h<<8 | hPrev>>56
			after := w>>8 | wNext<<56 | h>>8 | hNext<<56
			lead := h & (x << 1) // 0xC0 and above
			for cand := (w&^before | lead) &^ after; cand != 0; cand &= cand - 1 {
				k := i + bits.TrailingZeros64(cand)/8
				if k+4 >= len(b) {
					return false
				}
				if spellAt(b, k) {
					return true
				}
			}
			x, w, h, wPrev, hPrev = xNext, wNext, hNext, w, h
		}
	}
	for ; i+4 < len(b); i++ {
		if spellAt(b, i) {
			return true
		}
	}
	return false
}

// spellAt reports whether a spelled-out word starts at b[i], which is
// followed by at least four bytes.
func spellAt(b []byte, i int) bool {
	if !spellSep[b[i+1]] {
		// Every candidate is one character followed by a separator.
		return false
	}
	c := b[i]
	if c >= utf8.RuneSelf {
		if utf8.RuneStart(c) && (i == 0 || isSpellSep(b[i-1])) {
			r, size := utf8.DecodeRune(b[i:])
			if j := i + size; j < len(b) && isSpellSep(b[j]) && unicode.IsLetter(r) {
				// A one-letter word in another script: is the next
				// word after the separator one letter too?
				for j < len(b) && isSpellSep(b[j]) {
					j++
				}
				r2, size2 := utf8.DecodeRune(b[j:])
				if unicode.IsLetter(r2) && (j+size2 == len(b) || isSpellSep(b[j+size2])) {
					return true
				}
			}
		}
		return false
	}
	if !isWordByte(c) || (i > 0 && (isWordByte(b[i-1]) || b[i-1] >= utf8.RuneSelf)) || isWordByte(b[i+1]) {
		return false
	}
	// b[i] is a one-character word: measure its separator.
	j := i + 1
	for j < len(b) && j-i <= 3 && isSpellSep(b[j]) {
		j++
	}
	sep := b[i+1 : j]
	if len(sep) == 0 || len(sep) > 3 {
		return false
	}
	letter := c >= 'a' && c <= 'z'
	n, k := 1, j
	for k < len(b) && n < 3 {
		if !isWordByte(b[k]) || (k+1 < len(b) && (isWordByte(b[k+1]) || b[k+1] >= utf8.RuneSelf)) {
			break
		}
		letter = letter || b[k] >= 'a' && b[k] <= 'z'
		n++
		if n == 3 || k+1+len(sep) > len(b) || string(b[k+1:k+1+len(sep)]) != string(sep) {
			break
		}
		k += 1 + len(sep)
	}
	return n >= 3 && letter
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

func isWordByte(c byte) bool { return leetClass[c] != 0 }

// leetClass classifies the bytes of folded ASCII words: letters, digits,
// and the symbols leetspeak puts in words.
const (
	lcLetter = 1 << iota
	lcDigit
	lcSubst // stands for a letter: 0 1 3 4 5 7 @ $
)

var leetClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = lcLetter
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = lcDigit
	}
	for _, c := range []byte("013457@$") {
		t[c] |= lcSubst
	}
	return t
}()

// nextSingle finds the next word of exactly one character at or after i.
func nextSingle(s string, i int) (start, end int, ok bool) {
	prevWord := false
	if i > 0 {
		r, _ := utf8.DecodeLastRuneInString(s[:i])
		prevWord = isWordRune(r)
	}
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		w := isWordRune(r)
		if w && !prevWord {
			if i+size == len(s) {
				return i, i + size, true
			}
			nr, _ := utf8.DecodeRuneInString(s[i+size:])
			if !isWordRune(nr) {
				return i, i + size, true
			}
		}
		prevWord = w
		i += size
	}
	return 0, 0, false
}

// spelledChain extends a chain of single characters starting with the one at
// [st, en): it returns where the chain ends and how many characters it has.
func spelledChain(s string, st, en int) (end, n int) {
	end, n = en, 1
	sep := ""
	for {
		j := end
		for j < len(s) && j-end <= 3 && isSpellSep(s[j]) {
			j++
		}
		if j == end || j-end > 3 || j >= len(s) {
			return end, n
		}
		if n == 1 {
			sep = s[end:j]
		} else if s[end:j] != sep {
			return end, n
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if !isWordRune(r) {
			return end, n
		}
		if j+size < len(s) {
			nr, _ := utf8.DecodeRuneInString(s[j+size:])
			if isWordRune(nr) {
				return end, n
			}
		}
		end, n = j+size, n+1
	}
}

func isSpellSep(c byte) bool { return spellSep[c] }

var spellSep = func() (t [256]bool) {
	for _, c := range []byte(" \n.-_*/|,+~:'\"") {
		t[c] = true
	}
	return t
}()

// isWordRune reports the characters that make up words for Fold, including
// the digits and symbols leetspeak puts inside them.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '@' || r == '$'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// leet maps the digits and symbols that stand in for letters.
var leet = [128]byte{'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', '$': 's'}

// foldLeet undoes leetspeak inside words that mix letters with the digits
// and symbols above ("1gn0r3", "pr3v10us", "$y$tem"), in place. Words
// made only of digits are numbers and stay as they are, so "version 1.3"
// is untouched.
func foldLeet(b []byte) {
	for i := 0; i < len(b); {
		// Only a word that holds one of the symbols can change: find the
		// next symbol, eight bytes at a time, then its word.
		p := i
		for ; p+8 <= len(b); p += 8 {
			if m := swarDigitAtDollar(binary.LittleEndian.Uint64(b[p:])); m != 0 {
				p += bits.TrailingZeros64(m) / 8
				if leetClass[b[p]]&lcSubst != 0 {
					break
				}
				// A digit that stands for no letter: look on from it.
				p -= 7
			}
		}
		for p < len(b) && leetClass[b[p]]&lcSubst == 0 {
			p++
		}
		if p == len(b) {
			return
		}
		// The word starts after i: b[i-1], if any, ends the previous one.
		start := p
		for start > i && leetClass[b[start-1]] != 0 {
			start--
		}
		end := p + 1
		var seen uint8
		for k := start; k < len(b); k++ {
			c := leetClass[b[k]]
			if c == 0 {
				break
			}
			seen |= c
			end = k + 1
		}
		if seen&lcLetter != 0 {
			for k := start; k < end; k++ {
				if m := leet[b[k]]; m != 0 {
					b[k] = m
				}
			}
		}
		i = end
	}
}
