package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/secretbox"
	"github.com/signoff-dev/signoff/sqlstore"
)

// TestOutboxChannelChatCommands configures a channel, reads and re-drives
// its outbox and maps a chat user through a real API server.
func TestOutboxChannelChatCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, owner, proj := seedStore(t, "shoplite")
	box, err := secretbox.New(bytes.Repeat([]byte{7}, secretbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	s.SetSealer(box)
	token := func(role signoff.Role) (signoff.Actor, string) {
		a := owner
		if role != signoff.RoleOwner {
			if a, err = s.CreateActor(ctx, owner, string(role)+" one", role); err != nil {
				t.Fatal(err)
			}
		}
		_, tok, err := s.CreateToken(ctx, owner, a.ID, "cli", nil)
		if err != nil {
			t.Fatal(err)
		}
		return a, tok
	}
	_, ownerTok := token(signoff.RoleOwner)
	op, opTok := token(signoff.RoleOperator)
	_, viewTok := token(signoff.RoleViewer)
	srv := httptest.NewServer(httpapi.New(s, nil))
	t.Cleanup(srv.Close)
	const hookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	cli := func(tok string, more map[string]string, args ...string) (string, string, int) {
		t.Helper()
		var out, errOut bytes.Buffer
		vars := map[string]string{"SIGNOFF_TOKEN": tok, "SIGNOFF_URL": srv.URL}
		for k, v := range more {
			vars[k] = v
		}
		code := run(ctx, &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }}, args)
		for _, secret := range []string{tok, hookSecret, "s3cr3t"} {
			if secret != "" && strings.Contains(out.String()+errOut.String(), secret) {
				t.Errorf("signoff %v printed a secret", args)
			}
		}
		return out.String(), errOut.String(), code
	}

	// The channel's secrets come from the environment.
	out, errOut, code := cli(ownerTok, map[string]string{"SIGNOFF_CHANNEL_URL": "https://hooks.example.com/in?key=s3cr3t", "SIGNOFF_CHANNEL_SECRET": hookSecret},
		"channel", "put", "ops", "--kind", "webhook", "--events", "case.created, case.transitioned")
	if code != 0 || !regexp.MustCompile(`^channel ops \(chn_\S+\) saved: webhook, enabled\n`).MatchString(out) ||
		!strings.Contains(out, "events:        case.created, case.transitioned\n") || !strings.Contains(out, "secrets set:   url, webhook_secret") {
		t.Fatalf("channel put: exit %d, stderr %q\n%s", code, errOut, out)
	}
	out, _, code = cli(viewTok, nil, "channel", "list")
	if code != 0 || !strings.Contains(out, "NAME") || !regexp.MustCompile(`ops\s+chn_\S+\s+webhook\s+enabled\s+case.created,case.transitioned\s+-\s+url,webhook_secret\n`).MatchString(out) {
		t.Fatalf("channel list: exit %d\n%s", code, out)
	}
	chs, err := s.ListChannels(ctx, owner)
	if err != nil || len(chs) != 1 {
		t.Fatal(err, chs)
	}

	// Two cases, two messages; one fails for good.
	var ids []string
	for range 2 {
		c, err := s.CreateCase(ctx, owner, signoff.CaseInput{ProjectID: proj.ID, Kind: signoff.KindBug, Title: "coupon applied twice"})
		if err != nil {
			t.Fatal(err)
		}
		msgs, err := s.ListOutbox(ctx, owner, signoff.OutboxFilter{CaseID: c.ID})
		if err != nil || len(msgs) != 1 {
			t.Fatal(err, msgs)
		}
		ids = append(ids, msgs[0].MessageID)
	}
	claim, err := s.ClaimMessage(ctx, ids[1], "test-worker", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FinishMessage(ctx, claim, sqlstore.Result{Status: 502, Err: errors.New("bad gateway from hooks.example.com"), Dead: true}); err != nil {
		t.Fatal(err)
	}
	dead := ids[1]

	out, errOut, code = cli(viewTok, nil, "outbox", "list")
	if code != 0 || !strings.HasPrefix(out, "MESSAGE") || strings.Count(out, "\n") != 3 || !strings.Contains(out, "LAST ERROR") {
		t.Fatalf("outbox list: exit %d, stderr %q\n%s", code, errOut, out)
	}
	out, _, code = cli(viewTok, nil, "outbox", "list", "--state", "dead", "--channel", chs[0].ID)
	if code != 0 || strings.Count(out, "\n") != 2 || !regexp.MustCompile(dead+`\s+dead\s+1\s+case.created\s+\d+\s+case_\S+\s+bad gateway from hooks.example.com\n`).MatchString(out) {
		t.Fatalf("outbox list --state dead: exit %d\n%s", code, out)
	}
	if out, _, code = cli(viewTok, nil, "outbox", "list", "--state", "delivered"); code != 0 || out != "no messages\n" {
		t.Fatalf("outbox list --state delivered: exit %d %q", code, out)
	}
	out, _, code = cli(viewTok, nil, "outbox", "list", "--json", "--limit", "1")
	var page struct{ Messages []signoff.OutboxMessage }
	if err := json.Unmarshal([]byte(out), &page); code != 0 || err != nil || len(page.Messages) != 1 {
		t.Fatalf("outbox list --json: exit %d %v\n%s", code, err, out)
	}
	out, _, code = cli(viewTok, nil, "outbox", "show", dead)
	for _, want := range []string{"message:     " + dead + "\n", "state:       dead\n", "attempts:    1\n", "last error:  bad gateway from hooks.example.com\n",
		"ATTEMPT", "test-worker", "502", "re-drive it with: signoff outbox retry " + dead} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("outbox show: exit %d, missing %q\n%s", code, want, out)
		}
	}
	// Flags may come after the id.
	out, _, code = cli(viewTok, nil, "outbox", "show", dead, "--json")
	var view struct {
		Message  signoff.OutboxMessage
		Attempts []signoff.DeliveryAttempt
	}
	if err := json.Unmarshal([]byte(out), &view); code != 0 || err != nil || view.Message.MessageID != dead || len(view.Attempts) != 1 {
		t.Fatalf("outbox show --json: exit %d %v\n%s", code, err, out)
	}

	out, errOut, code = cli(opTok, nil, "outbox", "retry", dead)
	if code != 0 || out != "message "+dead+" re-driven: pending (after 1 attempts)\n" {
		t.Fatalf("outbox retry: exit %d, stderr %q\n%s", code, errOut, out)
	}

	out, errOut, code = cli(ownerTok, nil, "chat", "map", "--platform", "slack", "--team", "T1", "--user", "U1", "--actor", op.ID)
	if code != 0 || out != "slack user T1/U1 is now "+op.ID+"\n" {
		t.Fatalf("chat map: exit %d, stderr %q\n%s", code, errOut, out)
	}

	// Errors keep the API's codes as exit codes.
	for _, c := range []struct {
		what string
		tok  string
		args []string
		code int
	}{
		{"re-drive a pending message", opTok, []string{"outbox", "retry", dead}, signoff.Codes[signoff.ECONFLICT].ExitCode},
		{"viewer re-drives", viewTok, []string{"outbox", "retry", ids[0]}, signoff.Codes[signoff.EFORBIDDEN].ExitCode},
		{"unknown message", viewTok, []string{"outbox", "show", "nope"}, signoff.Codes[signoff.ENOTFOUND].ExitCode},
		{"bad state", viewTok, []string{"outbox", "list", "--state", "lost"}, signoff.Codes[signoff.EINVALID].ExitCode},
		{"no token", "", []string{"outbox", "list"}, signoff.Codes[signoff.EUNAUTHORIZED].ExitCode},
		{"show without an id", viewTok, []string{"outbox", "show"}, 2},
		{"two ids", viewTok, []string{"outbox", "retry", dead, ids[0]}, 2},
		{"put without a kind", ownerTok, []string{"channel", "put", "x"}, 2},
		{"put without a name", ownerTok, []string{"channel", "put", "--kind", "webhook"}, 2},
		{"operator puts a channel", opTok, []string{"channel", "put", "x", "--kind", "webhook", "--url", "https://example.com", "--secret", hookSecret}, signoff.Codes[signoff.EFORBIDDEN].ExitCode},
		{"webhook without its secret", ownerTok, []string{"channel", "put", "x", "--kind", "webhook", "--url", "https://example.com"}, signoff.Codes[signoff.EINVALID].ExitCode},
		{"map without a user", ownerTok, []string{"chat", "map", "--platform", "slack", "--actor", op.ID}, 2},
		{"map to nobody", ownerTok, []string{"chat", "map", "--platform", "slack", "--user", "U2", "--actor", signoff.NewID(signoff.PrefixActor)}, signoff.Codes[signoff.ENOTFOUND].ExitCode},
		{"a verb that does not exist", viewTok, []string{"outbox", "purge"}, 2},
	} {
		if _, errOut, code := cli(c.tok, nil, c.args...); code != c.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.what, code, c.code, errOut)
		}
	}
}
