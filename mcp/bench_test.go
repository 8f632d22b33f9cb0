package mcp_test

import (
	"context"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff/mcp"
)

// BenchmarkToolCallRoundTrip measures one task.get call from an SDK client
// over loopback streamable HTTP: authentication, a server built for the
// request, the store read and the airlock rendering. It reports the
// latency percentiles of the individual calls.
func BenchmarkToolCallRoundTrip(b *testing.B) {
	f := newFixture(b)
	srv := serveHTTP(b, f.st, mcp.Options{})
	cs := mustConnectHTTP(b, srv, f.fixerToken, "bench")
	ctx := context.Background()
	params := &sdk.CallToolParams{Name: "task.get", Arguments: map[string]any{"task_id": f.fixerTask.ID}}
	durations := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		durations = append(durations, time.Since(start))
		if err != nil || res.IsError {
			b.Fatalf("task.get: %v %v", err, res)
		}
	}
	b.StopTimer()
	slices.Sort(durations)
	pct := func(p float64) float64 {
		return float64(durations[min(len(durations)-1, int(p*float64(len(durations))))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}
