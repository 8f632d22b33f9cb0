package shoplite_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/shoplite"
)

func TestBuildMain(t *testing.T) {
	t.Parallel()
	needTools(t, "git")
	ctx := context.Background()
	s, err := shoplite.BuildMain(ctx, filepath.Join(t.TempDir(), "shoplite"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{shoplite.BranchMain: s.Base}
	if s.Base == "" || !reflect.DeepEqual(s.Branches, want) {
		t.Fatalf("BuildMain: base %q, branches %v; want main only", s.Base, s.Branches)
	}
	repo := &gitx.Repo{Dir: s.Dir}
	if onDisk, err := repo.Branches(ctx); err != nil || !reflect.DeepEqual(onDisk, want) {
		t.Errorf("repository branches %v, %v; want %v", onDisk, err, want)
	}
	if br, _ := repo.CurrentBranch(ctx); br != shoplite.BranchMain {
		t.Errorf("checked out %q, want main", br)
	}
	if clean, err := repo.IsClean(ctx); !clean || err != nil {
		t.Errorf("working tree not clean after BuildMain: %v", err)
	}
	// main is the very commit Build makes.
	if full := build(t); full.Base != s.Base {
		t.Errorf("BuildMain's main is %s, Build's %s", s.Base, full.Base)
	}
	if _, err := shoplite.BuildMain(ctx, s.Dir); !errors.Is(err, shoplite.ErrNotEmpty) {
		t.Errorf("BuildMain into a non-empty dir: %v, want ErrNotEmpty", err)
	}
}

// TestServerDeploy deploys main, then the genuine fix committed on top of
// it, and checks the bug is live and then gone at the same URL; then that
// failed deploys (no build, no such commit, a server that crashes) behave.
// It runs go build five times: 5-7 s with a warm build cache on a 2-core
// machine, about 1 s a build, so it runs under -short too, like
// TestSampleBranchesBehave, which takes longer. The first run on a machine
// also compiles the standard library with -trimpath into the build cache,
// which takes far longer once (40 s on that machine).
func TestServerDeploy(t *testing.T) {
	needTools(t, "git", "go")
	// A bound for a stuck toolchain, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := shoplite.BuildMain(ctx, filepath.Join(t.TempDir(), "shoplite"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	srv := shoplite.NewServer(work)
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	if u := srv.URL(); u != "" {
		t.Errorf("URL before any deploy = %q", u)
	}

	// main, named by its branch: the id is resolved and stamped.
	d1, err := srv.Deploy(ctx, s.Dir, shoplite.BranchMain)
	if err != nil {
		t.Fatal(err)
	}
	if d1.Commit != s.Base || d1.URL != srv.URL() || !strings.HasPrefix(d1.URL, "http://127.0.0.1:") ||
		d1.PID <= 0 || d1.StartedAt.IsZero() || d1.BuildDuration <= 0 {
		t.Errorf("first deploy %+v, URL() %q; want commit %s", d1, srv.URL(), s.Base)
	}
	if v := deployedCommit(t, d1.URL); v != s.Base {
		t.Errorf("/version = %s, want %s", v, s.Base)
	}
	if total := checkoutTotal(t, d1.URL); total != 8100 {
		t.Errorf("checkout on main = %d, want the buggy 8100", total)
	}

	// The genuine fix lands on main and is deployed at the same URL.
	genuine, err := shoplite.Files(shoplite.BranchGenuine)
	if err != nil {
		t.Fatal(err)
	}
	fix := commitFiles(t, s.Dir, genuine, "fix: apply a percentage coupon once", 1)
	d2, err := srv.Deploy(ctx, s.Dir, fix)
	if err != nil {
		t.Fatal(err)
	}
	if d2.URL != d1.URL || d2.Commit != fix || d2.PID == d1.PID || d2.PID <= 0 || srv.URL() != d1.URL {
		t.Errorf("second deploy %+v, URL() %q; want %s at %s in a new process", d2, srv.URL(), fix, d1.URL)
	}
	if v := deployedCommit(t, d2.URL); v != fix {
		t.Errorf("/version = %s, want %s", v, fix)
	}
	if total := checkoutTotal(t, d2.URL); total != 9000 {
		t.Errorf("checkout on the fix = %d, want 9000", total)
	}

	// A commit that does not build, and a revision that does not exist,
	// leave the running server alone.
	broken := commitFiles(t, s.Dir, map[string][]byte{"cart/cart.go": []byte("package cart\n\nfunc Total(\n")}, "break the build", 2)
	if _, err := srv.Deploy(ctx, s.Dir, broken); err == nil || !strings.Contains(err.Error(), "building") {
		t.Errorf("deploying a commit that does not build: %v, want a build error", err)
	} else {
		t.Logf("deploying a commit that does not build: %v", err)
	}
	if _, err := srv.Deploy(ctx, s.Dir, "no-such-branch"); err == nil {
		t.Error("deploying an unknown revision succeeded")
	}
	if srv.URL() != d2.URL || deployedCommit(t, d2.URL) != fix {
		t.Errorf("after failed deploys: URL() %q; want %s still serving %s", srv.URL(), d2.URL, fix)
	}

	// One build folder (the running one) and no worktree left behind.
	if entries, err := os.ReadDir(work); err != nil || len(entries) != 1 {
		t.Errorf("work dir holds %v (%v), want the running build only", entries, err)
	}
	out, err := exec.Command("git", "-C", s.Dir, "worktree", "list", "--porcelain").Output()
	if n := strings.Count(string(out), "worktree "); err != nil || n != 1 {
		t.Errorf("%d worktrees (%v), want the repository's own only:\n%s", n, err, out)
	}

	// A server that dies on start: the old one was stopped for it, so
	// nothing runs until the next deploy, which comes back on the same URL.
	crash := commitFiles(t, s.Dir, map[string][]byte{
		"cart/cart.go":              genuine["cart/cart.go"],
		"cmd/shoplite/main.go":      []byte("package main\n\nfunc main() { panic(\"boom on start\") }\n"),
		"cmd/shoplite/main_test.go": nil,
	}, "crash on start", 3)
	if _, err := srv.Deploy(ctx, s.Dir, crash); err == nil || !strings.Contains(err.Error(), "boom on start") {
		t.Errorf("deploying a server that crashes: %v, want an error with its output", err)
	} else {
		t.Logf("deploying a server that crashes: %v", err)
	}
	if u := srv.URL(); u != "" {
		t.Errorf("URL after a failed start = %q, want none", u)
	}
	d3, err := srv.Deploy(ctx, s.Dir, fix)
	if err != nil {
		t.Fatal(err)
	}
	if d3.URL != d1.URL || deployedCommit(t, d3.URL) != fix {
		t.Errorf("redeploy after a failed start: %+v, want %s at %s", d3, fix, d1.URL)
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if u := srv.URL(); u != "" {
		t.Errorf("URL after Stop = %q", u)
	}
	if resp, err := http.Get(d3.URL + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("the server still answers after Stop: %s", resp.Status)
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Errorf("work dir holds %v after Stop, want none", entries)
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// commitFiles writes files over the repository at dir (nil content
// deletes the file) and commits them on the current branch as Author,
// hours after Epoch.
func commitFiles(t *testing.T, dir string, files map[string][]byte, msg string, hours int) string {
	t.Helper()
	for rel, data := range files {
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if data == nil {
			if err := os.Remove(dst); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	repo := &gitx.Repo{Dir: dir}
	if err := repo.AddAll(ctx); err != nil {
		t.Fatal(err)
	}
	sig := shoplite.Author
	sig.When = shoplite.Epoch.Add(time.Duration(hours) * time.Hour)
	id, err := repo.Commit(ctx, msg, sig)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// deployedCommit is the commit GET /version reports.
func deployedCommit(t *testing.T, url string) string {
	t.Helper()
	var v struct {
		Commit string `json:"commit"`
		Source string `json:"source"`
	}
	if body := get(t, url+"/version"); json.Unmarshal([]byte(body), &v) != nil || v.Source != "ldflags" {
		t.Fatalf("/version body %q, want a commit from ldflags", body)
	}
	return v.Commit
}

// checkoutTotal posts one 10000-cent lamp with SAVE10 to /checkout.
func checkoutTotal(t *testing.T, url string) int64 {
	t.Helper()
	resp, err := http.Post(url+"/checkout", "application/json",
		strings.NewReader(`{"items":[{"sku":"lamp","price_cents":10000,"quantity":1}],"coupon":"SAVE10"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		TotalCents *int64 `json:"total_cents"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &r) != nil || r.TotalCents == nil {
		t.Fatalf("POST /checkout = %d %s", resp.StatusCode, body)
	}
	return *r.TotalCents
}

// TestServerDeployReadsFlag deploys main as the demo does, then with OFREP
// settings, then a fix on top of it: the deployed server reads the flag
// only when the Server is told where, on every checkout, and keeps reading
// it across redeploys. ShopLite settings in this process's environment do
// not reach the deployed server.
func TestServerDeployReadsFlag(t *testing.T) {
	needTools(t, "git", "go")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	f := newFakeOFREP(t)
	f.set(shoplite.CheckoutFlag, true)
	// Settings the Server was not given: left out of the server's environment.
	t.Setenv(shoplite.EnvOFREPURL, f.URL)
	t.Setenv(shoplite.EnvOFREPKey, testKey)

	s, err := shoplite.BuildMain(ctx, filepath.Join(t.TempDir(), "shoplite"))
	if err != nil {
		t.Fatal(err)
	}
	srv := shoplite.NewServer(t.TempDir())
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	d, err := srv.Deploy(ctx, s.Dir, shoplite.BranchMain)
	if err != nil {
		t.Fatal(err)
	}
	if d.CheckoutFlag != "" {
		t.Errorf("deploy without settings reads flag %q", d.CheckoutFlag)
	}
	checkout(t, d.URL).check(t, 200, bodyBuggy, "", "")
	if calls := f.seen(); len(calls) != 0 {
		t.Errorf("a server without settings asked the flag service: %v", calls)
	}

	for _, bad := range []shoplite.OFREP{
		{URL: "127.0.0.1:8080", APIKey: testKey},
		{URL: "ftp://127.0.0.1/", APIKey: testKey},
		{URL: f.URL},
		{APIKey: testKey},
		{URL: f.URL, APIKey: testKey, Flag: " padded "},
	} {
		if err := srv.SetOFREP(bad); err == nil {
			t.Errorf("SetOFREP(%+v) succeeded", bad)
		}
	}
	if err := srv.SetOFREP(shoplite.OFREP{URL: f.URL, APIKey: testKey}); err != nil {
		t.Fatal(err)
	}
	// The running server keeps its settings until the next deploy.
	checkout(t, d.URL).check(t, 200, bodyBuggy, "", "")
	d, err = srv.Deploy(ctx, s.Dir, s.Base)
	if err != nil {
		t.Fatal(err)
	}
	if d.CheckoutFlag != shoplite.CheckoutFlag {
		t.Errorf("deploy reads flag %q, want %s", d.CheckoutFlag, shoplite.CheckoutFlag)
	}
	checkout(t, d.URL).check(t, 500, bodyBroken, "ofrep", "v2")
	f.set(shoplite.CheckoutFlag, false)
	checkout(t, d.URL).check(t, 200, bodyBuggy, "ofrep", "v1")

	// A fix deployed later reads the flag too.
	genuine, err := shoplite.Files(shoplite.BranchGenuine)
	if err != nil {
		t.Fatal(err)
	}
	fix := commitFiles(t, s.Dir, genuine, "fix: apply a percentage coupon once", 1)
	if d, err = srv.Deploy(ctx, s.Dir, fix); err != nil {
		t.Fatal(err)
	}
	checkout(t, d.URL).check(t, 200, bodyFixed, "ofrep", "v1")
	f.set(shoplite.CheckoutFlag, true)
	checkout(t, d.URL).check(t, 500, bodyBroken, "ofrep", "v2")
	// The flag service goes away: checkout falls back to the default.
	f.Close()
	checkout(t, d.URL).check(t, 200, bodyFixed, "default", "v1")
}

// TestServerPrepare builds main ahead of its deploy, as the demo does
// while its desk is already up: the build reports its packages, reserves
// the URL the server then answers at, and the deploy starts that build
// instead of building again. A build that fails reports the compiler's
// words, not the package names go build -v prints; a prepared build of
// another commit, or one never deployed, leaves nothing behind.
func TestServerPrepare(t *testing.T) {
	needTools(t, "git", "go")
	// A bound for a stuck toolchain, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := shoplite.BuildMain(ctx, filepath.Join(t.TempDir(), "shoplite"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	srv := shoplite.NewServer(work)
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	builds := func() []string {
		t.Helper()
		entries, err := os.ReadDir(work)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}

	type report struct{ compiled, total int }
	var reports []report
	url, err := srv.Prepare(ctx, s.Dir, shoplite.BranchMain, func(compiled, total int) {
		reports = append(reports, report{compiled, total})
	})
	if err != nil {
		t.Fatal(err)
	}
	// The first report comes before anything is compiled; each later one
	// is a package more, never more than the total. How many depends on
	// the build cache: with a warm one, none may be compiled at all.
	if len(reports) == 0 || reports[0].compiled != 0 {
		t.Fatalf("progress %v: want a first report of 0 compiled", reports)
	}
	for i, r := range reports[1:] {
		if r.compiled != i+1 || r.compiled > r.total {
			t.Errorf("progress %v: report %d is %+v", reports, i+1, r)
		}
	}
	t.Logf("progress: %d reports, last %+v", len(reports), reports[len(reports)-1])
	if !strings.HasPrefix(url, "http://127.0.0.1:") || srv.URL() != "" {
		t.Errorf("Prepare: URL %q, URL() %q; want a reserved loopback URL and nothing running", url, srv.URL())
	}
	prepared := builds()
	if len(prepared) != 1 {
		t.Fatalf("work dir after Prepare holds %v, want one build", prepared)
	}
	d, err := srv.Deploy(ctx, s.Dir, s.Base)
	if err != nil {
		t.Fatal(err)
	}
	if d.URL != url || d.Commit != s.Base || deployedCommit(t, d.URL) != s.Base {
		t.Errorf("deploy after Prepare: %+v; want %s at %s", d, s.Base, url)
	}
	if now := builds(); !reflect.DeepEqual(now, prepared) {
		t.Errorf("work dir after the deploy holds %v, want the prepared build %v only: it built again", now, prepared)
	}

	// A commit that does not compile: the error has the compiler's words.
	broken := commitFiles(t, s.Dir, map[string][]byte{"cart/cart.go": []byte("package cart\n\nfunc Total(\n")}, "break the build", 1)
	if _, err := srv.Prepare(ctx, s.Dir, broken, func(int, int) {}); err == nil || !strings.Contains(err.Error(), "building") || !strings.Contains(err.Error(), "cart.go") {
		t.Errorf("preparing a commit that does not build: %v, want a build error naming cart.go", err)
	}
	if srv.URL() != url || deployedCommit(t, url) != s.Base {
		t.Errorf("a failed Prepare touched the running server")
	}

	// A prepared build of another commit is not deployed for this one:
	// it is discarded, and the running server's build replaced.
	if _, err := srv.Prepare(ctx, s.Dir, s.Base, nil); err != nil {
		t.Fatal(err)
	}
	genuine, err := shoplite.Files(shoplite.BranchGenuine)
	if err != nil {
		t.Fatal(err)
	}
	fix := commitFiles(t, s.Dir, genuine, "fix: apply a percentage coupon once", 2)
	if d, err = srv.Deploy(ctx, s.Dir, fix); err != nil || d.URL != url || deployedCommit(t, url) != fix {
		t.Fatalf("deploy of another commit than the prepared one: %+v, %v; want %s at %s", d, err, fix, url)
	}
	if now := builds(); len(now) != 1 || slices.Contains(prepared, now[0]) {
		t.Errorf("work dir holds %v, want the fix's build only", now)
	}

	// Stop discards a prepared build.
	if _, err := srv.Prepare(ctx, s.Dir, s.Base, nil); err != nil {
		t.Fatal(err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if now := builds(); len(now) != 0 {
		t.Errorf("work dir after Stop holds %v, want nothing", now)
	}
}

// TestServerDeployPortTaken: a program that binds the reserved port
// between Prepare and Deploy and answers /healthz and /version as the
// server would (the base commit) is not taken for the server: the server
// cannot listen, Deploy fails saying so, and the impostor is never asked
// anything. Once the port is free again, a deploy comes back on it.
func TestServerDeployPortTaken(t *testing.T) {
	needTools(t, "git", "go")
	// A bound for a stuck toolchain, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := shoplite.BuildMain(ctx, filepath.Join(t.TempDir(), "shoplite"))
	if err != nil {
		t.Fatal(err)
	}
	srv := shoplite.NewServer(t.TempDir())
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
	})
	u, err := srv.Prepare(ctx, s.Dir, s.Base, nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", strings.TrimPrefix(u, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	impostor := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.URL.Path == "/version" {
			json.NewEncoder(w).Encode(map[string]string{"commit": s.Base, "source": "ldflags"})
			return
		}
		io.WriteString(w, "ok")
	})}
	go impostor.Serve(ln)
	_, err = srv.Deploy(ctx, s.Dir, s.Base)
	if err == nil || !strings.Contains(err.Error(), "exited before listening") {
		t.Errorf("deploy onto a taken port: %v, want the server's failure to listen", err)
	} else {
		t.Logf("deploy onto a taken port: %v", err)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the program on the port was asked %d requests", n)
	}
	if got := srv.URL(); got != "" {
		t.Errorf("URL() after the failed deploy = %q, want none", got)
	}
	impostor.Close()

	d, err := srv.Deploy(ctx, s.Dir, s.Base)
	if err != nil {
		t.Fatal(err)
	}
	if d.URL != u || deployedCommit(t, u) != s.Base {
		t.Errorf("deploy once the port is free: %+v, want %s at %s", d, s.Base, u)
	}
}

// TestServerPrepareCancelled: a build cut short (the demo's Ctrl-C) ends
// as go build does on a terminal's Ctrl-C, not by SIGKILL to go alone:
// the compiles it runs stop too, and its temporary work directory goes
// with the build's folder.
func TestServerPrepareCancelled(t *testing.T) {
	needTools(t, "git", "go", "pgrep")
	s, err := shoplite.BuildMain(context.Background(), filepath.Join(t.TempDir(), "shoplite"))
	if err != nil {
		t.Fatal(err)
	}
	// A cold build cache of its own, so that there is compiling to cut
	// short; go's temporary folder where this test sees it, unless the
	// build keeps its own.
	tmp := t.TempDir()
	t.Setenv("GOCACHE", t.TempDir())
	t.Setenv("GOTMPDIR", tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cut := false
	work := t.TempDir()
	srv := shoplite.NewServer(work)
	defer srv.Stop()
	_, err = srv.Prepare(ctx, s.Dir, s.Base, func(compiled, total int) {
		if compiled > 0 && !cut {
			cut = true
			cancel()
		}
	})
	if !cut {
		t.Skipf("nothing compiled: %v", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Prepare cut short: %v, want context.Canceled", err)
	}
	// go build's compiles name its work directory in their arguments.
	if out, err := exec.Command("pgrep", "-a", "-f", work).Output(); err == nil {
		t.Errorf("processes of the cut build still run:\n%s", out)
	}
	for _, d := range []string{work, tmp} {
		if entries, err := os.ReadDir(d); err != nil || len(entries) != 0 {
			t.Errorf("%s holds %v (%v) after the cut build, want nothing", d, entries, err)
		}
	}
}
