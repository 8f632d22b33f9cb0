package bugdesk

import (
	"context"
	"database/sql"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/verify"
	"github.com/signoff-dev/signoff/workflow"
)

// dyingRunner runs the first `live` sandbox runs for real, then freezes:
// the run after them never returns, whatever its context says, until
// released. It is the process that dies mid-run, as seen by the job
// queue: the job stays running, and nothing of it is written again.
type dyingRunner struct {
	sandbox.Runner
	live    int
	mu      sync.Mutex
	calls   int
	frozen  chan struct{} // closed when the frozen run starts
	release chan struct{}
}

func (r *dyingRunner) Run(ctx context.Context, s sandbox.Spec) (sandbox.Result, error) {
	r.mu.Lock()
	r.calls++
	n := r.calls
	r.mu.Unlock()
	if n <= r.live {
		return r.Runner.Run(ctx, s)
	}
	if n == r.live+1 {
		close(r.frozen)
	}
	<-r.release
	return sandbox.Result{}, errors.New("the process is gone")
}

// clockedRunner notes when its first run starts.
type clockedRunner struct {
	sandbox.Runner
	once  sync.Once
	first chan time.Time
}

func (r *clockedRunner) Run(ctx context.Context, s sandbox.Spec) (sandbox.Result, error) {
	r.once.Do(func() { r.first <- time.Now() })
	return r.Runner.Run(ctx, s)
}

// doneWorker is the verify worker, saying when a Work call returns.
type doneWorker struct {
	*verifyWorker
	done chan struct{}
}

func (w doneWorker) Work(ctx context.Context, job *river.Job[signoff.VerifyJob]) error {
	defer func() { w.done <- struct{}{} }()
	return w.verifyWorker.Work(ctx, job)
}

