package verify

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/sandbox"
)

// depsRepo is a git repository for the deps tests, committed file by file.
type depsRepo struct {
	t   *testing.T
	dir string
	r   *gitx.Repo
}

func newDepsRepo(t *testing.T) *depsRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := filepath.Join(t.TempDir(), "repo")
	r := &gitx.Repo{Dir: dir}
	if err := r.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &depsRepo{t: t, dir: dir, r: r}
}

// commit writes files over parent ("" for the first commit) and commits.
func (g *depsRepo) commit(parent string, files map[string]string) string {
	g.t.Helper()
	ctx := context.Background()
	if parent != "" {
		if err := g.r.Checkout(ctx, parent); err != nil {
			g.t.Fatal(err)
		}
	}
	for p, c := range files {
		full := filepath.Join(g.dir, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			g.t.Fatal(err)
		}
	}
	if err := g.r.AddAll(ctx); err != nil {
		g.t.Fatal(err)
	}
	id, err := g.r.Commit(ctx, "commit", gitx.Signature{Name: "t", Email: "t@example.invalid", When: time.Unix(1_800_000_000, 0)})
	if err != nil {
		g.t.Fatal(err)
	}
	return id
}

func depsRunner(t *testing.T) sandbox.Runner {
	t.Helper()
	r, err := sandbox.Default()
	if err != nil {
		if testing.Short() {
			t.Skipf("no isolated sandbox: %v", err)
		}
		t.Fatalf("no isolated sandbox (run with -short to skip): %v", err)
	}
	return r
}

// depsBuildCache is the Go build cache these tests share with the rest
// of the package's end-to-end tests, seen through a link in a folder of
// the test's own.
func depsBuildCache(t *testing.T) string {
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	shared := filepath.Join(d, "signoff", "go-build-test")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	// The dependencies go beside the build cache: a folder of the
	// test's own, so every test fetches afresh and leaves nothing.
	own := filepath.Join(t.TempDir(), "cache")
	os.MkdirAll(own, 0o700)
	link := filepath.Join(own, "go-build")
	if err := os.Symlink(shared, link); err != nil {
		t.Fatal(err)
	}
	return link
}

func depsVerify(t *testing.T, g *depsRepo, h Harness, cand, cache string) Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := Verify(ctx, Options{RepoDir: g.dir, Harness: h, Candidate: cand, Runner: depsRunner(t), CacheDir: cache})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func depsStages(r Report) string {
	var b strings.Builder
	for _, s := range r.Stages {
		fmt.Fprintf(&b, "\n  %s %d %s: %s", s.Name, s.Run, s.Outcome, s.Detail)
		if s.Outcome == NotExecuted || s.Outcome == Failed {
			fmt.Fprintf(&b, "\n    stderr: %.600s\n    stdout: %.600s", s.Stderr, s.Stdout)
		}
	}
	return b.String()
}

func depsStage(r Report, name string) (Stage, bool) {
	for _, s := range r.Stages {
		if s.Name == name {
			return s, true
		}
	}
	return Stage{}, false
}

