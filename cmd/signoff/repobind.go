package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/signoff-dev/signoff"
)

// runRepoBind binds a project to its repository with database access:
// the path on this machine, the clone URL and the deploy hook run on the
// server host, so only the server operator sets them (the API refuses
// changes to those three).
func runRepoBind(ctx context.Context, e *env, args []string) error {
	var d dbFlags
	var ws, project, file string
	fs := newFlags("repo bind", "signoff repo bind --db PATH|URL --workspace WS --project ID --file settings.json")
	addDBFlags(fs, e, &d)
	fs.StringVar(&ws, "workspace", e.getenv("SIGNOFF_WORKSPACE"), "workspace id (required; env SIGNOFF_WORKSPACE)")
	fs.StringVar(&project, "project", "", "the project (required)")
	fs.StringVar(&file, "file", "", "the repository settings as a JSON object (required)")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if err := required(fs, e, "workspace", ws, "project", project, "file", file); err != nil {
		return err
	}
	b, err := readFileLimited(file, 1<<20)
	if err != nil {
		return err
	}
	var in signoff.RepoSettings
	if err := json.Unmarshal(b, &in); err != nil {
		return signoff.Errorf(signoff.EINVALID, "%s: %v", file, err)
	}
	s, err := d.openRW(ctx, e, false)
	if err != nil {
		return err
	}
	defer s.Close()
	out, err := s.SetRepoSettings(ctx, signoff.CLIActor(ws), project, in)
	if err != nil {
		return err
	}
	pretty, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, string(pretty))
	return nil
}
