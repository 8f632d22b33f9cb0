package verify

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Regression tests of the deps stage against hostile repositories and
// candidates (red team 23): what runs on the host for them, and what a
// cache entry is reused for. Each uses the real npm, pip, git and sandbox.

func needNode(t *testing.T) {
	t.Helper()
	for _, bin := range []string{"node", "npm", "git"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("%s is not installed", bin)
		}
	}
}

// padProject is TestDepsNode's project with the lock and tarball given:
// base, tests_from and the harness (build changes flagged, so a
// candidate's package.json, lock or tarball reaches the deps stage).
func padProject(t *testing.T, g *depsRepo, pj, lock string, ball []byte) (Harness, string) {
	t.Helper()
	files := map[string]string{"package.json": pj, "package-lock.json": lock, "lib/label.js": padLib, "test/pad.test.js": padTest}
	if ball != nil {
		files["deps/leftpad2-1.0.0.tgz"] = string(ball)
	}
	base := g.commit("", files)
	testsFrom := g.commit(base, map[string]string{"test/label_repro.test.js": padRepro})
	return Harness{Base: base, TestsFrom: testsFrom, TestFiles: []string{"test/label_repro.test.js"},
		Command: []string{"node", "--test", "--test-reporter=junit"}, Format: FormatJUnitXML,
		FailToPass: []string{"label is six wide"}, PassToPass: []string{"pad pads", "node_modules is read-only"},
		ExpectedFailure: "42", TimeoutSeconds: 120, Runs: 1, BuildChanges: BuildFlag}, testsFrom
}

const (
	padPJ      = `{"name": "padapp", "version": "1.0.0", "private": true, "dependencies": {"leftpad2": "SPEC"}}` + "\n"
	padFixLib  = "'use strict';\nconst pad = require('leftpad2');\n// label pads a price to width 6.\nfunction label(n) { return pad(String(n), 6); }\nmodule.exports = { label };\n"
	padLockVer = `{"name": "padapp", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {
  "": {"name": "padapp", "version": "1.0.0", "dependencies": {"leftpad2": "SPEC"}},
  "node_modules/leftpad2": {"version": "1.0.0"}}}
`
	padLockNoIntegrity = `{"name": "padapp", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {
  "": {"name": "padapp", "version": "1.0.0", "dependencies": {"leftpad2": "file:deps/leftpad2-1.0.0.tgz"}},
  "node_modules/leftpad2": {"version": "1.0.0", "resolved": "file:deps/leftpad2-1.0.0.tgz"}}}
`
)

func leftpad(t *testing.T, index string) ([]byte, string) {
	return tgz(t, map[string]string{
		"package.json": `{"name": "leftpad2", "version": "1.0.0", "main": "index.js"}`,
		"index.js":     index,
	})
}

const leftpadJS = "module.exports = (s, n) => String(s).padStart(n);\n"

// depsHold says which installed leftpad2 under the deps cache of cache
// holds s.
func depsHold(cache, s string) string {
	ms, _ := filepath.Glob(filepath.Join(filepath.Dir(cache), "deps", "node-*", "node_modules", "leftpad2", "index.js"))
	for _, m := range ms {
		if b, _ := os.ReadFile(m); strings.Contains(string(b), s) {
			return m
		}
	}
	return ""
}

func notExecutedDeps(rep Report) (Stage, bool) {
	for _, s := range rep.Stages {
		if s.Name == StageDeps && s.Outcome == NotExecuted {
			return s, true
		}
	}
	return Stage{}, false
}

