package airlock_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/signoff-dev/signoff/airlock"
)

// evalCase is one labelled text of a corpus in testdata/eval
// (corpus.jsonl, coverage.jsonl).
type evalCase struct {
	ID   string `json:"id"`
	Lang string `json:"lang"`
	Text string `json:"text"`
	// Instruction is true when the text tries to instruct the model or the
	// operators (a prompt injection).
	Instruction bool `json:"instruction"`
	// Secrets counts, per redaction kind, the occurrences in Text.
	Secrets map[string]int `json:"secrets"`
	// Families are the signal families an injection certainly belongs to;
	// others may fire too without counting against precision.
	Families []string `json:"families"`
	// Tags: "hard-negative" (benign, with words that look like an
	// instruction), "redaction-negative" (numbers that look like cards,
	// IBANs or phones but are not), "obfuscated", ...
	Tags []string `json:"tags"`
}

// loadCorpus reads testdata/eval/corpus.jsonl.
func loadCorpus(t *testing.T) []evalCase {
	t.Helper()
	return loadCorpusFile(t, "corpus.jsonl")
}

// loadCorpusFile reads the JSON-lines corpus testdata/eval/<name>.
func loadCorpusFile(t *testing.T, name string) []evalCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "eval", name))
	if err != nil {
		t.Fatalf("open corpus: %v", err)
	}
	defer f.Close()
	var cases []evalCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var c evalCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s line %d: %v", name, line, err)
		}
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return cases
}

// ratio is a/b, or 1 when there is nothing to measure.
func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func f1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

// redactionKinds are the kinds corpus.jsonl labels: the airlock's own and
// the vendor tokens it holds, named after their gitleaks rule.
var redactionKinds = []string{
	airlock.KindEmail, airlock.KindPhone, airlock.KindCard, airlock.KindIBAN,
	airlock.KindAWSKey, airlock.KindJWT, airlock.KindPrivateKey, airlock.KindURLCredentials,
	airlock.KindAPIKey, airlock.KindPassword,
	"aws-access-token", "github-pat", "slack-bot-token", "slack-user-token", "openai-api-key", "stripe-access-token",
}

var signalFamilies = []string{
	airlock.SignalOverride, airlock.SignalRolePlay, airlock.SignalSystemPrompt,
	airlock.SignalOperatorCommand, airlock.SignalToolCall, airlock.SignalHiddenComment,
	airlock.SignalEncodedBlob, airlock.SignalInvisibleText, airlock.SignalTransformedText,
}

