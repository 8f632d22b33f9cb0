package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/client"
)

// The commands that talk to a running server are API clients: they call it
// over HTTP with an API token (through package client), and the approval
// key never leaves this machine. The server decides everything; the CLI
// shows what it is asked to sign and refuses to sign anything other than
// what it showed.

// serverFlags are the flags of every command that talks to the API.
type serverFlags struct {
	url, token string
}

func addServerFlags(fs *flag.FlagSet, e *env, s *serverFlags) {
	fs.StringVar(&s.url, "server", client.URLFromEnv(e.getenv), "base URL of the Signoff server (env SIGNOFF_URL)")
	// The default is filled in after parsing so that --help never prints
	// the token.
	fs.StringVar(&s.token, "token", "", "API token (default: env SIGNOFF_TOKEN, which is better: flags show up in process listings)")
}

// client makes the API client from the flags, falling back to SIGNOFF_TOKEN.
func (s *serverFlags) client(e *env) (*client.Client, error) {
	c, err := client.FromEnv(e.getenv, s.url, s.token)
	if err == nil && s.url == "" {
		// The flag's default already holds SIGNOFF_URL: an explicit
		// --server "" is refused as before, not defaulted.
		_, err = client.New(s.url, "")
		return nil, err
	}
	return c, err
}

// caseCommand parses the flags of a command about one case: --case, the
// server flags and whatever more extra adds, each of required named by
// its flag in need (in the order extra returned them). It returns the case
// id and an API client.
func caseCommand(e *env, name, synopsis, caseHelp string, args []string, extra func(*flag.FlagSet) []*string, need ...string) (string, *client.Client, error) {
	var sf serverFlags
	var caseID string
	fs := newFlags(name, synopsis)
	fs.StringVar(&caseID, "case", "", caseHelp)
	var vals []*string
	if extra != nil {
		vals = extra(fs)
	}
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return "", nil, err
	}
	pairs := []string{"case", caseID}
	for i, n := range need {
		pairs = append(pairs, n, *vals[i])
	}
	if err := required(fs, e, pairs...); err != nil {
		return "", nil, err
	}
	c, err := sf.client(e)
	return caseID, c, err
}

// strictDecode decodes exactly one JSON value into v with no unknown fields.
func strictDecode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// readFileLimited reads a file of at most limit bytes.
func readFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, signoff.Errorf(signoff.ENOTFOUND, "%v", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, signoff.Errorf(signoff.EINVALID, "read %s: %v", path, err)
	}
	if int64(len(b)) > limit {
		return nil, signoff.Errorf(signoff.ETOOLARGE, "%s is larger than %d bytes", path, limit)
	}
	return b, nil
}
