package changedesk

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
)

// These tests are in package changedesk (not changedesk_test) to reach
// FileActuator's hook between making a commit and moving main.

// gitFixture is a project repository for tests: Dir is the repository the
// actuator works on (bare unless made with bare false).
type gitFixture struct {
	t   *testing.T
	Dir string
}

func runGit(t *testing.T, dir string, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_CONFIG_NOSYSTEM=1", "HOME="+os.DevNull,
		"GIT_AUTHOR_NAME=Someone", "GIT_AUTHOR_EMAIL=someone@example.com",
		"GIT_COMMITTER_NAME=Someone", "GIT_COMMITTER_EMAIL=someone@example.com")
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// newGitFixture makes a repository whose main branch holds files (path ->
// content; a content starting with "->" makes a symbolic link to the
// rest, and "#!exec " an executable file).
func newGitFixture(t *testing.T, bare bool, files map[string]string) *gitFixture {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	work := filepath.Join(t.TempDir(), "work")
	runGit(t, "", "", "init", "--quiet", "--initial-branch=main", work)
	for p, content := range files {
		full := filepath.Join(work, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasPrefix(content, "->"):
			if err := os.Symlink(strings.TrimPrefix(content, "->"), full); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(content, "#!exec "):
			if err := os.WriteFile(full, []byte(strings.TrimPrefix(content, "#!exec ")), 0o755); err != nil {
				t.Fatal(err)
			}
		default:
			if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	runGit(t, work, "", "add", "--all")
	runGit(t, work, "", "commit", "--quiet", "--allow-empty", "-m", "initial")
	if !bare {
		return &gitFixture{t: t, Dir: work}
	}
	dir := filepath.Join(t.TempDir(), "project.git")
	runGit(t, "", "", "clone", "--quiet", "--bare", work, dir)
	return &gitFixture{t: t, Dir: dir}
}

func (g *gitFixture) head() string { return runGit(g.t, g.Dir, "", "rev-parse", "refs/heads/main") }

// show returns path at main, and false when it does not exist there.
func (g *gitFixture) show(path string) (string, bool) {
	g.t.Helper()
	cmd := exec.Command("git", "cat-file", "blob", "refs/heads/main:"+path)
	cmd.Dir = g.Dir
	out, err := cmd.Output()
	if err != nil {
		return "", false
	}
	return string(out), true
}

// commitElsewhere commits a write of path to main from a clone and pushes
// it, as a person (or the bug loop) changing the repository would.
func (g *gitFixture) commitElsewhere(path, content string) string {
	g.t.Helper()
	clone := filepath.Join(g.t.TempDir(), "clone")
	runGit(g.t, "", "", "clone", "--quiet", "--branch", "main", g.Dir, clone)
	full := filepath.Join(clone, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
	runGit(g.t, clone, "", "add", "--all")
	runGit(g.t, clone, "", "commit", "--quiet", "-m", "someone else's change to "+path)
	// A non-bare repository has main checked out: update the ref itself.
	head := runGit(g.t, clone, "", "rev-parse", "HEAD")
	runGit(g.t, clone, "", "push", "--quiet", "origin", "+HEAD:refs/heads/signoff-test-incoming")
	old := g.head()
	runGit(g.t, g.Dir, "", "update-ref", "refs/heads/main", head, old)
	return head
}

const testCaseID = "case_01jq4m8v2k0000000000000000"

func testScope() Scope {
	return Scope{WorkspaceID: "ws_test", ProjectID: "prj_test", CaseID: testCaseID}
}

func mustParseTarget(t *testing.T, s string) change.Target {
	t.Helper()
	tg, err := change.ParseTarget(s)
	if err != nil {
		t.Fatalf("ParseTarget(%q): %v", s, err)
	}
	return tg
}

// planFor drafts params against the live state and returns the plan the
// gate would execute.
func planFor(t *testing.T, a Actuator, target string, params string) (change.Plan, Draft) {
	t.Helper()
	tg := mustParseTarget(t, target)
	d, err := a.Draft(context.Background(), testScope(), tg, json.RawMessage(params))
	if err != nil {
		t.Fatalf("Draft(%s, %s): %v", target, params, err)
	}
	return change.Plan{Kind: tg.Kind, Target: target, Params: json.RawMessage(params),
		BeforeStateDigest: d.Before.Digest, AfterStateDigest: d.After, Rollback: d.Rollback,
		HealthCheck: change.HealthCheck{Kind: change.HealthCommand, Command: []string{"true"}, WindowSeconds: 1, IntervalSeconds: 1},
		ExpiresAt:   time.Now().Add(time.Hour).Truncate(time.Second)}, d
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := signoff.ErrorCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

func TestFileRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		bare    bool
		path    string
		params  string
		want    string // content at main after Apply; "" with gone
		gone    bool
		mode    string // git mode after Apply, when set
		initial map[string]string
	}{
		{name: "update", bare: true, path: "VERSION", params: `{"content":"1.3.0\n"}`, want: "1.3.0\n"},
		{name: "update in a working repository", path: "VERSION", params: `{"content":"1.3.0\n"}`, want: "1.3.0\n"},
		{name: "create in a new directory", bare: true, path: "config/new/limits.yaml", params: `{"content":"max: 5\n"}`, want: "max: 5\n"},
		{name: "delete", bare: true, path: "config/app.yaml", params: `{"delete":true}`, gone: true},
		{name: "update keeps the executable bit", bare: true, path: "bin/run.sh", params: `{"content":"#!/bin/sh\necho v2\n"}`, want: "#!/bin/sh\necho v2\n", mode: "100755"},
		{name: "empty content", bare: true, path: "VERSION", params: `{"content":""}`, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			g := newGitFixture(t, tt.bare, map[string]string{
				"VERSION": "1.2.0\n", "config/app.yaml": "debug: false\n", "bin/run.sh": "#!exec #!/bin/sh\necho v1\n", "README": "hello\n",
			})
			a := &FileActuator{Repo: FixedRepo(g.Dir, "main")}
			orig, origExists := g.show(tt.path)
			before, err := a.Read(ctx, testScope(), mustParseTarget(t, "file:"+tt.path))
			if err != nil {
				t.Fatal(err)
			}
			if before.Digest == "" || before.Digest != before.Content || !change.ValidDigest(before.Digest) {
				t.Fatalf("Read state %+v: want Digest == Content, a SHA-256", before)
			}
			plan, d := planFor(t, a, "file:"+tt.path, tt.params)
			if d.Before.Digest != before.Digest {
				t.Fatalf("Draft before %s, Read %s", d.Before.Digest, before.Digest)
			}
			if err := plan.Validate(); err != nil {
				t.Fatalf("the drafted plan does not validate: %v", err)
			}
			wantRollback := `{"delete":true}`
			if origExists {
				b, _ := json.Marshal(map[string]string{"content": orig})
				wantRollback = string(b)
			}
			if string(d.Rollback) != wantRollback {
				t.Fatalf("Rollback %s, want %s", d.Rollback, wantRollback)
			}
			mainBefore := g.head()

			after, err := a.Apply(ctx, testScope(), plan, d.Before)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if after.Digest != d.After {
				t.Fatalf("Apply state %s, Draft promised %s", after.Digest, d.After)
			}
			got, exists := g.show(tt.path)
			if exists == tt.gone || got != tt.want {
				t.Fatalf("after Apply %s = %q (exists %t), want %q (gone %t)", tt.path, got, exists, tt.want, tt.gone)
			}
			head := g.head()
			if parent := runGit(t, g.Dir, "", "rev-parse", head+"^"); parent != mainBefore {
				t.Fatalf("the change commit's parent is %s, want main's old head %s", parent, mainBefore)
			}
			if br := runGit(t, g.Dir, "", "rev-parse", "refs/heads/"+ChangeBranchPrefix+testCaseID); br != head {
				t.Fatalf("branch %s%s at %s, main at %s", ChangeBranchPrefix, testCaseID, br, head)
			}
			meta := runGit(t, g.Dir, "", "log", "-1", "--format=%an <%ae>|%cn|%B", head)
			if !strings.HasPrefix(meta, "Signoff gate <gate@signoff.invalid>|Signoff gate|") || !strings.Contains(meta, testCaseID) {
				t.Fatalf("change commit author, committer and message: %q", meta)
			}
			if tt.mode != "" {
				if m := strings.Fields(runGit(t, g.Dir, "", "ls-tree", head, "--", tt.path)); len(m) == 0 || m[0] != tt.mode {
					t.Fatalf("mode after Apply %v, want %s", m, tt.mode)
				}
			}
			if files := runGit(t, g.Dir, "", "diff", "--name-only", mainBefore, head); files != tt.path {
				t.Fatalf("the change commit touches %q, want only %s", files, tt.path)
			}

			restored, err := a.Restore(ctx, testScope(), plan, after)
			if err != nil {
				t.Fatalf("Restore: %v", err)
			}
			if restored.Content != before.Content || restored.Digest != before.Digest {
				t.Fatalf("restored Content %s, original %s", restored.Content, before.Content)
			}
			if got, exists := g.show(tt.path); got != orig || exists != origExists {
				t.Fatalf("after Restore %s = %q (exists %t), want %q (exists %t)", tt.path, got, exists, orig, origExists)
			}
			if tree, old := runGit(t, g.Dir, "", "rev-parse", "main^{tree}"), runGit(t, g.Dir, "", "rev-parse", mainBefore+"^{tree}"); tree != old {
				t.Fatalf("after Restore main's tree is %s, the original tree %s", tree, old)
			}
		})
	}
}

func TestFileReadState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	big := "a" + strings.Repeat("é", 3000) // 6001 bytes: the preview is cut on a rune boundary
	g := newGitFixture(t, true, map[string]string{"VERSION": "1.2.0\n", "big.txt": big, "bin.dat": "\xff\xfe\x00binary"})
	a := &FileActuator{Repo: FixedRepo(g.Dir, "main")}
	type value struct {
		Exists    bool    `json:"exists"`
		SHA256    string  `json:"sha256"`
		Size      int64   `json:"size"`
		Text      *string `json:"text"`
		Truncated bool    `json:"truncated"`
	}
	tests := []struct {
		path      string
		exists    bool
		size      int64
		text      *string
		truncated bool
	}{
		{path: "VERSION", exists: true, size: 6, text: ptr("1.2.0\n")},
		{path: "missing/file", exists: false},
		{path: "big.txt", exists: true, size: 6001, text: ptr(big[:4095]), truncated: true},
		{path: "bin.dat", exists: true, size: 9},
	}
	for _, tt := range tests {
		st, err := a.Read(ctx, testScope(), mustParseTarget(t, "file:"+tt.path))
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		var v value
		if err := json.Unmarshal(st.Value, &v); err != nil {
			t.Fatalf("%s: value %s: %v", tt.path, st.Value, err)
		}
		if v.Exists != tt.exists || v.Size != tt.size || (v.Text == nil) != (tt.text == nil) || v.Text != nil && *v.Text != *tt.text || v.Truncated != tt.truncated {
			t.Fatalf("%s: value %s", tt.path, st.Value)
		}
		if want, _ := fileDigest(tt.path, tt.exists, v.SHA256); st.Digest != want {
			t.Fatalf("%s: digest %s, want %s", tt.path, st.Digest, want)
		}
	}
	// The same content at another path is another state.
	a1, _ := a.Read(ctx, testScope(), mustParseTarget(t, "file:VERSION"))
	g2 := newGitFixture(t, true, map[string]string{"OTHER": "1.2.0\n"})
	a2, _ := (&FileActuator{Repo: FixedRepo(g2.Dir, "main")}).Read(ctx, testScope(), mustParseTarget(t, "file:OTHER"))
	if a1.Digest == a2.Digest {
		t.Fatal("two paths with the same content have one state digest")
	}
	// A binary file can be read but not changed: its rollback could not
	// carry it.
	_, err := a.Draft(ctx, testScope(), mustParseTarget(t, "file:bin.dat"), json.RawMessage(`{"content":"x"}`))
	wantCode(t, err, signoff.EINVALID)
}

