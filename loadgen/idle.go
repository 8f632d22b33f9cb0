package loadgen

// IdleResult is what `signoff bench idle` measures of an idle server over
// a window: what its JSON output holds, and what BenchIdle reports.
type IdleResult struct {
	Backend string  `json:"backend"`
	Window  float64 `json:"window_s"`
	// Ticks are the server's user+system CPU ticks (USER_HZ, 100 a
	// second on Linux) in the window; CorePercent is the share of one
	// core they are.
	Ticks       int64   `json:"cpu_ticks"`
	CorePercent float64 `json:"core_percent"`
	// WriteCalls are write-type system calls (/proc/PID/io syscw).
	WriteCalls int64 `json:"write_syscalls"`
	// Fsyncs are fsync and fdatasync calls counted by strace; -1 when
	// strace is not installed or could not attach.
	Fsyncs int64 `json:"fsyncs"`
	// Transactions are the database's commits and rollbacks in the window
	// (PostgreSQL: pg_stat_database, the measuring reads included); -1 on
	// SQLite.
	Transactions int64 `json:"db_transactions"`
}
