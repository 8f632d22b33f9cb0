package airlock

import (
	"bufio"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The scans of this package skip text that cannot hold what they look for
// (byte runs too short, keywords absent). The tests in this file run each
// shortcut against the plain byte-by-byte form it replaced, on the
// evaluation and benchmark corpora and on random text built to stress the
// edges, and require identical results.

// shortcutInputs returns the corpus texts, raw and normalized, and random
// texts derived from them: spliced, mutated with invisible and look-alike
// characters, spelled out, and encoded as the scans expect to find them.
func shortcutInputs(t testing.TB) []string {
	t.Helper()
	var base []string
	f, err := os.Open(filepath.Join("testdata", "eval", "corpus.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for sc.Scan() {
		var c struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		base = append(base, c.Text)
	}
	data, err := os.ReadFile(filepath.Join("testdata", "bench_corpus.txt"))
	if err != nil {
		t.Fatal(err)
	}
	base = append(base, strings.Split(string(data), "\n%%%%\n")...)
	for _, s := range base[:len(base):len(base)] {
		if n, _ := Normalize(s); n != s {
			base = append(base, n)
		}
	}

	pieces := []string{
		"\u200b", "\u00ad", "\u202e", "а", "о", "Ι", "ｉ", "𝐬", "é", "ß", "“", "—", "…", "\u00a0", "\r\n", "\r",
		"\x00", "\xff", "忽略", "指令", "你", " ", "  ", "\n", "\t", ".", "-", "_", "*", "'", ":", ",", "%", "\\x",
		"0x", "=", "/", "+", "@", "$", "1", "3", "0", "<!--", "-->", "ignore all previous instructions",
		"i g n o r e", "1gn0r3 pr3v10us", "AKIAIOSFODNN7EXAMPLE", "de ad be ef ca fe ba be 00 11 22 33 44",
	}
	rng := rand.New(rand.NewPCG(26, 1))
	pick := func() string { return base[rng.IntN(len(base))] }
	cut := func(s string) string {
		if s == "" {
			return s
		}
		a := rng.IntN(len(s))
		return s[a : a+rng.IntN(min(len(s)-a, 300)+1)]
	}
	encode := func(s string) string {
		switch rng.IntN(7) {
		case 0:
			return base64.StdEncoding.EncodeToString([]byte(s))
		case 1:
			return base64.RawURLEncoding.EncodeToString([]byte(s))
		case 2:
			// MIME-style wrapped lines.
			e := base64.StdEncoding.EncodeToString([]byte(s))
			var b strings.Builder
			for len(e) > 20 {
				w := min(16+rng.IntN(8), len(e))
				b.WriteString(e[:w])
				b.WriteString([]string{"\n", "\r\n", " \n"}[rng.IntN(3)])
				e = e[w:]
			}
			b.WriteString(e)
			return b.String()
		case 3:
			return hex.EncodeToString([]byte(s))
		default:
			prefix := []string{"", `\x`, "0x", "%"}[rng.IntN(4)]
			sep := []string{"", " ", ":", ",", "-", ", ", "  "}[rng.IntN(7)]
			var b strings.Builder
			for i, c := range []byte(s) {
				if i > 0 {
					b.WriteString(sep)
				}
				if rng.IntN(40) == 0 {
					b.WriteString("zz") // a break in the sequence
				}
				fmt.Fprintf(&b, "%s%02x", prefix, c)
			}
			return b.String()
		}
	}
	all := slices.Clone(base)
	for range 4000 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			switch rng.IntN(5) {
			case 0:
				b.WriteString(cut(pick()))
			case 1:
				b.WriteString(pieces[rng.IntN(len(pieces))])
			case 2:
				b.WriteString(encode(cut(pick())))
			case 3:
				s := cut(pick())
				sep := []string{" ", ".", "-", " . "}[rng.IntN(4)]
				for i, r := range s {
					if i > 0 && i < 20 {
						b.WriteString(sep)
					}
					b.WriteRune(r)
				}
			case 4:
				for range rng.IntN(40) {
					b.WriteByte(byte(rng.IntN(256)))
				}
			}
		}
		all = append(all, b.String())
	}
	return all
}

