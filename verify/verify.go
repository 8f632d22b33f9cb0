package verify

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/sandbox"
)

// Options is one verification.
type Options struct {
	// RepoDir is the git repository holding base, tests_from and the
	// candidate.
	RepoDir string
	Harness Harness
	// Candidate is the revision to verify (branch, tag or commit).
	Candidate string
	// Runs overrides the harness's runs when positive.
	Runs   int
	Runner sandbox.Runner
	// Allowlist, when not empty, holds the globs (MatchGlob) a candidate
	// may change; any other changed path refuses it before running.
	Allowlist []string
	// HarnessPaths are globs the candidate must not touch at all (where
	// the project keeps its harness definitions, for example). The
	// harness test files are not among them: a candidate's edits to those
	// are discarded and reported, and its copies are replaced.
	HarnessPaths []string
	// CacheDir is the trusted Go build cache shared by runs. Empty means a
	// "signoff/go-build" directory in the user's cache directory. Only
	// base runs write it (the project's own code under reviewed tests);
	// a candidate's runs, and a reproduction's, read it through a layer
	// of their own that is thrown away with the run, so nothing a
	// candidate's code writes is read by any other run.
	CacheDir string
	// Limits overrides the sandbox defaults; its WallTime is always the
	// harness's timeout.
	Limits sandbox.Limits
	// Parallel runs the candidate's runs beside base's instead of after
	// them, and a stage's runs at once (at most one per CPU in flight):
	// about a quarter faster on two cores, at the price of starting
	// the candidate's runs even when base will turn out not to reproduce
	// the bug (they are then stopped and discarded). The verdict is the
	// same either way.
	Parallel bool
	// BaseCache keeps each base stage that reproduced the bug, runs and
	// output, beside the build cache (basecache.go), and reuses it for
	// later candidates of the same base, harness, runner and environment.
	// Off by default in the library; `signoff verify` turns it on.
	BaseCache bool
	// MaxMemoryBytes is the most memory a harness may ask for
	// (DefaultMaxMemoryBytes when 0); one asking more is refused.
	MaxMemoryBytes int64
	// BuildTimeout is the limit of a build (build.go) when positive; else
	// the harness's, else ten minutes.
	BuildTimeout time.Duration
}

// DefaultMaxMemoryBytes is the memory a harness may ask for when
// Options.MaxMemoryBytes is 0.
const DefaultMaxMemoryBytes int64 = 8 << 30

// Verify runs the whole verification and returns the report. The error is
// for a verification that could not be set up: an invalid harness,
// unknown commits, harness test files missing at tests_from, no runner. It
// is never used for a verdict: a run that could not execute makes the
// report INCONCLUSIVE, and a report is VERIFIED only when everything held.
func Verify(ctx context.Context, opts Options) (Report, error) {
	v, rep, err := prepare(ctx, opts)
	if err != nil {
		return Report{}, err
	}
	cand, runs := rep.Candidate, rep.Runs
	if rep.TestOnly, err = v.findTestOnly(ctx); err != nil {
		return Report{}, fmt.Errorf("verify: test-only packages: %w", err)
	}
	v.testOnly = rep.TestOnly

	// Stage 0: what the candidate changed.
	diff, err := v.diff(ctx, cand, &rep)
	if err != nil {
		return Report{}, fmt.Errorf("verify: %w", err)
	}
	rep.Stages = append(rep.Stages, diff)
	if diff.Outcome == Refused {
		rep.Stages = append(rep.Stages,
			Stage{Name: StageBase, Outcome: Skipped, Detail: "not run: the candidate was refused"},
			Stage{Name: StageCandidate, Outcome: Skipped, Detail: "not run: the candidate was refused"})
		return finish(rep), nil
	}

	if v.opts.Parallel {
		return v.sideBySide(ctx, cand, runs, rep), nil
	}
	// Stage 1: the harness must detect the bug on base, every run.
	ok := v.baseStage(ctx, runs, &rep)
	if !ok {
		rep.Stages = append(rep.Stages, Stage{Name: StageCandidate, Outcome: Skipped, Detail: "not run: the harness did not detect the bug on base"})
		return finish(rep), nil
	}
	// Stage 2: with the harness restored, the candidate must pass, every run.
	v.runs(ctx, StageCandidate, cand, runs, Passed, &rep)
	return finish(rep), nil
}

