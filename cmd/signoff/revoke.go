package main

import (
	"context"
	"fmt"

	"github.com/signoff-dev/signoff"
)

// Disabling people. "signoff actor disable|enable" use direct database
// access like "signoff actor add": they are how the operator of the server
// stops someone even when no owner can sign in. Revoking approval keys is
// an API call (keys.go).

// runActorToggle is "signoff actor disable|enable ACTOR_ID".
func runActorToggle(ctx context.Context, e *env, verb string, args []string) error {
	var d dbFlags
	var ws string
	fs := newFlags("actor "+verb, "signoff actor "+verb+" ACTOR_ID --workspace ID [--db PATH|URL]")
	addDBFlags(fs, e, &d)
	fs.StringVar(&ws, "workspace", e.getenv("SIGNOFF_WORKSPACE"), "workspace id (required; env SIGNOFF_WORKSPACE)")
	pos, err := parseArgs(fs, e, args, "ACTOR_ID")
	if err != nil {
		return err
	}
	if err := required(fs, e, "workspace", ws); err != nil {
		return err
	}
	s, err := d.openRW(ctx, e, false)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.GetWorkspace(ctx, ws); err != nil {
		return err
	}
	cli := signoff.CLIActor(ws)
	if verb == "enable" {
		a, err := s.EnableActor(ctx, cli, pos[0])
		if err != nil || d.json {
			return firstErr(err, func() error { return printJSON(e, a) })
		}
		fmt.Fprintf(e.stdout, "enabled %s (%s, %s); approvals voided when they were disabled stay void\n", a.ID, a.Name, a.Role)
		return nil
	}
	a, n, err := s.DisableActor(ctx, cli, pos[0])
	if err != nil {
		return err
	}
	if d.json {
		return printJSON(e, map[string]any{"actor": a, "voided_approvals": n})
	}
	fmt.Fprintf(e.stdout, "disabled %s (%s, %s): their tokens and web sessions stop now; %d approval(s) of theirs no longer count\n", a.ID, a.Name, a.Role, n)
	return nil
}
