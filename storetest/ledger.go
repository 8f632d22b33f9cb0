package storetest

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/channelrules"
	"github.com/signoff-dev/signoff/ledger"
	"github.com/signoff-dev/signoff/netguard"
	"github.com/signoff-dev/signoff/secretbox"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/webhook"
)

// fill appends n case events (one case, alternating escalate/resume).
func fill(t *testing.T, tb *bundle, n int) {
	t.Helper()
	c := tb.bug(t, "")
	cmds := []string{"escalate", "resume_triage"}
	for i := 0; i < n; i++ {
		if _, _, err := tb.store.TransitionCase(tb.ctx, tb.owner, c.ID, signoff.TransitionInput{Command: cmds[i%2]}); err != nil {
			t.Fatal(err)
		}
	}
}

func testLedgerCheckpoints(t *testing.T, b Backend) {
	tb := setup(t, b)
	fill(t, tb, ledger.CheckpointInterval+10)
	res := tb.verify(t)
	if res.Checkpoints != 1 || res.Events < ledger.CheckpointInterval+10 || !res.SignaturesOK {
		t.Fatalf("verify = %+v, want 1 checkpoint and signatures checked", res)
	}
	head, err := tb.store.HeadSeq(tb.ctx, tb.ws.ID)
	if err != nil || head != res.HeadSeq {
		t.Fatalf("HeadSeq = %d, %v; verify saw %d", head, err, res.HeadSeq)
	}
	// Verification with the wrong key fails on the first signed statement.
	_, other, _ := ed25519.GenerateKey(nil)
	_, err = tb.store.VerifyLedger(tb.ctx, tb.ws.ID, ledger.Trust(other.Public().(ed25519.PublicKey)))
	var f *ledger.Failure
	if !errors.As(err, &f) || f.Seq != ledger.CheckpointInterval {
		t.Fatalf("verify with a foreign key = %v, want failure at checkpoint %d", err, ledger.CheckpointInterval)
	}
}

