package main

import (
	"io"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
)

// TestServerFlags checks the precedence of --server, SIGNOFF_URL, --token
// and SIGNOFF_TOKEN, and which refusal comes first.
func TestServerFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		wantBase string
		wantCode string
		wantMsg  string
	}{
		{"defaults", nil, map[string]string{"SIGNOFF_TOKEN": "t"}, "http://127.0.0.1:8080", "", ""},
		{"env URL", nil, map[string]string{"SIGNOFF_URL": "https://s.example/x/", "SIGNOFF_TOKEN": "t"}, "https://s.example/x", "", ""},
		{"flag over env", []string{"--server", "http://f.example", "--token", "f"}, map[string]string{"SIGNOFF_URL": "https://s.example", "SIGNOFF_TOKEN": "bad token"}, "http://f.example", "", ""},
		{"no token", nil, nil, "", signoff.EUNAUTHORIZED, "no API token"},
		{"token before URL", []string{"--server", "ftp://x"}, nil, "", signoff.EUNAUTHORIZED, "no API token"},
		{"bad token before URL", []string{"--server", "ftp://x", "--token", "a b"}, nil, "", signoff.EINVALID, "whitespace"},
		{"explicit empty server", []string{"--server", ""}, map[string]string{"SIGNOFF_URL": "https://s.example", "SIGNOFF_TOKEN": "t"}, "", signoff.EINVALID, `got ""`},
		{"credentials in URL", []string{"--server", "http://u:p@x"}, map[string]string{"SIGNOFF_TOKEN": "t"}, "", signoff.EINVALID, "must not carry credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return tt.env[k] }}
			var sf serverFlags
			fs := newFlags("test", "test")
			addServerFlags(fs, e, &sf)
			if err := parse(fs, e, tt.args); err != nil {
				t.Fatal(err)
			}
			c, err := sf.client(e)
			if got := signoff.ErrorCode(err); got != tt.wantCode {
				t.Fatalf("code %q (%v), want %q", got, err, tt.wantCode)
			}
			if err != nil {
				if !strings.Contains(signoff.ErrorMessage(err), tt.wantMsg) {
					t.Errorf("message %q lacks %q", signoff.ErrorMessage(err), tt.wantMsg)
				}
				return
			}
			if c.BaseURL() != tt.wantBase {
				t.Errorf("base %q, want %q", c.BaseURL(), tt.wantBase)
			}
		})
	}
}
