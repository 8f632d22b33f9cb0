package airlock_test

import "testing"

// TestHoldout29 measures the airlock on testdata/eval/holdout29.jsonl: 148
// texts in the classes of coverage.jsonl, written for issue 29 by someone
// who read neither the airlock's code nor coverage.jsonl, and first run
// after the code was done. It holds the airlock to the targets:
// redaction recall of at least 0.95 (each labelled occurrence found as its
// own kind), injection precision and recall of at least 0.9, and no
// redaction on the texts built to look like secrets.
func TestHoldout29(t *testing.T) {
	t.Parallel()
	sc := scoreClasses(t, "holdout29.jsonl")
	var tp, fp, fn, expected, found, falseNeg int
	for _, s := range sc.classes {
		tp, fp, fn = tp+s.tp, fp+s.fp, fn+s.fn
		expected, found, falseNeg = expected+s.expected, found+s.exact, falseNeg+s.falseNeg
	}
	p, r, rr := ratio(tp, tp+fp), ratio(tp, tp+fn), ratio(found, expected)
	t.Logf("holdout29: injection precision %.3f recall %.3f (tp %d fp %d fn %d); redaction recall %.3f (%d of %d); %d false redactions on negatives",
		p, r, tp, fp, fn, rr, found, expected, falseNeg)
	if p < 0.9 || r < 0.9 {
		t.Errorf("injection precision %.3f, recall %.3f: want at least 0.9 each", p, r)
	}
	if rr < 0.95 {
		t.Errorf("redaction recall %.3f: want at least 0.95", rr)
	}
	if falseNeg > 0 {
		t.Errorf("%d redactions on negative texts, want none", falseNeg)
	}
}
