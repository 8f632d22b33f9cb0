package airlock_test

import "testing"

// TestHoldout29 measures the airlock on the two fresh holdouts of issue 29,
// texts in the classes of coverage.jsonl written by people who had read
// neither the airlock's code nor coverage.jsonl:
//
//   - holdout29.jsonl (148 texts), first run once the code was done, which
//     missed six injections and two prose passwords; the code was then
//     fixed for their classes, so it is no longer held out;
//   - holdout29b.jsonl (114 texts, 47 injections), written while those
//     fixes were made and first run after them.
//
// Both are held to the targets: redaction recall of at least 0.95
// (each labelled occurrence found as its own kind), injection precision and
// recall of at least 0.9, and no redaction on the texts built to look like
// secrets.
func TestHoldout29(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"holdout29.jsonl", "holdout29b.jsonl"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc := scoreClasses(t, name)
			var tp, fp, fn, expected, found, falseNeg int
			for _, s := range sc.classes {
				tp, fp, fn = tp+s.tp, fp+s.fp, fn+s.fn
				expected, found, falseNeg = expected+s.expected, found+s.exact, falseNeg+s.falseNeg
			}
			p, r, rr := ratio(tp, tp+fp), ratio(tp, tp+fn), ratio(found, expected)
			t.Logf("%s: injection precision %.3f recall %.3f (tp %d fp %d fn %d); redaction recall %.3f (%d of %d); %d false redactions on negatives",
				name, p, r, tp, fp, fn, rr, found, expected, falseNeg)
			if p < 0.9 || r < 0.9 {
				t.Errorf("injection precision %.3f, recall %.3f: want at least 0.9 each", p, r)
			}
			if rr < 0.95 {
				t.Errorf("redaction recall %.3f: want at least 0.95", rr)
			}
			if falseNeg > 0 {
				t.Errorf("%d redactions on negative texts, want none", falseNeg)
			}
		})
	}
}
