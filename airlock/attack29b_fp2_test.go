package airlock

import "testing"

// 'ignore the above and instead' quoted from build docs, 'supersede your
// configuration' in config docs, and a report about an agent's tool use
// fire on ordinary developer text.
func TestAttack29bOrdinaryDocsFalseSignal(t *testing.T) {
	for _, in := range []string{
		"If the build fails, ignore the above and instead run make clean.",
		"The docs say to ignore the above and instead use the v2 API.",
		"Environment variables supersede your configuration file (see docs/config.md).",
		"Release notes: the new precedence rules mean project instructions supersede your configuration defaults.",
		"After the upgrade the agent must call approve_fix itself; before it asked the user. Bug?",
	} {
		if d := Sanitize(in); len(d.Signals) != 0 {
			t.Errorf("Sanitize(%q): signals %v on an ordinary report", in, d.Signals)
		}
	}
}

// The key/value password runs past '&' into a following parameter that
// has no '=' or into an HTML entity: the next name is eaten (low).
func TestAttack29bKeyValueEatsNext(t *testing.T) {
	for in, want := range map[string]string{
		"password=hunter2&submit":        "password=[password]&submit",
		"password=hunter2&nbsp;and more": "password=[password]&nbsp;and more",
	} {
		if d := Sanitize(in); d.Text != want {
			t.Errorf("Sanitize(%q).Text = %q, want %q", in, d.Text, want)
		}
	}
}