// goProxyDir writes a file:// module proxy holding example.com/greet
// v1.0.0 and returns its URL and go.sum lines for it.
func goProxyDir(t *testing.T) (proxy, gosum string) {
	t.Helper()
	dir := t.TempDir()
	mod := "module example.com/greet\n\ngo 1.22\n"
	src := "package greet\n\n// Word is the greeting.\nfunc Word() string { return \"hello\" }\n"
	v := filepath.Join(dir, "example.com", "greet", "@v")
	os.MkdirAll(v, 0o755)
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, body := range map[string]string{"go.mod": mod, "greet.go": src} {
		w, err := zw.Create("example.com/greet@v1.0.0/" + name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"list": "v1.0.0\n", "v1.0.0.info": `{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`,
		"v1.0.0.mod": mod, "v1.0.0.zip": zb.String(),
	} {
		if err := os.WriteFile(filepath.Join(v, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proxy = "file://" + filepath.ToSlash(dir)
	// go.sum through the go command itself, from that proxy.
	tmp := t.TempDir()
	cmd := exec.Command(goBinary(t), "mod", "download", "-json", "example.com/greet@v1.0.0")
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + tmp, "GOPROXY=" + proxy, "GOSUMDB=off", "GOFLAGS=-modcacherw",
		"GOMODCACHE=" + filepath.Join(tmp, "mod"), "GOCACHE=" + filepath.Join(tmp, "cache"), "GOTOOLCHAIN=local", "GOENV=off"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download from the test proxy: %v\n%s", err, out)
	}
	var m struct{ Sum, GoModSum string }
	if err := json.Unmarshal(out, &m); err != nil || m.Sum == "" {
		t.Fatalf("go mod download -json: %v %s", err, out)
	}
	return proxy, fmt.Sprintf("example.com/greet v1.0.0 %s\nexample.com/greet v1.0.0/go.mod %s\n", m.Sum, m.GoModSum)
}

func goBinary(t *testing.T) string {
	gt, err := findGo()
	if err != nil {
		t.Skip(err)
	}
	return filepath.Join(gt.goroot, "bin", "go")
}

const (
	greetApp     = "package app\n\nimport \"example.com/greet\"\n\n// Hello greets.\nfunc Hello() string { return greet.Word() }\n"
	greetAppFix  = "package app\n\nimport \"example.com/greet\"\n\n// Hello greets.\nfunc Hello() string { return greet.Word() + \"!\" }\n"
	greetAppTest = `package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"example.com/greet"
)

func TestWord(t *testing.T) {
	if greet.Word() != "hello" {
		t.Fatal(greet.Word())
	}
}

// The module cache is read-only in every run: nothing a run writes there
// reaches the next.
func TestModCacheReadOnly(t *testing.T) {
	dir := filepath.Join(os.Getenv("GOMODCACHE"), "example.com", "greet@v1.0.0")
	if _, err := os.Stat(filepath.Join(dir, "greet.go")); err != nil {
		t.Fatalf("the module is not where the run expects it: %v", err)
	}
	err := os.WriteFile(filepath.Join(dir, "planted.go"), []byte("package greet\n"), 0o644)
	if err == nil || !strings.Contains(err.Error(), "read-only file system") {
		t.Fatalf("writing into the module cache: %v, want read-only file system", err)
	}
}
`
	greetRepro = `package app

import "testing"

func TestHello(t *testing.T) {
	if got := Hello(); got != "hello!" {
		t.Fatalf("Hello() = %q, want hello!", got)
	}
}
`
)

func greetHarness(base, testsFrom string) Harness {
	return Harness{Base: base, TestsFrom: testsFrom, TestFiles: []string{"repro_test.go"},
		Command: []string{"go", "test", "-json", "./..."}, Format: FormatGoTestJSON,
		FailToPass: []string{"TestHello"}, PassToPass: []string{"TestWord", "TestModCacheReadOnly"},
		ExpectedFailure: "want hello!", TimeoutSeconds: 300, Runs: 1, BuildChanges: BuildFlag}
}

// A Go module requiring a module the host's cache does not have: the deps
// stage fetches it from the configured proxy (a file:// one here), the
// runs see it read-only where the module cache was, and the genuine fix
// is VERIFIED (before the stage the base run failed: "example.com/greet
// ... not found", GOPROXY=off). Candidates whose go.mod asks the host for
// anything else get INCONCLUSIVE from their deps stage, never VERIFIED.
func TestDepsGoModules(t *testing.T) {
	proxy, gosum := goProxyDir(t)
	t.Setenv("GOPROXY", proxy+",direct")
	t.Setenv("GOSUMDB", "off")
	g := newDepsRepo(t)
	gomod := "module example.com/app\n\ngo 1.22\n\nrequire example.com/greet v1.0.0\n"
	base := g.commit("", map[string]string{"go.mod": gomod, "go.sum": gosum, "app.go": greetApp, "app_test.go": greetAppTest})
	testsFrom := g.commit(base, map[string]string{"repro_test.go": greetRepro})
	h := greetHarness(base, testsFrom)
	cache := depsBuildCache(t)
	fix := g.commit(testsFrom, map[string]string{"app.go": greetAppFix})

	rep := depsVerify(t, g, h, fix, cache)
	if rep.Verdict != Verified {
		t.Fatalf("genuine fix: %s (%s)%s", rep.Verdict, rep.Reason, depsStages(rep))
	}
	t.Log(depsStages(rep))
	d, ok := depsStage(rep, StageDeps)
	if !ok || d.Outcome != OK || !strings.Contains(d.Detail, "go: 1 modules") || !strings.Contains(d.Detail, "fetched in") {
		t.Errorf("deps stage = %+v, want ok with one module%s", d, depsStages(rep))
	}

	outside := filepath.Join(t.TempDir(), "outside")
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "go.mod"), []byte("module example.com/greet\n\ngo 1.22\n"), 0o644)
	for _, c := range []struct{ name, gomod, want string }{
		{"require of a module the proxy does not have", gomod + "require example.com/missing v1.0.0\n", "example.com/missing"},
		{"replace by a directory outside the repository", gomod + "replace example.com/greet => ../outside\n", "outside the repository"},
		{"replace by an absolute directory", gomod + "replace example.com/greet => " + outside + "\n", "outside the repository"},
		{"replace by another module", gomod + "replace example.com/greet => example.com/evil v1.0.0\n", "example.com/evil"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cand := g.commit(testsFrom, map[string]string{"app.go": greetAppFix, "go.mod": c.gomod})
			rep := depsVerify(t, g, h, cand, cache)
			var cd Stage
			for _, s := range rep.Stages {
				if s.Name == StageDeps && s.Outcome == NotExecuted {
					cd = s
				}
			}
			if rep.Verdict != Inconclusive || !strings.Contains(cd.Detail, "dependencies could not be fetched") || !strings.Contains(cd.Detail, c.want) {
				t.Fatalf("%s: %s (%s), want INCONCLUSIVE from the deps stage naming %q%s", c.name, rep.Verdict, rep.Reason, c.want, depsStages(rep))
			}
			t.Log(depsStages(rep))
			if strings.Contains(rep.Reason, "failed to build") {
				t.Errorf("reason %q", rep.Reason)
			}
		})
	}
}

