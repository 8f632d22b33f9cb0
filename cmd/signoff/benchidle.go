package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/loadgen"
	"github.com/signoff-dev/signoff/postgres"
)

// "signoff bench idle" starts `signoff serve` on a fresh database (or the
// one given), waits until it answers, lets it settle, and reads from
// /proc what it costs while nothing happens: CPU ticks and write system
// calls over the window, then, when strace is installed, the fsync calls
// over a second window of the same length (strace slows the process it
// watches, so the two are not measured together). On PostgreSQL it also
// counts the transactions the database saw in the first window.

type idleResult = loadgen.IdleResult

func runBenchIdle(ctx context.Context, e *env, args []string) error {
	var db string
	var window, settle time.Duration
	var asJSON bool
	fs := newFlags("bench idle", "signoff bench idle [--db PATH|URL] [--for 60s] [--settle 5s] [--json]")
	fs.StringVar(&db, "db", "", "the database the server under test opens: a postgres:// URL or a SQLite file (default: a new SQLite file in a temporary directory)")
	fs.DurationVar(&window, "for", 60*time.Second, "how long to measure (each of the two windows)")
	fs.DurationVar(&settle, "settle", 5*time.Second, "how long to let the server settle after it first answers")
	fs.BoolVar(&asJSON, "json", false, "print JSON for scripts")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if window <= 0 || window > time.Hour {
		return signoff.Errorf(signoff.EINVALID, "--for must be between 0 and 1h")
	}
	res, err := measureIdle(ctx, e, db, window, settle)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(e, res)
	}
	fmt.Fprintf(e.stdout, "idle signoff serve on %s, %s after %s to settle:\n", res.Backend, window, settle)
	fmt.Fprintf(e.stdout, "  CPU            %d ticks (%.2f%% of one core)\n", res.Ticks, res.CorePercent)
	fmt.Fprintf(e.stdout, "  write syscalls %d\n", res.WriteCalls)
	if res.Fsyncs >= 0 {
		fmt.Fprintf(e.stdout, "  fsync          %d (strace, second window of %s)\n", res.Fsyncs, window)
	} else {
		fmt.Fprintf(e.stdout, "  fsync          not counted (strace is not installed or could not attach)\n")
	}
	if res.Transactions >= 0 {
		fmt.Fprintf(e.stdout, "  transactions   %d on the database (%.1f a second; this command's 2 included)\n", res.Transactions, float64(res.Transactions)/window.Seconds())
	}
	return nil
}