// sideBySide runs the base stage and the candidate stage at once, each in
// its own worktree and sandbox. The verdict is decided exactly as in
// sequence: the candidate's runs count only when every base run
// reproduced the bug; otherwise they are stopped, and their results
// discarded and said to be.
func (v *verifier) sideBySide(ctx context.Context, cand string, runs int, rep Report) Report {
	if v.reuseBase(runs, &rep) {
		// Base reproduced before, under the same key: only the candidate runs.
		v.runs(ctx, StageCandidate, cand, runs, Passed, &rep)
		return finish(rep)
	}
	candCtx, stop := context.WithCancel(ctx)
	defer stop()
	var candRep Report
	done := make(chan struct{})
	go func() {
		defer close(done)
		v.runs(candCtx, StageCandidate, cand, runs, Passed, &candRep)
	}()
	first := len(rep.Stages)
	ok := v.runs(ctx, StageBase, v.h.Base, runs, Reproduced, &rep)
	if !ok {
		stop()
	} else {
		v.storeBase(&rep, runs, first)
	}
	<-done
	if !ok {
		rep.Stages = append(rep.Stages, Stage{Name: StageCandidate, Outcome: Skipped,
			Detail: "not counted: the harness did not detect the bug on base (the candidate's runs, started beside base's, were stopped and their results discarded)"})
		return finish(rep)
	}
	rep.Stages = append(rep.Stages, candRep.Stages...)
	return finish(rep)
}

// Reproduce runs only the base stage: it checks that the harness detects
// the bug on base, every run, which is what a proposed reproduction must
// show before anyone is asked about it. Candidate is ignored (the report's
// candidate is base). The report's verdict is INCONCLUSIVE unless every
// base run reproduced the bug; its Stages hold the runs, with their raw
// output for the caller to read further.
func Reproduce(ctx context.Context, opts Options) (Report, error) {
	opts.Candidate = opts.Harness.Base
	opts.Allowlist, opts.HarnessPaths = nil, nil
	v, rep, err := prepare(ctx, opts)
	if err != nil {
		return Report{}, err
	}
	// A reproduction nobody has reviewed yet is not trusted with the
	// shared cache. Base's own tests are: building them first fills the
	// cache, so the reproduction's runs compile only its own test.
	v.untrustedBase = true
	rep.Cache = candidateCache(opts.Runner)
	v.warm(ctx)
	if v.runs(ctx, StageBase, v.h.Base, rep.Runs, Reproduced, &rep) {
		rep.Verdict = Reproduced
		rep.Reason = fmt.Sprintf("every fail-to-pass test failed on base with the expected failure (%d run(s))", rep.Runs)
		return rep, nil
	}
	rep = finish(rep)
	return rep, nil
}

