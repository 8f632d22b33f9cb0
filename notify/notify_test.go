package notify_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"mime/quotedprintable"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/channelrules"
	"github.com/signoff-dev/signoff/chat"
	"github.com/signoff-dev/signoff/mail/smtptest"
	"github.com/signoff-dev/signoff/netguard"
	"github.com/signoff-dev/signoff/notify"
	"github.com/signoff-dev/signoff/secretbox"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

type kit struct {
	t     *testing.T
	ctx   context.Context
	s     *sqlstore.DB
	ws    signoff.Workspace
	owner signoff.Actor
	proj  signoff.Project
	d     *notify.Desk
	jobs  int64
}

func newKit(t *testing.T) *kit {
	t.Helper()
	ctx := context.Background()
	_, key, _ := ed25519.GenerateKey(nil)
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "signoff.db"), sqlstore.Options{Signer: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	k := make([]byte, 32)
	rand.Read(k)
	box, _ := secretbox.New(k)
	s.SetSealer(box)
	// The receivers here listen on loopback, which channels reach only
	// when the operator allowlists it.
	s.SetChannelRules(channelrules.WithHosts(netguard.MustAllowlist("127.0.0.1"), nil))
	ws, owner, err := s.CreateWorkspace(ctx, "Acme", "olga")
	if err != nil {
		t.Fatal(err)
	}
	proj, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shoplite"})
	if err != nil {
		t.Fatal(err)
	}
	return &kit{t: t, ctx: ctx, s: s, ws: ws, owner: owner, proj: proj, d: &notify.Desk{Store: s, Holder: "test"}}
}

func (k *kit) channel(in signoff.ChannelInput) signoff.Channel {
	k.t.Helper()
	ch, err := k.s.PutChannel(k.ctx, k.owner, in)
	if err != nil {
		k.t.Fatal(err)
	}
	return ch
}

// deliverAll delivers every pending message of ch, in order, once.
func (k *kit) deliverAll(ch signoff.Channel) []notify.Delivery {
	k.t.Helper()
	ms, err := k.s.ListOutbox(k.ctx, k.owner, signoff.OutboxFilter{ChannelID: ch.ID, State: signoff.OutboxPending, Limit: 500})
	if err != nil {
		k.t.Fatal(err)
	}
	var out []notify.Delivery
	for i := len(ms) - 1; i >= 0; i-- {
		d, err := k.d.Deliver(k.ctx, ms[i].MessageID)
		if err != nil {
			k.t.Fatalf("deliver %s (%s): %v", ms[i].MessageID, ms[i].EventType, err)
		}
		out = append(out, d)
	}
	return out
}