func ptr[T any](v T) *T { return &v }

func TestFileDrift(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("the file changed since the plan", func(t *testing.T) {
		t.Parallel()
		g := newGitFixture(t, true, map[string]string{"VERSION": "1.2.0\n"})
		a := &FileActuator{Repo: FixedRepo(g.Dir, "main")}
		plan, d := planFor(t, a, "file:VERSION", `{"content":"1.3.0\n"}`)
		moved := g.commitElsewhere("VERSION", "1.2.1\n")
		live, err := a.Apply(ctx, testScope(), plan, d.Before)
		wantCode(t, err, signoff.ECONFLICT)
		if g.head() != moved {
			t.Fatalf("main moved to %s, want it left at %s", g.head(), moved)
		}
		if got, _ := g.show("VERSION"); got != "1.2.1\n" {
			t.Fatalf("VERSION %q, want the other change kept", got)
		}
		if live.Digest == d.Before.Digest {
			t.Fatal("the refusal reports the approved state as live")
		}
	})

	t.Run("main moved elsewhere: not drift, the change lands on top", func(t *testing.T) {
		t.Parallel()
		g := newGitFixture(t, true, map[string]string{"VERSION": "1.2.0\n"})
		a := &FileActuator{Repo: FixedRepo(g.Dir, "main")}
		plan, d := planFor(t, a, "file:VERSION", `{"content":"1.3.0\n"}`)
		moved := g.commitElsewhere("NOTES", "unrelated\n")
		if _, err := a.Apply(ctx, testScope(), plan, d.Before); err != nil {
			t.Fatalf("Apply after an unrelated commit: %v", err)
		}
		if parent := runGit(t, g.Dir, "", "rev-parse", "main^"); parent != moved {
			t.Fatalf("the change's parent is %s, want the unrelated commit %s", parent, moved)
		}
		if got, _ := g.show("NOTES"); got != "unrelated\n" {
			t.Fatal("the unrelated commit was lost")
		}
	})

	t.Run("the before state given is not the live one", func(t *testing.T) {
		t.Parallel()
		g := newGitFixture(t, true, map[string]string{"VERSION": "1.2.0\n"})
		a := &FileActuator{Repo: FixedRepo(g.Dir, "main")}
		plan, _ := planFor(t, a, "file:VERSION", `{"content":"1.3.0\n"}`)
		old := g.head()
		_, err := a.Apply(ctx, testScope(), plan, State{Digest: strings.Repeat("0", 64)})
		wantCode(t, err, signoff.ECONFLICT)
		if g.head() != old {
			t.Fatal("main moved on a refused Apply")
		}
	})

	t.Run("restore refuses a file changed after apply", func(t *testing.T) {
		t.Parallel()
		g := newGitFixture(t, true, map[string]string{"VERSION": "1.2.0\n"})
		a := &FileActuator{Repo: FixedRepo(g.Dir, "main")}
		plan, d := planFor(t, a, "file:VERSION", `{"content":"1.3.0\n"}`)
		after, err := a.Apply(ctx, testScope(), plan, d.Before)
		if err != nil {
			t.Fatal(err)
		}
		g.commitElsewhere("VERSION", "1.4.0\n")
		_, err = a.Restore(ctx, testScope(), plan, after)
		wantCode(t, err, signoff.ECONFLICT)
		if got, _ := g.show("VERSION"); got != "1.4.0\n" {
			t.Fatalf("VERSION %q: Restore overwrote a later change", got)
		}
	})
}

