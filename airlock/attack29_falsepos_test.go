package airlock

import (
	"strings"
	"testing"
)

// Issue 29 attack, false redactions on ordinary reports: a function call
// in a stack-trace sentence read as a street address, and order/build
// numbers in the SSN print shape (by the rule's design: "ddd-dd-dddd
// stands alone", but triage loses the id).
func TestAttack29FalseRedactions(t *testing.T) {
	for in, keep := range map[string]string{
		"Call 1 Main St. handler in line 42": "1 Main St",
		"Order 123-45-6789 shipped":          "123-45-6789",
		"Build 529.982.247-25 timestamp":     "529.982.247-25",
	} {
		d := Sanitize(in)
		if !strings.Contains(d.Text, keep) {
			t.Errorf("Sanitize(%q).Text = %q %v: %q lost", in, d.Text, d.Redactions, keep)
		}
	}
}