// testLedgerTamper plays an attacker with write access to the database.
func testLedgerTamper(t *testing.T, b Backend) {
	tests := []struct {
		name    string
		tamper  []string // SQL with $1 = workspace id
		wantSeq int64
		reason  string
	}{
		{"edit payload", []string{`UPDATE ledger_events SET payload = replace(payload, 'escalate', 'approve') WHERE workspace_id = $1 AND seq = 7`}, 7, "edited"},
		{"delete event", []string{`DELETE FROM ledger_events WHERE workspace_id = $1 AND seq = 9`}, 9, "missing"},
		{"delete last event", []string{`DELETE FROM ledger_events WHERE workspace_id = $1 AND seq = (SELECT max(seq) FROM ledger_events WHERE workspace_id = $1)`}, 0, "missing"},
		{"swap two events", []string{
			`UPDATE ledger_events SET seq = -1 WHERE workspace_id = $1 AND seq = 5`,
			`UPDATE ledger_events SET seq = 5 WHERE workspace_id = $1 AND seq = 6`,
			`UPDATE ledger_events SET seq = 6 WHERE workspace_id = $1 AND seq = -1`}, 5, "prev_hash"},
		{"wipe everything", []string{
			`DELETE FROM ledger_events WHERE workspace_id = $1`,
			`DELETE FROM ledger_checkpoints WHERE workspace_id = $1`,
			`UPDATE ledger_heads SET seq = 0, hash = '` + ledger.Genesis + `', key_id = '', signed_at = 0 WHERE workspace_id = $1`}, 1, "empty"},
		{"event beyond the head", []string{
			`INSERT INTO ledger_events (workspace_id, seq, case_id, type, actor_id, occurred_at, payload, prev_hash, hash)
			 SELECT workspace_id, seq + 1, case_id, type, actor_id, occurred_at, payload, hash, hash FROM ledger_events
			 WHERE workspace_id = $1 AND seq = (SELECT max(seq) FROM ledger_events WHERE workspace_id = $1)`}, -1, "beyond the signed head"},
		{"edit actor", []string{`UPDATE ledger_events SET actor_id = 'act_00000000000000000000000000' WHERE workspace_id = $1 AND seq = 4`}, 4, "edited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tb := setup(t, b)
			fill(t, tb, 12)
			head, _ := tb.store.HeadSeq(tb.ctx, tb.ws.ID)
			want := tt.wantSeq
			switch want {
			case 0:
				want = head
			case -1:
				want = head + 1
			}
			tb.tamper(t, tb.store.SQL())
			for _, q := range tt.tamper {
				if _, err := tb.store.SQL().ExecContext(tb.ctx, q, tb.ws.ID); err != nil {
					t.Fatalf("tamper %q: %v", q, err)
				}
			}
			_, err := tb.store.VerifyLedger(tb.ctx, tb.ws.ID, ledger.Trust(tb.key.Public().(ed25519.PublicKey)))
			var f *ledger.Failure
			if !errors.As(err, &f) || f.Seq != want || !strings.Contains(f.Reason, tt.reason) {
				t.Fatalf("verify = %v, want failure at seq %d mentioning %q", err, want, tt.reason)
			}
		})
	}
	// Whole chains deleted, replaced or added: the registry's checks.
	t.Run("registry", func(t *testing.T) { t.Parallel(); testLedgerRegistry(t, b) })
	t.Run("registry backfill", func(t *testing.T) { t.Parallel(); testRegistryBackfill(t, b) })
	t.Run("rehash whole chain without the key", func(t *testing.T) {
		t.Parallel()
		tb := setup(t, b)
		fill(t, tb, 12)
		tb.tamper(t, tb.store.SQL())
		rehash(t, tb, 7)
		// Without the signatures the forgery is self-consistent...
		if _, err := tb.store.VerifyLedger(tb.ctx, tb.ws.ID, nil); err != nil {
			t.Fatalf("forged chain should be hash-consistent, got %v", err)
		}
		// ...but the signed head gives it away.
		_, err := tb.store.VerifyLedger(tb.ctx, tb.ws.ID, ledger.Trust(tb.key.Public().(ed25519.PublicKey)))
		var f *ledger.Failure
		if !errors.As(err, &f) || !strings.Contains(f.Reason, "signature") {
			t.Fatalf("verify = %v, want a signature failure", err)
		}
	})
}

// rehash edits event seq's payload and recomputes every later hash and the
// head, as an attacker with database access but no signing key could.
func rehash(t *testing.T, tb *bundle, seq int64) {
	t.Helper()
	db, ctx, ws := tb.store.SQL(), tb.ctx, tb.ws.ID
	rows, err := db.QueryContext(ctx, `SELECT workspace_id, seq, case_id, type, actor_id, occurred_at, payload, prev_hash, hash FROM ledger_events WHERE workspace_id = $1 ORDER BY seq`, ws)
	if err != nil {
		t.Fatal(err)
	}
	var evs []signoff.Event
	for rows.Next() {
		var e signoff.Event
		var at int64
		var payload []byte
		if err := rows.Scan(&e.WorkspaceID, &e.Seq, &e.CaseID, &e.Type, &e.ActorID, &at, &payload, &e.PrevHash, &e.Hash); err != nil {
			t.Fatal(err)
		}
		e.Payload = payload
		e.Time = timeFromMicros(at)
		evs = append(evs, e)
	}
	rows.Close()
	prev := ledger.Genesis
	for i := range evs {
		e := &evs[i]
		if e.Seq == seq {
			e.Payload = []byte(strings.Replace(string(e.Payload), "escalate", "approve", 1))
		}
		e.PrevHash = prev
		e.Hash = ledger.Hash(e)
		prev = e.Hash
		if _, err := db.ExecContext(ctx, `UPDATE ledger_events SET payload = $1, prev_hash = $2, hash = $3 WHERE workspace_id = $4 AND seq = $5`, string(e.Payload), e.PrevHash, e.Hash, ws, e.Seq); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `UPDATE ledger_heads SET hash = $1 WHERE workspace_id = $2`, prev, ws); err != nil {
		t.Fatal(err)
	}
}

