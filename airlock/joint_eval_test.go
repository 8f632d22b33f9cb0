package airlock_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/airlock"
)

// splitWords cuts text into n fields at word boundaries, as a reporter
// spreading an instruction over a form would; the text's own line breaks
// inside a field are kept, the white space at a cut is dropped.
func splitWords(text string, n int) []string {
	var starts []int // byte offsets where words start
	for i, r := range text {
		prev, _ := utf8.DecodeLastRuneInString(text[:i])
		if !unicode.IsSpace(r) && (i == 0 || unicode.IsSpace(prev)) {
			starts = append(starts, i)
		}
	}
	if len(starts) < n {
		return []string{text}
	}
	per := len(starts) / n
	var out []string
	for i := 0; i < n; i++ {
		from, to := starts[i*per], len(text)
		if i < n-1 {
			to = starts[(i+1)*per]
		}
		out = append(out, strings.TrimSpace(text[from:to]))
	}
	return out
}

// TestEvalJoint measures, on the labelled corpus, what reading a form's
// fields together adds: each injection the detector finds whole is cut
// into four fields at word boundaries, and each benign text is read
// together with another benign text as its steps and a device and OS. The
// joint reading must find (nearly) every cut injection that the fields
// alone miss, and must not raise a split signal on benign fields.
func TestEvalJoint(t *testing.T) {
	t.Parallel()
	cases := loadCorpus(t)
	var benign []string
	cut, foundApart, foundJoint := 0, 0, 0
	for _, c := range cases {
		if !c.Instruction {
			benign = append(benign, c.Text)
			continue
		}
		if len(airlock.Detect(c.Text)) == 0 || len(strings.Fields(c.Text)) < 4 {
			continue
		}
		fields := splitWords(c.Text, 4)
		cut++
		apart := false
		for _, f := range fields {
			if len(airlock.Detect(f)) > 0 {
				apart = true
			}
		}
		if apart {
			foundApart++
		}
		if len(airlock.DetectJoint(fields...)) > 0 {
			foundJoint++
		} else {
			t.Logf("missed when cut: %s %q", c.ID, fields)
		}
	}
	falseSplit := 0
	for i, b := range benign {
		steps := benign[(i+1)%len(benign)]
		got := airlock.DetectJoint(b, steps, "Pixel 8", "Android 14")
		for _, s := range got {
			if s == airlock.SignalSplit {
				falseSplit++
				t.Logf("benign pair raised split: %q + %q: %v", b, steps, got)
			}
		}
	}
	t.Logf("%d injections cut into 4 fields: %d found by a field alone, %d by the joint reading; %d benign pairs, %d raised split-across-fields",
		cut, foundApart, foundJoint, len(benign), falseSplit)
	if cut == 0 || float64(foundJoint) < 0.95*float64(cut) {
		t.Errorf("joint reading found %d of %d cut injections, want at least 95%%", foundJoint, cut)
	}
	if falseSplit > 0 {
		t.Errorf("%d benign pairs raised split-across-fields", falseSplit)
	}
}
