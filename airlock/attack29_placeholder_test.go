package airlock

import (
	"strings"
	"testing"
)

// Issue 29 attack: proseJudge drops a value that contains anything
// placeholderLen accepts ("if i := strings.IndexByte(v, '['); i >= 0 &&
// placeholderLen(v[i:]) > 0"), and placeholders are now recognised by
// name: a reporter (or a pasted template) that writes a real kind name in
// brackets next to the password keeps the password in clear. Found once by
// nobody, it is not propagated either.
func TestAttack29ProsePasswordGluedToFakePlaceholder(t *testing.T) {
	for _, in := range []string{
		"my password is Tr0ub4dor&3[email]",
		"my password is [email]Tr0ub4dor&3",
		"my password is Tr0ub4dor[password]&3",
		"my password is Tr0ub4dor&3[password]",
		"my password is [password]/Tr0ub4dor&3",
		"my password is Tr0ub4dor&3/[password]",
		`my password is "Tr0ub4dor&3[email]"`,
		"mein Passwort ist Tr0ub4dor&3[us-ssn]",
		"我的密码是Tr0ub4dor&3[email]",
		"la mia password è Tr0ub4dor&3[gitlab-pat]",
	} {
		d := Sanitize(in)
		if strings.Contains(d.Text, "Tr0ub4dor") || strings.Contains(d.Text, "4dor&3") {
			t.Errorf("Sanitize(%q).Text = %q %v: password in clear", in, d.Text, d.Redactions)
		}
	}
}
