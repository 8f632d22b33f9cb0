package main

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/doctor"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/secretbox"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/storerules"
)

// sandboxProbeArg is argv[1] of this program run inside the sandbox by
// signoff doctor: the binary is its own probe, so nothing has to be
// installed for the check (the sandbox package re-executes itself the same
// way).
const sandboxProbeArg = "__signoff_doctor_probe"

func init() {
	if len(os.Args) > 2 && os.Args[1] == sandboxProbeArg {
		os.Exit(sandboxProbe(os.Args[2:]))
	}
}

// sandboxProbe runs inside the sandbox. "ok" prints and exits 0; "connect
// ADDR" exits 0 when a TCP connection to ADDR succeeds and 3 when it fails.
func sandboxProbe(args []string) int {
	switch {
	case args[0] == "ok":
		fmt.Println("ran")
		return 0
	case args[0] == "connect" && len(args) == 2:
		c, err := net.DialTimeout("tcp", args[1], 2*time.Second)
		if err != nil {
			var se *os.SyscallError
			if errors.As(err, &se) {
				err = se.Err
			}
			fmt.Println("connect failed:", err)
			return 3
		}
		c.Close()
		fmt.Println("connected to", args[1])
		return 0
	}
	fmt.Fprintln(os.Stderr, "usage: ok | connect ADDR")
	return 2
}

func runDoctor(ctx context.Context, e *env, args []string) error {
	var d dbFlags
	var timeout time.Duration
	fs := newFlags("doctor", "signoff doctor [--db PATH|URL] [--key FILE] [--timeout DURATION] [--json]")
	addDBFlags(fs, e, &d)
	fs.DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait for the database to answer")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if timeout <= 0 {
		fmt.Fprintln(e.stderr, "--timeout must be positive")
		return errUsage
	}
	o := gatherDoctor(ctx, e, &d, timeout)
	checks := doctor.Evaluate(o)
	if d.json {
		if err := printJSON(e, struct {
			OK           bool                `json:"ok"`
			Checks       []doctor.Check      `json:"checks"`
			Observations doctor.Observations `json:"observations"`
		}{!doctor.Failed(checks), checks, o}); err != nil {
			return err
		}
	} else {
		for _, c := range checks {
			fmt.Fprintln(e.stdout, doctor.Line(c))
		}
	}
	if doctor.Failed(checks) {
		return &exitStatus{1}
	}
	return nil
}

// gatherDoctor observes the deployment; it judges nothing.
func gatherDoctor(ctx context.Context, e *env, d *dbFlags, timeout time.Duration) doctor.Observations {
	var o doctor.Observations
	o.Key = observeKey(d.keyPath())
	o.SecretKey = observeSecretKey(e.getenv("SIGNOFF_SECRET_KEY"))
	o.Sandbox = observeSandbox(ctx)
	observeDatabase(ctx, d.db, timeout, &o)
	return o
}

func observeKey(path string) doctor.Key {
	k := doctor.Key{Path: path}
	st, err := os.Stat(path)
	if err != nil {
		if !errors.Is(err, iofs.ErrNotExist) {
			k.Err = err.Error()
		}
		return k
	}
	k.Exists, k.Mode = true, st.Mode()
	if st.IsDir() {
		k.Err = "it is a directory"
		return k
	}
	if st.Mode().Perm()&0o077 != 0 {
		return k // keys.Load refuses it; the check says why
	}
	priv, err := keys.Load(path)
	if err != nil {
		k.Err = err.Error()
		return k
	}
	k.KeyID = keys.ID(priv.Public().(ed25519.PublicKey))
	return k
}

func observeSecretKey(v string) doctor.SecretKey {
	v = strings.TrimSpace(v)
	if v == "" {
		return doctor.SecretKey{}
	}
	s := doctor.SecretKey{Set: true}
	key, err := secretbox.ParseKey(v)
	if err == nil {
		var box *secretbox.Box
		if box, err = secretbox.New(key); err == nil {
			s.KeyID = box.KeyID()
		}
	}
	if err != nil {
		s.Err = err.Error() // never the value: secretbox's errors do not echo it
	}
	return s
}

