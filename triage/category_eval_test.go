package triage_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

// TestCategoryAccuracy logs, per bundled dataset, how many items intake
// files under the expected category, and every miss with its cues. It is a
// measurement, not a gate: the end-to-end sets are held by TestEvalSets.
func TestCategoryAccuracy(t *testing.T) {
	t.Parallel()
	dirs, _ := filepath.Glob("testdata/eval/*")
	dirs = append(dirs, orbitDir)
	for _, dir := range dirs {
		d, err := triage.LoadDataset(os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		right, total := 0, 0
		for _, it := range d.Items {
			exp, ok := d.Expected[it.ID]
			if !ok || exp.Category == "" {
				continue
			}
			total++
			in := triage.Classify(it)
			if in.Category == exp.Category {
				right++
				continue
			}
			t.Logf("%s: %s, want %s; cues %q", it.ID, in.Category, exp.Category, in.Cues)
		}
		t.Logf("category %s: %d/%d", filepath.Base(dir), right, total)
	}
}
