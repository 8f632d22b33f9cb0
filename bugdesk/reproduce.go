package bugdesk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/airlock"
	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/verify"
	"github.com/signoff-dev/signoff/workflow"
)

// Limits on what an agent or a person may propose.
const (
	maxFiles     = 20
	maxFileBytes = 256 << 10
	maxPatch     = 1 << 20
	// maxDiff bounds a candidate's diff: it is shown whole on the card
	// and kept in the loop record.
	maxDiff = 512 << 10
)

// FileArg is one file of a proposal, whole.
type FileArg struct {
	Path    string `json:"path" jsonschema:"the path relative to the repository root, slash-separated"`
	Content string `json:"content" jsonschema:"the whole content of the file"`
}

// reproInput is a reproducer task's input.
type reproInput struct {
	CaseID string `json:"case_id"`
	Round  int    `json:"round"`
	Base   string `json:"base"`
	// TestCommand is how the proposed tests are run in the sandbox, so a
	// model knows the language and layout it writes for.
	TestCommand []string     `json:"test_command,omitempty"`
	Subject     reproSubject `json:"subject"`
}

type reproSubject struct {
	Title  string `json:"title"`
	Report string `json:"report"`
	// Signals are the airlock's on the report and answers (reportText).
	Signals []string `json:"signals,omitempty"`
	Notes   []string `json:"reporter_said_not_this,omitempty"`
	// StaffNotes are why members of staff rejected earlier reproductions
	// of the round: what a test must check instead.
	StaffNotes []string `json:"staff_rejected_because,omitempty"`
	Files      []string `json:"files"`
}

// StartReproduction moves a ticketed or reopened bug into reproducing and
// gives the reproducer its task. It is idempotent: a case already
// reproducing only gets a task if it has none open.
func (d *Desk) StartReproduction(ctx context.Context, ws, caseID string) error {
	unlock := d.lock(caseID)
	defer unlock()
	c, l, err := d.loop(ctx, sys(ws), caseID)
	if err != nil {
		return err
	}
	switch c.State {
	case workflow.BugTicketed, workflow.BugReopened:
	case workflow.BugReproducing:
		return d.ensureReproTask(ctx, c, l)
	default:
		return nil // moved on: nothing to do
	}
	p, err := d.project(ctx, ws, c.ProjectID)
	if err != nil {
		return err
	}
	st := l.State
	if st.Round == 0 {
		st.Round = 1
	}
	l, c, err = d.Store.AdvanceLoop(ctx, sys(ws), signoff.LoopUpdate{CaseID: caseID, Version: l.Version, State: st,
		Command: "start_reproduction", MaxFixAttempts: p.Settings.MaxFixAttempts,
		Events: []signoff.LoopEvent{{Type: "reproduction.started", Payload: map[string]any{"round": st.Round}}}})
	if err != nil {
		return fmt.Errorf("start reproduction of %s: %w", caseID, err)
	}
	return d.ensureReproTask(ctx, c, l)
}

