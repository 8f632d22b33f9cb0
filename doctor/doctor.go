// Package doctor judges a Signoff deployment. `signoff doctor` gathers
// Observations (it connects to the database, reads the key file, runs a
// command in the sandbox); Evaluate turns them into Checks, each ok, warn,
// FAIL or skip with a plain-language fix. Evaluate does no I/O, so every
// rule is tested as a table.
package doctor

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"
)

// Status is a check's verdict.
type Status string

const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "FAIL"
	// Skip: not checked, because something it needs failed (the database
	// is unreachable); that something has its own FAIL.
	Skip Status = "skip"
)

// Check is one line of the report.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	// Detail says what was seen.
	Detail string `json:"detail"`
	// Fix says what to do about it, when there is anything to do.
	Fix string `json:"fix,omitempty"`
}

// Names of the checks, in report order.
const (
	CheckDatabase  = "database"
	CheckSchema    = "migrations"
	CheckLedger    = "ledger"
	CheckJobs      = "job tables"
	CheckSandbox   = "sandbox"
	CheckKey       = "signing key"
	CheckSecretKey = "secret key"
	CheckClock     = "clock"
)

// Clock skew thresholds between this machine and a PostgreSQL server.
const (
	SkewWarn = 2 * time.Second
	SkewFail = 30 * time.Second
)

// Observations are the facts gathered about one deployment.
type Observations struct {
	Database  Database  `json:"database"`
	Schema    Schema    `json:"schema"`
	Ledger    Ledger    `json:"ledger"`
	Jobs      Jobs      `json:"jobs"`
	Sandbox   Sandbox   `json:"sandbox"`
	Key       Key       `json:"key"`
	SecretKey SecretKey `json:"secret_key"`
	Clock     Clock     `json:"clock"`
}

// Dialects.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// Database is whether the database answered.
type Database struct {
	Dialect string `json:"dialect"` // SQLite or Postgres
	// Where is the SQLite file, or the PostgreSQL URL without its password.
	Where string `json:"where"`
	// Missing: there is no SQLite file at Where.
	Missing  bool          `json:"missing,omitempty"`
	TimedOut bool          `json:"timed_out,omitempty"`
	Timeout  time.Duration `json:"timeout"`
	// Err is why connecting or the first query failed.
	Err     string        `json:"error,omitempty"`
	Latency time.Duration `json:"latency"`
}

// Reachable reports whether the database answered a query.
func (d Database) Reachable() bool { return !d.Missing && !d.TimedOut && d.Err == "" }

// Schema is the migration state: the goose versions the store's Ready
// check compares.
type Schema struct {
	Checked bool `json:"checked"`
	// NoTable: the database has no migration table, so no Signoff schema.
	NoTable bool   `json:"no_table,omitempty"`
	Current int64  `json:"current"` // highest version applied to the database
	Latest  int64  `json:"latest"`  // highest version this binary knows
	Pending bool   `json:"pending"` // migrations this binary knows are not applied
	Err     string `json:"error,omitempty"`
}

// Head is one workspace's signed chain head.
type Head struct {
	Workspace string `json:"workspace"`
	Seq       int64  `json:"seq"`
	// Missing: the workspace has no head row.
	Missing bool `json:"missing,omitempty"`
}

// Ledger is whether the chain heads could be read.
type Ledger struct {
	Checked bool   `json:"checked"`
	Heads   []Head `json:"heads"`
	Err     string `json:"error,omitempty"`
}

// Jobs is the state of River's tables.
type Jobs struct {
	Checked       bool     `json:"checked"`
	MissingTables []string `json:"missing_tables,omitempty"`
	// Unapplied is River's own message when its migrations are behind.
	Unapplied string `json:"unapplied,omitempty"`
	Err       string `json:"error,omitempty"`
}

// Sandbox is what happened when the backend the server would choose ran
// two commands: one that must succeed, and one that tries to connect to a
// listener on this machine's loopback and must fail.
type Sandbox struct {
	// Backend is the isolated backend chosen (bwrap, namespaces), empty
	// when none works here.
	Backend string `json:"backend,omitempty"`
	Version string `json:"version,omitempty"`
	// Unavailable is why no isolated backend works.
	Unavailable string `json:"unavailable,omitempty"`
	// RunErr is why the command that must succeed did not.
	RunErr string `json:"run_error,omitempty"`
	// Connected: the connection attempt from inside succeeded.
	Connected bool `json:"connected"`
	// HostAccepted: the listener outside saw a connection.
	HostAccepted bool `json:"host_accepted"`
	// ConnectOutput is what the connection attempt printed.
	ConnectOutput string `json:"connect_output,omitempty"`
	// ConnectErr is why the connection attempt could not run at all.
	ConnectErr string `json:"connect_error,omitempty"`
}