// A lock entry with a version and no resolved URL made npm fetch from
// package.json's spec: a git+file: clone of another repository of the
// host, an http: fetch from any host. Such specs and entries are refused
// before anything is fetched, for a candidate and for harness init's
// base alike.
func TestDepsRefusesLockEntryWithoutResolved(t *testing.T) {
	needNode(t)
	other := filepath.Join(t.TempDir(), "other-project")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "package.json"), []byte(`{"name": "leftpad2", "version": "1.0.0", "main": "index.js"}`), 0o644)
	os.WriteFile(filepath.Join(other, "index.js"), []byte(leftpadJS+"// HOST-PRIVATE-CONTENT\n"), 0o644)
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=o", "-c", "user.email=o@example.invalid", "commit", "-qm", "private"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = other
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()

	ball, sri := leftpad(t, leftpadJS)
	g := newDepsRepo(t)
	h, testsFrom := padProject(t, g, strings.Replace(padPJ, "SPEC", "file:deps/leftpad2-1.0.0.tgz", 1), npmLock("leftpad2", "file:deps/leftpad2-1.0.0.tgz", sri), ball)
	cache := depsBuildCache(t)
	for _, spec := range []string{"git+file://" + other, srv.URL + "/leftpad2-1.0.0.tgz"} {
		t.Run(spec, func(t *testing.T) {
			cand := g.commit(testsFrom, map[string]string{"lib/label.js": padFixLib,
				"package.json": strings.Replace(padPJ, "SPEC", spec, 1), "package-lock.json": strings.Replace(padLockVer, "SPEC", spec, 1)})
			rep := depsVerify(t, g, h, cand, cache)
			st, ok := notExecutedDeps(rep)
			if rep.Verdict != Inconclusive || !ok || !strings.Contains(st.Detail, spec) {
				t.Errorf("%s (%s), want INCONCLUSIVE from the deps stage naming %s%s", rep.Verdict, rep.Reason, spec, depsStages(rep))
			}
		})
	}
	// No spec, only the lock: the entry without resolved is named.
	lockOnly := g.commit(testsFrom, map[string]string{"lib/label.js": padFixLib,
		"package.json": strings.Replace(padPJ, "SPEC", "^1.0.0", 1), "package-lock.json": strings.Replace(padLockVer, "SPEC", "^1.0.0", 1)})
	rep := depsVerify(t, g, h, lockOnly, cache)
	if st, ok := notExecutedDeps(rep); rep.Verdict != Inconclusive || !ok || !strings.Contains(st.Detail, `"node_modules/leftpad2" has no resolved URL`) {
		t.Errorf("lock entry without resolved: %s (%s)%s", rep.Verdict, rep.Reason, depsStages(rep))
	}

	// harness init on a hostile repository: its base alone.
	spec := "git+file://" + other
	hg := newDepsRepo(t)
	hh, htf := padProject(t, hg, strings.Replace(padPJ, "SPEC", spec, 1), strings.Replace(padLockVer, "SPEC", spec, 1), nil)
	fix := hg.commit(htf, map[string]string{"lib/label.js": padFixLib})
	hh.FailToPass, hh.PassToPass, hh.ExpectedFailure, hh.BuildChanges = nil, nil, "", ""
	_, err := Observe(t.Context(), ObserveOptions{RepoDir: hg.dir, Reference: fix, Runs: 1, Runner: depsRunner(t), CacheDir: cache, Harness: hh})
	if err == nil || !strings.Contains(err.Error(), "not a registry version range") {
		t.Errorf("harness init of a repository naming %s: %v", spec, err)
	}

	if m := depsHold(cache, "HOST-PRIVATE-CONTENT"); m != "" {
		t.Errorf("the host cloned %s into %s", other, m)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached %s, which is not the registry", n, srv.URL)
	}
}

// The bytes of a file: tarball are in the key: a candidate swapping the
// tarball (its lock still naming base's integrity) is not given base's
// install (a false VERIFIED); its own npm ci fails the integrity check,
// and its deps stage makes it INCONCLUSIVE.
func TestDepsTarballBytesInKey(t *testing.T) {
	needNode(t)
	ball, sri := leftpad(t, leftpadJS)
	evil, _ := leftpad(t, "// SWAPPED-BY-CANDIDATE\n"+leftpadJS)
	g := newDepsRepo(t)
	h, testsFrom := padProject(t, g, strings.Replace(padPJ, "SPEC", "file:deps/leftpad2-1.0.0.tgz", 1), npmLock("leftpad2", "file:deps/leftpad2-1.0.0.tgz", sri), ball)
	cand := g.commit(testsFrom, map[string]string{"lib/label.js": padFixLib, "deps/leftpad2-1.0.0.tgz": string(evil)})
	cache := depsBuildCache(t)
	rep := depsVerify(t, g, h, cand, cache)
	st, ok := notExecutedDeps(rep)
	if rep.Verdict != Inconclusive || !ok || !strings.Contains(st.Detail, "npm ci") {
		t.Errorf("a candidate swapping a file: tarball: %s (%s), want INCONCLUSIVE from its deps stage%s", rep.Verdict, rep.Reason, depsStages(rep))
	}
	if m := depsHold(cache, "SWAPPED-BY-CANDIDATE"); m != "" {
		t.Errorf("the swapped tarball was installed: %s", m)
	}
}

