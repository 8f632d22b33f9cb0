package storetest

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/ledger"
	"github.com/signoff-dev/signoff/sqlstore"
)

// benchPayload is about the size of a real transition event.
var benchPayload = map[string]any{"command": "escalate", "from": "triaging", "to": "needs_human", "note": strings.Repeat("n", 120), "version": 7}

// BenchAppend measures ledger appends against a raw single-row INSERT loop
// of the same payload on the same database in the same run, with 1 and 8
// concurrent writers, and reports appends/s, inserts/s and their ratio.
// All writers append to one workspace: the chain is serialized, so this is
// the worst case.
func BenchAppend(b *testing.B, bk Backend) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			_, key, _ := ed25519.GenerateKey(nil)
			s := bk.Open(b, sqlstore.Options{Signer: key})
			ctx := context.Background()
			ws, owner, err := s.CreateWorkspace(ctx, "bench", "owner")
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.SQL().ExecContext(ctx, `CREATE TABLE bench_raw (id BIGINT PRIMARY KEY, payload TEXT NOT NULL)`); err != nil {
				b.Fatal(err)
			}
			raw := `{"command":"escalate","from":"triaging","note":"` + strings.Repeat("n", 120) + `","to":"needs_human","version":7}`
			var next atomic.Int64
			rawOp := func() error {
				_, err := s.SQL().ExecContext(ctx, `INSERT INTO bench_raw (id, payload) VALUES ($1, $2)`, next.Add(1), raw)
				return err
			}
			appendOp := func() error {
				_, err := s.Append(ctx, ws.ID, sqlstore.EventInput{Type: "bench.event", ActorID: owner.ID, Payload: benchPayload})
				return err
			}
			b.ResetTimer()
			rawRate := rate(b, writers, rawOp)
			appendRate := rate(b, writers, appendOp)
			b.StopTimer()
			b.ReportMetric(rawRate, "raw-inserts/s")
			b.ReportMetric(appendRate, "appends/s")
			b.ReportMetric(appendRate/rawRate, "ratio")
			if _, err := s.VerifyLedger(ctx, ws.ID, ledger.Trust(key.Public().(ed25519.PublicKey))); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// rate runs op b.N times split over writers goroutines and returns ops/s.
func rate(b *testing.B, writers int, op func() error) float64 {
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < b.N; i += writers {
				if err := op(); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	return float64(b.N) / time.Since(start).Seconds()
}

// BenchVerify measures full verification (hashes, checkpoints, signed head)
// of a chain of n events, and reports events/s.
func BenchVerify(b *testing.B, bk Backend, n int) {
	_, key, _ := ed25519.GenerateKey(nil)
	s := bk.Open(b, sqlstore.Options{Signer: key})
	ctx := context.Background()
	ws, owner, err := s.CreateWorkspace(ctx, "bench", "owner")
	if err != nil {
		b.Fatal(err)
	}
	const batch = 10000
	in := make([]sqlstore.EventInput, batch)
	for i := range in {
		in[i] = sqlstore.EventInput{CaseID: "case_00000000000000000000000000", Type: "bench.event", ActorID: owner.ID, Payload: benchPayload}
	}
	for have := 0; have < n; have += batch {
		if _, err := s.Append(ctx, ws.ID, in[:min(batch, n-have)]...); err != nil {
			b.Fatal(err)
		}
	}
	trusted := ledger.Trust(key.Public().(ed25519.PublicKey))
	b.ResetTimer()
	for range b.N {
		res, err := s.VerifyLedger(ctx, ws.ID, trusted)
		if err != nil {
			b.Fatal(err)
		}
		if res.Events < int64(n) {
			b.Fatalf("verified %d events, want at least %d", res.Events, n)
		}
		// ledger verify also checks the registry of chains every time.
		if _, err := s.VerifyRegistry(ctx, trusted); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
