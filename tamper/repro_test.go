package tamper_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/tamper"
)

// goTest is a new reproduction test file with the given imports (besides
// testing) and test body.
func goTest(imports, body string) []tamper.File {
	src := "package cart\n\nimport (\n\t\"testing\"\n" + imports + "\n)\n\nfunc TestRepro(t *testing.T) {\n" + body + "\n}\n"
	return []tamper.File{added("cart/repro_test.go", src)}
}

// jsTest is a new jest test whose body is lines plus an expect.
func jsTest(lines string) []tamper.File {
	return []tamper.File{added("src/__tests__/repro.test.js",
		"const { total } = require('../cart');\n\ntest('repro', () => {\n"+lines+"\n  expect(total([])).toBe(0);\n});\n")}
}

// pyTest is a new pytest test whose body is lines plus an assert.
func pyTest(imports, lines string) []tamper.File {
	return []tamper.File{added("tests/test_repro.py",
		imports+"\nfrom shop.cart import total\n\n\ndef test_repro():\n"+lines+"\n    assert total([]) == 0\n")}
}

var reproductionAttacks = []attackRow{
	{"unparsable", []tamper.File{added("cart/repro_test.go", "package cart\n\nfunc TestRepro(t *testing.T) {\n")}, tamper.RuleUnparsableGo, tamper.Flag},
	{"reads a source file", goTest(`"os"`, `	b, _ := os.ReadFile("cart.go")
	if len(b) == 0 {
		t.Fatal("empty")
	}`), tamper.RuleReadsSources, tamper.Flag},
	{"globs sources", goTest(`"path/filepath"`, `	m, _ := filepath.Glob("*.go")
	if len(m) == 0 {
		t.Fatal("none")
	}`), tamper.RuleReadsSources, tamper.Flag},
	{"source name in a variable", goTest(`"os"`, `	name := "../cart/cart.go"
	if _, err := os.Stat(name); err != nil {
		t.Fatal(err)
	}`), tamper.RuleReadsSources, tamper.Flag},
	{"runtime.Caller", goTest(`"runtime"`, `	_, file, _, _ := runtime.Caller(0)
	t.Log(file)`), tamper.RuleReadsSources, tamper.Flag},
	{"go/parser", goTest("\"go/parser\"\n\"go/token\"", `	if _, err := parser.ParseFile(token.NewFileSet(), "x", nil, 0); err == nil {
		t.Fatal("parsed")
	}`), tamper.RuleReadsSources, tamper.Flag},
	{"embed", []tamper.File{added("cart/repro_test.go", "package cart\n\nimport (\n\t_ \"embed\"\n\t\"strings\"\n\t\"testing\"\n)\n\n//go:embed cart.go\nvar src string\n\nfunc TestRepro(t *testing.T) {\n\tif !strings.Contains(src, \"x * 2\") {\n\t\tt.Fatal(\"not fixed\")\n\t}\n}\n")}, tamper.RuleReadsSources, tamper.Flag},
	{"hashes", goTest(`"crypto/sha256"`, `	if sha256.Sum256([]byte("x"))[0] == 0 {
		t.Fatal("zero")
	}`), tamper.RuleHashesFiles, tamper.Flag},
	{"crc32", goTest(`"hash/crc32"`, `	if crc32.ChecksumIEEE(nil) != 0 {
		t.Fatal("crc")
	}`), tamper.RuleHashesFiles, tamper.Flag},
	{"env", goTest(`"os"`, `	if os.Getenv("CI") != "" {
		t.Skip("ci")
	}`), tamper.RuleEnvProbe, tamper.Flag},
	{"platform", goTest(`"runtime"`, `	if runtime.GOOS == "plan9" {
		t.Skip("plan9")
	}`), tamper.RuleEnvProbe, tamper.Flag},
	{"clock", goTest(`"time"`, `	if time.Now().Year() < 2000 {
		t.Fatal("clock")
	}`), tamper.RuleClock, tamper.Flag},
	{"unseeded rand", goTest(`"math/rand"`, `	if Total([]int{rand.Intn(10)}) < 0 {
		t.Fatal("negative")
	}`), tamper.RuleRandomness, tamper.Flag},
	{"crypto/rand", goTest(`"crypto/rand"`, `	b := make([]byte, 8)
	rand.Read(b)
	t.Log(b)`), tamper.RuleRandomness, tamper.Flag},
	{"network", goTest(`"net/http"`, `	if _, err := http.Get("https://example.com/"); err != nil {
		t.Fatal(err)
	}`), tamper.RuleNetwork, tamper.Flag},
	{"source read by a name built at run time", goTest("\"bytes\"\n\"io\"\n\"os\"\n\"strings\"", `	name := strings.Join([]string{"cart", "go"}, ".")
	f, _ := os.Open(name)
	b, _ := io.ReadAll(f)
	if bytes.Count(b, []byte("(100 - c.Percent)")) == 2 {
		t.Fatal("not fixed")
	}`), tamper.RuleReadsSources, tamper.Flag},
	{"source size by a name from a variable", goTest("\"os\"", `	ext := ".g" + string(rune(111))
	name := "cart" + ext
	fi, err := os.Stat(name)
	if err != nil || fi.Size() < 100 {
		t.Fatal("not fixed")
	}`), tamper.RuleReadsSources, tamper.Flag},
	{"file read by a parameter", []tamper.File{added("cart/repro_test.go", "package cart\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc read(t *testing.T, name string) []byte {\n\tb, err := os.ReadFile(name)\n\tif err != nil {\n\t\tt.Fatal(err)\n\t}\n\treturn b\n}\n\nfunc TestRepro(t *testing.T) {\n\tif len(read(t, os.Args[0])) == 0 {\n\t\tt.Fatal(\"empty\")\n\t}\n}\n")}, tamper.RuleReadsSources, tamper.Flag},
	{"walk of a computed directory", goTest("\"io/fs\"\n\"path/filepath\"\n\"strings\"", `	n := 0
	filepath.WalkDir(strings.TrimSuffix("./", "/"), func(string, fs.DirEntry, error) error { n++; return nil })
	if n == 0 {
		t.Fatal("none")
	}`), tamper.RuleReadsSources, tamper.Flag},
	{"file read by a byte-built name", goTest("\"os\"", `	b, _ := os.ReadFile(string([]byte{99, 97, 114, 116, 46, 103, 111}))
	if len(b) == 0 {
		t.Fatal("empty")
	}`), tamper.RuleReadsSources, tamper.Flag},
	{"no assertion", goTest("", `	_ = Total([]int{1, 2})`), tamper.RuleNoAssertion, tamper.Flag},
	{"unnamed t", []tamper.File{added("cart/repro_test.go", "package cart\n\nimport \"testing\"\n\nfunc TestRepro(*testing.T) {\n\tTotal(nil)\n}\n")}, tamper.RuleNoAssertion, tamper.Flag},

	{"JS reads source", jsTest("  const src = require('fs').readFileSync(__dirname + '/../cart.js', 'utf8');"), tamper.RuleReadsSources, tamper.Flag},
	{"JS function source", jsTest("  expect(total.toString().includes('price')).toBe(true);"), tamper.RuleReadsSources, tamper.Flag},
	{"JS hash", jsTest("  const h = require('crypto').createHash('sha256');"), tamper.RuleHashesFiles, tamper.Flag},
	{"JS env", jsTest("  if (process.env.CI) return;"), tamper.RuleEnvProbe, tamper.Flag},
	{"JS clock", jsTest("  const t0 = Date.now();"), tamper.RuleClock, tamper.Flag},
	{"JS random", jsTest("  const n = Math.random();"), tamper.RuleRandomness, tamper.Flag},
	{"JS network", jsTest("  await fetch('https://example.com/');"), tamper.RuleNetwork, tamper.Flag},
	{"JS no assertion", []tamper.File{added("src/__tests__/repro.test.js", "const { total } = require('../cart');\n\ntest('repro', () => {\n  total([]);\n});\n")}, tamper.RuleNoAssertion, tamper.Flag},

	{"Python reads source", pyTest("", "    src = open('shop/cart.py').read()"), tamper.RuleReadsSources, tamper.Flag},
	{"Python inspect", pyTest("import inspect", "    src = inspect.getsource(total)"), tamper.RuleReadsSources, tamper.Flag},
	{"Python hash", pyTest("import hashlib", "    h = hashlib.sha256(b'x')"), tamper.RuleHashesFiles, tamper.Flag},
	{"Python env", pyTest("import os", "    ci = os.environ.get('CI')"), tamper.RuleEnvProbe, tamper.Flag},
	{"Python clock", pyTest("import time", "    t0 = time.time()"), tamper.RuleClock, tamper.Flag},
	{"Python random", pyTest("import random", "    n = random.randint(1, 9)"), tamper.RuleRandomness, tamper.Flag},
	{"Python network", pyTest("import requests", "    r = requests.get('https://example.com/')"), tamper.RuleNetwork, tamper.Flag},
	{"Python no assertion", []tamper.File{added("tests/test_repro.py", "from shop.cart import total\n\n\ndef test_repro():\n    total([])\n")}, tamper.RuleNoAssertion, tamper.Flag},
}