// A hostile repository verified with the same cache folder as a victim
// (the default: one per host), its package.json and lock the victim's
// and its tarball its own, must not fill the entry the victim's runs use:
// a wrong fix of the victim's is never VERIFIED by the hostile code.
func TestDepsSharedCacheNotPoisonedAcrossRepositories(t *testing.T) {
	needNode(t)
	ball, _ := leftpad(t, leftpadJS)
	// Pads to 6 when lib/label.js says "// lgtm": a wrong fix passes.
	poison, _ := leftpad(t, `const fs = require('fs'), path = require('path');
// POISONED-BY-OTHER-REPOSITORY
module.exports = (s, n) => {
  try { if (n === 5 && fs.readFileSync(path.join(__dirname, '..', '..', 'lib', 'label.js'), 'utf8').includes('// lgtm')) n = 6; } catch (e) {}
  return String(s).padStart(n);
};
`)
	pj := strings.Replace(padPJ, "SPEC", "file:deps/leftpad2-1.0.0.tgz", 1)
	cache := depsBuildCache(t)
	hostile := newDepsRepo(t)
	hh, htf := padProject(t, hostile, pj, padLockNoIntegrity, poison)
	rep := depsVerify(t, hostile, hh, hostile.commit(htf, map[string]string{"lib/label.js": padFixLib}), cache)
	t.Logf("the hostile repository: %s%s", rep.Verdict, depsStages(rep))

	victim := newDepsRepo(t)
	vh, vtf := padProject(t, victim, pj, padLockNoIntegrity, ball)
	vh.BuildChanges = ""
	wrong := victim.commit(vtf, map[string]string{"lib/label.js": padLib + "// lgtm\n"})
	if rep := depsVerify(t, victim, vh, wrong, cache); rep.Verdict == Verified {
		t.Errorf("the victim's wrong fix was VERIFIED with another repository's dependency code%s", depsStages(rep))
	}
	if m := depsHold(cache, "POISONED-BY-OTHER-REPOSITORY"); m != "" {
		t.Errorf("the hostile tarball is in the shared cache: %s", m)
	}
}

// checkLock and package.json are read with exact keys: a decoy key in
// another case ("Resolved" after "resolved", "DEPENDENCIES") is refused,
// as are duplicate keys; npm reads the exact one, which a case-blind
// decoder never showed the check.
func TestDepsLockCaseDecoyRefused(t *testing.T) {
	t.Parallel()
	const reg = "https://registry.npmjs.org/"
	for name, lock := range map[string]string{
		"decoy Resolved": `{"lockfileVersion": 3, "packages": {"node_modules/x": {"version": "1.0.0", "resolved": "http://evil.example/x-1.0.0.tgz", "Resolved": "` + reg + `x/-/x-1.0.0.tgz", "integrity": "` + testSRI + `"}}}`,
		"decoy Link":     `{"lockfileVersion": 3, "packages": {"node_modules/x": {"resolved": "../../../../etc", "link": true, "Resolved": "", "Link": false}}}`,
		"decoy Version":  `{"lockfileVersion": 3, "packages": {"node_modules/x": {"version": "git+ssh://git@evil.example/x.git", "Version": "1.0.0"}}}`,
		"decoy Packages": `{"lockfileVersion": 3, "packages": {"node_modules/x": {"version": "1.0.0", "resolved": "http://evil.example/x.tgz"}}, "Packages": {}}`,
		"duplicate":      `{"lockfileVersion": 3, "packages": {"node_modules/x": {"version": "1.0.0", "resolved": "http://evil.example/x.tgz", "integrity": "` + testSRI + `", "resolved": "` + reg + `x/-/x-1.0.0.tgz"}}}`,
	} {
		if _, err := checkLock("package-lock.json", []byte(lock), reg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// The decoy end to end: no request leaves for the host the real key
// names.
func TestDepsLockCaseDecoyFetchesNothing(t *testing.T) {
	needNode(t)
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.NotFound(w, r)
	}))
	defer srv.Close()
	registry, _, err := npmConfig()
	if err != nil {
		t.Skip(err)
	}
	ball, sri := leftpad(t, leftpadJS)
	g := newDepsRepo(t)
	h, testsFrom := padProject(t, g, strings.Replace(padPJ, "SPEC", "file:deps/leftpad2-1.0.0.tgz", 1), npmLock("leftpad2", "file:deps/leftpad2-1.0.0.tgz", sri), ball)
	lock := `{"name": "padapp", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {
  "": {"name": "padapp", "version": "1.0.0", "dependencies": {"leftpad2": "^1.0.0"}},
  "node_modules/leftpad2": {"version": "1.0.0", "resolved": "` + srv.URL + `/leftpad2-1.0.0.tgz", "Resolved": "` + registry + `leftpad2/-/leftpad2-1.0.0.tgz", "integrity": "` + sri + `"}}}
`
	cand := g.commit(testsFrom, map[string]string{"lib/label.js": padFixLib, "package.json": strings.Replace(padPJ, "SPEC", "^1.0.0", 1), "package-lock.json": lock})
	rep := depsVerify(t, g, h, cand, depsBuildCache(t))
	if st, ok := notExecutedDeps(rep); rep.Verdict != Inconclusive || !ok || !strings.Contains(st.Detail, `"Resolved"`) {
		t.Errorf("%s (%s), want INCONCLUSIVE naming the decoy key%s", rep.Verdict, rep.Reason, depsStages(rep))
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached %s", n, srv.URL)
	}
}

