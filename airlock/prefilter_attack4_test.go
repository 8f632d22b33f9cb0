package airlock

import (
	"strings"
	"testing"
)

// TestAttack4BoundaryDifferential places the bytes the SWAR scans and the
// NFKC quick check must stop at (controls, DEL, CR, invalid UTF-8, NEL,
// line separators, combining marks, Hangul jamo, a stable rune before a
// combining mark) and the secrets the number prefilters must not pass
// over, at every offset across two 8-byte words and after very long
// lines, and requires the new Normalize and Redact to equal the reference
// forms they replaced.
func TestAttack4BoundaryDifferential(t *testing.T) {
	t.Parallel()
	specials := []string{"\x00", "\x7f", "\r", "\r\n", "\v", "\f", "\x1b", "\xff", "\xc3", "\xed\xa0\x80",
		"\u0085", "\u2028", "\u200b", "\u00ad", "e\u0301", "\u00e9\u0301", "\u1100\u1161", "\uac00\u11a8",
		"\u00e9\u200b\u0301", "\u1100\u200b\u1161", "\ufb01", "\uff41", "\u212b", "\U0001d400", "é", "忽略"}
	secrets := []string{"4111 1111 1111 1111", "4111111111111111", "3782 822463 10005", "+1 (555) 123-4567",
		"13812345678", "06 12 34 56 78", "jane@example.com", "AKIAIOSFODNN7EXAMPLE", "password=hunter2hunter2"}
	pads := []string{"", strings.Repeat("a", 4096), strings.Repeat("x ", 3000)}
	for _, pad := range pads {
		for off := 0; off < 17; off++ {
			prefix := pad + strings.Repeat("b", off)
			for _, sp := range specials {
				for _, tail := range []string{"", "c", strings.Repeat("d", 9), "\u0301", "\u11a8"} {
					s := prefix + sp + tail
					got, gn := Normalize(s)
					want, wn := refNormalize(s)
					if got != want || gn != wn {
						t.Fatalf("Normalize(len %d, off %d, %q%q) differs from reference", len(s), off, sp, tail)
					}
				}
			}
			for _, sec := range secrets {
				for _, sep := range []string{"", " ", "\n", "1", "a", "\u00e9"} {
					s := prefix + sep + sec + sep
					got, gr := Redact(s)
					want, wr := refRedact(s)
					if got != want || len(gr) != len(wr) {
						t.Fatalf("Redact(off %d, %q around %q) = %q, want %q", off, sep, sec, got[max(0, len(got)-80):], want[max(0, len(want)-80):])
					}
				}
			}
		}
	}
}