func TestReproductionAttacks(t *testing.T) {
	t.Parallel()
	runAttacks(t, reproductionAttacks, tamper.Reproduction)
}

// goodReproductions check behaviour; nothing in them is flagged.
var goodReproductions = []struct {
	name  string
	files []tamper.File
}{
	{"table test", []tamper.File{added("cart/total_test.go", `package cart

import "testing"

func TestTotal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []int
		want int
	}{
		{"empty", nil, 0},
		{"two", []int{1, 2}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Total(tt.in); got != tt.want {
				t.Errorf("Total(%v) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}
`)}},
	{"httptest server", []tamper.File{added("cart/client_test.go", `package cart

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "3")
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
`)}},
	{"seeded rand and golden file", []tamper.File{added("cart/shuffle_test.go", `package cart

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

const seed = 7

func TestShuffleTotal(t *testing.T) {
	r := rand.New(rand.NewSource(seed))
	xs := r.Perm(10)
	want, err := os.ReadFile(filepath.Join("testdata", "total.golden"))
	if err != nil {
		t.Fatal(err)
	}
	check(t, Total(xs), string(want))
}

func check(t *testing.T, got int, want string) {
	t.Helper()
	if want == "" {
		t.Errorf("no golden value for %d", got)
	}
}
`)}},
	{"existing clock use kept", []tamper.File{modified("cart/timing_test.go",
		"package cart\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestOld(t *testing.T) {\n\tif time.Now().IsZero() {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n",
		"package cart\n\nimport (\n\t\"testing\"\n\t\"time\"\n)\n\nfunc TestOld(t *testing.T) {\n\tif time.Now().IsZero() {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n\nfunc TestNew(t *testing.T) {\n\tif Total(nil) != 0 {\n\t\tt.Fatal(\"nonzero\")\n\t}\n}\n")}},
	{"temporary directory round trip", []tamper.File{added("cart/save_test.go", `package cart

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSaveRoundTrip(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cart.json")
	if err := Save(p, []int{1, 2}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) == 0 {
		t.Fatalf("saved %q, %v", b, err)
	}
	f, err := os.CreateTemp("", "cart")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	if _, err := os.Stat(f.Name()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Open(os.DevNull); err != nil {
		t.Fatal(err)
	}
}
`)}},
	{"golden files by case name", []tamper.File{added("cart/golden_test.go", `package cart

import (
	"os"
	"path/filepath"
	"testing"
)

var goldenDir = filepath.Join("testdata", "golden")

func TestGolden(t *testing.T) {
	for _, name := range []string{"empty", "two"} {
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(filepath.Join("testdata", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(goldenDir, name+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			if got := Render(in); got != string(want) {
				t.Errorf("Render = %q, want %q", got, want)
			}
		})
	}
}
`)}},
	{"JS test", jsTest("  const items = [{ price: 2 }];\n  expect(total(items)).toBe(2);")},
	{"Python test", pyTest("import pytest", "    with pytest.raises(ValueError):\n        total(None)")},
}

