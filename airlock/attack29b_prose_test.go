package airlock

import (
	"strings"
	"testing"
)

func checkNoClear(t *testing.T, cases map[string]string) {
	t.Helper()
	for in, secret := range cases {
		d := Sanitize(in)
		if strings.Contains(d.Text, secret) {
			t.Errorf("Sanitize(%q).Text = %q: %q in clear", in, d.Text, secret)
		}
	}
}

// Brackets the fix did not cover: doubled, unclosed, or doubled angle
// brackets leave the whole password in clear.
func TestAttack29bProsePasswordBracketVariants(t *testing.T) {
	checkNoClear(t, map[string]string{
		"my password is ((Tr0ub4dor&3))": "Tr0ub4dor&3",
		"my password is (Tr0ub4dor&3":    "Tr0ub4dor&3",
		"my password is <Tr0ub4dor&3":    "Tr0ub4dor&3",
		"my password is <<Tr0ub4dor&3>>": "Tr0ub4dor&3",
	})
}

// '<' before a letter or '/' ends the value, and a quote inside a
// quoted value ends it: the rest of the password stays in clear.
func TestAttack29bProsePasswordPartialLeak(t *testing.T) {
	checkNoClear(t, map[string]string{
		"my password is Tr0ub<x4dor&3":   "x4dor&3",
		"my password is Tr0ub</4dor&3":   "4dor&3",
		"my password is Tr0ub<b>4dor&3":  "4dor&3",
		"password is 'Tr0ub'4dor&3":      "4dor&3",
		"password: Tr0ub4dor&amp;3":      "&amp;3",
		"password=Tr0ub4dor&amp;3&amp;x": "&amp;3",
		"password=Tr0ub4dor&#38;3":       ";3",
	})
}

// A value longer than the 128-byte read limit is not cut at 128 bytes:
// it is dropped, and the whole passphrase stays in clear.
func TestAttack29bProsePasswordOverReadLimit(t *testing.T) {
	long := "correct-horse-battery-staple-" + strings.Repeat("x", 100) + "-9#Q"
	checkNoClear(t, map[string]string{
		"my password is " + long:                                  "9#Q",
		"my password is " + strings.Repeat("a", 125) + "9#Secret": "9#Secret",
	})
}

// A placeholder glued to the value is folded in, but not when another
// placeholder precedes it.
func TestAttack29bProsePlaceholderPairThenValue(t *testing.T) {
	checkNoClear(t, map[string]string{
		"my password is [password] [password]Tr0ub4dor&3": "Tr0ub4dor&3",
	})
}
