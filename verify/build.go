package verify

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"
)

// The build check: go test compiles a package's non-test files together
// with its _test.go files, so production code that only compiles with
// them (a fix calling a helper an existing cart_test.go defines) passes
// every test while the code that would be merged does not build. For a
// Go harness, the candidate stage therefore first compiles the packages
// the harness tests without their tests (buildCommand), in the same
// sandbox, environment, cache and limits as the runs; a candidate that
// does not build is REJECTED. It compiles, it does not link: a link
// failure of a main package is not what tests can hide.
//
// Base is not built when the candidate builds: what is merged is the
// candidate's tree, and base's packages already compiled (with their
// tests) in the base stage. When the candidate does not build, base is
// built the same way to tell whose failure it is: base must build too
// for the comparison to mean anything, so a base that does not build
// without its tests either makes the check, and the verdict,
// INCONCLUSIVE rather than blaming the candidate.

// buildFlagsWithValue are the go test flags (build and test flags) that
// take their value as the next argument when not written -flag=value.
var buildFlagsWithValue = map[string]bool{
	"C": true, "p": true, "asmflags": true, "buildmode": true, "compiler": true, "gccgoflags": true, "gcflags": true,
	"installsuffix": true, "ldflags": true, "mod": true, "modfile": true, "overlay": true, "pgo": true, "pkgdir": true,
	"tags": true, "toolexec": true, "o": true, "coverpkg": true, "covermode": true, "exec": true, "vet": true,
	"bench": true, "benchtime": true, "blockprofile": true, "blockprofilerate": true, "count": true, "coverprofile": true,
	"cpu": true, "cpuprofile": true, "fuzz": true, "fuzzminimizetime": true, "fuzztime": true, "list": true,
	"memprofile": true, "memprofilerate": true, "mutexprofile": true, "mutexprofilefraction": true, "outputdir": true,
	"parallel": true, "run": true, "skip": true, "shuffle": true, "timeout": true, "trace": true,
}

// buildFlagsKept are the flags of the harness's go test that change what
// is compiled, passed on to go build; the others (test flags, -json, -v,
// -exec, coverage) concern the test run only.
var buildFlagsKept = map[string]bool{
	"C": true, "tags": true, "mod": true, "modfile": true, "gcflags": true, "ldflags": true, "asmflags": true,
	"trimpath": true, "race": true, "msan": true, "asan": true, "overlay": true, "pgo": true, "compiler": true,
	"gccgoflags": true, "installsuffix": true,
}

