package web

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestSideBySide(t *testing.T) {
	t.Parallel()
	type want struct {
		name           string
		added, deleted int
		kinds          string // the rows' kinds, first letters, all hunks
	}
	cases := []struct {
		name string
		diff string
		want []want
	}{
		{"change pairs a deleted line with the added one", `diff --git a/x.go b/x.go
index 1..2 100644
--- a/x.go
+++ b/x.go
@@ -1,3 +1,3 @@
 a
-b
+B
 c
`, []want{{"x.go", 1, 1, "scs"}}},
		{"more deletions than additions", `diff --git a/x b/x
--- a/x
+++ b/x
@@ -1,3 +1,1 @@
-a
-b
+A
-c
`, []want{{"x", 1, 3, "cdd"}}},
		{"a deleted line that reads like a file header is content", `diff --git a/q.sql b/q.sql
--- a/q.sql
+++ b/q.sql
@@ -1,2 +1,1 @@
--- a comment
 select 1;
diff --git a/y b/y
--- a/y
+++ b/y
@@ -0,0 +1 @@
+new
`, []want{{"q.sql", 0, 1, "ds"}, {"y", 1, 0, "a"}}},
		{"new and deleted files, no newline note", `diff --git a/n b/n
new file mode 100644
--- /dev/null
+++ b/n
@@ -0,0 +1,2 @@
+one
+two
\ No newline at end of file
diff --git a/gone b/gone
deleted file mode 100644
--- a/gone
+++ /dev/null
@@ -1 +0,0 @@
-bye
`, []want{{"n", 2, 0, "aan"}, {"gone", 0, 1, "d"}}},
		{"rename without hunks keeps its header lines", `diff --git a/old b/new
similarity index 100%
rename from old
rename to new
`, []want{{"old → new", 0, 0, ""}}},
		{"binary file", `diff --git a/img.png b/img.png
Binary files a/img.png and b/img.png differ
`, []want{{"img.png", 0, 0, ""}}},
		{"plain unified diff without git lines", `--- a/p
+++ b/p
@@ -1 +1 @@
-x
+y
--- a/q
+++ b/q
@@ -1 +1,2 @@
 z
+w
`, []want{{"p", 1, 1, "c"}, {"q", 1, 0, "sa"}}},
		{"empty", "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			files := sideBySide(tc.diff)
			if len(files) != len(tc.want) {
				t.Fatalf("%d files, want %d: %+v", len(files), len(tc.want), files)
			}
			for i, w := range tc.want {
				f := files[i]
				var kinds strings.Builder
				for _, h := range f.Hunks {
					for _, r := range h.Rows {
						kinds.WriteByte(r.Kind[0])
					}
				}
				if f.Name() != w.name || f.Added != w.added || f.Deleted != w.deleted || kinds.String() != w.kinds {
					t.Errorf("file %d = %q +%d -%d rows %q, want %q +%d -%d rows %q", i, f.Name(), f.Added, f.Deleted, kinds.String(), w.name, w.added, w.deleted, w.kinds)
				}
			}
		})
	}
}

func TestSideBySideLineNumbers(t *testing.T) {
	t.Parallel()
	files := sideBySide("--- a/x\n+++ b/x\n@@ -10,3 +20,4 @@\n ctx\n-old\n+new\n+more\n tail\n")
	var got []diffRow
	for _, h := range files[0].Hunks {
		got = append(got, h.Rows...)
	}
	want := []diffRow{
		{Kind: "same", LeftNo: 10, RightNo: 20, Left: "ctx", Right: "ctx"},
		{Kind: "change", LeftNo: 11, RightNo: 21, Left: "old", Right: "new"},
		{Kind: "add", RightNo: 22, Right: "more"},
		{Kind: "same", LeftNo: 12, RightNo: 23, Left: "tail", Right: "tail"},
	}
	if len(got) != len(want) {
		t.Fatalf("rows %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestSideBySideRealGit parses what git itself prints and checks every
// file's counts against git's own --numstat.
func TestSideBySideRealGit(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q")
	var long strings.Builder
	for i := range 200 {
		long.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	write("long.txt", long.String())
	write("sql.sql", "-- header\nselect 1;\n-- footer\n")
	write("gone.txt", "bye\n")
	git("add", ".")
	git("commit", "-qm", "base")
	write("long.txt", strings.Replace(strings.Replace(long.String(), "line 5\n", "line five\n-- dashes\n", 1), "line 150\n", "", 1))
	write("sql.sql", "select 1;\n")
	write("new.txt", "a\nb")
	if err := os.Remove(filepath.Join(dir, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	diff := git("diff", "--cached")
	numstat := git("diff", "--cached", "--numstat")
	files := sideBySide(diff)
	byName := map[string]diffFile{}
	for _, f := range files {
		byName[f.Name()] = f
	}
	lines := strings.Split(strings.TrimSpace(numstat), "\n")
	if len(files) != len(lines) {
		t.Fatalf("%d files parsed, git says %d:\n%s", len(files), len(lines), numstat)
	}
	for _, l := range lines {
		fs := strings.Fields(l)
		f, ok := byName[fs[2]]
		if !ok {
			t.Fatalf("git names %s, parsed %v", fs[2], byName)
		}
		if strconv.Itoa(f.Added) != fs[0] || strconv.Itoa(f.Deleted) != fs[1] {
			t.Errorf("%s: +%d -%d, git says +%s -%s", fs[2], f.Added, f.Deleted, fs[0], fs[1])
		}
	}
}

func FuzzSideBySide(f *testing.F) {
	f.Add("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n")
	f.Add("@@ -1 +1 @@\n-\n+\n\\ No newline\n--- a/y\n@@ x @@\n")
	f.Fuzz(func(t *testing.T, diff string) {
		files := sideBySide(diff)
		rows := 0
		for _, fl := range files {
			adds, dels := 0, 0
			for _, h := range fl.Hunks {
				for _, r := range h.Rows {
					rows++
					switch r.Kind {
					case "change":
						adds++
						dels++
					case "add":
						adds++
					case "del":
						dels++
					case "same", "note":
					default:
						t.Fatalf("row kind %q", r.Kind)
					}
				}
			}
			if adds != fl.Added || dels != fl.Deleted {
				t.Fatalf("rows show +%d -%d, file counts +%d -%d", adds, dels, fl.Added, fl.Deleted)
			}
		}
		if rows > 2*maxDiffRows {
			t.Fatalf("%d rows", rows)
		}
	})
}

// TestSideBySideBounded: however the lines are shaped (content, notes,
// headers), the view reads at most maxDiffRows of them and says so.
func TestSideBySideBounded(t *testing.T) {
	t.Parallel()
	for name, line := range map[string]string{
		"content": "+x\n", "notes after an empty hunk": "note\n", "hunk headers": "@@ -1 +1 @@\n",
	} {
		diff := "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,0 +1,0 @@\n" + strings.Repeat(line, 3*maxDiffRows)
		files := sideBySide(diff)
		n := 0
		for _, f := range files {
			n += len(f.Notes) + len(f.Hunks)
			for _, h := range f.Hunks {
				n += len(h.Rows)
			}
		}
		if n > maxDiffRows+2 {
			t.Errorf("%s: %d rows, notes and hunks from %d lines", name, n, 3*maxDiffRows)
		}
		last := files[len(files)-1]
		if !strings.Contains(last.Notes[len(last.Notes)-1], "stops after") {
			t.Errorf("%s: the cut is not said", name)
		}
	}
}
