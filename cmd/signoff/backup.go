package main

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/ledger"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// signoff backup copies a live SQLite database with VACUUM INTO: SQLite
// writes the copy from one read transaction, so it is a consistent
// snapshot however many writers the server has meanwhile (WAL lets them
// go on). The copy is then opened read-only and checked: integrity_check,
// and the ledger verified with the server's key, as signoff ledger verify
// does. signoff restore checks a backup the same way before it puts it in
// place, and never deletes the database it replaces.

func runBackup(ctx context.Context, e *env, args []string) error {
	var d dbFlags
	var out string
	fs := newFlags("backup", "signoff backup --db PATH --out FILE [--key FILE] [--json]   (a postgres:// URL prints the pg_dump procedure)")
	addDBFlags(fs, e, &d)
	fs.StringVar(&out, "out", "", "the backup file to write (must not exist; written with mode 0600)")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if isPostgres(d.db) {
		postgresBackupHelp(e.stdout, d.db, out, d.keyPath())
		return nil
	}
	if err := required(fs, e, "out", out); err != nil {
		return err
	}
	if _, err := os.Stat(d.db); err != nil {
		return signoff.Errorf(signoff.ENOTFOUND, "no database at %s: pass --db (or set SIGNOFF_DB)", d.db)
	}
	if _, err := os.Lstat(out); err == nil {
		return signoff.Errorf(signoff.ECONFLICT, "%s already exists: signoff backup never overwrites a file; choose another --out", out)
	}
	// The key first: a backup that cannot be verified is not worth taking.
	trusted, err := trustedKey(d.keyPath())
	if err != nil {
		return err
	}
	start := time.Now()
	if err := vacuumInto(ctx, d.db, out); err != nil {
		return err
	}
	took := time.Since(start)
	rep, err := checkCopy(ctx, out, trusted)
	if err != nil {
		return fmt.Errorf("the backup %s was written but does not check out: %w", out, err)
	}
	rep.Source, rep.Key, rep.Seconds = d.db, d.keyPath(), fmt.Sprintf("%.3f", took.Seconds())
	if d.json {
		if err := printJSON(e, rep); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(e.stdout, "backed up %s to %s: %d bytes, mode %#o, in %ss\n", rep.Source, rep.File, rep.Bytes, rep.Mode, rep.Seconds)
		printCopyReport(e.stdout, rep)
		fmt.Fprintf(e.stdout, "the server signing key is not in the backup: keep a copy of %s with it, as secret as the key itself\n", rep.Key)
	}
	if n := rep.failed(); n > 0 {
		return &verifyFailed{n: n}
	}
	return nil
}

