package airlock

import (
	"strings"
	"testing"
)

// Issue 29 attack: ordinary ways of stating a password in English prose
// that the prose stage does not read: the value in square brackets, the
// common shorthands "pwd"/"pass", an apposition between commas, an em
// dash. French "mdp" is left out on purpose by prose.go (noted there).
func TestAttack29ProsePasswordPhrasings(t *testing.T) {
	for _, in := range []string{
		"my password is [Tr0ub4dor&3]",
		"my pwd is Tr0ub4dor&3",
		"my pass is Tr0ub4dor&3",
		"my new password, Tr0ub4dor&3, doesn't work",
		"password — Tr0ub4dor&3",
		"mon mdp est Tr0ub4dor&3",
	} {
		d := Sanitize(in)
		if strings.Contains(d.Text, "Tr0ub4dor") {
			t.Errorf("Sanitize(%q).Text = %q %v: password in clear", in, d.Text, d.Redactions)
		}
	}
}
