package mcp_test

import (
	"context"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/mcp"
)

// TestStdioStopsWhenDisabled: a stdio session outlives any one call, so
// its token is checked again on each: disabling the agent (or revoking the
// token) stops the next call, enabling lets it work again.
func TestStdioStopsWhenDisabled(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	fixer, _ := stdioPair(t, f, f.fixerToken, "codex")
	args := map[string]any{"task_id": f.fixerTask.ID}
	var view mcp.TaskView
	steps := []struct {
		name   string
		change func() error
		code   string // "" when the call works
	}{
		{"enabled", func() error { return nil }, ""},
		{"disabled", func() error { _, _, err := f.st.DisableActor(ctx, f.owner, f.fixer.ID); return err }, signoff.EUNAUTHORIZED},
		{"enabled again", func() error { _, err := f.st.EnableActor(ctx, f.owner, f.fixer.ID); return err }, ""},
		{"token revoked", func() error {
			toks, err := f.st.ListTokens(ctx, f.ws.ID, f.fixer.ID)
			if err != nil {
				return err
			}
			for _, tok := range toks {
				if _, err := f.st.RevokeToken(ctx, f.owner, tok.ID); err != nil {
					return err
				}
			}
			return nil
		}, signoff.EUNAUTHORIZED},
	}
	for _, st := range steps {
		if err := st.change(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.code == "" {
			ok(t, fixer, "task.get", args, &view)
		} else {
			refused(t, fixer, "task.get", args, st.code)
		}
	}
}
