package sqlstore_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// TestIntakeRulesRequired: the store applies no airlock of its own, so a
// store without intake rules must not open, or its SubmitReport, Answer
// and RequestInfo would keep hostile text as it came. The engines give
// the rules; opening the store directly without them is refused, before
// any migration runs.
func TestIntakeRulesRequired(t *testing.T) {
	t.Parallel()
	db, err := sqlite.OpenDB(filepath.Join(t.TempDir(), "bare.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if s, err := sqlstore.New(db, sqlite.Dialect, sqlstore.Options{}); err == nil || !strings.Contains(err.Error(), "intake") {
		t.Fatalf("New without intake rules = %v, %v; want refused", s, err)
	}
	if s, err := sqlstore.Open(context.Background(), db, sqlite.Dialect, sqlite.Schema(db), sqlstore.Options{}); err == nil || !strings.Contains(err.Error(), "intake") {
		t.Fatalf("Open without intake rules = %v, %v; want refused", s, err)
	}
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM sqlite_master`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a refused Open left %d schema objects (%v)", n, err)
	}
}
