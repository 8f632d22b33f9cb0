package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/sandbox"
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
	"gocoverdir": true, "testlogfile": true, "fuzzcachedir": true,
}

// buildFlagsKept are the flags of the harness's go test that change what
// is compiled, passed on to go build; the others (test flags, -json, -v,
// -exec, coverage) concern the test run only.
var buildFlagsKept = map[string]bool{
	"C": true, "tags": true, "mod": true, "modfile": true, "gcflags": true, "ldflags": true, "asmflags": true,
	"trimpath": true, "race": true, "msan": true, "asan": true, "overlay": true, "pgo": true, "compiler": true,
	"gccgoflags": true, "installsuffix": true,
}

// listFields are what the build check reads of each package go list
// reports: its files (to tell which changed files were compiled) and its
// errors (a package that fails, or whose dependencies fail, to compile).
const listFields = "ImportPath,Root,Dir,GoFiles,CgoFiles,Error,DepsErrors"

// buildCommand compiles the non-test code of the packages a `go test`
// command tests, with its build flags, and of the folders of the changed
// non-test Go files (a fix may change a package the harness does not
// test), or is nil when command is not go test. It is `go list -e
// -export`, which compiles every package (and its dependencies) as go
// build does, from the same build cache, but links no binary: go build
// would link every main package again on every check (the linker's
// output is not cached), which costs ShopLite half a second for nothing
// the hole is about. With -e a package's compile error is reported on
// the package, so failures are told apart package by package; packages
// of tests only are listed, not refused, as go build refuses them when
// named explicitly. chdir is the -C folder, "" for none.
func buildCommand(command, changed []string) (cmd []string, chdir string) {
	if len(command) < 2 || path.Base(command[0]) != "go" || command[1] != "test" {
		return nil, ""
	}
	var chdirFlag, flags, pkgs []string
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
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		name = strings.TrimPrefix(name, "test.")
		kv := []string{a}
		if !hasValue && buildFlagsWithValue[name] && i+1 < len(args) {
			i++
			kv, value = append(kv, args[i]), args[i]
		}
		switch {
		case name == "C":
			chdirFlag, chdir = kv, path.Clean(value) // must come first
		case buildFlagsKept[name]:
			flags = append(flags, kv...)
		}
	}
	if len(pkgs) == 0 {
		pkgs = []string{"."}
	}
	for _, f := range changedGoFiles(changed) {
		d := path.Dir(f)
		if chdir != "" && chdir != "." {
			rel, ok := strings.CutPrefix(d+"/", chdir+"/")
			if !ok {
				continue // outside the module the command builds: reported as not compiled
			}
			d = strings.TrimSuffix(rel, "/")
			if d == "" {
				d = "."
			}
		}
		if d != "." {
			d = "./" + d
		}
		if !slices.Contains(pkgs, d) {
			pkgs = append(pkgs, d)
		}
	}
	out := append([]string{command[0]}, chdirFlag...)
	out = append(out, "list", "-e", "-export", "-json="+listFields)
	out = append(out, flags...)
	return append(out, pkgs...), chdir
}

// changedGoFiles are the changed files the build compiles: Go files that
// are not tests and not test data.
func changedGoFiles(changed []string) []string {
	var out []string
	for _, f := range changed {
		if path.Ext(f) != ".go" || strings.HasSuffix(f, "_test.go") || slices.Contains(strings.Split(f, "/"), "testdata") {
			continue
		}
		out = append(out, f)
	}
	return out
}

// listedPackage is one package of the build check's listing.
type listedPackage struct {
	ImportPath        string
	Root, Dir         string
	GoFiles, CgoFiles []string
	Error             *struct{ Err string }
	DepsErrors        []struct{ Err string }
}

// failure is why the package does not compile, or "" when it does or has
// nothing to compile (no folder, only tests, every file excluded: the
// changed files' check reports what that leaves out).
func (p listedPackage) failure() string {
	if len(p.GoFiles)+len(p.CgoFiles) == 0 {
		return ""
	}
	if p.Error != nil {
		return p.Error.Err
	}
	if len(p.DepsErrors) > 0 {
		return p.DepsErrors[0].Err
	}
	return ""
}

// parseListing reads go list -json's stream of packages.
func parseListing(b []byte) ([]listedPackage, error) {
	var out []listedPackage
	dec := json.NewDecoder(bytes.NewReader(b))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
}

// failures maps each package that does not compile to why, and lists
// them in the listing's order.
func failures(pkgs []listedPackage) (map[string]string, []string) {
	m := map[string]string{}
	var order []string
	for _, p := range pkgs {
		if why := p.failure(); why != "" {
			m[p.ImportPath] = why
			order = append(order, p.ImportPath)
		}
	}
	return m, order
}

