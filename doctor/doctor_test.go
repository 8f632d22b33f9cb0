package doctor

import (
	"strings"
	"testing"
	"time"
)

// healthy is a deployment every check passes.
func healthy() Observations {
	return Observations{
		Database:  Database{Dialect: Postgres, Where: "postgres://signoff@db/signoff", Timeout: 5 * time.Second, Latency: 3 * time.Millisecond},
		Schema:    Schema{Checked: true, Current: 12, Latest: 12},
		Ledger:    Ledger{Checked: true, Heads: []Head{{Workspace: "ws_a", Seq: 40}, {Workspace: "ws_b", Seq: 7}}},
		Jobs:      Jobs{Checked: true},
		Sandbox:   Sandbox{Backend: "bwrap", Version: "bubblewrap 0.8.0", ConnectOutput: "connect failed: connection refused"},
		Key:       Key{Path: "/etc/signoff/signoff.key", Exists: true, Mode: 0o600, KeyID: "k1", LedgerChecked: true, LedgerKeyIDs: []string{"k1"}},
		SecretKey: SecretKey{},
		Clock:     Clock{Checked: true, Skew: 300 * time.Millisecond, RoundTrip: 2 * time.Millisecond},
	}
}

func TestDoctorEvaluate(t *testing.T) {
	unreachable := func(o *Observations) {
		o.Database.Err = "connection refused"
		o.Schema, o.Ledger, o.Jobs, o.Clock = Schema{}, Ledger{}, Jobs{}, Clock{}
		o.Key.LedgerChecked, o.Key.LedgerKeyIDs = false, nil
	}
	tests := []struct {
		name   string
		edit   func(*Observations)
		check  string
		status Status
		// detail and fix must contain these.
		detail, fix string
		failed      bool
	}{
		{"healthy database", func(*Observations) {}, CheckDatabase, OK, "answered in 3ms", "", false},
		{"healthy schema", func(*Observations) {}, CheckSchema, OK, "version 12, current", "", false},
		{"healthy ledger", func(*Observations) {}, CheckLedger, OK, "2 workspace head(s) readable, highest seq 40", "", false},
		{"healthy jobs", func(*Observations) {}, CheckJobs, OK, "River's tables present", "", false},
		{"healthy sandbox", func(*Observations) {}, CheckSandbox, OK, "bwrap (bubblewrap 0.8.0)", "", false},
		{"healthy key", func(*Observations) {}, CheckKey, OK, "key k1, mode 0600, signs the ledger", "", false},
		{"secret key unset", func(*Observations) {}, CheckSecretKey, OK, "unset", "", false},
		{"small skew", func(*Observations) {}, CheckClock, OK, "300ms ahead of", "", false},

		{"sqlite file missing", func(o *Observations) {
			o.Database = Database{Dialect: SQLite, Where: "/srv/signoff.db", Missing: true}
		}, CheckDatabase, Fail, "no SQLite database at /srv/signoff.db", "--db", true},
		{"timeout", func(o *Observations) { o.Database.TimedOut = true }, CheckDatabase, Fail, "did not answer within 5s", "firewall", true},
		{"connection refused", unreachable, CheckDatabase, Fail, "connection refused", "credentials", true},
		{"unreachable skips schema", unreachable, CheckSchema, Skip, "database is unreachable", "", true},
		{"unreachable skips ledger", unreachable, CheckLedger, Skip, "unreachable", "", true},
		{"unreachable skips jobs", unreachable, CheckJobs, Skip, "unreachable", "", true},
		{"unreachable skips clock", unreachable, CheckClock, Skip, "unreachable", "", true},
		{"unreachable: key alone is judged", unreachable, CheckKey, OK, "key k1, mode 0600", "", true},

		{"no schema", func(o *Observations) { o.Schema = Schema{Checked: true, NoTable: true} }, CheckSchema, Fail, "no Signoff schema", "signoff migrate", true},
		{"no schema skips the ledger", func(o *Observations) {
			o.Schema = Schema{Checked: true, NoTable: true}
			o.Ledger.Err = "no such table: workspaces"
		}, CheckLedger, Skip, "no Signoff schema", "", true},
		{"pending", func(o *Observations) { o.Schema.Current, o.Schema.Pending = 10, true }, CheckSchema, Fail, "at version 10, this binary knows 12", "signoff migrate", true},
		{"schema ahead", func(o *Observations) { o.Schema.Current = 13 }, CheckSchema, Fail, "newer than this binary knows (12)", "same signoff version", true},
		{"schema unreadable", func(o *Observations) { o.Schema.Err = "permission denied" }, CheckSchema, Fail, "permission denied", "privileges", true},

		{"ledger unreadable", func(o *Observations) { o.Ledger.Err = "no such table: ledger_heads" }, CheckLedger, Fail, "no such table", "ledger verify", true},
		{"head missing", func(o *Observations) { o.Ledger.Heads = append(o.Ledger.Heads, Head{Workspace: "ws_c", Missing: true}) }, CheckLedger, Fail, "ws_c", "restore", true},
		{"no workspaces", func(o *Observations) { o.Ledger.Heads = nil }, CheckLedger, OK, "ledger is empty", "workspace create", false},

		{"river tables missing", func(o *Observations) { o.Jobs.MissingTables = []string{"river_job"} }, CheckJobs, Fail, "river_job", "signoff migrate", true},
		{"river behind", func(o *Observations) { o.Jobs.Unapplied = "Unapplied migrations: [6]" }, CheckJobs, Fail, "[6]", "signoff migrate", true},
		{"river unreadable", func(o *Observations) { o.Jobs.Err = "boom" }, CheckJobs, Fail, "boom", "privileges", true},

		{"only none", func(o *Observations) {
			o.Sandbox = Sandbox{Unavailable: "bwrap: not found; namespaces: operation not permitted"}
		}, CheckSandbox, Fail, `only "none", which isolates nothing`, "bubblewrap", true},
		{"sandbox cannot run", func(o *Observations) { o.Sandbox.RunErr = "exit 127" }, CheckSandbox, Fail, "could not run a command: exit 127", "user the server runs as", true},
		{"connect test cannot run", func(o *Observations) { o.Sandbox.ConnectErr = "mount failed" }, CheckSandbox, Fail, "mount failed", "", true},
		{"sandbox has network", func(o *Observations) { o.Sandbox.Connected, o.Sandbox.ConnectOutput = true, "connected\n" }, CheckSandbox, Fail, "reached this machine's network (connected)", "do not run", true},
		{"host saw a connection", func(o *Observations) { o.Sandbox.HostAccepted = true }, CheckSandbox, Fail, "has network access", "", true},

		{"key group-readable", func(o *Observations) { o.Key.Mode = 0o640 }, CheckKey, Fail, "mode 0640", "chmod 600 /etc/signoff/signoff.key", true},
		{"key world-readable", func(o *Observations) { o.Key.Mode = 0o604 }, CheckKey, Fail, "readable by group or others", "chmod 600", true},
		{"key missing, ledger signed", func(o *Observations) {
			o.Key = Key{Path: "signoff.key", LedgerChecked: true, LedgerKeyIDs: []string{"k1"}}
		}, CheckKey, Fail, "signed by key k1", "--key", true},
		{"key missing, nothing signed", func(o *Observations) { o.Key = Key{Path: "signoff.key", LedgerChecked: true} }, CheckKey, Warn, "no key at signoff.key", "creates it on first start", false},
		{"key dir unreadable", func(o *Observations) { o.Key = Key{Path: "/k/signoff.key", Err: "permission denied"} }, CheckKey, Fail, "cannot read /k/signoff.key", "permissions", true},
		{"key not a key", func(o *Observations) { o.Key.Err = "not a PEM private key" }, CheckKey, Fail, "not a usable key", "restore", true},
		{"key mismatch", func(o *Observations) { o.Key.LedgerKeyIDs = []string{"k2"} }, CheckKey, Fail, "holds key k1, but the ledger is signed by key k2", "--key", true},
		{"key, nothing signed yet", func(o *Observations) { o.Key.LedgerKeyIDs = nil }, CheckKey, OK, "nothing signed yet", "", false},

		{"secret key good", func(o *Observations) { o.SecretKey = SecretKey{Set: true, KeyID: "ab12cd34"} }, CheckSecretKey, OK, "well-formed (key id ab12cd34)", "", false},
		{"secret key bad", func(o *Observations) {
			o.SecretKey = SecretKey{Set: true, Err: "secretbox: SIGNOFF_SECRET_KEY decodes to 16 bytes, want 32"}
		}, CheckSecretKey, Fail, "decodes to 16 bytes", "openssl rand -hex 32", true},

		{"skew warn", func(o *Observations) { o.Clock.Skew = -5 * time.Second }, CheckClock, Warn, "5s behind", "NTP", false},
		{"skew at the warn line", func(o *Observations) { o.Clock.Skew = 2 * time.Second }, CheckClock, OK, "2s ahead of", "", false},
		{"skew fail", func(o *Observations) { o.Clock.Skew = 31 * time.Second }, CheckClock, Fail, "31s ahead of", "NTP", true},
		{"skew unreadable", func(o *Observations) { o.Clock.Err = "boom" }, CheckClock, Warn, "boom", "", false},
		{"sqlite clock", func(o *Observations) {
			o.Database.Dialect, o.Clock = SQLite, Clock{}
		}, CheckClock, OK, "shares this machine's clock", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := healthy()
			tt.edit(&o)
			cs := Evaluate(o)
			if len(cs) != 8 {
				t.Fatalf("%d checks, want 8", len(cs))
			}
			var got *Check
			for i := range cs {
				if cs[i].Name == tt.check {
					got = &cs[i]
				}
			}
			if got == nil {
				t.Fatalf("no %q check in %v", tt.check, cs)
			}
			if got.Status != tt.status || !strings.Contains(got.Detail, tt.detail) || !strings.Contains(got.Fix, tt.fix) {
				t.Errorf("got %s\nwant status %s, detail containing %q, fix containing %q", Line(*got), tt.status, tt.detail, tt.fix)
			}
			if (got.Status == Fail || got.Status == Warn) && got.Fix == "" {
				t.Errorf("%s without a fix: %s", got.Status, Line(*got))
			}
			if Failed(cs) != tt.failed {
				t.Errorf("Failed = %v, want %v:\n%s", Failed(cs), tt.failed, lines(cs))
			}
		})
	}
}

