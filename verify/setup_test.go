package verify_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/verify"
)

// sample writes a fresh ShopLite repository for one test.
func sample(t testing.TB) *shoplite.Sample {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	s, err := shoplite.Build(context.Background(), filepath.Join(t.TempDir(), "shoplite"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// couponHarness is ShopLite's coupon harness, read through ParseHarness
// so the two packages are held to the same JSON.
func couponHarness(t testing.TB, s *shoplite.Sample, mods ...func(*verify.Harness)) verify.Harness {
	t.Helper()
	b, err := json.Marshal(s.CouponHarness())
	if err != nil {
		t.Fatal(err)
	}
	h, err := verify.ParseHarness(b)
	if err != nil {
		t.Fatalf("ShopLite's coupon harness: %v", err)
	}
	for _, m := range mods {
		m(&h)
	}
	return h
}

// commitOn commits files on a new branch from parent and returns the
// commit; main stays checked out.
func commitOn(t testing.TB, s *shoplite.Sample, branch, parent string, files map[string]string) string {
	t.Helper()
	ctx := context.Background()
	r := &gitx.Repo{Dir: s.Dir}
	if err := r.CreateBranch(ctx, branch, parent); err != nil {
		t.Fatal(err)
	}
	if err := r.Checkout(ctx, branch); err != nil {
		t.Fatal(err)
	}
	for p, c := range files {
		full := filepath.Join(s.Dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	id, err := r.Commit(ctx, "test: "+branch, gitx.Signature{Name: "t", Email: "t@example.invalid", When: time.Unix(1_800_000_000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Checkout(ctx, shoplite.BranchMain); err != nil {
		t.Fatal(err)
	}
	return id
}