// A vendored module fetches nothing and builds with -mod=vendor
// (-mod=readonly turned vendor mode off: it failed like a missing module).
func TestDepsGoVendored(t *testing.T) {
	proxy, gosum := goProxyDir(t)
	g := newDepsRepo(t)
	gomod := "module example.com/app\n\ngo 1.22\n\nrequire example.com/greet v1.0.0\n"
	files := map[string]string{"go.mod": gomod, "go.sum": gosum, "app.go": greetApp, "app_test.go": strings.Replace(greetAppTest, "TestModCacheReadOnly", "TestNotModCache", 2)}
	// go mod vendor writes vendor/ as the go command wants it.
	tmp := t.TempDir()
	for p, c := range files {
		os.WriteFile(filepath.Join(tmp, p), []byte(c), 0o644)
	}
	cmd := exec.Command(goBinary(t), "mod", "vendor")
	cmd.Dir = tmp
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + tmp, "GOPROXY=" + proxy, "GOSUMDB=off", "GOFLAGS=-modcacherw",
		"GOMODCACHE=" + filepath.Join(t.TempDir(), "mod"), "GOCACHE=" + filepath.Join(tmp, ".cache"), "GOTOOLCHAIN=local", "GOENV=off", "GOWORK=off"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go mod vendor: %v\n%s", err, out)
	}
	for _, p := range []string{"vendor/modules.txt", "vendor/example.com/greet/greet.go"} {
		b, err := os.ReadFile(filepath.Join(tmp, filepath.FromSlash(p)))
		if err != nil {
			t.Fatal(err)
		}
		files[p] = string(b)
	}
	// The vendored module must not be readable anywhere else.
	files["app_test.go"] = strings.Replace(greetAppTest, `func TestModCacheReadOnly(t *testing.T) {
	dir := filepath.Join(os.Getenv("GOMODCACHE"), "example.com", "greet@v1.0.0")
	if _, err := os.Stat(filepath.Join(dir, "greet.go")); err != nil {
		t.Fatalf("the module is not where the run expects it: %v", err)
	}
	err := os.WriteFile(filepath.Join(dir, "planted.go"), []byte("package greet\n"), 0o644)
	if err == nil || !strings.Contains(err.Error(), "read-only file system") {
		t.Fatalf("writing into the module cache: %v, want read-only file system", err)
	}
}`, `func TestModCacheReadOnly(t *testing.T) {
	dir := filepath.Join(os.Getenv("GOMODCACHE"), "example.com", "greet@v1.0.0")
	if _, err := os.Stat(filepath.Join(dir, "greet.go")); err == nil {
		t.Fatal("the module is in the module cache: the test would not show vendor mode")
	}
	_ = strings.Contains
}`, 1)
	base := g.commit("", files)
	testsFrom := g.commit(base, map[string]string{"repro_test.go": greetRepro})
	fix := g.commit(testsFrom, map[string]string{"app.go": greetAppFix})
	rep := depsVerify(t, g, greetHarness(base, testsFrom), fix, depsBuildCache(t))
	if rep.Verdict != Verified {
		t.Fatalf("vendored genuine fix: %s (%s)%s", rep.Verdict, rep.Reason, depsStages(rep))
	}
	if d, ok := depsStage(rep, StageDeps); ok {
		t.Errorf("a vendored module has a deps stage: %+v", d)
	}
}

// tgz is an npm package tarball (package/...) and its integrity.
func tgz(t *testing.T, files map[string]string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: "package/" + name, Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(1_800_000_000, 0), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	sum := sha512.Sum512(b.Bytes())
	return b.Bytes(), "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
}