func (d *Desk) ensureReproTask(ctx context.Context, c signoff.Case, l signoff.BugLoop) error {
	open, err := d.openTasks(ctx, c, RoleReproducer)
	if err != nil || len(open) > 0 {
		return err
	}
	p, err := d.project(ctx, c.WorkspaceID, c.ProjectID)
	if err != nil {
		return err
	}
	base, err := p.Repo.RevParse(ctx, "refs/heads/"+p.Settings.MainBranch)
	if err != nil {
		return fmt.Errorf("project %s: main branch: %w", p.ID, err)
	}
	report, signals, err := d.reportText(ctx, c)
	if err != nil {
		return err
	}
	files, err := p.Repo.ListFiles(ctx, base)
	if err != nil {
		return err
	}
	in := reproInput{CaseID: c.ID, Round: l.State.Round, Base: base, TestCommand: p.Settings.TestCommand,
		Subject: reproSubject{Title: c.Title, Report: report, Signals: signals, Files: files}}
	for _, h := range l.State.Harnesses {
		if h.Round != l.State.Round || h.Status != signoff.HarnessDisowned {
			continue
		}
		if h.ReporterNote != "" {
			in.Subject.Notes = append(in.Subject.Notes, h.ReporterNote)
		}
		if r := h.StaffReview; r != nil && r.Decision == signoff.HarnessReject && r.Note != "" {
			in.Subject.StaffNotes = append(in.Subject.StaffNotes, r.Note)
		}
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	_, err = d.Store.CreateTask(ctx, sys(c.WorkspaceID), signoff.TaskInput{CaseID: c.ID, Kind: RoleReproducer, Role: signoff.RoleReproducer, Input: raw})
	return err
}

// reportText is the reporter's words as the airlock let them through:
// the report and every later answer, each later answer marked as such.
// Its signals are those the airlock recorded on each text, and those the
// texts raise read together without the markers between them: an
// instruction cut between the report and a later answer is named in the
// agent's prompt (the prompt reads every "signals" array of its input).
func (d *Desk) reportText(ctx context.Context, c signoff.Case) (string, []string, error) {
	reps, err := d.Store.ListReports(ctx, sys(c.WorkspaceID), c.ID)
	if err != nil {
		return "", nil, err
	}
	var parts, bare, signals []string
	for _, r := range reps {
		bare = append(bare, r.Dossier.Text)
		for _, s := range r.Dossier.Signals {
			if !slices.Contains(signals, s) {
				signals = append(signals, s)
			}
		}
		if r.Kind == "answer" {
			parts = append(parts, "The reporter answered later: "+r.Dossier.Text)
			continue
		}
		parts = append(parts, r.Dossier.Text)
	}
	if len(parts) == 0 {
		return c.Title, nil, nil
	}
	return strings.Join(parts, "\n---\n"), airlock.JoinSignals(signals, airlock.DetectTogether(bare...)), nil
}

func (d *Desk) openTasks(ctx context.Context, c signoff.Case, kind string) ([]signoff.Task, error) {
	ts, err := d.Store.ListTasks(ctx, sys(c.WorkspaceID), signoff.TaskFilter{CaseID: c.ID, Status: signoff.TaskOpen, Limit: 50})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(ts, func(t signoff.Task) bool { return t.Kind != kind }), nil
}

// Drive runs the case's open tasks of kind through the runtime, oldest
// first. A role served by an external agent is left for that agent.
func (d *Desk) Drive(ctx context.Context, ws, caseID, kind string) error {
	cfg, err := agent.LoadConfig(ctx, d.Store, ws, d.Tools)
	if err != nil {
		return err
	}
	if rc, ok := cfg.Roles[kind]; ok && rc.Provider == agent.ProviderExternal {
		return nil
	}
	// One run of a case's tasks of a kind at a time in this process: two
	// jobs driving the same case (a reopen's job beside a retried one)
	// would otherwise run the same open task twice at once, and the
	// loser's refused proposal and give_up would hand a case that is
	// doing well to a person.
	unlock := d.lock("drive:" + kind + ":" + caseID)
	defer unlock()
	c, err := d.Store.GetCase(ctx, sys(ws), caseID)
	if err != nil {
		return err
	}
	for range 4 {
		ts, err := d.openTasks(ctx, c, kind)
		if err != nil || len(ts) == 0 {
			return err
		}
		slices.SortFunc(ts, func(a, b signoff.Task) int { return a.CreatedAt.Compare(b.CreatedAt) })
		a, err := d.Store.GetActor(ctx, ws, ts[0].AssigneeID)
		if err != nil {
			return err
		}
		res, err := d.Runtime.Run(ctx, a, ts[0].ID, cfg)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			// The lock above holds in this process only: a run of another
			// process may have finished the task meanwhile (its proposal
			// accepted, or its give-up already sent the case to a person).
			// This run's failure, often a give-up that could not close the
			// task any more, then says nothing about the case.
			if t, gerr := d.Store.GetTask(ctx, sys(ws), ts[0].ID); gerr == nil && t.Status == signoff.TaskClosed {
				d.log().WarnContext(ctx, "agent task finished elsewhere", "case_id", caseID, "task_id", ts[0].ID, "kind", kind, "outcome", t.Outcome, "err", err)
				if t.Outcome == signoff.OutcomeNeedsHuman {
					// What its closer meant (it may have died before saying
					// so); a case already with a person is left as it is.
					return d.giveUp(ctx, ws, caseID, "", fmt.Sprintf("%s task %s ended without a result: %s", kind, t.ID, t.Reason))
				}
				return nil
			}
			// The agent could not run (its provider failed, a fixture
			// ran out): retrying the same task cannot help. Fail closed:
			// the task is closed and the case goes to a person.
			d.log().ErrorContext(ctx, "agent task failed", "case_id", caseID, "task_id", ts[0].ID, "kind", kind, "err", err)
			return d.giveUp(ctx, ws, caseID, ts[0].ID, fmt.Sprintf("%s task %s could not run: %v", kind, ts[0].ID, err))
		}
		d.log().InfoContext(ctx, "task ran", "case_id", caseID, "task_id", ts[0].ID, "kind", kind, "outcome", res.Outcome)
		if res.Outcome == signoff.OutcomeNeedsHuman {
			// The agent gave up, or its turns or budget ran out: the
			// runtime closed its task, and nothing else will move the case.
			// A person takes it, told why.
			return d.giveUp(ctx, ws, caseID, "", fmt.Sprintf("%s task %s ended without a result: %s", kind, ts[0].ID, res.Reason))
		}
	}
	return nil
}