func TestFileConcurrentCommitToMain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, bare := range []bool{true, false} {
		t.Run(map[bool]string{true: "bare", false: "working"}[bare], func(t *testing.T) {
			t.Parallel()
			g := newGitFixture(t, bare, map[string]string{"VERSION": "1.2.0\n"})
			a := &FileActuator{Repo: FixedRepo(g.Dir, "main")}
			plan, d := planFor(t, a, "file:VERSION", `{"content":"1.3.0\n"}`)
			var theirs string
			// Someone commits to main after the change's commit is made,
			// before main is moved to it.
			a.beforeSwap = func() { theirs = g.commitElsewhere("NOTES", "landed meanwhile\n") }
			_, err := a.Apply(ctx, testScope(), plan, d.Before)
			wantCode(t, err, signoff.ECONFLICT)
			if g.head() != theirs {
				t.Fatalf("main at %s, want the concurrent commit %s kept", g.head(), theirs)
			}
			if got, _ := g.show("VERSION"); got != "1.2.0\n" {
				t.Fatalf("VERSION %q: the refused change reached main", got)
			}
			// The change's commit stays on its branch, off main.
			br := runGit(t, g.Dir, "", "rev-parse", "refs/heads/"+ChangeBranchPrefix+testCaseID)
			if got := runGit(t, g.Dir, "", "cat-file", "blob", br+":VERSION"); got != "1.3.0" {
				t.Fatalf("the branch holds VERSION %q", got)
			}
			// Retried (the gate re-reads), it applies on top.
			a.beforeSwap = nil
			if _, err := a.Apply(ctx, testScope(), plan, d.Before); err != nil {
				t.Fatalf("Apply again: %v", err)
			}
			if got, _ := g.show("NOTES"); got != "landed meanwhile\n" {
				t.Fatal("the concurrent commit was overwritten")
			}
		})
	}
}

func TestFileSymlinksRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGitFixture(t, true, map[string]string{
		"real.txt":       "secret\n",
		"link.txt":       "->real.txt",
		"dir/inner.txt":  "x\n",
		"dirlink":        "->dir",
		"escape":         "->/etc",
		"nested/up/link": "->../../real.txt",
	})
	a := &FileActuator{Repo: FixedRepo(g.Dir, "main")}
	for _, target := range []string{"file:link.txt", "file:dirlink/inner.txt", "file:dirlink/new.txt", "file:escape/passwd", "file:nested/up/link"} {
		t.Run(target, func(t *testing.T) {
			tg := mustParseTarget(t, target)
			_, err := a.Read(ctx, testScope(), tg)
			wantCode(t, err, signoff.EINVALID)
			_, err = a.Draft(ctx, testScope(), tg, json.RawMessage(`{"content":"pwned\n"}`))
			wantCode(t, err, signoff.EINVALID)
			old := g.head()
			plan := change.Plan{Kind: change.KindFile, Target: target, Params: json.RawMessage(`{"content":"pwned\n"}`)}
			_, err = a.Apply(ctx, testScope(), plan, State{})
			wantCode(t, err, signoff.EINVALID)
			if g.head() != old {
				t.Fatal("main moved")
			}
		})
	}
	// A directory and a path under a file are no files either.
	_, err := a.Read(ctx, testScope(), mustParseTarget(t, "file:dir"))
	wantCode(t, err, signoff.EINVALID)
	_, err = a.Draft(ctx, testScope(), mustParseTarget(t, "file:real.txt/sub"), json.RawMessage(`{"content":"x"}`))
	wantCode(t, err, signoff.EINVALID)
}

