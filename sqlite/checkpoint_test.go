package sqlite

import (
	"database/sql"
	"encoding/binary"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestParseWALIndex(t *testing.T) {
	t.Parallel()
	hdr := func(version, mx, backfill uint32, init byte, same bool) []byte {
		b := make([]byte, 136)
		ne := binary.NativeEndian
		ne.PutUint32(b[0:], version)
		b[12] = init
		ne.PutUint32(b[16:], mx)
		copy(b[48:96], b[0:48])
		if !same {
			b[48+20] ^= 1
		}
		ne.PutUint32(b[96:], backfill)
		return b
	}
	for _, tc := range []struct {
		name   string
		b      []byte
		frames uint32
		ok     bool
	}{
		{"backlog", hdr(walIndexVersion, 1200, 200, 1, true), 1000, true},
		{"all copied", hdr(walIndexVersion, 50, 50, 1, true), 0, true},
		{"backfill past end (torn or reset)", hdr(walIndexVersion, 3, 9, 1, true), 0, false},
		{"unknown version", hdr(3007001, 1200, 0, 1, true), 0, false},
		{"not initialised", hdr(walIndexVersion, 1200, 0, 0, true), 0, false},
		{"copies differ (being written)", hdr(walIndexVersion, 1200, 0, 1, false), 0, false},
		{"short", make([]byte, 40), 0, false},
	} {
		frames, ok := parseWALIndex(tc.b)
		if frames != tc.frames || ok != tc.ok {
			t.Errorf("%s: got %d, %v; want %d, %v", tc.name, frames, ok, tc.frames, tc.ok)
		}
	}
}

// walDB opens a new database file in WAL mode, without a checkpointer,
// holding one table t.
func walDB(t *testing.T) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cp.db")
	db, err := OpenDB(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (v TEXT)`); err != nil {
		t.Fatal(err)
	}
	return path, db
}

// TestCheckpointer: writes that are not the store's stay in the WAL (no
// checkpoint, hence no fsync) until the backlog is large; a store commit
// is checkpointed soon. The backlog is read from the real -shm file.
func TestCheckpointer(t *testing.T) {
	t.Parallel()
	path, db := walDB(t)
	cp := startCheckpointer(db, path, checkpointPolicy{Soon: 10 * time.Millisecond, Check: 20 * time.Millisecond, Backlog: 200})
	cp.passes = make(chan struct{}, 16)
	defer cp.stop()
	backlog := func() uint32 {
		t.Helper()
		n, ok := walBacklog(path + "-shm")
		if !ok {
			t.Fatal("the WAL index could not be read")
		}
		return n
	}
	// A few small writes of someone else's: below the backlog, several
	// backlog checks pass without a checkpoint.
	for range 5 {
		if _, err := db.Exec(`INSERT INTO t VALUES ('heartbeat')`); err != nil {
			t.Fatal(err)
		}
	}
	before := backlog()
	if before == 0 {
		t.Fatal("writes left no frames in the WAL")
	}
	select {
	case <-cp.passes:
		t.Fatal("a small backlog was checkpointed")
	case <-time.After(200 * time.Millisecond):
	}
	if got := backlog(); got < before {
		t.Fatalf("backlog went from %d to %d without a checkpoint", before, got)
	}
	// A store commit: checkpointed soon, the backlog is gone.
	cp.kick()
	select {
	case <-cp.passes:
	case <-time.After(10 * time.Second):
		t.Fatal("a store commit was not checkpointed")
	}
	if got := backlog(); got != 0 {
		t.Fatalf("backlog %d after the checkpoint", got)
	}
	// Someone else's writes past the backlog: checkpointed by the check.
	big := make([]byte, 8000)
	for i := range big {
		big[i] = 'x'
	}
	for range 150 {
		if _, err := db.Exec(`INSERT INTO t VALUES (?)`, string(big)); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-cp.passes:
	case <-time.After(10 * time.Second):
		t.Fatalf("a backlog of %d frames was not checkpointed", backlog())
	}
}

// TestCheckpointRetriesPastReader: a reader on an older snapshot keeps a
// checkpoint from reaching the last commit; the checkpointer tries again
// until it does, rather than leaving the commit unsynced until the next.
func TestCheckpointRetriesPastReader(t *testing.T) {
	t.Parallel()
	path, db := walDB(t)
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		t.Fatal(err)
	}
	ro, err := sql.Open("sqlite", ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	reader, err := ro.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := reader.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	cp := startCheckpointer(db, path, checkpointPolicy{Soon: 5 * time.Millisecond, Check: time.Hour})
	cp.passes = make(chan struct{}, 64)
	defer cp.stop()
	if _, err := db.Exec(`INSERT INTO t VALUES ('committed while a reader holds an older snapshot')`); err != nil {
		t.Fatal(err)
	}
	cp.kick()
	for i := range 3 {
		select {
		case <-cp.passes:
		case <-time.After(10 * time.Second):
			t.Fatalf("pass %d did not come: the checkpointer gave up while the reader held the WAL", i+1)
		}
	}
	if got, _ := walBacklog(path + "-shm"); got == 0 {
		t.Fatal("the checkpoint copied past a reader's snapshot (the test does not hold one)")
	}
	reader.Rollback()
	deadline := time.After(10 * time.Second)
	for {
		if got, ok := walBacklog(path + "-shm"); ok && got == 0 {
			return
		}
		select {
		case <-cp.passes:
		case <-deadline:
			t.Fatal("the commit was never checkpointed after the reader left")
		}
	}
}

// TestWALBacklogNotRegular: a FIFO in the -shm file's place is refused
// at once, not waited on.
func TestWALBacklogNotRegular(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "x.db-shm")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no mkfifo:", err)
	}
	done := make(chan bool, 1)
	go func() { _, ok := walBacklog(fifo); done <- ok }()
	select {
	case ok := <-done:
		if ok {
			t.Fatal("a FIFO was read as a WAL index")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("walBacklog blocked on a FIFO")
	}
	syncWAL(fifo) // must not block either
}
