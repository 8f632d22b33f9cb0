package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/verify"
	"github.com/signoff-dev/signoff/workflow"
)

// The verification part of the cluster workload. A real repository
// (ShopLite) has bug cases waiting for a fix with their reproduction
// frozen; how they got there (the reproducer's and the reporter's steps)
// is written through the store, as authored evidence. The client then
// submits the genuine fix of each through a serve process, the verify job
// runs in a worker's sandbox, and once the case waits for approval the
// operator signs the card and approves through another serve process.

// bugHarnessTimeout is each sandbox run's timeout: short, so that the
// verification job's timeout (derived from it) is its floor, and a dead
// worker's run is retried as soon as production settings allow.
const bugHarnessTimeout = 20

type bugSetup struct {
	patch string   // the genuine fix, as a unified diff
	cases []string // cases in fixing
}

// bugRun is what the client did with one case and was told.
type bugRun struct {
	caseID    string
	submitted int           // 201 answers to the candidate submission
	waited    time.Duration // from submission to awaiting approval
	approved  bool          // the signed approval was accepted
	failed    string        // why the flow stopped, if it did
}

// addBugs prepares n bug cases in fixing over a ShopLite repository the
// processes reach on this machine, with the project's build cache warm. It
// must run before any process starts: it sets their environment.
func (e *clusterEnv) addBugs(n int) {
	t := e.t
	t.Helper()
	runner, err := sandbox.Default()
	if err != nil {
		if testing.Short() {
			t.Logf("no isolated sandbox (%v): the workload has no verifications", err)
			return
		}
		t.Fatalf("no isolated sandbox (run with -short to leave verifications out): %v", err)
	}
	ctx := context.Background()
	sample, err := shoplite.Build(ctx, filepath.Join(t.TempDir(), "shop"))
	if err != nil {
		t.Fatal(err)
	}
	cli, sys := signoff.CLIActor(e.owner.WorkspaceID), signoff.SystemActor(e.owner.WorkspaceID)
	if _, err := e.store.SetRepoSettings(ctx, cli, e.project, signoff.RepoSettings{Path: sample.Dir, FixPaths: []string{"cart/**"}, TimeoutSeconds: bugHarnessTimeout}); err != nil {
		t.Fatal(err)
	}
	// Every process's per-project build cache is the one the verify and
	// bugdesk tests share, warmed here, so the sandbox runs compile only
	// ShopLite.
	shared, err := os.UserCacheDir()
	if err != nil {
		shared = os.TempDir()
	}
	shared = filepath.Join(shared, "signoff", "go-build-test")
	home := t.TempDir()
	projects := filepath.Join(home, "signoff", "projects")
	if err := os.MkdirAll(projects, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(shared, filepath.Join(projects, e.project)); err != nil {
		t.Fatal(err)
	}
	e.procEnv = append(e.procEnv, "XDG_CACHE_HOME="+home)
	spec := sample.CouponHarness()
	raw, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	hv, err := verify.ParseHarness(raw)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := verify.Verify(ctx, verify.Options{RepoDir: sample.Dir, Harness: hv, Candidate: sample.Branches[shoplite.BranchGenuine],
		Runner: runner, CacheDir: shared}); err != nil || rep.Verdict != verify.Verified {
		t.Fatalf("warming up: %v (%s: %s)", err, rep.Verdict, rep.Reason)
	}
	spec.TimeoutSeconds = bugHarnessTimeout
	if raw, err = json.Marshal(spec); err != nil {
		t.Fatal(err)
	}
	if hv, err = verify.ParseHarness(raw); err != nil {
		t.Fatal(err)
	}
	digest, err := verify.HarnessDigest(ctx, sample.Dir, hv)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", sample.Dir, "diff", sample.Base, sample.Branches[shoplite.BranchGenuine]).Output()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := e.store.CreateActor(ctx, e.owner, "rita", signoff.RoleReporter)
	if err != nil {
		t.Fatal(err)
	}
	b := &bugSetup{patch: string(out)}
	for i := range n {
		c, err := e.store.CreateCase(ctx, e.owner, signoff.CaseInput{ProjectID: e.project, Kind: signoff.KindBug, Title: fmt.Sprintf("coupon applied twice (%d)", i), ReporterID: rep.ID})
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"start_triage", "ticket"} {
			if _, _, err := e.store.TransitionCase(ctx, e.owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
				t.Fatal(err)
			}
		}
		// Frozen: the reporter confirmed it and the operator approved its
		// test (written through the store: the review digest stands in for
		// the one the operator would have read).
		now := time.Now().UTC()
		hid := signoff.NewID(signoff.PrefixHarness)
		h := signoff.HarnessRecord{ID: hid, Round: 1, Status: signoff.HarnessFrozen, Spec: raw, Digest: digest,
			Base: sample.Base, Commit: spec.TestsFrom, Branch: shoplite.BranchReproCoupon, TestFiles: spec.TestFiles,
			ProposedBy: e.owner.ID, Evidence: signoff.EvidenceAuthored, ProposedAt: now, ConfirmedAt: &now, FrozenAt: &now,
			StaffReview: &signoff.HarnessReview{HarnessID: hid, By: e.operator.ID, Decision: signoff.HarnessApprove, ReviewDigest: strings.Repeat("e", 64), At: now}}
		st := signoff.BugLoopState{Round: 1}
		var version int64
		for _, step := range []struct {
			by  signoff.Actor
			cmd string
		}{{sys, "start_reproduction"}, {e.owner, "propose_reproduction"}, {rep, "confirm_reproduction"}, {e.operator, "approve_harness"}, {sys, "start_fix"}} {
			if step.cmd == "propose_reproduction" {
				st.Harnesses = []signoff.HarnessRecord{h}
			}
			l, _, err := e.store.AdvanceLoop(ctx, step.by, signoff.LoopUpdate{CaseID: c.ID, Version: version, State: st, Command: step.cmd})
			if err != nil {
				t.Fatalf("%s: %v", step.cmd, err)
			}
			version = l.Version
		}
		b.cases = append(b.cases, c.ID)
	}
	e.bugs = b
}

