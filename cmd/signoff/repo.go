package main

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/signoff-dev/signoff"
)

func runRepo(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "repo", args, "show", "set", "bind")
	if err != nil {
		return err
	}
	if verb == "bind" {
		return runRepoBind(ctx, e, rest)
	}
	var sf serverFlags
	var project, file string
	synopsis := "signoff repo show --project ID [--server URL]   (token from SIGNOFF_TOKEN)"
	if verb == "set" {
		synopsis = "signoff repo set --project ID --file settings.json [--server URL]   (token from SIGNOFF_TOKEN)"
	}
	fs := newFlags("repo "+verb, synopsis)
	fs.StringVar(&project, "project", "", "the project (required)")
	if verb == "set" {
		fs.StringVar(&file, "file", "", "the repository settings as a JSON object (required)")
	}
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	pairs := []string{"project", project}
	if verb == "set" {
		pairs = append(pairs, "file", file)
	}
	if err := required(fs, e, pairs...); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	var out json.RawMessage
	if verb == "set" {
		b, err := readFileLimited(file, 1<<20)
		if err != nil {
			return err
		}
		// The server checks every field strictly; this only catches a
		// file that is not JSON at all before it is sent.
		if !json.Valid(b) {
			return signoff.Errorf(signoff.EINVALID, "%s is not valid JSON", file)
		}
		if out, err = c.SetRepo(ctx, project, b); err != nil {
			return err
		}
	} else if out, err = c.Repo(ctx, project); err != nil {
		return err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, out, "", "  "); err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected answer from the server: %v", err)
	}
	pretty.WriteByte('\n')
	_, err = e.stdout.Write(pretty.Bytes())
	return err
}
