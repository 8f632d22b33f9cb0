package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/httpapi"
)

// TestFlagsCommand reads flags through a real API server, as a person or
// an agent with a token would.
func TestFlagsCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, owner, proj := seedStore(t, "shoplite")
	for _, f := range []struct {
		env, key string
		typ      signoff.FlagType
		value    string
	}{
		{"production", "checkout_v2_new_payment_flow", signoff.FlagBoolean, "false"},
		{"production", "banner", signoff.FlagString, `"sale \u202e now"`}, // a bidi override is shown escaped
		{"staging", "checkout_v2_new_payment_flow", signoff.FlagBoolean, "true"},
	} {
		if _, err := s.CreateFlag(ctx, owner, proj.ID, f.env, f.key, f.typ, json.RawMessage(f.value)); err != nil {
			t.Fatal(err)
		}
	}
	viewer, err := s.CreateActor(ctx, owner, "vic", signoff.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	_, token, err := s.CreateToken(ctx, owner, viewer.ID, "cli", nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.CreateActor(ctx, owner, "rita", signoff.RoleReporter)
	if err != nil {
		t.Fatal(err)
	}
	_, repToken, err := s.CreateToken(ctx, owner, rep.ID, "cli", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(s, nil))
	t.Cleanup(srv.Close)
	flags := func(tok string, args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		vars := map[string]string{"SIGNOFF_TOKEN": tok, "SIGNOFF_URL": srv.URL}
		code := run(ctx, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }}, append([]string{"flags"}, args...))
		if tok != "" && strings.Contains(out.String()+errOut.String(), tok) {
			t.Errorf("signoff flags %v printed the token", args)
		}
		return out.String(), errOut.String(), code
	}

	out, errOut, code := flags(token, "list", "--project", proj.ID)
	want := "ENVIRONMENT  KEY                           TYPE     VERSION  VALUE\n" +
		"production   banner                        string   1        \"sale \\u202e now\"\n" +
		"production   checkout_v2_new_payment_flow  boolean  1        false\n" +
		"staging      checkout_v2_new_payment_flow  boolean  1        true\n"
	if code != 0 || out != want {
		t.Fatalf("flags list: exit %d, stderr %q, output\n%s\nwant\n%s", code, errOut, out, want)
	}
	if out, _, code := flags(token, "list", "--project", proj.ID, "--env", "staging"); code != 0 || strings.Count(out, "\n") != 2 || !strings.Contains(out, "staging") {
		t.Fatalf("flags list --env staging: exit %d\n%s", code, out)
	}
	if out, _, code := flags(token, "list", "--project", proj.ID, "--env", "qa"); code != 0 || out != "no flags\n" {
		t.Fatalf("flags list --env qa: exit %d %q", code, out)
	}

	out, errOut, code = flags(token, "get", "--project", proj.ID, "--env", "production", "--key", "checkout_v2_new_payment_flow")
	f, _ := s.GetFlag(ctx, owner, proj.ID, "production", "checkout_v2_new_payment_flow")
	digest, _ := signoff.FlagState(f)
	for _, line := range []string{"flag:          checkout_v2_new_payment_flow\n", "environment:   production\n", "type:          boolean\n",
		"value:         false\n", "version:       1\n", "state digest:  " + digest + "\n", " by " + owner.ID + "\n"} {
		if code != 0 || !strings.Contains(out, line) {
			t.Fatalf("flags get: exit %d, stderr %q, output\n%s\nmissing %q", code, errOut, out, line)
		}
	}
	out, _, code = flags(token, "get", "--project", proj.ID, "--env", "production", "--key", "checkout_v2_new_payment_flow", "--json")
	var got struct {
		signoff.Flag
		StateDigest string `json:"state_digest"`
	}
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.StateDigest != digest || string(got.Value) != "false" {
		t.Fatalf("flags get --json: exit %d %v\n%s", code, err, out)
	}
	out, _, code = flags(token, "list", "--project", proj.ID, "--json")
	var page struct{ Flags []json.RawMessage }
	if err := json.Unmarshal([]byte(out), &page); code != 0 || err != nil || len(page.Flags) != 3 {
		t.Fatalf("flags list --json: exit %d %v\n%s", code, err, out)
	}

	// Errors keep the API's codes as exit codes.
	for _, c := range []struct {
		what string
		tok  string
		args []string
		code int
	}{
		{"missing flag", token, []string{"get", "--project", proj.ID, "--env", "production", "--key", "nope"}, signoff.Codes[signoff.ENOTFOUND].ExitCode},
		{"bad env", token, []string{"list", "--project", proj.ID, "--env", "Prod"}, signoff.Codes[signoff.EINVALID].ExitCode},
		{"unknown project", token, []string{"list", "--project", signoff.NewID(signoff.PrefixProject)}, signoff.Codes[signoff.ENOTFOUND].ExitCode},
		{"reporter", repToken, []string{"list", "--project", proj.ID}, signoff.Codes[signoff.EFORBIDDEN].ExitCode},
		{"no token", "", []string{"list", "--project", proj.ID}, signoff.Codes[signoff.EUNAUTHORIZED].ExitCode},
		{"get without a key", token, []string{"get", "--project", proj.ID, "--env", "production"}, 2},
		{"no project", token, []string{"list"}, 2},
		// A flag changes through a change request; set is only the
		// policy's emergency bypass, asked for with --emergency.
		{"set without --emergency", token, []string{"set", "--project", proj.ID}, signoff.Codes[signoff.EFORBIDDEN].ExitCode},
		{"a verb that does not exist", token, []string{"delete", "--project", proj.ID}, 2},
	} {
		if _, errOut, code := flags(c.tok, c.args...); code != c.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.what, code, c.code, errOut)
		}
	}
}