// npmLock is a lock of one dependency as npm writes it: the root's spec
// is the file: tarball, or a range of the registry.
func npmLock(name, resolved, integrity string) string {
	spec := "^1.0.0"
	if strings.HasPrefix(resolved, "file:") {
		spec = resolved
	}
	return fmt.Sprintf(`{"name": "padapp", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {
  "": {"name": "padapp", "version": "1.0.0", "dependencies": {"%[1]s": "%[4]s"}},
  "node_modules/%[1]s": {"version": "1.0.0", "resolved": "%[2]s", "integrity": "%[3]s"}}}
`, name, resolved, integrity, spec)
}

const (
	padLib  = "'use strict';\nconst pad = require('leftpad2');\n// label pads a price to width 6.\nfunction label(n) { return pad(String(n), 5); }\nmodule.exports = { label };\n"
	padTest = `'use strict';
const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const pad = require('leftpad2');
test('pad pads', () => { assert.strictEqual(pad('1', 3), '  1'); });
test('node_modules is read-only', () => {
  assert.throws(() => fs.writeFileSync(path.join(__dirname, '..', 'node_modules', 'leftpad2', 'index.js'), 'module.exports = () => "planted";'), /EROFS/);
});
`
	padRepro = `'use strict';
const test = require('node:test');
const assert = require('node:assert');
const { label } = require('../lib/label.js');
test('label is six wide', () => { assert.strictEqual(label(42), '    42'); });
`
)

// A node project with a dependency from a file: tarball in its lock
// file: npm ci fills node_modules outside the run, the run sees it
// read-only at /src/node_modules, and the genuine fix is VERIFIED. A lock
// file resolving from another host is refused before anything is
// fetched, whatever the repository's .npmrc says the registry is.
func TestDepsNode(t *testing.T) {
	for _, bin := range []string{"node", "npm"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed", bin)
		}
	}
	ball, integrity := tgz(t, map[string]string{
		"package.json": `{"name": "leftpad2", "version": "1.0.0", "main": "index.js"}`,
		"index.js":     "module.exports = (s, n) => String(s).padStart(n);\n",
	})
	g := newDepsRepo(t)
	pj := `{"name": "padapp", "version": "1.0.0", "private": true, "dependencies": {"leftpad2": "file:vendor/leftpad2-1.0.0.tgz"}}` + "\n"
	base := g.commit("", map[string]string{
		"package.json": pj, "package-lock.json": npmLock("leftpad2", "file:vendor/leftpad2-1.0.0.tgz", integrity),
		"vendor/leftpad2-1.0.0.tgz": string(ball), "lib/label.js": padLib, "test/pad.test.js": padTest,
	})
	testsFrom := g.commit(base, map[string]string{"test/label_repro.test.js": padRepro})
	h := Harness{Base: base, TestsFrom: testsFrom, TestFiles: []string{"test/label_repro.test.js"},
		Command: []string{"node", "--test", "--test-reporter=junit"}, Format: FormatJUnitXML,
		FailToPass: []string{"label is six wide"}, PassToPass: []string{"pad pads", "node_modules is read-only"},
		ExpectedFailure: "42", TimeoutSeconds: 120, Runs: 1, BuildChanges: BuildFlag}
	cache := depsBuildCache(t)
	fix := g.commit(testsFrom, map[string]string{"lib/label.js": strings.Replace(padLib, "5)", "6)", 1)})
	rep := depsVerify(t, g, h, fix, cache)
	if rep.Verdict != Verified {
		t.Fatalf("genuine fix: %s (%s)%s", rep.Verdict, rep.Reason, depsStages(rep))
	}
	if d, _ := depsStage(rep, StageDeps); d.Outcome != OK || !strings.Contains(d.Detail, "node: ") {
		t.Errorf("deps stage = %+v", d)
	}

	evil := g.commit(testsFrom, map[string]string{
		"lib/label.js":      strings.Replace(padLib, "5)", "6)", 1),
		".npmrc":            "registry=http://evil.example/\n",
		"package.json":      strings.Replace(pj, "file:vendor/leftpad2-1.0.0.tgz", "1.0.0", 1),
		"package-lock.json": npmLock("leftpad2", "http://evil.example/leftpad2/-/leftpad2-1.0.0.tgz", integrity),
	})
	rep = depsVerify(t, g, h, evil, cache)
	var cd Stage
	for _, s := range rep.Stages {
		if s.Name == StageDeps && s.Outcome == NotExecuted {
			cd = s
		}
	}
	if rep.Verdict != Inconclusive || !strings.Contains(cd.Detail, "http://evil.example/leftpad2") || !strings.Contains(cd.Detail, "node_modules/leftpad2") {
		t.Fatalf("lock file on another host: %s (%s)%s", rep.Verdict, rep.Reason, depsStages(rep))
	}
}

// testSRI is an integrity of the form npm writes.
var testSRI = "sha512-" + base64.StdEncoding.EncodeToString(make([]byte, 64))