func TestDoctorOrderAndLine(t *testing.T) {
	cs := Evaluate(healthy())
	want := []string{CheckDatabase, CheckSchema, CheckLedger, CheckJobs, CheckSandbox, CheckKey, CheckSecretKey, CheckClock}
	for i, c := range cs {
		if c.Name != want[i] {
			t.Fatalf("check %d is %q, want %q", i, c.Name, want[i])
		}
	}
	if Failed(cs) {
		t.Fatalf("a healthy deployment failed:\n%s", lines(cs))
	}
	l := Line(Check{Name: CheckKey, Status: Fail, Detail: "too open", Fix: "chmod 600 k"})
	if l != "FAIL  signing key  too open -- fix: chmod 600 k" {
		t.Errorf("Line = %q", l)
	}
	l = Line(Check{Name: CheckDatabase, Status: Fail, Detail: "failed to connect:\n\t127.0.0.1:1: refused\n\t::1: refused", Fix: "start it"})
	if l != "FAIL  database     failed to connect: 127.0.0.1:1: refused ::1: refused -- fix: start it" {
		t.Errorf("Line of a multi-line error = %q", l)
	}
	if strings.Contains(Line(Check{Name: CheckClock, Status: OK, Detail: "fine"}), "fix") {
		t.Error("a line without a fix mentions one")
	}
}

func lines(cs []Check) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(Line(c) + "\n")
	}
	return b.String()
}
