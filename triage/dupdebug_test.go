package triage_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

// TestDupDebug prints every bug item's search hits for the dataset in
// $DUPDEBUG (a debugging aid; skipped otherwise).
func TestDupDebug(t *testing.T) {
	dir := os.Getenv("DUPDEBUG")
	if dir == "" {
		t.Skip("set DUPDEBUG to a dataset folder")
	}
	d, err := triage.LoadDataset(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	runs := triage.Run(d)
	for _, r := range runs {
		exp := d.Expected[r.Item.ID]
		fmt.Printf("%s cat=%s out=%s dup=%s | want %s %s %s\n", r.Item.ID, r.Result.Category, r.Result.Outcome, r.Result.DuplicateOf, exp.Outcome, exp.DuplicateOf, exp.Component)
		for _, h := range append(r.TrackerHits, r.BatchHits...) {
			fmt.Printf("    %-14s %.3f %s [%s]\n", h.ID, h.Score, h.Resolves, strings.Join(h.Why, "; "))
		}
	}
}