func prepare(ctx context.Context, opts Options) (*verifier, Report, error) {
	h := opts.Harness
	if err := h.Validate(); err != nil {
		return nil, Report{}, fmt.Errorf("verify: harness: %w", err)
	}
	if opts.Runner == nil {
		return nil, Report{}, errors.New("verify: no sandbox runner")
	}
	runs := h.Runs
	if opts.Runs != 0 {
		runs = opts.Runs
	}
	if runs < 1 || runs > MaxRuns {
		return nil, Report{}, fmt.Errorf("verify: runs %d is outside 1..%d", runs, MaxRuns)
	}
	for _, g := range append(append([]string{}, opts.Allowlist...), opts.HarnessPaths...) {
		if _, err := path.Match(strings.ReplaceAll(g, "**", "x"), ""); err != nil || g == "" {
			return nil, Report{}, fmt.Errorf("verify: bad glob %q", g)
		}
	}
	repo := &gitx.Repo{Dir: opts.RepoDir}
	for _, c := range []struct{ field, id string }{{"base", h.Base}, {"tests_from", h.TestsFrom}} {
		got, err := repo.RevParse(ctx, c.id+"^{commit}")
		if err != nil || got != c.id {
			return nil, Report{}, fmt.Errorf("verify: harness %s %s is not a commit in %s: %v", c.field, c.id, opts.RepoDir, err)
		}
	}
	cand, err := repo.RevParse(ctx, opts.Candidate+"^{commit}")
	if err != nil {
		return nil, Report{}, fmt.Errorf("verify: candidate %q is not a commit in %s: %w", opts.Candidate, opts.RepoDir, err)
	}
	files, err := ReadTestFiles(ctx, repo, h)
	if err != nil {
		return nil, Report{}, fmt.Errorf("verify: %w", err)
	}
	hd, err := DigestHarness(h, files)
	if err != nil {
		return nil, Report{}, fmt.Errorf("verify: %w", err)
	}
	gt, err := findGo()
	if err != nil {
		return nil, Report{}, fmt.Errorf("verify: %w", err)
	}
	cache := opts.CacheDir
	if cache == "" {
		if cache, err = defaultCacheDir(); err != nil {
			return nil, Report{}, fmt.Errorf("verify: %w", err)
		}
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, Report{}, fmt.Errorf("verify: build cache: %w", err)
	}
	limits := opts.Limits
	limits.WallTime = time.Duration(h.TimeoutSeconds) * time.Second
	maxMem := opts.MaxMemoryBytes
	if maxMem <= 0 {
		maxMem = DefaultMaxMemoryBytes
	}
	if m := h.MemoryBytes(); m > 0 {
		if m > maxMem {
			return nil, Report{}, fmt.Errorf("verify: the harness asks for %s of memory; this server allows at most %s (--max-memory)", FormatBytes(m), FormatBytes(maxMem))
		}
		limits.MemoryBytes = m
	}
	rep := Report{
		Base: h.Base, Candidate: cand, CandidateRev: opts.Candidate, HarnessDigest: hd,
		RunnerDigest: opts.Runner.Digest(limits), Runs: runs, TestFiles: files,
		Environment: Environment{GoVersion: gt.version, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
			Sandbox: opts.Runner.Name(), Isolated: opts.Runner.Name() != "none"},
		Changed: []string{}, HarnessEdits: []string{},
		Protected: h.ProtectedGlobs(), Unprotected: h.Unprotect, BuildChanges: h.BuildPolicy(),
	}
	if rep.Fingerprint, err = Fingerprint(rep.Identity()); err != nil {
		return nil, Report{}, fmt.Errorf("verify: fingerprint: %w", err)
	}
	v := &verifier{opts: opts, h: h, repo: repo, files: files, limits: limits, goTool: gt, cache: cache,
		slots: make(chan struct{}, max(1, runtime.NumCPU()))}
	rep.Cache = v.candidateMode()
	return v, rep, nil
}

// finish sets the verdict and the reason, the detail of the stage that
// decided it.
func finish(r Report) Report {
	r.Verdict = Decide(r.Stages)
	for _, s := range r.Stages {
		decisive := false
		switch r.Verdict {
		case Rejected:
			decisive = s.Outcome == Refused || s.Outcome == Failed || s.Outcome == Counterfeit
		case Inconclusive:
			decisive = s.Outcome == NotReproduced || s.Outcome == NotExecuted
		}
		if decisive {
			r.Reason = s.Detail
			if s.Run > 0 {
				r.Reason = fmt.Sprintf("%s run %d: %s", s.Name, s.Run, s.Detail)
			}
			return r
		}
	}
	switch r.Verdict {
	case Verified:
		r.Reason = fmt.Sprintf("every fail-to-pass test failed on base as expected and, with the harness restored, every harness test passed on the candidate (%d run(s) each)", r.Runs)
	default:
		r.Reason = "not every stage completed"
	}
	return r
}

type verifier struct {
	opts   Options
	h      Harness
	repo   *gitx.Repo
	files  map[string][]byte
	limits sandbox.Limits
	goTool goTool
	cache  string
	// untrustedBase makes base runs use the layered cache too (a
	// reproduction under review).
	untrustedBase bool
	// testOnly are the test-only package directories of tests_from,
	// frozen with the tests.
	testOnly []string
	// slots bounds the runs in flight at once with Parallel (one per
	// CPU); specMu serialises building their specs, which prepares the
	// checkout for its dependencies (deps.go).
	slots  chan struct{}
	specMu sync.Mutex
}

// protected are the globs restored from tests_from before every run: the
// harness's and the files of the test-only packages.
func (v *verifier) protected() []string {
	return append(v.h.ProtectedGlobs(), testOnlyGlobs(v.testOnly)...)
}

