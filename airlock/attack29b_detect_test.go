package airlock

import "testing"

// 'supersede your configuration' fires on ordinary config docs.
func TestAttack29bSupersedeFalseSignal(t *testing.T) {
	for _, in := range []string{
		"Config precedence: CLI flags supersede your configuration file settings.",
		"The new CI instructions supersede your configuration in .travis.yml; migrate.",
	} {
		if d := Sanitize(in); len(d.Signals) != 0 {
			t.Errorf("Sanitize(%q): signals %v on an ordinary report", in, d.Signals)
		}
	}
}
