package verify_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/verify"
)

// gitRepo makes a repository with one commit per file set, in order, and
// returns the commit ids.
func gitRepo(t *testing.T, commits ...map[string]string) (*gitx.Repo, []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	r := &gitx.Repo{Dir: t.TempDir()}
	if err := r.Init(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i, files := range commits {
		for p, c := range files {
			full := filepath.Join(r.Dir, filepath.FromSlash(p))
			if c == "" {
				os.Remove(full)
				continue
			}
			os.MkdirAll(filepath.Dir(full), 0o755)
			if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.AddAll(ctx); err != nil {
			t.Fatal(err)
		}
		id, err := r.Commit(ctx, "commit", gitx.Signature{Name: "t", Email: "t@example.invalid", When: time.Unix(1_800_000_000+int64(i), 0)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return r, ids
}

func TestCommitTestsFrom(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, ids := gitRepo(t,
		map[string]string{"go.mod": "module m\n", "cart/cart.go": "package cart\n", "cart/cart_test.go": "package cart\n", "cart/old_test.go": "package cart\n"},
		map[string]string{"cart/cart.go": "package cart\n// fixed\n", "cart/cart_test.go": "package cart\n// new test\n",
			"cart/testdata/in.txt": "x\n", "cart/old_test.go": "", "README": "fix\n"},
	)
	base, fix := ids[0], ids[1]
	head, _ := r.RevParse(ctx, "HEAD")
	when, err := r.CommitTime(ctx, fix)
	if err != nil {
		t.Fatal(err)
	}
	globs := verify.Harness{}.ProtectedGlobs()
	tc, err := verify.CommitTestsFrom(ctx, r, base, fix, globs, when)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"cart/cart_test.go", "cart/testdata/in.txt"}; !slices.Equal(tc.Files, want) || !slices.Equal(tc.Removed, []string{"cart/old_test.go"}) {
		t.Errorf("files %q removed %q, want %q and cart/old_test.go", tc.Files, tc.Removed, want)
	}
	changed, _ := r.DiffNames(ctx, base, tc.Commit)
	if want := []string{"cart/cart_test.go", "cart/old_test.go", "cart/testdata/in.txt"}; !slices.Equal(changed, want) {
		t.Errorf("tests commit changes %q, want only the test paths %q", changed, want)
	}
	if b, _ := r.ShowFile(ctx, tc.Commit, "cart/cart.go"); string(b) != "package cart\n" {
		t.Errorf("tests commit carries the fix: cart/cart.go = %q", b)
	}
	if parents, _ := r.Parents(ctx, tc.Commit); !slices.Equal(parents, []string{base}) {
		t.Errorf("parents %q, want base", parents)
	}
	if got, err := r.RevParse(ctx, tc.Ref); err != nil || got != tc.Commit || !strings.HasPrefix(tc.Ref, "refs/signoff/harness/"+base[:12]+"-") {
		t.Errorf("ref %s -> %s (%v), want %s", tc.Ref, got, err, tc.Commit)
	}
	again, err := verify.CommitTestsFrom(ctx, r, base, fix, globs, when)
	if err != nil || again.Commit != tc.Commit {
		t.Errorf("second commit %s (%v), want the same %s: the commit must be reproducible", again.Commit, err, tc.Commit)
	}
	if now, _ := r.RevParse(ctx, "HEAD"); now != head {
		t.Errorf("HEAD moved to %s", now)
	}
	if clean, err := r.IsClean(ctx); err != nil || !clean {
		t.Errorf("working tree or index changed (clean %v, %v)", clean, err)
	}

	// A fix without test changes has nothing to make tests from.
	if _, err := verify.CommitTestsFrom(ctx, r, tc.Commit, tc.Commit, globs, when); err == nil {
		t.Error("a commit changing no test file made a tests commit")
	}
}

func TestCommitTestPatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, ids := gitRepo(t,
		map[string]string{"go.mod": "module m\n", "cart/cart.go": "package cart\n", "cart/cart_test.go": "package cart\n"},
		map[string]string{"cart/cart.go": "package cart\n// fixed\n", "cart/cart_test.go": "package cart\n// new test\n"},
	)
	base, fix := ids[0], ids[1]
	globs := verify.Harness{}.ProtectedGlobs()
	full, err := r.Diff(ctx, base, fix)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify.CommitTestPatch(ctx, r, base, full, globs, time.Unix(1_800_000_000, 0)); err == nil || !strings.Contains(err.Error(), "cart/cart.go") {
		t.Errorf("a patch touching cart/cart.go: %v, want refused naming it", err)
	}
	refs, _ := exec.Command("git", "-C", r.Dir, "for-each-ref", "refs/signoff/").Output()
	if len(refs) != 0 {
		t.Errorf("a refused patch left a ref: %s", refs)
	}
	tests, _, _ := verify.SplitChanges(ctx, r, base, fix, globs)
	onlyTests, err := exec.Command("git", "-C", r.Dir, "diff", base, fix, "--", tests[0]).Output()
	if err != nil {
		t.Fatal(err)
	}
	tc, err := verify.CommitTestPatch(ctx, r, base, onlyTests, globs, time.Unix(1_800_000_000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := r.ShowFile(ctx, tc.Commit, "cart/cart_test.go"); string(b) != "package cart\n// new test\n" {
		t.Errorf("patched test file = %q", b)
	}
	if clean, err := r.IsClean(ctx); err != nil || !clean {
		t.Errorf("working tree or index changed (clean %v, %v)", clean, err)
	}
}

// TestCommitTestsFromRefusesLinks: a test path that is a symbolic link
// could point the frozen test tree at any file; it is refused.
func TestCommitTestsFromRefusesLinks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r, ids := gitRepo(t, map[string]string{"go.mod": "module m\n", "cart/cart.go": "package cart\n"})
	if err := os.Symlink("../cart/cart.go", filepath.Join(r.Dir, "cart", "link_test.go")); err != nil {
		t.Skip(err)
	}
	if err := r.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	fix, err := r.Commit(ctx, "link", gitx.Signature{Name: "t", Email: "t@example.invalid", When: time.Unix(1_800_000_000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify.CommitTestsFrom(ctx, r, ids[0], fix, verify.Harness{}.ProtectedGlobs(), time.Unix(1_800_000_000, 0)); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a symlinked test file: %v, want refused", err)
	}
}

// A fix that turns a non-test symlink of base (pkg -> real) into a folder
// holding a test file changes a non-test path too: the tests commit is
// refused rather than made over the link (red-team check that held).
func TestCommitTestsFromRefusesATestBelowAReplacedSymlink(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	commitFiles(t, dir, map[string]string{"go.mod": "module m\n", "real/a.go": "package real\n"})
	if err := os.Symlink("real", filepath.Join(dir, "pkg")); err != nil {
		t.Fatal(err)
	}
	base := commitFiles(t, dir, map[string]string{"README": "x\n"})
	if err := os.Remove(filepath.Join(dir, "pkg")); err != nil {
		t.Fatal(err)
	}
	fix := commitFiles(t, dir, map[string]string{"pkg/a_test.go": "package real\n", "pkg/a.go": "package real\n"})
	tc, err := verify.CommitTestsFrom(context.Background(), &gitx.Repo{Dir: dir}, base, fix, verify.DefaultProtected, time.Unix(1700000000, 0))
	if err == nil || !strings.Contains(err.Error(), "non-test") {
		t.Fatalf("CommitTestsFrom = %+v, %v: want it refused for changing a non-test path", tc, err)
	}
}