// Key is the server signing key file.
type Key struct {
	Path   string      `json:"path"`
	Exists bool        `json:"exists"`
	Mode   fs.FileMode `json:"mode"`
	// Err is why the file could not be used (unreadable, not a key).
	Err   string `json:"error,omitempty"`
	KeyID string `json:"key_id,omitempty"`
	// LedgerChecked: LedgerKeyIDs were read from the database.
	LedgerChecked bool `json:"ledger_checked"`
	// LedgerKeyIDs are the keys the chain heads are signed with.
	LedgerKeyIDs []string `json:"ledger_key_ids,omitempty"`
}

// SecretKey is SIGNOFF_SECRET_KEY. The value itself is never observed
// here, only whether it parses.
type SecretKey struct {
	Set   bool   `json:"set"`
	Err   string `json:"error,omitempty"`
	KeyID string `json:"key_id,omitempty"`
}

// Clock compares this machine's clock with the database's.
type Clock struct {
	Checked bool `json:"checked"`
	// Skew is the database's clock minus this machine's.
	Skew      time.Duration `json:"skew"`
	RoundTrip time.Duration `json:"round_trip"`
	Err       string        `json:"error,omitempty"`
}

// Evaluate judges the observations, one check per aspect, in report order.
func Evaluate(o Observations) []Check {
	return []Check{
		database(o.Database),
		schema(o.Database, o.Schema),
		ledgerCheck(o.Database, o.Schema, o.Ledger),
		jobs(o.Database, o.Jobs),
		sandboxCheck(o.Sandbox),
		key(o.Database, o.Key),
		secretKey(o.SecretKey),
		clock(o.Database, o.Clock),
	}
}

// Failed reports whether any check failed.
func Failed(cs []Check) bool {
	return slices.ContainsFunc(cs, func(c Check) bool { return c.Status == Fail })
}

// Line renders a check as one line of text: line breaks in an error (a
// driver's, say) become spaces.
func Line(c Check) string {
	s := fmt.Sprintf("%-4s  %-11s  %s", c.Status, c.Name, oneLine(c.Detail))
	if c.Fix != "" {
		s += " -- fix: " + oneLine(c.Fix)
	}
	return s
}

func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

func skipped(name string) Check {
	return Check{Name: name, Status: Skip, Detail: "not checked: the database is unreachable"}
}

func database(d Database) Check {
	c := Check{Name: CheckDatabase}
	switch {
	case d.Missing:
		c.Status, c.Detail = Fail, fmt.Sprintf("no SQLite database at %s", d.Where)
		c.Fix = "pass --db (or set SIGNOFF_DB) to the server's database file; signoff serve creates it on first start"
	case d.TimedOut:
		c.Status, c.Detail = Fail, fmt.Sprintf("%s %s did not answer within %s", d.Dialect, d.Where, d.Timeout)
		c.Fix = "check that the database server runs and that this machine can reach it (host, port, firewall)"
		if d.Dialect == SQLite {
			c.Fix = "another process holds a lock on the file for too long; check for a stuck process using it"
		}
	case d.Err != "":
		c.Status, c.Detail = Fail, fmt.Sprintf("%s %s: %s", d.Dialect, d.Where, d.Err)
		c.Fix = "check the URL, the credentials (~/.pgpass or PGPASSWORD) and that the server runs"
		if d.Dialect == SQLite {
			c.Fix = "check that the file is a Signoff database and readable by this user; restore it from a backup if it is damaged"
		}
	default:
		c.Status, c.Detail = OK, fmt.Sprintf("%s %s answered in %s", d.Dialect, d.Where, round(d.Latency))
	}
	return c
}

func schema(d Database, s Schema) Check {
	c := Check{Name: CheckSchema}
	switch {
	case !d.Reachable() || !s.Checked:
		return skipped(c.Name)
	case s.Err != "":
		c.Status, c.Detail = Fail, "could not read the migration state: "+s.Err
		c.Fix = "check the database user's privileges: it must be able to read the goose_db_version table"
	case s.NoTable:
		c.Status, c.Detail = Fail, "the database has no Signoff schema (no migration table)"
		c.Fix = "run signoff migrate --db ... (signoff serve also migrates on start), or point --db at the right database"
	case s.Current > s.Latest:
		c.Status, c.Detail = Fail, fmt.Sprintf("schema version %d is newer than this binary knows (%d): a newer signoff migrated it", s.Current, s.Latest)
		c.Fix = "run doctor with the same signoff version as the server, or upgrade this binary; never run an older server on this database"
	case s.Pending:
		c.Status, c.Detail = Fail, fmt.Sprintf("migrations pending: the schema is at version %d, this binary knows %d; /readyz answers 503 until they run", s.Current, s.Latest)
		c.Fix = "run signoff migrate --db ... (or restart signoff serve, which migrates on start)"
	default:
		c.Status, c.Detail = OK, fmt.Sprintf("schema at version %d, current", s.Current)
	}
	return c
}

