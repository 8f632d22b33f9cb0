package web_test

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/web"
)

// TestPublicURLInCommands: behind a proxy the server is configured with
// the URL people reach it at and the approval key path they use; the
// commands on the approval page and the case's waiting-on line name
// those, never the address the request came in on.
func TestPublicURLInCommands(t *testing.T) {
	t.Parallel()
	r := newRig(t, rigOptions{opts: web.Options{PublicURL: "https://signoff.example.com/", ApprovalKey: "/etc/signoff/ana.key"}})
	c, _ := r.changeAwaitingApproval(t)
	b := r.visitor(t)
	b.signIn(signoff.RoleOperator)
	want := ">SIGNOFF_URL=https://signoff.example.com signoff approve --case " + c.ID + " --key /etc/signoff/ana.key<"
	if cmd := elementByID(b.get("/cases/"+c.ID+"/approval").body, "approve-command"); !strings.Contains(cmd, want) {
		t.Errorf("approval page command %q, want %q", cmd, want)
	}
	if cmd := elementByID(b.get("/cases/"+c.ID).body, "waiting-command"); !strings.Contains(cmd, want) {
		t.Errorf("waiting-on command %q, want %q", cmd, want)
	}
}

// TestPublicURLRefused: a public URL that is not http(s)://host[:port]
// (it is printed in shell commands) is a wiring mistake.
func TestPublicURLRefused(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"ftp://x", "https://a.example/$(id)", "https://a b", "signoff.example", "https://x/path"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("PublicURL %q accepted", u)
				}
			}()
			web.New(web.Options{Store: newRig(t).store, PublicURL: u})
		}()
	}
}
