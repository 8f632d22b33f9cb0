package verify

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// Under the default policy (refuse), a candidate that
// changes package.json's dependencies and the lock (here to the spec
// that finding 1 abuses) is refused by the static checks before any
// fetch: no request reaches the server, no deps stage for it.
func TestDepsCandidateChangingDependenciesIsRefusedBeforeFetch(t *testing.T) {
	rt23NodeTools(t)
	g, h, testsFrom := rt23NodeBase(t, "")
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1); http.NotFound(w, r) }))
	defer srv.Close()
	spec := srv.URL + "/x/leftpad2-1.0.0.tgz"
	for name, files := range map[string]map[string]string{
		"package.json and lock": {
			"lib/label.js":      strings.Replace(padLib, "5)", "6)", 1),
			"package.json":      `{"name": "padapp", "version": "1.0.0", "private": true, "dependencies": {"leftpad2": "` + spec + `"}}` + "\n",
			"package-lock.json": strings.Replace(rt23VersionOnlyLock, "SPEC", spec, 1),
		},
		"lock only": {
			"lib/label.js":      strings.Replace(padLib, "5)", "6)", 1),
			"package-lock.json": strings.Replace(rt23VersionOnlyLock, "SPEC", spec, 1),
		},
		"overrides only": {
			"lib/label.js": strings.Replace(padLib, "5)", "6)", 1),
			"package.json": `{"name": "padapp", "version": "1.0.0", "private": true, "dependencies": {"leftpad2": "file:deps/leftpad2-1.0.0.tgz"}, "overrides": {"leftpad2": "` + spec + `"}}` + "\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			cand := g.commit(testsFrom, files)
			rep := depsVerify(t, g, h, cand, depsBuildCache(t))
			if rep.Verdict != Rejected || !strings.Contains(rep.Reason, "static checks refuse") {
				t.Errorf("%s (%s)%s", rep.Verdict, rep.Reason, depsStages(rep))
			}
			for _, s := range rep.Stages {
				if s.Name == StageDeps {
					t.Errorf("a deps stage ran: %+v", s)
				}
			}
		})
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests reached %s", hits.Load(), srv.URL)
	}
}

// Symlinks in the candidate's checkout (node_modules ->
// a folder outside, package-lock.json -> a file outside) are refused by
// the static checks (a fix changes regular files), even with
// build_changes "flag"; behind them the deps stage would remove a
// node_modules link (not its target) and refuse a lock that is not a
// regular file.
func TestDepsSymlinkedManifestsAreRefused(t *testing.T) {
	rt23NodeTools(t)
	g, h, testsFrom := rt23NodeBase(t, BuildFlag)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o644)
	mk := func(files map[string]string, links map[string]string) string {
		if err := g.r.Checkout(t.Context(), testsFrom); err != nil {
			t.Fatal(err)
		}
		for p, c := range files {
			os.WriteFile(filepath.Join(g.dir, p), []byte(c), 0o644)
		}
		for p, target := range links {
			os.RemoveAll(filepath.Join(g.dir, p))
			if err := os.Symlink(target, filepath.Join(g.dir, p)); err != nil {
				t.Fatal(err)
			}
		}
		return g.commit("", nil)
	}
	fixed := map[string]string{"lib/label.js": strings.Replace(padLib, "5)", "6)", 1)}
	cand := mk(fixed, map[string]string{"node_modules": outside})
	rep := depsVerify(t, g, h, cand, depsBuildCache(t))
	if rep.Verdict != Verified && !(rep.Verdict == Rejected && strings.Contains(rep.Reason, "symbolic link")) {
		t.Errorf("node_modules symlink: %s (%s)%s", rep.Verdict, rep.Reason, depsStages(rep))
	}
	if _, err := os.Stat(filepath.Join(outside, "keep")); err != nil {
		t.Errorf("the link's target was touched: %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("the link's target now holds %d entries", len(ents))
	}
	lockOut := filepath.Join(outside, "package-lock.json")
	b, _ := g.r.ShowFile(t.Context(), testsFrom, "package-lock.json")
	os.WriteFile(lockOut, b, 0o644)
	cand = mk(fixed, map[string]string{"package-lock.json": lockOut})
	rep = depsVerify(t, g, h, cand, depsBuildCache(t))
	if !(rep.Verdict == Inconclusive && strings.Contains(rep.Reason, "not a regular file")) && !(rep.Verdict == Rejected && strings.Contains(rep.Reason, "symbolic link")) {
		t.Errorf("package-lock.json symlink: %s (%s)%s", rep.Verdict, rep.Reason, depsStages(rep))
	}
}
