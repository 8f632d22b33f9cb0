package crew_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoDatasetNamesInCode proves the crew is not keyed to the dataset it
// is evaluated on: no item id, ticket id, crash signature, stack frame,
// product, company or team of orbit_run appears in any non-test source of
// the packages that make triage decisions.
func TestNoDatasetNamesInCode(t *testing.T) {
	d := loadOrbit(t)
	var names []string
	for _, it := range d.Items {
		names = append(names, it.ID, it.Author)
	}
	for _, tk := range d.Tickets {
		names = append(names, tk.ID, tk.Owner, tk.Title)
	}
	for _, c := range d.Crashes {
		names = append(names, c.Signature, c.StackTop, strings.SplitN(c.StackTop, "(", 2)[0])
	}
	for _, o := range d.Owners {
		names = append(names, o.Team, o.Channel)
	}
	names = append(names, d.Releases.Product, d.Releases.Company)
	for _, r := range d.Releases.Releases {
		names = append(names, r.Notes)
	}
	seen := map[string]bool{}
	var files []string
	for _, dir := range []string{".", "../triage", "../agent", "../cmd/signoff"} {
		fs, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range fs {
			if !strings.HasSuffix(f, "_test.go") {
				files = append(files, f)
			}
		}
	}
	if len(files) < 10 {
		t.Fatalf("only %d files scanned", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := strings.ToLower(string(b))
		for _, n := range names {
			n = strings.ToLower(strings.TrimSpace(n))
			if len(n) < 4 || seen[f+n] {
				continue
			}
			if strings.Contains(src, n) {
				seen[f+n] = true
				t.Errorf("%s names %q from the dataset", f, n)
			}
		}
	}
}
