package changedesk

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/gitx"
)

// ProjectRepo is where a project's repository lives: Signoff's working
// repository (bare or not) and the branch changes land on.
type ProjectRepo struct {
	Dir    string
	Branch string
}

// RepoFunc finds the repository of sc's project. SettingsRepo reads it
// from the store; tests pass FixedRepo.
type RepoFunc func(ctx context.Context, sc Scope) (ProjectRepo, error)

// RepoSettingsReader is the part of the store the repository actuators
// need (signoff.BugLoopService has it).
type RepoSettingsReader interface {
	GetRepoSettings(ctx context.Context, by signoff.Actor, projectID string) (signoff.RepoSettings, error)
}

// SettingsRepo finds a project's repository in its repository settings,
// read as the server (signoff.SystemActor). A repository not yet cloned is
// cloned from the settings' URL, as the bug loop does; without a URL it is
// EUNAVAILABLE.
func SettingsRepo(s RepoSettingsReader) RepoFunc {
	return func(ctx context.Context, sc Scope) (ProjectRepo, error) {
		set, err := s.GetRepoSettings(ctx, signoff.SystemActor(sc.WorkspaceID), sc.ProjectID)
		if err != nil {
			return ProjectRepo{}, fmt.Errorf("project %s repository settings: %w", sc.ProjectID, err)
		}
		set = set.WithDefaults()
		if set.Path == "" {
			return ProjectRepo{}, signoff.Errorf(signoff.EUNAVAILABLE, "project %s has no repository path", sc.ProjectID)
		}
		if _, err := os.Stat(set.Path); err != nil {
			if set.URL == "" {
				return ProjectRepo{}, signoff.Errorf(signoff.EUNAVAILABLE, "project %s: repository %s does not exist", sc.ProjectID, set.Path)
			}
			unlock := lockRepoDir("clone:" + set.Path)
			defer unlock()
			if _, err := os.Stat(set.Path); err != nil {
				if _, err := gitx.Clone(ctx, set.URL, set.Path); err != nil {
					return ProjectRepo{}, fmt.Errorf("project %s: clone %s: %w", sc.ProjectID, set.URL, err)
				}
			}
		}
		return ProjectRepo{Dir: set.Path, Branch: set.MainBranch}, nil
	}
}

// FixedRepo is always the repository at dir, changing branch (default
// "main").
func FixedRepo(dir, branch string) RepoFunc {
	if branch == "" {
		branch = signoff.DefaultMainBranch
	}
	return func(context.Context, Scope) (ProjectRepo, error) {
		return ProjectRepo{Dir: dir, Branch: branch}, nil
	}
}

// Bounds of a file change.
const (
	// MaxFileContent bounds the content a file plan writes, and so the
	// files it may change at all: the rollback carries the old content.
	MaxFileContent = 256 << 10
	// fileTextPreview is how much of a file State.Value shows.
	fileTextPreview = 4 << 10
)

// Who commits the desk's file changes.
const (
	gateName  = "Signoff gate"
	gateEmail = "gate@signoff.invalid"
)

// ChangeBranchPrefix names the branch each file change is pushed to before
// main moves to it: ChangeBranchPrefix + case id.
const ChangeBranchPrefix = "signoff/change/"

// FileActuator changes one file of the project's repository ("file:<path>")
// on its main branch, without a checkout: the new content is written as a
// blob, committed on top of main's head with a temporary index, pushed to
// ChangeBranchPrefix+<case id> and published by moving main with a
// compare-and-swap, so a commit that lands on main meanwhile makes the
// change fail rather than be overwritten.
//
// Params (and a rollback) are {"content": "<the whole new text>"} or
// {"delete": true}. Content is UTF-8 text of at most MaxFileContent bytes;
// a file that is not such text, a symbolic link, a path under a symbolic
// link, a directory or a submodule cannot be changed.
//
// The state digest (State.Digest and State.Content, which are equal) is
// the canonical digest of {kind: "file", path, exists, sha256}: the file's
// content only, so a commit elsewhere in the repository is not drift.
type FileActuator struct {
	Repo RepoFunc
	// Now dates the commits (default time.Now).
	Now func() time.Time

	// beforeSwap, when set, runs between making the commit and moving
	// main (tests race a commit to main there).
	beforeSwap func()
}

var _ Actuator = (*FileActuator)(nil)