// observeSandbox runs two commands in the backend the server would choose
// (sandbox.Default: bwrap, else namespaces, never none): one that must
// succeed, and one that must fail to connect to a listener on this
// machine's loopback.
func observeSandbox(ctx context.Context) doctor.Sandbox {
	r, err := sandbox.Default()
	if err != nil {
		return doctor.Sandbox{Unavailable: err.Error()}
	}
	s := doctor.Sandbox{Backend: r.Name()}
	if s.Backend == sandbox.BackendBwrap {
		if out, err := exec.CommandContext(ctx, "bwrap", "--version").Output(); err == nil {
			s.Version = strings.TrimSpace(string(out))
		}
	}
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		s.RunErr = "locate this program: " + err.Error()
		return s
	}
	const target = "/signoff-doctor/signoff"
	spec := func(args ...string) sandbox.Spec {
		return sandbox.Spec{
			Command:  append([]string{target, sandboxProbeArg}, args...),
			Env:      map[string]string{"PATH": "/usr/bin:/bin"},
			ReadOnly: []sandbox.Mount{{Host: exe, Target: target}},
			Limits:   sandbox.Limits{WallTime: 30 * time.Second},
		}
	}
	res, err := r.Run(ctx, spec("ok"))
	switch {
	case err != nil:
		s.RunErr = err.Error()
		return s
	case res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "ran"):
		s.RunErr = fmt.Sprintf("exit %d: %s", res.ExitCode, lastLine(res.Stderr, res.Stdout))
		return s
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.ConnectErr = "listen on this machine's loopback: " + err.Error()
		return s
	}
	var accepted atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	res, err = r.Run(ctx, spec("connect", ln.Addr().String()))
	// A connection that got through has been accepted by now, or soon.
	time.Sleep(50 * time.Millisecond)
	ln.Close()
	<-done
	s.HostAccepted = accepted.Load() > 0
	switch {
	case err != nil:
		s.ConnectErr = err.Error()
	case res.ExitCode == 0:
		s.Connected = true
	case res.ExitCode != 3:
		s.ConnectErr = fmt.Sprintf("exit %d: %s", res.ExitCode, lastLine(res.Stderr, res.Stdout))
	}
	s.ConnectOutput = strings.TrimSpace(string(res.Stdout))
	return s
}

// lastLine is the last non-empty line of the first output that has one.
func lastLine(outs ...[]byte) string {
	for _, b := range outs {
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if l := lines[len(lines)-1]; l != "" {
			return l
		}
	}
	return "no output"
}

// doctorDB is a database opened for reading without migrating it: doctor
// observes the schema as it is.
type doctorDB struct {
	db      *sql.DB
	dialect sqlstore.Dialect
	schema  sqlstore.Schema
	close   func()
}

func openDoctorDB(ctx context.Context, dsn string) (*doctorDB, error) {
	if isPostgres(dsn) {
		db, pool, err := postgres.OpenDB(ctx, dsn)
		if err != nil {
			return nil, err
		}
		return &doctorDB{db: db, dialect: postgres.Dialect, schema: postgres.Schema(db, pool), close: func() { db.Close(); pool.Close() }}, nil
	}
	db, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(dsn))
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	return &doctorDB{db: db, dialect: sqlite.Dialect, schema: sqlite.Schema(db), close: func() { db.Close() }}, nil
}

// redactURL drops the password from a postgres:// URL.
func redactURL(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

func observeDatabase(ctx context.Context, dsn string, timeout time.Duration, o *doctor.Observations) {
	d := &o.Database
	d.Timeout = timeout
	if isPostgres(dsn) {
		d.Dialect, d.Where = doctor.Postgres, redactURL(dsn)
	} else {
		d.Dialect, d.Where = doctor.SQLite, dsn
		st, err := os.Stat(dsn)
		switch {
		case errors.Is(err, iofs.ErrNotExist):
			d.Missing = true
			return
		case err != nil:
			d.Err = err.Error()
			return
		case st.IsDir():
			d.Err = "it is a directory"
			return
		}
	}
	// Every step gets the timeout: a server that stops answering half-way
	// through is reported, not waited for.
	step := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, timeout) }
	sctx, cancel := step()
	defer cancel()
	db, err := openDoctorDB(sctx, dsn)
	if err != nil {
		d.Err = err.Error()
		return
	}
	defer db.close()
	start := time.Now()
	q := "SELECT 1"
	if d.Dialect == doctor.SQLite {
		q = "SELECT count(*) FROM sqlite_master" // reads the file's header and schema
	}
	var n int
	err = db.db.QueryRowContext(sctx, q).Scan(&n)
	d.Latency = time.Since(start)
	switch {
	case err != nil && errors.Is(sctx.Err(), context.DeadlineExceeded):
		d.TimedOut = true
		return
	case err != nil:
		d.Err = err.Error()
		return
	}

	sctx, cancel = step()
	defer cancel()
	o.Schema = schemaState(sctx, db.db, db.schema)

	sctx, cancel = step()
	defer cancel()
	s, err := sqlstore.New(db.db, db.dialect, storeOptions())
	if err != nil {
		o.Ledger = doctor.Ledger{Checked: true, Err: err.Error()}
	} else {
		o.Ledger = observeLedger(sctx, s)
		if ids, err := s.SigningKeyIDs(sctx); err == nil {
			o.Key.LedgerChecked, o.Key.LedgerKeyIDs = true, ids
		}
	}

	sctx, cancel = step()
	defer cancel()
	o.Jobs = observeJobs(sctx, db.schema.River)

	if d.Dialect == doctor.Postgres {
		sctx, cancel = step()
		defer cancel()
		o.Clock = observeClock(sctx, db.db)
	}
}