func runRestore(ctx context.Context, e *env, args []string) error {
	var d dbFlags
	var from string
	var force bool
	fs := newFlags("restore", "signoff restore --from FILE --db PATH [--force] [--key FILE] [--json]")
	addDBFlags(fs, e, &d)
	fs.StringVar(&from, "from", "", "the backup file, as written by signoff backup")
	fs.BoolVar(&force, "force", false, "restore over a non-empty database, moving it aside to PATH.before-restore-TIMESTAMP first (it is never deleted)")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if err := required(fs, e, "from", from); err != nil {
		return err
	}
	if isPostgres(d.db) {
		postgresBackupHelp(e.stderr, d.db, from, d.keyPath())
		return signoff.Errorf(signoff.EINVALID, "signoff restore restores SQLite files: restore PostgreSQL with pg_restore, as shown above")
	}
	fromSt, err := os.Stat(from)
	if err != nil {
		return signoff.Errorf(signoff.ENOTFOUND, "no backup at %s", from)
	}
	if !fromSt.Mode().IsRegular() || fromSt.Size() == 0 {
		return signoff.Errorf(signoff.EINVALID, "%s is not a backup file (empty, or not a regular file)", from)
	}
	dbSt, err := os.Stat(d.db)
	switch {
	case err == nil && dbSt.IsDir():
		return signoff.Errorf(signoff.EINVALID, "--db %s is a directory: name the database file", d.db)
	case err == nil && os.SameFile(fromSt, dbSt):
		return signoff.Errorf(signoff.EINVALID, "--from and --db are the same file")
	case err != nil && !errors.Is(err, iofs.ErrNotExist):
		return err
	}
	inUse, err := notEmpty(d.db)
	if err != nil {
		return err
	}
	if inUse && !force {
		return signoff.Errorf(signoff.ECONFLICT, "%s exists and is not empty: stop the server, then pass --force to move it aside (to %s.before-restore-TIMESTAMP) and restore over it", d.db, d.db)
	}
	trusted, err := trustedKey(d.keyPath())
	if err != nil {
		return err
	}
	dir := filepath.Dir(d.db)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}

	// Everything is checked on a copy beside the target, so the target is
	// only touched by a rename, and only once the copy has verified.
	tmp, err := copyFile(from, dir, "."+filepath.Base(d.db)+".restore-*.tmp")
	if err != nil {
		return err
	}
	defer removeDB(tmp) // a no-op once renamed
	pre, err := checkCopy(ctx, tmp, nil)
	if err != nil {
		return fmt.Errorf("refusing to restore %s: %w", from, err)
	}
	if pre.Schema.NoTable {
		return fmt.Errorf("refusing to restore %s: it is not a Signoff database (no migration table)", from)
	}
	if pre.Schema.Current > pre.Schema.Latest {
		return signoff.Errorf(signoff.ECONFLICT, "refusing to restore %s: its schema version %d is newer than this signoff knows (%d), so a newer version made it: restore it with that version of signoff or a later one", from, pre.Schema.Current, pre.Schema.Latest)
	}
	// Opening the store migrates the copy.
	s, err := sqlite.Open(ctx, tmp, sqlstore.Options{})
	if err != nil {
		return fmt.Errorf("refusing to restore %s: %w", from, err)
	}
	checked, err := verifyLedgers(ctx, s, trusted)
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("refusing to restore %s: %w", from, err)
	}
	if n := failedLedgers(checked); n > 0 {
		printLedgers(e.stderr, checked)
		return fmt.Errorf("refusing to restore %s: %d workspace ledger(s) failed verification; %s is untouched", from, n, d.db)
	}

	// Whatever is there goes aside, never away: an empty file too, and
	// -wal and -shm files, which SQLite would otherwise apply to the
	// restored database.
	var aside string
	for _, sfx := range []string{"", "-wal", "-shm"} {
		if _, err := os.Lstat(d.db + sfx); err == nil {
			if aside, err = moveAside(d.db); err != nil {
				return err
			}
			break
		}
	}
	if err := os.Rename(tmp, d.db); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}

	// Verify again where the server will find it.
	s, err = sqlite.Open(ctx, d.db, sqlstore.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	ledgers, err := verifyLedgers(ctx, s, trusted)
	if err != nil {
		return err
	}
	cur, _, err := s.SchemaVersion(ctx, sqlite.Schema(s.SQL()))
	if err != nil {
		return err
	}
	st, err := os.Stat(d.db)
	if err != nil {
		return err
	}
	rep := struct {
		From          string         `json:"from"`
		DB            string         `json:"db"`
		Bytes         int64          `json:"bytes"`
		Integrity     string         `json:"integrity"`
		SchemaFrom    int64          `json:"schema_version_of_backup"`
		SchemaVersion int64          `json:"schema_version"`
		Ledgers       []ledgerReport `json:"ledgers"`
		MovedAside    string         `json:"moved_aside,omitempty"`
	}{from, d.db, st.Size(), pre.Integrity, pre.Schema.Current, cur, ledgers, aside}
	if d.json {
		if err := printJSON(e, rep); err != nil {
			return err
		}
	} else {
		if aside != "" {
			fmt.Fprintf(e.stdout, "moved the old database aside to %s\n", aside)
		}
		fmt.Fprintf(e.stdout, "restored %s to %s: %d bytes\n", from, d.db, rep.Bytes)
		fmt.Fprintf(e.stdout, "  integrity_check: %s\n", rep.Integrity)
		if rep.SchemaFrom != cur {
			fmt.Fprintf(e.stdout, "  schema migrated from version %d to %d\n", rep.SchemaFrom, cur)
		} else {
			fmt.Fprintf(e.stdout, "  schema version %d, current\n", cur)
		}
		printLedgers(e.stdout, ledgers)
	}
	if n := failedLedgers(ledgers); n > 0 {
		return &verifyFailed{n: n}
	}
	return nil
}

