package triage_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

// TestDuplicateErrors logs, for every dataset the tests know (the
// generalisation sets, the sample and the evaluation sets), how many
// expected duplicates were missed and how many reports were called
// duplicates wrongly (a duplicate where none was expected, or of the wrong
// ticket), for the reference pipeline and with filed tickets joining the
// tracker. A false duplicate hides a bug; on the sets that pass today
// there must be none.
func TestDuplicateErrors(t *testing.T) {
	t.Parallel()
	sets := map[string]triage.Dataset{"gen/bank": bankDataset(t), "gen/notes": notesDataset(t), "gen/delivery": deliveryDataset(t), "gen/racing": racingDataset(t)}
	if d, ok := tryOrbit(); ok {
		sets["sample"] = d
	}
	dirs, _ := filepath.Glob("testdata/eval/*")
	for _, dir := range dirs {
		d, err := triage.LoadDataset(os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		sets["eval/"+filepath.Base(dir)] = d
	}
	names := make([]string, 0, len(sets))
	for n := range sets {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		d := sets[name]
		for _, mode := range []string{"batch", "filed"} {
			var results []triage.Result
			if mode == "batch" {
				results = triage.RunBatch(d)
			} else {
				results = runFilingTickets(d)
			}
			missed, false_, wrongTarget := dupErrors(d, results)
			t.Logf("%-14s %-5s missed %d %v, false %d %v", name, mode, len(missed), missed, len(false_)+len(wrongTarget), append(false_, wrongTarget...))
			if !strings.HasPrefix(name, "eval/") && len(false_)+len(wrongTarget) > 0 {
				t.Errorf("%s (%s): false duplicates %v %v", name, mode, false_, wrongTarget)
			}
		}
	}
}

func dupErrors(d triage.Dataset, results []triage.Result) (missed, falseDup, wrongTarget []string) {
	it := triage.ItemTickets(results)
	for _, r := range results {
		exp, ok := d.Expected[r.ItemID]
		if !ok {
			continue
		}
		wantDup := exp.Outcome == triage.OutcomeDuplicate
		gotDup := r.Outcome == triage.OutcomeDuplicate
		switch {
		case wantDup && !gotDup:
			missed = append(missed, r.ItemID)
		case !wantDup && gotDup:
			falseDup = append(falseDup, r.ItemID)
		case wantDup && gotDup:
			if good, _ := triage.Score(triage.Expected{DuplicateOf: exp.DuplicateOf}, r, it); !good {
				wrongTarget = append(wrongTarget, r.ItemID+"→"+r.Ticket)
			}
		}
	}
	return missed, falseDup, wrongTarget
}
