package shoplite_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/shoplite"
)

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

func build(t *testing.T) *shoplite.Sample {
	t.Helper()
	needTools(t, "git")
	s, err := shoplite.Build(context.Background(), filepath.Join(t.TempDir(), "shoplite"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// goEnv is the host environment with nothing that could point the go
// command elsewhere: ShopLite has no dependencies and needs no network.
func goEnv() []string {
	return append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local", "GOPROXY=off")
}

// testRun is the outcome of one test in `go test -json` output.
type testRun struct {
	Action string // pass, fail or skip
	Output string
}

// goTest runs `go test -json ./...` in dir and returns each test's outcome
// by bare name (ShopLite's test names are unique across its packages).
func goTest(t *testing.T, dir string) map[string]*testRun {
	t.Helper()
	cmd := exec.Command("go", "test", "-count=1", "-json", "./...")
	cmd.Dir, cmd.Env = dir, goEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("go test: %v", err)
	}
	runs := map[string]*testRun{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var ev struct{ Action, Package, Test, Output string }
		if err := dec.Decode(&ev); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go test -json output: %v\n%s\n%s", err, out, stderr.String())
		}
		if ev.Test == "" {
			if ev.Action == "fail" && !strings.Contains(string(out), `"Test":`) {
				t.Fatalf("package %s failed without running tests:\n%s%s", ev.Package, out, stderr.String())
			}
			continue
		}
		r := runs[ev.Test]
		if r == nil {
			r = &testRun{}
			runs[ev.Test] = r
		}
		switch ev.Action {
		case "output":
			r.Output += ev.Output
		case "pass", "fail", "skip":
			r.Action = ev.Action
		}
	}
	if len(runs) == 0 {
		t.Fatalf("go test ran no tests:\n%s\n%s", out, stderr.String())
	}
	return runs
}

func worktree(t *testing.T, s *shoplite.Sample, branch string) *gitx.Worktree {
	t.Helper()
	repo := &gitx.Repo{Dir: s.Dir}
	w, err := repo.AddWorktree(context.Background(), s.Branches[branch])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Error(err)
		}
	})
	return w
}