// findTestOnly reads the test-only packages of tests_from from a checkout
// of it (for a Go harness; others have none).
func (v *verifier) findTestOnly(ctx context.Context) ([]string, error) {
	if v.h.Format != FormatGoTestJSON {
		return nil, nil
	}
	mu := repoLock(v.repo.Dir)
	mu.Lock()
	wt, err := v.repo.AddWorktree(ctx, v.h.TestsFrom)
	mu.Unlock()
	if err != nil {
		return nil, err
	}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		wt.Close()
	}()
	return testOnlyDirs(wt.Dir)
}

// warm builds base with its own tests (and nothing of the harness) in a
// trusted run that runs no test, to fill the shared cache. It is best
// effort: a failure here shows in the runs that follow.
func (v *verifier) warm(ctx context.Context) {
	cmd := v.h.Command
	if len(cmd) < 2 || path.Base(cmd[0]) != "go" || cmd[1] != "test" || candidateCache(v.opts.Runner) != cacheLayered {
		return
	}
	mu := repoLock(v.repo.Dir)
	mu.Lock()
	wt, err := v.repo.AddWorktree(ctx, v.h.Base)
	mu.Unlock()
	if err != nil {
		return
	}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		wt.Close()
	}()
	// The base stage's prebuild, run here without the reproduction's
	// tests: a failure, or a timeout, shows in the runs that follow.
	if !slices.Contains(cmd, "-args") {
		v.prebuild(ctx, wt.Dir, cacheTrusted)
	}
}

// candidateMode is how the candidate's runs see the shared build cache:
// shielded where every test binary can be run behind Landlock through the
// witness's wrapper, else as candidateCache says.
func (v *verifier) candidateMode() string {
	mode := candidateCache(v.opts.Runner)
	if mode == cacheLayered && v.h.Format == FormatGoTestJSON && witnessCommand(v.h.Command) == "" && !writesWorkDir(v.h.Command) && landlockABI() >= 1 {
		return cacheShielded
	}
	return mode
}

// writesWorkDir says whether test binaries run by command write into the
// go command's work directory (coverage data), which a shielded binary
// may not: such runs take the layered cache.
func writesWorkDir(command []string) bool {
	for _, a := range command {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && strings.HasPrefix(name, "cover") {
			return true
		}
	}
	return false
}

// candidateCache is how runs of untrusted code see the build cache with
// runner r: through a throwaway layer where the sandbox can mount the
// cache program, else in a cold cache of their own.
func candidateCache(r sandbox.Runner) string {
	if r == nil {
		return ""
	}
	switch r.Name() {
	case sandbox.BackendBwrap, sandbox.BackendNamespaces:
		return cacheLayered
	}
	return cachePrivate
}

// ReadTestFiles reads the harness test files as they are at tests_from.
func ReadTestFiles(ctx context.Context, repo *gitx.Repo, h Harness) (map[string][]byte, error) {
	files := map[string][]byte{}
	for _, p := range h.TestFiles {
		b, err := repo.ShowFile(ctx, h.TestsFrom, p)
		if err != nil {
			return nil, fmt.Errorf("harness test file %s at %s: %w", p, h.TestsFrom, err)
		}
		files[p] = b
	}
	return files, nil
}

// HarnessDigest reads the harness test files from the repository at
// tests_from and returns the harness digest (DigestHarness).
func HarnessDigest(ctx context.Context, repoDir string, h Harness) (string, error) {
	files, err := ReadTestFiles(ctx, &gitx.Repo{Dir: repoDir}, h)
	if err != nil {
		return "", err
	}
	return DigestHarness(h, files)
}