// TestDeadWorkersVerificationIsRetriedElsewhere: a process working the
// sandbox queue takes the verification job and dies in the middle of its
// sandbox runs (its job client is cancelled, its database closed, and the
// run never returns, leaving the job running with its worktree behind).
// Another process's job client, already running, rescues the job once
// the job's own timeout (VerifyTimeout: the harness's runs, not
// LongJobTimeout) has passed, never before, and runs it again: the
// verdict is recorded once, from the second attempt.
func TestDeadWorkersVerificationIsRetriedElsewhere(t *testing.T) {
	t.Parallel()
	// Runs of 10 s; a budget shrunk to test scale: the job's timeout is
	// 2 runs × (10 s + 1 s) + 5 s = 27 s (the production budget makes it
	// 2 min: see TestVerifyTimeout).
	const harnessTimeout = 10
	budget := VerifyBudget{Floor: time.Second, Setup: 5 * time.Second, PerRun: time.Second, Review: time.Second}
	jobs := sqlstore.JobsConfig{Workers: 1, Queues: []string{signoff.QueueSandbox}, JobTimeout: time.Second, RescueAfter: time.Second}
	sc := newShopCase(t, harnessTimeout)
	sc.warm(t)
	ctx := context.Background()

	// The first process: it runs the base stage, then dies in the
	// candidate's run.
	s1, err := sqlite.Open(ctx, sc.path, sqlstore.Options{Signer: sc.key})
	if err != nil {
		t.Fatal(err)
	}
	dying := &dyingRunner{Runner: sc.runner, live: 1, frozen: make(chan struct{}), release: make(chan struct{})}
	d1 := sc.desk(s1, dying)
	d1.Budget = budget
	done1 := make(chan struct{}, 1)
	w1 := river.NewWorkers()
	river.AddWorker(w1, doneWorker{&verifyWorker{d: d1}, done1})
	ctx1, kill := context.WithCancel(ctx)
	if _, err := s1.StartJobsWith(ctx1, w1, jobs); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Let the dead run return (into a closed database) before the
		// repository goes.
		kill()
		s1.Close()
		close(dying.release)
		select {
		case <-dying.frozen:
		default:
			return // it never ran
		}
		select {
		case <-done1:
		case <-time.After(time.Minute):
			t.Error("the dead process's run did not return once released")
		}
	})
	select {
	case <-dying.frozen:
	case <-time.After(3 * time.Minute):
		t.Fatal("the first process never reached the candidate's run")
	}
	queue := riverClient(t, sc.path)
	first := verifyJobRow(t, queue)
	if first.State != rivertype.JobStateRunning || first.Attempt != 1 || first.AttemptedAt == nil {
		t.Fatalf("job %d is %s at attempt %d, want running at 1", first.ID, first.State, first.Attempt)
	}
	started := *first.AttemptedAt

	// The second process, already working the queue when the first dies.
	s2 := sc.open(t)
	clocked := &clockedRunner{Runner: sc.runner, first: make(chan time.Time, 1)}
	d2 := sc.desk(s2, clocked)
	d2.Budget = budget
	w2 := river.NewWorkers()
	d2.AddWorkers(w2)
	ctx2, cancel2 := context.WithCancel(ctx)
	stop2, err := s2.StartJobsWith(ctx2, w2, jobs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		stop2(sctx)
		cancel2()
	})
	timeout := d2.VerifyTimeout(ctx, sc.ws, sc.caseID, sc.cand.ID)
	// The reviewer is an outside agent here (no role configuration): the
	// job does not wait for it.
	if want := 2*(harnessTimeout*time.Second+budget.PerRun) + budget.Setup; timeout != want {
		t.Fatalf("VerifyTimeout = %s, want %s", timeout, want)
	}

	// The first process dies: no more queries, no leader resignation, no
	// job completion.
	died := time.Now()
	kill()
	s1.Close()

	// River's rescuer runs every 30 s (it cannot be set), the scheduler
	// every 5 s, the first retry waits about a second, and the second
	// client may wait out the dead leader's 15 s lease first.
	const rescuerInterval, scheduler, leaderTTL = 30 * time.Second, 5 * time.Second, 15 * time.Second
	limit := timeout + rescuerInterval + leaderTTL + scheduler + 15*time.Second
	var retried time.Time
	select {
	case retried = <-clocked.first:
	case <-time.After(time.Until(started.Add(limit))):
		t.Fatalf("the job was not retried within %s of its first attempt", limit)
	}
	deadline := time.Now().Add(2 * time.Minute)
	var recorded time.Time
	for {
		l, err := s2.GetLoop(ctx, signoff.SystemActor(sc.ws), sc.caseID)
		if err != nil {
			t.Fatal(err)
		}
		if recorded.IsZero() && l.State.Candidates[0].Status != signoff.CandidateVerifying {
			recorded = time.Now()
		}
		// The verdict is recorded first; the review that asks for
		// approval follows in the same job. Check once both are done.
		if c, err := s2.GetCase(ctx, signoff.SystemActor(sc.ws), sc.caseID); err == nil && !recorded.IsZero() && c.State == workflow.BugAwaitingApproval {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the retried verification recorded no verdict")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("job timeout %s; first attempt started %s before the death; retried %s after it started (%s after the death); verdict recorded %s after the death",
		timeout, died.Sub(started).Round(time.Millisecond), retried.Sub(started).Round(time.Millisecond),
		retried.Sub(died).Round(time.Millisecond), recorded.Sub(died).Round(time.Millisecond))
	// Never rescued while its timeout runs: a job still working is never
	// retried beside itself.
	if retried.Sub(started) < timeout-time.Second {
		t.Errorf("retried %s after the first attempt started, before its timeout of %s", retried.Sub(started), timeout)
	}
	sc.checkVerifiedOnce(t, s2)
	// The dead run's worktrees are still checked out (its process never
	// closed them: base's and the candidate's, run side by side, or the
	// candidate's alone when base finished first); the retry ran beside
	// them in worktrees of its own and removed those.
	out, err := exec.Command("git", "-C", sc.repo, "worktree", "list", "--porcelain").Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(out), "worktree "); n != 2 && n != 3 {
		t.Errorf("%d worktrees, want the repository's and the dead run's one or two:\n%s", n, out)
	}
	// The queue's record: rescued once, completed at the second attempt.
	var job *rivertype.JobRow
	for time.Now().Before(deadline) {
		if job = verifyJobRow(t, queue); job.State == rivertype.JobStateCompleted {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if job.State != rivertype.JobStateCompleted || job.Attempt != 2 || len(job.Errors) != 1 || !strings.Contains(job.Errors[0].Error, "Stuck job rescued") {
		t.Errorf("job %d: %s at attempt %d, errors %+v; want completed at 2 after one rescue", job.ID, job.State, job.Attempt, job.Errors)
	}
}

// riverClient is an insert-only River client over the SQLite file, to read
// the queue.
func riverClient(t *testing.T, path string) *river.Client[*sql.Tx] {
	t.Helper()
	db, err := sqlite.OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c, err := river.NewClient(riversqlite.New(db), &river.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func verifyJobRow(t *testing.T, c *river.Client[*sql.Tx]) *rivertype.JobRow {
	t.Helper()
	res, err := c.JobList(context.Background(), river.NewJobListParams().Kinds(signoff.VerifyJob{}.Kind()))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Jobs) != 1 {
		t.Fatalf("%d verification jobs, want 1", len(res.Jobs))
	}
	return res.Jobs[0]
}

// TestVerifyTimeout: a verification job's timeout follows its harness,
// between the floor and LongJobTimeout, and is LongJobTimeout when the
// harness cannot be read.
func TestVerifyTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		timeout, runs int
		want          time.Duration
	}{
		{1, 1, signoff.MinJobTimeout},                              // 2×16 s + 1 min = 92 s: the floor
		{30, 1, 2*45*time.Second + time.Minute},                    // 2 min 30 s
		{60, 1, 2*75*time.Second + time.Minute},                    // 3 min 30 s
		{120, 2, 4*135*time.Second + time.Minute},                  // 10 min: just the ceiling
		{signoff.DefaultHarnessTimeout, 1, signoff.LongJobTimeout}, // 11 min 30 s: the ceiling
		{verify.MaxTimeoutSeconds, verify.MaxRuns, signoff.LongJobTimeout},
	} {
		h := verify.Harness{TimeoutSeconds: tc.timeout, Runs: tc.runs}
		if got := signoff.BoundedTimeout(verifyBound(h, VerifyBudget{}.withDefaults()), 0); got != tc.want {
			t.Errorf("timeout_seconds %d × %d runs: %s, want %s", tc.timeout, tc.runs, got, tc.want)
		}
	}
}

