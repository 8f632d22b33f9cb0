package crew_test

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"testing"

	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/crew"
)

// BenchmarkEval is the whole orbit_run inbox through the runtime with the
// builtin roles: every tool call, guard, transcript, ledger event and
// triage-run write on SQLite included. ms/item is per item.
func BenchmarkEval(b *testing.B) {
	d := loadOrbit(b)
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		_, key, _ := ed25519.GenerateKey(nil)
		st := openStore(b, filepath.Join(b.TempDir(), "bench.db"), key)
		b.StartTimer()
		rep, err := crew.Eval(ctx, st, runtimeFor(st, nil), d, crew.Roles(agent.ProviderBuiltin), "builtin")
		if err != nil || rep.Score != rep.Total {
			b.Fatalf("eval %d/%d %v", rep.Score, rep.Total, err)
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/float64(len(d.Items)), "ms/item")
}