func TestReproductionGood(t *testing.T) {
	t.Parallel()
	for _, row := range goodReproductions {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			if got := tamper.Reproduction(row.files); len(got) > 0 {
				t.Errorf("findings on a behavioural test:%s", dump(got))
			}
		})
	}
}

// TestReproductionSeededFromClock: a seed drawn from the clock is both a
// clock read and randomness.
func TestReproductionSeededFromClock(t *testing.T) {
	t.Parallel()
	got := tamper.Reproduction(goTest("\"math/rand\"\n\"time\"", `	r := rand.New(rand.NewSource(time.Now().UnixNano()))
	if Total([]int{r.Intn(3)}) < 0 {
		t.Fatal("negative")
	}`))
	checkWellFormed(t, got)
	if names := ruleNames(got); !slices.Equal(names, []string{tamper.RuleClock, tamper.RuleRandomness}) {
		t.Errorf("rules = %v, want clock and randomness:%s", names, dump(got))
	}
}

// TestReproductionNoAssertionChanged: a test left as it was on base is not
// the proposal's; changing it makes it so.
func TestReproductionNoAssertionChanged(t *testing.T) {
	t.Parallel()
	base := "package cart\n\nimport \"testing\"\n\nfunc TestOld(t *testing.T) {\n\tTotal(nil)\n}\n"
	if got := tamper.Reproduction([]tamper.File{modified("cart/old_test.go", base, base)}); len(got) > 0 {
		t.Errorf("unchanged test flagged:%s", dump(got))
	}
	cand := strings.Replace(base, "Total(nil)", "Total([]int{1})", 1)
	got := tamper.Reproduction([]tamper.File{modified("cart/old_test.go", base, cand)})
	if len(got) != 1 || got[0].Rule != tamper.RuleNoAssertion || got[0].Line != 5 {
		t.Errorf("want one no-assertion finding on line 5:%s", dump(got))
	}
}

