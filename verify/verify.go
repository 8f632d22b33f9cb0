package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
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
	// CacheDir is the Go build cache shared by runs (the only host path a
	// run can write). Empty means a "signoff/go-build" directory in the
	// user's cache directory. Sharing it is what makes a warm verification
	// take about a second instead of a minute; the price is that a hostile
	// test could plant entries for later runs, so give each verification
	// of untrusted code its own directory when that matters.
	CacheDir string
	// Limits overrides the sandbox defaults; its WallTime is always the
	// harness's timeout.
	Limits sandbox.Limits
}

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
	h := v.h

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

	// Stage 1: the harness must detect the bug on base, every run.
	ok := v.runs(ctx, StageBase, h.Base, runs, Reproduced, &rep)
	if !ok {
		rep.Stages = append(rep.Stages, Stage{Name: StageCandidate, Outcome: Skipped, Detail: "not run: the harness did not detect the bug on base"})
		return finish(rep), nil
	}
	// Stage 2: with the harness restored, the candidate must pass, every run.
	v.runs(ctx, StageCandidate, cand, runs, Passed, &rep)
	return finish(rep), nil
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
	rep := Report{
		Base: h.Base, Candidate: cand, CandidateRev: opts.Candidate, HarnessDigest: hd,
		RunnerDigest: opts.Runner.Digest(limits), Runs: runs, TestFiles: files,
		Environment: Environment{GoVersion: gt.version, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
			Sandbox: opts.Runner.Name(), Isolated: opts.Runner.Name() != "none"},
		Changed: []string{}, HarnessEdits: []string{},
	}
	if rep.Fingerprint, err = Fingerprint(rep.Identity()); err != nil {
		return nil, Report{}, fmt.Errorf("verify: fingerprint: %w", err)
	}
	v := &verifier{opts: opts, h: h, repo: repo, files: files, limits: limits, goTool: gt, cache: cache}
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
			decisive = s.Outcome == Refused || s.Outcome == Failed
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
	st.Outcome, st.Detail = CheckDiff(changed, rep.HarnessEdits, v.opts.HarnessPaths, v.opts.Allowlist)
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
	mu := repoLock(v.repo.Dir)
	mu.Lock()
	wt, err := v.repo.AddWorktree(ctx, commit)
	mu.Unlock()
	if err != nil {
		rep.Stages = append(rep.Stages, Stage{Name: stage, Run: 1, Outcome: NotExecuted, Detail: "cannot check out " + short(commit) + ": " + err.Error()})
		return false
	}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		wt.Close()
	}()
	if err := restoreHarness(wt.Dir, v.files); err != nil {
		rep.Stages = append(rep.Stages, Stage{Name: stage, Run: 1, Outcome: NotExecuted, Detail: "cannot put the harness test files in place: " + err.Error()})
		return false
	}
	for i := 1; i <= n; i++ {
		st := v.run(ctx, stage, i, wt.Dir)
		rep.Stages = append(rep.Stages, st)
		if st.Outcome != want {
			return false
		}
	}
	return true
}

func (v *verifier) run(ctx context.Context, stage string, i int, dir string) Stage {
	st := Stage{Name: stage, Run: i}
	start := time.Now()
	defer func() { st.DurationMS = time.Since(start).Milliseconds() }()
	spec := v.goTool.spec(v.h.Command, dir, v.cache, v.limits)
	res, err := v.opts.Runner.Run(ctx, spec)
	st.DurationMS = time.Since(start).Milliseconds()
	if err != nil {
		st.Runner = &RunSummary{Backend: v.opts.Runner.Name(), Limits: v.limits.WithDefaults(), RunnerDigest: v.opts.Runner.Digest(v.limits),
			StdoutSHA256: SHA256(nil), StderrSHA256: SHA256(nil), Error: err.Error()}
		st.Outcome, st.Detail = NotExecuted, "the sandbox could not run the command: "+err.Error()
		return st
	}
	st.Stdout, st.Stderr = res.Stdout, res.Stderr
	st.Runner = &RunSummary{
		Backend: res.Backend, Isolated: res.Isolated, Limits: res.Limits, ExitCode: res.ExitCode, Signal: res.Signal,
		TimedOut: res.TimedOut, Killed: res.Killed, DurationMS: res.Duration.Milliseconds(), Truncated: res.Truncated,
		RunnerDigest: res.RunnerDigest, StdoutSHA256: SHA256(res.Stdout), StderrSHA256: SHA256(res.Stderr),
	}
	if reason := notExecuted(res, ctx.Err()); reason != "" {
		st.Outcome, st.Detail = NotExecuted, reason
		return st
	}
	results, err := Parse(v.h.Format, bytes.NewReader(res.Stdout))
	if err != nil {
		st.Outcome, st.Detail = NotExecuted, fmt.Sprintf("no structured results (exit %d): %v%s", res.ExitCode, err, stderrTail(res.Stderr))
		return st
	}
	if len(results.Tests) == 0 && len(results.Failures) == 0 {
		st.Outcome, st.Detail = NotExecuted, fmt.Sprintf("no test results (exit %d)%s", res.ExitCode, stderrTail(res.Stderr))
		return st
	}
	if stage == StageBase {
		st.Outcome, st.Detail, st.Tests = JudgeBase(v.h, results)
	} else {
		st.Outcome, st.Detail, st.Tests = JudgeCandidate(v.h, results)
	}
	return st
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

// restoreHarness writes the harness test files over a checkout. It works
// through an os.Root and replaces whatever is at each path, so a candidate
// cannot redirect the files elsewhere with symbolic links, and refuses a
// path whose directories are not plain directories.
func restoreHarness(dir string, files map[string][]byte) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for p, b := range files {
		if err := CheckPath(p); err != nil {
			return err
		}
		parts := strings.Split(p, "/")
		for i := 1; i < len(parts); i++ {
			d := strings.Join(parts[:i], "/")
			fi, err := root.Lstat(d)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				if err := root.Mkdir(d, 0o755); err != nil {
					return err
				}
			case err != nil:
				return err
			case !fi.IsDir():
				return fmt.Errorf("%s: %s is not a directory in the candidate", p, d)
			}
		}
		if err := root.RemoveAll(p); err != nil {
			return err
		}
		if err := root.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