// loopStore serves one loop and one role configuration.
type loopStore struct {
	signoff.Store
	loop       signoff.BugLoop
	loopErr    error
	roles      string
	settingErr error
}

func (s loopStore) GetLoop(context.Context, signoff.Actor, string) (signoff.BugLoop, error) {
	return s.loop, s.loopErr
}

func (s loopStore) GetSetting(context.Context, string, string) ([]byte, error) {
	if s.settingErr != nil {
		return nil, s.settingErr
	}
	if s.roles == "" {
		return nil, signoff.Errorf(signoff.ENOTFOUND, "no setting")
	}
	return []byte(s.roles), nil
}

// TestVerifyTimeoutReadsTheCandidatesHarness: the job's timeout follows
// the harness the candidate was made for and the reviewer that runs after
// it, and is LongJobTimeout whenever either cannot be read.
func TestVerifyTimeoutReadsTheCandidatesHarness(t *testing.T) {
	t.Parallel()
	spec := `{"base": "` + strings.Repeat("a", 40) + `", "tests_from": "` + strings.Repeat("b", 40) + `",
	 "test_files": ["cart/coupon_repro_test.go"], "command": ["go", "test", "-json", "./..."], "format": "go-test-json",
	 "fail_to_pass": ["TestCouponAppliesOnce"], "pass_to_pass": [], "expected_failure": "8100", "timeout_seconds": 30, "runs": 1}`
	loop := signoff.BugLoop{State: signoff.BugLoopState{Round: 1,
		Harnesses:  []signoff.HarnessRecord{{ID: "har_old", Spec: []byte(`{}`)}, {ID: "har_1", Status: signoff.HarnessFrozen, Spec: []byte(spec)}},
		Candidates: []signoff.Candidate{{ID: "cand_1", HarnessID: "har_1"}, {ID: "cand_0", HarnessID: "har_old"}}}}
	const openai = "roles:\n  reviewer:\n    actor: reviewer\n    provider: openai\n    base_url: http://127.0.0.1:1\n    model: m\n    max_turns: 4\n    timeout: 30s\n"
	const builtin = "roles:\n  reviewer:\n    actor: reviewer\n    provider: builtin\n    max_turns: 3\n"
	runs := 2*(30*time.Second+15*time.Second) + time.Minute // 2 min 30 s
	for _, tc := range []struct {
		name string
		st   loopStore
		cand string
		want time.Duration
	}{
		{"outside reviewer", loopStore{loop: loop}, "cand_1", runs},
		{"builtin reviewer", loopStore{loop: loop, roles: builtin}, "cand_1", runs + 30*time.Second},
		{"model reviewer", loopStore{loop: loop, roles: openai}, "cand_1", runs + 4*30*time.Second + 30*time.Second},
		{"no loop", loopStore{loopErr: errors.New("database is locked")}, "cand_1", signoff.LongJobTimeout},
		{"no such candidate", loopStore{loop: loop}, "cand_2", signoff.LongJobTimeout},
		{"unreadable harness", loopStore{loop: loop}, "cand_0", signoff.LongJobTimeout},
		{"unreadable roles", loopStore{loop: loop, settingErr: errors.New("database is locked")}, "cand_1", signoff.LongJobTimeout},
	} {
		d := &Desk{Store: tc.st}
		if got := d.VerifyTimeout(context.Background(), "ws_1", "case_1", tc.cand); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