func measureIdle(ctx context.Context, e *env, db string, window, settle time.Duration) (idleResult, error) {
	res := idleResult{Backend: "sqlite", Window: window.Seconds(), Fsyncs: -1, Transactions: -1}
	exe, err := os.Executable()
	if err != nil {
		return res, fmt.Errorf("bench idle: %w", err)
	}
	dir, err := os.MkdirTemp("", "signoff-idle-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	if db == "" {
		db = filepath.Join(dir, "signoff.db")
	}
	pg := strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
	// The server under test migrates what it opens and signs with a key of
	// its own: never point it at a database that holds anything.
	if st, err := os.Stat(db); !pg && err == nil && st.Size() > 0 {
		return res, signoff.Errorf(signoff.EINVALID, "%s exists: bench idle needs a new database (leave --db out for a temporary one)", db)
	}
	if pg {
		res.Backend = "postgres"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, err
	}
	addr := ln.Addr().String()
	ln.Close()
	srv := exec.CommandContext(ctx, exe, "serve", "--db", db, "--key", filepath.Join(dir, "signoff.key"), "--addr", addr)
	srv.Env = append(os.Environ(), "SIGNOFF_DB=")
	logf, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return res, err
	}
	defer logf.Close()
	srv.Stdout, srv.Stderr = logf, logf
	// The server (and strace, below) end with this process, however it
	// ends.
	srv.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := srv.Start(); err != nil {
		return res, fmt.Errorf("bench idle: start serve: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = srv.Wait(); close(exited) }()
	defer func() {
		_ = srv.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = srv.Process.Kill()
			<-exited
		}
	}()
	if err := waitHealthy(ctx, "http://"+addr+"/healthz", time.Minute, exited); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "serve.log"))
		return res, fmt.Errorf("bench idle: the server did not come up: %w\n%s", err, log)
	}
	fmt.Fprintf(e.stderr, "bench idle: serve (pid %d) is up on %s; settling %s, then measuring %s\n", srv.Process.Pid, res.Backend, settle, window)
	if err := sleepCtx(ctx, settle); err != nil {
		return res, err
	}
	pid := srv.Process.Pid
	xacts := func() int64 { return -1 }
	if pg {
		sdb, pool, err := postgres.OpenDB(ctx, db)
		if err != nil {
			return res, err
		}
		defer pool.Close()
		defer sdb.Close()
		// One connection, opened by the first read below, so the
		// measured reads add no connection setup of their own.
		sdb.SetMaxOpenConns(1)
		xacts = func() int64 {
			var n int64
			if err := sdb.QueryRowContext(ctx, `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).Scan(&n); err != nil {
				return -1
			}
			return n
		}
		xacts()
	}
	t0, w0, err := procCounters(pid)
	if err != nil {
		return res, err
	}
	x0 := xacts()
	if err := sleepCtx(ctx, window); err != nil {
		return res, err
	}
	t1, w1, err := procCounters(pid)
	if err != nil {
		return res, err
	}
	if x0 >= 0 {
		if x1 := xacts(); x1 >= 0 {
			res.Transactions = x1 - x0
		}
	}
	res.Ticks, res.WriteCalls = t1-t0, w1-w0
	res.CorePercent = float64(res.Ticks) / window.Seconds() // 100 ticks a second are one core
	if path, err := exec.LookPath("strace"); err == nil {
		res.Fsyncs = countFsyncs(ctx, path, pid, window, dir)
	}
	return res, nil
}

// procCounters reads a process's CPU ticks (utime+stime) and write-type
// system calls.
func procCounters(pid int) (ticks, writes int64, err error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("bench idle: %w (Linux only)", err)
	}
	// The command name (field 2) may hold spaces; fields count from after
	// its closing parenthesis, where field 3 starts.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("bench idle: unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("bench idle: unexpected /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64) // field 14
	st, _ := strconv.ParseInt(f[12], 10, 64) // field 15
	io, err := os.Open(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return ut + st, -1, nil
	}
	defer io.Close()
	sc := bufio.NewScanner(io)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "syscw:"); ok {
			writes, _ = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return ut + st, writes, nil
}

// countFsyncs attaches strace to pid (all threads) for window and returns
// the fsync and fdatasync calls it saw, or -1.
func countFsyncs(ctx context.Context, strace string, pid int, window time.Duration, dir string) int64 {
	out := filepath.Join(dir, "strace.txt")
	ctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	cmd := exec.CommandContext(ctx, strace, "-f", "-c", "-e", "trace=fsync,fdatasync", "-o", out, "-p", strconv.Itoa(pid))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	// strace prints its summary when interrupted, not when killed.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	_ = cmd.Run()
	if ctx.Err() == nil {
		return -1 // strace ended before the window did: it could not attach
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return -1
	}
	return parseStraceCalls(string(b), "fsync", "fdatasync")
}

// parseStraceCalls sums the calls column of strace -c's summary for the
// named system calls. strace writes no table at all when it saw none of
// the calls it traced, so an empty summary is 0; anything else without a
// table is -1.
func parseStraceCalls(summary string, names ...string) int64 {
	var n int64
	sawTable := strings.TrimSpace(summary) == ""
	for line := range strings.Lines(summary) {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "%" && f[1] == "time" {
			sawTable = true
			continue
		}
		if len(f) < 5 {
			continue
		}
		name := f[len(f)-1]
		for _, want := range names {
			if name == want {
				c, err := strconv.ParseInt(f[3], 10, 64)
				if err == nil {
					n += c
				}
			}
		}
	}
	if !sawTable {
		return -1
	}
	return n
}

func waitHealthy(ctx context.Context, url string, limit time.Duration, exited <-chan struct{}) error {
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("the server exited")
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		last = err
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("no answer in %s: %v", limit, last)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
