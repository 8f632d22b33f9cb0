package triage

import (
	"slices"
	"strings"
	"testing"
)

// An invented note-taking app's tracker: the evidence parts must name
// what they weigh, and move the score the way they say.
func evidenceTracker() *TrackerIndex {
	return NewTrackerIndex([]Ticket{
		{ID: "N-1", Title: "Notes vanish after syncing between two devices", Description: "Editing one note on a tablet and a phone within a minute drops the older edit; the `sync.conflict_policy` setting is ignored.", Status: "open", Component: "sync", AffectedVersions: []string{"4.2.0"}},
		{ID: "N-2", Title: "Checklist items reorder themselves when a note is reopened", Description: "Ticked items move to the top after closing and reopening the note.", Status: "open", Component: "editor"},
		{ID: "N-3", Title: "PDF export cuts off the last page on Android 14", Description: "Exporting a long note to PDF drops the final page on Android only.", Status: "open", Component: "export"},
		{ID: "N-4", Title: "Reminders fire an hour late after a daylight saving change", Description: "Reminder times shift by one hour.", Status: "open", Component: "reminders"},
		{ID: "N-5", Title: "Search misses words with accents", Description: "Searching for cafe does not find café.", Status: "open", Component: "search"},
		{ID: "N-6", Title: "Images in notes load slowly on a weak connection", Description: "Thumbnails take seconds to appear.", Status: "closed", Component: "editor"},
	})
}

func findHit(hits []Hit, id string) (Hit, bool) {
	i := slices.IndexFunc(hits, func(h Hit) bool { return h.ID == id })
	if i < 0 {
		return Hit{}, false
	}
	return hits[i], true
}

func TestDuplicateEvidenceParts(t *testing.T) {
	t.Parallel()
	ix := evidenceTracker()
	sync := "My notes disappear after I sync my phone and my tablet, even with sync.conflict_policy set to keep both."
	tests := []struct {
		name    string
		q       Query
		id      string
		wantWhy []string // substrings of the evidence line and reasons
		notWhy  []string
	}{
		{"component agrees, concrete key, stands out", Query{Text: sync, Component: "sync", AppVersion: "4.2.0"}, "N-1",
			[]string{"component sync +0.05", "concrete sync.conflict_policy", "stands out"}, nil},
		{"open ticket, later version", Query{Text: sync, Component: "sync", AppVersion: "4.3.0"}, "N-1",
			[]string{"open since 4.2.0"}, nil},
		{"component differs", Query{Text: sync, Component: "editor"}, "N-1",
			[]string{"component sync (report: editor) -0.05"}, nil},
		{"another platform: penalised and never the standout", Query{Text: "Exporting my long note to PDF cuts off the last page", OS: "iOS 18", Component: "export"}, "N-3",
			[]string{"platform only android"}, []string{"stands out"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h, ok := findHit(ix.Search(tc.q, 5), tc.id)
			if !ok {
				t.Fatalf("%s not found", tc.id)
			}
			why := strings.Join(h.Why, "; ")
			for _, w := range tc.wantWhy {
				if !strings.Contains(why, w) {
					t.Errorf("%s: want %q in %s", tc.id, w, why)
				}
			}
			for _, w := range tc.notWhy {
				if strings.Contains(why, w) {
					t.Errorf("%s: unwanted %q in %s", tc.id, w, why)
				}
			}
		})
	}
	// Agreement moves the score: the same report scores higher against the
	// ticket of its own component than when classified elsewhere.
	same, _ := findHit(ix.Search(Query{Text: sync, Component: "sync"}, 5), "N-1")
	other, _ := findHit(ix.Search(Query{Text: sync, Component: "editor"}, 5), "N-1")
	if same.Score <= other.Score {
		t.Errorf("component agreement: %.3f, disagreement %.3f", same.Score, other.Score)
	}
}

func TestStandoutOnlyForTheNearestOpenOnPlatformTicket(t *testing.T) {
	t.Parallel()
	mk := func(id string, raw, text float64, closed, off bool) Hit {
		return Hit{ID: id, raw: raw, Words: text, closed: closed, offPlatform: off}
	}
	tests := []struct {
		name string
		hits []Hit
		want string // the hit that stands out, "" for none
	}{
		{"clear top", []Hit{mk("A", 0.5, 0.4, false, false), mk("B", 0.1, 0.1, false, false), mk("C", 0.05, 0.05, false, false)}, "A"},
		{"closed top is a rival, not a target", []Hit{mk("A", 0.5, 0.4, true, false), mk("B", 0.45, 0.4, false, false), mk("C", 0.05, 0.05, false, false)}, ""},
		{"off-platform top is not a target", []Hit{mk("A", 0.5, 0.4, false, true), mk("B", 0.1, 0.1, false, false)}, ""},
		{"close runner-up", []Hit{mk("A", 0.5, 0.4, false, false), mk("B", 0.47, 0.4, false, false), mk("C", 0.05, 0.05, false, false)}, ""},
		{"words barely match", []Hit{mk("A", 0.5, 0.1, false, false), mk("B", 0.05, 0.05, false, false), mk("C", 0.0, 0.0, false, false)}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			hits := slices.Clone(tc.hits)
			applyStandout(hits, func(h Hit) bool { return h.closed })
			got := ""
			for i, h := range hits {
				if h.raw > tc.hits[i].raw {
					got = h.ID
				}
			}
			if got != tc.want {
				t.Errorf("stands out: %q, want %q (%v)", got, tc.want, hits)
			}
		})
	}
}

func TestConcreteTokens(t *testing.T) {
	t.Parallel()
	ix := evidenceTracker()
	got := ix.concreteTokens("Set `retry_limit: 3` and `timeout:` in app.config.json; ERR_SYNC_409 after 300 ms, user-facing pull-to-refresh, myNoteView")
	for _, w := range []string{"retry_limit", "timeout", "app.config.json", "err_sync_409", "300 ms", "mynoteview"} {
		if !slices.Contains(got, w) {
			t.Errorf("want %q in %v", w, got)
		}
	}
	for _, w := range []string{"pull-to-refresh", "user-facing"} {
		if slices.Contains(got, w) {
			t.Errorf("prose compound %q in %v", w, got)
		}
	}
	if !containsWord("the sync.conflict_policy key", "sync.conflict_policy") || containsWord("resynced", "sync") {
		t.Error("containsWord: whole words only")
	}
}
