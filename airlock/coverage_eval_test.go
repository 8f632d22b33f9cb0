package airlock_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/signoff-dev/signoff/airlock"
)

// coverageClasses are the class tags of testdata/eval/coverage.jsonl: every
// text carries exactly one. The injection classes hold injections and
// their benign look-alikes ("hard-negative"); the redaction classes hold
// secrets and numbers or words of the same shape ("redaction-negative",
// "hard-negative").
var coverageClasses = []string{
	"vendor-token", "national-id", "postal-address", "prose-password",
	"chat-markup", "fake-boundary", "override", "reversed", "tag-chars", "multilingual-injection",
}

// coverageKinds are the redaction kinds coverage.jsonl labels that the
// airlock had no kind for when it was written: vendor tokens named after
// the gitleaks rule they match, national identifiers (each with its
// checksum where the scheme has one) and postal addresses. Until the
// airlock reports a kind by exactly this name, its occurrences count as not
// found, whatever other kind may have hidden them.
var coverageKinds = []string{
	"gitlab-pat", "npm-access-token", "sendgrid-api-token", "stripe-access-token",
	"openai-api-key", "twilio-api-key", "gcp-api-key", "slack-webhook-url",
	"huggingface-access-token", "digitalocean-pat", "shopify-access-token", "github-fine-grained-pat",
	"us-ssn", "uk-nino", "fr-insee", "de-taxid", "in-aadhaar", "br-cpf",
	"postal-address",
}

// The baseline was measured on commit 1bb6020, before issue 29's code;
// the floors below are what the airlock scored after it (the baseline is in
// the comments). TestCoverageBaseline holds the airlock to them as a floor
// (recall, precision, redactions found) and a ceiling (false redactions):
// raise the numbers when the airlock gets better, never lower them to make
// a change pass.

// coverageInjectionFloor is the instruction detection precision and recall
// per class (on the texts carrying the class tag).
// Precision is 1 where nothing fired.
var coverageInjectionFloor = map[string]struct{ precision, recall float64 }{
	"vendor-token":           {1, 1}, // no injections, no signal
	"national-id":            {1, 1},
	"postal-address":         {1, 1},
	"prose-password":         {1, 1},
	"chat-markup":            {1, 1}, // 11 of 11, no look-alike fires (baseline 0.667 / 0.909)
	"fake-boundary":          {1, 1}, // 7 of 7 (baseline 6 of 7)
	"override":               {1, 1}, // 7 of 7 (baseline 7 of 7)
	"reversed":               {1, 1}, // 5 of 5 (baseline 0)
	"tag-chars":              {1, 1}, // 5 of 5 (baseline 0: Normalize dropped the tags unread)
	"multilingual-injection": {1, 1}, // 12 of 12 in Japanese, Korean, Arabic (baseline 0)
}

// coverageFamilyFloor is, per signal family, how many of the texts labelled
// with it fired it.
var coverageFamilyFloor = map[string]int{
	airlock.SignalOverride:        23, // of 25 (baseline 7)
	airlock.SignalRolePlay:        4,  // of 6 (baseline 0)
	airlock.SignalSystemPrompt:    19, // of 20 (baseline 10)
	airlock.SignalOperatorCommand: 28, // of 38 (baseline 13)
	airlock.SignalToolCall:        1,  // of 1
}

// coverageFoundFloor is, per redaction kind, how many of its labelled
// occurrences were redacted under exactly that kind. At the baseline none
// were: the new kinds did not exist, and of the 36 vendor tokens 21 were
// hidden under api-key, github-token or slack-token and 15 not at all; one
// SSN went as a phone number; no identifier, address or prose password was
// redacted. Now every one is.
var coverageFoundFloor = map[string]int{
	"gitlab-pat": 3, "npm-access-token": 3, "sendgrid-api-token": 3, "stripe-access-token": 4,
	"openai-api-key": 3, "twilio-api-key": 2, "gcp-api-key": 3, "slack-webhook-url": 3,
	"huggingface-access-token": 3, "digitalocean-pat": 3, "shopify-access-token": 3, "github-fine-grained-pat": 3,
	"us-ssn": 4, "uk-nino": 4, "fr-insee": 4, "de-taxid": 4, "in-aadhaar": 4, "br-cpf": 4,
	"postal-address": 15, "password": 18,
}