func testAppendOnly(t *testing.T, b Backend) {
	tb := setup(t, b)
	fill(t, tb, 2)
	qs := []string{
		`UPDATE ledger_events SET type = 'x' WHERE workspace_id = $1`,
		`DELETE FROM ledger_events WHERE workspace_id = $1`,
		`UPDATE ledger_checkpoints SET hash = 'x' WHERE workspace_id = $1`,
		`DELETE FROM ledger_checkpoints WHERE workspace_id = $1`,
		`UPDATE ledger_registry SET genesis_hash = 'x' WHERE workspace_id = $1`,
		`DELETE FROM ledger_registry WHERE workspace_id = $1`,
		`DELETE FROM ledger_registry_head WHERE EXISTS (SELECT 1 FROM ledger_registry WHERE workspace_id = $1)`,
	}
	if tb.store.Dialect() == "postgres" {
		qs = append(qs, `TRUNCATE ledger_events`, `TRUNCATE ledger_checkpoints`, `TRUNCATE ledger_registry`, `TRUNCATE ledger_registry_head`)
	}
	// Checkpoint rows exist only every 1024 events; the triggers fire per
	// row, so give the checkpoint statements one to refuse.
	fill(t, tb, 1030)
	for _, q := range qs {
		args := []any{tb.ws.ID}
		if strings.HasPrefix(q, "TRUNCATE") {
			args = nil
		}
		if _, err := tb.store.SQL().ExecContext(tb.ctx, q, args...); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Fatalf("%s: err = %v, want append-only refusal", q, err)
		}
	}
	tb.verify(t)
	if _, err := tb.store.VerifyRegistry(tb.ctx, ledger.Trust(tb.key.Public().(ed25519.PublicKey))); err != nil {
		t.Fatalf("VerifyRegistry: %v", err)
	}
}

type probeArgs struct {
	CaseID string `json:"case_id"`
}

func (probeArgs) Kind() string { return "storetest_probe" }

