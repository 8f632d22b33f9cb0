package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/verify"
)

// pytestJUnit runs pytest so that its standard output is the JUnit XML
// report alone: --junitxml=/dev/stdout interleaves pytest's own text with
// the XML, so the report goes to a file and is printed after, with
// pytest's exit status kept. %s is the test files, shell-quoted.
const pytestJUnit = `python3 -m pytest -p no:cacheprovider -o junit_family=xunit1 --junitxml=/tmp/signoff-junit.xml %s >&2; s=$?; cat /tmp/signoff-junit.xml; exit $s`

// runHarnessInit derives a harness from a fix: the fix's test changes
// become the tests (a commit of their own), its other changes the
// reference, and runs on base and on the reference decide which tests go
// in fail_to_pass and pass_to_pass and what each failure looks like.
func runHarnessInit(ctx context.Context, e *env, args []string) error {
	var (
		repoDir, fix, base, tests, patchFile, reference, out, command, format, backend, image, cache string
		runs, timeout                                                                                int
		allPackages                                                                                  bool
	)
	fs := newFlags("harness init", "signoff harness init --repo DIR (--fix REV | --base REV (--tests REV | --test-patch FILE) --reference REV) [--out FILE] [--runs N] [--command JSON-ARRAY --format go-test-json|junit-xml] [--all-packages] [--timeout SECONDS] [--sandbox ...]\n\n"+
		"Writes a harness derived from a fix: its test-file changes become the tests (a commit kept under\n"+
		"refs/signoff/harness/), the fix itself is the reference. The command runs N times on base and on the\n"+
		"reference, each with those tests in place, in the sandbox: tests failing on every base run and passing on\n"+
		"every reference run are fail_to_pass (each with an expected failure from its base output), tests passing\n"+
		"everywhere are pass_to_pass. Flaky and other tests are left out and listed on stderr.\n"+
		"Exit status: 0 written, 3 usage or setup error or nothing to verify")
	fs.StringVar(&repoDir, "repo", ".", "git repository")
	fs.StringVar(&fix, "fix", "", "fix commit: base is its first parent, its test-file changes are the tests, the commit itself the reference")
	fs.StringVar(&base, "base", "", "buggy revision (with --tests or --test-patch, and --reference)")
	fs.StringVar(&tests, "tests", "", "revision whose test-file changes relative to base are the tests")
	fs.StringVar(&patchFile, "test-patch", "", "patch applied onto base that holds the tests (test files only)")
	fs.StringVar(&reference, "reference", "", "revision of a fix known to be good")
	fs.StringVar(&out, "out", "", "write the harness here (default: stdout)")
	fs.IntVar(&runs, "runs", 2, "runs of base and of the reference (a test must behave the same in all)")
	fs.StringVar(&command, "command", "", `command as a JSON array, e.g. '["go","test","-json","./..."]' (default: detected from the base tree)`)
	fs.StringVar(&format, "format", "", "results format of --command: go-test-json or junit-xml")
	fs.BoolVar(&allPackages, "all-packages", false, "a Go command tests ./... rather than the packages the fix touches")
	fs.IntVar(&timeout, "timeout", 600, "time limit of one run, in seconds")
	fs.StringVar(&backend, "sandbox", "", "sandbox backend: bwrap, namespaces, docker, podman or none (default: bwrap if it works here, else namespaces)")
	fs.StringVar(&image, "image", "", "image for the docker and podman backends")
	fs.StringVar(&cache, "cache", "", "trusted Go build cache (default: signoff/go-build in the user cache directory); these runs read it through a throwaway layer")
	if err := parse(fs, e, args); err != nil {
		return usageStatus(err)
	}
	usage := func(msg string) error {
		fmt.Fprintln(e.stderr, msg)
		fs.Usage()
		return &exitStatus{exitSetup}
	}
	switch {
	case fix != "" && (base != "" || tests != "" || patchFile != "" || reference != ""):
		return usage("give --fix alone, or --base with --tests or --test-patch and --reference")
	case fix == "" && (base == "" || reference == "" || (tests == "") == (patchFile == "")):
		return usage("give --fix REV, or --base REV with exactly one of --tests REV and --test-patch FILE, and --reference REV")
	case (command == "") != (format == ""):
		return usage("--command and --format go together")
	case runs < 1 || runs > verify.MaxRuns:
		return usage(fmt.Sprintf("--runs must be in 1..%d", verify.MaxRuns))
	case timeout < 1 || timeout > verify.MaxTimeoutSeconds:
		return usage(fmt.Sprintf("--timeout must be in 1..%d", verify.MaxTimeoutSeconds))
	}
	fail := func(err error) error { return setupError(e, "harness init", err) }
	repo := &gitx.Repo{Dir: repoDir}
	globs := verify.Harness{}.ProtectedGlobs()

	// The commits: base, the tests commit, the reference.
	var tc verify.TestsCommit
	if fix != "" {
		id, err := repo.RevParse(ctx, fix+"^{commit}")
		if err != nil {
			return fail(fmt.Errorf("fix %q: %w", fix, err))
		}
		parents, err := repo.Parents(ctx, id)
		if err != nil || len(parents) == 0 {
			return fail(fmt.Errorf("fix %s has no parent to be its base (%v)", id, err))
		}
		base, reference = parents[0], id
		when, err := repo.CommitTime(ctx, id)
		if err != nil {
			return fail(err)
		}
		if tc, err = verify.CommitTestsFrom(ctx, repo, base, id, globs, when); err != nil {
			return fail(err)
		}
	} else {
		var err error
		if base, err = repo.RevParse(ctx, base+"^{commit}"); err != nil {
			return fail(fmt.Errorf("base: %w", err))
		}
		if reference, err = repo.RevParse(ctx, reference+"^{commit}"); err != nil {
			return fail(fmt.Errorf("reference: %w", err))
		}
		when, err := repo.CommitTime(ctx, reference)
		if err != nil {
			return fail(err)
		}
		if tests != "" {
			id, err := repo.RevParse(ctx, tests+"^{commit}")
			if err != nil {
				return fail(fmt.Errorf("tests: %w", err))
			}
			tc, err = verify.CommitTestsFrom(ctx, repo, base, id, globs, when)
			if err != nil {
				return fail(err)
			}
		} else {
			patch, err := os.ReadFile(patchFile)
			if err != nil {
				return fail(err)
			}
			if tc, err = verify.CommitTestPatch(ctx, repo, base, patch, globs, when); err != nil {
				return fail(err)
			}
		}
	}
	if len(tc.Files) == 0 {
		return fail(fmt.Errorf("the tests only delete files (%s): there is no test to run", strings.Join(tc.Removed, ", ")))
	}

	h := verify.Harness{Base: base, TestsFrom: tc.Commit, TestFiles: tc.Files, TimeoutSeconds: timeout, Runs: runs}
	if command != "" {
		if err := json.Unmarshal([]byte(command), &h.Command); err != nil {
			return usage("--command must be a JSON array of strings: " + err.Error())
		}
		h.Format = format
	} else {
		_, fixFiles, err := verify.SplitChanges(ctx, repo, base, reference, globs)
		if err != nil {
			return fail(err)
		}
		if h.Command, h.Format, err = detectCommand(ctx, repo, base, tc, fixFiles, allPackages); err != nil {
			return fail(err)
		}
	}

	var opts []sandbox.Option
	if image != "" {
		opts = append(opts, sandbox.WithImage(image))
	}
	var runner sandbox.Runner
	var err error
	if backend == "" {
		runner, err = sandbox.Default(opts...)
	} else {
		runner, err = sandbox.New(backend, opts...)
	}
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(e.stderr, "running %s %d time(s) on base %s and on the reference %s, with the tests of %s...\n",
		strings.Join(h.Command, " "), runs, short(base), short(reference), short(tc.Commit))
	obs, err := verify.Observe(ctx, verify.ObserveOptions{RepoDir: repoDir, Harness: h, Reference: reference, Runs: runs, Runner: runner, CacheDir: cache})
	if err != nil {
		return fail(err)
	}
	var baseRes, refRes []verify.Results
	var broken []string
	for i, r := range obs.Base {
		baseRes = append(baseRes, r.Results)
		if r.Interrupted != "" {
			broken = append(broken, fmt.Sprintf("base run %d: %s", i+1, r.Interrupted))
		}
	}
	for i, r := range obs.Reference {
		refRes = append(refRes, r.Results)
		if r.Interrupted != "" {
			broken = append(broken, fmt.Sprintf("reference run %d: %s", i+1, r.Interrupted))
		}
	}
	if len(broken) > 0 {
		// A run that did not finish says nothing about any test in it.
		return fail(fmt.Errorf("not every run could be read, so nothing is derived:\n  %s", strings.Join(broken, "\n  ")))
	}
	d, err := verify.Derive(h.Format, baseRes, refRes)
	if err != nil {
		return fail(err)
	}
	if len(d.FailToPass) == 0 {
		for _, n := range d.PassToPass {
			fmt.Fprintf(e.stderr, "  passes    %s on every base and reference run\n", n)
		}
		printOutcomes(e.stderr, d)
		return fail(fmt.Errorf("no test fails on every base run and passes on every reference run: there is nothing to verify (what each test did is above)"))
	}
	h.FailToPass, h.PassToPass = d.FailToPass, d.PassToPass
	h.ExpectedFailures = map[string]verify.Matcher{}
	var missing []string
	for _, n := range d.FailToPass {
		m, ok := d.ExpectedFailures[n]
		if !ok {
			missing = append(missing, n)
			continue
		}
		h.ExpectedFailures[n] = m
	}
	if len(missing) > 0 {
		return fail(fmt.Errorf("no line of %s's base output is printed on every base run, is not framing or volatile, and is absent from the reference's output: write its expected failure by hand (or use --command to run it differently)", strings.Join(missing, ", ")))
	}
	if refFailed(obs) {
		// A test left out still fails on the reference, so the command
		// exits non-zero there and verify would call the results and the
		// exit status in disagreement (INCONCLUSIVE) for every candidate.
		// A Go command runs only the harness's tests instead, and the
		// harness is checked once more with it, by verify's own judges.
		if command != "" || h.Format != verify.FormatGoTestJSON {
			fmt.Fprintf(e.stderr, "warning: tests outside the harness fail on the reference, so its command exits non-zero and verify will be INCONCLUSIVE: narrow --command to the harness's tests\n")
		} else {
			h.Command = onlyTests(h.Command, h)
			fmt.Fprintf(e.stderr, "tests outside the harness fail on the reference: checking the command narrowed to the harness's tests once more...\n")
			if err := checkNarrowed(ctx, repoDir, h, reference, runner, cache); err != nil {
				return fail(err)
			}
		}
	}
	if h.PassToPass == nil {
		h.PassToPass = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	// Expected failures quote output such as "a > b" and "x && y": a
	// person reads this file before approving it.
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(h); err != nil {
		return fail(err)
	}
	raw := buf.Bytes()
	if _, err := verify.ParseHarness(raw); err != nil {
		return fail(fmt.Errorf("the derived harness does not parse: %w", err))
	}
	if out == "" {
		if _, err := e.stdout.Write(raw); err != nil {
			return fail(err)
		}
	} else if err := os.WriteFile(out, raw, 0o644); err != nil {
		return fail(err)
	}
	summarize(e.stderr, h, tc, reference, obs, d, repoDir, out)
	return nil
}

// refFailed says whether any reference run exited non-zero.
func refFailed(obs verify.Observation) bool {
	return slices.ContainsFunc(obs.Reference, func(r verify.ObservedRun) bool { return r.ExitCode != 0 })
}

// onlyTests adds to a go test command a -run pattern matching exactly the
// top-level tests of the harness (its last -run wins over any earlier).
func onlyTests(cmd []string, h verify.Harness) []string {
	seen := map[string]bool{}
	var names []string
	for _, n := range slices.Concat(h.FailToPass, h.PassToPass) {
		// Names are package-qualified: the test is after the last dot
		// before any slash (a top-level name has none).
		name := n[strings.LastIndex(n, ".")+1:]
		if !seen[name] {
			seen[name] = true
			names = append(names, regexp.QuoteMeta(name))
		}
	}
	slices.Sort(names)
	at := slices.Index(cmd, "-json") + 1
	return slices.Concat(cmd[:at], []string{"-run=^(" + strings.Join(names, "|") + ")$"}, cmd[at:])
}

// checkNarrowed runs the narrowed harness once on base and on the
// reference and judges the runs as verify does: base must reproduce, the
// reference must pass with exit status 0.
func checkNarrowed(ctx context.Context, repoDir string, h verify.Harness, reference string, runner sandbox.Runner, cache string) error {
	obs, err := verify.Observe(ctx, verify.ObserveOptions{RepoDir: repoDir, Harness: h, Reference: reference, Runs: 1, Runner: runner, CacheDir: cache})
	if err != nil {
		return err
	}
	b, r := obs.Base[0], obs.Reference[0]
	if b.Interrupted != "" || r.Interrupted != "" {
		return fmt.Errorf("the narrowed command could not be read: %s", strings.TrimSpace(b.Interrupted+" "+r.Interrupted))
	}
	if o, d, _ := verify.JudgeBase(h, b.Results); o != verify.Reproduced {
		return fmt.Errorf("with the narrowed command base no longer reproduces: %s", d)
	}
	if o, d, _ := verify.JudgeCandidate(h, r.Results); o != verify.Passed || r.ExitCode != 0 {
		return fmt.Errorf("with the narrowed command the reference does not pass cleanly (exit %d): %s", r.ExitCode, d)
	}
	return nil
}

// detectCommand picks the command and format from base's tree: go test of
// the packages the tests and the fix touch, node's test runner with its
// JUnit reporter, or pytest writing JUnit XML.
func detectCommand(ctx context.Context, repo *gitx.Repo, base string, tc verify.TestsCommit, fixFiles []string, allPackages bool) ([]string, string, error) {
	files, err := repo.ListFiles(ctx, base)
	if err != nil {
		return nil, "", fmt.Errorf("files of base: %w", err)
	}
	testFiles, err := repo.ListFiles(ctx, tc.Commit)
	if err != nil {
		return nil, "", fmt.Errorf("files of the tests commit: %w", err)
	}
	has := func(p string) bool { return slices.Contains(files, p) }
	switch {
	case has("go.mod"):
		if allPackages {
			return []string{"go", "test", "-json", "./..."}, verify.FormatGoTestJSON, nil
		}
		// Only folders holding Go files with the tests in place: go test
		// refuses a folder that does not exist on base (a package only
		// the fix adds is compiled by verify's build stage instead).
		goDirs := map[string]bool{}
		for _, f := range testFiles {
			if strings.HasSuffix(f, ".go") {
				goDirs[path.Dir(f)] = true
			}
		}
		seen := map[string]bool{}
		var pkgs []string
		add := func(dir string) {
			if goDirs[dir] && !seen[dir] {
				seen[dir] = true
				pkgs = append(pkgs, goPackageArg(dir))
			}
		}
		for _, f := range tc.Files {
			if before, _, ok := strings.Cut("/"+f, "/testdata/"); ok {
				add(strings.TrimPrefix(before, "/"))
				if before == "" {
					add(".")
				}
			} else if strings.HasSuffix(f, ".go") {
				add(path.Dir(f))
			}
		}
		for _, f := range fixFiles {
			if strings.HasSuffix(f, ".go") {
				add(path.Dir(f))
			}
		}
		if len(pkgs) == 0 {
			return nil, "", fmt.Errorf("no Go package holds the tests (%s): give --command", strings.Join(tc.Files, ", "))
		}
		slices.Sort(pkgs)
		return append([]string{"go", "test", "-json"}, pkgs...), verify.FormatGoTestJSON, nil
	case has("package.json"):
		cmd := []string{"node", "--test", "--test-reporter=junit"}
		for _, f := range tc.Files {
			if ext := path.Ext(f); ext == ".js" || ext == ".mjs" || ext == ".cjs" {
				cmd = append(cmd, f)
			}
		}
		if len(cmd) == 3 {
			return nil, "", fmt.Errorf("no JavaScript test file among the tests (%s): give --command", strings.Join(tc.Files, ", "))
		}
		return cmd, verify.FormatJUnitXML, nil
	case isPython(files):
		var quoted []string
		for _, f := range tc.Files {
			if strings.HasSuffix(f, ".py") && !strings.HasSuffix(f, "conftest.py") {
				quoted = append(quoted, shQuote(f))
			}
		}
		if len(quoted) == 0 {
			return nil, "", fmt.Errorf("no Python test file among the tests (%s): give --command", strings.Join(tc.Files, ", "))
		}
		return []string{"sh", "-c", fmt.Sprintf(pytestJUnit, strings.Join(quoted, " "))}, verify.FormatJUnitXML, nil
	}
	return nil, "", fmt.Errorf("base has no go.mod, package.json or pytest layout at its root: give --command and --format")
}

func goPackageArg(dir string) string {
	if dir == "." {
		return "."
	}
	return "./" + dir
}

func isPython(files []string) bool {
	for _, f := range files {
		switch b := path.Base(f); {
		case f == "pytest.ini" || f == "pyproject.toml" || f == "setup.cfg" || b == "conftest.py":
			return true
		case strings.HasPrefix(b, "test_") && strings.HasSuffix(b, ".py"):
			return true
		}
	}
	return false
}

// shQuote quotes s for sh: test paths come from the repository.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// printOutcomes lists the tests in neither list, and why.
func printOutcomes(w io.Writer, d verify.Derivation) {
	for _, f := range d.Flaky {
		fmt.Fprintf(w, "  flaky     %s: base %s, reference %s\n", f.Name, strings.Join(f.Base, " "), strings.Join(f.Reference, " "))
	}
	for _, l := range d.LeftOut {
		fmt.Fprintf(w, "  left out  %s (base %s, reference %s): %s\n", l.Name, l.Base, l.Reference, l.Why)
	}
}

// summarize tells a person what was derived and what to run next.
func summarize(w io.Writer, h verify.Harness, tc verify.TestsCommit, reference string, obs verify.Observation, d verify.Derivation, repoDir, out string) {
	fmt.Fprintf(w, "base        %s\n", h.Base)
	fmt.Fprintf(w, "tests_from  %s (%s)\n", h.TestsFrom, tc.Ref)
	fmt.Fprintf(w, "test files  %s\n", strings.Join(h.TestFiles, ", "))
	fmt.Fprintf(w, "reference   %s\n", reference)
	fmt.Fprintf(w, "command     %s (%s)\n", strings.Join(h.Command, " "), h.Format)
	for _, side := range []struct {
		name string
		runs []verify.ObservedRun
	}{{"base", obs.Base}, {"reference", obs.Reference}} {
		var times []string
		for _, r := range side.runs {
			times = append(times, fmt.Sprintf("%.1fs", r.Duration.Seconds()))
		}
		fmt.Fprintf(w, "%-11s %d run(s): %s\n", side.name, len(side.runs), strings.Join(times, ", "))
	}
	fmt.Fprintf(w, "fail_to_pass %d:\n", len(h.FailToPass))
	for _, n := range h.FailToPass {
		fmt.Fprintf(w, "  %s  expects %s\n", n, h.ExpectedFailures[n])
	}
	fmt.Fprintf(w, "pass_to_pass %d\n", len(h.PassToPass))
	if len(d.Flaky)+len(d.LeftOut) > 0 {
		fmt.Fprintf(w, "not in the harness:\n")
		printOutcomes(w, d)
	}
	file := out
	if file == "" {
		file = "FILE"
	}
	fmt.Fprintf(w, "next: signoff verify --repo %s --harness %s --candidate <REV>   (the reference %s should be VERIFIED)\n", repoDir, file, short(reference))
}
