package verify_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/evidence"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/verify"
)

// baseEntries lists the stored base stages beside the build cache.
func baseEntries(t testing.TB, cache string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(cache), "base-runs", "*.json"))
	return m
}

// TestBaseCacheReuseAndKey runs the orchestration with scripted runs: a
// base stage that reproduced is stored and reused (only the candidate
// runs, in sequence and side by side), and anything its result depends
// on (the harness, the runner's limits, the base) misses; a corrupted or
// forged entry, a base that did not reproduce, the cache turned off and a
// reproduction under review never take or leave an entry.
func TestBaseCacheReuseAndKey(t *testing.T) {
	t.Parallel()
	s := sample(t)
	cache := filepath.Join(t.TempDir(), "go-build")
	type script = []func(sandbox.Spec) (sandbox.Result, error)
	verifyWith := func(t *testing.T, h verify.Harness, cand string, sc script, mods ...func(*verify.Options)) (verify.Report, *fakeRunner) {
		t.Helper()
		f := &fakeRunner{script: sc}
		o := verify.Options{RepoDir: s.Dir, Harness: h, Candidate: cand, Runner: f, CacheDir: cache, BaseCache: true}
		for _, m := range mods {
			m(&o)
		}
		rep, err := verify.Verify(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		return rep, f
	}
	h := couponHarness(t, s)
	full := script{ok(baseFails), ok(candidatePass)}
	candOnly := script{ok(candidatePass)}

	// A miss runs base and stores it, in a directory only we can read.
	rep0, f := verifyWith(t, h, shoplite.BranchGenuine, full)
	rep := rep0
	if rep.Verdict != verify.Verified || f.calls != 2 || stage(rep, verify.StageBase, 1).Reused != "" {
		t.Fatalf("first verification: %s after %d runs\n%s", rep.Verdict, f.calls, verify.Table(rep))
	}
	entries := baseEntries(t, cache)
	if len(entries) != 1 {
		t.Fatalf("stored entries = %v, want 1", entries)
	}
	if fi, err := os.Stat(filepath.Dir(entries[0])); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("base cache directory: %v, %v; want mode 0700", fi.Mode(), err)
	}
	// A hit runs only the candidate, in sequence and side by side.
	for _, parallel := range []bool{false, true} {
		rep, f = verifyWith(t, h, shoplite.BranchFalseTestEdit, candOnly, func(o *verify.Options) { o.Parallel = parallel })
		b := stage(rep, verify.StageBase, 1)
		if rep.Verdict != verify.Verified || f.calls != 1 || len(f.prebuilds) != 0 || b.Reused == "" ||
			!strings.Contains(b.Detail, "(reused: base run of "+b.Reused+", same base, harness, runner and environment)") || string(b.Stdout) != string(baseFails) {
			t.Fatalf("parallel=%v: %s after %d runs, base %+v\n%s", parallel, rep.Verdict, f.calls, b, verify.Table(rep))
		}
		if _, err := time.Parse(time.RFC3339, b.Reused); err != nil {
			t.Fatalf("reused = %q: %v", b.Reused, err)
		}
	}

	// What base's result depends on is in the key.
	newBase := commitChanges(t, s.Dir, "cache/base2", s.Base, map[string]string{"NOTES": "another base\n"})
	repro, _ := shoplite.Files(shoplite.BranchReproCoupon)
	newTests := commitChanges(t, s.Dir, "cache/tests2", newBase, map[string]string{"cart/coupon_repro_test.go": string(repro["cart/coupon_repro_test.go"])})
	genuine, _ := shoplite.Files(shoplite.BranchGenuine)
	newCand := commitChanges(t, s.Dir, "cache/cand2", newTests, map[string]string{"cart/cart.go": string(genuine["cart/cart.go"])})
	for _, tc := range []struct {
		name string
		h    func(*verify.Harness)
		cand string
		o    func(*verify.Options)
	}{
		{"the harness", func(h *verify.Harness) { h.PassToPass = h.PassToPass[1:] }, shoplite.BranchGenuine, nil},
		{"the harness's timeout", func(h *verify.Harness) { h.TimeoutSeconds++ }, shoplite.BranchGenuine, nil},
		{"the runner's limits", nil, shoplite.BranchGenuine, func(o *verify.Options) { o.Limits.MemoryBytes = 3 << 30 }},
		{"the build limit", nil, shoplite.BranchGenuine, func(o *verify.Options) { o.BuildTimeout = time.Minute }},
		{"the base", func(h *verify.Harness) { h.Base, h.TestsFrom = newBase, newTests }, newCand, nil},
	} {
		hh := couponHarness(t, s)
		if tc.h != nil {
			tc.h(&hh)
		}
		mods := []func(*verify.Options){}
		if tc.o != nil {
			mods = append(mods, tc.o)
		}
		rep, f := verifyWith(t, hh, tc.cand, full, mods...)
		if rep.Verdict != verify.Verified || f.calls != 2 || stage(rep, verify.StageBase, 1).Reused != "" {
			t.Errorf("changing %s: %s after %d runs (want base run again)\n%s", tc.name, rep.Verdict, f.calls, verify.Table(rep))
		}
	}
	entries = baseEntries(t, cache)
	if len(entries) != 6 {
		t.Fatalf("stored entries = %d, want 6 (one per key)", len(entries))
	}

	// The cache off: base runs, whatever is stored.
	if rep, f := verifyWith(t, h, shoplite.BranchGenuine, full, func(o *verify.Options) { o.BaseCache = false }); f.calls != 2 || rep.Verdict != verify.Verified {
		t.Fatalf("cache off: %s after %d runs", rep.Verdict, f.calls)
	}

	// A stored entry is trusted whole or not at all.
	key := entryFor(t, cache, rep0.HarnessDigest, rep0.RunnerDigest)
	good, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	forged := forgeEntry(t, good, candidatePass) // base "reproduced" by output in which the test passes
	for _, tc := range []struct {
		name  string
		bytes []byte
	}{
		{"truncated", good[:len(good)/2]},
		{"not JSON", []byte("garbage")},
		{"an unknown field", append([]byte(`{"extra":1,`), good[1:]...)},
		{"output that does not reproduce, digests recomputed", forged},
		{"older than a day", setCreated(t, good, time.Now().Add(-25*time.Hour))},
		{"made in the future", setCreated(t, good, time.Now().Add(time.Hour))},
	} {
		if err := os.WriteFile(key, tc.bytes, 0o600); err != nil {
			t.Fatal(err)
		}
		rep, f := verifyWith(t, h, shoplite.BranchGenuine, full)
		if f.calls != 2 || stage(rep, verify.StageBase, 1).Reused != "" || rep.Verdict != verify.Verified {
			t.Errorf("%s entry: %s after %d runs, want base run again", tc.name, rep.Verdict, f.calls)
		}
		if b, _ := os.ReadFile(key); string(b) == string(tc.bytes) {
			t.Errorf("%s entry: not replaced by the new base run", tc.name)
		}
	}

	// A base that did not reproduce is not stored; nor is a reproduction's.
	before := len(baseEntries(t, cache))
	if rep, _ := verifyWith(t, h, shoplite.BranchGenuine, script{ok(candidatePass)}, func(o *verify.Options) { o.Limits.MemoryBytes = 5 << 30 }); rep.Verdict != verify.Inconclusive {
		t.Fatalf("a base that passes: %s", rep.Verdict)
	}
	f = &fakeRunner{script: script{ok(baseFails)}}
	if _, err := verify.Reproduce(context.Background(), verify.Options{RepoDir: s.Dir, Harness: h, Runner: f, CacheDir: cache, BaseCache: true, Limits: sandbox.Limits{MemoryBytes: 6 << 30}}); err != nil || f.calls != 1 {
		t.Fatalf("Reproduce: %d runs, %v", f.calls, err)
	}
	if after := len(baseEntries(t, cache)); after != before {
		t.Fatalf("entries %d -> %d: a base that did not reproduce, or a reproduction, was stored", before, after)
	}
}

