package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/keys"
)

// runKeysCommand dispatches "keys": show is the server's key (runKeys), init
// and register are the operator's approval key, list and revoke the
// approval keys on the server.
func runKeysCommand(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "keys", args, "show", "init", "register", "list", "revoke")
	if err != nil {
		return err
	}
	switch verb {
	case "init":
		return runKeysInit(e, rest)
	case "register":
		return runKeysRegister(ctx, e, rest)
	case "list":
		return runKeysList(ctx, e, rest)
	case "revoke":
		return runKeysRevoke(ctx, e, rest)
	}
	return runKeys(ctx, e, args)
}

const approverKeyHelp = "your approval key (private, PEM; default: signoff/approver.key in your config directory, e.g. ~/.config)"

// approverKeyPath is --key, or approver.key in the user's config directory.
func approverKeyPath(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", signoff.Errorf(signoff.EINVALID, "no config directory (%v): pass --key FILE", err)
	}
	return filepath.Join(dir, "signoff", "approver.key"), nil
}

// loadApproverKey loads an existing approval key; it never creates one.
func loadApproverKey(flagValue string) (string, ed25519.PrivateKey, error) {
	path, err := approverKeyPath(flagValue)
	if err != nil {
		return "", nil, err
	}
	k, err := keys.Load(path)
	if errors.Is(err, iofs.ErrNotExist) {
		return path, nil, signoff.Errorf(signoff.ENOTFOUND, "no approval key at %s: create one with signoff keys init, then signoff keys register", path)
	} else if err != nil {
		return path, nil, signoff.Errorf(signoff.EINVALID, "%v", err)
	}
	return path, k, nil
}

func runKeysInit(e *env, args []string) error {
	var keyFlag string
	fs := newFlags("keys init", "signoff keys init [--key FILE]")
	fs.StringVar(&keyFlag, "key", "", approverKeyHelp)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	path, err := approverKeyPath(keyFlag)
	if err != nil {
		return err
	}
	// keys.LoadOrCreate makes a missing directory 0700 and the file 0600,
	// and refuses an existing file that others can read.
	k, created, err := keys.LoadOrCreate(path)
	if err != nil {
		return signoff.Errorf(signoff.EINVALID, "%v", err)
	}
	pub := k.Public().(ed25519.PublicKey)
	pemPub, err := keys.EncodePublic(pub)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(e.stdout, "created approval key %s (key id %s)\n", path, keys.ID(pub))
	} else {
		fmt.Fprintf(e.stdout, "approval key %s already exists (key id %s); left unchanged\n", path, keys.ID(pub))
	}
	fmt.Fprintf(e.stdout, "private key: %s (mode 0600; it never leaves this machine, back it up)\n", path)
	fmt.Fprintf(e.stdout, "public key (send it to the server with: signoff keys register --key %s):\n%s", path, pemPub)
	return nil
}

func runKeysRegister(ctx context.Context, e *env, args []string) error {
	var keyFlag string
	var sf serverFlags
	fs := newFlags("keys register", "signoff keys register [--key FILE] [--server URL]   (token from SIGNOFF_TOKEN)")
	fs.StringVar(&keyFlag, "key", "", approverKeyHelp)
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	path, k, err := loadApproverKey(keyFlag)
	if err != nil {
		return err
	}
	pub := k.Public().(ed25519.PublicKey)
	pemPub, err := keys.EncodePublic(pub)
	if err != nil {
		return err
	}
	// Only the public key is sent.
	got, err := c.RegisterKey(ctx, string(pemPub))
	if err != nil {
		return err
	}
	if want := keys.ID(pub); got.ID != want {
		return signoff.Errorf(signoff.EUNAVAILABLE, "the server registered key %q, but %s holds key %s", got.ID, path, want)
	}
	fmt.Fprintf(e.stdout, "registered approval key %s (%s) for actor %s\n", got.ID, path, got.ActorID)
	return nil
}

// "signoff keys list|revoke" are API clients like "signoff keys register":
// the server decides who may revoke which key (an owner any, a person their
// own).

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
	raw, err := c.Keys(ctx)
	if printed, err := answer(e, raw, err, &out, asJSON); err != nil || printed {
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
	raw, err := c.RevokeKeyRaw(ctx, pos[0])
	if printed, err := answer(e, raw, err, &out, asJSON); err != nil || printed {
		return err
	}
	fmt.Fprintf(e.stdout, "revoked approval key %s of %s; %d approval(s) made with it no longer count\n", out.Key.ID, out.Key.ActorID, out.VoidedApprovals)
	return nil
}
