package verify

import (
	"go/parser"
	"go/token"

	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// testOnlyDirs finds, in the checkout at dir (of tests_from), the Go
// packages of the repository that only tests use: imported by test files,
// or by other such packages, and by no other code. Assertion helpers and
// fixtures live in packages like these (testutil, internal/testing); a
// candidate that made their checks vacuous would pass every test that
// leans on them, so their files are frozen with the tests. The answer is
// read from tests_from, never from the candidate, whose imports could
// otherwise take a package out of the set.
func testOnlyDirs(dir string) ([]string, error) {
	type pkgInfo struct {
		dir          string
		imports      map[string]bool // from non-test files
		testImports  map[string]bool // from test files
		hasGo, isCmd bool
	}
	pkgs := map[string]*pkgInfo{} // import path -> package
	roots := map[string]string{}
	fset := token.NewFileSet()
	files, err := goFiles(dir)
	if err != nil {
		return nil, err
	}
	for _, file := range files {
		name, rel := path.Base(file), path.Dir(file)
		ip, ok, err := importPath(dir, rel, roots)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // outside any module
		}
		pk := pkgs[ip]
		if pk == nil {
			pk = &pkgInfo{dir: rel, imports: map[string]bool{}, testImports: map[string]bool{}}
			pkgs[ip] = pk
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, filepath.FromSlash(file)), nil, parser.ImportsOnly|parser.SkipObjectResolution)
		if err != nil {
			continue // the go command will say; a file we cannot read decides nothing
		}
		test := strings.HasSuffix(name, "_test.go")
		if !test {
			pk.hasGo = true
			pk.isCmd = pk.isCmd || f.Name.Name == "main"
		}
		for _, im := range f.Imports {
			q, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				continue
			}
			if test {
				pk.testImports[q] = true
			} else {
				pk.imports[q] = true
			}
		}
	}
	// A package is test-only when something imports it, and every importer
	// is a test file or a test-only package: a fixed point from "all
	// imported packages" downwards.
	testOnly := map[string]bool{}
	for ip, pk := range pkgs {
		if pk.hasGo && !pk.isCmd && testInfraName(pk.dir) {
			testOnly[ip] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for ip := range testOnly {
			used := false
			for imp, pk := range pkgs {
				// A package's own tests importing it say nothing.
				if pk.testImports[ip] && imp != ip {
					used = true
				}
				if pk.imports[ip] && !testOnly[imp] {
					delete(testOnly, ip)
					changed = true
					break
				}
				if pk.imports[ip] {
					used = true
				}
			}
			if testOnly[ip] && !used {
				delete(testOnly, ip)
				changed = true
			}
		}
	}
	var out []string
	for ip := range testOnly {
		out = append(out, pkgs[ip].dir)
	}
	slices.Sort(out)
	return out, nil
}

// testInfraName says whether a package directory is named as test
// infrastructure is (testutil, internal/testing, mocks, fixtures, ...).
// Only such packages are frozen: a public package that some test happens
// to import, and no other code, is still the project's code to fix.
func testInfraName(dir string) bool {
	for _, seg := range strings.Split(strings.ToLower(dir), "/") {
		for _, w := range []string{"test", "mock", "fake", "fixture", "stub", "assert"} {
			if strings.Contains(seg, w) {
				return true
			}
		}
	}
	return false
}

// testOnlyGlobs are the globs of the files of test-only package dirs.
func testOnlyGlobs(dirs []string) []string {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if d == "." {
			out = append(out, "*.go")
			continue
		}
		out = append(out, path.Join(d, "*.go"))
	}
	return out
}
