package airlock

import "testing"

// TestValidAadhaarVerhoeff checks the Verhoeff tables against numbers whose
// check digit was computed apart (Python, the published tables): a wrong
// entry in a permutation row still leaves exactly one valid check digit
// per number, so only outside vectors catch it.
func TestValidAadhaarVerhoeff(t *testing.T) {
	t.Parallel()
	valid := []string{"359941856603", "217351759861", "572366983860", "648367824494", "969152425189", "826674925348", "872718482651"}
	for _, n := range valid {
		if !validAadhaar(n) {
			t.Errorf("validAadhaar(%s) = false, want true", n)
		}
		for k := byte('0'); k <= '9'; k++ {
			if m := n[:11] + string(k); m != n && validAadhaar(m) {
				t.Errorf("validAadhaar(%s) = true: only %s is valid", m, n)
			}
		}
	}
	// The classic example: 236 has check digit 3.
	c := uint8(0)
	for k, r := range "3632" {
		c = verhoeffD[c][verhoeffP[k%8][r-'0']]
	}
	if c != 0 {
		t.Error("Verhoeff check of 2363 fails")
	}
}
