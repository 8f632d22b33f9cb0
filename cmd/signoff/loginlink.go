package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// loginLinkTTL is how long a one-time sign-in link works.
const loginLinkTTL = 15 * time.Minute

// runLoginLink issues a one-time sign-in link to the web UI for a person.
// It needs database access, like token create: the link is as good as a
// session for the next 15 minutes, once.
func runLoginLink(ctx context.Context, e *env, args []string) error {
	var d dbFlags
	var actor, base string
	fs := newFlags("login-link", "signoff login-link --actor ID [--url http://127.0.0.1:8080] [--db PATH|URL]")
	addDBFlags(fs, e, &d)
	fs.StringVar(&actor, "actor", "", "the person (owner, operator or viewer) the link signs in (required)")
	fs.StringVar(&base, "url", "", "the server's base URL, to print a full link instead of its path")
	if err := parse(fs, e, args); err != nil {
		return err
	}
	if err := required(fs, e, "actor", actor); err != nil {
		return err
	}
	s, err := d.openRW(ctx, e, false)
	if err != nil {
		return err
	}
	defer s.Close()
	code, link, err := s.CreateLoginLink(ctx, actor, loginLinkTTL)
	if err != nil {
		return err
	}
	out := strings.TrimRight(base, "/") + "/login/" + code
	if d.json {
		return printJSON(e, map[string]any{"url": out, "actor_id": link.Actor.ID, "expires_at": link.ExpiresAt})
	}
	fmt.Fprintf(e.stdout, "%s\n\nSigns in %s (%s) once, until %s. Share it with no one else.\n", out, link.Actor.Name, link.Actor.Role, link.ExpiresAt.Format(time.RFC3339))
	return nil
}
