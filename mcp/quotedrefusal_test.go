package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/airlock"
	"github.com/signoff-dev/signoff/mcp"
)

// TestDeskRefusalKeepsItsQuotes: a desk tool's refusal that quotes a
// run's output (a refused reproduction's test output) reaches an
// external agent with the quotes, in their spotlighted blocks, as the
// runtime gives them to a model; the message stays the server's.
func TestDeskRefusalKeepsItsQuotes(t *testing.T) {
	f := newFixture(t)
	read := agent.NewTool("read_source", "refuses with a quote",
		func(_ context.Context, _ *agent.Env, in stubReadArgs) (agent.Result, error) {
			return agent.Result{}, agent.Refuse(signoff.Errorf(signoff.EINVALID, "refused: what the run gave is quoted in U1 below"),
				"the result of your proposed tests on base", "cart_test.go:9: Total = -100; want 0")
		})
	srv := serveHTTP(t, f.st, mcp.Options{Tools: agent.NewRegistry(read)})
	fixer := mustConnectHTTP(t, srv, f.fixerToken, "fixer-test")
	msg := refused(t, fixer, "fix.read_source", map[string]any{"task_id": f.fixerTask.ID, "input_digest": f.fixerTask.InputDigest, "path": "cart.go"}, signoff.EINVALID)
	if !strings.Contains(msg, "refused: what the run gave is quoted in U1 below\n\n"+airlock.QuotesHeader) || !strings.Contains(msg, "=ˆ-100;ˆwantˆ0") {
		t.Fatalf("the refusal lost its quote: %q", msg)
	}
}
