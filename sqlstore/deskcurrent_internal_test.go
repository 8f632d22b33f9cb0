package sqlstore

import (
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
)

// TestDeskCurrentApproval: the inbox counts an approval only for the
// case's current subject: a change's newest plan digest; for a bug, an
// approval recorded no earlier than its newest candidate (a new candidate
// supersedes every approval before it).
func TestDeskCurrentApproval(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	chg := &DeskCase{Case: signoff.Case{Kind: signoff.KindChange}}
	if !current(chg, "d2", micros(t0), "d2") || current(chg, "d1", micros(t0), "d2") || current(chg, "d1", micros(t0), "") {
		t.Error("change: only the newest plan's digest counts")
	}
	bug := &DeskCase{Case: signoff.Case{Kind: signoff.KindBug}, Loop: &signoff.BugLoopState{Candidates: []signoff.Candidate{
		{ID: "cand_1", SubmittedAt: t0}, {ID: "cand_2", SubmittedAt: t0.Add(time.Hour)}}}}
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{{t0.Add(30 * time.Minute), false}, {t0.Add(time.Hour), true}, {t0.Add(2 * time.Hour), true}} {
		if got := current(bug, "any", micros(tc.at), ""); got != tc.want {
			t.Errorf("bug approval at %s: %v, want %v", tc.at, got, tc.want)
		}
	}
	if current(&DeskCase{Case: signoff.Case{Kind: signoff.KindBug}}, "any", micros(t0), "") {
		t.Error("a bug without its loop read counts an approval")
	}
}