// checkLock refuses every source but the registry and tarballs inside
// the repository, every entry without a resolved URL or an integrity,
// every install path outside node_modules, every spec npm would fetch
// from elsewhere, and keys npm would read otherwise than a case-blind
// decoder.
func TestDepsCheckLock(t *testing.T) {
	t.Parallel()
	const reg = "https://registry.example/"
	entry := func(e string) string {
		return `{"lockfileVersion": 3, "packages": {"": {"dependencies": {"a": "^1.0.0"}}, "node_modules/a": ` + e + `}}`
	}
	for _, c := range []struct {
		name, lock, want string
	}{
		{"registry", npmLock("a", reg+"a/-/a-1.0.0.tgz", testSRI), ""},
		{"tarball inside", npmLock("a", "file:vendor/a.tgz", testSRI), ""},
		{"other host", npmLock("a", "https://evil.example/a.tgz", testSRI), "not the registry"},
		{"host with the registry as prefix", npmLock("a", "https://registry.example.evil/a.tgz", testSRI), "not the registry"},
		{"git over ssh", npmLock("a", "git+ssh://git@github.com/x/a.git#abc", testSRI), "not the registry"},
		{"tarball outside", npmLock("a", "file:../a.tgz", testSRI), "not a tarball inside"},
		{"absolute tarball", npmLock("a", "file:/etc/a.tgz", testSRI), "not a tarball inside"},
		{"escaped tarball path", npmLock("a", "file:vendor/..%2f..%2fa.tgz", testSRI), "not a tarball inside"},
		{"folder", npmLock("a", "file:vendor/a", testSRI), "not a tarball inside"},
		{"install path outside", strings.Replace(npmLock("a", reg+"a.tgz", testSRI), "node_modules/a", "node_modules/../../a", 1), "not an install path"},
		{"git spec as the version, no resolved", entry(`{"version": "git+ssh://git@evil.example/a.git"}`), "not a version number"},
		{"url as the version", entry(`{"version": "https://evil.example/a.tgz"}`), "not a version number"},
		{"version only", entry(`{"version": "1.0.0"}`), "no resolved URL"},
		{"bundled, version only", entry(`{"version": "1.2.3-beta.1", "inBundle": true}`), "no resolved URL"},
		{"no integrity", entry(`{"version": "1.0.0", "resolved": "` + reg + `a/-/a-1.0.0.tgz"}`), "no integrity"},
		{"integrity of no known algorithm", entry(`{"version": "1.0.0", "resolved": "` + reg + `a/-/a-1.0.0.tgz", "integrity": "md5-AAAA"}`), "no integrity"},
		{"file tarball without integrity", entry(`{"version": "1.0.0", "resolved": "file:a.tgz"}`), "no integrity"},
		{"link", entry(`{"resolved": "packages/a", "link": true}`), "link"},
		{"lockfile version 1", `{"lockfileVersion": 1, "dependencies": {}}`, "lockfileVersion 1"},
		{"no packages", `{"lockfileVersion": 3}`, "no packages"},
		{"root spec git", strings.Replace(npmLock("a", reg+"a/-/a-1.0.0.tgz", testSRI), `"a": "^1.0.0"}}`, `"a": "git+file:///tmp/x"}}`, 1), "not a registry version"},
		{"dependency of an entry by git", entry(`{"version": "1.0.0", "resolved": "` + reg + `a/-/a-1.0.0.tgz", "integrity": "` + testSRI + `", "dependencies": {"b": "github:evil/b"}}`), "not a registry version"},
		{"dependency of an entry by file", entry(`{"version": "1.0.0", "resolved": "` + reg + `a/-/a-1.0.0.tgz", "integrity": "` + testSRI + `", "dependencies": {"b": "file:b.tgz"}}`), "outside the project's own manifest"},
		{"duplicate resolved", entry(`{"version": "1.0.0", "resolved": "http://evil.example/a.tgz", "resolved": "` + reg + `a/-/a-1.0.0.tgz", "integrity": "` + testSRI + `"}`), "duplicate"},
	} {
		_, err := checkLock("package-lock.json", []byte(c.lock), reg)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// checkSpec: what npm fetches from the registry passes; git, URLs,
// folders, links and tarballs outside the repository do not.
func TestDepsCheckSpec(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{"1.0.0", "^1.2.3", "~1.2", ">=1.0.0 <2.0.0", "1.x || 2", "*", "", "latest", "npm:other@^1.0.0", "npm:@scope/other@1.0.0", "file:deps/a-1.0.0.tgz", "file:./deps/a.tar.gz"} {
		if err := checkSpec(spec, true); err != nil {
			t.Errorf("%q: %v", spec, err)
		}
	}
	for _, spec := range []string{"git+file:///tmp/x", "git+ssh://git@h/x.git", "github:x/y", "x/y", "http://h/x.tgz", "https://h/x.tgz",
		"file:../x.tgz", "file:/etc/x.tgz", "file:deps", "file:~/x.tgz", "link:../x", "./x", "..", ".", "~/x", "x.tgz", "npm:x@git+ssh://h/x", "workspace:*", "FILE:../x.tgz"} {
		if err := checkSpec(spec, true); err == nil {
			t.Errorf("%q: accepted", spec)
		}
	}
	if err := checkSpec("file:deps/a.tgz", false); err == nil {
		t.Error("a file: spec of a dependency's own manifest: accepted")
	}
}

// Two checkouts with the same lock file but different manifests, or
// different bytes of a file: tarball, have different cache entries; a
// package.json without a lock file is refused; decoy keys are refused.
func TestDepsNodeKey(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	ctx := context.Background()
	lock := npmLock("a", "file:a.tgz", testSRI)
	key := func(pj, ball string) string {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "package.json"), []byte(pj), 0o644)
		os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(lock), 0o644)
		os.WriteFile(filepath.Join(dir, "a.tgz"), []byte(ball), 0o644)
		it, err := nodeDeps(ctx, dir)
		if err != nil || it == nil {
			t.Fatalf("nodeDeps: %v %v", it, err)
		}
		return it.key
	}
	if a, b := key(`{"dependencies": {"a": "file:a.tgz"}}`, "1"), key(`{"dependencies": {"a": "file:a.tgz"}, "devDependencies": {"b": "1"}}`, "1"); a == b {
		t.Error("two manifests share a cache entry")
	}
	if a, b := key(`{"dependencies": {"a": "file:a.tgz"}}`, "1"), key(`{"dependencies": {"a": "file:a.tgz"}}`, "2"); a == b {
		t.Error("two tarballs share a cache entry")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"devDependencies": {"b": "1"}}`), 0o644)
	if _, err := nodeDeps(ctx, dir); err == nil || !strings.Contains(err.Error(), "no package-lock.json") {
		t.Errorf("no lock file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name": "x", "scripts": {}}`), 0o644)
	if it, err := nodeDeps(ctx, dir); it != nil || err != nil {
		t.Errorf("no dependencies: %v %v, want no deps stage", it, err)
	}
	for name, pj := range map[string]string{
		"decoy DEPENDENCIES":     `{"DEPENDENCIES": {}, "dependencies": {"b": "git+ssh://git@evil.example/b.git"}}`,
		"decoy devdependencies":  `{"devdependencies": {"b": "1"}}`,
		"duplicate dependencies": `{"dependencies": {"b": "git+ssh://git@evil.example/b.git"}, "dependencies": {}}`,
		"git dependency":         `{"dependencies": {"b": "git+ssh://git@evil.example/b.git"}}`,
		"git override":           `{"dependencies": {"b": "1"}, "overrides": {"b": {"c": "github:evil/c"}}}`,
	} {
		os.WriteFile(filepath.Join(dir, "package.json"), []byte(pj), 0o644)
		if it, err := nodeDeps(ctx, dir); err == nil {
			t.Errorf("%s: %v, want refused", name, it)
		}
	}
}

