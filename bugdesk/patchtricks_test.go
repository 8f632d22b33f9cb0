package bugdesk

import (
	"context"
	"testing"

	"github.com/signoff-dev/signoff"
)

// TestFixerPatchTricksOnTests: a fixer's patch that renames a test file
// to a source path, only changes a test file's mode, or reaches a test
// through a case or ../ trick is refused before it spends an attempt.
func TestFixerPatchTricksOnTests(t *testing.T) {
	sc := newFixingCase(t, 300)
	ctx := context.Background()
	st := sc.open(t)
	d := sc.desk(st, nil)
	fixer, err := st.CreateActor(ctx, signoff.CLIActor(sc.ws), "fixer", signoff.RoleFixer)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, patch string }{
		{"rename a test to source", "diff --git a/cart/cart_test.go b/cart/cart_helpers.go\nsimilarity index 100%\nrename from cart/cart_test.go\nrename to cart/cart_helpers.go\n"},
		{"mode of a test", "diff --git a/cart/cart_test.go b/cart/cart_test.go\nold mode 100644\nnew mode 100755\n"},
		{"dot-dot path", "diff --git a/cart/../cart/cart_test.go b/cart/../cart/cart_test.go\ndeleted file mode 100644\n--- a/cart/../cart/cart_test.go\n+++ /dev/null\n@@ -1 +0,0 @@\n-package cart\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := d.SubmitCandidate(ctx, fixer, sc.caseID, proposal{Patch: []byte(tc.patch)}, "", signoff.EvidenceLive)
			if err == nil {
				t.Fatal("accepted")
			}
			if c := signoff.ErrorCode(err); c != signoff.EFORBIDDEN && c != signoff.EINVALID {
				t.Fatalf("got %v, want a refusal", err)
			}
			t.Logf("%v", err)
		})
	}
	c, l, err := d.loop(ctx, sys(sc.ws), sc.caseID)
	if err != nil || c.FixAttempts != 0 || len(l.State.Candidates) != 0 {
		t.Fatalf("attempts %d, candidates %d, %v", c.FixAttempts, len(l.State.Candidates), err)
	}
}