func (v *verifier) diff(ctx context.Context, cand string, rep *Report) (Stage, error) {
	start := time.Now()
	st := Stage{Name: StageDiff}
	defer func() { st.DurationMS = time.Since(start).Milliseconds() }()
	anc, err := v.repo.IsAncestor(ctx, v.h.Base, cand)
	if err != nil {
		return st, err
	}
	changed, err := v.repo.DiffNames(ctx, v.h.Base, cand)
	if err != nil {
		return st, err
	}
	rep.Changed = append(rep.Changed, changed...)
	for _, p := range changed {
		want, isHarness := v.files[p]
		if !isHarness {
			continue
		}
		// A candidate built on tests_from carries the harness files
		// unchanged; only a different content (or a deletion) is an edit.
		got, err := v.repo.ShowFile(ctx, cand, p)
		if err != nil || !bytes.Equal(got, want) {
			rep.HarnessEdits = append(rep.HarnessEdits, p)
		}
	}
	tfBlobs, err := v.repo.Blobs(ctx, v.h.TestsFrom)
	if err != nil {
		return st, err
	}
	candBlobs, err := v.repo.Blobs(ctx, cand)
	if err != nil {
		return st, err
	}
	// Edits are judged against what the candidate was built on: the
	// reproduction's commit when it descends from it, else base.
	editBase := changed
	if onTests, err := v.repo.IsAncestor(ctx, v.h.TestsFrom, cand); err == nil && onTests {
		if editBase, err = v.repo.DiffNames(ctx, v.h.TestsFrom, cand); err != nil {
			return st, err
		}
	}
	rep.TestEdits = protectedEdits(editBase, v.protected(), tfBlobs, candBlobs)
	baseBlobs, err := v.repo.Blobs(ctx, v.h.Base)
	if err != nil {
		return st, err
	}
	if rep.Findings, err = v.findings(ctx, cand, changed, v.protected(), baseBlobs, candBlobs); err != nil {
		return st, err
	}
	st.Outcome, st.Detail = CheckDiff(changed, rep.HarnessEdits, v.opts.HarnessPaths, v.opts.Allowlist)
	if st.Outcome != Refused {
		// Git applies the checked-out tree's attributes when it writes
		// files (encodings, line ends): a candidate's .gitattributes would
		// change the bytes of the frozen tests it is judged by, whatever
		// the harness's build policy.
		for _, p := range changed {
			if path.Base(p) == ".gitattributes" {
				st.Outcome, st.Detail = Refused, "not run: "+p+" changes: git attributes change the bytes of the frozen test files at checkout"
			}
		}
	}
	if st.Outcome != Refused {
		if o, d := CheckFindings(rep.Findings, rep.BuildChanges); o == Refused && staticChecksRefuse {
			st.Outcome, st.Detail = o, d
		} else if len(rep.TestEdits) > 0 {
			st.Outcome, st.Detail = Restored, st.Detail+"; "+describeEdits(rep.TestEdits)
		}
	}
	if !anc {
		st.Outcome = Refused
		st.Detail = fmt.Sprintf("not run: the candidate %s does not descend from base %s", short(cand), short(v.h.Base))
	}
	st.DurationMS = time.Since(start).Milliseconds()
	return st, nil
}

// runs runs one stage up to n times in one worktree of commit, stopping at
// the first run whose outcome is not want. It reports whether every run
// had outcome want.
func (v *verifier) runs(ctx context.Context, stage, commit string, n int, want string, rep *Report) bool {
	dir, done, sts, ok := v.checkout(ctx, stage, commit)
	rep.Stages = append(rep.Stages, sts...)
	if !ok {
		return false
	}
	defer done()
	if stage == StageBase && !v.untrustedBase {
		// Compile first, under the build limit, so the runs' timeout is
		// the tests' (a reproduction under review has warm instead).
		if st, ok := v.prebuild(ctx, dir, cacheTrusted); !ok {
			rep.Stages = append(rep.Stages, st)
			return false
		}
	}
	if stage == StageCandidate {
		// The code that would be merged must build without its tests
		// (build.go); the runs are not started when it does not.
		if st, ok := v.build(ctx, dir, rep.Changed); ok {
			rep.Stages = append(rep.Stages, st)
			if st.Outcome != Passed {
				rep.Stages = append(rep.Stages, Stage{Name: stage, Outcome: Skipped, Detail: "not run: the build check did not pass"})
				return false
			}
		}
	}
	if v.opts.Parallel && n > 1 {
		return v.concurrentRuns(ctx, stage, n, want, dir, rep)
	}
	for i := 1; i <= n; i++ {
		st := v.run(ctx, stage, i, dir)
		rep.Stages = append(rep.Stages, st)
		if st.Outcome != want {
			return false
		}
	}
	return true
}