func TestFileTargetOutsideRepository(t *testing.T) {
	t.Parallel()
	g := newGitFixture(t, true, map[string]string{"VERSION": "1\n"})
	a := &FileActuator{Repo: FixedRepo(g.Dir, "main")}
	for _, target := range []string{"file:../outside", "file:/etc/passwd", "file:a/../../x", "file:.git/config", "file:sub/.GIT/hooks/pre-commit", "file:./VERSION", "file:", "file:a//b", "file:-rf"} {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			_, err := change.ParseTarget(target)
			wantCode(t, err, signoff.EINVALID)
			// Through the actuator too: a plan naming it, or a Target
			// built by hand around ParseTarget.
			plan := change.Plan{Kind: change.KindFile, Target: target, Params: json.RawMessage(`{"content":"x"}`)}
			_, err = a.Apply(context.Background(), testScope(), plan, State{})
			wantCode(t, err, signoff.EINVALID)
			_, err = a.Read(context.Background(), testScope(), change.Target{Kind: change.KindFile, Name: strings.TrimPrefix(target, "file:")})
			wantCode(t, err, signoff.EINVALID)
		})
	}
}

func TestFileParams(t *testing.T) {
	t.Parallel()
	g := newGitFixture(t, true, map[string]string{"VERSION": "1\n"})
	a := &FileActuator{Repo: FixedRepo(g.Dir, "main")}
	tests := []struct{ name, params string }{
		{"empty object", `{}`},
		{"not an object", `"1.3.0"`},
		{"null", `null`},
		{"content not a string", `{"content":1}`},
		{"delete false", `{"delete":false}`},
		{"both", `{"content":"x","delete":true}`},
		{"other case", `{"Content":"x"}`},
		{"unknown member", `{"content":"x","mode":"100755"}`},
		{"duplicate key", `{"content":"x","content":"y"}`},
		{"too large", `{"content":"` + strings.Repeat("a", MaxFileContent+1) + `"}`},
		{"lone surrogate", `{"content":"\ud800"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := a.Draft(context.Background(), testScope(), mustParseTarget(t, "file:VERSION"), json.RawMessage(tt.params))
			wantCode(t, err, signoff.EINVALID)
			plan := change.Plan{Kind: change.KindFile, Target: "file:VERSION", Params: json.RawMessage(tt.params)}
			_, err = a.Apply(context.Background(), testScope(), plan, State{})
			wantCode(t, err, signoff.EINVALID)
		})
	}
	// At the limit is fine.
	if _, err := a.Draft(context.Background(), testScope(), mustParseTarget(t, "file:VERSION"),
		json.RawMessage(`{"content":"`+strings.Repeat("a", MaxFileContent)+`"}`)); err != nil {
		t.Fatalf("content of exactly %d bytes: %v", MaxFileContent, err)
	}
}

func TestFileApplyNeedsCaseAndRollback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGitFixture(t, true, map[string]string{"VERSION": "1\n"})
	a := &FileActuator{Repo: FixedRepo(g.Dir, "main")}
	plan, d := planFor(t, a, "file:VERSION", `{"content":"2\n"}`)
	sc := testScope()
	sc.CaseID = ""
	_, err := a.Apply(ctx, sc, plan, d.Before)
	wantCode(t, err, signoff.EINVALID)
	sc.CaseID = "case_../../x"
	_, err = a.Apply(ctx, sc, plan, d.Before)
	wantCode(t, err, signoff.EINVALID)
	plan.Rollback = nil
	_, err = a.Restore(ctx, testScope(), plan, d.Before)
	wantCode(t, err, signoff.EINVALID)
	// A no-op change writes no commit.
	old := g.head()
	same, d2 := planFor(t, a, "file:VERSION", `{"content":"1\n"}`)
	if d2.After != d2.Before.Digest {
		t.Fatal("writing the same content promises another state")
	}
	if _, err := a.Apply(ctx, testScope(), same, d2.Before); err != nil || g.head() != old {
		t.Fatalf("no-op Apply: err %v, main %s (was %s)", err, g.head(), old)
	}
}

func TestSettingsRepo(t *testing.T) {
	t.Parallel()
	g := newGitFixture(t, true, map[string]string{"VERSION": "1\n"})
	missing := filepath.Join(t.TempDir(), "clone-here")
	tests := []struct {
		name   string
		set    signoff.RepoSettings
		err    error
		dir    string
		branch string
		code   string
	}{
		{name: "path and default branch", set: signoff.RepoSettings{Path: g.Dir}, dir: g.Dir, branch: "main"},
		{name: "another branch", set: signoff.RepoSettings{Path: g.Dir, MainBranch: "trunk"}, dir: g.Dir, branch: "trunk"},
		{name: "store error", err: signoff.Errorf(signoff.ENOTFOUND, "no settings"), code: signoff.ENOTFOUND},
		{name: "missing without url", set: signoff.RepoSettings{Path: filepath.Join(t.TempDir(), "nope")}, code: signoff.EUNAVAILABLE},
		{name: "cloned from url", set: signoff.RepoSettings{Path: missing, URL: g.Dir}, dir: missing, branch: "main"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := fakeSettings{set: tt.set, err: tt.err}
			pr, err := SettingsRepo(&st)(context.Background(), testScope())
			if tt.code != "" {
				wantCode(t, err, tt.code)
				return
			}
			if err != nil || pr.Dir != tt.dir || pr.Branch != tt.branch {
				t.Fatalf("got %+v, %v; want %s on %s", pr, err, tt.branch, tt.dir)
			}
			if st.by.Role != signoff.RoleSystem || st.by.WorkspaceID != "ws_test" || st.project != "prj_test" {
				t.Fatalf("settings read as %+v for %s, want the server in ws_test for prj_test", st.by, st.project)
			}
		})
	}
	// The clone is usable.
	a := &FileActuator{Repo: SettingsRepo(&fakeSettings{set: signoff.RepoSettings{Path: filepath.Join(t.TempDir(), "c"), URL: g.Dir}})}
	if _, err := a.Read(context.Background(), testScope(), mustParseTarget(t, "file:VERSION")); err != nil {
		t.Fatal(err)
	}
}

type fakeSettings struct {
	set     signoff.RepoSettings
	err     error
	by      signoff.Actor
	project string
}

func (f *fakeSettings) GetRepoSettings(_ context.Context, by signoff.Actor, projectID string) (signoff.RepoSettings, error) {
	f.by, f.project = by, projectID
	return f.set, f.err
}
