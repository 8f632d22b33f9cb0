package bugdesk

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/verify"
	"github.com/signoff-dev/signoff/workflow"
)

// shopCase is a ShopLite bug waiting for its verification: a case in
// verifying, the coupon harness frozen, the genuine fix submitted as a
// candidate and its VerifyJob enqueued, in a SQLite file that several
// stores (standing in for several processes) open.
type shopCase struct {
	path                string // the SQLite file
	key                 ed25519.PrivateKey
	ws, project, caseID string
	cand                signoff.Candidate
	version             int64 // the loop's, once the candidate is submitted
	runner              sandbox.Runner
	cache               string // the desks' CacheDir
	repo                string
	harness             verify.Harness
	sample              *shoplite.Sample
	h                   signoff.HarnessRecord // the frozen harness
	op                  signoff.Actor         // an operator
}

// newShopCase writes ShopLite and brings a case to verifying, with a
// harness whose runs time out after timeout seconds. It needs git and an
// isolated sandbox (without one it fails, or skips under -short).
func newShopCase(t *testing.T, timeout int) *shopCase {
	t.Helper()
	runner, err := sandbox.Default()
	if err != nil {
		if testing.Short() {
			t.Skipf("no isolated sandbox: %v", err)
		}
		t.Fatalf("no isolated sandbox (run with -short to skip): %v", err)
	}
	sc := newFixingCase(t, timeout)
	sc.runner = runner
	sc.cand = signoff.Candidate{ID: signoff.NewID(signoff.PrefixCandidate), HarnessID: sc.h.ID, Attempt: 1, Base: sc.sample.Base,
		Commit: sc.sample.Branches[shoplite.BranchGenuine], Branch: shoplite.BranchGenuine, Diff: "diff", Status: signoff.CandidateVerifying,
		SubmittedBy: sc.op.ID, SubmitterRole: signoff.RoleOperator, Evidence: signoff.EvidenceAuthored, SubmittedAt: time.Now().UTC()}
	s := sc.open(t)
	st := signoff.BugLoopState{Round: 1, Harnesses: []signoff.HarnessRecord{sc.h}, Candidates: []signoff.Candidate{sc.cand}}
	l, _, err := s.AdvanceLoop(context.Background(), sc.op, signoff.LoopUpdate{CaseID: sc.caseID, Version: sc.version, State: st, Command: "submit_candidate",
		Jobs: []signoff.JobRequest{{Args: signoff.VerifyJob{WorkspaceID: sc.ws, CaseID: sc.caseID, CandidateID: sc.cand.ID}}}})
	if err != nil {
		t.Fatalf("submit_candidate: %v", err)
	}
	sc.version = l.Version
	return sc
}

