package main_test

import (
	"bufio"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
)

// TestWorkerTakesOnlyItsQueues runs the real binary as a worker process on
// one queue, then on another: a report's triage job waits on the triage
// queue while only the sandbox queue is worked, and is taken as soon as a
// worker of the triage queue starts. Both workers stop cleanly on SIGTERM.
func TestWorkerTakesOnlyItsQueues(t *testing.T) {
	t.Parallel()
	sd := seedWorkspace(t, "shop")
	ctx, s, p, db := context.Background(), sd.store, sd.project, sd.db
	if _, _, _, err := s.SubmitReport(ctx, signoff.ReportInput{ProjectID: p.ID, Text: "the coupon is applied twice"}); err != nil {
		t.Fatal(err)
	}
	job := func() (queue, state string) {
		t.Helper()
		err := s.SQL().QueryRow(`SELECT queue, state FROM river_job WHERE kind = 'triage_case'`).Scan(&queue, &state)
		if err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		return queue, state
	}
	if q, st := job(); q != signoff.QueueTriage || st != "available" {
		t.Fatalf("triage job on queue %q in state %q, want triage/available", q, st)
	}

	// worker starts a worker process, waits until it says it is working,
	// and returns a function that stops it and returns its output.
	worker := func(queues string) func() string {
		t.Helper()
		cmd := exec.Command(bin, "worker", "--db", db, "--queues", queues)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		pipe, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var out strings.Builder
		started, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(pipe)
			once := false
			for sc.Scan() {
				out.WriteString(sc.Text() + "\n")
				if !once && strings.Contains(sc.Text(), "msg=working") {
					once = true
					close(started)
				}
			}
		}()
		select {
		case <-started:
		case <-done:
			t.Fatalf("worker %s exited:\n%s", queues, out.String())
		case <-time.After(20 * time.Second):
			t.Fatalf("worker %s did not start", queues)
		}
		return func() string {
			t.Helper()
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			<-done
			if err := cmd.Wait(); err != nil {
				t.Fatalf("worker %s: %v\n%s", queues, err, out.String())
			}
			return out.String()
		}
	}
	stop := worker("sandbox")
	time.Sleep(time.Second) // a second of polling that must not take it
	if q, st := job(); q != signoff.QueueTriage || st != "available" {
		t.Fatalf("a sandbox worker took the triage job: %s/%s", q, st)
	}
	if out := stop(); !strings.Contains(out, "queues=sandbox") || !strings.Contains(out, "worker stopped") {
		t.Fatalf("sandbox worker output:\n%s", out)
	}
	stop = worker("triage")
	waitFor(t, 30*time.Second, func() bool { _, st := job(); return st != "available" && st != "running" })
	out := stop()
	if _, st := job(); st == "available" {
		t.Fatalf("the triage worker did not take the job:\n%s", out)
	}
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