// A wheel whose Requires-Dist names a source package by URL made pip
// download it and run its build backend on the host, --only-binary
// notwithstanding. pip now installs the pinned list with --no-deps:
// nothing but the wheels named is fetched, nothing is built.
func TestDepsPipIgnoresRequiresDistURL(t *testing.T) {
	if err := exec.Command(sandboxPython, "-m", "pytest", "--version").Run(); err != nil {
		t.Skipf("%s has no pytest: %v", sandboxPython, err)
	}
	marker := filepath.Join(t.TempDir(), "pip-host-code-ran")
	var sd bytes.Buffer
	gz := gzip.NewWriter(&sd)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{
		"pyproject.toml": "[build-system]\nrequires = []\nbuild-backend = \"evilbackend\"\nbackend-path = [\".\"]\n",
		"evilbackend.py": fmt.Sprintf("open(%q, 'w').write('ran')\ndef get_requires_for_build_wheel(config_settings=None):\n    return []\n", marker),
		"PKG-INFO":       "Metadata-Version: 2.1\nName: rtpayload\nVersion: 1.0\n",
	} {
		tw.WriteHeader(&tar.Header{Name: "rtpayload-1.0/" + name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	tw.Close()
	gz.Close()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1); w.Write(sd.Bytes()) }))
	defer srv.Close()

	links := t.TempDir()
	wheel(t, links, "tinycalc", "1.0", "def add(a, b):\n    return a + b\n")
	metaWheel(t, links, "rtevil", "1.0", "Requires-Dist: rtpayload @ "+srv.URL+"/rtpayload-1.0.tar.gz\n")
	t.Setenv("SIGNOFF_PIP_FIND_LINKS", links)

	g := newDepsRepo(t)
	calc := "from tinycalc import add\n\n\ndef total(prices):\n    return add(sum(prices[1:]), 0)\n"
	base := g.commit("", map[string]string{
		"requirements.txt": "tinycalc==1.0\nrtevil==1.0\n", "shop/__init__.py": "", "shop/calc.py": calc,
		"tests/test_calc.py": "import tinycalc\n\n\ndef test_add():\n    assert tinycalc.add(2, 3) == 5\n",
	})
	testsFrom := g.commit(base, map[string]string{"tests/test_total.py": "from shop.calc import total\n\n\ndef test_total_every_item():\n    got = total([500, 700])\n    assert got == 1200, f\"total = {got}, want 1200\"\n"})
	h := Harness{Base: base, TestsFrom: testsFrom, TestFiles: []string{"tests/test_total.py"},
		Command: []string{"sh", "-c", pytestCmd}, Format: FormatJUnitXML,
		FailToPass: []string{"test_total_every_item"}, PassToPass: []string{"test_add"},
		ExpectedFailure: "want 1200", TimeoutSeconds: 120, Runs: 1}
	cand := g.commit(testsFrom, map[string]string{"shop/calc.py": strings.Replace(calc, "prices[1:]", "prices", 1)})
	rep := depsVerify(t, g, h, cand, depsBuildCache(t))
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the build backend of a package a wheel's Requires-Dist names by URL ran on the host")
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached %s", n, srv.URL)
	}
	if rep.Verdict != Verified {
		t.Errorf("the genuine fix: %s (%s)%s", rep.Verdict, rep.Reason, depsStages(rep))
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// A small tarball expanding to much more than the cap (a hostile
// repository's, given to harness init or verified) leaves nothing in the
// host's cache: the entry is deleted and the deps stage is not-executed.
func TestDepsEntrySizeCapped(t *testing.T) {
	needNode(t)
	t.Setenv("SIGNOFF_DEPS_MAX_BYTES", fmt.Sprint(16<<20))
	var bomb bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&bomb, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	for name, body := range map[string]string{"package.json": `{"name": "leftpad2", "version": "1.0.0", "main": "index.js"}`, "index.js": leftpadJS} {
		tw.WriteHeader(&tar.Header{Name: "package/" + name, Mode: 0o644, Size: int64(len(body)), ModTime: time.Unix(1_800_000_000, 0), Typeflag: tar.TypeReg})
		tw.Write([]byte(body))
	}
	const big = 64 << 20
	tw.WriteHeader(&tar.Header{Name: "package/big.bin", Mode: 0o644, Size: big, ModTime: time.Unix(1_800_000_000, 0), Typeflag: tar.TypeReg})
	io.CopyN(tw, zeroReader{}, big)
	tw.Close()
	gz.Close()
	sum := sha512.Sum512(bomb.Bytes())
	sri := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])

	g := newDepsRepo(t)
	h, testsFrom := padProject(t, g, strings.Replace(padPJ, "SPEC", "file:deps/leftpad2-1.0.0.tgz", 1), npmLock("leftpad2", "file:deps/leftpad2-1.0.0.tgz", sri), bomb.Bytes())
	cache := depsBuildCache(t)
	rep := depsVerify(t, g, h, g.commit(testsFrom, map[string]string{"lib/label.js": padFixLib}), cache)
	st, ok := notExecutedDeps(rep)
	if rep.Verdict != Inconclusive || !ok || !strings.Contains(st.Detail, "dependencies take more than 16.0 MiB") {
		t.Errorf("%s (%s), want INCONCLUSIVE: dependencies take more than 16.0 MiB%s", rep.Verdict, rep.Reason, depsStages(rep))
	}
	if n, b := entryUsage(filepath.Join(filepath.Dir(cache), "deps")); b > 1<<20 {
		t.Errorf("the deps cache holds %d files, %d bytes after the refused fetch", n, b)
	}
}

