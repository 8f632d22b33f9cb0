package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/channelrules"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/netguard"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/secretbox"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// errUsage means the command line was wrong and usage was already printed.
var errUsage = errors.New("usage")

func newFlags(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

func parse(fs *flag.FlagSet, e *env, args []string) error {
	fs.SetOutput(e.stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(e.stdout)
			fs.Usage()
			return err
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		fs.Usage()
		return errUsage
	}
	return nil
}

// dbFlags are the storage flags every storage command takes.
type dbFlags struct {
	db, key string
	json    bool
}

func addDBFlags(fs *flag.FlagSet, e *env, d *dbFlags) {
	def := e.getenv("SIGNOFF_DB")
	if def == "" {
		def = "./signoff.db"
	}
	fs.StringVar(&d.db, "db", def, "database: a SQLite file path or a postgres:// URL (env SIGNOFF_DB)")
	fs.StringVar(&d.key, "key", e.getenv("SIGNOFF_KEY"), "server signing key file (env SIGNOFF_KEY; default: signoff.key beside a SQLite file, ./signoff.key for PostgreSQL)")
	fs.BoolVar(&d.json, "json", false, "print JSON for scripts")
}

func isPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

func (d *dbFlags) keyPath() string {
	if d.key != "" {
		return d.key
	}
	if isPostgres(d.db) {
		return "signoff.key"
	}
	return filepath.Join(filepath.Dir(d.db), "signoff.key")
}

// open opens and migrates the store read-only (no signing key). A SQLite
// file must already exist: a mistyped path is an error, not a new, empty,
// "verified" database.
func (d *dbFlags) open(ctx context.Context) (*sqlstore.DB, error) {
	if !isPostgres(d.db) {
		if _, err := os.Stat(d.db); err != nil {
			return nil, signoff.Errorf(signoff.ENOTFOUND, "no database at %s (create one with signoff workspace create or signoff serve)", d.db)
		}
	}
	return d.openStore(ctx)
}

func (d *dbFlags) openStore(ctx context.Context) (*sqlstore.DB, error) {
	if isPostgres(d.db) {
		return postgres.Open(ctx, d.db, sqlstore.Options{})
	}
	return sqlite.Open(ctx, d.db, sqlstore.Options{})
}

// openRW opens the store for writing with the server key, creating the
// database if create is set. The key must be the one the ledger is already
// signed with: a key is generated only for a database whose ledger has no
// signature yet, so a CLI run from the wrong directory cannot start signing
// with a key nobody trusts.
func (d *dbFlags) openRW(ctx context.Context, e *env, create bool) (*sqlstore.DB, error) {
	open := d.open
	if create {
		open = d.openStore
	}
	s, err := open(ctx)
	if err != nil {
		return nil, err
	}
	if err := d.attachKey(ctx, e, s); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (d *dbFlags) attachKey(ctx context.Context, e *env, s *sqlstore.DB) error {
	ids, err := s.SigningKeyIDs(ctx)
	if err != nil {
		return err
	}
	path := d.keyPath()
	k, err := keys.Load(path)
	switch {
	case errors.Is(err, iofs.ErrNotExist) && len(ids) > 0:
		return signoff.Errorf(signoff.EINVALID, "no signing key at %s, but this database's ledger is signed by key %s: pass --key (or SIGNOFF_KEY)", path, strings.Join(ids, ", "))
	case errors.Is(err, iofs.ErrNotExist):
		var created bool
		if k, created, err = keys.LoadOrCreate(path); err != nil {
			return err
		}
		if created {
			fmt.Fprintf(e.stderr, "created server signing key %s (key id %s); back it up: it proves the ledger's history\n", path, keys.ID(k.Public().(ed25519.PublicKey)))
		}
	case err != nil:
		return err
	}
	id := keys.ID(k.Public().(ed25519.PublicKey))
	for _, have := range ids {
		if have != id {
			return signoff.Errorf(signoff.EINVALID, "%s holds key %s, but this database's ledger is signed by key %s: pass the right --key", path, id, have)
		}
	}
	s.SetSigner(k)
	// The first process with the key registers the chains that predate the
	// ledger registry; the rest find it done.
	if err := s.RegisterChains(ctx); err != nil {
		return err
	}
	// Channel secrets are sealed with SIGNOFF_SECRET_KEY, or a key derived
	// from the server's signing key.
	box, err := secretbox.FromEnvOrSeed(e.getenv("SIGNOFF_SECRET_KEY"), k.Seed())
	if err != nil {
		return fmt.Errorf("SIGNOFF_SECRET_KEY: %w", err)
	}
	s.SetSealer(box)
	// Channels reach public addresses only, plus what the operator lists:
	// the server sends from inside its network, where internal services
	// and the cloud's metadata endpoint answer.
	allow, err := netguard.ParseAllowlist(e.getenv("SIGNOFF_CHANNEL_HOSTS"))
	if err != nil {
		return fmt.Errorf("SIGNOFF_CHANNEL_HOSTS: %w", err)
	}
	s.SetChannelRules(channelrules.WithHosts(allow, nil))
	return nil
}

func printJSON(e *env, v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func required(fs *flag.FlagSet, e *env, pairs ...string) error {
	for i := 0; i < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			fmt.Fprintf(e.stderr, "flag --%s is required\n", pairs[i])
			fs.Usage()
			return errUsage
		}
	}
	return nil
}

// subcommand splits "workspace create ..." into its verb and the rest.
func subcommand(e *env, name string, args []string, verbs ...string) (string, []string, error) {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintf(e.stdout, "Usage: signoff %s <%s> [flags]\n", name, strings.Join(verbs, "|"))
		if len(args) == 0 {
			return "", nil, errUsage
		}
		return "", nil, flag.ErrHelp
	}
	for _, v := range verbs {
		if args[0] == v {
			return v, args[1:], nil
		}
	}
	fmt.Fprintf(e.stderr, "signoff %s: unknown subcommand %q (want %s)\n", name, args[0], strings.Join(verbs, ", "))
	return "", nil, errUsage
}