// requirements.txt is a lock: name==version lines only.
func TestDepsRequirements(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text string
		ok   bool
	}{
		{"tinycalc==1.0\n", true},
		{"# comment\n\nrequests[socks] == 2.31.0 ; python_version >= \"3.8\"\n", true},
		{"tinycalc==1.0 \\\n    --hash=sha256:" + strings.Repeat("a", 64) + "\n", true},
		{"requests[socks] >= 2.0, <3\n", false},
		{"tinycalc\n", false},
		{"tinycalc==1.*\n", false},
		{"tinycalc===1.0\n", false},
		{"tinycalc~=1.0\n", false},
		{"tinycalc==1.0 ; -e\n", false},
		{"tinycalc==1.0 ; --no-index\n", false},
		{"--index-url http://evil.example/simple\ntinycalc==1.0\n", false},
		{"-i http://evil.example/simple\n", false},
		{"--extra-index-url http://evil.example/simple\n", false},
		{"-e git+https://evil.example/x.git#egg=x\n", false},
		{"git+https://evil.example/x.git\n", false},
		{"x @ https://evil.example/x.whl\n", false},
		{"./local/pkg\n", false},
		{"-r other.txt\n", false},
		{"--find-links /tmp\n", false},
		{"--trusted-host evil.example\n", false},
	} {
		_, err := requirements([]byte(c.text))
		if (err == nil) != c.ok {
			t.Errorf("%q: %v, want ok=%v", c.text, err, c.ok)
		}
	}
}

