package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/channelrules"
	"github.com/signoff-dev/signoff/chat"
	"github.com/signoff-dev/signoff/netguard"
	"github.com/signoff-dev/signoff/notify"
	"github.com/signoff-dev/signoff/secretbox"
	"github.com/signoff-dev/signoff/workflow"
)

// The command an approval card names is run here exactly as a person
// would paste it, so that the card and the CLI cannot drift apart again
// (the cards said "signoff approve case_… (a signed approval)", which the
// CLI refuses with "unexpected arguments"). Only --yes and --key are
// added: a person at a terminal types the case id instead, and keeps the
// key in the default place.

// hintRE finds the command a card says to run.
var hintRE = regexp.MustCompile("run `(signoff [^`]+)`")

// hintArgs returns the arguments of the command a built chat message
// names, without "signoff".
func hintArgs(t *testing.T, body []byte) []string {
	t.Helper()
	m := hintRE.FindSubmatch(body)
	if m == nil {
		t.Fatalf("no command to run in the card:\n%s", body)
	}
	return strings.Fields(string(m[1]))[1:]
}

// slackHook records what an incoming webhook receives.
type slackHook struct {
	mu     sync.Mutex
	bodies [][]byte
}

func (h *slackHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.bodies = append(h.bodies, b)
	h.mu.Unlock()
	w.Write([]byte("ok"))
}

// TestChangeCardShowsTheChangeAndItsCommandApproves: a change waiting for
// approval reaches Slack through the outbox with its target, environment,
// before and after values and reason, and the command the card names,
// run as pasted, signs the approval and approves the case.
func TestChangeCardShowsTheChangeAndItsCommandApproves(t *testing.T) {
	t.Parallel()
	e := newChgEnv(t, nil)
	k := make([]byte, 32)
	rand.Read(k)
	box, err := secretbox.New(k)
	if err != nil {
		t.Fatal(err)
	}
	e.s.SetSealer(box)
	// The Slack receiver is this test's loopback server.
	e.s.SetChannelRules(channelrules.WithHosts(netguard.MustAllowlist("127.0.0.1"), nil))
	hook := &slackHook{}
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	ch, err := e.s.PutChannel(e.ctx, e.owner, signoff.ChannelInput{Name: "slack", Kind: signoff.ChannelSlack, Events: []string{"card.opened"},
		Secrets: signoff.ChannelSecrets{URL: srv.URL + "/services/T/B/secret"}})
	if err != nil {
		t.Fatal(err)
	}

	id, state, _ := e.request(chgReason, true)
	if state != workflow.ChangeAwaitingApproval {
		t.Fatalf("request: %s", state)
	}
	nd := &notify.Desk{Store: e.s, Subjects: cardSubjects(&bugdesk.Desk{Store: e.s}, e.desk), Changes: cardChanges(e.desk)}
	jobs, err := e.s.River().JobList(e.ctx, river.NewJobListParams().Kinds(signoff.CardJob{}.Kind()).First(100))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.Jobs {
		var a signoff.CardJob
		if json.Unmarshal(j.EncodedArgs, &a) == nil && a.CaseID == id {
			if _, _, err := nd.OpenCard(e.ctx, j.ID, j.CreatedAt, a); err != nil {
				t.Fatal(err)
			}
		}
	}
	ms, err := e.s.ListOutbox(e.ctx, e.owner, signoff.OutboxFilter{ChannelID: ch.ID, State: signoff.OutboxPending, Limit: 10})
	if err != nil || len(ms) != 1 {
		t.Fatalf("outbox = %+v, %v; want the card's one message", ms, err)
	}
	if d, err := nd.Deliver(e.ctx, ms[0].MessageID); err != nil || d.Err != nil {
		t.Fatalf("deliver: %+v, %v", d, err)
	}
	if len(hook.bodies) != 1 {
		t.Fatalf("slack received %d messages", len(hook.bodies))
	}
	var text strings.Builder
	var msg struct {
		Blocks []struct {
			Text *struct{ Text string } `json:"text"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(hook.bodies[0], &msg); err != nil {
		t.Fatal(err)
	}
	for _, b := range msg.Blocks {
		if b.Text != nil {
			text.WriteString(b.Text.Text + "\n")
		}
	}
	for _, want := range []string{"*Target:* `flag:prod/" + chgFlag + "` (flag)", "*Environment:* prod",
		"*Before → after:* `true` → `false`", "*Reason:* " + chgReason, "*Plan expires:* ",
		"A signed approval, not answered in chat: run `signoff approve --case " + id + "`"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the card lacks %q:\n%s", want, text.String())
		}
	}

	args := append(hintArgs(t, []byte(text.String())), "--yes", "--key", e.aliceKey)
	out := e.ok(e.aliceToken, nil, args...)
	if got := e.state(id); got != workflow.ChangeApproved {
		t.Fatalf("after the card's command the case is %s:\n%s", got, out)
	}
}

// TestCandidateCardCommandApproves: a bug candidate's card, on every chat
// platform, names a command that signs the approval as pasted.
func TestCandidateCardCommandApproves(t *testing.T) {
	t.Parallel()
	builders := []struct {
		name  string
		build func(chat.Message) ([]byte, error)
	}{
		{"slack", chat.SlackIncoming},
		{"mattermost", func(m chat.Message) ([]byte, error) { return chat.MattermostIncoming(m, "") }},
	}
	for _, b := range builders {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			path, k := approverKey(t)
			f, srv := newFakeAPI(t, k.Public().(ed25519.PublicKey))
			body, err := b.build(chat.Message{ID: "0b8f1c2e-1d2a-5b3c-8d4e-5f6a7b8c9d0e", Title: testCase + ": a decision is waiting", CaseID: testCase,
				Card: &chat.Card{ID: "7c9e6679-7425-50de-944b-e07fc1f90ae7", Kind: card.CandidateApproval, CaseID: testCase,
					SubjectDigest: f.subject, Options: []string{"approve", "reject"}, Addressee: "role:owner,operator",
					ExpiresAt: time.Now().Add(time.Hour), ApproveHint: notify.AnswerHint(card.CandidateApproval, testCase)}})
			if err != nil {
				t.Fatal(err)
			}
			args := append(hintArgs(t, body), "--yes", "--key", path)
			if out, errOut, code := cli(t, nil, srv.URL, args...); code != 0 {
				t.Fatalf("signoff %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
			}
			if got := f.approvals(); len(got) != 1 || got[0].stmt.Case != testCase {
				t.Fatalf("approvals posted: %+v", got)
			}
		})
	}
}
