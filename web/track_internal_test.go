package web

import (
	"strings"
	"testing"
)

// TestTechnicalIsBounded: the technical details are cut on a character
// boundary and say so.
func TestTechnicalIsBounded(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", maxTechnical)
	got := technical(long)
	if len(got) > maxTechnical+100 || !strings.HasSuffix(got, "(cut: the rest is longer than this page shows)") {
		t.Fatalf("technical of %d bytes = %d bytes", len(long), len(got))
	}
	if !strings.HasPrefix(got, strings.Repeat("é", maxTechnical/2)) || strings.ContainsRune(got, '\uFFFD') {
		t.Fatal("cut inside a character")
	}
	if technical("  short\n") != "short" {
		t.Fatal("short text changed")
	}
	for _, kind := range []string{"reproduction", "live_fix"} {
		if questionWords(kind) == "" || technicalNote(kind) == "" {
			t.Errorf("no plain words for %s", kind)
		}
	}
}
