package airlock

import (
	"strings"
	"testing"
)

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

// An abbreviated street type with a period cuts the address: the city,
// state and ZIP+4 stay in clear.
func TestAttack29bCapsAddressAbbrevPartial(t *testing.T) {
	in := "742 EVERGREEN TERR. SPRINGFIELD OR 97475-1234"
	if d := Sanitize(in); strings.Contains(d.Text, "97475") {
		t.Errorf("Sanitize(%q).Text = %q: city/ZIP in clear", in, d.Text)
	}
}
