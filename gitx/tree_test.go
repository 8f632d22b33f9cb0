package gitx

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSetSignoffRefOnlyUnderSignoff(t *testing.T) {
	needGit(t)
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	id := commit(t, r, "one", map[string]string{"a.txt": "a\n"})
	for _, ref := range []string{"refs/heads/main", "refs/tags/x", "HEAD", "refs/signoff/../heads/x", "refs/signoff/"} {
		if err := r.SetSignoffRef(ctx, ref, id); !errors.Is(err, ErrInvalid) {
			t.Errorf("SetSignoffRef(%q) = %v, want ErrInvalid", ref, err)
		}
	}
	if err := r.SetSignoffRef(ctx, "refs/signoff/harness/x", id); err != nil {
		t.Fatal(err)
	}
	if got, err := r.RevParse(ctx, "refs/signoff/harness/x"); err != nil || got != id {
		t.Errorf("ref -> %s (%v), want %s", got, err, id)
	}
	when, err := r.CommitTime(ctx, id)
	if err != nil || when.IsZero() || time.Since(when) < 0 {
		t.Errorf("CommitTime = %v, %v", when, err)
	}
}