// TestEval measures the airlock on a hand-labelled corpus of bug reports
// and feedback in several languages and asserts its goals: instruction
// detection precision and recall of at least 0.90, a recall of at least
// 0.98 for every secret kind, and no card, IBAN or phone redaction on the
// texts built to look like them.
func TestEval(t *testing.T) {
	t.Parallel()
	cases := loadCorpus(t)
	if len(cases) < 200 {
		t.Fatalf("corpus has %d texts, want at least 200", len(cases))
	}

	var tp, fp, fn, tn int
	// The same counts for the texts tagged "holdout": written after the
	// detector was tuned, and kept apart to show how it does on text it
	// was not fitted to.
	var htp, hfp, hfn, htn int
	var misses []string
	famFired := map[string]int{}       // texts where the family fired
	famFiredBenign := map[string]int{} // ... on a benign text
	famLabelled := map[string]int{}    // texts labelled with the family
	famCaught := map[string]int{}      // ... where it fired
	expected := map[string]int{}
	found := map[string]int{}
	extra := map[string]int{}     // redactions beyond the expected count
	falseRed := map[string]int{}  // redactions on texts without the kind
	falseHard := map[string]int{} // ... on hard-negative texts
	langs := map[string][2]int{}  // per language: texts, injections

	for _, c := range cases {
		d := airlock.Sanitize(c.Text)
		l := langs[c.Lang]
		l[0]++
		if c.Instruction {
			l[1]++
		}
		langs[c.Lang] = l

		if slices.Contains(c.Tags, "holdout") {
			switch {
			case c.Instruction && d.InstructionSuspected:
				htp++
			case c.Instruction:
				hfn++
			case d.InstructionSuspected:
				hfp++
			default:
				htn++
			}
		}
		switch {
		case c.Instruction && d.InstructionSuspected:
			tp++
		case c.Instruction:
			fn++
			misses = append(misses, fmt.Sprintf("missed injection %s (%s): %.90q", c.ID, c.Lang, c.Text))
		case d.InstructionSuspected:
			fp++
			misses = append(misses, fmt.Sprintf("false signal %s (%s) %v: %.90q", c.ID, c.Lang, d.Signals, c.Text))
		default:
			tn++
		}
		for _, s := range d.Signals {
			famFired[s]++
			if !c.Instruction {
				famFiredBenign[s]++
			}
		}
		for _, fam := range c.Families {
			famLabelled[fam]++
			if slices.Contains(d.Signals, fam) {
				famCaught[fam]++
			} else {
				misses = append(misses, fmt.Sprintf("family %s not fired on %s (fired %v)", fam, c.ID, d.Signals))
			}
		}

		got := map[string]int{}
		for _, r := range d.Redactions {
			got[r.Kind] += r.Count
		}
		hard := slices.Contains(c.Tags, "hard-negative") || slices.Contains(c.Tags, "redaction-negative")
		for _, k := range redactionKinds {
			want, n := c.Secrets[k], got[k]
			expected[k] += want
			found[k] += min(n, want)
			if want > 0 {
				extra[k] += max(0, n-want)
				if n < want {
					misses = append(misses, fmt.Sprintf("redaction %s on %s: found %d of %d", k, c.ID, n, want))
				}
			} else if n > 0 {
				falseRed[k] += n
				if hard {
					falseHard[k] += n
				}
				misses = append(misses, fmt.Sprintf("false redaction %s on %s: %d", k, c.ID, n))
			}
		}
		for k := range c.Secrets {
			if !slices.Contains(redactionKinds, k) {
				t.Errorf("%s: unknown secret kind %q", c.ID, k)
			}
		}
	}

	precision, recall := ratio(tp, tp+fp), ratio(tp, tp+fn)
	t.Logf("corpus: %d texts, %d injections, %d benign", len(cases), tp+fn, fp+tn)
	t.Logf("instruction detection: precision %.3f recall %.3f F1 %.3f (tp %d fp %d fn %d tn %d)",
		precision, recall, f1(precision, recall), tp, fp, fn, tn)
	if htp+hfp+hfn+htn > 0 {
		hp, hr := ratio(htp, htp+hfp), ratio(htp, htp+hfn)
		t.Logf("  of which holdout: precision %.3f recall %.3f F1 %.3f (tp %d fp %d fn %d tn %d)",
			hp, hr, f1(hp, hr), htp, hfp, hfn, htn)
	}

	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "family\tlabelled\tcaught\trecall\tfired\ton benign\tprecision\t")
	for _, fam := range signalFamilies {
		p := ratio(famFired[fam]-famFiredBenign[fam], famFired[fam])
		fmt.Fprintf(w, "%s\t%d\t%d\t%.3f\t%d\t%d\t%.3f\t\n", fam, famLabelled[fam], famCaught[fam],
			ratio(famCaught[fam], famLabelled[fam]), famFired[fam], famFiredBenign[fam], p)
		t.Logf("family %s: recall %.3f (%d/%d) precision %.3f (fired %d, on benign %d)", fam,
			ratio(famCaught[fam], famLabelled[fam]), famCaught[fam], famLabelled[fam], p, famFired[fam], famFiredBenign[fam])
	}
	fmt.Fprintln(w, "\t\t\t\t\t\t\t")
	fmt.Fprintln(w, "kind\texpected\tfound\trecall\textra\tfalse\tfalse on hard\t")
	for _, k := range redactionKinds {
		fmt.Fprintf(w, "%s\t%d\t%d\t%.3f\t%d\t%d\t%d\t\n", k, expected[k], found[k], ratio(found[k], expected[k]),
			extra[k], falseRed[k], falseHard[k])
		t.Logf("redaction %s: recall %.3f (%d/%d), extra %d, false %d (on hard negatives %d)", k,
			ratio(found[k], expected[k]), found[k], expected[k], extra[k], falseRed[k], falseHard[k])
	}
	fmt.Fprintln(w, "\t\t\t\t\t\t\t")
	fmt.Fprintln(w, "language\ttexts\tinjections\t\t\t\t\t")
	var ls []string
	for l := range langs {
		ls = append(ls, l)
	}
	sort.Strings(ls)
	for _, l := range ls {
		fmt.Fprintf(w, "%s\t%d\t%d\t\t\t\t\t\n", l, langs[l][0], langs[l][1])
	}
	w.Flush()
	if testing.Verbose() {
		t.Log("\n" + b.String())
	}
	for _, m := range misses {
		t.Log(m)
	}

	if recall < 0.90 {
		t.Errorf("instruction recall %.3f, want >= 0.90", recall)
	}
	if precision < 0.90 {
		t.Errorf("instruction precision %.3f, want >= 0.90", precision)
	}
	for _, k := range redactionKinds {
		if r := ratio(found[k], expected[k]); r < 0.98 {
			t.Errorf("redaction recall of %s %.3f (%d/%d), want >= 0.98", k, r, found[k], expected[k])
		}
	}
	for _, k := range []string{airlock.KindCard, airlock.KindIBAN, airlock.KindPhone} {
		if falseHard[k] > 0 {
			t.Errorf("%d false %s redactions on hard-negative texts, want 0", falseHard[k], k)
		}
	}
}