func ledgerCheck(d Database, s Schema, l Ledger) Check {
	c := Check{Name: CheckLedger}
	if !d.Reachable() || !l.Checked {
		return skipped(c.Name)
	}
	if s.NoTable {
		c.Status, c.Detail = Skip, "not checked: the database has no Signoff schema"
		return c
	}
	var missing []string
	var top int64
	for _, h := range l.Heads {
		if h.Missing {
			missing = append(missing, h.Workspace)
		}
		top = max(top, h.Seq)
	}
	switch {
	case l.Err != "":
		c.Status, c.Detail = Fail, "could not read the ledger heads: "+l.Err
		c.Fix = "run signoff ledger verify for details; if the schema is behind, run signoff migrate first"
	case len(missing) > 0:
		c.Status, c.Detail = Fail, fmt.Sprintf("no chain head for workspace(s) %s", strings.Join(missing, ", "))
		c.Fix = "run signoff ledger verify; a removed head means the database was edited: restore it from a backup that verifies"
	case len(l.Heads) == 0:
		c.Status, c.Detail = OK, "no workspaces yet: the ledger is empty"
		c.Fix = "create one with signoff workspace create"
	default:
		c.Status, c.Detail = OK, fmt.Sprintf("%d workspace head(s) readable, highest seq %d (signoff ledger verify checks the whole chain)", len(l.Heads), top)
	}
	return c
}

func jobs(d Database, j Jobs) Check {
	c := Check{Name: CheckJobs}
	switch {
	case !d.Reachable() || !j.Checked:
		return skipped(c.Name)
	case j.Err != "":
		c.Status, c.Detail = Fail, "could not check River's tables: "+j.Err
		c.Fix = "check the database user's privileges; signoff migrate creates the tables"
	case len(j.MissingTables) > 0:
		c.Status, c.Detail = Fail, "River's table(s) missing: "+strings.Join(j.MissingTables, ", ")
		c.Fix = "run signoff migrate --db ... (background jobs such as notifications and agent runs need them)"
	case j.Unapplied != "":
		c.Status, c.Detail = Fail, "River's migrations are behind: "+j.Unapplied
		c.Fix = "run signoff migrate --db ..."
	default:
		c.Status, c.Detail = OK, "River's tables present and migrated"
	}
	return c
}

func sandboxCheck(s Sandbox) Check {
	c := Check{Name: CheckSandbox}
	name := s.Backend
	if s.Version != "" {
		name += " (" + s.Version + ")"
	}
	switch {
	case s.Backend == "":
		c.Status = Fail
		c.Detail = "no isolated sandbox works here, only \"none\", which isolates nothing: the bug loop will not run reproductions or candidate tests"
		if s.Unavailable != "" {
			c.Detail += " (" + s.Unavailable + ")"
		}
		c.Fix = "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap), or allow unprivileged user namespaces " +
			"(sysctl user.max_user_namespaces=15000; on Debian/Ubuntu also kernel.unprivileged_userns_clone=1 and, on Ubuntu 24.04, " +
			"kernel.apparmor_restrict_unprivileged_userns=0); in a container, run it with a seccomp profile that permits them"
	case s.RunErr != "":
		c.Status, c.Detail = Fail, fmt.Sprintf("backend %s could not run a command: %s", name, s.RunErr)
		c.Fix = "check the backend's error above; run signoff doctor as the user the server runs as"
	case s.ConnectErr != "":
		c.Status, c.Detail = Fail, fmt.Sprintf("backend %s could not run the network test: %s", name, s.ConnectErr)
		c.Fix = "check the backend's error above; run signoff doctor as the user the server runs as"
	case s.Connected || s.HostAccepted:
		c.Status, c.Detail = Fail, fmt.Sprintf("a command in backend %s reached this machine's network (%s): the sandbox has network access", name, strings.TrimSpace(s.ConnectOutput))
		c.Fix = "do not run the server here until this is fixed: candidates' tests could reach your network; report it as a bug"
	default:
		c.Status, c.Detail = OK, fmt.Sprintf("backend %s runs commands; a connection from inside to this machine failed as it must (%s)", name, strings.TrimSpace(s.ConnectOutput))
	}
	return c
}