// entryFor is the stored entry of the harness digest d and the runner
// digest r with the default build limit.
func entryFor(t testing.TB, cache, d, r string) string {
	t.Helper()
	for _, e := range baseEntries(t, cache) {
		var v struct {
			Inputs struct {
				HarnessDigest  string `json:"harness_digest"`
				RunnerDigest   string `json:"runner_digest"`
				BuildTimeoutMS int64  `json:"build_timeout_ms"`
			} `json:"inputs"`
		}
		b, _ := os.ReadFile(e)
		if json.Unmarshal(b, &v) == nil && v.Inputs.HarnessDigest == d && v.Inputs.RunnerDigest == r && v.Inputs.BuildTimeoutMS == (10*time.Minute).Milliseconds() {
			return e
		}
	}
	t.Fatalf("no entry for harness %s", d)
	return ""
}

// forgeEntry replaces the stored output of base run 1 with stdout and
// recomputes its digest, as someone able to write the directory could.
func forgeEntry(t testing.TB, entry, stdout []byte) []byte {
	t.Helper()
	var e map[string]any
	if err := json.Unmarshal(entry, &e); err != nil {
		t.Fatal(err)
	}
	for _, st := range e["stages"].([]any) {
		m := st.(map[string]any)
		inner := m["stage"].(map[string]any)
		if inner["run"] != float64(1) {
			continue
		}
		m["stdout"] = stdout
		inner["runner"].(map[string]any)["stdout_sha256"] = verify.SHA256(stdout)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBaseCacheTwoCandidates verifies two candidates of one harness with
// the real sandbox and go test: the second reuses the first's base stage,
// its bundle verifies, and a change of the runner's limits runs base again.
func TestBaseCacheTwoCandidates(t *testing.T) {
	runner := realRunner(t)
	s := sample(t)
	// A base of this test's own (the shared build cache's base-runs
	// directory outlives test runs, and ShopLite's commits do not change).
	base := commitChanges(t, s.Dir, "cache/base", s.Base, map[string]string{"NONCE": time.Now().String() + "\n"})
	repro, _ := shoplite.Files(shoplite.BranchReproCoupon)
	tests := commitChanges(t, s.Dir, "cache/tests", base, map[string]string{"cart/coupon_repro_test.go": string(repro["cart/coupon_repro_test.go"])})
	genuine, _ := shoplite.Files(shoplite.BranchGenuine)
	fixed := string(genuine["cart/cart.go"])
	cand1 := commitChanges(t, s.Dir, "cache/cand1", tests, map[string]string{"cart/cart.go": fixed})
	cand2 := commitChanges(t, s.Dir, "cache/cand2", tests, map[string]string{"cart/cart.go": fixed + "\n// Written another way.\n"})
	h := couponHarness(t, s, func(h *verify.Harness) { h.Base, h.TestsFrom = base, tests })
	run := func(cand string, mods ...func(*verify.Options)) (verify.Report, time.Duration) {
		t.Helper()
		o := verify.Options{RepoDir: s.Dir, Harness: h, Candidate: cand, Runner: runner, CacheDir: buildCache(t), BaseCache: true, Parallel: true}
		for _, m := range mods {
			m(&o)
		}
		start := time.Now()
		rep, err := verify.Verify(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != verify.Verified {
			t.Fatalf("%s: %s\n%s", cand, rep.Verdict, verify.Table(rep))
		}
		return rep, time.Since(start)
	}
	rep1, d1 := run(cand1)
	rep2, d2 := run(cand2)
	t.Logf("first candidate %.2fs (base run), second %.2fs (base reused): %.0f%%", d1.Seconds(), d2.Seconds(), 100*d2.Seconds()/d1.Seconds())
	if b := stage(rep1, verify.StageBase, 1); b.Reused != "" {
		t.Fatalf("first verification reused %q", b.Reused)
	}
	b := stage(rep2, verify.StageBase, 1)
	if b.Reused == "" || !strings.Contains(b.Detail, "reused: base run of") || b.Runner == nil || !b.Runner.Isolated {
		t.Fatalf("second verification's base: %+v\n%s", b, verify.Table(rep2))
	}
	t.Logf("second verification:\n%s", verify.Table(rep2))

	// Its evidence bundle, reused base run and all, verifies.
	raw, _ := json.Marshal(h)
	pub, key, _ := ed25519.GenerateKey(nil)
	dir := filepath.Join(t.TempDir(), "bundle")
	if err := evidence.WriteBundle(dir, rep2, raw, key, false); err != nil {
		t.Fatal(err)
	}
	f, err := evidence.VerifyBundle(dir, []ed25519.PublicKey{pub})
	if err != nil || !f.OK() || f.Verdict != verify.Verified {
		t.Fatalf("the bundle with a reused base does not verify (%v):\n%s", err, f)
	}
	// It says which runs were not made for this candidate.
	if !strings.Contains(f.String(), "reused from a base run at") {
		t.Errorf("evidence verify does not say base was reused:\n%s", f)
	}

	// Other limits, another key: base runs again.
	rep3, _ := run(cand2, func(o *verify.Options) { o.Limits.MemoryBytes = 3 << 30 })
	if b := stage(rep3, verify.StageBase, 1); b.Reused != "" {
		t.Fatalf("base reused under other limits: %+v", b)
	}
}

// setCreated gives a stored entry another creation time: the cache trusts
// an entry for a day, since not everything the host gives the sandbox is
// in its key.
func setCreated(t testing.TB, entry []byte, when time.Time) []byte {
	t.Helper()
	var e map[string]any
	if err := json.Unmarshal(entry, &e); err != nil {
		t.Fatal(err)
	}
	e["created"] = when.UTC().Format(time.RFC3339)
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
