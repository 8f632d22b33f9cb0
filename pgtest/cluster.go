package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cluster is a throwaway PostgreSQL cluster owned by this test process.
type cluster struct {
	binDir   string
	dir      string              // temp dir: data/, postgres.log, unix socket
	cred     *syscall.Credential // nil unless running as root
	port     int
	watchdog *exec.Cmd // removes the cluster if this process dies without stopping it
	lifeline *os.File  // write end of the watchdog's stdin; it sees EOF when we die
}

func (c *cluster) dataDir() string { return filepath.Join(c.dir, "data") }
func (c *cluster) logFile() string { return filepath.Join(c.dir, "postgres.log") }

// serverBinaries must all be in the bin dir we use.
var serverBinaries = []string{"initdb", "pg_ctl", "postgres"}

// findBinDir locates the PostgreSQL server binaries: `pg_config --bindir`,
// then PATH, then the usual distribution locations, newest version first.
func findBinDir() (string, error) {
	var candidates []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		candidates = append(candidates, filepath.Dir(p))
	}
	for _, pattern := range []string{"/usr/lib/postgresql/*/bin", "/usr/pgsql-*/bin"} {
		dirs, _ := filepath.Glob(pattern)
		sort.Slice(dirs, func(i, j int) bool { return majorVersion(dirs[i]) > majorVersion(dirs[j]) })
		candidates = append(candidates, dirs...)
	}
	candidates = append(candidates, "/usr/local/pgsql/bin")
	for _, dir := range candidates {
		if hasServerBinaries(dir) {
			return dir, nil
		}
	}
	return "", errors.New("no PostgreSQL server binaries (initdb, pg_ctl, postgres) found via `pg_config --bindir`, PATH, /usr/lib/postgresql/*/bin, /usr/pgsql-*/bin or /usr/local/pgsql/bin")
}

func hasServerBinaries(dir string) bool {
	for _, name := range serverBinaries {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// majorVersion extracts 15 from /usr/lib/postgresql/15/bin or /usr/pgsql-15/bin.
func majorVersion(binDir string) float64 {
	base := filepath.Base(filepath.Dir(binDir))
	v, _ := strconv.ParseFloat(strings.TrimPrefix(base, "pgsql-"), 64)
	return v
}

// serverCredential returns nil when not root. initdb and postgres refuse to
// run as root, so as root we run them as the postgres system user, or nobody.
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
	}
	return nil, errors.New("running as root, and neither a postgres nor a nobody user exists to run the PostgreSQL server as")
}

// startCluster creates and starts a cluster. On error the returned cluster,
// if non-nil, still needs stop() to remove what was created.
func startCluster(binDir string, cred *syscall.Credential) (*cluster, error) {
	dir, err := os.MkdirTemp(tempParent(cred), "pgtest-")
	if err != nil {
		return nil, err
	}
	c := &cluster{binDir: binDir, dir: dir, cred: cred}
	if cred != nil {
		if err := chownTree(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return c, err
		}
	}
	// Started before initdb, so even a crash during startup leaves nothing behind.
	if err := c.startWatchdog(); err != nil {
		return c, fmt.Errorf("start watchdog: %w", err)
	}

	out, err := c.run("initdb", "-D", c.dataDir(), "-A", "trust", "-U", "postgres",
		"--no-sync", "-E", "UTF8", "--locale=C")
	if err != nil {
		return c, fmt.Errorf("initdb: %w\n%s", err, out)
	}

	// Another test binary may take the port between our probe and the bind; retry.
	for attempt := 1; ; attempt++ {
		if c.port, err = freePort(); err != nil {
			return c, err
		}
		if err := c.writeConfig(); err != nil {
			return c, err
		}
		out, err := c.run("pg_ctl", "start", "-w", "-t", "60", "-D", c.dataDir(), "-l", c.logFile())
		if err == nil {
			return c, nil
		}
		logTail := tail(c.logFile(), 30)
		if attempt < 3 && strings.Contains(logTail, "could not bind") {
			continue
		}
		return c, fmt.Errorf("pg_ctl start on port %d: %w\n%s\n--- tail of %s ---\n%s",
			c.port, err, out, c.logFile(), logTail)
	}
}

// writeConfig sets the port and throwaway-cluster settings. The file is
// rewritten (not appended) so retries with another port stay clean.
func (c *cluster) writeConfig() error {
	sockDir := c.dir
	if len(sockDir) > 90 { // unix socket paths are limited to ~107 bytes
		sockDir = ""
	}
	conf := fmt.Sprintf(`# written by pgtest: a throwaway cluster for tests, durability off
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
shared_buffers = 128MB
`, c.port, strings.ReplaceAll(sockDir, "'", "''"))
	// postgresql.auto.conf is read last, so it overrides postgresql.conf.
	path := filepath.Join(c.dataDir(), "postgresql.auto.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return err
	}
	if c.cred != nil {
		return os.Chown(path, int(c.cred.Uid), int(c.cred.Gid))
	}
	return nil
}

// startWatchdog starts a shell, as the server user and in its own process
// group (so Ctrl-C reaches only us), that blocks reading a pipe only this
// process holds open. When this process exits for any reason (panic, test
// timeout, SIGKILL) the pipe closes and the shell stops the cluster and
// removes its directory. pg_ctl detaches the postmaster with setsid, so
// without this a crashed test binary would leak a running server.
func (c *cluster) startWatchdog() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd := exec.Command("/bin/sh", "-c",
		`read _; "$0" stop -D "$1" -m immediate -s >/dev/null 2>&1; rm -rf "$2"`,
		filepath.Join(c.binDir, "pg_ctl"), c.dataDir(), c.dir)
	cmd.Stdin = r // stdout/stderr stay /dev/null so `go test` never waits on them
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.cred}
	if err := cmd.Start(); err != nil {
		w.Close()
		return err
	}
	c.watchdog, c.lifeline = cmd, w
	return nil
}

// stop shuts the server down and removes its directory.
func (c *cluster) stop() {
	if c.watchdog != nil { // we clean up ourselves; the watchdog is not needed
		_ = c.watchdog.Process.Kill()
		_ = c.watchdog.Wait()
		c.lifeline.Close()
	}
	if _, err := os.Stat(filepath.Join(c.dataDir(), "postmaster.pid")); err == nil {
		if out, err := c.run("pg_ctl", "stop", "-D", c.dataDir(), "-m", "immediate", "-w"); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: pg_ctl stop: %v\n%s", err, out)
		}
	}
	if err := os.RemoveAll(c.dir); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: remove %s: %v\n", c.dir, err)
	}
}

// run runs a PostgreSQL binary as the server user and returns its output.
func (c *cluster) run(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(c.binDir, name), args...)
	cmd.Dir = c.dir // the server user may not be able to enter our working directory
	cmd.Env = serverEnv()
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	cmd.WaitDelay = 10 * time.Second // don't hang if a child keeps the output pipe open
	return cmd.CombinedOutput()
}

// serverEnv is our environment without PG* variables (PGDATA, PGPORT,
// PGOPTIONS, ...) that would redirect or reconfigure the throwaway server.
func serverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}

// tempParent is where the cluster's temp dir goes: os.TempDir(), unless we are
// root and the server user could not reach it (e.g. TMPDIR inside a 0700 dir).
func tempParent(cred *syscall.Credential) string {
	dir := os.TempDir()
	if cred == nil {
		return dir
	}
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return "/tmp"
		}
		if d == filepath.Dir(d) {
			return dir
		}
	}
}

func chownTree(root string, uid, gid int) error {
	return filepath.WalkDir(root, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last n lines of a file, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(bytes.ToValidUTF8(b, nil)), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