func key(d Database, k Key) Check {
	c := Check{Name: CheckKey}
	signedBy := strings.Join(k.LedgerKeyIDs, ", ")
	switch {
	case !k.Exists && len(k.LedgerKeyIDs) > 0:
		c.Status, c.Detail = Fail, fmt.Sprintf("no key at %s, but the ledger is signed by key %s: the server cannot write", k.Path, signedBy)
		c.Fix = "pass --key (or set SIGNOFF_KEY) to the server's key file, or restore signoff.key from your backup"
	case !k.Exists && k.Err != "":
		c.Status, c.Detail = Fail, fmt.Sprintf("cannot read %s: %s", k.Path, k.Err)
		c.Fix = "check the file's path and its directory's permissions"
	case !k.Exists:
		c.Status, c.Detail = Warn, fmt.Sprintf("no key at %s", k.Path)
		c.Fix = "pass --key (or set SIGNOFF_KEY) if the server keeps it elsewhere; otherwise the server creates it on first start: back it up then"
		if !d.Reachable() {
			c.Fix = "pass --key (or set SIGNOFF_KEY) to the server's key file"
		}
	case k.Mode.Perm()&0o077 != 0:
		c.Status, c.Detail = Fail, fmt.Sprintf("%s is readable by group or others (mode %#o): the server refuses it", k.Path, k.Mode.Perm())
		c.Fix = fmt.Sprintf("chmod 600 %s (and make sure it is owned by the server's user)", k.Path)
	case k.Err != "":
		c.Status, c.Detail = Fail, fmt.Sprintf("%s is not a usable key: %s", k.Path, k.Err)
		c.Fix = "restore the key file from your backup; a new key cannot vouch for the ledger's existing history"
	case k.LedgerChecked && len(k.LedgerKeyIDs) > 0 && !slices.Contains(k.LedgerKeyIDs, k.KeyID):
		c.Status, c.Detail = Fail, fmt.Sprintf("%s holds key %s, but the ledger is signed by key %s: the server refuses to start with it", k.Path, k.KeyID, signedBy)
		c.Fix = "pass --key (or set SIGNOFF_KEY) to the key the ledger is signed with"
	default:
		c.Status, c.Detail = OK, fmt.Sprintf("%s: key %s, mode %#o", k.Path, k.KeyID, k.Mode.Perm())
		switch {
		case k.LedgerChecked && len(k.LedgerKeyIDs) > 0:
			c.Detail += ", signs the ledger"
		case k.LedgerChecked:
			c.Detail += ", nothing signed yet"
		}
	}
	return c
}

func secretKey(s SecretKey) Check {
	c := Check{Name: CheckSecretKey}
	switch {
	case !s.Set:
		c.Status, c.Detail = OK, "SIGNOFF_SECRET_KEY unset: channel secrets are sealed with a key derived from the signing key"
	case s.Err != "":
		c.Status, c.Detail = Fail, "SIGNOFF_SECRET_KEY is malformed: "+s.Err+"; the server refuses to start"
		c.Fix = "set it to 32 bytes as 64 hex characters or base64 (openssl rand -hex 32); if channels were already sealed with an earlier value, restore that value instead, or they become undeliverable"
	default:
		c.Status, c.Detail = OK, fmt.Sprintf("SIGNOFF_SECRET_KEY set and well-formed (key id %s)", s.KeyID)
	}
	return c
}

func clock(d Database, k Clock) Check {
	c := Check{Name: CheckClock}
	if d.Dialect == SQLite {
		c.Status, c.Detail = OK, "SQLite: the database shares this machine's clock"
		return c
	}
	if !d.Reachable() || !k.Checked {
		return skipped(c.Name)
	}
	skew := k.Skew.Abs()
	dir := "ahead of"
	if k.Skew < 0 {
		dir = "behind"
	}
	detail := fmt.Sprintf("the database's clock is %s %s this machine's (round trip %s)", round(skew), dir, round(k.RoundTrip))
	fix := "run NTP on both machines (timedatectl set-ntp true, or chrony): expiry of tokens, cards and leases, and ledger times, come from the servers' clocks"
	switch {
	case k.Err != "":
		c.Status, c.Detail = Warn, "could not read the database's clock: "+k.Err
		c.Fix = "run signoff doctor again; if it persists, compare the clocks by hand (SELECT now() against date -u)"
	case skew > SkewFail:
		c.Status, c.Detail, c.Fix = Fail, detail, fix
	case skew > SkewWarn:
		c.Status, c.Detail, c.Fix = Warn, detail, fix
	default:
		c.Status, c.Detail = OK, detail
	}
	return c
}

// round shortens a duration for display.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