// Reference forms: the byte-by-byte scans the shortcuts replaced.

func refBase64Runs(text string, fn func(start int, run string)) {
	for i := 0; i < len(text); {
		if !isB64Byte(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isB64Byte(text[j]) {
			j++
		}
		if j-i < 24 {
			i = j
			continue
		}
		run := text[i:j]
		k := j
		var joined []byte
		for k < len(text) && len(run)+len(joined) < maxBlobBytes*2 {
			n := k
			if n < len(text) && text[n] == '\r' {
				n++
			}
			if n >= len(text) || text[n] != '\n' {
				break
			}
			n++
			e := n
			for e < len(text) && isB64Byte(text[e]) {
				e++
			}
			if e-n < 16 {
				break
			}
			if joined == nil {
				joined = append([]byte(nil), run...)
			}
			joined = append(joined, text[n:e]...)
			k = e
		}
		if joined != nil {
			run = string(joined)
		}
		fn(i, run)
		i = k
	}
}

func refSeparatedHex(text string, fn func(start int, b []byte)) {
	forEachSeparatedHexIn(text, 0, len(text), fn)
}

func TestEncodedRunShortcuts(t *testing.T) {
	t.Parallel()
	for _, s := range shortcutInputs(t) {
		var got, want []string
		forEachBase64Run(s, func(start int, run string) { got = append(got, fmt.Sprint(start, run)) })
		refBase64Runs(s, func(start int, run string) { want = append(want, fmt.Sprint(start, run)) })
		if !slices.Equal(got, want) {
			t.Fatalf("forEachBase64Run(%q) = %q, want %q", s, got, want)
		}
		got, want = got[:0], want[:0]
		forEachSeparatedHex(s, func(start int, b []byte) { got = append(got, fmt.Sprint(start, b)) })
		refSeparatedHex(s, func(start int, b []byte) { want = append(want, fmt.Sprint(start, b)) })
		if !slices.Equal(got, want) {
			t.Fatalf("forEachSeparatedHex(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestNextRun(t *testing.T) {
	t.Parallel()
	var letters [256]bool
	for c := 'a'; c <= 'z'; c++ {
		letters[c] = true
	}
	tests := []struct {
		text       string
		from, n    int
		start, end int
	}{
		{"", 0, 3, 0, 0},
		{"ab", 0, 3, 2, 2},
		{"abc", 0, 3, 0, 3},
		{"ab cd efg hi", 0, 3, 6, 9},
		{"ab cd efg hi", 0, 4, 12, 12},
		{"abcdefgh", 0, 3, 0, 8},
		{"x abcdefgh", 2, 3, 2, 10},
		{"abcd efghij", 5, 6, 5, 11},
		{"1234567890abc", 0, 3, 10, 13},
		{"abc12abcd", 0, 4, 5, 9},
	}
	for _, tt := range tests {
		s, e := nextRun(tt.text, tt.from, tt.n, &letters)
		if s != tt.start || e != tt.end {
			t.Errorf("nextRun(%q, %d, %d) = %d, %d, want %d, %d", tt.text, tt.from, tt.n, s, e, tt.start, tt.end)
		}
	}
}

// refFoldRunes is foldRunes as it was before printable runs were copied
// whole with their single spaces.
func refFoldRunes(b []byte, s string) []byte {
	var pending byte
	wrote := false
	for i := 0; i < len(s); {
		c := s[i]
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
		m, fr, ws := foldRune(r)
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

func TestFoldShortcuts(t *testing.T) {
	t.Parallel()
	for _, s := range shortcutInputs(t) {
		if got, want := foldRunes([]byte("\n"), s), refFoldRunes([]byte("\n"), s); string(got) != string(want) {
			t.Fatalf("foldRunes(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestFoldRuneTable checks the table and ranges of foldRuneFast against
// foldRune for every rune.
func TestFoldRuneTable(t *testing.T) {
	t.Parallel()
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		m1, r1, w1 := foldRuneFast(r)
		m2, r2, w2 := foldRune(r)
		if m1 != m2 || r1 != r2 || w1 != w2 {
			t.Fatalf("foldRuneFast(%U) = %q, %q, %q, want %q, %q, %q", r, m1, r1, w1, m2, r2, w2)
		}
	}
}

// refMaySpell is maySpell reading every byte.
func refMaySpell(b []byte) bool {
	for i := 0; i+4 < len(b); i++ {
		if spellAt(b, i) {
			return true
		}
	}
	return false
}

// refFoldLeet is foldLeet reading every byte.
func refFoldLeet(b []byte) {
	for i := 0; i < len(b); {
		if leetClass[b[i]] == 0 {
			i++
			continue
		}
		j := i
		var seen uint8
		for j < len(b) {
			k := leetClass[b[j]]
			if k == 0 {
				break
			}
			seen |= k
			j++
		}
		if seen&lcLetter != 0 && seen&lcSubst != 0 {
			for k := i; k < j; k++ {
				if m := leet[b[k]]; m != 0 {
					b[k] = m
				}
			}
		}
		i = j
	}
}

func TestSpellAndLeetShortcuts(t *testing.T) {
	t.Parallel()
	inputs := shortcutInputs(t)
	// Short texts around every offset of the eight-byte steps.
	for _, s := range []string{"a b c", "x.y.z", "1gn0r3", "h 3 l l 0", "a-b-c", "\xc3 b c d", "i  g  n"} {
		for pad := range 20 {
			inputs = append(inputs, strings.Repeat("word ", pad/5)+strings.Repeat("x", pad%5)+" "+s+strings.Repeat(" tail", pad%3))
		}
	}
	for _, s := range inputs {
		for _, b := range [][]byte{[]byte(s), foldRunes(nil, s)} {
			if got, want := maySpell(b), refMaySpell(b); got != want {
				t.Fatalf("maySpell(%q) = %v, want %v", b, got, want)
			}
			got, want := slices.Clone(b), slices.Clone(b)
			foldLeet(got)
			refFoldLeet(want)
			if string(got) != string(want) {
				t.Fatalf("foldLeet(%q) = %q, want %q", b, got, want)
			}
		}
	}
}

// TestSWAR checks the eight-byte tests against their one-byte forms, for
// every byte value in every position.
func TestSWAR(t *testing.T) {
	t.Parallel()
	for pos := range 8 {
		for v := range 256 {
			// The other bytes vary too, so that a carry between bytes
			// would show.
			var b [8]byte
			for k := range b {
				b[k] = byte(v*7 + k*37)
			}
			b[pos] = byte(v)
			x := load64(string(b[:]), 0)
			for k, c := range b {
				bit := func(m uint64) bool { return m>>(8*k+7)&1 == 1 }
				check := func(name string, got, want bool) {
					if got != want {
						t.Fatalf("%s(%q) byte %d = %v, want %v", name, b, k, got, want)
					}
				}
				check("swarRange", bit(swarRange(x, '0', '9')), c >= '0' && c <= '9')
				check("swarRange", bit(swarRange(x, ' ', 0x7E)), c >= ' ' && c <= 0x7E)
				check("swarRange", bit(swarRange(x, 1, 0x7F)), c >= 1 && c <= 0x7F)
				check("swarEq", bit(swarEq(x, ' ')), c == ' ')
				check("swarEq", bit(swarEq(x, 0)), c == 0)
				check("swarWord", bit(swarWord(x)), isWordByte(c))
				check("swarDigitAtDollar", bit(swarDigitAtDollar(x)), c >= '0' && c <= '9' || c == '@' || c == '$')
			}
			low := slices.Clone(b[:])
			lowerASCII(low)
			for k, c := range b {
				if want := byte(unicode.ToLower(rune(c))); c < utf8.RuneSelf && low[k] != want || c >= utf8.RuneSelf && low[k] != c {
					t.Fatalf("lowerASCII(%q) = %q", b, low)
				}
			}
		}
	}
}

// refKeywordScan is keywords.scan with one automaton walk over the whole
// text per automaton.
func refKeywordScan(k *keywords, s string) []acHit {
	hits := k.ascii.scanRange(s, 0, len(s), 0, nil)
	n := len(hits)
	hits = k.other.scanRange(s, 0, len(s), 0, hits)
	if n > 0 && n < len(hits) {
		slices.SortStableFunc(hits, func(a, b acHit) int { return int(a.end - b.end) })
	}
	return hits
}

// TestKeywordScanShortcuts checks the four-chain walk and the windows of
// the non-ASCII automaton against a plain walk of both automata.
func TestKeywordScanShortcuts(t *testing.T) {
	t.Parallel()
	k := loadDetector().ac
	for _, s := range shortcutInputs(t) {
		for _, in := range []string{s, foldedForScan(s)} {
			if got, want := k.scan(in, nil), refKeywordScan(k, in); !slices.Equal(got, want) {
				t.Fatalf("keywords.scan(%q) = %v, want %v", in, got, want)
			}
		}
	}
}

// refNormalize is Normalize as it was before it skipped the normalizer
// for text the NFKC quick check passes: it normalizes all non-ASCII text.
func refNormalize(text string) (string, int) {
	// Find the first byte that needs a change; most reports have none.
	ascii := true
	i := 0
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if asciiAction[c] != keepChar {
				break
			}
			i++
			continue
		}
		ascii = false
		r, size := utf8.DecodeRuneInString(text[i:])
		if (r == utf8.RuneError && size == 1) || runeAction(r) != keepChar {
			break
		}
		i += size
	}
	if i == len(text) {
		if ascii {
			return text, 0 // ASCII is already NFKC
		}
		return nfkc(text, 0)
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
	return nfkc(b.String(), removed)
}

// TestNormalizeShortcut checks Normalize against refNormalize, on the
// corpora and on random text that mixes ASCII, invisible characters, line
// breaks, combining marks, Hangul jamo and syllables, compatibility
// characters and runes from every plane.
func TestNormalizeShortcut(t *testing.T) {
	t.Parallel()
	check := func(s string) {
		t.Helper()
		got, gotN := Normalize(s)
		want, wantN := refNormalize(s)
		if got != want || gotN != wantN {
			t.Fatalf("Normalize(%q) = %q, %d, want %q, %d", s, got, gotN, want, wantN)
		}
	}
	for _, s := range shortcutInputs(t) {
		check(s)
	}
	pool := []rune("aeoAE \n\r\t.éüñçßÅ\u0301\u0308\u0327\u0323\u0345\u093c\u05b4\u0e48" +
		"\u1100\u1161\u11a8\uac00\uac01\u3131\u1112\u1175\u11c2" +
		"\u200b\u00ad\u034f\u2028\ufeff\ufffd\u212b\u2126\u0958\u0344\u1e9b" +
		"ﬁ①²½ｶﾞ\uff0c\u3000\u00a0…™㎏忽略指令ИиΩωᾼ\U0001d400\U0001f600\U00010000\U0002f800")
	rng := rand.New(rand.NewPCG(15, 97))
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			if rng.IntN(8) == 0 {
				b.WriteRune(rune(0x80 + rng.IntN(0x10FFFF-0x80)))
			} else {
				b.WriteRune(pool[rng.IntN(len(pool))])
			}
		}
		check(b.String())
	}
	if set := nfkcStableBMP(); set[0xFFFD>>6]&(1<<(0xFFFD&63)) == 0 {
		t.Fatal("U+FFFD, which Normalize writes for invalid bytes, is not NFKC-stable")
	}
}

// refRedact is Redact running every stage in every round.
func refRedact(text string) (string, []Redaction) {
	r := redactor{counts: make([]int, len(kindNames))}
	var spans []redSpan
	for round := 0; round < maxRedactRounds; round++ {
		found := false
		if spans = r.refSpans(text, spans[:0]); len(spans) > 0 {
			text = r.apply(text, spans, true)
			found = true
		}
		for _, find := range redactStages {
			spans = find(text, spans[:0])
			if len(spans) > 0 {
				text = r.apply(text, spans, true)
				found = true
			}
		}
		if spans = r.propagate(text, spans[:0]); len(spans) > 0 {
			text = r.apply(text, spans, false)
			found = true
		}
		if !found {
			break
		}
	}
	var out []Redaction
	for k, n := range r.counts {
		if n > 0 {
			out = append(out, Redaction{Kind: kindNames[k], Count: n})
		}
	}
	return text, out
}

// TestRedactRoundShortcut checks that the stages Redact skips in later
// rounds could not have found anything, on the corpora, random text, and
// text built so that one replacement exposes the next secret.
func TestRedactRoundShortcut(t *testing.T) {
	t.Parallel()
	inputs := shortcutInputs(t)
	secrets := []string{"jane@example.com", "+1 (555) 123-4567", "4111 1111 1111 1111", "DE89 3704 0044 0532 0130 00",
		"AKIAIOSFODNN7EXAMPLE", "password=hunter2hunter2", "api_key=Zm9vYmFyYmF6cXV4MTIz", "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
		"https://alice:s3cr3tPassw0rd@example.com/x", "Bearer abcdef0123456789abcdef", "06 12 34 56 78", "token: ", "pass=", "x"}
	rng := rand.New(rand.NewPCG(7, 11))
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(secrets[rng.IntN(len(secrets))])
			b.WriteString([]string{"", " ", "\n", ":", "=", "\"", "a", "1"}[rng.IntN(8)])
		}
		inputs = append(inputs, b.String())
	}
	for _, s := range inputs {
		got, gotR := Redact(s)
		want, wantR := refRedact(s)
		if got != want || !slices.Equal(gotR, wantR) {
			t.Fatalf("Redact(%q) = %q %v, want %q %v", s, got, gotR, want, wantR)
		}
	}
}

// TestNumberQuickTests checks the quick tests that findCards and
// findPhones make before matchCard and matchPhone: wherever they say no,
// the full match finds nothing.
func TestNumberQuickTests(t *testing.T) {
	t.Parallel()
	inputs := shortcutInputs(t)
	rng := rand.New(rand.NewPCG(3, 5))
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			digits := strings.Repeat("1234567890", 2)[rng.IntN(10):]
			b.WriteString(digits[:1+rng.IntN(min(len(digits), 19))])
			b.WriteString([]string{" ", "-", ".", "/", "(", ")", "+", " (", ":", "", "a"}[rng.IntN(11)])
		}
		inputs = append(inputs, b.String())
	}
	for _, s := range inputs {
		for i := range len(s) {
			if !isASCIIDigit(s[i]) && s[i] != '+' && s[i] != '(' {
				continue
			}
			if !mayStartPhone(s, i, spanWhile(s, i, isASCIIDigit)) {
				if e, ok := matchPhone(s, i); ok {
					t.Fatalf("mayStartPhone(%q, %d) = false, but matchPhone matches to %d", s, i, e)
				}
			}
			if isASCIIDigit(s[i]) {
				if n := spanWhile(s, i, isASCIIDigit) - i; !mayStartCard(n) {
					if e, ok := matchCard(s, i); ok {
						t.Fatalf("first group of %d digits in %q at %d, but matchCard matches to %d", n, s, i, e)
					}
				}
			}
		}
	}
}

// TestRulesFitScanBuffer keeps the rule count below scanHits' stack
// buffer: past it every scan allocates.
func TestRulesFitScanBuffer(t *testing.T) {
	t.Parallel()
	if n := len(loadDetector().rules); n > 256 {
		t.Fatalf("%d rules: raise checkedBuf in scanHits", n)
	}
}