// sink records the JSON bodies posted to it.
type sink struct {
	mu     sync.Mutex
	bodies []map[string]any
	hdrs   []http.Header
	answer string
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		http.Error(w, "not json", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.bodies, s.hdrs = append(s.bodies, m), append(s.hdrs, r.Header.Clone())
	s.mu.Unlock()
	w.Write([]byte(s.answer))
}

func (k *kit) decisionCard(c signoff.Case) (signoff.Card, signoff.Decision) {
	k.t.Helper()
	dec, err := k.s.RequestDecision(k.ctx, k.owner, c.ID, "release", json.RawMessage(`{"version":"2.0.0"}`), 0)
	if err != nil {
		k.t.Fatal(err)
	}
	k.jobs++
	cd, _, err := k.d.OpenCard(k.ctx, 4242+k.jobs, time.Now(), signoff.CardJob{WorkspaceID: k.ws.ID, CaseID: c.ID, Seq: k.seqOf("decision.requested", c.ID)})
	if err != nil || cd.ID == "" {
		k.t.Fatalf("OpenCard: %+v %v", cd, err)
	}
	return cd, dec
}

func (k *kit) seqOf(typ, caseID string) int64 {
	k.t.Helper()
	evs, err := k.s.ListEvents(k.ctx, k.owner, caseID, 0, 500)
	if err != nil {
		k.t.Fatal(err)
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == typ {
			return evs[i].Seq
		}
	}
	k.t.Fatalf("no %s event on %s", typ, caseID)
	return 0
}

// TestSlackAndMattermostDelivery: a card reaches Slack (incoming webhook
// and chat.postMessage) and Mattermost with its digest and buttons; a
// signed slash command quoting the digest, from a mapped operator,
// decides the decision where the channel allows it.
func TestSlackAndMattermostDelivery(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	hook, api, mm := &sink{answer: "ok"}, &sink{answer: `{"ok":true}`}, &sink{answer: "ok"}
	hookSrv, apiSrv, mmSrv := httptest.NewServer(hook), httptest.NewServer(api), httptest.NewServer(mm)
	t.Cleanup(hookSrv.Close)
	t.Cleanup(apiSrv.Close)
	t.Cleanup(mmSrv.Close)
	events := []string{"card.*"}
	slack := k.channel(signoff.ChannelInput{Name: "slack", Kind: signoff.ChannelSlack, Events: events, ChatApproval: []string{"decision:release"},
		Secrets: signoff.ChannelSecrets{URL: hookSrv.URL + "/services/T/B/secret-token", SigningSecret: "8f742231b10e8888abcd99yyyzzz85a5"}})
	bot := k.channel(signoff.ChannelInput{Name: "slack-bot", Kind: signoff.ChannelSlack, Events: events,
		Settings: signoff.ChannelSettings{SlackChannel: "C123", SlackAPI: apiSrv.URL}, Secrets: signoff.ChannelSecrets{BotToken: "xoxb-test"}})
	matter := k.channel(signoff.ChannelInput{Name: "mm", Kind: signoff.ChannelMattermost, Events: events, ChatApproval: []string{"decision:release"},
		Settings: signoff.ChannelSettings{ActionURL: "https://signoff.example.com/api/v1/chat/x/mattermost/actions"},
		Secrets:  signoff.ChannelSecrets{URL: mmSrv.URL + "/hooks/abc", Token: "mm-token"}})
	c, err := k.s.CreateCase(k.ctx, k.owner, signoff.CaseInput{ProjectID: k.proj.ID, Kind: signoff.KindBug, Title: "<!channel> @here coupon"})
	if err != nil {
		t.Fatal(err)
	}
	cd, dec := k.decisionCard(c)
	for _, ch := range []signoff.Channel{slack, bot, matter} {
		ds := k.deliverAll(ch)
		if len(ds) != 1 || ds[0].Err != nil || ds[0].Message.CardID != cd.ID {
			t.Fatalf("%s deliveries = %+v", ch.Name, ds)
		}
	}
	slackBody, _ := json.Marshal(hook.bodies[0])
	if !strings.Contains(string(slackBody), cd.SubjectDigest[:12]) || !strings.Contains(string(slackBody), `"blocks"`) ||
		!strings.Contains(string(slackBody), "/signoff approve "+c.ID+" "+cd.SubjectDigest[:12]) {
		t.Fatalf("slack card body lacks the digest, blocks or command: %s", slackBody)
	}
	if api.hdrs[0].Get("Authorization") != "Bearer xoxb-test" || api.bodies[0]["channel"] != "C123" {
		t.Fatalf("chat.postMessage: %v %v", api.hdrs[0], api.bodies[0])
	}
	mmBody, _ := json.Marshal(mm.bodies[0])
	if !strings.Contains(string(mmBody), `"integration"`) || !strings.Contains(string(mmBody), "mm-token") || !strings.Contains(string(mmBody), cd.ID) {
		t.Fatalf("mattermost body lacks its actions: %s", mmBody)
	}

	// A signed slash command from an unmapped user is discarded and the
	// card asked again; once mapped, the operator's approval decides.
	op, err := k.s.CreateActor(k.ctx, k.owner, "omar", signoff.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	command := func(text string) notify.Reply {
		t.Helper()
		form := url.Values{"command": {"/signoff"}, "text": {text}, "user_id": {"U1"}, "user_name": {"omar"}, "team_id": {"T1"},
			"response_url": {"https://hooks.slack.com/commands/T1/1/x"}}
		body := []byte(form.Encode())
		now := time.Now()
		h := http.Header{"X-Slack-Request-Timestamp": {strconv.FormatInt(now.Unix(), 10)},
			"X-Slack-Signature": {chat.SignSlack("8f742231b10e8888abcd99yyyzzz85a5", now, body)}}
		r, err := k.d.Answer(k.ctx, notify.Inbound{ChannelID: slack.ID, Platform: "slack", Shape: "command", Header: h, Body: body})
		if err != nil {
			t.Fatalf("answer %q: %v", text, err)
		}
		return r
	}
	if r := command("approve " + c.ID + " " + cd.SubjectDigest[:12]); r.Outcome != card.WrongResponder {
		t.Fatalf("unmapped user: %+v", r)
	}
	if _, err := k.s.MapChatUser(k.ctx, k.owner, signoff.ChatUser{Platform: "slack", TeamID: "T1", UserID: "U1", ActorID: op.ID}); err != nil {
		t.Fatal(err)
	}
	if r := command("approve " + c.ID + " ffffffffffff"); r.Outcome != card.DigestMismatch {
		t.Fatalf("wrong digest: %+v", r)
	}
	if r := command("approve " + c.ID + " " + cd.SubjectDigest[:12] + " looks right"); r.Outcome != card.Accepted {
		t.Fatalf("mapped operator: %+v", r)
	}
	got, err := k.s.GetDecision(k.ctx, k.owner, dec.ID)
	if err != nil || got.Status != signoff.DecisionApproved || got.DecidedBy != op.ID || !strings.Contains(got.Reason, "slack:"+slack.ID) {
		t.Fatalf("decision = %+v, %v", got, err)
	}
	if c2, _ := k.s.CardByID(k.ctx, k.ws.ID, cd.ID); c2.Status != signoff.CardAnswered || c2.Answer == nil || c2.Answer.Channel != "slack:"+slack.ID {
		t.Fatalf("card = %+v", c2)
	}
	if r := command("approve " + c.ID + " " + cd.SubjectDigest[:12] + " again"); r.Outcome != card.Stale {
		t.Fatalf("second approval: %+v", r)
	}
	// The very same signed request a second time is a replay.
	replay := url.Values{"command": {"/signoff"}, "text": {"reject " + c.ID + " " + cd.SubjectDigest[:12] + " no"}, "user_id": {"U1"}, "team_id": {"T1"}}
	body := []byte(replay.Encode())
	now := time.Now()
	h := http.Header{"X-Slack-Request-Timestamp": {strconv.FormatInt(now.Unix(), 10)}, "X-Slack-Signature": {chat.SignSlack("8f742231b10e8888abcd99yyyzzz85a5", now, body)}}
	if _, err := k.d.Answer(k.ctx, notify.Inbound{ChannelID: slack.ID, Platform: "slack", Shape: "command", Header: h, Body: body}); err != nil {
		t.Fatalf("first delivery of the request: %v", err)
	}
	if r, err := k.d.Answer(k.ctx, notify.Inbound{ChannelID: slack.ID, Platform: "slack", Shape: "command", Header: h, Body: body}); err == nil || r.Status != http.StatusUnauthorized {
		t.Fatalf("replay = %+v, %v", r, err)
	}
	// Upper-case hex is the same signature, so the same request.
	upper := http.Header{"X-Slack-Request-Timestamp": h["X-Slack-Request-Timestamp"], "X-Slack-Signature": {"v0=" + strings.ToUpper(strings.TrimPrefix(h.Get("X-Slack-Signature"), "v0="))}}
	if r, err := k.d.Answer(k.ctx, notify.Inbound{ChannelID: slack.ID, Platform: "slack", Shape: "command", Header: upper, Body: body}); err == nil || r.Status != http.StatusUnauthorized {
		t.Fatalf("replay in upper case = %+v, %v", r, err)
	}
	// A new decision over the same subject opens a new card; a request
	// signed before that card existed cannot answer it, and a rejection
	// needs a reason.
	old := time.Now().Add(-time.Minute)
	cd2, _ := k.decisionCard(c)
	form2 := url.Values{"command": {"/signoff"}, "text": {"approve " + c.ID + " " + cd2.SubjectDigest[:12]}, "user_id": {"U1"}, "team_id": {"T1"}}
	body2 := []byte(form2.Encode())
	h2 := http.Header{"X-Slack-Request-Timestamp": {strconv.FormatInt(old.Unix(), 10)}, "X-Slack-Signature": {chat.SignSlack("8f742231b10e8888abcd99yyyzzz85a5", old, body2)}}
	if r, err := k.d.Answer(k.ctx, notify.Inbound{ChannelID: slack.ID, Platform: "slack", Shape: "command", Header: h2, Body: body2}); err != nil || r.Outcome != card.Stale {
		t.Fatalf("an answer sent before its card opened = %+v, %v", r, err)
	}
	if r := command("reject " + c.ID + " " + cd2.SubjectDigest[:12]); r.Outcome != card.Refused || !strings.Contains(r.Text, "reason") {
		t.Fatalf("a rejection without a reason = %+v", r)
	}
	// The bot channel does not allow chat approval, and an unsigned or
	// replayed request is refused before anything is read.
	form := url.Values{"command": {"/signoff"}, "text": {"approve " + c.ID + " " + cd.SubjectDigest[:12]}, "user_id": {"U1"}, "team_id": {"T1"}}
	if _, err := k.d.Answer(k.ctx, notify.Inbound{ChannelID: slack.ID, Platform: "slack", Shape: "command", Header: http.Header{}, Body: []byte(form.Encode())}); err == nil {
		t.Fatal("an unsigned command was taken")
	}
}

// TestReporterMail: a reporter who left an address is told by e-mail,
// over STARTTLS, when their case needs them; the mail carries the message
// id and none of the case's text. A reporter without an address is
// skipped, and a failed send is retried under the same id.
func TestReporterMail(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	srv := smtptest.Start(t, smtptest.Options{RequireTLS: true, FailRcpt: 1, Username: "signoff", Password: "pw"})
	host, port := srv.Addr()
	k.d.SMTPTLS = srv.ClientTLS()
	ch := k.channel(signoff.ChannelInput{Name: "mail", Kind: signoff.ChannelEmail,
		Settings: signoff.ChannelSettings{SMTPHost: host, SMTPPort: port, From: "signoff@example.com", Username: "signoff"},
		Secrets:  signoff.ChannelSecrets{SMTPPassword: "pw"}})
	withMail, _, _, err := k.s.SubmitReport(k.ctx, signoff.ReportInput{ProjectID: k.proj.ID, Text: "coupon SECRET-DETAIL applied twice", Contact: "Rita <rita@example.com>"})
	if err != nil {
		t.Fatal(err)
	}
	without, _, _, err := k.s.SubmitReport(k.ctx, signoff.ReportInput{ProjectID: k.proj.ID, Text: "another bug", Contact: "@rita on the forum"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []signoff.Case{withMail, without} {
		for _, cmd := range []string{"start_triage", "request_info"} {
			if _, _, err := k.s.TransitionCase(k.ctx, k.owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
		}
	}
	ds := k.deliverAll(ch)
	if len(ds) != 2 {
		t.Fatalf("deliveries = %+v, want the two needs_info notices", ds)
	}
	var failed *notify.Delivery
	for i, d := range ds {
		switch d.Message.CaseID {
		case withMail.ID:
			if d.Err == nil {
				t.Fatal("the first RCPT fails with 451: the first attempt must fail")
			}
			failed = &ds[i]
		case without.ID:
			if !d.Skipped {
				t.Fatalf("no address: %+v", d)
			}
		}
	}
	d, err := k.d.Deliver(k.ctx, failed.Message.MessageID)
	if err != nil || d.Err != nil || d.Attempt != 2 {
		t.Fatalf("retry = %+v, %v", d, err)
	}
	msgs := srv.Messages()
	if len(msgs) != 1 || !msgs[0].TLS || msgs[0].To[0] != "rita@example.com" || msgs[0].AuthUser != "signoff" {
		t.Fatalf("received = %+v", msgs)
	}
	raw := string(msgs[0].Data)
	body, _ := io.ReadAll(quotedprintable.NewReader(strings.NewReader(raw[strings.Index(raw, "\r\n\r\n")+4:])))
	if !strings.Contains(raw, failed.Message.MessageID) || strings.Contains(raw+string(body), "SECRET-DETAIL") ||
		!strings.Contains(string(body), "waiting for your answer") {
		t.Fatalf("mail:\n%s\n%s", raw, body)
	}
	if m, _, err := k.s.GetOutbox(k.ctx, k.owner, failed.Message.MessageID); err != nil || m.State != signoff.OutboxDelivered || m.Attempts != 2 {
		t.Fatalf("message = %+v, %v", m, err)
	}
}

// TestDeadAfterAttempts: a receiver that never succeeds parks the message
// as dead after the schedule's attempts, with its last error kept.
func TestDeadAfterAttempts(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", http.StatusBadGateway) }))
	t.Cleanup(srv.Close)
	ch := k.channel(signoff.ChannelInput{Name: "hook", Kind: signoff.ChannelWebhook, Events: []string{"case.created"},
		Secrets: signoff.ChannelSecrets{URL: srv.URL, WebhookSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})
	k.d.Retry.Attempts, k.d.Retry.Base, k.d.Retry.Max = 3, time.Millisecond, time.Millisecond
	if _, err := k.s.CreateCase(k.ctx, k.owner, signoff.CaseInput{ProjectID: k.proj.ID, Kind: signoff.KindBug, Title: "x"}); err != nil {
		t.Fatal(err)
	}
	var last notify.Delivery
	for i := range 3 {
		ds := k.deliverAll(ch)
		if len(ds) != 1 {
			t.Fatalf("attempt %d: %d deliveries", i+1, len(ds))
		}
		last = ds[0]
	}
	if !last.Dead || last.Status != http.StatusBadGateway {
		t.Fatalf("last attempt = %+v", last)
	}
	if _, err := k.d.Deliver(k.ctx, last.Message.MessageID); !errors.Is(err, sqlstore.ErrSettled) {
		t.Fatalf("delivery of a dead message = %v", err)
	}
	m, atts, err := k.s.GetOutbox(k.ctx, k.owner, last.Message.MessageID)
	if err != nil || m.State != signoff.OutboxDead || len(atts) != 3 || !strings.Contains(m.LastError, "502") {
		t.Fatalf("dead message = %+v, %d attempts, %v", m, len(atts), err)
	}
}

// TestDisabledChannel: disabling a channel stops what is already queued
// for it: the message is skipped with the reason, and cannot be re-driven.
func TestDisabledChannel(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	t.Cleanup(srv.Close)
	in := signoff.ChannelInput{Name: "hook", Kind: signoff.ChannelWebhook, Events: []string{"case.created"},
		Secrets: signoff.ChannelSecrets{URL: srv.URL, WebhookSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}
	ch := k.channel(in)
	if _, err := k.s.CreateCase(k.ctx, k.owner, signoff.CaseInput{ProjectID: k.proj.ID, Kind: signoff.KindBug, Title: "x"}); err != nil {
		t.Fatal(err)
	}
	off := false
	in.Enabled = &off
	k.channel(in)
	k.d = &notify.Desk{Store: k.s} // a fresh desk: no cached channel
	ds := k.deliverAll(ch)
	if len(ds) != 1 || !ds[0].Skipped || hits != 0 {
		t.Fatalf("deliveries to a disabled channel = %+v, receiver hit %d times", ds, hits)
	}
	m, _, err := k.s.GetOutbox(k.ctx, k.owner, ds[0].Message.MessageID)
	if err != nil || m.State != signoff.OutboxSkipped || m.LastError != "channel disabled" {
		t.Fatalf("message = %+v, %v", m, err)
	}
}
