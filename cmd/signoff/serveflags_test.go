package main_test

import (
	"strings"
	"testing"
)

// TestServeLimitFlags: the public limits' flags are checked before
// anything is opened.
func TestServeLimitFlags(t *testing.T) {
	t.Parallel()
	db := t.TempDir() + "/x.db"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--trusted-proxies", "10.0.0.0/8,proxy.internal"}, `--trusted-proxies: trusted proxy "proxy.internal"`},
		{[]string{"--trusted-proxies", "10.0.0.0/40"}, "--trusted-proxies"},
		{[]string{"--track-per-minute", "0"}, "--track-per-minute must be from 1"},
		{[]string{"--track-misses-per-minute", "-3"}, "--track-misses-per-minute must be from 1"},
		{[]string{"--intake-total-per-second", "1000000"}, "--intake-total-per-second must be from 1 to 100000"},
	} {
		out, code := signoffCmd(t, append([]string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, tc.args...)...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("serve %v: exit %d %s", tc.args, code, out)
		}
	}
}
