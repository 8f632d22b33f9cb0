package sqlite

import (
	"database/sql"
	"encoding/binary"
	"os"
	"sync"
	"syscall"
	"time"
)

// Signoff runs SQLite with synchronous=NORMAL in WAL mode: a commit
// writes the WAL without fsync, and the checkpoint fsyncs it. So the
// checkpoint is what makes a commit survive a power loss, and it must
// follow the store's commits closely: a passive checkpoint runs
// Soon after the first commit since the last one (about every Soon
// while commits keep coming, as before). A passive checkpoint never
// waits for readers or writers; what it cannot copy now it copies next
// time, and no commit pays for it.
//
// Writes that are not the store's (River's leader election every few
// seconds, job bookkeeping) need no such promptness: a job whose
// completion is lost runs again. They are checkpointed when the WAL holds
// Backlog frames, read every Check from the WAL index (the -shm file)
// without writing anything. An idle server thus leaves River's
// heartbeats in the WAL and fsyncs nothing for about an hour.

// checkpointPolicy tunes the checkpointer; zero fields take the
// defaults.
type checkpointPolicy struct {
	Soon    time.Duration // after a store commit (default 250 ms)
	Check   time.Duration // how often the backlog is read (default 30 s)
	Backlog uint32        // frames that make a checkpoint (default 1000, SQLite's own autocheckpoint)
}

type checkpointer struct {
	db     *sql.DB
	shm    string
	wal    string
	p      checkpointPolicy
	kicks  chan struct{}
	done   chan struct{}
	ended  chan struct{}
	once   sync.Once
	passes chan struct{} // tests: one value per checkpoint run
}

func startCheckpointer(db *sql.DB, path string, p checkpointPolicy) *checkpointer {
	if p.Soon <= 0 {
		p.Soon = 250 * time.Millisecond
	}
	if p.Check <= 0 {
		p.Check = 30 * time.Second
	}
	if p.Backlog == 0 {
		p.Backlog = 1000
	}
	c := &checkpointer{db: db, shm: path + "-shm", wal: path + "-wal", p: p, kicks: make(chan struct{}, 1), done: make(chan struct{}), ended: make(chan struct{})}
	go c.run()
	return c
}

// kick says the store committed: checkpoint within Soon.
func (c *checkpointer) kick() {
	select {
	case c.kicks <- struct{}{}:
	default:
	}
}

func (c *checkpointer) stop() {
	c.once.Do(func() { close(c.done); <-c.ended })
}

func (c *checkpointer) run() {
	defer close(c.ended)
	check := time.NewTicker(c.p.Check)
	defer check.Stop()
	var soon <-chan time.Time // set while a checkpoint is due
	var soonAt time.Time      // when it is due
	unsynced := false         // a store commit since the WAL was last synced
	retry := c.p.Soon
	for {
		select {
		case <-c.done:
			return
		case <-c.kicks:
			unsynced = true
			// Within Soon of a commit, even while a long retry is pending;
			// an earlier pending one stands (commits never postpone it).
			if soon == nil || time.Until(soonAt) > c.p.Soon {
				soon, soonAt = time.After(c.p.Soon), time.Now().Add(c.p.Soon)
			}
		case <-soon:
			soon = nil
			if c.checkpoint() {
				unsynced, retry = false, c.p.Soon
				continue
			}
			// A reader still on an older snapshot can keep a passive
			// checkpoint from reaching the last commit, and then from
			// syncing it: sync the WAL itself (once per new commit), so
			// the commit is durable now, and try the copy again, less
			// often the longer the reader stays.
			if unsynced {
				syncWAL(c.wal)
				unsynced = false
			}
			soon, soonAt = time.After(retry), time.Now().Add(retry)
			retry = min(retry*2, 5*time.Second)
		case <-check.C:
			if n, ok := walBacklog(c.shm); !ok || n >= c.p.Backlog {
				c.checkpoint()
			}
		}
	}
}

// checkpoint runs a passive checkpoint and reports whether it copied the
// whole WAL.
func (c *checkpointer) checkpoint() (complete bool) {
	var busy, log, done int64
	err := c.db.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done)
	if c.passes != nil {
		select {
		case c.passes <- struct{}{}:
		default:
		}
	}
	return err == nil && busy == 0 && done >= log
}

// walBacklog reads how many WAL frames are not yet copied into the
// database from the WAL index header (https://sqlite.org/walformat.html:
// two copies of a 48-byte header, mxFrame at offset 16, then nBackfill at
// offset 96, in native byte order). ok is false when the file cannot be
// read or the header is not one this code knows (or is being written:
// the two copies differ); the caller then checkpoints, as it always used
// to.
func walBacklog(shm string) (frames uint32, ok bool) {
	// Non-blocking, and only a regular file: a FIFO or device put in its
	// place must not stall the checkpointer.
	f, err := os.OpenFile(shm, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return 0, false
	}
	var b [136]byte
	if _, err := f.ReadAt(b[:], 0); err != nil {
		return 0, false
	}
	return parseWALIndex(b[:])
}

// walIndexVersion is the WAL index format SQLite has written since 3.7.0.
const walIndexVersion = 3007000

func parseWALIndex(b []byte) (frames uint32, ok bool) {
	if len(b) < 100 {
		return 0, false
	}
	ne := binary.NativeEndian
	if ne.Uint32(b[0:]) != walIndexVersion || b[12] != 1 || string(b[0:48]) != string(b[48:96]) {
		return 0, false
	}
	mx, backfill := ne.Uint32(b[16:]), ne.Uint32(b[96:])
	if backfill > mx {
		return 0, false // torn or reset mid-read: checkpoint to be sure
	}
	return mx - backfill, true
}

// syncWAL fsyncs the WAL file: it makes the commits in it durable when a
// checkpoint could not (readers held it back). Best effort: an error
// leaves them to the next checkpoint, as before.
func syncWAL(wal string) {
	f, err := os.OpenFile(wal, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		_ = f.Sync()
	}
}