// buildCommand compiles the non-test code of the packages a `go test`
// command tests, with its build flags, or is nil when command is not go
// test. It is `go list -export`, which compiles every package (and its
// dependencies) as go build does, from the same build cache, but links no
// binary: go build would link every main package again on every check
// (the linker's output is not cached), which costs ShopLite half a second
// for nothing the hole is about. Packages of tests only are listed, not
// refused, as go build refuses them when named explicitly.
func buildCommand(command []string) []string {
	if len(command) < 2 || path.Base(command[0]) != "go" || command[1] != "test" {
		return nil
	}
	var chdir, flags, pkgs []string
	args := command[2:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-args" || a == "--args" {
			break // the rest is the test binary's
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pkgs = append(pkgs, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		name = strings.TrimPrefix(name, "test.")
		kv := []string{a}
		if !hasValue && buildFlagsWithValue[name] && i+1 < len(args) {
			i++
			kv = append(kv, args[i])
		}
		switch {
		case name == "C":
			chdir = kv // must come first
		case buildFlagsKept[name]:
			flags = append(flags, kv...)
		}
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	out := append([]string{command[0]}, chdir...)
	out = append(out, "list", "-export", "-f={{.ImportPath}}")
	out = append(out, flags...)
	return append(out, pkgs...)
}

// build runs the build check in the candidate's checkout dir (its frozen
// test tree in place, which the build does not read). It returns the
// stage, or ok=false when the harness is not a Go test command and there
// is nothing to check.
func (v *verifier) build(ctx context.Context, dir string) (st Stage, ok bool) {
	cmd := buildCommand(v.h.Command)
	if cmd == nil || v.h.Format != FormatGoTestJSON {
		return Stage{}, false
	}
	start := time.Now()
	st = v.buildRun(ctx, cmd, dir, v.candidateMode())
	// The stage's duration covers the comparison with base too.
	defer func() { st.DurationMS = time.Since(start).Milliseconds() }()
	if st.Outcome != Failed {
		return st, true
	}
	// The candidate does not build. Does base?
	mu := repoLock(v.repo.Dir)
	mu.Lock()
	wt, err := v.repo.AddWorktree(ctx, v.h.Base)
	mu.Unlock()
	if err != nil {
		st.Outcome, st.Detail = NotExecuted, st.Detail+"; base could not be checked out to compare: "+err.Error()
		return st, true
	}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		wt.Close()
	}()
	mode := cacheTrusted
	if v.untrustedBase {
		mode = candidateCache(v.opts.Runner)
	}
	bst := v.buildRun(ctx, buildCommand(v.h.Command), wt.Dir, mode)
	switch bst.Outcome {
	case Passed:
		st.Detail += " (base builds)"
	case Failed:
		st.Outcome = NotExecuted
		st.Detail += "; base does not build without its tests either (" + strings.TrimPrefix(bst.Detail, buildFailedPrefix) + "): the check cannot tell the candidate's failure from base's"
	default:
		st.Outcome = NotExecuted
		st.Detail += "; base could not be built to compare: " + bst.Detail
	}
	return st, true
}

const buildFailedPrefix = "the candidate does not build without its tests: "

// buildRun runs one build check in the sandbox, as the test runs are run.
func (v *verifier) buildRun(ctx context.Context, cmd []string, dir, mode string) (st Stage) {
	st = Stage{Name: StageBuild}
	start := time.Now()
	defer func() { st.DurationMS = time.Since(start).Milliseconds() }()
	spec, err := v.goTool.spec(cmd, dir, v.cache, mode, v.limits)
	if err != nil {
		st.Outcome, st.Detail = NotExecuted, "cannot prepare the build: "+err.Error()
		return st
	}
	if mode == cacheShielded {
		meta := snapshotCacheMeta(v.cache)
		defer meta.restore()
	}
	res, err := v.opts.Runner.Run(ctx, spec)
	if err != nil {
		st.Runner = &RunSummary{Backend: v.opts.Runner.Name(), Limits: v.limits.WithDefaults(), RunnerDigest: v.opts.Runner.Digest(v.limits),
			StdoutSHA256: SHA256(nil), StderrSHA256: SHA256(nil), Error: err.Error()}
		st.Outcome, st.Detail = NotExecuted, "the sandbox could not run the build: "+err.Error()
		return st
	}
	st.Stdout, st.Stderr = res.Stdout, res.Stderr
	st.Runner = &RunSummary{
		Backend: res.Backend, Isolated: res.Isolated, Limits: res.Limits, ExitCode: res.ExitCode, Signal: res.Signal,
		TimedOut: res.TimedOut, Killed: res.Killed, DurationMS: res.Duration.Milliseconds(), Truncated: res.Truncated,
		RunnerDigest: res.RunnerDigest, StdoutSHA256: SHA256(res.Stdout), StderrSHA256: SHA256(res.Stderr),
	}
	if reason := notExecuted(res, ctx.Err()); reason != "" {
		st.Outcome, st.Detail = NotExecuted, "the build: "+reason
		return st
	}
	shown := strings.Join(cmd[1:], " ")
	if res.ExitCode != 0 {
		st.Outcome, st.Detail = Failed, buildFailedPrefix+firstCompilerLine(res.Stderr, res.Stdout)
		return st
	}
	st.Outcome, st.Detail = Passed, "the non-test code compiles without its tests (go "+shown+")"
	return st
}

// firstCompilerLine is the first line of the build check's output that says
// what is wrong (not a "# package" header), quoted and trimmed, with the
// package it is in when a header named one.
func firstCompilerLine(stderr, stdout []byte) string {
	pkg := ""
	for _, l := range strings.Split(string(stderr)+"\n"+string(stdout), "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
			continue
		case strings.HasPrefix(l, "# "):
			if pkg == "" {
				pkg = strings.TrimPrefix(l, "# ")
			}
			continue
		}
		if len(l) > 200 {
			l = l[:200] + "..."
		}
		s := fmt.Sprintf("%q", l)
		if pkg != "" {
			s += " in " + pkg
		}
		return s
	}
	return "the build check failed with no output"
}