// Kind is change.KindFile.
func (a *FileActuator) Kind() string { return change.KindFile }

// Read returns the file at the head of the main branch; a missing file is
// a state too (exists false). Returns EINVALID for a path that is a
// symbolic link, lies under one, or is not a regular file.
func (a *FileActuator) Read(ctx context.Context, sc Scope, t change.Target) (State, error) {
	path, err := filePath(t)
	if err != nil {
		return State{}, err
	}
	g, pr, err := a.open(ctx, sc)
	if err != nil {
		return State{}, err
	}
	head, err := branchHead(ctx, g, pr)
	if err != nil {
		return State{}, err
	}
	f, err := readRepoFile(ctx, g, head, path)
	if err != nil {
		return State{}, err
	}
	return f.state()
}

// Draft reads the live state and predicts the state params leave, with
// the rollback that puts the current content back ({"delete": true} for a
// file that does not exist yet). Returns EINVALID for params of another
// shape and for a file whose content a rollback cannot carry (not UTF-8,
// or over MaxFileContent).
func (a *FileActuator) Draft(ctx context.Context, sc Scope, t change.Target, params json.RawMessage) (Draft, error) {
	path, err := filePath(t)
	if err != nil {
		return Draft{}, err
	}
	edit, err := parseFileEdit("params", params)
	if err != nil {
		return Draft{}, err
	}
	g, pr, err := a.open(ctx, sc)
	if err != nil {
		return Draft{}, err
	}
	head, err := branchHead(ctx, g, pr)
	if err != nil {
		return Draft{}, err
	}
	f, err := readRepoFile(ctx, g, head, path)
	if err != nil {
		return Draft{}, err
	}
	if f.blocked != "" && !edit.delete {
		return Draft{}, signoff.Errorf(signoff.EINVALID, "file %s cannot be created: %s", path, f.blocked)
	}
	before, err := f.state()
	if err != nil {
		return Draft{}, err
	}
	after, err := edit.digest(path)
	if err != nil {
		return Draft{}, err
	}
	var rollback any = map[string]bool{"delete": true}
	if f.exists {
		switch {
		case f.size > MaxFileContent:
			return Draft{}, signoff.Errorf(signoff.EINVALID, "file %s is %d bytes, over the %d a change may replace (its rollback must carry it)", path, f.size, MaxFileContent)
		case !utf8.Valid(f.content):
			return Draft{}, signoff.Errorf(signoff.EINVALID, "file %s is not UTF-8 text: a rollback cannot carry it", path)
		}
		rollback = map[string]string{"content": string(f.content)}
	}
	rb, err := canonical.Marshal(rollback)
	if err != nil {
		return Draft{}, fmt.Errorf("file %s rollback: %w", path, err)
	}
	return Draft{Before: before, After: after, Rollback: rb}, nil
}

// Apply writes p.Params if the file is still in state before and returns
// the state after. Returns ECONFLICT, writing nothing to main, when the
// file is no longer in before or main moved while the commit was made.
// Needs sc.CaseID (the commit message and the branch name carry it).
func (a *FileActuator) Apply(ctx context.Context, sc Scope, p change.Plan, before State) (State, error) {
	path, err := planFilePath(p)
	if err != nil {
		return State{}, err
	}
	edit, err := parseFileEdit("params", p.Params)
	if err != nil {
		return State{}, err
	}
	return a.write(ctx, sc, path, edit, before.Digest, "change")
}

// Restore writes p.Rollback over a file in state current (the state after
// Apply, or a later one for a compensating rollback) and returns the state
// after; its Content equals the original before-state's Content. Returns
// EINVALID when the plan has no rollback, ECONFLICT as Apply does.
func (a *FileActuator) Restore(ctx context.Context, sc Scope, p change.Plan, current State) (State, error) {
	path, err := planFilePath(p)
	if err != nil {
		return State{}, err
	}
	if isNullJSON(p.Rollback) {
		return State{}, signoff.Errorf(signoff.EINVALID, "the plan for %s has no rollback", p.Target)
	}
	edit, err := parseFileEdit("rollback", p.Rollback)
	if err != nil {
		return State{}, err
	}
	return a.write(ctx, sc, path, edit, current.Digest, "restore")
}

