package tamper_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/tamper"
)

// bigGo is a realistic file of about n lines: imports, a type, methods
// with loops and error handling, and an init.
func bigGo(n int, seed string) string {
	var b strings.Builder
	b.WriteString("package cart\n\nimport (\n\t\"errors\"\n\t\"fmt\"\n\t\"os\"\n\t\"strings\"\n)\n\nvar registry = map[string]int{}\n\nfunc init() { registry[\"a\"] = 1 }\n\ntype Cart struct{ items []int }\n\n")
	for i := 0; b.Len() < n*25; i++ {
		fmt.Fprintf(&b, `// Sum%[1]d adds part of the cart.
func (c *Cart) Sum%[1]d(from, to int) (int, error) {
	if c == nil || from < 0 || to > len(c.items) {
		return 0, errors.New("cart: range %[1]d")
	}
	s := 0
	for _, x := range c.items[from:to] {
		s += x * %[1]d
	}
	if s < 0 {
		return 0, fmt.Errorf("cart: %%d overflows %s", s)
	}
	name := strings.ToUpper("sum%[1]d")
	if _, err := os.Stat(name); err == nil {
		return s, nil
	}
	return s, nil
}

`, i, seed)
	}
	return b.String()
}

// TestCandidateFast: a 500-line file is judged well under 10 ms. The
// fastest of several runs is compared, so a busy machine does not fail it.
func TestCandidateFast(t *testing.T) {
	t.Parallel()
	base, cand := bigGo(500, "base"), bigGo(500, "cand")
	if n := strings.Count(cand, "\n"); n < 450 || n > 600 {
		t.Fatalf("generated %d lines", n)
	}
	files := []tamper.File{modified("cart/cart.go", base, cand+"\nfunc quit() { os.Exit(0) }\n")}
	best := time.Hour
	for range 10 {
		start := time.Now()
		got := tamper.Candidate(files)
		best = min(best, time.Since(start))
		if len(got) != 1 || got[0].Rule != tamper.RuleExitInLibrary {
			t.Fatalf("want one exit finding:%s", dump(got))
		}
	}
	if raceEnabled || testing.CoverMode() != "" {
		t.Skipf("timing does not apply under the race detector or coverage (best %v)", best)
	}
	if best > 10*time.Millisecond {
		t.Errorf("Candidate on a 500-line file took %v at best, want well under 10ms", best)
	}
}

func BenchmarkCandidate500Lines(b *testing.B) {
	files := []tamper.File{modified("cart/cart.go", bigGo(500, "base"), bigGo(500, "cand"))}
	for b.Loop() {
		tamper.Candidate(files)
	}
}

func BenchmarkReproduction500Lines(b *testing.B) {
	files := []tamper.File{modified("cart/cart_test.go", bigGo(500, "base"), bigGo(500, "cand"))}
	for b.Loop() {
		tamper.Reproduction(files)
	}
}