// proposeRepro checks a reproducer's proposal on base in the sandbox and,
// if it fails there with the expected signature, records it and asks the
// reporter. Anything else is refused with the run's result, so the
// reproducer may try again within its turns.
func (d *Desk) proposeRepro(ctx context.Context, env *agent.Env, files []FileArg, failToPass []string, expected string) (agent.Result, error) {
	var in reproInput
	if err := json.Unmarshal(env.Task.Input, &in); err != nil {
		return agent.Result{}, fmt.Errorf("task input: %w", err)
	}
	unlock := d.lock(in.CaseID)
	defer unlock()
	c, l, err := d.loop(ctx, sys(env.Actor.WorkspaceID), in.CaseID)
	if err != nil {
		return agent.Result{}, err
	}
	if c.State != workflow.BugReproducing || in.Round != l.State.Round {
		return agent.Result{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: "the case is not waiting for this reproduction any more"}
	}
	if err := checkFiles(files); err != nil {
		return agent.Result{}, err
	}
	if len(failToPass) == 0 || strings.TrimSpace(expected) == "" {
		return agent.Result{}, signoff.Errorf(signoff.EINVALID, "name the failing test(s) in fail_to_pass and the text of the failure in expected_failure")
	}
	p, err := d.project(ctx, c.WorkspaceID, c.ProjectID)
	if err != nil {
		return agent.Result{}, err
	}
	if err := testFilesOnly(files, p.Settings.HarnessPaths); err != nil {
		return agent.Result{}, err
	}
	// New files only: the frozen test tree restored over every candidate
	// is the reproduction's commit's, so an existing test file rewritten
	// here (keeping only the new test) would drop the base's own tests
	// from every verification, and a fix breaking what they checked would
	// pass.
	for _, f := range files {
		if _, exists, err := p.Repo.Entry(ctx, in.Base, f.Path); err != nil {
			return agent.Result{}, err
		} else if exists {
			return agent.Result{}, signoff.Errorf(signoff.EINVALID, "file %q exists on base %s: a reproduction adds new test files only and never changes existing ones (their tests must keep running); put the test in a new file", f.Path, short(in.Base))
		}
	}
	commit, branch, err := d.commitFiles(ctx, p, in.Base, files, nil, fmt.Sprintf("signoff/%s/repro-%d-%d", c.ID, l.State.Round, len(l.State.Harnesses)+1),
		fmt.Sprintf("repro: %s\n\nProposed by %s (%s evidence) for case %s.", strings.Join(failToPass, ", "), env.Actor.Name, env.Evidence, c.ID), env.Actor)
	if err != nil {
		return agent.Result{}, err
	}
	h := verify.Harness{Base: in.Base, TestsFrom: commit, Command: p.Settings.TestCommand, Format: p.Settings.TestFormat,
		FailToPass: failToPass, ExpectedFailure: expected, TimeoutSeconds: p.Settings.TimeoutSeconds, Runs: p.Settings.Runs}
	for _, f := range files {
		h.TestFiles = append(h.TestFiles, f.Path)
	}
	if err := h.Validate(); err != nil {
		return agent.Result{}, signoff.Errorf(signoff.EINVALID, "harness: %v", err)
	}
	rep, err := verify.Reproduce(ctx, verify.Options{RepoDir: p.Repo.Dir, Harness: h, Runner: d.Sandbox, CacheDir: d.cacheFor(p.ID)})
	if err != nil {
		return agent.Result{}, fmt.Errorf("run the reproduction: %w", err)
	}
	if rep.Verdict != verify.Reproduced {
		// The run's result is the test's own output and the compiler's,
		// which carry the proposer's and the repository's text: it is
		// quoted, never the server's words.
		return agent.Result{}, agent.Refuse(signoff.Errorf(signoff.EINVALID,
			"refused: on base %s the proposal does not reproduce the bug: every fail-to-pass test must fail in every run, with expected_failure in its output. What the run gave is quoted in U1 below (whitespace there is shown as ˆ; write it as spaces): correct the test, or take expected_failure from the failing output there, and propose again.", short(in.Base)),
			"the result of your proposed tests on base", rep.Reason+reproRunOutput(rep, h))
	}
	// Every other test that passed on base in every run must keep passing:
	// the server finds them, so a reproducer cannot leave them out.
	h.PassToPass = passedOnBase(rep, h)
	// Nor can it stop them from running: a new test file can end the test
	// process (os.Exit after its failure) or pick the tests that run
	// (TestMain setting -test.run), and a test that did not run with the
	// harness on base would never be checked on a candidate. Each test
	// that passes on base alone must pass with the proposal too.
	own, err := d.baseOwnPassing(ctx, p, in.Base)
	if err != nil {
		return agent.Result{}, err
	}
	// By package and name: a test of the same name elsewhere (a decoy in
	// a new package) does not stand in for one that stopped.
	with := passedEveryBaseRun(rep, h, true)
	var lost []string
	for _, n := range own {
		if !slices.Contains(with, n) && !slices.Contains(failToPass, n[strings.LastIndex(n, ".")+1:]) {
			lost = append(lost, n)
		}
	}
	if len(lost) > 0 {
		return agent.Result{}, agent.Refuse(signoff.Errorf(signoff.EINVALID,
			"refused: with the proposal on base %s, %d of the base's own passing tests no longer run or pass (named in U1 below): a reproduction adds a failing test and leaves every other test running as it was; do not end the test process, choose which tests run (TestMain, -test.run) or change shared state other tests use, and propose again", short(in.Base), len(lost)),
			"the base's tests that stopped running or passing", strings.Join(lost, ", "))
	}
	tf, err := verify.ReadTestFiles(ctx, p.Repo, h)
	if err != nil {
		return agent.Result{}, err
	}
	digest, err := verify.DigestHarness(h, tf)
	if err != nil {
		return agent.Result{}, err
	}
	spec, err := json.Marshal(h)
	if err != nil {
		return agent.Result{}, err
	}
	now := d.now()
	rec := signoff.HarnessRecord{ID: signoff.NewID(signoff.PrefixHarness), Round: l.State.Round, Status: signoff.HarnessProposed,
		Spec: spec, Digest: digest, Base: in.Base, Commit: commit, Branch: branch, TestFiles: h.TestFiles,
		FailingOutput: repair.FailureWords(rep), ProposedBy: env.Actor.ID, TaskID: env.Task.ID, Evidence: env.Evidence, ProposedAt: now}
	st := l.State
	st.Harnesses = append(st.Harnesses, rec)
	st.AskedAt = &now
	_, _, err = d.Store.AdvanceLoop(ctx, env.Actor, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "propose_reproduction",
		Events: []signoff.LoopEvent{{Type: "reproduction.proposed", Payload: map[string]any{
			"harness_id": rec.ID, "harness_digest": digest, "base": in.Base, "tests_from": commit, "branch": branch,
			"test_files": h.TestFiles, "fail_to_pass": failToPass, "pass_to_pass": h.PassToPass, "expected_failure": expected,
			"evidence": env.Evidence, "run_evidence": signoff.EvidenceLive, "base_run": rep.Reason,
			"sandbox": rep.Environment.Sandbox, "runner_digest": rep.RunnerDigest, "task_id": env.Task.ID}}}})
	if err != nil {
		return agent.Result{}, err
	}
	return agent.Result{Text: fmt.Sprintf("Accepted: %s fail(s) on base with %q. The reporter is now asked whether this is their bug, and a member of staff reviews the test; your task is done.",
		strings.Join(failToPass, ", "), expected), Output: map[string]any{"harness_id": rec.ID, "harness_digest": digest}, Final: true}, nil
}