// trustedKey loads the public half of the server key the ledger must be
// signed with.
func trustedKey(path string) (map[string]ed25519.PublicKey, error) {
	pub, err := keys.LoadPublic(path)
	if errors.Is(err, iofs.ErrNotExist) {
		return nil, signoff.Errorf(signoff.EINVALID, "no key at %s to verify the ledger's signatures with: pass --key (or set SIGNOFF_KEY) to the server's signing key file, or its public key", path)
	} else if err != nil {
		return nil, err
	}
	return ledger.Trust(pub), nil
}

// snapshotDSN opens a database read-only without query_only, which would
// refuse VACUUM INTO (it writes, if only to another file).
func snapshotDSN(path string) string {
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(10000)")
	return "file:" + path + "?" + q.Encode()
}

// vacuumInto writes a consistent copy of src to out, which must not exist:
// it is created empty with mode 0600 first (O_EXCL), which VACUUM INTO
// accepts and keeps.
func vacuumInto(ctx context.Context, src, out string) (err error) {
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, iofs.ErrExist) {
		return signoff.Errorf(signoff.ECONFLICT, "%s already exists: signoff backup never overwrites a file; choose another --out", out)
	} else if err != nil {
		return err
	}
	f.Close()
	defer func() {
		if err != nil {
			removeDB(out) // ours: created above
		}
	}()
	db, err := sql.Open("sqlite", snapshotDSN(src))
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, out); err != nil {
		return fmt.Errorf("backup %s: %w", src, err)
	}
	if err := os.Chmod(out, 0o600); err != nil {
		return err
	}
	if err := syncFile(out); err != nil {
		return err
	}
	return syncDir(filepath.Dir(out))
}

type ledgerReport struct {
	ledger.Result
	OK      bool   `json:"ok"`
	BadSeq  int64  `json:"bad_seq,omitempty"`
	Problem string `json:"problem,omitempty"`
}

type copyReport struct {
	Source    string        `json:"source,omitempty"`
	File      string        `json:"file"`
	Bytes     int64         `json:"bytes"`
	Mode      iofs.FileMode `json:"mode"`
	Seconds   string        `json:"seconds,omitempty"`
	Integrity string        `json:"integrity"`
	Schema    struct {
		NoTable bool  `json:"no_table,omitempty"`
		Current int64 `json:"current"`
		Latest  int64 `json:"latest"`
	} `json:"schema"`
	// Ledgers is empty when no key was given (restore checks the copy's
	// ledger after migrating it).
	Ledgers []ledgerReport `json:"ledgers"`
	Key     string         `json:"key,omitempty"`
}

func (r copyReport) failed() int { return failedLedgers(r.Ledgers) }

