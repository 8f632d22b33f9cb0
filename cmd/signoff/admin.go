package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/sqlstore"
)

func runMigrate(ctx context.Context, e *env, args []string) error {
	var d dbFlags
	fs := newFlags("migrate", "signoff migrate [--db PATH|URL]")
	addDBFlags(fs, e, &d)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	s, err := d.openStore(ctx) // opening creates and migrates
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Ready(ctx); err != nil {
		return err
	}
	if d.json {
		return printJSON(e, map[string]string{"status": "current", "backend": s.Dialect()})
	}
	fmt.Fprintf(e.stdout, "%s schema is current\n", s.Dialect())
	return nil
}

func runWorkspace(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "workspace", args, "create", "list")
	if err != nil {
		return err
	}
	var d dbFlags
	var name, owner string
	var syn = "signoff workspace list [--db PATH|URL]"
	if verb == "create" {
		syn = "signoff workspace create --name NAME --owner NAME [--db PATH|URL]"
	}
	fs := newFlags("workspace "+verb, syn)
	addDBFlags(fs, e, &d)
	if verb == "create" {
		fs.StringVar(&name, "name", "", "workspace name (required)")
		fs.StringVar(&owner, "owner", "", "name of the first owner (required); a token is issued for them")
	}
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	if verb == "list" {
		s, err := d.open(ctx)
		if err != nil {
			return err
		}
		defer s.Close()
		list, err := s.ListWorkspaces(ctx)
		if err != nil || d.json {
			return firstErr(err, func() error { return printJSON(e, list) })
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tCREATED")
		for _, w := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", w.ID, w.Name, w.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	}
	if err := required(fs, e, "name", name, "owner", owner); err != nil {
		return err
	}
	s, err := d.openRW(ctx, e, true)
	if err != nil {
		return err
	}
	defer s.Close()
	w, o, err := s.CreateWorkspace(ctx, name, owner)
	if err != nil {
		return err
	}
	_, secret, err := s.CreateToken(ctx, signoff.CLIActor(w.ID), o.ID, "created with the workspace", nil)
	if err != nil {
		return err
	}
	if d.json {
		return printJSON(e, map[string]any{"workspace": w, "owner": o, "token": secret})
	}
	fmt.Fprintf(e.stdout, "workspace %s (%s)\nowner     %s (%s)\ntoken     %s\n\nThe token is shown once; store it now.\n", w.ID, w.Name, o.ID, o.Name, secret)
	return nil
}

func runActor(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "actor", args, "add", "list", "disable", "enable")
	if err != nil {
		return err
	}
	if verb == "disable" || verb == "enable" {
		return runActorToggle(ctx, e, verb, rest)
	}
	var d dbFlags
	var ws, name, role string
	var withToken bool
	syn := "signoff actor list --workspace ID [--db PATH|URL]"
	if verb == "add" {
		syn = "signoff actor add --workspace ID --role ROLE --name NAME [--token] [--db PATH|URL]"
	}
	fs := newFlags("actor "+verb, syn)
	addDBFlags(fs, e, &d)
	fs.StringVar(&ws, "workspace", e.getenv("SIGNOFF_WORKSPACE"), "workspace id (required; env SIGNOFF_WORKSPACE)")
	if verb == "add" {
		fs.StringVar(&role, "role", "", fmt.Sprintf("role (required): one of %v", signoff.AllRoles()))
		fs.StringVar(&name, "name", "", "actor name, unique in the workspace (required)")
		fs.BoolVar(&withToken, "token", false, "also issue an API token and print it once")
	}
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	if err := required(fs, e, "workspace", ws); err != nil {
		return err
	}
	if verb == "list" {
		s, err := d.open(ctx)
		if err != nil {
			return err
		}
		defer s.Close()
		if _, err := s.GetWorkspace(ctx, ws); err != nil {
			return err
		}
		list, err := s.ListActors(ctx, ws)
		if err != nil || d.json {
			return firstErr(err, func() error { return printJSON(e, list) })
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tROLE\tCREATED\tDISABLED")
		for _, a := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.ID, a.Name, a.Role, a.CreatedAt.Format(time.RFC3339), fmtTime(a.DisabledAt))
		}
		return tw.Flush()
	}
	if err := required(fs, e, "role", role, "name", name); err != nil {
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
	a, err := s.CreateActor(ctx, signoff.CLIActor(ws), name, signoff.Role(role))
	if err != nil {
		return err
	}
	secret := ""
	if withToken {
		if _, secret, err = s.CreateToken(ctx, signoff.CLIActor(ws), a.ID, "created with the actor", nil); err != nil {
			return err
		}
	}
	if d.json {
		return printJSON(e, map[string]any{"actor": a, "token": secret})
	}
	fmt.Fprintf(e.stdout, "actor %s (%s, %s)\n", a.ID, a.Name, a.Role)
	if secret != "" {
		fmt.Fprintf(e.stdout, "token %s\n\nThe token is shown once; store it now.\n", secret)
	}
	return nil
}