// Bounds on the run output a refused reproduction quotes back.
const (
	maxQuotedTestOutput  = 2000
	maxQuotedBuildOutput = 3000
)

// reproRunOutput is what the proposer needs to correct a refused
// reproduction: for the first base run that did not reproduce, each
// fail-to-pass test's outcome and output (the text expected_failure must
// be found in), and the build or package failures (a test that does not
// compile never fails for the bug). It is the proposer's own test's
// output, quoted back to it.
func reproRunOutput(rep verify.Report, h verify.Harness) string {
	var b strings.Builder
	for _, s := range rep.Stages {
		if s.Name != verify.StageBase || s.Outcome == verify.Reproduced {
			continue
		}
		fmt.Fprintf(&b, "\n\nBase run %d: %s.", s.Run, s.Outcome)
		for _, t := range s.Tests {
			if t.Kind != verify.FailToPass {
				continue
			}
			fmt.Fprintf(&b, "\n- %s: %s", t.Name, t.Outcome)
			if t.ExpectedSeen != nil && t.Outcome == verify.Fail && !*t.ExpectedSeen {
				fmt.Fprintf(&b, ", and its output does not contain expected_failure %q", h.ExpectedFailure)
			}
			if t.Outcome == verify.Pass {
				b.WriteString(": the test passes on base, so it does not detect the reported bug")
			}
			if out := strings.TrimSpace(t.Output); out != "" {
				fmt.Fprintf(&b, ". Its output:\n%s", clip(out, maxQuotedTestOutput))
			}
		}
		if res, err := verify.Parse(h.Format, bytes.NewReader(s.Stdout)); err == nil {
			for _, f := range res.Failures {
				what := "failed before running tests"
				if f.Build {
					what = "failed to build"
				}
				fmt.Fprintf(&b, "\n- package %s %s", f.Package, what)
				if out := strings.TrimSpace(f.Output); out != "" {
					fmt.Fprintf(&b, ":\n%s", clip(out, maxQuotedBuildOutput))
				}
			}
		}
		break
	}
	return b.String()
}

