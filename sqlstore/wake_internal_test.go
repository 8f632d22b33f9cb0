package sqlstore

import (
	"context"
	"database/sql"
	"slices"
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
			if w.any() || len(got) != 0 {
				t.Fatalf("a removed client was woken: %v", got)
			}
		})
	}
}