// checkout makes a worktree of commit for stage's runs, with the frozen
// test tree in place and its dependencies fetched outside the offline
// runs (deps.go). stages holds the deps stage when there was one, or the
// not-executed stage saying why the checkout failed (ok false, and
// nothing is left behind); done removes the worktree.
func (v *verifier) checkout(ctx context.Context, stage, commit string) (dir string, done func(), stages []Stage, ok bool) {
	mu := repoLock(v.repo.Dir)
	mu.Lock()
	wt, err := v.repo.AddWorktree(ctx, commit)
	mu.Unlock()
	if err != nil {
		return "", nil, []Stage{{Name: stage, Run: 1, Outcome: NotExecuted, Detail: "cannot check out " + short(commit) + ": " + err.Error()}}, false
	}
	done = func() {
		mu.Lock()
		defer mu.Unlock()
		wt.Close()
	}
	if _, err := freezeTree(ctx, v.repo, wt.Dir, commit, v.h.TestsFrom, v.protected()); err != nil {
		done()
		return "", nil, []Stage{{Name: stage, Run: 1, Outcome: NotExecuted, Detail: "cannot put the frozen test tree in place: " + err.Error()}}, false
	}
	if st, ran := v.fetchDeps(ctx, stage, wt.Dir); ran {
		stages = append(stages, st)
		if st.Outcome != OK {
			done()
			return "", nil, stages, false
		}
	}
	return wt.Dir, done, stages, true
}

// concurrentRuns runs a stage's n runs at once in its one worktree (each
// run has its own sandbox, tmpfs and witness; the checkout is read-only
// to all of them), at most v.slots at a time across the verification.
// The runs are independent, so the verdict is the one running them in
// turn would give; every run is reported, not only those up to the first
// that disagreed. A run waiting for a slot starts nothing.
func (v *verifier) concurrentRuns(ctx context.Context, stage string, n int, want string, dir string, rep *Report) bool {
	sts := make([]Stage, n)
	atOnce(ctx, n, v.slots, func(i int) { sts[i] = v.run(ctx, stage, i+1, dir) }, func(i int) {
		sts[i] = Stage{Name: stage, Run: i + 1, Outcome: NotExecuted, Detail: "cancelled: " + ctx.Err().Error()}
	})
	ok := true
	for _, st := range sts {
		rep.Stages = append(rep.Stages, st)
		ok = ok && st.Outcome == want
	}
	return ok
}

// atOnce calls run(i) for every i below n, each in its own goroutine
// holding one of slots while it runs, and waits for them all; a call
// still waiting for a slot when ctx ends gets cancelled(i) instead.
func atOnce(ctx context.Context, n int, slots chan struct{}, run, cancelled func(i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case slots <- struct{}{}:
				defer func() { <-slots }()
			case <-ctx.Done():
				cancelled(i)
				return
			}
			run(i)
		}()
	}
	wg.Wait()
}

