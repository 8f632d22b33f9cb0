package airlock_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/airlock"
)

var normalizeCases = []struct {
	name    string
	in      string
	want    string
	removed int
}{
	{"ascii unchanged", "hello\tworld\n", "hello\tworld\n", 0},
	{"empty", "", "", 0},
	{"nfkc fullwidth", "ＩＧＮＯＲＥ ｐｒｅｖｉｏｕｓ １２３", "IGNORE previous 123", 0},
	{"nfkc ligature", "ﬁle ﬂow", "file flow", 0},
	{"nfkc superscript and fraction", "x² ½", "x2 1⁄2", 0},
	{"nfkc no-break space", "a\u00a0b\u3000c", "a b c", 0},
	{"nfkc composes", "e\u0301", "é", 0},
	{"nfkc mathematical letters", "𝐬𝐲𝐬𝐭𝐞𝐦", "system", 0},
	{"nfkc circled", "ⓐⓑ", "ab", 0},
	{"zero width space", "ig\u200bnore", "ignore", 1},
	{"zero width joiners", "a\u200c\u200db", "ab", 2},
	{"word joiner", "a\u2060b", "ab", 1},
	{"byte order mark", "\ufeffhello", "hello", 1},
	{"mongolian vowel separator", "a\u180eb", "ab", 1},
	{"bidi embedding and override", "\u202aa\u202bb\u202cc\u202dd\u202ee", "abcde", 5},
	{"bidi isolates", "\u2066x\u2067y\u2068z\u2069", "xyz", 4},
	{"bidi marks", "a\u200eb\u200fc\u061cd", "abcd", 3},
	{"soft hyphen", "pass\u00adword", "password", 1},
	{"combining grapheme joiner", "a\u034fb", "ab", 1},
	{"variation selectors", "❤\ufe0f a\ufe00b c\U000E0100", "❤ ab c", 3},
	{"tag characters", "hi\U000E0001\U000E0069\U000E0067\U000E006E\U000E007F", "hi", 5},
	{"other format characters", "a\u2061b\u2064c\ufff9d", "abcd", 3},
	{"hangul fillers", "a\u3164b\u115fc\uffa0d", "abcd", 3},
	{"c0 controls", "a\x00b\x07c\x1b[31m", "abc[31m", 3},
	{"delete", "a\x7fb", "ab", 1},
	{"c1 controls", "a\u0080b\u009bc", "abc", 2},
	{"crlf", "a\r\nb\r\n", "a\nb\n", 0},
	{"lone cr", "a\rb", "a\nb", 0},
	{"cr cr lf", "a\r\r\nb", "a\n\nb", 0},
	{"other line breaks", "a\vb\fc\u0085d\u2028e\u2029f", "a\nb\nc\nd\ne\nf", 0},
	{"invalid utf-8", "a\xffb\xc3", "a\ufffdb\ufffd", 0},
	{"encoded surrogate", "\xed\xa0\x80", "\ufffd\ufffd\ufffd", 0},
	{"replacement character kept", "a\ufffdb", "a\ufffdb", 0},
	{"removal lets marks compose", "e\u200b\u0301", "é", 1},
	{"removal inside fullwidth", "ｉ\u200bｇｎｏｒｅ", "ignore", 1},
	{"other scripts kept", "Привет, 世界! مرحبا", "Привет, 世界! مرحبا", 0},
	{"emoji kept, joiner removed", "👩\u200d💻", "👩💻", 1},
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	for _, tc := range normalizeCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, removed := airlock.Normalize(tc.in)
			if got != tc.want || removed != tc.removed {
				t.Fatalf("Normalize(%q) = %q, %d; want %q, %d", tc.in, got, removed, tc.want, tc.removed)
			}
			again, more := airlock.Normalize(got)
			if again != got || more != 0 {
				t.Fatalf("Normalize is not idempotent on %q: got %q, %d", got, again, more)
			}
		})
	}
}

// Zalgo text: norm inserts a combining grapheme joiner after 30 marks;
// Normalize drops the marks beyond instead, so its output stays free of
// invisible characters and normalizing again changes nothing.
func TestNormalizeLongCombiningRun(t *testing.T) {
	t.Parallel()
	in := "a" + strings.Repeat("\u0301\u0316", 40) + "b"
	got, removed := airlock.Normalize(in)
	if strings.Contains(got, "\u034f") {
		t.Fatalf("Normalize(%q) = %q: contains a combining grapheme joiner", in, got)
	}
	if removed == 0 || !strings.HasPrefix(got, "á") || !strings.HasSuffix(got, "b") {
		t.Fatalf("Normalize(%q) = %q, %d; want the excess marks removed", in, got, removed)
	}
	if again, more := airlock.Normalize(got); again != got || more != 0 {
		t.Fatalf("Normalize is not idempotent on %q: got %q, %d", got, again, more)
	}
}

// Every character either disappears, becomes a line break, or normalizes to
// characters that Normalize keeps: NFKC never produces what the removal
// pass would have removed.
func TestNormalizeEveryRune(t *testing.T) {
	t.Parallel()
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		got, _ := airlock.Normalize("a" + string(r) + "b")
		if again, more := airlock.Normalize(got); again != got || more != 0 {
			t.Fatalf("U+%04X: Normalize(%q) = %q, and again %q, %d", r, "a"+string(r)+"b", got, again, more)
		}
	}
}

func TestNormalizeUnchangedDoesNotAllocate(t *testing.T) {
	in := strings.Repeat("The shop crashes on 2.4.1; Gerät stürzt ab. ", 20)
	allocs := testing.AllocsPerRun(20, func() { airlock.Normalize(in) })
	if allocs != 0 {
		t.Fatalf("Normalize of clean text allocated %v times, want 0", allocs)
	}
}