// restoreHarness writes the harness test files from tests_from over the
// worktree, as the verifier does.
func restoreHarness(t *testing.T, s *shoplite.Sample, w *gitx.Worktree, h shoplite.HarnessSpec) {
	t.Helper()
	repo := &gitx.Repo{Dir: s.Dir}
	for _, f := range h.TestFiles {
		data, err := repo.ShowFile(context.Background(), h.TestsFrom, f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.Dir, filepath.FromSlash(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func expect(t *testing.T, runs map[string]*testRun, name, action, output string) {
	t.Helper()
	r := runs[name]
	switch {
	case r == nil:
		t.Errorf("%s did not run", name)
	case r.Action != action:
		t.Errorf("%s: %s, want %s\n%s", name, r.Action, action, r.Output)
	case output != "" && !strings.Contains(r.Output, output):
		t.Errorf("%s output lacks %q:\n%s", name, output, r.Output)
	}
}

func expectPassToPass(t *testing.T, runs map[string]*testRun, except ...string) {
	t.Helper()
	for _, name := range shoplite.PassToPass {
		if !contains(except, name) {
			expect(t, runs, name, "pass", "")
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestSampleBuildIsReproducible(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := build(t), build(t)
	if !reflect.DeepEqual(a.Branches, b.Branches) || a.Base != b.Base {
		t.Fatalf("two builds differ:\n%v\n%v", a.Branches, b.Branches)
	}
	var names []string
	for _, br := range shoplite.Branches {
		names = append(names, br.Name)
	}
	var got []string
	for name := range a.Branches {
		got = append(got, name)
	}
	sort.Strings(names)
	sort.Strings(got)
	if !reflect.DeepEqual(got, names) || a.Base != a.Branches[shoplite.BranchMain] {
		t.Fatalf("branches %v (base %s), want %v", got, a.Base, names)
	}

	repo := &gitx.Repo{Dir: a.Dir}
	onDisk, err := repo.Branches(ctx)
	if err != nil || !reflect.DeepEqual(onDisk, a.Branches) {
		t.Errorf("repository branches %v, %v; Sample says %v", onDisk, err, a.Branches)
	}
	if br, _ := repo.CurrentBranch(ctx); br != shoplite.BranchMain {
		t.Errorf("checked out %q, want main", br)
	}
	if clean, err := repo.IsClean(ctx); !clean || err != nil {
		t.Errorf("working tree not clean after Build: %v", err)
	}
	for _, br := range shoplite.Branches {
		id := a.Branches[br.Name]
		if br.Parent != "" {
			if ok, err := repo.IsAncestor(ctx, a.Branches[br.Parent], id); !ok || err != nil {
				t.Errorf("%s is not on top of %s: %v", br.Name, br.Parent, err)
			}
		}
		msg, err := exec.Command("git", "-C", a.Dir, "log", "-1", "--format=%s%n%an <%ae>", id).Output()
		if err != nil || !strings.HasPrefix(string(msg), "[authored] ") || !strings.Contains(string(msg), shoplite.Author.Email) {
			t.Errorf("%s commit: %q, %v; want an [authored] message by %s", br.Name, msg, err, shoplite.Author.Email)
		}
		// The tree is exactly the embedded files.
		want, err := shoplite.Files(br.Name)
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("git", "-C", a.Dir, "ls-tree", "-r", "--name-only", id).Output()
		if err != nil {
			t.Fatal(err)
		}
		files := strings.Fields(string(out))
		if len(files) != len(want) {
			t.Errorf("%s has %d files, want %d: %v", br.Name, len(files), len(want), files)
		}
		for _, f := range files {
			data, err := repo.ShowFile(ctx, id, f)
			if err != nil || !bytes.Equal(data, want[f]) {
				t.Errorf("%s:%s differs from the embedded file (%v)", br.Name, f, err)
			}
		}
	}
	if names, _ := repo.DiffNames(ctx, a.Base, a.Branches[shoplite.BranchGenuine]); !reflect.DeepEqual(names, []string{"cart/cart.go"}) {
		t.Errorf("genuine fix touches %v, want only cart/cart.go", names)
	}

	// Build refuses a directory with anything in it.
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "keep.txt"), []byte("mine"), 0o644)
	if _, err := shoplite.Build(ctx, full); !errors.Is(err, shoplite.ErrNotEmpty) {
		t.Errorf("Build into a non-empty dir: %v, want ErrNotEmpty", err)
	}
}

func TestSampleHarnessDocument(t *testing.T) {
	t.Parallel()
	s := &shoplite.Sample{Base: "b", Branches: map[string]string{shoplite.BranchReproCoupon: "r", shoplite.BranchReproNegative: "n"}}
	data, err := json.Marshal(s.CouponHarness())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	json.Unmarshal(data, &doc)
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{"base", "command", "expected_failure", "fail_to_pass", "format", "pass_to_pass", "runs", "test_files", "tests_from", "timeout_seconds"}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("harness keys %v, want %v", keys, want)
	}
	h := s.CouponHarness()
	if h.Base != "b" || h.TestsFrom != "r" || h.ExpectedFailure != "8100" || h.Format != "go-test-json" ||
		!reflect.DeepEqual(h.Command, []string{"go", "test", "-json", "./..."}) || !reflect.DeepEqual(h.TestFiles, []string{"cart/coupon_repro_test.go"}) ||
		!reflect.DeepEqual(h.FailToPass, []string{"TestCouponAppliesOnce"}) || h.TimeoutSeconds != 300 || h.Runs != 1 || !contains(h.PassToPass, "TestZeroCoupon") {
		t.Errorf("coupon harness %+v", h)
	}
	if n := s.NegativeTotalHarness(); n.TestsFrom != "n" || n.ExpectedFailure != "-100" || n.FailToPass[0] != "TestCouponNeverNegative" {
		t.Errorf("negative harness %+v", n)
	}
}

// TestSampleBranchesBehave runs ShopLite's own tests on every branch with
// the host go toolchain and checks each branch does what it is for.
func TestSampleBranchesBehave(t *testing.T) {
	needTools(t, "git", "go")
	s := build(t)
	coupon, negative := s.CouponHarness(), s.NegativeTotalHarness()

	t.Run("base", func(t *testing.T) {
		t.Parallel()
		w := worktree(t, s, shoplite.BranchMain)
		if _, err := os.Stat(filepath.Join(w.Dir, "cart", "coupon_repro_test.go")); !os.IsNotExist(err) {
			t.Errorf("repro test present on main: %v", err)
		}
		runs := goTest(t, w.Dir)
		expectPassToPass(t, runs)
		if _, ok := runs["TestCouponAppliesOnce"]; ok {
			t.Error("TestCouponAppliesOnce ran on main")
		}
	})
	t.Run("repro/coupon", func(t *testing.T) {
		t.Parallel()
		runs := goTest(t, worktree(t, s, shoplite.BranchReproCoupon).Dir)
		expect(t, runs, "TestCouponAppliesOnce", "fail", coupon.ExpectedFailure)
		expectPassToPass(t, runs)
	})
	t.Run("repro/negative-total", func(t *testing.T) {
		t.Parallel()
		runs := goTest(t, worktree(t, s, shoplite.BranchReproNegative).Dir)
		expect(t, runs, "TestCouponNeverNegative", "fail", negative.ExpectedFailure)
		expectPassToPass(t, runs)
	})
	t.Run("genuine+harness", func(t *testing.T) {
		t.Parallel()
		w := worktree(t, s, shoplite.BranchGenuine)
		restoreHarness(t, s, w, coupon)
		runs := goTest(t, w.Dir)
		expect(t, runs, "TestCouponAppliesOnce", "pass", "")
		expectPassToPass(t, runs)
		for name, r := range runs {
			if r.Action != "pass" {
				t.Errorf("%s: %s", name, r.Action)
			}
		}
	})
	t.Run("genuine+negative-harness", func(t *testing.T) {
		t.Parallel()
		w := worktree(t, s, shoplite.BranchGenuine)
		restoreHarness(t, s, w, negative)
		// The genuine fix is for the coupon bug only.
		expect(t, goTest(t, w.Dir), "TestCouponNeverNegative", "fail", "-100")
	})
	t.Run("false-test-edit", func(t *testing.T) {
		t.Parallel()
		w := worktree(t, s, shoplite.BranchFalseTestEdit)
		// On its own the false fix is green: that is the trap.
		expect(t, goTest(t, w.Dir), "TestCouponAppliesOnce", "pass", "")
		restoreHarness(t, s, w, coupon)
		runs := goTest(t, w.Dir)
		expect(t, runs, "TestCouponAppliesOnce", "fail", "8100")
		expectPassToPass(t, runs)
	})
	t.Run("false-breaks-p2p+harness", func(t *testing.T) {
		t.Parallel()
		w := worktree(t, s, shoplite.BranchFalseBreaks)
		restoreHarness(t, s, w, coupon)
		runs := goTest(t, w.Dir)
		expect(t, runs, "TestCouponAppliesOnce", "pass", "")
		expect(t, runs, "TestZeroCoupon", "fail", "SAVE0")
		expectPassToPass(t, runs, "TestZeroCoupon")
	})
	t.Run("server", func(t *testing.T) {
		t.Parallel()
		w := worktree(t, s, shoplite.BranchMain)
		bin := goBuild(t, w.Dir, "-ldflags=-X main.commit="+s.Base)
		url := start(t, bin)
		v := getVersion(t, url)
		if v.Commit != s.Base || v.Source != "ldflags" {
			t.Errorf("/version = %+v, want commit %s from ldflags", v, s.Base)
		}
		if body := get(t, url+"/healthz"); body != "ok\n" {
			t.Errorf("/healthz = %q", body)
		}
		// The bug is live on main's server.
		resp, err := http.Post(url+"/checkout", "application/json",
			strings.NewReader(`{"items":[{"sku":"lamp","price_cents":10000,"quantity":1}],"coupon":"SAVE10"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"total_cents":8100}` {
			t.Errorf("POST /checkout = %d %s, want the buggy 8100", resp.StatusCode, body)
		}
	})
	t.Run("server-vcs-fallback", func(t *testing.T) {
		t.Parallel()
		// The go command stamps VCS data only where .git is a directory,
		// so not in a worktree: build from a clone.
		c, err := gitx.Clone(context.Background(), s.Dir, filepath.Join(t.TempDir(), "clone"))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Checkout(context.Background(), shoplite.BranchGenuine); err != nil {
			t.Fatal(err)
		}
		bin := goBuild(t, c.Dir, "-buildvcs=true")
		v := getVersion(t, start(t, bin))
		if v.Commit != s.Branches[shoplite.BranchGenuine] || v.Source != "vcs" || v.Modified {
			t.Errorf("/version = %+v, want commit %s from vcs, unmodified", v, s.Branches[shoplite.BranchGenuine])
		}
	})
}

type version struct {
	Commit, Source string
	Modified       bool
}

func goBuild(t *testing.T, dir string, flags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "shoplite")
	args := append(append([]string{"build", "-o", bin}, flags...), "./cmd/shoplite")
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = dir, goEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}
	return bin
}

// start runs the server on a free loopback port and returns its URL; it is
// stopped with SIGINT (and must exit cleanly) when the test ends.
func start(t *testing.T, bin string) string {
	t.Helper()
	url, _ := startWith(t, bin)
	return url
}

// startWith is start with env added to the host environment (whose own
// ShopLite flag settings are left out); it also returns the server's log
// (its standard error).
func startWith(t *testing.T, bin string, env ...string) (string, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0")
	cmd.Env = append(hostEnvWithoutFlags(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("shoplite exit: %v\n%s", err, stderr.String())
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("shoplite did not stop on SIGINT")
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		io.Copy(io.Discard, stdout)
		done <- cmd.Wait()
	}()
	select {
	case line := <-lines:
		i := strings.Index(line, "http://")
		if i < 0 {
			t.Fatalf("unexpected first line %q", line)
		}
		return line[i:], stderr
	case <-time.After(20 * time.Second):
		t.Fatalf("shoplite printed no address; stderr:\n%s", stderr.String())
	}
	return "", nil
}

// hostEnvWithoutFlags is this process's environment without ShopLite's
// flag settings.
func hostEnvWithoutFlags() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHOPLITE_") {
			env = append(env, kv)
		}
	}
	return env
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d %s", url, resp.StatusCode, body)
	}
	return string(body)
}

func getVersion(t *testing.T, url string) version {
	t.Helper()
	var v version
	if body := get(t, url+"/version"); json.Unmarshal([]byte(body), &v) != nil {
		t.Fatalf("/version body %q", body)
	}
	return v
}
