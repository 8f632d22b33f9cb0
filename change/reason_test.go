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
