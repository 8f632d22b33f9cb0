package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
)

// TestServePublicURLRefused: --public-url is printed in shell commands and
// is a passkey's origin; a value that is not http(s)://host[:port] stops
// serve before it listens.
func TestServePublicURLRefused(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"signoff.example.com", "https://a.example/$(id)", "ftp://a.example", "https://a.example/path"} {
		e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}
		err := runServe(context.Background(), e, []string{"--db", t.TempDir() + "/s.db", "--addr", "127.0.0.1:0", "--public-url", u})
		if signoff.ErrorCode(err) != signoff.EINVALID || !strings.Contains(err.Error(), "--public-url") {
			t.Errorf("--public-url %q: %v", u, err)
		}
	}
}