func TestDepsGoProxies(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ host, want string }{
		{"https://proxy.golang.org,direct", "https://proxy.golang.org"},
		{"off", ""},
		{"direct", ""},
		{"https://a.example|https://b.example,direct", "https://a.example,https://b.example"},
	} {
		if got := goProxies(c.host, ""); got != c.want {
			t.Errorf("goProxies(%q) = %q, want %q", c.host, got, c.want)
		}
	}
}

const pytestCmd = `python3 -m pytest -p no:cacheprovider -o junit_family=xunit1 --junitxml=/tmp/signoff-junit.xml >&2; s=$?; cat /tmp/signoff-junit.xml; exit $s`

// A Python project whose requirements.txt names a package only a wheel
// folder has: the deps stage installs it into a venv outside the run,
// which the run sees read-only at the same path, first on PATH, and the
// genuine fix is VERIFIED. A requirement with no wheel (an sdist only)
// is not built on the host: INCONCLUSIVE from the deps stage.
func TestDepsPython(t *testing.T) {
	if err := exec.Command(sandboxPython, "-m", "pytest", "--version").Run(); err != nil {
		t.Skipf("%s has no pytest: %v", sandboxPython, err)
	}
	links := t.TempDir()
	wheel(t, links, "tinycalc", "1.0", "def add(a, b):\n    return a + b\n")
	os.WriteFile(filepath.Join(links, "sdistonly-1.0.tar.gz"), []byte("not built on the host"), 0o644)
	t.Setenv("SIGNOFF_PIP_FIND_LINKS", links)
	g := newDepsRepo(t)
	calc := "from tinycalc import add\n\n\ndef total(prices):\n    return add(sum(prices[1:]), 0)\n"
	base := g.commit("", map[string]string{
		"requirements.txt": "tinycalc==1.0\n", "shop/__init__.py": "", "shop/calc.py": calc,
		"tests/test_calc.py": `import errno
import os

import tinycalc
from shop.calc import total


def test_add():
    assert tinycalc.add(2, 3) == 5


def test_venv_read_only():
    venv = os.environ["VIRTUAL_ENV"]
    assert os.path.dirname(tinycalc.__file__).startswith(venv)
    try:
        with open(os.path.join(os.path.dirname(tinycalc.__file__), "planted.py"), "w") as f:
            f.write("x = 1\n")
    except OSError as e:
        assert e.errno == errno.EROFS, e
    else:
        raise AssertionError("the venv is writable")
`,
	})
	testsFrom := g.commit(base, map[string]string{"tests/test_total.py": "from shop.calc import total\n\n\ndef test_total_every_item():\n    got = total([500, 700])\n    assert got == 1200, f\"total = {got}, want 1200\"\n"})
	h := Harness{Base: base, TestsFrom: testsFrom, TestFiles: []string{"tests/test_total.py"},
		Command: []string{"sh", "-c", pytestCmd}, Format: FormatJUnitXML,
		FailToPass: []string{"test_total_every_item"}, PassToPass: []string{"test_add", "test_venv_read_only"},
		ExpectedFailure: "want 1200", TimeoutSeconds: 120, Runs: 1, BuildChanges: BuildFlag}
	cache := depsBuildCache(t)
	fix := g.commit(testsFrom, map[string]string{"shop/calc.py": strings.Replace(calc, "prices[1:]", "prices", 1)})
	rep := depsVerify(t, g, h, fix, cache)
	if rep.Verdict != Verified {
		t.Fatalf("genuine fix: %s (%s)%s", rep.Verdict, rep.Reason, depsStages(rep))
	}
	if d, _ := depsStage(rep, StageDeps); d.Outcome != OK || !strings.Contains(d.Detail, "python: ") {
		t.Errorf("deps stage = %+v", d)
	}
	for _, c := range []struct{ name, reqs, want string }{
		{"sdist only", "tinycalc==1.0\nsdistonly==1.0\n", "sdistonly"},
		{"index url", "--index-url http://evil.example/simple\ntinycalc==1.0\n", "not a pinned requirement"},
		{"editable from git", "-e git+https://evil.example/x.git#egg=x\n", "not a pinned requirement"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cand := g.commit(testsFrom, map[string]string{"shop/calc.py": strings.Replace(calc, "prices[1:]", "prices", 1), "requirements.txt": c.reqs})
			rep := depsVerify(t, g, h, cand, cache)
			var cd Stage
			for _, s := range rep.Stages {
				if s.Name == StageDeps && s.Outcome == NotExecuted {
					cd = s
				}
			}
			if rep.Verdict != Inconclusive || !strings.Contains(cd.Detail, c.want) {
				t.Fatalf("%s: %s (%s), want INCONCLUSIVE from the deps stage naming %q%s", c.name, rep.Verdict, rep.Reason, c.want, depsStages(rep))
			}
		})
	}
}