// clip keeps the first n bytes of s, cut at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "\n[... cut]"
}

// testFilesOnly refuses a reproduction that proposes anything but test
// files. Its files are frozen into the harness and restored over base and
// over every candidate before anything runs, so a production file among
// them (the code under test, a new source file, go.mod) would make the
// verifier run code that is not the candidate's: a real fix of that file
// would be thrown away, and a candidate flipping a switch the pinned file
// added would pass while the code to be merged stayed broken. A test file
// is a path of the frozen test tree (verify.DefaultProtected, or the
// project's harness paths); a Go file among them must also be one the go
// command compiles only for tests (*_test.go) or never (under testdata),
// since it builds every other .go file of a package, whatever its name
// (cart/x.test.go, tests/x.go).
func testFilesOnly(files []FileArg, harnessPaths []string) error {
	for _, f := range files {
		test := slices.ContainsFunc(slices.Concat(verify.DefaultProtected, harnessPaths), func(g string) bool { return verify.MatchGlob(g, f.Path) })
		if test && strings.HasSuffix(f.Path, ".go") {
			test = strings.HasSuffix(f.Path, "_test.go") || slices.Contains(strings.Split(path.Dir(f.Path), "/"), "testdata")
		}
		if !test {
			return signoff.Errorf(signoff.EINVALID, "file %q is not a test file: a reproduction adds or changes test files only (for Go, files ending in _test.go, and test data under testdata/); it never changes the code under test, go.mod or other source files", f.Path)
		}
	}
	return nil
}