func (v *verifier) run(ctx context.Context, stage string, i int, dir string) Stage {
	st := Stage{Name: stage, Run: i}
	start := time.Now()
	defer func() { st.DurationMS = time.Since(start).Milliseconds() }()
	mode := cacheTrusted
	switch {
	case stage == StageCandidate:
		mode = v.candidateMode()
	case v.untrustedBase:
		mode = candidateCache(v.opts.Runner)
	}
	spec, err := v.spec(v.h.Command, dir, mode)
	if err != nil {
		st.Outcome, st.Detail = NotExecuted, "cannot prepare the run: "+err.Error()
		return st
	}
	var w *witness
	if stage == StageCandidate {
		w, st.Witness, err = v.witness(dir, &spec)
		if err != nil {
			st.Outcome, st.Detail = NotExecuted, "cannot prepare the witness: "+err.Error()
			return st
		}
	}
	if w != nil {
		defer w.cleanup()
	}
	if mode == cacheShielded {
		meta := snapshotCacheMeta(v.cache)
		defer meta.restore()
	}
	res, err := v.opts.Runner.Run(ctx, spec)
	st.DurationMS = time.Since(start).Milliseconds()
	if err != nil {
		st.Runner = &RunSummary{Backend: v.opts.Runner.Name(), Limits: v.limits.WithDefaults(), RunnerDigest: v.opts.Runner.Digest(v.limits),
			StdoutSHA256: SHA256(nil), StderrSHA256: SHA256(nil), Error: err.Error()}
		st.Outcome, st.Detail = NotExecuted, "the sandbox could not run the command: "+err.Error()
		return st
	}
	st.Stdout, st.Stderr = res.Stdout, res.Stderr
	st.Runner = runSummary(res)
	if reason := notExecuted(res, ctx.Err()); reason != "" {
		st.Outcome, st.Detail = NotExecuted, reason
		if stage == StageBase && interruptedBase(res, ctx.Err()) {
			judgeInterrupted(v.h, res, reason, &st)
		}
		return st
	}
	results, err := Parse(v.h.Format, bytes.NewReader(res.Stdout))
	if err != nil {
		st.Outcome, st.Detail = NotExecuted, fmt.Sprintf("no structured results (exit %d): %v%s", res.ExitCode, err, outputSummary(res.Stdout, res.Stderr))
		return st
	}
	if len(results.Tests) == 0 && len(results.Failures) == 0 {
		st.Outcome, st.Detail = NotExecuted, fmt.Sprintf("no test results (exit %d)%s", res.ExitCode, outputSummary(res.Stdout, res.Stderr))
		if stage == StageCandidate && res.ExitCode == 0 {
			// The same frozen tests gave results on base in the same
			// sandbox: a candidate whose run ends "successfully" with
			// none stopped them itself.
			st.Outcome, st.Detail = Counterfeit, "the command exited with status 0 and no test ran: the candidate's code ended the test process before the frozen tests (they ran on base)"
		}
		return st
	}
	if stage == StageBase {
		st.Outcome, st.Detail, st.Tests = JudgeBase(v.h, results)
		return st
	}
	st.Outcome, st.Detail, st.Tests = JudgeCandidate(v.h, results)
	if st.Outcome != Passed {
		return st
	}
	// A pass counts only when three accounts agree: the event stream, the
	// witness that only the frozen tests' own completion prints, and the
	// exit status of the command.
	if w != nil {
		checkWitness(w, v.h, results, &st)
		if st.Outcome != Passed {
			return st
		}
	}
	if res.ExitCode != 0 {
		st.Outcome, st.Detail = NotExecuted, fmt.Sprintf("every harness test passed but the command exited with status %d: the results and the exit status disagree%s", res.ExitCode, stderrTail(res.Stderr))
	}
	return st
}

// witness instruments a candidate run where the sandbox can take the
// witness's files, and says on the stage why not where it cannot.
func (v *verifier) witness(dir string, spec *sandbox.Spec) (*witness, *WitnessCheck, error) {
	if v.h.Format != FormatGoTestJSON {
		return nil, &WitnessCheck{Reason: "not applied: the harness's results are " + v.h.Format + "; the witness instruments Go tests"}, nil
	}
	if candidateCache(v.opts.Runner) != cacheLayered {
		return nil, &WitnessCheck{Reason: "not applied: the " + v.opts.Runner.Name() + " sandbox cannot take the witness's files"}, nil
	}
	host, err := os.MkdirTemp("", "signoff-witness-")
	if err != nil {
		return nil, nil, err
	}
	shield := spec.Env["GOCACHEPROG"] == ""
	// A placeholder of the run's own, shielded or not: one kept per cache
	// let the instrumented tests compile once, but what they compile to
	// lands in the shared cache, which runs that are not shielded (a
	// JUnit harness, -cover, a reproduction under review) can read, and
	// a candidate that knows the placeholder is handed the key by the
	// -exec wrapper (red-team finding, issue 23). The instrumented test
	// packages compile again in every run; the code under test does not.
	placeholder := make([]byte, 32)
	if _, err = rand.Read(placeholder); err != nil {
		os.RemoveAll(host)
		return nil, nil, err
	}
	w, why, err := newWitness(dir, "/src", host, sbProg, placeholder, shield, spec.Command)
	if err != nil || w == nil {
		os.RemoveAll(host)
		return nil, &WitnessCheck{Reason: "not applied: " + why}, err
	}
	spec.Command = w.command
	spec.ReadOnly = append(spec.ReadOnly, w.mount)
	return w, &WitnessCheck{Applied: true, Instrumented: w.tests}, nil
}