// Fetches of one key wait for each other, and an entry left half-filled
// (no completion marker) is emptied and fetched again, never used.
func TestDepsEnsure(t *testing.T) {
	t.Parallel()
	v := &verifier{cache: filepath.Join(t.TempDir(), "go-build")}
	calls := 0
	it := depItem{kind: "test", key: digest([]byte("k")), fetch: func(ctx context.Context, entry string) (string, error) {
		calls++
		if _, err := os.Stat(filepath.Join(entry, "stale")); err == nil {
			return "", fmt.Errorf("a half-filled entry was reused")
		}
		time.Sleep(50 * time.Millisecond)
		return "one thing", os.WriteFile(filepath.Join(entry, "stale"), nil, 0o600)
	}}
	// A half-filled entry from a fetch that died.
	os.MkdirAll(v.entry(it), 0o700)
	os.WriteFile(filepath.Join(v.entry(it), "stale"), nil, 0o600)
	done := make(chan error, 4)
	for range 4 {
		go func() { _, _, err := v.ensure(context.Background(), it); done <- err }()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 {
		t.Errorf("fetched %d times, want once", calls)
	}
	if fi, err := os.Stat(v.depsRoot()); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("deps root: %v %v, want mode 0700", fi, err)
	}
}

// goDeps: a replacement by a folder inside the repository is in the key
// (its go.mod decides the graph); one reached through a symlink out of
// it is refused; a module requiring nothing has no deps stage.
func TestDepsGoPlan(t *testing.T) {
	t.Parallel()
	goBinary(t)
	ctx := context.Background()
	write := func(dir string, files map[string]string) {
		for p, c := range files {
			os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
			if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	gomod := "module example.com/app\n\ngo 1.22\n\nrequire example.com/sub v0.0.0\n\nreplace example.com/sub => ./sub\n"
	key := func(sub string) string {
		dir := t.TempDir()
		write(dir, map[string]string{"go.mod": gomod, "sub/go.mod": sub})
		it, vendored, err := goDeps(ctx, dir)
		if err != nil || it == nil || vendored {
			t.Fatalf("goDeps: %v %v %v", it, vendored, err)
		}
		return it.key
	}
	if key("module example.com/sub\n") == key("module example.com/sub\n\nrequire example.com/other v1.0.0\n") {
		t.Error("the replacement's go.mod is not in the key")
	}
	dir := t.TempDir()
	outside := t.TempDir()
	write(outside, map[string]string{"go.mod": "module example.com/sub\n"})
	write(dir, map[string]string{"go.mod": gomod})
	if err := os.Symlink(outside, filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := goDeps(ctx, dir); err == nil || !strings.Contains(err.Error(), "outside the repository") {
		t.Errorf("replacement through a symlink out of the repository: %v", err)
	}
	write(dir, map[string]string{"go.mod": "module example.com/app\n\ngo 1.22\n"})
	if it, vendored, err := goDeps(ctx, dir); it != nil || vendored || err != nil {
		t.Errorf("no requirements: %v %v %v, want no deps stage", it, vendored, err)
	}
	write(dir, map[string]string{"go.mod": gomod, "vendor/modules.txt": "# example.com/sub v0.0.0 => ./sub\n"})
	if it, vendored, err := goDeps(ctx, dir); it != nil || !vendored || err != nil {
		t.Errorf("vendored: %v %v %v, want vendored and nothing to fetch", it, vendored, err)
	}
}

// wheel is a pure-python wheel written by hand: the module, METADATA,
// WHEEL and a RECORD with every file's digest.
func wheel(t *testing.T, dir, name, version, module string) {
	t.Helper()
	writeWheel(t, dir, name, version, "", map[string]string{name + "/__init__.py": module})
}

// writeWheel writes name-version-py3-none-any.whl into dir holding files
// (path -> content), METADATA with extra lines meta, WHEEL, and a RECORD
// with every file's digest.
func writeWheel(t *testing.T, dir, name, version, meta string, files map[string]string) {
	t.Helper()
	info := name + "-" + version + ".dist-info/"
	all := [][2]string{}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		all = append(all, [2]string{p, files[p]})
	}
	all = append(all,
		[2]string{info + "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n" + meta},
		[2]string{info + "WHEEL", "Wheel-Version: 1.0\nGenerator: signoff-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"})
	var record strings.Builder
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range all {
		w, err := zw.Create(f[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[1]))
		sum := sha256.Sum256([]byte(f[1]))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f[0], base64.RawURLEncoding.EncodeToString(sum[:]), len(f[1]))
	}
	record.WriteString(info + "RECORD,,\n")
	w, err := zw.Create(info + "RECORD")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+"-"+version+"-py3-none-any.whl"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
