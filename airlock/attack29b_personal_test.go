package airlock

import "testing"

// All-caps log lines with a number, a street-type word (DRIVE, LANE,
// STREAM?) and a two-letter word plus a long number are read as a US
// address in capitals.
func TestAttack29bCapsAddressFalseRedaction(t *testing.T) {
	for _, in := range []string{
		"WARN 3 RETRIES ON STREAM CT 40000 BYTES",
		"COPY 5 FILES TO DRIVE D 10000",
		"WROTE 12 ROWS TO LANE B 20000",
	} {
		if d := Sanitize(in); d.Text != in {
			t.Errorf("Sanitize(%q).Text = %q %v: ordinary log line redacted", in, d.Text, d.Redactions)
		}
	}
}
