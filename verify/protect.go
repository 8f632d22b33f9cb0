package verify

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/signoff-dev/signoff/gitx"
)

// DefaultProtected are the globs of the frozen test tree: every test file
// and test-data path, in the layouts of Go, JavaScript and Python. At
// verification they are restored from tests_from over the candidate before
// anything runs, so a candidate's edits to any test, not only to the
// reproduction's own files, are discarded.
var DefaultProtected = []string{
	// Go
	"**/*_test.go", "**/testdata/**",
	// JavaScript and TypeScript
	"**/*.test.*", "**/*.spec.*", "**/__tests__/**", "test/**",
	// Snapshot files are expected outputs: updating them is editing a test.
	"**/__snapshots__/**", "**/*.snap",
	// Python
	"tests/**", "**/test_*.py", "**/*_test.py", "**/conftest.py",
}

// Build-change policies of a harness: what a candidate that changes which
// tests run or how they build (go.mod, go.work, build constraints,
// vendor/, package.json scripts, pytest settings) gets.
const (
	BuildRefuse = "refuse" // the default: REJECTED before anything runs
	BuildFlag   = "flag"   // run, with the change flagged on the card
)

// Exemption removes one default protected glob from a harness, with the
// reason the approval card shows.
type Exemption struct {
	Glob   string `json:"glob"`
	Reason string `json:"reason"`
}

// ProtectedGlobs are the globs restored from tests_from at verification:
// the defaults less the harness's exemptions, its own additions and its
// test files.
func (h Harness) ProtectedGlobs() []string {
	var out []string
	for _, g := range DefaultProtected {
		if !slices.ContainsFunc(h.Unprotect, func(e Exemption) bool { return e.Glob == g }) {
			out = append(out, g)
		}
	}
	out = append(out, h.Protect...)
	out = append(out, h.TestFiles...)
	return out
}

// BuildPolicy is the harness's build-change policy, defaults applied.
func (h Harness) BuildPolicy() string {
	if h.BuildChanges == "" {
		return BuildRefuse
	}
	return h.BuildChanges
}

func (h Harness) validateProtection() error {
	for _, g := range h.Protect {
		if err := checkGlob(g); err != nil {
			return fmt.Errorf("protect: %w", err)
		}
	}
	seen := map[string]bool{}
	for _, e := range h.Unprotect {
		if !slices.Contains(DefaultProtected, e.Glob) {
			return fmt.Errorf("unprotect: %q is not a default protected glob (%s)", e.Glob, strings.Join(DefaultProtected, ", "))
		}
		if seen[e.Glob] {
			return fmt.Errorf("unprotect: %q listed twice", e.Glob)
		}
		seen[e.Glob] = true
		if strings.TrimSpace(e.Reason) == "" {
			return fmt.Errorf("unprotect: %q has no reason: the card must say why a test path may be changed by a fix", e.Glob)
		}
	}
	switch h.BuildChanges {
	case "", BuildRefuse, BuildFlag:
	default:
		return fmt.Errorf("build_changes %q is not %s or %s", h.BuildChanges, BuildRefuse, BuildFlag)
	}
	return nil
}

func checkGlob(g string) error {
	if g == "" || strings.ContainsAny(g, "\\\x00") || strings.HasPrefix(g, "/") {
		return fmt.Errorf("bad glob %q", g)
	}
	for _, seg := range strings.Split(g, "/") {
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return fmt.Errorf("bad glob %q: %v", g, err)
		}
	}
	return nil
}

// TestEdit is one candidate change to the frozen test tree, discarded.
type TestEdit struct {
	Path   string `json:"path"`
	Change string `json:"change"` // modified, added or deleted
}

// Kinds of TestEdit.
const (
	EditModified = "modified"
	EditAdded    = "added"
	EditDeleted  = "deleted"
)

// protectedEdits lists the candidate's changes to protected paths:
// the paths it changed relative to base whose content differs from
// tests_from. A candidate built on tests_from carries the harness files
// unchanged, which is no edit.
func protectedEdits(changed []string, globs []string, testsFrom, cand map[string]string) []TestEdit {
	var out []TestEdit
	for _, p := range changed {
		if firstMatch(globs, p) == "" {
			continue
		}
		tf, inTF := testsFrom[p]
		c, inC := cand[p]
		switch {
		case inTF && inC && tf != c:
			out = append(out, TestEdit{Path: p, Change: EditModified})
		case inC && !inTF:
			out = append(out, TestEdit{Path: p, Change: EditAdded})
		case inTF && !inC:
			out = append(out, TestEdit{Path: p, Change: EditDeleted})
		}
	}
	return out
}

// freezeTree makes every protected path of the checkout at dir (of commit
// at) what it is at tests_from: test files the candidate edited are
// rewritten, test files it added are deleted, test files it deleted come
// back. It returns how many paths it touched.
func freezeTree(ctx context.Context, repo *gitx.Repo, dir, at, testsFrom string, globs []string) (int, error) {
	diff, err := repo.DiffNames(ctx, testsFrom, at)
	if err != nil {
		return 0, err
	}
	var paths []string
	for _, p := range diff {
		if firstMatch(globs, p) != "" {
			paths = append(paths, p)
		}
	}
	if err := (&gitx.Repo{Dir: dir}).RestorePaths(ctx, testsFrom, paths); err != nil {
		return 0, fmt.Errorf("restore the frozen test tree: %w", err)
	}
	return len(paths), nil
}
