package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/sandbox"
	"runtime"
)

// ObserveOptions are the runs harness init makes to derive a harness: the
// command on base and on a reference fix, each with the frozen test tree
// of tests_from in place, exactly as verify runs it.
type ObserveOptions struct {
	RepoDir string
	// Harness gives base, tests_from, test_files, command, format,
	// timeout and protection; its test lists and expected failure may be
	// empty (they are what the runs are for).
	Harness Harness
	// Reference is the revision of a fix known to be good.
	Reference string
	// Runs of each commit (at least 1).
	Runs     int
	Runner   sandbox.Runner
	CacheDir string
	Limits   sandbox.Limits
}

// ObservedRun is one run of the command.
type ObservedRun struct {
	Results  Results
	ExitCode int
	// Interrupted says why the run cannot be read (it timed out, the
	// sandbox failed, no structured results); "" when it finished.
	Interrupted string
	Duration    time.Duration
	// Stderr is the tail of the command's standard error.
	Stderr string
}

// Observation holds the runs of base and of the reference.
type Observation struct {
	Base, Reference []ObservedRun
	// Reference is the reference's full commit id.
	ReferenceCommit string
}

// Observe runs the harness's command Runs times on base and on the
// reference, each with the frozen test tree of tests_from in place, in the
// sandbox, with the dependencies and the build cache verify uses. The
// tests are not reviewed yet, so even base runs read the shared cache
// through a throwaway layer (as Reproduce's do). A run that could not be
// read is returned with Interrupted set; the error is for runs that could
// not be set up at all.
func Observe(ctx context.Context, o ObserveOptions) (Observation, error) {
	v, ref, err := prepareObserve(ctx, o)
	if err != nil {
		return Observation{}, err
	}
	obs := Observation{ReferenceCommit: ref}
	v.warm(ctx)
	if obs.Base, err = v.observe(ctx, StageBase, v.h.Base, o.Runs); err != nil {
		return Observation{}, fmt.Errorf("observe base: %w", err)
	}
	// The reference is a commit from outside like a candidate: its
	// dependencies are fetched as a candidate's are.
	if obs.Reference, err = v.observe(ctx, StageCandidate, ref, o.Runs); err != nil {
		return Observation{}, fmt.Errorf("observe reference: %w", err)
	}
	return obs, nil
}

// prepareObserve is prepare for a harness whose test lists are still
// empty: the same checks of commits and test files, toolchain and cache,
// and a verifier that trusts no run with the shared cache.
func prepareObserve(ctx context.Context, o ObserveOptions) (*verifier, string, error) {
	h := o.Harness
	// Everything but the lists is checked by Validate itself: while the
	// lists are empty, a stand-in test and failure fill the fields the
	// runs are to derive.
	probe := h
	if len(probe.FailToPass) == 0 {
		probe.FailToPass, probe.PassToPass, probe.ExpectedFailure = []string{"TestHarnessInitProbe"}, nil, "probe"
	}
	if err := probe.Validate(); err != nil {
		return nil, "", fmt.Errorf("observe: harness: %w", err)
	}
	if o.Runner == nil {
		return nil, "", errors.New("observe: no sandbox runner")
	}
	if o.Runs < 1 || o.Runs > MaxRuns {
		return nil, "", fmt.Errorf("observe: runs %d is outside 1..%d", o.Runs, MaxRuns)
	}
	repo := &gitx.Repo{Dir: o.RepoDir}
	for _, c := range []struct{ field, id string }{{"base", h.Base}, {"tests_from", h.TestsFrom}} {
		got, err := repo.RevParse(ctx, c.id+"^{commit}")
		if err != nil || got != c.id {
			return nil, "", fmt.Errorf("observe: %s %s is not a commit in %s: %v", c.field, c.id, o.RepoDir, err)
		}
	}
	ref, err := repo.RevParse(ctx, o.Reference+"^{commit}")
	if err != nil {
		return nil, "", fmt.Errorf("observe: reference %q is not a commit in %s: %w", o.Reference, o.RepoDir, err)
	}
	files, err := ReadTestFiles(ctx, repo, h)
	if err != nil {
		return nil, "", fmt.Errorf("observe: %w", err)
	}
	gt, err := findGo()
	if err != nil {
		return nil, "", fmt.Errorf("observe: %w", err)
	}
	cache := o.CacheDir
	if cache == "" {
		if cache, err = defaultCacheDir(); err != nil {
			return nil, "", fmt.Errorf("observe: %w", err)
		}
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, "", fmt.Errorf("observe: build cache: %w", err)
	}
	limits := o.Limits
	limits.WallTime = time.Duration(h.TimeoutSeconds) * time.Second
	v := &verifier{
		opts: Options{RepoDir: o.RepoDir, Harness: h, Candidate: ref, Runs: o.Runs, Runner: o.Runner, CacheDir: cache, Limits: o.Limits},
		h:    h, repo: repo, files: files, limits: limits, goTool: gt, cache: cache, untrustedBase: true,
	}
	if v.testOnly, err = v.findTestOnly(ctx); err != nil {
		return nil, "", fmt.Errorf("observe: test-only packages: %w", err)
	}
	return v, ref, nil
}

// observe runs the command n times in one worktree of commit with the
// frozen test tree in place. Set-up failures (checkout, frozen tree,
// dependencies) are errors: nothing was observed.
func (v *verifier) observe(ctx context.Context, stage, commit string, n int) ([]ObservedRun, error) {
	dir, done, sts, ok := v.checkout(ctx, stage, commit)
	if !ok {
		why := sts[len(sts)-1]
		if why.Name == StageDeps {
			return nil, fmt.Errorf("dependencies of %s: %s", short(commit), why.Detail)
		}
		return nil, errors.New(why.Detail)
	}
	defer done()
	// The runs are independent (each its own sandbox over the read-only
	// checkout), so they run at once, one per CPU at most: on a 2-core
	// machine harness init on tidwall/gjson (an 8 s suite) went from 35 s
	// to about 20.
	out := make([]ObservedRun, n)
	atOnce(ctx, n, make(chan struct{}, max(1, runtime.NumCPU())), func(i int) { out[i] = v.observeRun(ctx, dir) },
		func(i int) { out[i] = ObservedRun{Interrupted: "cancelled: " + ctx.Err().Error()} })
	return out, nil
}

// observeRun is one run, read as verify's runs are read but not judged.
func (v *verifier) observeRun(ctx context.Context, dir string) ObservedRun {
	start := time.Now()
	var r ObservedRun
	defer func() { r.Duration = time.Since(start) }()
	spec, err := v.spec(v.h.Command, dir, candidateCache(v.opts.Runner))
	if err != nil {
		r.Interrupted = "cannot prepare the run: " + err.Error()
		return r
	}
	res, err := v.opts.Runner.Run(ctx, spec)
	r.Duration = time.Since(start)
	if err != nil {
		r.Interrupted = "the sandbox could not run the command: " + err.Error()
		return r
	}
	r.ExitCode, r.Stderr = res.ExitCode, stderrTail(res.Stderr)
	if reason := notExecuted(res, ctx.Err()); reason != "" {
		r.Interrupted = reason
		return r
	}
	if r.Results, err = Parse(v.h.Format, bytes.NewReader(res.Stdout)); err != nil {
		r.Interrupted = fmt.Sprintf("no structured results (exit %d): %v%s", res.ExitCode, err, r.Stderr)
		return r
	}
	if len(r.Results.Tests) == 0 && len(r.Results.Failures) == 0 {
		r.Interrupted = fmt.Sprintf("no test results (exit %d)%s", res.ExitCode, r.Stderr)
	}
	return r
}