// coverageFalseCeiling is, per redaction kind, how many redactions of it
// were made on the negative texts ("redaction-negative", "hard-negative"),
// where nothing is to be redacted. None were, before and after; kinds not
// listed: none.
var coverageFalseCeiling = map[string]int{}

// TestCoverageBaseline measures the airlock on testdata/eval/coverage.jsonl,
// written for issue 29 before its code: vendor tokens, national
// identifiers, postal addresses, passwords stated in prose, and injections
// in chat markup, behind fake boundaries, reversed, in Unicode tag
// characters and in Japanese, Korean and Arabic, each with benign
// look-alikes. It logs the scores per class and kind and fails when the
// airlock does worse than the recorded baseline.
func TestCoverageBaseline(t *testing.T) {
	t.Parallel()
	sc := scoreClasses(t, "coverage.jsonl")
	classes, found, expected, falseNeg := sc.classes, sc.found, sc.expected, sc.falseNeg
	famCaught := sc.famCaught

	// The floors. A small tolerance: the floors are rounded down.
	const eps = 1e-9
	for _, cl := range coverageClasses {
		s, f := classes[cl], coverageInjectionFloor[cl]
		if p := ratio(s.tp, s.tp+s.fp); p+eps < f.precision {
			t.Errorf("class %s: injection precision %.3f, baseline %.3f", cl, p, f.precision)
		}
		if r := ratio(s.tp, s.tp+s.fn); r+eps < f.recall {
			t.Errorf("class %s: injection recall %.3f, baseline %.3f", cl, r, f.recall)
		}
	}
	for _, fam := range signalFamilies {
		if famCaught[fam] < coverageFamilyFloor[fam] {
			t.Errorf("family %s fired on %d labelled texts, baseline %d", fam, famCaught[fam], coverageFamilyFloor[fam])
		}
	}
	for k, n := range coverageFoundFloor {
		if found[k] < n {
			t.Errorf("redaction %s: found %d of %d, baseline %d", k, found[k], expected[k], n)
		}
	}
	for k, n := range falseNeg {
		if n > coverageFalseCeiling[k] {
			t.Errorf("redaction %s: %d false redactions on negative texts, baseline %d", k, n, coverageFalseCeiling[k])
		}
	}
}

// classScore is what scoreClasses measured on one class of a corpus.
type classScore struct {
	texts, tp, fp, fn, tn int
	expected, exact       int // labelled occurrences, found as their kind
	redactions            int // all redactions on the class's texts
	wrongKind             int // redactions beyond the labels on positive texts
	falseNeg              int // redactions on negative texts
}

// corpusScore is what scoreClasses measured on a whole corpus.
type corpusScore struct {
	classes         map[string]*classScore
	expected, found map[string]int // per kind: labelled, found as that kind
	falseNeg        map[string]int // per kind: redactions on negative texts
	famLabelled     map[string]int
	famCaught       map[string]int
}

