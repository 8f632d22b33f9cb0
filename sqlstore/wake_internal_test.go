package sqlstore

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/riverqueue/river/rivertype"
)

// TestWakersSettle: a commit wakes each client once with the queues its
// transaction inserted into; a rollback wakes nobody; no entry outlives
// its transaction; a removed client is not woken.
func TestWakersSettle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		inserts   []string
		committed bool
		want      []string
	}{
		{"commit", []string{"triage", "outbox", "triage"}, true, []string{"triage", "outbox"}},
		{"rollback", []string{"triage"}, false, nil},
		{"nothing inserted", nil, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var w wakers
			var got [][]string
			p := &wakePilot{notify: func(_ context.Context, res []*rivertype.JobInsertResult) {
				var qs []string
				for _, r := range res {
					qs = append(qs, r.Job.Queue)
				}
				got = append(got, qs)
			}}
			remove := w.add(p)
			tx := new(sql.Tx)
			for _, q := range tc.inserts {
				w.inserted(tx, q)
			}
			w.settled(tx, tc.committed)
			if len(w.pending) != 0 {
				t.Fatalf("%d entries left after settling", len(w.pending))
			}
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("woke %v", got)
				}
			} else if len(got) != 1 || !slices.Equal(got[0], tc.want) {
				t.Fatalf("woke %v, want one wake of %v", got, tc.want)
			}
			remove()
			got = nil
			w.inserted(tx, "default")
			w.settled(tx, true)
			if len(w.clients) != 0 || len(got) != 0 {
				t.Fatalf("a removed client was woken: %v", got)
			}
		})
	}
}

// TestRiverOnlyThroughWake: Signoff reaches River's job table only
// through the store's insertTx, insertManyTx and retryTx (jobs.go), which
// note the jobs for the wake after commit. A direct call elsewhere (in
// this package, or through DB.River() anywhere in the module) would leave
// its job to the 5 s fallback poll; the demo's outbox deliveries did,
// once.
func TestRiverOnlyThroughWake(t *testing.T) {
	t.Parallel()
	// Any call of a method that inserts or retries a job, whatever it is
	// called on: River's client held in a variable is still River's client.
	// Nothing else in the module has methods of these names.
	inserts := regexp.MustCompile(`\.(Insert\w*|JobRetry\w*)\(`)
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || name == "gocache" || strings.HasPrefix(name, ".") && name != ".." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := inserts.FindString(line); m != "" && path != filepath.Join("..", "sqlstore", "jobs.go") {
				t.Errorf("%s:%d: %s outside sqlstore/jobs.go: enqueue through the store (Enqueue, EnqueueTx; in sqlstore insertTx, insertManyTx or retryTx)", path, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
