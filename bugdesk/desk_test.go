package bugdesk

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/gitx"
)

func gitRepo(t *testing.T) (*gitx.Repo, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	r := &gitx.Repo{Dir: t.TempDir()}
	if err := r.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(r.Dir, "cart"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "cart", "cart.go"), []byte("package cart\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A symbolic link already in the repository, pointing out of it.
	if err := os.Symlink(t.TempDir(), filepath.Join(r.Dir, "cart", "lnk")); err != nil {
		t.Fatal(err)
	}
	if err := r.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	base, err := r.Commit(ctx, "base", gitx.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	return r, base
}

// TestProposalsWriteRegularFilesOnly: a proposal cannot write through a
// symbolic link in the repository, nor add one, by files or by patch.
func TestProposalsWriteRegularFilesOnly(t *testing.T) {
	r, base := gitRepo(t)
	d := &Desk{}
	p := project{ID: "prj_x", Repo: r}
	by := signoff.Actor{ID: "act_fixer", Name: "fixer", Role: signoff.RoleFixer}
	ctx := context.Background()
	for i, files := range [][]FileArg{
		{{Path: "cart/lnk/evil.go", Content: "package evil\n"}},
		{{Path: "cart/lnk", Content: "overwrite the link's target\n"}},
	} {
		_, _, err := d.commitFiles(ctx, p, base, files, nil, "b"+string(rune('a'+i)), "m", by)
		if signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Errorf("files %v: %v, want forbidden", files, err)
		}
	}
	patch := []byte("diff --git a/cart/new b/cart/new\nnew file mode 120000\nindex 0000000..1111111\n--- /dev/null\n+++ b/cart/new\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n")
	if _, _, err := d.commitFiles(ctx, p, base, nil, patch, "bp", "m", by); err == nil {
		t.Error("a patch adding a symbolic link was accepted")
	} else if signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Errorf("a patch adding a symbolic link: %v, want forbidden (refused as a link)", err)
	}
	// A plain file next to the link is fine.
	if _, _, err := d.commitFiles(ctx, p, base, []FileArg{{Path: "cart/cart.go", Content: "package cart\n\n// fixed\n"}}, nil, "ok", "m", by); err != nil {
		t.Errorf("plain file: %v", err)
	}
}

// TestSmokeWithoutChecksFailsClosed: nothing checked against the live
// service is not a pass.
func TestSmokeWithoutChecksFailsClosed(t *testing.T) {
	t.Parallel()
	res, ok := (&Desk{}).smoke(context.Background(), "http://127.0.0.1:1", nil)
	if ok || len(res) != 1 || res[0].OK {
		t.Fatalf("smoke with no checks = %+v, %v; want a failed result", res, ok)
	}
	res, ok = (&Desk{}).smoke(context.Background(), "", []signoff.SmokeCheck{{Name: "x", Path: "/"}})
	if ok {
		t.Fatalf("smoke without a live URL passed: %+v", res)
	}
}