// schemaState reads the migration state the store's Ready check reads
// (goose's versions over the dialect's embedded migrations) without
// migrating anything: goose would create its table on a database that has
// none, so that case is looked for first.
func schemaState(ctx context.Context, db *sql.DB, sc sqlstore.Schema) doctor.Schema {
	st := doctor.Schema{Checked: true}
	ok, err := sc.River.GetExecutor().TableExists(ctx, &riverdriver.TableExistsParams{Table: "goose_db_version"})
	if err != nil {
		st.Err = err.Error()
		return st
	}
	if !ok {
		st.NoTable = true
		return st
	}
	prov, err := goose.NewProvider(sc.Goose, db, sc.FS)
	if err == nil {
		st.Current, st.Latest, err = prov.GetVersions(ctx)
	}
	if err == nil && st.Current <= st.Latest {
		st.Pending, err = prov.HasPending(ctx)
	}
	if err != nil {
		st.Err = err.Error()
	}
	return st
}

func observeLedger(ctx context.Context, s *sqlstore.DB) doctor.Ledger {
	l := doctor.Ledger{Checked: true}
	ids, err := s.LedgerWorkspaceIDs(ctx)
	if err != nil {
		l.Err = err.Error()
		return l
	}
	for _, id := range ids {
		seq, err := s.HeadSeq(ctx, id)
		switch {
		case signoff.ErrorCode(err) == signoff.ENOTFOUND:
			l.Heads = append(l.Heads, doctor.Head{Workspace: id, Missing: true})
		case err != nil:
			l.Err = fmt.Sprintf("head of %s: %v", id, err)
			return l
		default:
			l.Heads = append(l.Heads, doctor.Head{Workspace: id, Seq: seq})
		}
	}
	return l
}

// riverTables are the tables River's workers need.
var riverTables = []string{"river_job", "river_leader", "river_migration", "river_queue"}

func observeJobs(ctx context.Context, drv riverdriver.Driver[*sql.Tx]) doctor.Jobs {
	j := doctor.Jobs{Checked: true}
	for _, t := range riverTables {
		ok, err := drv.GetExecutor().TableExists(ctx, &riverdriver.TableExistsParams{Table: t})
		if err != nil {
			j.Err = err.Error()
			return j
		}
		if !ok {
			j.MissingTables = append(j.MissingTables, t)
		}
	}
	if len(j.MissingTables) > 0 {
		return j
	}
	rm, err := rivermigrate.New(drv, &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		j.Err = err.Error()
		return j
	}
	res, err := rm.Validate(ctx, nil)
	switch {
	case err != nil:
		j.Err = err.Error()
	case !res.OK:
		j.Unapplied = strings.Join(res.Messages, "; ")
	}
	return j
}

// observeClock compares this machine's clock with PostgreSQL's now(),
// taken as of the middle of the round trip.
func observeClock(ctx context.Context, db *sql.DB) doctor.Clock {
	c := doctor.Clock{Checked: true}
	var at time.Time
	t0 := time.Now()
	err := db.QueryRowContext(ctx, "SELECT now()").Scan(&at)
	t1 := time.Now()
	if err != nil {
		c.Err = err.Error()
		return c
	}
	c.RoundTrip = t1.Sub(t0)
	c.Skew = at.Sub(t0.Add(c.RoundTrip / 2))
	return c
}

// storeOptions are the options of a store the CLI opens on a database it
// was handed (doctor, backup): the store's rules, nothing else.
func storeOptions() sqlstore.Options {
	var o sqlstore.Options
	storerules.Fill(&o.Intake, &o.Passkeys, &o.Addressing, &o.Outbox)
	return o
}