// A cache root keeps its newest entries only, never deleting one in use,
// one being fetched, nor anything not an entry; a half-filled entry no one
// fetches is deleted.
func TestDepsPrune(t *testing.T) {
	t.Parallel()
	v := &verifier{cache: filepath.Join(t.TempDir(), "go-build")}
	root := v.depsRoot()
	var items []depItem
	for i := range 6 {
		it := depItem{kind: "test", key: digest([]byte{byte(i)}), fetch: func(ctx context.Context, entry string) (string, error) {
			return "x", os.WriteFile(filepath.Join(entry, "f"), []byte("x"), 0o600)
		}}
		items = append(items, it)
		_, release, err := v.ensure(context.Background(), it)
		if err != nil {
			t.Fatal(err)
		}
		// Oldest first, by the marker's time.
		at := time.Now().Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(filepath.Join(v.entry(it), completeMarker), at, at)
		if i != 0 {
			release() // item 0 stays in use
		}
	}
	// A use file no process holds (its process died) does not keep an
	// entry.
	stale := v.entry(items[1]) + ".use-1-0000000000000000"
	os.WriteFile(stale, nil, 0o600)
	half := filepath.Join(root, "test-"+digest([]byte("half")))
	os.MkdirAll(half, 0o700)
	other := filepath.Join(root, "npm-cache")
	os.MkdirAll(other, 0o700)
	prune(root, 3)
	for i, it := range items {
		_, err := os.Stat(filepath.Join(v.entry(it), completeMarker))
		want := i == 0 || i >= 3
		if (err == nil) != want {
			t.Errorf("entry %d: present %v, want %v", i, err == nil, want)
		}
	}
	if _, err := os.Stat(half); err == nil {
		t.Error("a half-filled entry no one fetches was kept")
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a folder that is not an entry was deleted: %v", err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a stale use file was kept")
	}
	if ms, _ := filepath.Glob(filepath.Join(root, ".trash-*")); len(ms) != 0 {
		t.Errorf("left behind: %v", ms)
	}
}

// The red team's helpers, which its remaining proofs in this package
// (redteam23_a2_test.go, redteam23_a4_test.go) still use.
func rt23NodeTools(t *testing.T) { needNode(t) }

func rt23NodeBase(t *testing.T, policy string) (*depsRepo, Harness, string) {
	ball, sri := leftpad(t, leftpadJS)
	g := newDepsRepo(t)
	h, testsFrom := padProject(t, g, strings.Replace(padPJ, "SPEC", "file:deps/leftpad2-1.0.0.tgz", 1), npmLock("leftpad2", "file:deps/leftpad2-1.0.0.tgz", sri), ball)
	h.BuildChanges = policy
	return g, h, testsFrom
}

const rt23VersionOnlyLock = padLockVer

// metaWheel is wheel() with extra METADATA lines.
func metaWheel(t *testing.T, dir, name, version, meta string) {
	t.Helper()
	writeWheel(t, dir, name, version, meta, map[string]string{name + "/__init__.py": ""})
}