// uncompiled are the changed non-test Go files no listed package
// compiled: excluded by build constraints (a cgo, OS or tag twin that is
// what ships elsewhere), or outside the module. Nothing ran them, so
// nothing verified them.
func uncompiled(changed []string, pkgs []listedPackage, chdir string) []string {
	compiled := map[string]bool{}
	for _, p := range pkgs {
		if p.Root == "" {
			continue
		}
		for _, f := range append(slices.Clone(p.GoFiles), p.CgoFiles...) {
			if rel, ok := strings.CutPrefix(p.Dir+"/"+f, p.Root+"/"); ok {
				compiled[path.Join(chdir, rel)] = true
			}
		}
	}
	var out []string
	for _, f := range changedGoFiles(changed) {
		if !compiled[f] {
			out = append(out, f)
		}
	}
	return out
}

// build runs the build check in the candidate's checkout dir (its frozen
// test tree in place, which the build does not read); changed are the
// candidate's changed files. It returns the stage, or ok=false when the
// harness is not a Go test command and there is nothing to check.
func (v *verifier) build(ctx context.Context, dir string, changed []string) (st Stage, ok bool) {
	cmd, chdir := buildCommand(v.h.Command, changed)
	if cmd == nil || v.h.Format != FormatGoTestJSON {
		return Stage{}, false
	}
	start := time.Now()
	st, pkgs := v.buildRun(ctx, cmd, dir, v.candidateMode())
	// The stage's duration covers the comparison with base too.
	defer func() { st.DurationMS = time.Since(start).Milliseconds() }()
	fail, order := failures(pkgs)
	if st.Outcome == Passed && len(order) == 0 {
		if miss := uncompiled(changed, pkgs, chdir); len(miss) > 0 {
			st.Outcome, st.Detail = NotExecuted, "the build does not compile changed code: "+strings.Join(miss, ", ")+
				" (excluded by build constraints here, or outside the module the harness builds): nothing ran it, so it cannot be verified here"
		}
		return st, true
	}
	if st.Outcome == Passed {
		st.Outcome, st.Detail = Failed, buildFailedPrefix+firstCompilerLine([]byte(fail[order[0]]), nil)
	}
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
	bst, bpkgs := v.buildRun(ctx, cmd, wt.Dir, mode)
	if bst.Outcome == Passed && len(order) > 0 {
		// Package by package: a package that fails on the candidate and
		// compiles at base (or is new) is the candidate's failure, whatever
		// else fails at base (a harness naming a package base lacks must
		// not turn every broken candidate INCONCLUSIVE).
		bfail, _ := failures(bpkgs)
		for _, p := range order {
			if _, also := bfail[p]; !also {
				st.Detail = buildFailedPrefix + firstCompilerLine([]byte(fail[p]), nil)
				if len(bfail) == 0 {
					st.Detail += " (base builds)"
				} else {
					st.Detail += " (it builds at base)"
				}
				return st, true
			}
		}
		bst.Outcome, bst.Detail = Failed, buildFailedPrefix+firstCompilerLine([]byte(bfail[order[0]]), nil)
	}
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
func (v *verifier) buildRun(ctx context.Context, cmd []string, dir, mode string) (st Stage, pkgs []listedPackage) {
	st = Stage{Name: StageBuild}
	start := time.Now()
	defer func() { st.DurationMS = time.Since(start).Milliseconds() }()
	spec, err := v.buildSpec(cmd, dir, mode)
	if err != nil {
		st.Outcome, st.Detail = NotExecuted, "cannot prepare the build: "+err.Error()
		return st, nil
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
		return st, nil
	}
	st.Stdout, st.Stderr = res.Stdout, res.Stderr
	st.Runner = runSummary(res)
	if res.TimedOut && ctx.Err() == nil {
		st.Outcome, st.Detail = NotExecuted, timedOutBuilding(v.buildTimeout(), cmd, res.Stdout, res.Stderr)
		return st, nil
	}
	if reason := notExecuted(res, ctx.Err()); reason != "" {
		st.Outcome, st.Detail = NotExecuted, "the build: "+reason
		return st, nil
	}
	shown := strings.Join(cmd[1:], " ")
	if res.ExitCode != 0 {
		st.Outcome, st.Detail = Failed, buildFailedPrefix+firstCompilerLine(res.Stderr, res.Stdout)
		return st, nil
	}
	if pkgs, err = parseListing(res.Stdout); err != nil {
		st.Outcome, st.Detail = NotExecuted, "the build's package listing cannot be read: "+err.Error()
		return st, nil
	}
	st.Outcome, st.Detail = Passed, "the non-test code compiles without its tests (go "+shown+")"
	return st, pkgs
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

// The build limit: compiling a real project's packages and their tests
// on a cold cache can take longer than its tests, and counted against the
// test timeout it made a harness report only "timed out". Before base's
// runs, a go test harness compiles its packages with their tests and runs
// nothing (prebuild), in a trusted run whose wall time is the build limit;
// the candidate's build check has the same limit. The runs that follow
// find everything compiled, so their timeout is the tests'.

// buildTimeout is the wall time of a build: Options.BuildTimeout, else
// the harness's (build_timeout_seconds, DefaultBuildTimeout when unset).
func (v *verifier) buildTimeout() time.Duration {
	if v.opts.BuildTimeout > 0 {
		return v.opts.BuildTimeout
	}
	return v.h.BuildTimeout()
}

// buildSpec is the sandbox spec of a build: a run's, with the build limit
// as its wall time.
func (v *verifier) buildSpec(cmd []string, dir, mode string) (sandbox.Spec, error) {
	s, err := v.spec(cmd, dir, mode)
	s.Limits.WallTime = v.buildTimeout()
	return s, err
}

// prebuildCommand is a go test command that compiles what command tests,
// with their tests and command's flags, and runs nothing: -run=^$ keeps
// even TestMain from starting tests, and -exec=/bin/true does not start
// the test binaries at all (the same idea as warm). It is nil when command
// is not go test. The flags go before -args (after it they would be the
// binary's) and after the harness's own, so they win.
func prebuildCommand(command []string) []string {
	if len(command) < 2 || path.Base(command[0]) != "go" || command[1] != "test" {
		return nil
	}
	extra := []string{"-run=^$", "-exec=/bin/true"}
	if i := slices.IndexFunc(command, func(a string) bool { return a == "-args" || a == "--args" }); i >= 0 {
		return slices.Concat(command[:i], extra, command[i:])
	}
	return slices.Concat(command, extra)
}

// prebuild compiles base's packages with their tests in the checkout dir
// before its runs, in mode, under the build limit. ok is false when the
// runs must not start (the build timed out, or was cancelled); st is then
// the base run that says why. A build that fails otherwise is left to the
// runs, which report it in their own words.
func (v *verifier) prebuild(ctx context.Context, dir, mode string) (st Stage, ok bool) {
	cmd := prebuildCommand(v.h.Command)
	if cmd == nil || v.h.Format != FormatGoTestJSON {
		return Stage{}, true
	}
	st = Stage{Name: StageBase, Run: 1}
	start := time.Now()
	defer func() { st.DurationMS = time.Since(start).Milliseconds() }()
	spec, err := v.buildSpec(cmd, dir, mode)
	if err != nil {
		st.Outcome, st.Detail = NotExecuted, "cannot prepare the build: "+err.Error()
		return st, false
	}
	res, err := v.opts.Runner.Run(ctx, spec)
	if err != nil {
		// The runs will meet the same sandbox and say so.
		return Stage{}, true
	}
	switch {
	case ctx.Err() != nil:
		st.Outcome, st.Detail = NotExecuted, "cancelled while building: "+ctx.Err().Error()
	case res.TimedOut:
		st.Outcome, st.Detail = NotExecuted, timedOutBuilding(v.buildTimeout(), cmd, res.Stdout, res.Stderr)
	default:
		return Stage{}, true
	}
	st.Stdout, st.Stderr = res.Stdout, res.Stderr
	st.Runner = runSummary(res)
	return st, false
}

// runSummary is the report's account of a sandbox result.
func runSummary(res sandbox.Result) *RunSummary {
	return &RunSummary{
		Backend: res.Backend, Isolated: res.Isolated, Limits: res.Limits, ExitCode: res.ExitCode, Signal: res.Signal,
		TimedOut: res.TimedOut, Killed: res.Killed, DurationMS: res.Duration.Milliseconds(), Truncated: res.Truncated,
		RunnerDigest: res.RunnerDigest, StdoutSHA256: SHA256(res.Stdout), StderrSHA256: SHA256(res.Stderr),
	}
}

// timedOutBuilding says a build ran out of its limit, with the command
// and the first lines it printed: what was being built.
func timedOutBuilding(limit time.Duration, cmd []string, stdout, stderr []byte) string {
	s := fmt.Sprintf("timed out while building (limit %s): %s", limit, strings.Join(cmd, " "))
	if head := firstLines(stdout, stderr, 3); head != "" {
		s += "; it had printed: " + head
	}
	return s
}

// firstLines are the first n non-empty lines of a build's output, the
// text of go test -json's build-output events rather than their JSON.
func firstLines(stdout, stderr []byte, n int) string {
	var out []string
	for _, l := range strings.Split(string(stdout)+"\n"+string(stderr), "\n") {
		var ev struct{ Action, Output string }
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Action != "" {
			if ev.Action != "build-output" && ev.Action != "output" {
				continue
			}
			l = ev.Output
		}
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		if len(l) > 200 {
			l = l[:200] + "..."
		}
		if out = append(out, fmt.Sprintf("%q", l)); len(out) == n {
			break
		}
	}
	return strings.Join(out, ", ")
}
