package tamper_test

import (
	"testing"

	"github.com/signoff-dev/signoff/tamper"
)

// fuzzPaths are the kinds of path a candidate can change, one per check.
var fuzzPaths = []string{
	"cart/cart.go", "cart/cart_test.go", "cmd/shop/main.go", "src/cart.js", "src/cart.test.ts",
	"shop/cart.py", "tests/test_cart.py", "go.mod", "go.sum", "go.work", "package.json",
	"jest.config.js", "pyproject.toml", "setup.cfg", "conftest.py", "vendor/a/a.go", "cart/testdata/x.go",
}

// FuzzCandidate feeds arbitrary base and candidate content under every
// kind of path to both checks: neither may panic, and every finding must
// name a listed rule, weigh no more than it says, and come back sorted.
func FuzzCandidate(f *testing.F) {
	for _, row := range candidateAttacks {
		for _, file := range row.files {
			f.Add(file.Path, file.Base, file.Cand, file.BaseExists)
		}
	}
	for _, row := range reproductionAttacks {
		for _, file := range row.files {
			f.Add(file.Path, file.Base, file.Cand, file.BaseExists)
		}
	}
	f.Add("cart/zz.go", []byte(nil), []byte(knownAttack), false)
	f.Add("go.mod", []byte(goMod), []byte("require (\n\"a b\" `c\n)\nreplace =>\ngodebug (\n)"), true)
	f.Add("package.json", []byte(`{"scripts":1}`), []byte(`{"scripts":{"a":[1,{"b":null}]}}`), true)
	f.Fuzz(func(t *testing.T, path string, base, cand []byte, baseExists bool) {
		files := []tamper.File{{Path: path, Base: base, BaseExists: baseExists, Cand: cand, CandExists: true}}
		for _, p := range fuzzPaths {
			files = append(files, tamper.File{Path: p, Base: base, BaseExists: baseExists, Cand: cand, CandExists: true})
		}
		checkWellFormed(t, tamper.Candidate(files))
		checkWellFormed(t, tamper.Reproduction(files))
		// And the other way round: what was added is now removed.
		for i := range files {
			files[i].Base, files[i].Cand = files[i].Cand, files[i].Base
			files[i].BaseExists, files[i].CandExists = true, baseExists
		}
		checkWellFormed(t, tamper.Candidate(files))
		checkWellFormed(t, tamper.Reproduction(files))
	})
}