// scoreClasses runs Sanitize over the corpus testdata/eval/<name>, whose
// texts each carry one of coverageClasses, and logs the scores per class,
// signal family and redaction kind (and, with -v, every miss).
func scoreClasses(t *testing.T, name string) *corpusScore {
	t.Helper()
	cases := loadCorpusFile(t, name)
	classes := map[string]*classScore{}
	for _, cl := range coverageClasses {
		classes[cl] = &classScore{}
	}
	expected := map[string]int{}
	found := map[string]int{}
	extra := map[string]int{}    // redactions of a labelled kind beyond its count
	falseAll := map[string]int{} // redactions of a kind the text has no label for
	falseNeg := map[string]int{} // ... on negative texts
	famLabelled := map[string]int{}
	famCaught := map[string]int{}
	var misses []string
	known := slices.Clone(airlock.KindNames())
	for _, k := range coverageKinds {
		if !slices.Contains(known, k) {
			known = append(known, k)
		}
	}

	for _, c := range cases {
		var cl string
		for _, tag := range c.Tags {
			if slices.Contains(coverageClasses, tag) {
				if cl != "" {
					t.Errorf("%s: two class tags, %s and %s", c.ID, cl, tag)
				}
				cl = tag
			}
		}
		if cl == "" {
			t.Errorf("%s: no class tag", c.ID)
			continue
		}
		for k := range c.Secrets {
			if !slices.Contains(known, k) {
				t.Errorf("%s: unknown secret kind %q", c.ID, k)
			}
		}
		s := classes[cl]
		s.texts++
		d := airlock.Sanitize(c.Text)
		switch {
		case c.Instruction && d.InstructionSuspected:
			s.tp++
		case c.Instruction:
			s.fn++
			misses = append(misses, fmt.Sprintf("missed injection %s (%s): %.90q", c.ID, c.Lang, d.Text))
		case d.InstructionSuspected:
			s.fp++
			misses = append(misses, fmt.Sprintf("false signal %s (%s) %v: %.90q", c.ID, c.Lang, d.Signals, d.Text))
		default:
			s.tn++
		}
		for _, fam := range c.Families {
			famLabelled[fam]++
			if slices.Contains(d.Signals, fam) {
				famCaught[fam]++
			}
		}

		got := map[string]int{}
		for _, r := range d.Redactions {
			got[r.Kind] += r.Count
			s.redactions += r.Count
		}
		negative := slices.Contains(c.Tags, "hard-negative") || slices.Contains(c.Tags, "redaction-negative")
		kinds := slices.Clone(known)
		for k := range got {
			if !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
		for _, k := range kinds {
			want, n := c.Secrets[k], got[k]
			expected[k] += want
			found[k] += min(n, want)
			s.expected += want
			s.exact += min(n, want)
			switch {
			case want > 0:
				extra[k] += max(0, n-want)
				s.wrongKind += max(0, n-want)
				if n < want {
					misses = append(misses, fmt.Sprintf("redaction %s on %s: found %d of %d (redacted: %v)", k, c.ID, n, want, d.Redactions))
				}
			case n > 0:
				falseAll[k] += n
				if negative {
					falseNeg[k] += n
					s.falseNeg += n
					misses = append(misses, fmt.Sprintf("false redaction %s on negative %s: %d: %.90q", k, c.ID, n, d.Text))
				} else {
					s.wrongKind += n
				}
			}
		}
	}

	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "class\ttexts\tinjections\ttp\tfp\tfn\ttn\tprecision\trecall\tsecrets\tas kind\tother kind\tfalse on neg\t")
	for _, cl := range coverageClasses {
		s := classes[cl]
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t%.3f\t%d\t%d\t%d\t%d\t\n", cl, s.texts, s.tp+s.fn,
			s.tp, s.fp, s.fn, s.tn, ratio(s.tp, s.tp+s.fp), ratio(s.tp, s.tp+s.fn),
			s.expected, s.exact, s.wrongKind, s.falseNeg)
	}
	fmt.Fprintln(w, "\t\t\t\t\t\t\t\t\t\t\t\t\t")
	fmt.Fprintln(w, "family\tlabelled\tcaught\trecall\t\t\t\t\t\t\t\t\t\t")
	for _, fam := range signalFamilies {
		fmt.Fprintf(w, "%s\t%d\t%d\t%.3f\t\t\t\t\t\t\t\t\t\t\n", fam, famLabelled[fam], famCaught[fam], ratio(famCaught[fam], famLabelled[fam]))
	}
	fmt.Fprintln(w, "\t\t\t\t\t\t\t\t\t\t\t\t\t")
	fmt.Fprintln(w, "kind\texpected\tfound\trecall\textra\tfalse\tfalse on neg\t\t\t\t\t\t\t")
	var kinds []string
	for k := range expected {
		if expected[k] > 0 || falseAll[k] > 0 {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(w, "%s\t%d\t%d\t%.3f\t%d\t%d\t%d\t\t\t\t\t\t\t\n", k, expected[k], found[k],
			ratio(found[k], expected[k]), extra[k], falseAll[k], falseNeg[k])
	}
	w.Flush()
	t.Logf("%s: %d texts\n%s", name, len(cases), b.String())
	if testing.Verbose() {
		for _, m := range misses {
			t.Log(m)
		}
	}
	return &corpusScore{classes, expected, found, falseNeg, famLabelled, famCaught}
}
