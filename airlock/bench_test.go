package airlock_test

import (
	"os"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/airlock"
)

// benchReports returns the reports of testdata/bench_corpus.txt (bug
// reports in several languages, with logs, some secrets and personal data,
// and one injection attempt), repeated to about 200 KB, and their size.
// Each report is processed on its own, as the airlock sees them.
func benchReports(b *testing.B) ([]string, int64) {
	b.Helper()
	data, err := os.ReadFile("testdata/bench_corpus.txt")
	if err != nil {
		b.Fatal(err)
	}
	var reports []string
	for r := range strings.SplitSeq(string(data), "\n%%%%\n") {
		if r = strings.TrimSpace(r); r != "" {
			reports = append(reports, r)
		}
	}
	var all []string
	var total int64
	for total < 200<<10 {
		for _, r := range reports {
			all = append(all, r)
			total += int64(len(r))
		}
	}
	return all, total
}

func BenchmarkSanitize(b *testing.B) {
	reports, n := benchReports(b)
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range reports {
			airlock.Sanitize(r)
		}
	}
}

func BenchmarkNormalize(b *testing.B) {
	reports, n := benchReports(b)
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range reports {
			airlock.Normalize(r)
		}
	}
}

// BenchmarkRedact runs on normalized text, as Sanitize does.
func BenchmarkRedact(b *testing.B) {
	reports, n := benchReports(b)
	for i, r := range reports {
		reports[i], _ = airlock.Normalize(r)
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range reports {
			airlock.Redact(r)
		}
	}
}

// BenchmarkDetectJoint reads each report as a form would send it: the text
// cut into four fields, read apart and together.
func BenchmarkDetectJoint(b *testing.B) {
	reports, n := benchReports(b)
	fields := make([][]string, len(reports))
	for i, r := range reports {
		q := len(r) / 4
		fields[i] = []string{r[:q], r[q : 2*q], r[2*q : 3*q], r[3*q:]}
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range fields {
			airlock.DetectJoint(f...)
		}
	}
}