func checkFiles(files []FileArg) error {
	if len(files) == 0 || len(files) > maxFiles {
		return signoff.Errorf(signoff.EINVALID, "give 1 to %d files", maxFiles)
	}
	seen := map[string]bool{}
	for _, f := range files {
		if err := verify.CheckPath(f.Path); err != nil {
			return signoff.Errorf(signoff.EINVALID, "file %q: %v", f.Path, err)
		}
		if f.Path == ".git" || strings.HasPrefix(f.Path, ".git/") {
			return signoff.Errorf(signoff.EINVALID, "file %q: not a repository file", f.Path)
		}
		if seen[f.Path] {
			return signoff.Errorf(signoff.EINVALID, "file %q is given twice", f.Path)
		}
		seen[f.Path] = true
		if len(f.Content) > maxFileBytes {
			return signoff.Errorf(signoff.EINVALID, "file %q is larger than %d bytes", f.Path, maxFileBytes)
		}
	}
	return nil
}

// commitFiles writes files (or applies patch) over base in a fresh
// worktree, commits, and points branch at the commit. check, when set, is
// called with the changed paths before the branch is made.
func (d *Desk) commitFiles(ctx context.Context, p project, base string, files []FileArg, patch []byte, branch, msg string, by signoff.Actor, check ...func([]string) error) (string, string, error) {
	unlock := d.lock("repo:" + p.ID)
	defer unlock()
	wt, err := p.Repo.AddWorktree(ctx, base)
	if err != nil {
		return "", "", fmt.Errorf("check out %s: %w", short(base), err)
	}
	defer wt.Close()
	w := &gitx.Repo{Dir: wt.Dir}
	for _, f := range files {
		if err := noSymlinkOnPath(wt.Dir, f.Path); err != nil {
			return "", "", err
		}
		dst := filepath.Join(wt.Dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", "", err
		}
		if err := os.WriteFile(dst, []byte(f.Content), 0o644); err != nil {
			return "", "", err
		}
	}
	if patch != nil {
		if err := w.Apply(ctx, patch); err != nil {
			var ge *gitx.Error
			if errors.As(err, &ge) {
				return "", "", signoff.Errorf(signoff.EINVALID, "the patch does not apply on %s: %s", short(base), strings.TrimSpace(ge.Stderr))
			}
			return "", "", signoff.Errorf(signoff.EINVALID, "the patch does not apply on %s: %v", short(base), err)
		}
	}
	if err := w.AddAll(ctx); err != nil {
		return "", "", err
	}
	if clean, err := w.IsClean(ctx); err == nil && clean {
		return "", "", signoff.Errorf(signoff.EINVALID, "the proposal changes nothing on %s", short(base))
	}
	commit, err := w.Commit(ctx, msg, gitx.Signature{Name: by.Name + " via Signoff", Email: by.ID + "@signoff.invalid", When: d.now()})
	if err != nil {
		return "", "", err
	}
	changed, err := p.Repo.DiffNames(ctx, base, commit)
	if err != nil {
		return "", "", err
	}
	// A proposal never adds or changes a symbolic link: a link in the
	// repository is how a later write would escape the checkout.
	modes, err := p.Repo.Modes(ctx, commit, changed)
	if err != nil {
		return "", "", err
	}
	for path, mode := range modes {
		if mode == "120000" || mode == "160000" {
			return "", "", signoff.Errorf(signoff.EFORBIDDEN, "the proposal makes %s a symbolic link or submodule: proposals change regular files only", path)
		}
	}
	for _, fn := range check {
		if err := fn(changed); err != nil {
			return "", "", err
		}
	}
	// A process that died after creating the branch and before recording
	// the proposal left it behind under the same name: the retry takes the
	// next free name (never moves a branch someone may have recorded), so
	// it is not refused forever.
	name := branch
	for n := 2; ; n++ {
		if _, err := p.Repo.RevParse(ctx, "refs/heads/"+name); err != nil {
			break
		}
		if n > 20 {
			return "", "", fmt.Errorf("branch %s: taken, and so are its next names", branch)
		}
		name = fmt.Sprintf("%s-%d", branch, n)
	}
	if err := p.Repo.CreateBranch(ctx, name, commit); err != nil {
		return "", "", fmt.Errorf("branch %s: %w", name, err)
	}
	return commit, name, nil
}