// testTransactionalEnqueue: a job enqueued in a transaction exists exactly
// when that transaction commits.
func testTransactionalEnqueue(t *testing.T, b Backend) {
	tb := setup(t, b)
	rc := tb.store.River()
	if rc == nil {
		t.Fatal("no River client")
	}
	boom := errors.New("boom")
	err := tb.store.InTx(tb.ctx, func(tx *sql.Tx) error {
		if err := tb.store.EnqueueTx(tb.ctx, tx, probeArgs{CaseID: "rolled-back"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v", err)
	}
	err = tb.store.InTx(tb.ctx, func(tx *sql.Tx) error {
		return tb.store.EnqueueTx(tb.ctx, tx, probeArgs{CaseID: "committed"})
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rc.JobList(tb.ctx, river.NewJobListParams().Kinds("storetest_probe"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Jobs) != 1 || !strings.Contains(string(res.Jobs[0].EncodedArgs), "committed") {
		t.Fatalf("jobs = %d, want only the committed one", len(res.Jobs))
	}
}

func testReady(t *testing.T, b Backend) {
	tb := setup(t, b)
	if err := tb.store.Ready(tb.ctx); err != nil {
		t.Fatalf("Ready = %v", err)
	}
	ctx, cancel := context.WithCancel(tb.ctx)
	cancel()
	if err := tb.store.Ready(ctx); signoff.ErrorCode(err) != signoff.EUNAVAILABLE {
		t.Fatalf("Ready(cancelled) = %v, want unavailable", err)
	}
}

// testTwoProcessesOneChain: two stores on one database (two processes, each
// with its own head cache) append and transition concurrently. Stale caches
// must cost retries, never a fork or a lost event.
func testTwoProcessesOneChain(t *testing.T, b Backend) {
	_, key, _ := ed25519.GenerateKey(nil)
	a, c := b.OpenPair(t, sqlstore.Options{Signer: key})
	ctx := context.Background()
	ws, owner, err := a.CreateWorkspace(ctx, "shared", "alice")
	if err != nil {
		t.Fatal(err)
	}
	const perWriter = 40
	var wg sync.WaitGroup
	errs := make(chan error, 4*perWriter)
	for w, s := range []*sqlstore.DB{a, c, a, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				if _, err := s.Append(ctx, ws.ID, sqlstore.EventInput{Type: "test.event", ActorID: owner.ID, Payload: map[string]int{"writer": w, "i": i}}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("append: %v", err)
	}
	for _, s := range []*sqlstore.DB{a, c} {
		res, err := s.VerifyLedger(ctx, ws.ID, ledger.Trust(key.Public().(ed25519.PublicKey)))
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(4*perWriter + 2); res.Events != want { // + workspace.created, actor.created
			t.Fatalf("events = %d, want %d", res.Events, want)
		}
	}
}

// testVerifyWhileAppending: verification of a live ledger that keeps
// growing must never report tampering.
func testVerifyWhileAppending(t *testing.T, b Backend) {
	tb := setup(t, b)
	trusted := ledger.Trust(tb.key.Public().(ed25519.PublicKey))
	done := make(chan error, 1)
	go func() {
		for i := range 300 {
			if _, err := tb.store.Append(tb.ctx, tb.ws.ID, sqlstore.EventInput{Type: "test.event", ActorID: tb.owner.ID, Payload: map[string]int{"i": i}}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for checks := 0; ; checks++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			if checks == 0 {
				t.Log("appends finished before the first check")
			}
			tb.verify(t)
			return
		default:
		}
		if _, err := tb.store.VerifyLedger(tb.ctx, tb.ws.ID, trusted); err != nil {
			t.Fatalf("check %d of a growing ledger: %v", checks, err)
		}
	}
}

// testOneConnectionEnough: a freshly opened store whose pool has a single
// connection still writes reports, moves cases and appends evidence while
// a channel is subscribed (so every append also enqueues notifications).
// A write that took a second connection while its transaction holds the
// ledger head deadlocks here; in production it deadlocked a process once
// appends waiting on that head held every connection of its pool.
func testOneConnectionEnough(t *testing.T, b Backend) {
	_, key, _ := ed25519.GenerateKey(nil)
	a, c := b.OpenPair(t, sqlstore.Options{Signer: key})
	ctx := context.Background()
	box, err := secretbox.New(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	a.SetSealer(box)
	c.SetSealer(box)
	a.SetChannelRules(channelrules.WithHosts(netguard.MustAllowlist("127.0.0.1"), nil)) // the channel below is on loopback
	ws, owner, err := a.CreateWorkspace(ctx, "pool", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.PutChannel(ctx, owner, signoff.ChannelInput{Name: "hooks", Kind: signoff.ChannelWebhook, Events: []string{"*"},
		Secrets: signoff.ChannelSecrets{URL: "http://127.0.0.1:9/hooks", WebhookSecret: webhook.NewSecret()}}); err != nil {
		t.Fatal(err)
	}
	p, err := a.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	c.SQL().SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cs, _, _, err := c.SubmitReport(ctx, signoff.ReportInput{ProjectID: p.ID, Text: "the total is wrong after removing an item"})
	if err != nil {
		t.Fatalf("report on one connection: %v", err)
	}
	if _, _, err := c.TransitionCase(ctx, owner, cs.ID, signoff.TransitionInput{Command: "start_triage"}); err != nil {
		t.Fatalf("transition on one connection: %v", err)
	}
	if _, err := c.Append(ctx, ws.ID, sqlstore.EventInput{CaseID: cs.ID, Type: "test.event", ActorID: owner.ID, Payload: map[string]int{"n": 1}}); err != nil {
		t.Fatalf("append on one connection: %v", err)
	}
}
