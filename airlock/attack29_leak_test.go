package airlock

import (
	"strings"
	"testing"
)

// Issue 29 attack: prose passwords bracketed the way people write them in
// prose. proseJudge drops any value starting with '(', '{', '<', '%' ("an
// aside, a template"), so the whole password stays; a '<' inside a value
// ends it (proseValue), so the part after it stays.
func TestAttack29ProsePasswordBracketed(t *testing.T) {
	for in, secret := range map[string]string{
		"my password is (Tr0ub4dor&3)":   "Tr0ub4dor&3",
		"my password is <Tr0ub4dor&3>":   "Tr0ub4dor&3",
		"my password is {Tr0ub4dor&3}":   "Tr0ub4dor&3",
		"my password is %Tr0ub4dor&3":    "Tr0ub4dor&3",
		"my password is Tr0ub<4dor&3":    "4dor&3",
		"la contraseña es (Xk9#mP2!qL)":  "Xk9#mP2!qL",
		"mein Passwort ist <Xk9#mP2!qL>": "Xk9#mP2!qL",
	} {
		d := Sanitize(in)
		if strings.Contains(d.Text, secret) {
			t.Errorf("Sanitize(%q).Text = %q %v: %q in clear", in, d.Text, d.Redactions, secret)
		}
	}
}

// Key=value passwords (findKeyValues, older code that issue 29 kept)
// stop at '&', so a password with '&' leaves its tail: "password =
// Tr0ub4dor&3" -> "password = [password]&3". Not new in issue 29, but the
// prose stage now reads the same sentence and does not cover it.
func TestAttack29KeyValuePasswordAmpersandTail(t *testing.T) {
	for _, in := range []string{"password = Tr0ub4dor&3", "Password: Tr0ub4dor&3", "contraseña: Tr0ub4dor&3", "mot de passe : Tr0ub4dor&3"} {
		d := Sanitize(in)
		if strings.Contains(d.Text, "&3") {
			t.Errorf("Sanitize(%q).Text = %q: password tail in clear", in, d.Text)
		}
	}
}

// National ids and addresses in common variants. Dashed NINOs and NIRs
// and digits of other scripts are known limits (docs/airlock.md).
func TestAttack29PersonalVariants(t *testing.T) {
	for in, secret := range map[string]string{
		// A US address in capitals, as on a shipping label.
		"Ship to: 742 EVERGREEN TERRACE SPRINGFIELD OR 97475": "EVERGREEN",
	} {
		d := Sanitize(in)
		if strings.Contains(d.Text, secret) {
			t.Errorf("Sanitize(%q).Text = %q %v: %q in clear", in, d.Text, d.Redactions, secret)
		}
	}
}