// baseOwnPassing runs base's own tests in the sandbox, with nothing of
// any proposal, and lists those that passed, by package and name (once
// per project and base in this desk). The run is a reproduction check whose "harness" is a file
// of base itself, so nothing is copied over base.
func (d *Desk) baseOwnPassing(ctx context.Context, p project, base string) ([]string, error) {
	key := p.ID + "@" + base
	d.mu.Lock()
	own, ok := d.ownPassing[key]
	d.mu.Unlock()
	if ok {
		return own, nil
	}
	files, err := p.Repo.ListFiles(ctx, base)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	h := verify.Harness{Base: base, TestsFrom: base, TestFiles: files[:1], Command: p.Settings.TestCommand, Format: p.Settings.TestFormat,
		FailToPass: []string{"(none: the base's own tests)"}, ExpectedFailure: "(none)", TimeoutSeconds: p.Settings.TimeoutSeconds, Runs: 1}
	rep, err := verify.Reproduce(ctx, verify.Options{RepoDir: p.Repo.Dir, Harness: h, Runner: d.Sandbox, CacheDir: d.cacheFor(p.ID)})
	if err != nil {
		return nil, fmt.Errorf("run the base's own tests: %w", err)
	}
	for _, s := range rep.Stages {
		if s.Name == verify.StageBase {
			if _, err := verify.Parse(h.Format, bytes.NewReader(s.Stdout)); err != nil || s.Runner == nil || s.Runner.TimedOut || s.Runner.Killed != "" || s.Runner.Truncated {
				return nil, fmt.Errorf("run the base's own tests: no usable results: %s", s.Detail)
			}
		}
	}
	own = passedEveryBaseRun(rep, h, true)
	d.mu.Lock()
	if d.ownPassing == nil {
		d.ownPassing = map[string][]string{}
	}
	d.ownPassing[key] = own
	d.mu.Unlock()
	return own, nil
}

// passedOnBase lists the tests that passed in every base run, minus the
// fail-to-pass tests: the pass-to-pass set a fix must keep green.
func passedOnBase(rep verify.Report, h verify.Harness) []string {
	return passedEveryBaseRun(rep, h, true)
}

// passedEveryBaseRun is passedOnBase with each test named by its bare
// name, or by package and name when qualified.
func passedEveryBaseRun(rep verify.Report, h verify.Harness, qualified bool) []string {
	var sets []map[string]bool
	bare := map[string]string{}
	for _, s := range rep.Stages {
		if s.Name != verify.StageBase {
			continue
		}
		res, err := verify.Parse(h.Format, bytes.NewReader(s.Stdout))
		if err != nil {
			return []string{}
		}
		ok := map[string]bool{}
		for _, t := range res.Tests {
			if t.Outcome == verify.Pass && !strings.Contains(t.Name, "/") {
				key := t.Name
				if qualified && t.Package != "" {
					key = t.Package + "." + t.Name
				}
				ok[key], bare[key] = true, t.Name
			}
		}
		sets = append(sets, ok)
	}
	out := []string{}
	if len(sets) == 0 {
		return out
	}
	for n := range sets[0] {
		all := !slices.Contains(h.FailToPass, bare[n])
		for _, s := range sets[1:] {
			all = all && s[n]
		}
		if all {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// giveUp closes a task that cannot run and hands the case to a person.
func (d *Desk) giveUp(ctx context.Context, ws, caseID, taskID, why string) error {
	if len(why) > 3000 {
		why = why[:3000]
	}
	if taskID != "" {
		if _, err := d.Store.CloseTask(ctx, sys(ws), taskID, signoff.OutcomeNeedsHuman, why); err != nil {
			d.log().ErrorContext(ctx, "close task", "task_id", taskID, "err", err)
		}
	}
	_, _, err := d.Store.TransitionCase(ctx, sys(ws), caseID, signoff.TransitionInput{Command: "escalate", Note: why})
	if signoff.ErrorCode(err) == signoff.ECONFLICT {
		return nil // moved on meanwhile
	}
	return err
}

// noSymlinkOnPath refuses a file path that passes through, or ends at, a
// symbolic link in the checkout: writing there would land outside it.
func noSymlinkOnPath(root, rel string) error {
	cur := root
	for _, part := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // nothing further exists yet: it is created as plain directories and files
		}
		if err != nil {
			return err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return signoff.Errorf(signoff.EFORBIDDEN, "%s passes through the symbolic link %s: proposals write regular files only", rel, strings.TrimPrefix(cur, root+string(filepath.Separator)))
		}
	}
	return nil
}
