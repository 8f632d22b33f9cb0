package main

import (
	"context"
	"fmt"
	"net/http"
	"text/tabwriter"
	"time"

	"github.com/signoff-dev/signoff"
)

// Revoking approval keys and disabling people. "signoff keys list|revoke"
// are API clients like "signoff keys register": the server decides who may
// revoke which key (an owner any, a person their own). "signoff actor
// disable|enable" use direct database access like "signoff actor add":
// they are how the operator of the server stops someone even when no owner
// can sign in.

// runKeysList prints the approval keys the caller may see: an owner's
// view is the workspace's, anyone else's their own.
func runKeysList(ctx context.Context, e *env, args []string) error {
	var sf serverFlags
	var asJSON bool
	fs := newFlags("keys list", "signoff keys list [--json] [--server URL]   (token from SIGNOFF_TOKEN)")
	fs.BoolVar(&asJSON, "json", false, "print JSON for scripts")
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	var out struct {
		Keys []signoff.ApproverKey `json:"keys"`
	}
	if printed, err := callAPI(ctx, e, c, http.MethodGet, apiPath("keys"), nil, &out, asJSON); err != nil || printed {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tACTOR\tCREATED\tREVOKED")
	for _, k := range out.Keys {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.ID, k.ActorID, k.CreatedAt.Format(time.RFC3339), fmtTime(k.RevokedAt))
	}
	return tw.Flush()
}

// runKeysRevoke revokes one approval key by id (keys.ID, as signoff keys
// init and signoff keys list print it).
func runKeysRevoke(ctx context.Context, e *env, args []string) error {
	var sf serverFlags
	var asJSON bool
	fs := newFlags("keys revoke", "signoff keys revoke KEY_ID [--json] [--server URL]   (token from SIGNOFF_TOKEN)")
	fs.BoolVar(&asJSON, "json", false, "print JSON for scripts")
	addServerFlags(fs, e, &sf)
	pos, err := parseArgs(fs, e, args, "KEY_ID")
	if err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	var out struct {
		Key             signoff.ApproverKey `json:"key"`
		VoidedApprovals int                 `json:"voided_approvals"`
	}
	if printed, err := callAPI(ctx, e, c, http.MethodPost, apiPath("keys", pos[0], "revoke"), nil, &out, asJSON); err != nil || printed {
		return err
	}
	fmt.Fprintf(e.stdout, "revoked approval key %s of %s; %d approval(s) made with it no longer count\n", out.Key.ID, out.Key.ActorID, out.VoidedApprovals)
	return nil
}

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
