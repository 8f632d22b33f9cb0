package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/signoff-dev/signoff/changedesk"
	"text/tabwriter"
	"time"

	"github.com/signoff-dev/signoff"
)

// "signoff flags" reads the built-in flag store through the API. It is
// read-only on purpose: a flag's value changes through a change request,
// its signed approval and the gate, never from here.

// flagRecord is a flag as the API shows it, with its state digest.
type flagRecord struct {
	signoff.Flag
	StateDigest string `json:"state_digest"`
}

func runFlags(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "flags", args, "list", "get", "set")
	if err != nil {
		return err
	}
	if verb == "set" {
		return runFlagsSet(ctx, e, rest)
	}
	var sf serverFlags
	var project, envName, key string
	var asJSON bool
	synopsis := "signoff flags list --project ID [--env ENV] [--json] [--server URL]   (token from SIGNOFF_TOKEN; read-only: flags change through change requests)"
	if verb == "get" {
		synopsis = "signoff flags get --project ID --env ENV --key KEY [--json] [--server URL]   (token from SIGNOFF_TOKEN; read-only: flags change through change requests)"
	}
	fs := newFlags("flags "+verb, synopsis)
	fs.StringVar(&project, "project", "", "the project (required)")
	if verb == "get" {
		fs.StringVar(&envName, "env", "", "the environment, e.g. production (required)")
		fs.StringVar(&key, "key", "", "the flag key (required)")
	} else {
		fs.StringVar(&envName, "env", "", "only this environment (default: every environment)")
	}
	fs.BoolVar(&asJSON, "json", false, "print JSON for scripts")
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	pairs := []string{"project", project}
	if verb == "get" {
		pairs = append(pairs, "env", envName, "key", key)
	}
	if err := required(fs, e, pairs...); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	var raw []byte
	if verb == "get" {
		raw, err = c.Flag(ctx, project, envName, key)
	} else {
		raw, err = c.Flags(ctx, project, envName)
	}
	if err != nil {
		return err
	}
	if asJSON {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, raw, "", "  "); err != nil {
			return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected answer from the server: %v", err)
		}
		pretty.WriteByte('\n')
		_, err := e.stdout.Write(pretty.Bytes())
		return err
	}
	d := &display{}
	if verb == "get" {
		var f flagRecord
		if err := json.Unmarshal(raw, &f); err != nil {
			return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected answer from the server: %v", err)
		}
		fmt.Fprintf(e.stdout, "flag:          %s\n", d.line(f.Key))
		fmt.Fprintf(e.stdout, "project:       %s\n", d.line(f.ProjectID))
		fmt.Fprintf(e.stdout, "environment:   %s\n", d.line(f.Environment))
		fmt.Fprintf(e.stdout, "type:          %s\n", d.line(string(f.Type)))
		fmt.Fprintf(e.stdout, "value:         %s\n", d.line(string(f.Value)))
		fmt.Fprintf(e.stdout, "version:       %d\n", f.Version)
		fmt.Fprintf(e.stdout, "state digest:  %s\n", d.line(f.StateDigest))
		fmt.Fprintf(e.stdout, "updated:       %s by %s\n", f.UpdatedAt.UTC().Format(time.RFC3339), d.line(f.UpdatedBy))
		return nil
	}
	var page struct {
		Flags []flagRecord `json:"flags"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected answer from the server: %v", err)
	}
	if len(page.Flags) == 0 {
		fmt.Fprintln(e.stdout, "no flags")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ENVIRONMENT\tKEY\tTYPE\tVERSION\tVALUE")
	for _, f := range page.Flags {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", d.line(f.Environment), d.line(f.Key), d.line(string(f.Type)), f.Version, d.line(string(f.Value)))
	}
	return tw.Flush()
}

// runFlagsSet is the emergency write. A flag's value changes through a
// change request (signoff change request); the only direct write is the
// policy's emergency bypass, which this asks for explicitly.
func runFlagsSet(ctx context.Context, e *env, args []string) error {
	var sf serverFlags
	var project, envName, key, value, reason string
	var emergency bool
	fs := newFlags("flags set", "signoff flags set --emergency --project ID --env ENV --key KEY --value JSON --reason TEXT")
	fs.StringVar(&project, "project", "", "the project (required)")
	fs.StringVar(&envName, "env", "", "the environment (required)")
	fs.StringVar(&key, "key", "", "the flag key (required)")
	fs.StringVar(&value, "value", "", "the new value as JSON: true, false, 25, \"text\" (required)")
	fs.StringVar(&reason, "reason", "", "why this cannot wait for a change request (required)")
	fs.BoolVar(&emergency, "emergency", false, "use the policy's emergency bypass (time-limited, role-gated, with a receipt)")
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if !emergency {
		return signoff.Errorf(signoff.EFORBIDDEN, "flags change through change requests: signoff change request --project %s --reason \"...\" --builtin; "+
			"a direct write is only the policy's emergency bypass (--emergency)", project)
	}
	if err := required(fs, e, "project", project, "env", envName, "key", key, "value", value, "reason", reason); err != nil {
		return err
	}
	if !json.Valid([]byte(value)) {
		return signoff.Errorf(signoff.EINVALID, "--value must be JSON: true, false, a number or a quoted string")
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	var x changedesk.Execution
	if err := c.EmergencyFlag(ctx, project, envName, key, json.RawMessage(value), reason, &x); err != nil {
		return err
	}
	d := &display{}
	until := "-"
	if x.Predicate.BypassUntil != nil {
		until = x.Predicate.BypassUntil.Format(time.RFC3339)
	}
	fmt.Fprintf(e.stdout, "EMERGENCY write of %s recorded as change %s (receipt %s)\n", d.line(x.Predicate.Target), d.line(x.Case.ID), d.line(x.Receipt.ID))
	fmt.Fprintf(e.stdout, "it lasts until %s: then the previous value comes back unless a change request has changed the flag since\n", until)
	return nil
}
