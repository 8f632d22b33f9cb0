package change

import (
	"strings"
	"testing"
)

// TestReasonLength: a policy's minimum counts what a person can read, so
// zero-width, bidi, tag and other invisible characters, combining marks
// alone and runs of white space do not meet it.
func TestReasonLength(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, reason string
		want         int
	}{
		{"plain", "checkout answers 500", 20},
		{"spaces collapse and trim", "  checkout   answers\t\n500  ", 20},
		{"zero-width spaces", strings.Repeat("\u200b", 25), 0},
		{"zero-width joiners between letters", "a\u200db\u200dc", 3},
		{"bidi controls", "\u202e\u202d\u2066\u2069ok", 2},
		{"tag characters", "\U000E0041\U000E0042\U000E0043", 0},
		{"combining marks alone", strings.Repeat("\u0301", 30), 0},
		{"ideographic spaces", strings.Repeat("\u3000", 25), 0},
		{"soft hyphens and BOM", "\u00ad\ufeff\u00ad", 0},
		{"Japanese", "チェックアウトが壊れている", 13},
		{"accented letters keep their base", "café", 4},
		{"controls", "\x01\x02\x7f", 0},
	}
	for _, tt := range tests {
		if got := ReasonLength(tt.reason); got != tt.want {
			t.Errorf("%s: ReasonLength(%q) = %d, want %d", tt.name, tt.reason, got, tt.want)
		}
	}
	if r := reviewReason(strings.Repeat("\u200b", 25), 20); r.OK {
		t.Errorf("25 zero-width spaces pass a 20-character minimum: %+v", r)
	}
}

// TestReasonLengthInvisibleLetters: some code points are letters or
// symbols by category yet render as nothing (Hangul fillers, the braille
// blank, other default-ignorable code points): they do not meet a
// minimum either.
func TestReasonLengthInvisibleLetters(t *testing.T) {
	t.Parallel()
	for _, r := range []rune{'\u3164', '\u115f', '\u1160', '\uffa0', '\u2800', '\u034f', '\ufe0f'} {
		if n := ReasonLength(strings.Repeat(string(r), 25)); n != 0 {
			t.Errorf("25 × U+%04X count %d readable characters, want 0", r, n)
		}
	}
	if r := reviewReason(strings.Repeat("\u3164", 25), 20); r.OK {
		t.Errorf("25 Hangul fillers pass a 20-character minimum: %+v", r)
	}
	// Scripts whose words carry combining marks still count their letters.
	if n := ReasonLength("ปิดฟีเจอร์ชำระเงิน"); n < 10 {
		t.Errorf("a Thai reason counts %d", n)
	}
	if n := ReasonLength("चेकआउट टूट गया है"); n < 10 {
		t.Errorf("a Hindi reason counts %d", n)
	}
}