func runToken(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "token", args, "create", "list", "revoke")
	if err != nil {
		return err
	}
	var d dbFlags
	var ws, actor, label, id string
	var ttl time.Duration
	fs := newFlags("token "+verb, "signoff token "+map[string]string{
		"create": "create --workspace ID --actor ID [--label TEXT] [--ttl 720h]",
		"list":   "list --workspace ID --actor ID",
		"revoke": "revoke --workspace ID --id TOKEN_ID",
	}[verb])
	addDBFlags(fs, e, &d)
	fs.StringVar(&ws, "workspace", e.getenv("SIGNOFF_WORKSPACE"), "workspace id (required; env SIGNOFF_WORKSPACE)")
	switch verb {
	case "create":
		fs.StringVar(&actor, "actor", "", "actor id (required)")
		fs.StringVar(&label, "label", "", "what the token is for")
		fs.DurationVar(&ttl, "ttl", 0, "lifetime, e.g. 720h; 0 never expires")
	case "list":
		fs.StringVar(&actor, "actor", "", "actor id (required)")
	case "revoke":
		fs.StringVar(&id, "id", "", "token id (required)")
	}
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	check := []string{"workspace", ws}
	if verb == "revoke" {
		check = append(check, "id", id)
	} else {
		check = append(check, "actor", actor)
	}
	if err := required(fs, e, check...); err != nil {
		return err
	}
	if ttl < 0 {
		fmt.Fprintln(e.stderr, "--ttl must not be negative")
		return errUsage
	}
	open := func() (*sqlstore.DB, error) { return d.openRW(ctx, e, false) }
	if verb == "list" {
		open = func() (*sqlstore.DB, error) { return d.open(ctx) }
	}
	s, err := open()
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.GetWorkspace(ctx, ws); err != nil {
		return err
	}
	cli := signoff.CLIActor(ws)
	switch verb {
	case "create":
		var exp *time.Time
		if ttl > 0 {
			t := time.Now().Add(ttl)
			exp = &t
		}
		t, secret, err := s.CreateToken(ctx, cli, actor, label, exp)
		if err != nil {
			return err
		}
		if d.json {
			return printJSON(e, map[string]any{"token": t, "secret": secret})
		}
		fmt.Fprintf(e.stdout, "token %s for %s\n%s\n\nThe token is shown once; store it now.\n", t.ID, actor, secret)
	case "list":
		list, err := s.ListTokens(ctx, ws, actor)
		if err != nil || d.json {
			return firstErr(err, func() error { return printJSON(e, list) })
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tLABEL\tCREATED\tEXPIRES\tREVOKED")
		for _, t := range list {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", t.ID, t.Label, t.CreatedAt.Format(time.RFC3339), fmtTime(t.ExpiresAt), fmtTime(t.RevokedAt))
		}
		return tw.Flush()
	case "revoke":
		t, err := s.RevokeToken(ctx, cli, id)
		if err != nil {
			return err
		}
		if d.json {
			return printJSON(e, t)
		}
		fmt.Fprintf(e.stdout, "revoked %s\n", t.ID)
	}
	return nil
}

func fmtTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}

func firstErr(err error, then func() error) error {
	if err != nil {
		return err
	}
	return then()
}
