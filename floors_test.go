package signoff_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The floors of the code base (docs/architecture.md): doors (httpapi, mcp,
// web, chat, notify, cmd/signoff) call desks (bugdesk, changedesk, ...),
// which apply pure rules (the packages below) and hand what they decided
// to the store. These tests read the import graph with `go list` and fail
// when a change blurs a floor.

const module = "github.com/signoff-dev/signoff"

// purePackages hold rules and domain types only: no storage, no network
// server or client, no processes. They are tested as tables.
var purePackages = []string{
	"", // the domain package itself
	"addressing", "agent", "airlock", "canonical", "card", "crew", "identity",
	"intake", "keys", "ledger", "nextstep", "outbox", "ratelimit", "secretbox", "tamper",
	"triage", "workflow",
}

// impure are what a pure package must not reach, directly or through
// another package.
var impure = []string{
	"database/sql", "net/http", "os/exec",
	module + "/sqlstore", module + "/sqlite", module + "/postgres",
}

// sqlstoreMayImport is every package of this module the store may import:
// the domain and the packages that define what it stores and how it chains
// and signs it. Rules packages (airlock, card, change, triage, ...) are
// applied by the desks, which hand the store decided values.
var sqlstoreMayImport = []string{
	"", "canonical", "ledger", "workflow", "identity",
}

// storeImporters are the only packages whose non-test code may import the
// store: the two engines, the conformance suite and the command that wires
// everything together. Doors reach storage through interfaces they define.
var storeImporters = []string{
	"sqlite", "postgres", "storetest", "cmd/signoff",
}

type goPackage struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func listPackages(t *testing.T) map[string]goPackage {
	t.Helper()
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(gobin); err != nil {
		gobin = "go"
	}
	cmd := exec.Command(gobin, "list", "-json", module+"/...")
	cmd.Dir = "."
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]goPackage{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages of %s", len(pkgs), module)
	}
	return pkgs
}

func pkgPath(rel string) string {
	if rel == "" {
		return module
	}
	return module + "/" + rel
}

func rel(path string) string {
	if path == module {
		return "(signoff)"
	}
	return strings.TrimPrefix(path, module+"/")
}

// floorBreaks lists every break of the floors in the import graph, each as
// one line "package: reason".
func floorBreaks(t *testing.T, pkgs map[string]goPackage) []string {
	var breaks []string
	for _, r := range purePackages {
		p, ok := pkgs[pkgPath(r)]
		if !ok {
			t.Errorf("pure package %q is not in the module any more: update purePackages", r)
			continue
		}
		for _, d := range p.Deps {
			if slices.Contains(impure, d) {
				breaks = append(breaks, rel(p.ImportPath)+": pure package reaches "+rel(d))
			}
		}
	}
	store, ok := pkgs[module+"/sqlstore"]
	if !ok {
		t.Fatal("sqlstore is not in the module")
	}
	for _, imp := range store.Imports {
		if !strings.HasPrefix(imp, module) {
			continue
		}
		allowed := false
		for _, r := range sqlstoreMayImport {
			allowed = allowed || imp == pkgPath(r)
		}
		if !allowed {
			breaks = append(breaks, "sqlstore: imports "+rel(imp))
		}
	}
	for _, p := range pkgs {
		if !slices.Contains(p.Imports, module+"/sqlstore") {
			continue
		}
		allowed := false
		for _, r := range storeImporters {
			allowed = allowed || p.ImportPath == pkgPath(r)
		}
		if !allowed {
			breaks = append(breaks, rel(p.ImportPath)+": imports sqlstore")
		}
	}
	slices.Sort(breaks)
	return slices.Compact(breaks)
}

func TestFloors(t *testing.T) {
	t.Parallel()
	breaks := floorBreaks(t, listPackages(t))
	for _, b := range breaks {
		t.Errorf("floor broken: %s (see docs/architecture.md, \"Where to put new code\")", b)
	}
}

// TestFloorsCatch makes sure the check can fail: the store's engines do
// import it, and a made-up pure list that includes httpapi breaks.
func TestFloorsCatch(t *testing.T) {
	t.Parallel()
	pkgs := listPackages(t)
	for _, r := range []string{"sqlite", "postgres"} {
		if !slices.Contains(pkgs[pkgPath(r)].Imports, module+"/sqlstore") {
			t.Errorf("%s does not import sqlstore: the import check reads the wrong field", r)
		}
	}
	deps := pkgs[module+"/httpapi"].Deps
	if !slices.Contains(deps, "net/http") {
		t.Errorf("httpapi's deps lack net/http: the purity check reads the wrong field")
	}
}