// write commits edit on main's head if the file's state digest there is
// want, and moves main to the commit only if main is still at that head.
func (a *FileActuator) write(ctx context.Context, sc Scope, path string, edit fileEdit, want, verb string) (State, error) {
	if !signoff.ValidID(signoff.PrefixCase, sc.CaseID) {
		return State{}, signoff.Errorf(signoff.EINVALID, "writing %s needs the acting change case id, not %q", path, sc.CaseID)
	}
	g, pr, err := a.open(ctx, sc)
	if err != nil {
		return State{}, err
	}
	// Writers of one repository in this process take turns, so two changes
	// to different files do not fail each other's compare-and-swap; other
	// writers (the bug loop's merges, people) are caught by it.
	unlock := lockRepoDir("write:" + pr.Dir)
	defer unlock()
	head, err := branchHead(ctx, g, pr)
	if err != nil {
		return State{}, err
	}
	cur, err := readRepoFile(ctx, g, head, path)
	if err != nil {
		return State{}, err
	}
	live, err := cur.state()
	if err != nil {
		return State{}, err
	}
	if live.Digest != want {
		return live, signoff.Errorf(signoff.ECONFLICT, "file %s is no longer in the expected state (live %s, expected %s): nothing was written",
			path, shortDigest(live.Digest), shortDigest(want))
	}
	if cur.blocked != "" && !edit.delete {
		return live, signoff.Errorf(signoff.EINVALID, "file %s cannot be created: %s", path, cur.blocked)
	}
	if edit.delete && !cur.exists || !edit.delete && cur.exists && bytes.Equal(edit.content, cur.content) {
		return live, nil // already in the state the edit asks for: no empty commit
	}
	te := gitx.TreeEdit{Path: path}
	if !edit.delete {
		if te.ID, err = g.WriteBlob(ctx, edit.content); err != nil {
			return live, fmt.Errorf("file %s: store the new content: %w", path, err)
		}
		te.Mode = gitx.ModeFile
		if cur.exists {
			te.Mode = cur.mode // keep an executable bit
		}
	}
	what := "update"
	switch {
	case edit.delete:
		what = "delete"
	case !cur.exists:
		what = "create"
	}
	msg := fmt.Sprintf("signoff: %s %s (%s of case %s)\n\nWritten by the Signoff change gate for change case %s.\nBefore: %s\n",
		what, path, verb, sc.CaseID, sc.CaseID, live.Digest)
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	commit, err := g.CommitEdits(ctx, head, []gitx.TreeEdit{te}, msg, gitx.Signature{Name: gateName, Email: gateEmail, When: now()})
	if err != nil {
		return live, fmt.Errorf("file %s: commit: %w", path, err)
	}
	branch := ChangeBranchPrefix + sc.CaseID
	if err := g.SetBranch(ctx, branch, commit, "signoff "+verb+" "+sc.CaseID); err != nil {
		return live, fmt.Errorf("file %s: push %s: %w", path, branch, err)
	}
	if a.beforeSwap != nil {
		a.beforeSwap()
	}
	if err := g.UpdateRef(ctx, "refs/heads/"+pr.Branch, commit, head); err != nil {
		if errors.Is(err, gitx.ErrConflict) {
			return live, signoff.Errorf(signoff.ECONFLICT, "branch %s moved while %s was being written: nothing was overwritten (the commit %s stays on %s)",
				pr.Branch, path, shortDigest(commit), branch)
		}
		return live, fmt.Errorf("file %s: move %s: %w", path, pr.Branch, err)
	}
	after, err := readRepoFile(ctx, g, commit, path)
	if err != nil {
		return State{}, fmt.Errorf("file %s: read back %s: %w", path, shortDigest(commit), err)
	}
	return after.state()
}

func (a *FileActuator) open(ctx context.Context, sc Scope) (*gitx.Repo, ProjectRepo, error) {
	return openProjectRepo(ctx, a.Repo, sc)
}

func openProjectRepo(ctx context.Context, fn RepoFunc, sc Scope) (*gitx.Repo, ProjectRepo, error) {
	if fn == nil {
		return nil, ProjectRepo{}, signoff.Errorf(signoff.EUNAVAILABLE, "no project repository is configured for the change desk")
	}
	pr, err := fn(ctx, sc)
	if err != nil {
		return nil, ProjectRepo{}, err
	}
	if pr.Dir == "" {
		return nil, ProjectRepo{}, signoff.Errorf(signoff.EUNAVAILABLE, "project %s has no repository", sc.ProjectID)
	}
	if pr.Branch == "" {
		pr.Branch = signoff.DefaultMainBranch
	}
	return &gitx.Repo{Dir: pr.Dir}, pr, nil
}

