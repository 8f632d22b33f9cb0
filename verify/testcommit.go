package verify

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/gitx"
)

// InitSignature is the author and committer of the tests_from commits
// harness init makes; with the fix's date it makes the commit id
// reproducible.
var InitSignature = gitx.Signature{Name: "signoff harness init", Email: "signoff@localhost"}

// TestsCommit is a tests_from commit: base's tree plus test-file changes
// only, kept reachable by Ref.
type TestsCommit struct {
	Commit string
	Ref    string
	// Files are the test files it changes relative to base, sorted
	// (added and modified; Removed lists the deleted ones).
	Files   []string
	Removed []string
}

// IsTestPath says whether p is under one of globs (a harness's protected
// globs: a test file or test data).
func IsTestPath(globs []string, p string) bool {
	return firstMatch(globs, p) != ""
}

// SplitChanges splits the paths that differ between base and rev into test
// paths (globs) and the rest.
func SplitChanges(ctx context.Context, repo *gitx.Repo, base, rev string, globs []string) (tests, others []string, err error) {
	changed, err := repo.DiffNames(ctx, base, rev)
	if err != nil {
		return nil, nil, fmt.Errorf("changes from %s to %s: %w", short(base), short(rev), err)
	}
	for _, p := range changed {
		if IsTestPath(globs, p) {
			tests = append(tests, p)
		} else {
			others = append(others, p)
		}
	}
	return tests, others, nil
}

// CommitTestsFrom makes the tests_from commit for base from rev: base's
// tree with rev's version of every test path (globs) that differs, and
// nothing else of rev. The commit is made in a temporary index, dated
// when, and kept by a ref under refs/signoff/harness/; the user's working
// tree, index and branches are not touched.
func CommitTestsFrom(ctx context.Context, repo *gitx.Repo, base, rev string, globs []string, when time.Time) (TestsCommit, error) {
	tests, _, err := SplitChanges(ctx, repo, base, rev, globs)
	if err != nil {
		return TestsCommit{}, err
	}
	if len(tests) == 0 {
		return TestsCommit{}, fmt.Errorf("%s changes no test file relative to %s (test files are %s)", short(rev), short(base), strings.Join(globs, ", "))
	}
	var edits []gitx.TreeEdit
	for _, p := range tests {
		e, ok, err := repo.Entry(ctx, rev, p)
		if err != nil {
			return TestsCommit{}, fmt.Errorf("test file %s at %s: %w", p, short(rev), err)
		}
		if !ok {
			edits = append(edits, gitx.TreeEdit{Path: p})
			continue
		}
		if e.Mode != gitx.ModeFile && e.Mode != gitx.ModeExecutable {
			// A link or submodule among the tests could point the frozen
			// tree anywhere; a person should look at it.
			return TestsCommit{}, fmt.Errorf("test path %s at %s is not a regular file (mode %s)", p, short(rev), e.Mode)
		}
		edits = append(edits, gitx.TreeEdit{Path: p, Mode: e.Mode, ID: e.ID})
	}
	sig := InitSignature
	sig.When = when
	id, err := repo.CommitEdits(ctx, base, edits, testsMessage(base, rev), sig)
	if err != nil {
		return TestsCommit{}, fmt.Errorf("making the tests commit: %w", err)
	}
	return keepTestsCommit(ctx, repo, base, id, globs)
}

// CommitTestPatch makes the tests_from commit for base from a patch that
// may change test paths (globs) only; one touching anything else is
// refused.
func CommitTestPatch(ctx context.Context, repo *gitx.Repo, base string, patch []byte, globs []string, when time.Time) (TestsCommit, error) {
	sig := InitSignature
	sig.When = when
	id, err := repo.CommitPatch(ctx, base, patch, testsMessage(base, "a test patch"), sig)
	if err != nil {
		return TestsCommit{}, fmt.Errorf("applying the test patch to %s: %w", short(base), err)
	}
	return keepTestsCommit(ctx, repo, base, id, globs)
}

// keepTestsCommit checks that commit id changes only test paths relative
// to base, and publishes it under its ref.
func keepTestsCommit(ctx context.Context, repo *gitx.Repo, base, id string, globs []string) (TestsCommit, error) {
	tests, others, err := SplitChanges(ctx, repo, base, id, globs)
	if err != nil {
		return TestsCommit{}, err
	}
	if len(others) > 0 {
		return TestsCommit{}, fmt.Errorf("the tests change non-test files %s: only paths matching %s may change (the rest is the fix)", strings.Join(firstN(others, 5), ", "), strings.Join(globs, ", "))
	}
	if len(tests) == 0 {
		return TestsCommit{}, fmt.Errorf("the tests change nothing relative to %s", short(base))
	}
	tree, err := repo.Tree(ctx, id)
	if err != nil {
		return TestsCommit{}, err
	}
	tc := TestsCommit{Commit: id, Ref: "refs/signoff/harness/" + short(base) + "-" + short(tree)}
	for _, p := range tests {
		e, ok, err := repo.Entry(ctx, id, p)
		switch {
		case err != nil:
			return TestsCommit{}, err
		case !ok:
			tc.Removed = append(tc.Removed, p)
		case e.Mode != gitx.ModeFile && e.Mode != gitx.ModeExecutable:
			return TestsCommit{}, fmt.Errorf("test path %s is not a regular file (mode %s)", p, e.Mode)
		default:
			tc.Files = append(tc.Files, p)
		}
	}
	slices.Sort(tc.Files)
	if err := repo.SetSignoffRef(ctx, tc.Ref, id); err != nil {
		return TestsCommit{}, fmt.Errorf("keeping the tests commit: %w", err)
	}
	return tc, nil
}

func testsMessage(base, from string) string {
	return fmt.Sprintf("signoff harness init: tests for %s\n\nThe test files of %s over base %s, and nothing else.\n", short(base), short(from), base)
}