// checkCopy opens a database copy read-only and checks it: integrity_check,
// the schema version, and, when trusted is set, every workspace's ledger.
// An error means the copy is not a usable database.
func checkCopy(ctx context.Context, path string, trusted map[string]ed25519.PublicKey) (copyReport, error) {
	rep := copyReport{File: path}
	st, err := os.Stat(path)
	if err != nil {
		return rep, err
	}
	rep.Bytes, rep.Mode = st.Size(), st.Mode().Perm()
	db, err := sql.Open("sqlite", sqlite.ReadOnlyDSN(path))
	if err != nil {
		return rep, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check(20)`)
	if err != nil {
		return rep, fmt.Errorf("integrity_check: %w", err)
	}
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return rep, fmt.Errorf("integrity_check: %w", err)
		}
		problems = append(problems, s)
	}
	if err := rows.Err(); err != nil {
		return rep, fmt.Errorf("integrity_check: %w", err)
	}
	rows.Close()
	if len(problems) != 1 || problems[0] != "ok" {
		return rep, fmt.Errorf("integrity_check: %s", strings.Join(problems, "; "))
	}
	rep.Integrity = "ok"
	sc := schemaState(ctx, db, sqlite.Schema(db))
	if sc.Err != "" {
		return rep, fmt.Errorf("schema version: %s", sc.Err)
	}
	rep.Schema.NoTable, rep.Schema.Current, rep.Schema.Latest = sc.NoTable, sc.Current, sc.Latest
	if trusted == nil {
		return rep, nil
	}
	if sc.NoTable {
		return rep, errors.New("not a Signoff database (no migration table)")
	}
	s, err := sqlstore.New(db, sqlite.Dialect, storeOptions())
	if err != nil {
		return rep, err
	}
	if rep.Ledgers, err = verifyLedgers(ctx, s, trusted); err != nil {
		return rep, err
	}
	return rep, nil
}

// verifyLedgers verifies every workspace's chain, as signoff ledger verify
// does. A chain that does not verify is a report with OK false; an error
// means verification could not run.
func verifyLedgers(ctx context.Context, s *sqlstore.DB, trusted map[string]ed25519.PublicKey) ([]ledgerReport, error) {
	ids, err := s.LedgerWorkspaceIDs(ctx)
	if err != nil {
		return nil, err
	}
	out := []ledgerReport{}
	for _, id := range ids {
		res, err := s.VerifyLedger(ctx, id, trusted)
		r := ledgerReport{Result: res, OK: err == nil}
		r.WorkspaceID = id
		var f *ledger.Failure
		switch {
		case errors.As(err, &f):
			r.BadSeq, r.Problem = f.Seq, f.Reason
		case err != nil:
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func failedLedgers(rs []ledgerReport) int {
	n := 0
	for _, r := range rs {
		if !r.OK {
			n++
		}
	}
	return n
}

func printCopyReport(w io.Writer, r copyReport) {
	fmt.Fprintf(w, "  integrity_check: %s\n", r.Integrity)
	fmt.Fprintf(w, "  schema version %d\n", r.Schema.Current)
	printLedgers(w, r.Ledgers)
}

func printLedgers(w io.Writer, rs []ledgerReport) {
	if len(rs) == 0 {
		fmt.Fprintln(w, "  no workspaces: the ledger is empty")
	}
	for _, r := range rs {
		if !r.OK {
			fmt.Fprintf(w, "  %s: ledger FAIL at seq %d: %s\n", r.WorkspaceID, r.BadSeq, r.Problem)
			continue
		}
		sig := "signatures checked"
		if !r.SignaturesOK {
			sig = "SIGNATURES NOT CHECKED"
		}
		fmt.Fprintf(w, "  %s: ledger OK, head seq %d, %d events, %d checkpoints, %s\n", r.WorkspaceID, r.HeadSeq, r.Events, r.Checkpoints, sig)
	}
}

// notEmpty reports whether a database file holds anything: a non-empty
// file, or a non-empty WAL beside it (whose commits are the database's).
func notEmpty(path string) (bool, error) {
	for _, p := range []string{path, path + "-wal"} {
		st, err := os.Stat(p)
		if errors.Is(err, iofs.ErrNotExist) {
			continue
		} else if err != nil {
			return false, err
		}
		if st.Size() > 0 {
			return true, nil
		}
	}
	return false, nil
}

// moveAside renames a database and its -wal and -shm files, those that
// exist, to PATH.before-restore-TIMESTAMP, never over an existing file.
func moveAside(path string) (string, error) {
	base := path + ".before-restore-" + time.Now().UTC().Format("20060102T150405Z")
	aside := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(aside); errors.Is(err, iofs.ErrNotExist) {
			break
		}
		aside = fmt.Sprintf("%s-%d", base, i)
	}
	for _, sfx := range []string{"", "-wal", "-shm"} {
		if _, err := os.Lstat(path + sfx); errors.Is(err, iofs.ErrNotExist) {
			continue
		}
		if _, err := os.Lstat(aside + sfx); err == nil {
			return "", fmt.Errorf("move %s aside: %s exists", path+sfx, aside+sfx)
		}
		if err := os.Rename(path+sfx, aside+sfx); err != nil {
			return "", fmt.Errorf("move %s aside: %w", path+sfx, err)
		}
	}
	return aside, syncDir(filepath.Dir(path))
}

// copyFile copies src to a new file in dir (named by pattern, mode 0600)
// and fsyncs it.
func copyFile(src, dir, pattern string) (_ string, err error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			out.Close()
			os.Remove(out.Name())
		}
	}()
	if err := out.Chmod(0o600); err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		return "", fmt.Errorf("copy %s: %w", src, err)
	}
	if err := out.Sync(); err != nil {
		return "", err
	}
	return out.Name(), out.Close()
}

// removeDB removes a database file we created and whatever SQLite left
// beside it.
func removeDB(path string) {
	for _, sfx := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + sfx)
	}
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// syncDir makes a rename or a new file in dir durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil && !errors.Is(err, iofs.ErrInvalid) {
		return err
	}
	return nil
}

// postgresBackupHelp prints the documented pg_dump and pg_restore
// procedure for dsn. It runs nothing, and prints no password.
func postgresBackupHelp(w io.Writer, dsn, out, keyPath string) {
	where := redactURL(dsn)
	restored := where
	var createdb string
	if u, err := url.Parse(where); err == nil {
		name := strings.TrimPrefix(u.Path, "/")
		if name == "" {
			name = "signoff"
		}
		u.Path = "/" + name + "_restored"
		restored = u.String()
		createdb = "createdb"
		if h := u.Hostname(); h != "" {
			createdb += " --host=" + shellQuote(h)
		}
		if p := u.Port(); p != "" {
			createdb += " --port=" + p
		}
		if u.User != nil && u.User.Username() != "" {
			createdb += " --username=" + shellQuote(u.User.Username())
		}
		createdb += " " + shellQuote(name+"_restored")
	}
	if out == "" {
		out = "signoff-" + time.Now().UTC().Format("20060102") + ".dump"
	}
	fmt.Fprintf(w, `PostgreSQL is backed up with PostgreSQL's own tools; signoff runs nothing here. The procedure:

  # 1. Dump: online and consistent (pg_dump reads one snapshot while the servers run)
  pg_dump --format=custom --no-owner --file=%[1]s %[2]s

  # 2. Restore into a new, empty database
  %[3]s
  pg_restore --no-owner --exit-on-error --dbname=%[4]s %[1]s

  # 3. Check it before any server uses it: the ledger must verify with the server's key
  signoff ledger verify --db %[4]s --key %[5]s
  signoff doctor --db %[4]s --key %[5]s

Then point the servers' --db at the restored database (or rename it into place with
ALTER DATABASE while no server is connected). Passwords are not printed: pg_dump and
pg_restore read them from ~/.pgpass or PGPASSWORD. The dump does not hold the server
signing key: back up %[5]s separately, and keep it as secret.
`, shellQuote(out), shellQuote(where), createdb, shellQuote(restored), shellQuote(keyPath))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@=+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