// branchHead resolves the main branch to a commit id; everything after
// reads that commit, so one operation sees one tree.
func branchHead(ctx context.Context, g *gitx.Repo, pr ProjectRepo) (string, error) {
	head, err := g.RevParse(ctx, "refs/heads/"+pr.Branch+"^{commit}")
	if err != nil || head == "" {
		return "", signoff.Errorf(signoff.EUNAVAILABLE, "branch %s of repository %s cannot be read: %v", pr.Branch, pr.Dir, err)
	}
	return head, nil
}

// filePath checks that t is a well-formed file target (in its one
// spelling, so a Target built by hand cannot climb out of the repository).
func filePath(t change.Target) (string, error) {
	if t.Kind != change.KindFile {
		return "", signoff.Errorf(signoff.EINVALID, "the file actuator does not change %s targets", t.Kind)
	}
	if pt, err := change.ParseTarget(t.String()); err != nil {
		return "", err
	} else if pt != t {
		return "", signoff.Errorf(signoff.EINVALID, "target %s is not in its canonical form", t)
	}
	return t.Name, nil
}

func planFilePath(p change.Plan) (string, error) {
	t, err := change.ParseTarget(p.Target)
	if err != nil {
		return "", err
	}
	if p.Kind != t.Kind {
		return "", signoff.Errorf(signoff.EINVALID, "plan kind %q does not match target %s", p.Kind, p.Target)
	}
	return filePath(t)
}

// repoFile is a path as one commit has it.
type repoFile struct {
	path    string
	exists  bool
	mode    string
	size    int64
	sum     string // hex SHA-256 of the whole content
	content []byte // the content, or its first MaxFileContent+1 bytes
	// blocked says why the path cannot be created (a parent is a file).
	blocked string
}

// readRepoFile reads path at commit without following symbolic links: a
// link at the path or at any parent directory is EINVALID, as is a
// directory or a submodule at the path.
func readRepoFile(ctx context.Context, g *gitx.Repo, commit, path string) (repoFile, error) {
	f := repoFile{path: path}
	segs := strings.Split(path, "/")
	for i := 1; i < len(segs); i++ {
		parent := strings.Join(segs[:i], "/")
		e, ok, err := g.Entry(ctx, commit, parent)
		if err != nil {
			return f, fmt.Errorf("read %s: %w", parent, err)
		}
		switch {
		case !ok:
			return f, nil // nothing further down exists
		case e.Mode == gitx.ModeSymlink:
			return f, signoff.Errorf(signoff.EINVALID, "%s: %s is a symbolic link; the change desk does not follow links", path, parent)
		case e.Mode != gitx.ModeTree:
			f.blocked = parent + " is not a directory"
			return f, nil
		}
	}
	e, ok, err := g.Entry(ctx, commit, path)
	if err != nil {
		return f, fmt.Errorf("read %s: %w", path, err)
	}
	if !ok {
		return f, nil
	}
	switch e.Mode {
	case gitx.ModeFile, gitx.ModeExecutable:
	case gitx.ModeSymlink:
		return f, signoff.Errorf(signoff.EINVALID, "%s is a symbolic link; the change desk does not follow links", path)
	case gitx.ModeTree:
		return f, signoff.Errorf(signoff.EINVALID, "%s is a directory, not a file", path)
	default:
		return f, signoff.Errorf(signoff.EINVALID, "%s is not a regular file (mode %s)", path, e.Mode)
	}
	w := &headHasher{h: sha256.New(), max: MaxFileContent + 1}
	if err := g.ReadBlob(ctx, e.ID, w); err != nil {
		return f, fmt.Errorf("read %s: %w", path, err)
	}
	f.exists, f.mode, f.size = true, e.Mode, w.n
	f.sum = hex.EncodeToString(w.h.Sum(nil))
	f.content = w.head
	return f, nil
}

// headHasher hashes everything written to it and keeps the first max
// bytes.
type headHasher struct {
	h    hash.Hash
	head []byte
	max  int
	n    int64
}