// checkWitness turns a passed run whose harness tests lack the witness of
// their pass into a counterfeit one.
func checkWitness(w *witness, h Harness, res Results, st *Stage) {
	var missing []string
	checked := 0
	for _, n := range slices.Concat(h.FailToPass, h.PassToPass) {
		for _, t := range res.Lookup(n).Tests {
			checked++
			if !witnessed(res, t.Package, t.Name) {
				missing = append(missing, t.Package+"."+t.Name)
			}
		}
	}
	st.Witness.Checked, st.Witness.Missing = checked, missing
	if len(missing) > 0 {
		st.Outcome = Counterfeit
		st.Detail = fmt.Sprintf("%s reported passing without the witness that only the frozen test's own completion prints: the results were written by something other than the tests (%d of %d unwitnessed)",
			strings.Join(firstN(missing, 5), ", "), len(missing), checked)
	}
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(slices.Clone(s[:n]), fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}

// interruptedBase says whether a base run the sandbox ended early (a
// timeout, a limit, a signal) still has output worth judging: not when it
// was cancelled, and not when the output was cut (the results would be
// incomplete in ways the stream does not show).
func interruptedBase(res sandbox.Result, ctxErr error) bool {
	return ctxErr == nil && !res.Truncated && (res.TimedOut || res.Killed != "" || res.Signal != "")
}

// judgeInterrupted judges the results an interrupted base run printed
// before it ended: fail-to-pass tests that already failed with the
// expected failure reproduced the bug, whatever stopped the run later.
// Anything short of that stays not executed: the interruption may be why.
func judgeInterrupted(h Harness, res sandbox.Result, reason string, st *Stage) {
	results, err := Parse(h.Format, bytes.NewReader(res.Stdout))
	if err != nil || len(results.Tests) == 0 {
		return
	}
	results.Interrupted = reason
	outcome, detail, tests := JudgeBase(h, results)
	if outcome != Reproduced {
		st.Tests = tests
		return
	}
	st.Outcome, st.Tests, st.Detail = outcome, tests, detail
	if !strings.Contains(detail, reason) {
		st.Detail += "; the run was interrupted after they reported (" + reason + ")"
	}
}

// FormatBytes writes n in the largest binary unit that divides it: 8 GiB,
// 512 MiB, 1000 B.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// ParseBytes reads a size such as "8GiB", "512MiB", "1.5GiB", "4G" or a
// plain number of bytes; units are binary (G is GiB).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult := map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
		"g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}[unit]
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 0 || f <= 0 || f*mult > 1<<50 {
		return 0, fmt.Errorf("size %q: want a positive number of bytes with an optional unit (512MiB, 8GiB)", s)
	}
	return int64(f * mult), nil
}

// notExecuted says why a finished run cannot be judged, or "".
func notExecuted(res sandbox.Result, ctxErr error) string {
	switch {
	case ctxErr != nil:
		return "cancelled: " + ctxErr.Error()
	case res.TimedOut:
		return fmt.Sprintf("timed out after %s", res.Limits.WallTime)
	case res.Killed != "":
		return "killed by the sandbox: " + res.Killed
	case res.Truncated:
		return "the output was truncated at the sandbox's limit, so the results are incomplete"
	case res.Signal != "":
		return "the command died of signal " + res.Signal
	}
	return ""
}

// outputSummary says what a run that gave no results printed: a missing
// dependency plainly when that is what it says (the runs are offline),
// else its first lines (a build failure's come first), else stderr's tail.
// It explains; it decides nothing.
func outputSummary(stdout, stderr []byte) string {
	text := outputText(stdout) + "\n" + string(stderr)
	if dep, ok := MissingDependency(text); ok {
		return ": " + MissingDependencyText(dep)
	}
	if head := firstLines(stdout, stderr, 3); head != "" {
		return ": " + head
	}
	return stderrTail(stderr)
}

// outputText is stdout with go test -json's events replaced by the text
// they carry.
func outputText(stdout []byte) string {
	var b strings.Builder
	for _, l := range strings.Split(string(stdout), "\n") {
		var ev struct{ Action, Output string }
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Action != "" {
			l = strings.TrimSuffix(ev.Output, "\n")
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}

func stderrTail(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	if len(s) > 300 {
		s = "..." + s[len(s)-300:]
	}
	return ": " + s
}

// worktreeLocks serialise adding and removing worktrees of one repository
// within this process. Removing a worktree prunes, and git deletes the
// then-empty .git/worktrees directory, which makes a concurrent add fail.
var worktreeLocks sync.Map // repository directory -> *sync.Mutex

func repoLock(dir string) *sync.Mutex {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	mu, _ := worktreeLocks.LoadOrStore(dir, &sync.Mutex{})
	return mu.(*sync.Mutex)
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
