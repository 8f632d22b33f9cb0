package sqlstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/triage"
)

func TestNextTicketID(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		ids  []string
		want string
	}{
		{nil, "T-1"},
		{[]string{"T-1"}, "T-2"},
		{[]string{"ABC-7", "ABC-12", "ABC-3"}, "ABC-13"},
		{[]string{"AB-1", "AB-2", "XY-40"}, "AB-3"},           // the most common prefix, not the highest number
		{[]string{"XY-9", "AB-1"}, "AB-2"},                    // a tie goes to the alphabetically first
		{[]string{"PROJ12", "PROJ-3"}, "PROJ-13"},             // numbers written without a dash count
		{[]string{"AB-1", "AB-x", "AB-02", "AB-1.5"}, "AB-2"}, // only plain numbers count
		{[]string{"123", "456"}, "T-1"},                       // no alphabetic prefix at all
		{[]string{"ab-1", "AB-1", "AB-2"}, "AB-3"},
		{[]string{"T-1", "t-2"}, "T-3"}, // never an id that differs only in case
	} {
		if got := nextTicketID(tt.ids); got != tt.want {
			t.Errorf("nextTicketID(%v) = %q, want %q", tt.ids, got, tt.want)
		}
	}
}

// TestCrashDigest proves the hand-written digest is canonical.Digest.
func TestCrashDigest(t *testing.T) {
	t.Parallel()
	evs := []triage.CrashEvent{
		{Time: time.Date(2026, 9, 1, 4, 26, 0, 0, time.UTC), AppVersion: "2.4.0", Device: "Pixel 7", OS: "Android 14", Signature: "Exc:10", StackTop: `A.b(A.kt:142) "quoted" \ back`, UserID: "u1"},
		{Time: time.Date(2026, 9, 1, 4, 26, 0, 123456000, time.UTC), Signature: "ünïcödé <&> \u2028 tab\t", UserID: "日本"},
		{},
	}
	for n := range len(evs) + 1 {
		want, err := canonical.Digest(evs[:n])
		if err != nil {
			t.Fatal(err)
		}
		if got := crashDigest(evs[:n]); got != want {
			t.Errorf("crashDigest of %d events = %s, want %s", n, got, want)
		}
	}
}

func TestInsertSQL(t *testing.T) {
	t.Parallel()
	if got, want := insertSQL("t", []string{"a", "b"}, 2, true), "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4)"; got != want {
		t.Errorf("numbered = %q, want %q", got, want)
	}
	if got, want := insertSQL("t", []string{"a", "b"}, 2, false), "INSERT INTO t (a, b) VALUES (?, ?), (?, ?)"; got != want {
		t.Errorf("anonymous = %q, want %q", got, want)
	}
}

func BenchmarkCrashDigest(b *testing.B) {
	evs := make([]triage.CrashEvent, 100_000)
	for i := range evs {
		evs[i] = triage.CrashEvent{Time: time.Unix(int64(i), 0).UTC(), AppVersion: "2.4.1", Device: "Pixel 8", OS: "Android 15",
			Signature: fmt.Sprintf("Exc:%d", i%250), StackTop: "Module.call(Module.kt:12)", UserID: fmt.Sprintf("u%d", i)}
	}
	b.ResetTimer()
	for range b.N {
		crashDigest(evs)
	}
}