// newFixingCase writes ShopLite and brings a case to fixing, the coupon
// harness frozen (written through the store: authored). It needs git.
func newFixingCase(t *testing.T, timeout int) *shopCase {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	sample, err := shoplite.Build(ctx, filepath.Join(t.TempDir(), "shop"))
	if err != nil {
		t.Fatal(err)
	}
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	sc := &shopCase{path: filepath.Join(t.TempDir(), "signoff.db"), key: key, sample: sample}
	s := sc.open(t)
	ws, owner, err := s.CreateWorkspace(ctx, "W", "olga")
	if err != nil {
		t.Fatal(err)
	}
	sc.ws, sc.repo = ws.ID, sample.Dir
	cli, sys := signoff.CLIActor(ws.ID), signoff.SystemActor(ws.ID)
	op, err := s.CreateActor(ctx, owner, "oscar", signoff.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.CreateActor(ctx, owner, "rita", signoff.RoleReporter)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	sc.project = p.ID
	if _, err := s.SetRepoSettings(ctx, cli, p.ID, signoff.RepoSettings{Path: sample.Dir, FixPaths: []string{"cart/**"}, TimeoutSeconds: timeout}); err != nil {
		t.Fatal(err)
	}
	// The desks' build cache for this project is the one the verify
	// package's tests share, so only a cold machine compiles the standard
	// library.
	sc.cache = t.TempDir()
	shared, err := os.UserCacheDir()
	if err != nil {
		shared = os.TempDir()
	}
	shared = filepath.Join(shared, "signoff", "go-build-test")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(shared, filepath.Join(sc.cache, p.ID)); err != nil {
		t.Fatal(err)
	}
	c, err := s.CreateCase(ctx, owner, signoff.CaseInput{ProjectID: p.ID, Kind: signoff.KindBug, Title: "coupon twice", ReporterID: rep.ID})
	if err != nil {
		t.Fatal(err)
	}
	sc.caseID = c.ID
	for _, cmd := range []string{"start_triage", "ticket"} {
		if _, _, err := s.TransitionCase(ctx, owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	spec := sample.CouponHarness()
	spec.TimeoutSeconds = timeout
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	hv, err := verify.ParseHarness(raw)
	if err != nil {
		t.Fatal(err)
	}
	sc.harness = hv
	digest, err := verify.HarnessDigest(ctx, sample.Dir, hv)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	// Frozen: the reporter confirmed it and the operator approved its test
	// (written here through the store, so the review digest stands in for
	// the one the operator would have been shown).
	hid := signoff.NewID(signoff.PrefixHarness)
	h := signoff.HarnessRecord{ID: hid, Round: 1, Status: signoff.HarnessFrozen, Spec: raw, Digest: digest,
		Base: sample.Base, Commit: spec.TestsFrom, Branch: shoplite.BranchReproCoupon, TestFiles: spec.TestFiles,
		ProposedBy: owner.ID, Evidence: signoff.EvidenceAuthored, ProposedAt: now, ConfirmedAt: &now, FrozenAt: &now,
		StaffReview: &signoff.HarnessReview{HarnessID: hid, By: op.ID, Decision: signoff.HarnessApprove, ReviewDigest: strings.Repeat("e", 64), At: now}}
	sc.h, sc.op = h, op
	st := signoff.BugLoopState{Round: 1}
	for _, step := range []struct {
		by  signoff.Actor
		cmd string
	}{{sys, "start_reproduction"}, {owner, "propose_reproduction"}, {rep, "confirm_reproduction"}, {op, "approve_harness"}, {sys, "start_fix"}} {
		if step.cmd == "propose_reproduction" {
			st.Harnesses = []signoff.HarnessRecord{h}
		}
		l, _, err := s.AdvanceLoop(ctx, step.by, signoff.LoopUpdate{CaseID: c.ID, Version: sc.version, State: st, Command: step.cmd})
		if err != nil {
			t.Fatalf("%s: %v", step.cmd, err)
		}
		sc.version = l.Version
	}
	return sc
}

// warm verifies the candidate once outside the loop, with a generous
// timeout, so the build cache is warm for runs with a short one.
func (sc *shopCase) warm(t *testing.T) {
	t.Helper()
	h := sc.harness
	h.TimeoutSeconds = 300
	rep, err := verify.Verify(context.Background(), verify.Options{RepoDir: sc.repo, Harness: h, Candidate: sc.cand.Commit,
		Runner: sc.runner, CacheDir: filepath.Join(sc.cache, sc.project, "go-build")})
	if err != nil || rep.Verdict != verify.Verified {
		t.Fatalf("warming up: %v (%s: %s)", err, rep.Verdict, rep.Reason)
	}
}

// open opens another store over the case's file: another process.
func (sc *shopCase) open(t *testing.T) *sqlstore.DB {
	t.Helper()
	s, err := sqlite.Open(context.Background(), sc.path, sqlstore.Options{Signer: sc.key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// desk is a desk of one process over st.
func (sc *shopCase) desk(st signoff.Store, runner sandbox.Runner) *Desk {
	return &Desk{Store: st, Sandbox: runner, CacheDir: sc.cache, Key: sc.key}
}

func (sc *shopCase) job() signoff.VerifyJob {
	return signoff.VerifyJob{WorkspaceID: sc.ws, CaseID: sc.caseID, CandidateID: sc.cand.ID}
}

// count counts the case's ledger events of type typ about the candidate.
func (sc *shopCase) count(t *testing.T, s signoff.Store, typ string) int {
	t.Helper()
	evs, err := s.ListEvents(context.Background(), signoff.SystemActor(sc.ws), sc.caseID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		var p struct {
			CandidateID string `json:"candidate_id"`
		}
		if e.Type == typ && json.Unmarshal(e.Payload, &p) == nil && p.CandidateID == sc.cand.ID {
			n++
		}
	}
	return n
}

// checkVerifiedOnce checks that the candidate was verified exactly once:
// one verdict with the stored bundle, one verification.completed, one
// evidence.stored, one approval.requested, and the case awaiting approval
// two loop versions on (the verdict, the review).
func (sc *shopCase) checkVerifiedOnce(t *testing.T, s signoff.Store) {
	t.Helper()
	ctx := context.Background()
	c, err := s.GetCase(ctx, signoff.SystemActor(sc.ws), sc.caseID)
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.GetLoop(ctx, signoff.SystemActor(sc.ws), sc.caseID)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != workflow.BugAwaitingApproval || l.Version != sc.version+2 {
		t.Errorf("case %s at loop version %d, want %s at %d", c.State, l.Version, workflow.BugAwaitingApproval, sc.version+2)
	}
	if len(l.State.Candidates) != 1 {
		t.Fatalf("%d candidates, want 1", len(l.State.Candidates))
	}
	cand := l.State.Candidates[0]
	if cand.Status != signoff.CandidateVerified || cand.Verdict != verify.Verified {
		t.Errorf("candidate %s, verdict %s (%s); want verified", cand.Status, cand.Verdict, cand.Reason)
	}
	_, digest, err := s.GetEvidence(ctx, signoff.SystemActor(sc.ws), sc.caseID, sc.cand.ID)
	if err != nil {
		t.Fatal(err)
	}
	if cand.BundleDigest == "" || cand.BundleDigest != digest {
		t.Errorf("the verdict names bundle %q, the store holds %q", cand.BundleDigest, digest)
	}
	for typ, want := range map[string]int{"verification.completed": 1, "evidence.stored": 1, "approval.requested": 1} {
		if n := sc.count(t, s, typ); n != want {
			t.Errorf("%d %s events for the candidate, want %d", n, typ, want)
		}
	}
}

// verdictBarrier holds every AdvanceLoop that records a verdict until n
// of them are waiting, so n workers that read the loop before any of them
// wrote all try to record on the same version.
type verdictBarrier struct {
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
}

func (b *verdictBarrier) wait() bool {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return true
	case <-time.After(3 * time.Minute):
		return false
	}
}

type racingStore struct {
	signoff.Store
	b       *verdictBarrier
	t       *testing.T
	version chan int64 // the version each verdict was recorded on
}

func (s racingStore) AdvanceLoop(ctx context.Context, by signoff.Actor, u signoff.LoopUpdate) (signoff.BugLoop, signoff.Case, error) {
	for _, e := range u.Events {
		if e.Type == "verification.completed" {
			if !s.b.wait() {
				s.t.Error("the other worker never came to record its verdict")
			}
			s.version <- u.Version
			break
		}
	}
	return s.Store.AdvanceLoop(ctx, by, u)
}

// TestVerdictRecordedOnceWhenTwoWorkersFinishTheSameRun: the same
// VerifyJob is worked by two processes at once (two desks over two stores
// on one SQLite file, as when the rescuer retries the job of a worker that
// was only slow, or River runs a job twice), both run the sandbox and both
// try to record their verdict on the same loop version. Both jobs succeed;
// the candidate has one verdict, the ledger one verification.completed,
// the store one evidence bundle, and the case went on to approval once.
func TestVerdictRecordedOnceWhenTwoWorkersFinishTheSameRun(t *testing.T) {
	t.Parallel()
	sc := newShopCase(t, 120)
	b := &verdictBarrier{n: 2, all: make(chan struct{})}
	versions := make(chan int64, 4)
	stores := []*sqlstore.DB{sc.open(t), sc.open(t)}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range stores {
		w := &verifyWorker{d: sc.desk(racingStore{Store: s, b: b, t: t, version: versions}, sc.runner)}
		job := &river.Job[signoff.VerifyJob]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, Kind: signoff.VerifyJob{}.Kind()}, Args: sc.job()}
		wg.Go(func() { errs[i] = w.Work(context.Background(), job) })
	}
	wg.Wait()
	close(versions)
	for i, err := range errs {
		if err != nil {
			t.Errorf("worker %d: %v", i+1, err)
		}
	}
	// Both tried to record the verdict on the version they read, the
	// same one: the store took one, the other found the work done.
	var tried []int64
	for v := range versions {
		tried = append(tried, v)
	}
	if len(tried) < 2 || tried[0] != sc.version || tried[1] != sc.version {
		t.Errorf("verdicts tried on versions %v, want two on %d", tried, sc.version)
	}
	sc.checkVerifiedOnce(t, stores[0])
}

// TestSubmitAfterADeadProcessLeftTheBranch: a process created the first
// submission's branch and died before recording the candidate. The next
// submission takes the next free name instead of failing on the existing
// branch forever, and leaves the leftover branch where it was.
func TestSubmitAfterADeadProcessLeftTheBranch(t *testing.T) {
	t.Parallel()
	sc := newFixingCase(t, 60)
	ctx := context.Background()
	s := sc.open(t)
	repo := &gitx.Repo{Dir: sc.repo}
	left := fmt.Sprintf("signoff/%s/fix-1-1-1", sc.caseID)
	if err := repo.CreateBranch(ctx, left, sc.sample.Base); err != nil {
		t.Fatal(err)
	}
	patch, err := repo.Diff(ctx, sc.sample.Base, sc.sample.Branches[shoplite.BranchGenuine])
	if err != nil {
		t.Fatal(err)
	}
	cand, err := sc.desk(s, nil).SubmitPatch(ctx, sc.op, sc.caseID, patch)
	if err != nil {
		t.Fatalf("submit after a leftover branch: %v", err)
	}
	if cand.Branch != left+"-2" {
		t.Errorf("branch %q, want %q", cand.Branch, left+"-2")
	}
	if got, err := repo.RevParse(ctx, "refs/heads/"+cand.Branch); err != nil || got != cand.Commit {
		t.Errorf("the candidate's branch is at %s (%v), want %s", got, err, cand.Commit)
	}
	if got, err := repo.RevParse(ctx, "refs/heads/"+left); err != nil || got != sc.sample.Base {
		t.Errorf("the leftover branch moved to %s (%v)", got, err)
	}
}