func (w *headHasher) Write(p []byte) (int, error) {
	w.h.Write(p)
	w.n += int64(len(p))
	if room := w.max - len(w.head); room > 0 {
		w.head = append(w.head, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// fileStateDoc is what a file's state digest covers.
type fileStateDoc struct {
	Kind   string `json:"kind"`
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
	SHA256 string `json:"sha256"`
}

func fileDigest(path string, exists bool, sum string) (string, error) {
	d, err := canonical.Digest(fileStateDoc{Kind: change.KindFile, Path: path, Exists: exists, SHA256: sum})
	if err != nil {
		return "", fmt.Errorf("file %s state digest: %w", path, err)
	}
	return d, nil
}

// fileValue is State.Value of a file: for people, not trusted.
type fileValue struct {
	Exists bool   `json:"exists"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// Text is the first 4 KiB when the file reads as UTF-8 text.
	Text      *string `json:"text,omitempty"`
	Truncated bool    `json:"truncated,omitempty"`
}

func (f repoFile) state() (State, error) {
	d, err := fileDigest(f.path, f.exists, f.sum)
	if err != nil {
		return State{}, err
	}
	v := fileValue{Exists: f.exists, SHA256: f.sum, Size: f.size}
	if f.exists {
		text, truncated := f.content, int64(len(f.content)) < f.size
		if len(text) > fileTextPreview {
			text, truncated = text[:fileTextPreview], true
		}
		if truncated {
			// Cut at a rune boundary: a rune split by the cut is not
			// invalid text.
			for i := 0; i < utf8.UTFMax && len(text) > 0 && !utf8.Valid(text); i++ {
				text = text[:len(text)-1]
			}
		}
		if utf8.Valid(text) {
			s := string(text)
			v.Text, v.Truncated = &s, truncated
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return State{}, err
	}
	return State{Digest: d, Content: d, Value: b}, nil
}

// fileEdit is a file plan's params or rollback.
type fileEdit struct {
	delete  bool
	content []byte
}

// digest is the state digest a file has once edit is written.
func (e fileEdit) digest(path string) (string, error) {
	if e.delete {
		return fileDigest(path, false, "")
	}
	sum := sha256.Sum256(e.content)
	return fileDigest(path, true, hex.EncodeToString(sum[:]))
}

// parseFileEdit reads {"content": "..."} or {"delete": true} strictly:
// exactly one member, spelled exactly, nothing else.
func parseFileEdit(what string, raw json.RawMessage) (fileEdit, error) {
	m, err := strictObject(what, raw)
	if err != nil {
		return fileEdit{}, err
	}
	if len(m) != 1 {
		return fileEdit{}, signoff.Errorf(signoff.EINVALID, `%s of a file change must be {"content": "<the whole new text>"} or {"delete": true}`, what)
	}
	if v, ok := m["delete"]; ok {
		if string(bytes.TrimSpace(v)) != "true" {
			return fileEdit{}, signoff.Errorf(signoff.EINVALID, `%s.delete must be true; to write the file give {"content": ...}`, what)
		}
		return fileEdit{delete: true}, nil
	}
	v, ok := m["content"]
	if !ok {
		return fileEdit{}, signoff.Errorf(signoff.EINVALID, `%s of a file change must be {"content": "<the whole new text>"} or {"delete": true}`, what)
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return fileEdit{}, signoff.Errorf(signoff.EINVALID, "%s.content must be a string (the whole new text of the file)", what)
	}
	if len(s) > MaxFileContent {
		return fileEdit{}, signoff.Errorf(signoff.EINVALID, "%s.content is %d bytes, over the limit of %d", what, len(s), MaxFileContent)
	}
	return fileEdit{content: []byte(s)}, nil
}

// strictObject decodes a JSON object that canonicalizes (no duplicate
// keys, valid UTF-8).
func strictObject(what string, raw json.RawMessage) (map[string]json.RawMessage, error) {
	if _, err := canonical.Transform(raw); err != nil {
		return nil, signoff.Errorf(signoff.EINVALID, "%s: %v", what, err)
	}
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || b[0] != '{' {
		return nil, signoff.Errorf(signoff.EINVALID, "%s must be a JSON object", what)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, signoff.Errorf(signoff.EINVALID, "%s: %v", what, err)
	}
	return m, nil
}

func isNullJSON(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	return len(b) == 0 || string(b) == "null"
}

func shortDigest(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// repoDirLocks serializes this process's writes (and clones) of one
// repository.
var repoDirLocks sync.Map // key -> *sync.Mutex

func lockRepoDir(key string) func() {
	m, _ := repoDirLocks.LoadOrStore(key, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}