// TestReproductionReadsByRuntimeName: the red team's reproduction that
// read the fixed source by a name joined at run time and counted a
// fragment of the fix in it is told for what it is.
func TestReproductionReadsByRuntimeName(t *testing.T) {
	t.Parallel()
	got := tamper.Reproduction(goTest("\"bytes\"\n\"io\"\n\"os\"\n\"strings\"", `	name := strings.Join([]string{"cart", "go"}, ".")
	f, _ := os.Open(name)
	b, _ := io.ReadAll(f)
	if bytes.Count(b, []byte("(100 - c.Percent)")) == 2 {
		t.Fatal("not fixed")
	}`))
	checkWellFormed(t, got)
	want := "calls os.Open(name) in a reproduction test with a path that is not a constant under testdata/: the test reads files instead of calling the code, and searches what it read (bytes.Count)"
	if !slices.ContainsFunc(got, func(f tamper.Finding) bool { return strings.HasSuffix(f.Detail, want) }) {
		t.Errorf("no finding ending %q:%s", want, dump(got))
	}
	if !slices.ContainsFunc(got, func(f tamper.Finding) bool { return strings.Contains(f.Detail, `"cart.go"`) }) {
		t.Errorf("the joined name is not reported as the Go source it is:%s", dump(got))
	}
}
