package web

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/change"
)

// TestChangePlanWords: a flag plan reads "env · key: before → after"; a
// file plan's diff is what git diff says of the same two texts (lines
// added and deleted) and applies back to the new text with git apply; a
// runbook's parameters are listed field by field.
func TestChangePlanWords(t *testing.T) {
	t.Parallel()
	hc := change.HealthCheck{Kind: change.HealthHTTP, Method: "GET", URL: "http://shop.test/checkout", ExpectStatus: 200, ExpectBody: "total", WindowSeconds: 6, IntervalSeconds: 2}
	flag := wordsOf(change.Plan{Kind: "flag", Target: "flag:prod/checkout_v2_new_payment_flow", Params: json.RawMessage(`{"value":true}`),
		Rollback: json.RawMessage(`{"value":false}`), HealthCheck: hc, ExpiresAt: time.Now()})
	if flag.Summary != "prod · checkout_v2_new_payment_flow: false → true" {
		t.Errorf("flag plan: %q", flag.Summary)
	}
	if flag.Health != `GET http://shop.test/checkout must answer 200 with "total" in the body, every 2 s for 6 s; if it does not, the target is restored.` {
		t.Errorf("health: %q", flag.Health)
	}
	rb := wordsOf(change.Plan{Kind: "runbook", Target: "runbook:restart-cache", Params: json.RawMessage(`{"network":false,"region":"eu <b>"}`)})
	if rb.Summary != "runbook restart-cache" || len(rb.Params) != 2 || rb.Params[1].Value != "eu <b>" || rb.Rollback != nil {
		t.Errorf("runbook plan: %+v", rb)
	}

	pairs := []struct{ name, before, after string }{
		{"one line", "1.0.0\n", "1.0.1\n"},
		{"middle", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n", "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nK\nL\nm\nn\n"},
		{"far apart", strings.Repeat("x\n", 20) + "y\n" + strings.Repeat("x\n", 20), "z\n" + strings.Repeat("x\n", 20) + strings.Repeat("x\n", 19) + "w\nx\n"},
		{"no newline at the end", "a\nb", "a\nc"},
		{"newline added", "a\nb", "a\nb\n"},
		{"create", "", "hello\nworld\n"},
	}
	dir := t.TempDir()
	for _, p := range pairs {
		oldF, newF := filepath.Join(dir, "old"), filepath.Join(dir, "new")
		os.WriteFile(oldF, []byte(p.before), 0o600)
		os.WriteFile(newF, []byte(p.after), 0o600)
		text := unifiedDiff("a/f", "b/f", p.before, p.after)
		files := sideBySide(text)
		if len(files) != 1 {
			t.Fatalf("%s: %d files in\n%s", p.name, len(files), text)
		}
		out, _ := exec.Command("git", "diff", "--no-index", "--numstat", oldF, newF).Output()
		var add, del int
		if f := strings.Fields(string(out)); len(f) >= 2 {
			add, del = atoi(f[0]), atoi(f[1])
		}
		if files[0].Added != add || files[0].Deleted != del {
			t.Errorf("%s: +%d −%d, git says +%d −%d:\n%s", p.name, files[0].Added, files[0].Deleted, add, del, text)
		}
		// The diff applies to the old text and gives the new one.
		work := filepath.Join(dir, p.name)
		os.MkdirAll(work, 0o700)
		os.WriteFile(filepath.Join(work, "f"), []byte(p.before), 0o600)
		patch := filepath.Join(dir, "patch")
		os.WriteFile(patch, []byte(text), 0o600)
		cmd := exec.Command("git", "apply", "--unsafe-paths", "--directory=.", patch)
		cmd.Dir = work
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: git apply: %v %s\n%s", p.name, err, out, text)
			continue
		}
		if got, _ := os.ReadFile(filepath.Join(work, "f")); string(got) != p.after {
			t.Errorf("%s: applied diff gives %q, want %q", p.name, got, p.after)
		}
	}
	file := wordsOf(change.Plan{Kind: "file", Target: "file:VERSION", Params: json.RawMessage(`{"content":"1.0.1\n"}`), Rollback: json.RawMessage(`{"content":"1.0.0\n"}`)})
	if file.Summary != "file VERSION: +1 −1 line(s)" || len(file.Diff) != 1 || !strings.Contains(file.DiffText, "-1.0.0\n+1.0.1\n") {
		t.Errorf("file plan: %q\n%s", file.Summary, file.DiffText)
	}
	created := wordsOf(change.Plan{Kind: "file", Target: "file:NOTES", Params: json.RawMessage(`{"content":"x\n"}`), Rollback: json.RawMessage(`{"delete":true}`)})
	if created.Summary != "file NOTES: creates it (1 line(s))" || !strings.HasPrefix(created.DiffText, "--- /dev/null\n+++ b/NOTES\n@@ -0,0 +1,1 @@\n+x\n") {
		t.Errorf("new file plan: %q\n%s", created.Summary, created.DiffText)
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// FuzzPlanDiff: for any two texts, the line diff's kept and removed lines
// are the old text, its kept and added lines the new one, and the unified
// diff read back by the side-by-side parser counts exactly its added and
// removed lines (a line of the file that looks like a diff header stays
// content).
func FuzzPlanDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd")
	f.Add("--- a\n+++ b\n@@ -1 +1 @@\n", "--- a\n@@ x\n\\ No newline at end of file\n")
	f.Add("", "x")
	f.Add(strings.Repeat("x\n", 30), strings.Repeat("x\n", 14)+"y\n"+strings.Repeat("x\n", 15))
	f.Fuzz(func(t *testing.T, before, after string) {
		if len(before) > 4096 || len(after) > 4096 {
			return
		}
		ops := lineDiff(splitLines(before), splitLines(after))
		var old, new strings.Builder
		adds, dels := 0, 0
		for _, op := range ops {
			if op.kind != '+' {
				old.WriteString(op.line)
			}
			if op.kind != '-' {
				new.WriteString(op.line)
			}
			switch op.kind {
			case '+':
				adds++
			case '-':
				dels++
			}
		}
		if old.String() != before || new.String() != after {
			t.Fatalf("the ops do not rebuild the texts: %q %q", old.String(), new.String())
		}
		text := unifiedDiff("a/f", "b/f", before, after)
		if (text == "") != (before == after) {
			t.Fatalf("diff of %q and %q: %q", before, after, text)
		}
		if text == "" {
			return
		}
		files := sideBySide(text)
		if len(files) != 1 || files[0].Added != adds || files[0].Deleted != dels {
			t.Fatalf("parsed back: %+v, want +%d −%d:\n%s", files, adds, dels, text)
		}
	})
}
