package gitx

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var sig = Signature{Name: "Test Author", Email: "author@example.test", When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}

func needGit(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("git not installed")
	}
}

func newRepo(tb testing.TB) *Repo {
	tb.Helper()
	needGit(tb)
	r := &Repo{Dir: filepath.Join(tb.TempDir(), "repo")}
	if err := r.Init(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return r
}

func write(tb testing.TB, r *Repo, files map[string]string) {
	tb.Helper()
	for name, content := range files {
		p := filepath.Join(r.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

func commit(tb testing.TB, r *Repo, msg string, files map[string]string) string {
	tb.Helper()
	ctx := context.Background()
	write(tb, r, files)
	if err := r.AddAll(ctx); err != nil {
		tb.Fatal(err)
	}
	id, err := r.Commit(ctx, msg, sig)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

func must[T any](tb testing.TB) func(T, error) T {
	return func(v T, err error) T {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
}

func TestGitCommitIsDeterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	files := map[string]string{"a.txt": "one\n", "dir/b.txt": "two\n"}
	a, b := newRepo(t), newRepo(t)
	ida, idb := commit(t, a, "first", files), commit(t, b, "first", files)
	if ida != idb {
		t.Fatalf("same content, message and signature gave commits %s and %s", ida, idb)
	}
	if br := must[string](t)(a.CurrentBranch(ctx)); br != "main" {
		t.Errorf("current branch %q, want main", br)
	}
	raw := string(must[[]byte](t)(a.run(ctx, nil, nil, "cat-file", "commit", ida)))
	for _, want := range []string{
		"author Test Author <author@example.test> 1767323045 +0000",
		"committer Test Author <author@example.test> 1767323045 +0000",
	} {
		if !strings.Contains(raw, want) {
			t.Errorf("commit object lacks %q:\n%s", want, raw)
		}
	}
	if _, err := a.Commit(ctx, "nothing staged", sig); err == nil {
		t.Error("Commit with nothing staged succeeded")
	}
	if clean := must[bool](t)(a.IsClean(ctx)); !clean {
		t.Error("IsClean = false after commit")
	}
	write(t, a, map[string]string{"new.txt": "x"})
	if clean := must[bool](t)(a.IsClean(ctx)); clean {
		t.Error("IsClean = true with an untracked file")
	}
}

func TestGitRefusesBadArguments(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	ctx := context.Background()
	base := commit(t, r, "base", map[string]string{"a.txt": "a\n"})
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"rev option", func() error { _, err := r.RevParse(ctx, "--all"); return err }},
		{"empty rev", func() error { _, err := r.RevParse(ctx, ""); return err }},
		{"rev newline", func() error { _, err := r.RevParse(ctx, "main\n--all"); return err }},
		{"diff option", func() error { _, err := r.Diff(ctx, base, "--output=/tmp/x"); return err }},
		{"names option", func() error { _, err := r.DiffNames(ctx, "-R", base); return err }},
		{"checkout option", func() error { return r.Checkout(ctx, "-f") }},
		{"merge option", func() error { _, err := r.Merge(ctx, "--abort", "m", sig); return err }},
		{"ancestor option", func() error { _, err := r.IsAncestor(ctx, base, "--fork-point"); return err }},
		{"worktree option", func() error { _, err := r.AddWorktree(ctx, "--lock"); return err }},
		{"show path option", func() error { _, err := r.ShowFile(ctx, base, "-p"); return err }},
		{"show path escape", func() error { _, err := r.ShowFile(ctx, base, "../etc/passwd"); return err }},
		{"show path absolute", func() error { _, err := r.ShowFile(ctx, base, "/etc/passwd"); return err }},
		{"show path unclean", func() error { _, err := r.ShowFile(ctx, base, "./a.txt"); return err }},
		{"show rev colon", func() error { _, err := r.ShowFile(ctx, base+":a.txt", "a.txt"); return err }},
		{"add option", func() error { return r.Add(ctx, "--all") }},
		{"branch option", func() error { return r.CreateBranch(ctx, "-D", base) }},
		{"branch dotdot", func() error { return r.CreateBranch(ctx, "a..b", base) }},
		{"branch dot part", func() error { return r.CreateBranch(ctx, "x/.hidden", base) }},
		{"tag option", func() error { return r.Tag(ctx, "-d", base) }},
		{"clone option", func() error { _, err := Clone(ctx, "--upload-pack=touch /tmp/pwned", t.TempDir()); return err }},
		{"empty message", func() error { _, err := r.Commit(ctx, " \n", sig); return err }},
		{"bad signature", func() error { _, err := r.Commit(ctx, "m", Signature{Name: "x", Email: "a>b"}); return err }},
	} {
		if err := tc.call(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", tc.name, err)
		}
	}
}

func TestGitErrorCarriesBoundedStderr(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	_, err := r.ShowFile(context.Background(), "main", "missing.txt")
	var ge *Error
	if !errors.As(err, &ge) || ge.ExitCode != 128 || ge.Stderr == "" || strings.HasSuffix(ge.Stderr, "\n") {
		t.Fatalf("err = %#v, want *Error with exit 128 and trimmed stderr", err)
	}
	if !strings.Contains(err.Error(), "git cat-file blob main:missing.txt") {
		t.Errorf("error %q does not name the command", err)
	}

	b := &boundedBuffer{max: 10}
	b.Write([]byte("0123456789abcdef"))
	b.Write([]byte("more"))
	if got := b.String(); got != "0123456789... (10 more bytes)" {
		t.Errorf("bounded buffer = %q", got)
	}
	stderr := &boundedBuffer{max: 1 << 20}
	stderr.Write(bytes.Repeat([]byte("e"), 10_000))
	long := newError([]string{strings.Repeat("a", 1000)}, errors.New("boom"), stderr)
	if len(long.Stderr) > maxStderrMsg+20 || len(long.Args[0]) > maxArgInErr+3 {
		t.Errorf("error not bounded: stderr %d bytes, arg %d bytes", len(long.Stderr), len(long.Args[0]))
	}
}

func TestGitDiffApplyAndNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	body := strings.Repeat("line of text that stays the same\n", 20)
	a := commit(t, r, "a", map[string]string{"keep.txt": "keep\n", "old/name.txt": body, "edit.txt": "x\n", "gone.txt": "bye\n"})
	if err := os.Remove(filepath.Join(r.Dir, "old", "name.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(r.Dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	b := commit(t, r, "b", map[string]string{"new/name.txt": body + "one more\n", "edit.txt": "y\n", "bin.dat": "\x00\x01\x02"})

	names := must[[]string](t)(r.DiffNames(ctx, a, b))
	want := []string{"bin.dat", "edit.txt", "gone.txt", "new/name.txt", "old/name.txt"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("DiffNames = %v, want %v (a rename lists both sides)", names, want)
	}
	patch := must[[]byte](t)(r.Diff(ctx, a, b))
	for _, s := range []string{"rename from old/name.txt", "rename to new/name.txt", "--- a/edit.txt", "+++ b/edit.txt", "GIT binary patch"} {
		if !bytes.Contains(patch, []byte(s)) {
			t.Errorf("diff lacks %q:\n%s", s, patch)
		}
	}

	// The patch applied on a's checkout reproduces b's tree exactly.
	w := must[*Worktree](t)(r.AddWorktree(ctx, a))
	defer w.Close()
	if err := w.Apply(ctx, patch); err != nil {
		t.Fatal(err)
	}
	got := must[string](t)(w.Commit(ctx, "b again", sig))
	if ga, gb := must[TreeDigest](t)(w.TreeDigest(ctx, got)), must[TreeDigest](t)(r.TreeDigest(ctx, b)); ga != gb {
		t.Errorf("applied tree %+v != original %+v", ga, gb)
	}

	// A patch that does not apply changes nothing.
	if err := w.Apply(ctx, patch); !errors.Is(err, ErrConflict) {
		t.Errorf("re-applying: err = %v, want ErrConflict", err)
	}
	if clean := must[bool](t)(w.IsClean(ctx)); !clean {
		t.Error("a refused patch left changes")
	}
	if err := w.Apply(ctx, nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty patch: err = %v", err)
	}
	escape := []byte("diff --git a/../x b/../x\nnew file mode 100644\n--- /dev/null\n+++ b/../x\n@@ -0,0 +1 @@\n+x\n")
	if err := w.Apply(ctx, escape); err == nil {
		t.Error("a patch writing outside the tree applied")
	}

	if data := must[[]byte](t)(r.ShowFile(ctx, a, "old/name.txt")); string(data) != body {
		t.Errorf("ShowFile = %q", data)
	}
}

func TestGitMergeAndAncestry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	base := commit(t, r, "base", map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	if err := r.CreateBranch(ctx, "feature", base); err != nil {
		t.Fatal(err)
	}
	if err := r.CreateBranch(ctx, "feature", base); err == nil {
		t.Error("creating an existing branch succeeded")
	}
	if err := r.Checkout(ctx, "feature"); err != nil {
		t.Fatal(err)
	}
	feat := commit(t, r, "feature", map[string]string{"a.txt": "A\n"})
	if err := r.Checkout(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	// --no-ff: even a fast-forwardable merge makes a merge commit.
	m1 := must[string](t)(r.Merge(ctx, "feature", "merge feature", sig))
	parents := strings.Fields(must[string](t)(r.out(ctx, "rev-list", "--parents", "-n", "1", m1)))
	if len(parents) != 3 || parents[1] != base || parents[2] != feat {
		t.Errorf("merge commit parents %v, want [%s %s]", parents[1:], base, feat)
	}

	// A conflicting merge is aborted and leaves main where it was.
	if err := r.Checkout(ctx, "feature"); err != nil {
		t.Fatal(err)
	}
	other := commit(t, r, "feature b", map[string]string{"b.txt": "from feature\n"})
	if err := r.Checkout(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	mainB := commit(t, r, "main b", map[string]string{"b.txt": "from main\n"})
	if _, err := r.Merge(ctx, "feature", "conflict", sig); !errors.Is(err, ErrConflict) {
		t.Fatalf("conflicting merge: err = %v, want ErrConflict", err)
	}
	if head := must[string](t)(r.RevParse(ctx, "HEAD")); head != mainB {
		t.Errorf("HEAD moved to %s after an aborted merge", head)
	}
	if clean := must[bool](t)(r.IsClean(ctx)); !clean {
		t.Error("aborted merge left changes")
	}
	if mb := must[string](t)(r.MergeBase(ctx, mainB, other)); mb != feat {
		t.Errorf("MergeBase = %s, want %s", mb, feat)
	}

	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{base, m1, true}, {feat, m1, true}, {m1, m1, true}, {m1, base, false},
		{other, mainB, false}, {feat, other, true}, {"main", "main~1", false}, {"main~1", "main", true},
	} {
		if got := must[bool](t)(r.IsAncestor(ctx, tc.a, tc.b)); got != tc.want {
			t.Errorf("IsAncestor(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	if _, err := r.IsAncestor(ctx, base, strings.Repeat("0", 40)); err == nil {
		t.Error("IsAncestor with an unknown commit: no error")
	}

	if err := r.Tag(ctx, "v1.0.0", m1); err != nil {
		t.Fatal(err)
	}
	if tags := must[map[string]string](t)(r.Tags(ctx)); tags["v1.0.0"] != m1 {
		t.Errorf("Tags = %v", tags)
	}
	br := must[map[string]string](t)(r.Branches(ctx))
	if want := map[string]string{"main": mainB, "feature": other}; !reflect.DeepEqual(br, want) {
		t.Errorf("Branches = %v, want %v", br, want)
	}
}

func TestGitTreeDigest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	c1 := commit(t, r, "one", map[string]string{"a.txt": "hello\n", "d/b.txt": "world\n"})
	d1 := must[TreeDigest](t)(r.TreeDigest(ctx, c1))

	// Recompute by hand from the definition.
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	h := sha256.New()
	fmt.Fprintf(h, "100644 blob %s\ta.txt\x00", sum("hello\n"))
	fmt.Fprintf(h, "100644 blob %s\td/b.txt\x00", sum("world\n"))
	if want := hex.EncodeToString(h.Sum(nil)); d1.SHA256 != want || d1.Files != 2 {
		t.Errorf("digest %+v, want sha256 %s over 2 files", d1, want)
	}
	if tree := must[string](t)(r.RevParse(ctx, c1+"^{tree}")); d1.Tree != tree {
		t.Errorf("Tree = %s, want %s", d1.Tree, tree)
	}

	// Same tree through another history: same digest.
	o := newRepo(t)
	commit(t, o, "other history", map[string]string{"a.txt": "draft\n"})
	c2 := commit(t, o, "converge", map[string]string{"a.txt": "hello\n", "d/b.txt": "world\n"})
	if d2 := must[TreeDigest](t)(o.TreeDigest(ctx, c2)); d2 != d1 {
		t.Errorf("same files, different history: %+v != %+v", d2, d1)
	}

	// Mode, content and path changes all change it.
	if err := os.Chmod(filepath.Join(r.Dir, "a.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	c3 := commit(t, r, "exec", nil)
	c4 := commit(t, r, "content", map[string]string{"d/b.txt": "world!\n"})
	seen := map[string]bool{d1.SHA256: true}
	for _, c := range []string{c3, c4} {
		d := must[TreeDigest](t)(r.TreeDigest(ctx, c))
		if seen[d.SHA256] {
			t.Errorf("digest of %s repeats an earlier one", c)
		}
		seen[d.SHA256] = true
	}
}

func TestGitWorktreeCleanup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRepo(t)
	c1 := commit(t, r, "one", map[string]string{"a.txt": "1\n"})
	commit(t, r, "two", map[string]string{"a.txt": "2\n"})

	w := must[*Worktree](t)(r.AddWorktree(ctx, c1))
	if data, err := os.ReadFile(filepath.Join(w.Dir, "a.txt")); err != nil || string(data) != "1\n" {
		t.Fatalf("worktree content %q, %v", data, err)
	}
	if head := must[string](t)(w.RevParse(ctx, "HEAD")); head != c1 {
		t.Errorf("worktree HEAD %s, want %s", head, c1)
	}
	// Leave it dirty and with an untracked file: removal must still happen.
	write(t, &w.Repo, map[string]string{"a.txt": "dirty\n", "untracked.txt": "x"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := os.Stat(w.Dir); !os.IsNotExist(err) {
		t.Errorf("worktree dir still there: %v", err)
	}
	list := must[string](t)(r.out(ctx, "worktree", "list", "--porcelain"))
	if n := strings.Count(list, "worktree "); n != 1 {
		t.Errorf("git still lists %d worktrees:\n%s", n, list)
	}

	// A directory removed behind git's back is pruned on Close too.
	w2 := must[*Worktree](t)(r.AddWorktree(ctx, "main"))
	os.RemoveAll(w2.Dir)
	if err := w2.Close(); err != nil {
		t.Errorf("Close after external removal: %v", err)
	}
	if _, err := r.AddWorktree(ctx, strings.Repeat("f", 40)); err == nil {
		t.Error("worktree of an unknown commit succeeded")
	}
	list = must[string](t)(r.out(ctx, "worktree", "list", "--porcelain"))
	if n := strings.Count(list, "worktree "); n != 1 {
		t.Errorf("git lists %d worktrees after failures:\n%s", n, list)
	}
}

func TestGitClone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := newRepo(t)
	c1 := commit(t, src, "one", map[string]string{"a.txt": "1\n"})
	if err := src.CreateBranch(ctx, "topic/x", c1); err != nil {
		t.Fatal(err)
	}
	c2 := commit(t, src, "two", map[string]string{"a.txt": "2\n"})

	dst := must[*Repo](t)(Clone(ctx, src.Dir, filepath.Join(t.TempDir(), "clone")))
	if head := must[string](t)(dst.RevParse(ctx, "HEAD")); head != c2 {
		t.Errorf("clone HEAD %s, want %s", head, c2)
	}
	// A remote branch is checked out as a local tracking branch.
	if err := dst.Checkout(ctx, "topic/x"); err != nil {
		t.Fatal(err)
	}
	if br := must[string](t)(dst.CurrentBranch(ctx)); br != "topic/x" {
		t.Errorf("branch %q after checkout", br)
	}
	if err := dst.Checkout(ctx, c2); err != nil {
		t.Fatal(err)
	}
	if br := must[string](t)(dst.CurrentBranch(ctx)); br != "" {
		t.Errorf("checkout of a commit left branch %q, want detached", br)
	}
	// file:// URLs work too.
	if _, err := Clone(ctx, "file://"+src.Dir, filepath.Join(t.TempDir(), "url")); err != nil {
		t.Error(err)
	}
	if _, err := Clone(ctx, src.Dir, dst.Dir); err == nil {
		t.Error("clone into a non-empty directory succeeded")
	}
	if err := dst.Init(ctx); err == nil {
		t.Error("Init over an existing repository succeeded")
	}
}

// TestGitIgnoresHostConfig plants a hostile global config, environment and
// repository hook; none of them may change what gitx does.
func TestGitIgnoresHostConfig(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	home := t.TempDir()
	marker := filepath.Join(home, "hook-ran")
	hook := "#!/bin/sh\ntouch " + marker + "\nexit 1\n"
	hooks := filepath.Join(home, "hooks")
	os.MkdirAll(hooks, 0o755)
	for _, h := range []string{"pre-commit", "commit-msg", "post-commit", "post-checkout", "pre-merge-commit"} {
		os.WriteFile(filepath.Join(hooks, h), []byte(hook), 0o755)
	}
	gitconfig := "[user]\n\tname = Host User\n\temail = host@example.test\n[core]\n\thooksPath = " + hooks +
		"\n[commit]\n\tgpgSign = true\n[diff]\n\tnoprefix = true\n\texternal = false\n[color]\n\tui = always\n[init]\n\tdefaultBranch = trunk\n"
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o644)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", home)
	t.Setenv("GIT_DIR", "/nonexistent")
	t.Setenv("GIT_AUTHOR_NAME", "Env Author")
	t.Setenv("GIT_CONFIG_PARAMETERS", "'core.hooksPath'='"+hooks+"'")
	t.Setenv("LC_ALL", "de_DE.UTF-8")

	r := &Repo{Dir: filepath.Join(t.TempDir(), "repo")}
	if err := r.Init(ctx); err != nil {
		t.Fatal(err)
	}
	// A repository-local hook is not run either.
	os.WriteFile(filepath.Join(r.Dir, ".git", "hooks", "pre-commit"), []byte(hook), 0o755)
	a := commit(t, r, "a", map[string]string{"f.txt": "1\n"})
	b := commit(t, r, "b", map[string]string{"f.txt": "2\n"})
	if br := must[string](t)(r.CurrentBranch(ctx)); br != "main" {
		t.Errorf("branch %q, want main", br)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a hook ran")
	}
	patch := string(must[[]byte](t)(r.Diff(ctx, a, b)))
	if !strings.Contains(patch, "--- a/f.txt") || strings.Contains(patch, "\x1b[") {
		t.Errorf("host diff config leaked into the diff:\n%q", patch)
	}
	raw := string(must[[]byte](t)(r.run(ctx, nil, nil, "cat-file", "commit", b)))
	if !strings.Contains(raw, "author Test Author") || strings.Contains(raw, "gpgsig") {
		t.Errorf("host identity or signing leaked into the commit:\n%s", raw)
	}
}

func BenchmarkGitCommit(b *testing.B) {
	r := newRepo(b)
	ctx := context.Background()
	commit(b, r, "base", map[string]string{"a.txt": "0\n"})
	for i := 0; b.Loop(); i++ {
		write(b, r, map[string]string{"a.txt": fmt.Sprintf("%d\n", i+1)})
		if err := r.AddAll(ctx); err != nil {
			b.Fatal(err)
		}
		if _, err := r.Commit(ctx, "bump", sig); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGitIsAncestor(b *testing.B) {
	r := newRepo(b)
	ctx := context.Background()
	first := commit(b, r, "c0", map[string]string{"a.txt": "0\n"})
	var last string
	for i := 1; i < 200; i++ {
		last = commit(b, r, "c", map[string]string{"a.txt": fmt.Sprintf("%d\n", i)})
	}
	for b.Loop() {
		if ok, err := r.IsAncestor(ctx, first, last); err != nil || !ok {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkGitTreeDigest(b *testing.B) {
	r := newRepo(b)
	ctx := context.Background()
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("pkg%d/file%d.go", i%10, i)] = strings.Repeat("package x\n", 200)
	}
	c := commit(b, r, "tree", files)
	for b.Loop() {
		if _, err := r.TreeDigest(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGitWorktree(b *testing.B) {
	r := newRepo(b)
	ctx := context.Background()
	commit(b, r, "c", map[string]string{"a.txt": "0\n"})
	for b.Loop() {
		w, err := r.AddWorktree(ctx, "main")
		if err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGitRevParse is one git invocation through gitx: the floor under
// every other figure.
func BenchmarkGitRevParse(b *testing.B) {
	r := newRepo(b)
	ctx := context.Background()
	commit(b, r, "c", map[string]string{"a.txt": "0\n"})
	for b.Loop() {
		if _, err := r.RevParse(ctx, "HEAD"); err != nil {
			b.Fatal(err)
		}
	}
}
