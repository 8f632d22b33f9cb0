package main

import (
	"testing"

	"github.com/signoff-dev/signoff/metrics"
	"github.com/signoff-dev/signoff/sqlstore"
)

// TestTallyOther: the store counts an unknown verdict under the label the
// metrics package gives everything unknown, without importing it.
func TestTallyOther(t *testing.T) {
	t.Parallel()
	if sqlstore.TallyOther != metrics.Other {
		t.Fatalf("sqlstore.TallyOther = %q, metrics.Other = %q", sqlstore.TallyOther, metrics.Other)
	}
}
