// Package pgtest gives tests a fresh, empty PostgreSQL database on a real server.
//
// If SIGNOFF_TEST_POSTGRES is set, it is the postgres:// URL of an existing
// server, and each database is created there. Otherwise the first call to
// NewDatabase starts a throwaway cluster (initdb + pg_ctl) in a temporary
// directory, private to the test binary, which Main stops and removes.
//
// If neither is possible, NewDatabase skips the test, or fails it when
// SIGNOFF_REQUIRE_POSTGRES=1 (as CI sets, so a missing PostgreSQL cannot make
// CI pass vacuously).
//
// Use it from each package's TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	envServer  = "SIGNOFF_TEST_POSTGRES"
	envRequire = "SIGNOFF_REQUIRE_POSTGRES"
)

var (
	startOnce sync.Once
	adminURL  *url.URL // URL of a maintenance database on the server in use
	startErr  error    // why the server could not be set up; nil on success
	unavail   string   // non-empty: PostgreSQL is not installed (skip, not fail)

	mu      sync.Mutex
	running *cluster // the throwaway cluster, if this process started one
)

// Main wraps testing.M.Run: it runs the tests, then stops the throwaway cluster
// if one was started. Use as
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	defer stopCluster()
	return m.Run()
}

// Available reports whether NewDatabase can work here without starting
// anything; when it cannot, the string says why.
func Available() (string, bool) {
	mu.Lock()
	failed := startErr
	mu.Unlock()
	if failed != nil { // an earlier NewDatabase tried and failed
		return failed.Error(), false
	}
	if os.Getenv(envServer) != "" {
		return "", true
	}
	if _, err := findBinDir(); err != nil {
		return err.Error(), false
	}
	if _, err := serverCredential(); err != nil {
		return err.Error(), false
	}
	return "", true
}

// NewDatabase returns a postgres:// URL of a new, empty database that is
// dropped at tb.Cleanup.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	startOnce.Do(setup)
	if unavail != "" {
		msg := "pgtest: " + unavail + "; install the PostgreSQL server (e.g. apt-get install postgresql) or set " +
			envServer + "=postgres://user:pass@host:port/db"
		if required() {
			tb.Fatal(msg + " (" + envRequire + " is set, so this fails instead of skipping)")
		}
		tb.Skip(msg)
	}
	if startErr != nil {
		tb.Fatalf("pgtest: %v", startErr)
	}

	name := "pgtest_" + randomHex(8)
	if err := adminExec("CREATE DATABASE " + name); err != nil {
		tb.Fatalf("pgtest: create database %s: %v", name, err)
	}
	tb.Cleanup(func() {
		if err := adminExec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"); err != nil {
			tb.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u := *adminURL
	u.Path = "/" + name
	u.RawPath = ""
	return u.String()
}

// setup runs once per process: it picks the external server or starts a
// cluster, and records the outcome for NewDatabase and Available.
func setup() {
	u, missing, err := connectOrStart()
	mu.Lock()
	defer mu.Unlock()
	adminURL, unavail, startErr = u, missing, err
}

func connectOrStart() (admin *url.URL, missing string, err error) {
	if raw := os.Getenv(envServer); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return nil, "", fmt.Errorf("%s must be a postgres:// URL", envServer)
		}
		version, err := serverVersion(u)
		if err != nil {
			return nil, "", fmt.Errorf("connect to %s (%s): %w", envServer, u.Redacted(), err)
		}
		fmt.Fprintf(os.Stderr, "pgtest: using PostgreSQL %s at %s from %s\n", version, u.Host, envServer)
		return u, "", nil
	}

	binDir, err := findBinDir()
	if err != nil {
		return nil, err.Error(), nil
	}
	cred, err := serverCredential()
	if err != nil {
		return nil, err.Error(), nil
	}
	began := time.Now()
	c, err := startCluster(binDir, cred)
	mu.Lock()
	running = c // set even on failure, so Main removes what was created
	mu.Unlock()
	if err != nil {
		return nil, "", err
	}
	u := &url.URL{
		Scheme:   "postgres",
		User:     url.User("postgres"),
		Host:     "127.0.0.1:" + strconv.Itoa(c.port),
		Path:     "/postgres",
		RawQuery: "sslmode=disable",
	}
	version, err := serverVersion(u)
	if err != nil {
		return nil, "", fmt.Errorf("connect to throwaway cluster at %s: %w", u.Host, err)
	}
	fmt.Fprintf(os.Stderr, "pgtest: started PostgreSQL %s at %s in %v (data dir %s)\n",
		version, u.Host, time.Since(began).Round(time.Millisecond), c.dataDir())
	return u, "", nil
}

func stopCluster() {
	mu.Lock()
	c := running
	running = nil
	mu.Unlock()
	if c != nil {
		c.stop()
	}
}

// adminExec runs one statement on the maintenance database, on its own
// connection, since pgx.Conn is not safe for concurrent use by parallel tests.
func adminExec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL.String())
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

func serverVersion(u *url.URL) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u.String())
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	var v string
	err = conn.QueryRow(ctx, "SHOW server_version").Scan(&v)
	return v, err
}

func required() bool {
	ok, _ := strconv.ParseBool(os.Getenv(envRequire))
	return ok
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails, per crypto/rand
	return hex.EncodeToString(b)
}
