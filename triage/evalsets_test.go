package triage_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

// minEvalShare is the share of items each evaluation set must get right.
// The sets are other products in the sample's layout, written as users
// would write (testdata/eval/*/SOURCE.md); nothing in the code knows them.
const minEvalShare = 0.8

// TestEvalSets runs the reference pipeline over every evaluation set and
// holds each at minEvalShare. The table of every item is logged, so a
// failure shows which decisions missed.
func TestEvalSets(t *testing.T) {
	t.Parallel()
	dirs, _ := filepath.Glob("testdata/eval/*")
	if len(dirs) == 0 {
		t.Fatal("no evaluation sets under testdata/eval")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			d, err := triage.LoadDataset(os.DirFS(dir))
			if err != nil {
				t.Fatal(err)
			}
			rows, score, total := triage.Evaluate(d, triage.RunBatch(d))
			t.Logf("\n%s", triage.FormatTable(rows, score, total))
			if total < 20 || total != len(d.Expected) {
				t.Fatalf("scored %d items of %d expected", total, len(d.Expected))
			}
			if float64(score) < minEvalShare*float64(total) {
				t.Errorf("score %d/%d, below %.0f%%", score, total, 100*minEvalShare)
			}
		})
	}
}