// tryServes calls f on the serve processes in turn from start until one
// answers below 500, twice round at most.
//
// A refused connection never reached a server, so it is retried until the
// killed process is back (up to 30 s), even when it is the only one: a slow
// machine takes seconds to restart serve, and a flow should not count as
// stopped by a crash it never met.
func tryServes(serves []*proc, start int, f func(base string) (int, []byte)) (int, []byte) {
	var st int
	var raw []byte
	deadline := time.Now().Add(30 * time.Second)
	for k := 0; ; k++ {
		st, raw = f("http://" + serves[(start+k)%len(serves)].addr)
		if st != 0 && st < 500 {
			return st, raw
		}
		if k+1 >= 2*len(serves) && !(refused(st, raw) && time.Now().Before(deadline)) {
			return st, raw
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// refused reports whether call's answer is a connection refused: the
// request provably reached no server, so sending it again is safe.
func refused(st int, raw []byte) bool {
	return st == 0 && bytes.Contains(raw, []byte("connection refused"))
}

// bug submits case k's fix through one instance, waits (reading through
// the others) until its verification put it up for approval, and approves
// the card with the operator's signature through a third.
func (w *workload) bug(ctx context.Context, e *clusterEnv, serves []*proc, k int) {
	run := bugRun{caseID: e.bugs.cases[k]}
	defer func() { w.mu.Lock(); w.bugs = append(w.bugs, run); w.mu.Unlock() }()
	// The owner submits, so the operator may approve (a candidate's
	// submitter never can).
	start := time.Now()
	st, raw := tryServes(serves, k, func(base string) (int, []byte) {
		return call(ctx, "POST", base+"/api/v1/cases/"+run.caseID+"/candidates", e.ownerTok, map[string]string{"patch": e.bugs.patch}, nil)
	})
	switch st {
	case http.StatusCreated:
		run.submitted++
	case http.StatusConflict:
		// A process that died after committing the candidate but before
		// answering: the retry finds the case verifying.
	default:
		run.failed = fmt.Sprintf("submit: %d %s", st, raw)
		return
	}
	deadline := time.Now().Add(6 * time.Minute)
	for i := 0; ; i++ {
		var c signoff.Case
		st, raw := call(ctx, "GET", "http://"+serves[(k+1+i)%len(serves)].addr+"/api/v1/cases/"+run.caseID, e.opTok, nil, &c)
		if st == http.StatusOK && c.State == workflow.BugAwaitingApproval {
			break
		}
		if st == http.StatusOK && c.State != workflow.BugVerifying && c.State != workflow.BugFixing {
			run.failed = "the case went to " + c.State
			// Say why: the verdict and its reason, as the loop recorded them.
			if l, err := e.store.GetLoop(ctx, signoff.SystemActor(e.owner.WorkspaceID), run.caseID); err == nil {
				for _, cand := range l.State.Candidates {
					run.failed += fmt.Sprintf("; candidate %s: %s, verdict %s (%.300s)", cand.ID, cand.Status, cand.Verdict, cand.Reason)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			run.failed = fmt.Sprintf("not up for approval after %v (last answer %d %.200s)", time.Since(start).Round(time.Second), st, raw)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	run.waited = time.Since(start)
	var card bugdesk.CardView
	if st, raw = tryServes(serves, k+1, func(base string) (int, []byte) {
		return call(ctx, "GET", base+"/api/v1/cases/"+run.caseID+"/approval", e.opTok, nil, &card)
	}); st != http.StatusOK {
		run.failed = fmt.Sprintf("card: %d %s", st, raw)
		return
	}
	if dg, err := card.Card.Digest(); err != nil || dg != card.SubjectDigest {
		run.failed = fmt.Sprintf("the card digests to %s, it says %s (%v)", dg, card.SubjectDigest, err)
		return
	}
	env, err := approval.Sign(approval.NewStatement(run.caseID, card.SubjectDigest, approval.Approve, card.Policy.Digest(), e.operator.ID, time.Now(), card.Policy.TTL()), e.opKey)
	if err != nil {
		run.failed = "sign: " + err.Error()
		return
	}
	st, raw = tryServes(serves, k+2, func(base string) (int, []byte) {
		return call(ctx, "POST", base+"/api/v1/cases/"+run.caseID+"/approvals", e.opTok, map[string]any{"envelope": env, "via": "cli-signed-yes"}, nil)
	})
	if st >= 300 && st != http.StatusConflict {
		run.failed = fmt.Sprintf("approve: %d %s", st, raw)
		return
	}
	run.approved = true
}

// workerKill is the kill of a worker in the middle of a verification.
type workerKill struct {
	job     int64
	attempt int
	at      time.Time
	retried time.Duration // from the kill to the next attempt's start
}

var pidInClientID = regexp.MustCompile(`_pid(\d+)_`)

// killVerifyingWorker waits for a verify job to run, kills with SIGKILL
// the worker (any process working the sandbox queue) running it (River records its client, whose id carries the
// process id) at a random moment of its first seconds, restarts it after
// restartAfter, and then waits for the job's next attempt, which another
// process's rescuer makes possible. Without a verification in sight by
// ctx's end it kills a random worker instead.
func killVerifyingWorker(ctx context.Context, t *testing.T, e *clusterEnv, workers []*proc, rng *rand.Rand, restartAfter time.Duration) *workerKill {
	var victim *proc
	k := &workerKill{}
	last := `attempted_by[array_length(attempted_by, 1)]`
	if e.store.Dialect() == "sqlite" {
		last = `json_extract(attempted_by, '$[#-1]')`
	}
	for victim == nil {
		var by string
		err := e.store.SQL().QueryRowContext(ctx, `SELECT id, attempt, `+last+` FROM river_job
			WHERE kind = 'bug_verify' AND state = 'running' ORDER BY id LIMIT 1`).Scan(&k.job, &k.attempt, &by)
		if err == nil {
			if m := pidInClientID.FindStringSubmatch(by); m != nil {
				pid, _ := strconv.Atoi(m[1])
				for _, p := range workers {
					p.mu.Lock()
					if p.cmd != nil && p.cmd.Process != nil && p.cmd.Process.Pid == pid {
						victim = p
					}
					p.mu.Unlock()
				}
			}
			if victim == nil {
				t.Errorf("verify job %d is run by %q, which is none of the workers", k.job, by)
				return nil
			}
			break
		}
		select {
		case <-ctx.Done():
			p := workers[rng.IntN(len(workers))]
			p.kill()
			t.Logf("chaos: no verification ran; killed %s (SIGKILL)", p.name)
			time.Sleep(restartAfter)
			p.start()
			return nil
		case <-time.After(100 * time.Millisecond):
		}
	}
	time.Sleep(time.Duration(rng.Int64N(int64(2 * time.Second))))
	victim.kill()
	k.at = time.Now()
	t.Logf("chaos: killed %s (SIGKILL) while it ran verify job %d (attempt %d)", victim.name, k.job, k.attempt)
	time.Sleep(restartAfter)
	victim.start()
	t.Logf("chaos: restarted %s", victim.name)
	deadline := time.Now().Add(6 * time.Minute)
	for time.Now().Before(deadline) {
		var attempt int
		var state string
		if err := e.store.SQL().QueryRowContext(context.Background(), `SELECT attempt, state FROM river_job WHERE id = $1`, k.job).Scan(&attempt, &state); err != nil {
			t.Errorf("verify job %d: %v", k.job, err)
			return k
		}
		if attempt > k.attempt && (state == "running" || state == "completed") {
			k.retried = time.Since(k.at)
			t.Logf("chaos: verify job %d began attempt %d %v after the kill", k.job, attempt, k.retried.Round(time.Second))
			return k
		}
		if state == "completed" || state == "cancelled" || state == "discarded" {
			t.Errorf("verify job %d ended %s without another attempt", k.job, state)
			return k
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Errorf("verify job %d was not retried within 6 minutes of the kill", k.job)
	return k
}

// checkBugs: every fix submitted was verified exactly once (one verdict,
// one evidence bundle, one request for approval, whatever died), and every
// approval the client was told of is recorded once on a case that is
// approved.
func (e *clusterEnv) checkBugs(w *workload) {
	t := e.t
	if e.bugs == nil {
		return
	}
	ctx := context.Background()
	sys := signoff.SystemActor(e.owner.WorkspaceID)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.bugs) != len(e.bugs.cases) {
		t.Errorf("%d bug flows ran, want %d", len(w.bugs), len(e.bugs.cases))
	}
	var waits []string
	for _, b := range w.bugs {
		if b.failed != "" {
			t.Errorf("bug case %s: %s", b.caseID, b.failed)
			continue
		}
		waits = append(waits, b.waited.Round(100*time.Millisecond).String())
		c, err := e.store.GetCase(ctx, sys, b.caseID)
		if err != nil {
			t.Fatal(err)
		}
		l, err := e.store.GetLoop(ctx, sys, b.caseID)
		if err != nil {
			t.Fatal(err)
		}
		if c.State != workflow.BugApproved {
			t.Errorf("case %s is %s, want %s", b.caseID, c.State, workflow.BugApproved)
		}
		if len(l.State.Candidates) != 1 || b.submitted > 1 {
			t.Errorf("case %s: %d candidates, %d submissions answered 201; want one", b.caseID, len(l.State.Candidates), b.submitted)
			continue
		}
		cand := l.State.Candidates[0]
		if cand.Verdict != verify.Verified || cand.Status != signoff.CandidateVerified {
			t.Errorf("case %s: candidate %s, verdict %s (%s); want verified", b.caseID, cand.Status, cand.Verdict, cand.Reason)
		}
		evs, err := e.store.ListEvents(ctx, sys, b.caseID, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		n := map[string]int{}
		for _, ev := range evs {
			n[ev.Type]++
		}
		for typ, want := range map[string]int{"candidate.submitted": 1, "verification.completed": 1, "evidence.stored": 1, "approval.requested": 1, "approval.recorded": 1} {
			if n[typ] != want {
				t.Errorf("case %s: %d %s events, want %d", b.caseID, n[typ], typ, want)
			}
		}
		if _, digest, err := e.store.GetEvidence(ctx, sys, b.caseID, cand.ID); err != nil || digest != cand.BundleDigest {
			t.Errorf("case %s: the verdict names bundle %s, the store holds %s (%v)", b.caseID, cand.BundleDigest, digest, err)
		}
	}
	t.Logf("verifications: %d fixes submitted through the instances, each verified once in a worker's sandbox and approved; submission to approval card: %v", len(w.bugs), waits)
}

// bugsFlow runs the bug flows, one a second, and waits for them.
func (w *workload) bugsFlow(ctx context.Context, e *clusterEnv, serves []*proc) {
	if e.bugs == nil {
		return
	}
	var wg sync.WaitGroup
	for k := range e.bugs.cases {
		wg.Go(func() {
			time.Sleep(time.Duration(k)*time.Second + 500*time.Millisecond)
			w.bug(ctx, e, serves, k)
		})
	}
	wg.Wait()
}
