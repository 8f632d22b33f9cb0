package crew_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/signoff-dev/signoff/triage"
)

// bundledDatasets loads every triage dataset the repository carries: the
// bundled sample and the evaluation and holdout sets.
func bundledDatasets(t *testing.T) map[string]triage.Dataset {
	t.Helper()
	out := map[string]triage.Dataset{"orbit_run": loadOrbit(t)}
	dirs, _ := filepath.Glob("../triage/testdata/*/*")
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "tickets.json")); err != nil {
			continue
		}
		d, err := triage.LoadDataset(os.DirFS(dir))
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		out[dir] = d
	}
	if len(out) < 3 {
		t.Fatalf("only %d datasets found", len(out))
	}
	return out
}

// decisionSources returns the non-test Go sources of the packages that
// make triage decisions, lower-cased, by file name.
func decisionSources(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range dirs {
		fs, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range fs {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = strings.ToLower(string(b))
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d files scanned", len(out))
	}
	return out
}

// TestNoDatasetNamesInCode proves the crew is not keyed to the datasets it
// is evaluated on: no item id, author, ticket id or title, owner, crash
// signature, stack frame, product, company, release note or team of any
// bundled dataset appears in any non-test source of the packages that
// make triage decisions.
func TestNoDatasetNamesInCode(t *testing.T) {
	srcs := decisionSources(t, ".", "../triage", "../agent", "../cmd/signoff")
	for name, d := range bundledDatasets(t) {
		var names []string
		for _, it := range d.Items {
			names = append(names, it.ID, it.Author)
		}
		for _, tk := range d.Tickets {
			names = append(names, tk.ID, tk.Owner, tk.Title)
		}
		for _, c := range d.Crashes {
			names = append(names, c.Signature, c.StackTop, strings.SplitN(c.StackTop, "(", 2)[0])
		}
		for _, o := range d.Owners {
			names = append(names, o.Team, o.Channel)
		}
		names = append(names, d.Releases.Product, d.Releases.Company)
		for _, r := range d.Releases.Releases {
			names = append(names, r.Notes)
		}
		seen := map[string]bool{}
		for f, src := range srcs {
			for _, n := range names {
				n = strings.ToLower(strings.TrimSpace(n))
				if len(n) < 4 || seen[f+n] {
					continue
				}
				if strings.Contains(src, n) {
					seen[f+n] = true
					t.Errorf("%s names %q from dataset %s", f, n, name)
				}
			}
		}
	}
}

// TestNoComponentRules proves no decision is keyed to a component a
// dataset names: a component name never appears as a Go string literal
// outside the general vocabulary (lexicon.go), so no rule can say "a
// report about X goes to component X" or prefer a catch-all by name. A
// component is chosen from CODEOWNERS and the tracker's own tickets.
func TestNoComponentRules(t *testing.T) {
	srcs := decisionSources(t, ".", "../triage")
	comps := map[string]string{}
	for name, d := range bundledDatasets(t) {
		for _, o := range d.Owners {
			comps[strings.ToLower(o.Component)] = name
		}
	}
	for f, src := range srcs {
		if filepath.Base(f) == "lexicon.go" {
			continue
		}
		src = reImports.ReplaceAllString(src, "") // "sync" the package is no component
		for c, ds := range comps {
			if strings.Contains(src, `"`+c+`"`) || strings.Contains(src, `"~`+c+`"`) {
				t.Errorf("%s has %q, a component of dataset %s, as a literal", f, c, ds)
			}
		}
	}
}

// TestNoDatasetPhrasesInCode proves the vocabulary and the patterns were
// not written from the datasets' reports: no phrase of three or more
// words of a bundled dataset (an item's text, a ticket's title or
// description) is a lexicon form or an alternative of a pattern in the
// decision code. Single words, common pairs ("sign in") and phrases held
// together by a function word ("open the app") are the general
// vocabulary every product's reports share; three content words in a
// row are a report's own.
func TestNoDatasetPhrasesInCode(t *testing.T) {
	srcs := decisionSources(t, ".", "../triage")
	grams := map[string]string{}
	for name, d := range bundledDatasets(t) {
		var texts []string
		for _, it := range d.Items {
			texts = append(texts, it.Text)
		}
		for _, tk := range d.Tickets {
			texts = append(texts, tk.Title, tk.Description)
		}
		for _, s := range texts {
			w := words(s)
			for i := 0; i+3 <= len(w); i++ {
				if content(w[i : i+3]) {
					grams[strings.Join(w[i:i+3], " ")] = name
				}
			}
		}
	}
	if len(grams) < 500 {
		t.Fatalf("only %d phrases", len(grams))
	}
	n := 0
	for f, src := range srcs {
		for _, alt := range alternatives(src) {
			w := words(alt)
			if len(w) < 3 {
				continue
			}
			n++
			for i := 0; i+3 <= len(w); i++ {
				g := strings.Join(w[i:i+3], " ")
				if ds, ok := grams[g]; ok {
					t.Errorf("%s has the phrase %q (in %q) from dataset %s", f, g, alt, ds)
				}
			}
		}
	}
	if n < 50 {
		t.Fatalf("only %d phrases of code checked: the scan is broken", n)
	}
}

var (
	reImports   = regexp.MustCompile(`(?s)\nimport \(.*?\n\)|\nimport "[^"]*"`)
	reStringLit = regexp.MustCompile("`[^`]*`|\"(?:[^\"\\\\\n]|\\\\.)*\"")
	reRegexSyn  = regexp.MustCompile(`\\[sbdw][+*?]?|\(\?[a-z:]*|\[[^\]]*\][+*?]?|[()^$?+*{}]|\\.`)
)

// alternatives splits the string literals of src into the phrases they
// list: lexicon forms separated by "|", pattern alternatives with the
// regular-expression syntax removed.
func alternatives(src string) []string {
	var out []string
	for _, lit := range reStringLit.FindAllString(src, -1) {
		lit = lit[1 : len(lit)-1]
		lit = reRegexSyn.ReplaceAllString(lit, " ")
		out = append(out, strings.Split(lit, "|")...)
	}
	return out
}

// functionWords are the articles, prepositions, pronouns (also the
// indefinite ones: "something went wrong" is every app's error message)
// and auxiliaries of the languages the crew reads.
var functionWords = strings.Fields(`a an the to of in on at for by with from and or but not no is are was were be been it its i my me you your we our
	something anything nothing everything someone anyone
	they this that when then after before el la los las un una de del y o en con por para que se mi su es le les des du et ou ne pas je il
	der die das ein eine und oder nicht mit von zu im am ist ich mein o os as um uma do da dos das e em com por para nao eu meu
	il lo gli un una di da e o non con per che mi`)

// content reports whether every word of ws is a content word: not a
// function word and not a number.
func content(ws []string) bool {
	for _, w := range ws {
		if slices.Contains(functionWords, w) || strings.IndexFunc(w, unicode.IsLetter) < 0 {
			return false
		}
	}
	return true
}

// words is s folded to lower-case letter and digit words.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !slices.Contains([]rune{'\''}, r)
	})
}
