package httpapi_test

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/chat"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/notify"
	"github.com/signoff-dev/signoff/secretbox"
	"github.com/signoff-dev/signoff/sqlstore"
)

// Chat credentials of the test channels.
const (
	slackSigningSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	mattermostToken    = "mm-token-9jd8s7s6s5s4s3s2s1"
	webhookSecret      = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
)

// seal gives store a fresh key to seal channel secrets with.
func seal(t testing.TB, store *sqlstore.DB) {
	t.Helper()
	key := make([]byte, secretbox.KeySize)
	rand.Read(key)
	box, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	store.SetSealer(box)
}

// notifyFixture is a workspace's channels: a webhook told of new cases,
// and a Slack and a Mattermost channel that take chat answers to decision
// cards; message is a pending outbox message of the webhook.
type notifyFixture struct {
	hook, slack, mattermost signoff.Channel
	message                 string
}

// withChannels seals the store and gives w its channels and a message.
func (w *workspace) withChannels(t testing.TB) notifyFixture {
	t.Helper()
	seal(t, w.store)
	ctx := context.Background()
	var f notifyFixture
	var err error
	if f.hook, err = w.store.PutChannel(ctx, w.owner, signoff.ChannelInput{Name: "hook", Kind: signoff.ChannelWebhook, Events: []string{"case.created"},
		Secrets: signoff.ChannelSecrets{URL: "https://hooks.example.com/signoff", WebhookSecret: webhookSecret}}); err != nil {
		t.Fatal(err)
	}
	if f.slack, err = w.store.PutChannel(ctx, w.owner, signoff.ChannelInput{Name: "slack", Kind: signoff.ChannelSlack, Events: []string{"card.*"},
		ChatApproval: []string{"decision:approval"},
		Secrets:      signoff.ChannelSecrets{URL: "https://hooks.slack.com/services/T0/B0/x", SigningSecret: slackSigningSecret}}); err != nil {
		t.Fatal(err)
	}
	if f.mattermost, err = w.store.PutChannel(ctx, w.owner, signoff.ChannelInput{Name: "mattermost", Kind: signoff.ChannelMattermost, Events: []string{"card.*"},
		Secrets: signoff.ChannelSecrets{URL: "https://chat.example.com/hooks/x", Token: mattermostToken}}); err != nil {
		t.Fatal(err)
	}
	f.message = w.messageOf(t, w.newCase(t, signoff.KindBug, "").ID)
	return f
}

// messageOf is the one outbox message of case caseID to the "hook" channel.
func (w *workspace) messageOf(t testing.TB, caseID string) string {
	t.Helper()
	// Other tests (the matrix's PUT cells) may add channels meanwhile:
	// the message is the fixture's webhook's.
	chs, err := w.store.ListChannels(context.Background(), w.owner)
	if err != nil {
		t.Fatal(err)
	}
	hook := ""
	for _, c := range chs {
		if c.Name == "hook" {
			hook = c.ID
		}
	}
	msgs, err := w.store.ListOutbox(context.Background(), w.owner, signoff.OutboxFilter{CaseID: caseID, ChannelID: hook})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("outbox of %s: %v %+v", caseID, err, msgs)
	}
	return msgs[0].MessageID
}

// deadMessage opens a case and parks its message as dead after one
// failed attempt.
func (w *workspace) deadMessage(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	id := w.messageOf(t, w.newCase(t, signoff.KindBug, "").ID)
	c, err := w.store.ClaimMessage(ctx, id, "test", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.store.FinishMessage(ctx, c, sqlstore.Result{Status: 503, Err: errors.New("receiver down"), Dead: true}); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestChannelRoutes(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	seal(t, store)
	opTok := w.token(t, w.actor(t, "olga", signoff.RoleOperator))
	viewTok := w.token(t, w.actor(t, "vic", signoff.RoleViewer))
	agentTok := w.token(t, w.actor(t, "tri", signoff.RoleTriager))
	srv := serve(t, store, nil)

	body := `{"kind":"webhook","events":["case.*"],"secrets":{"url":"https://hooks.example.com/in?key=s3cr3t","webhook_secret":"` + webhookSecret + `"}}`
	got := do(t, srv, request{method: "PUT", path: "/api/v1/channels/alerts", token: w.ownerToken, body: body})
	if got.status != http.StatusOK {
		t.Fatalf("put: %d %s", got.status, got.body)
	}
	var ch signoff.Channel
	got.decode(t, &ch)
	if ch.Name != "alerts" || ch.Kind != signoff.ChannelWebhook || ch.Settings.URLHost != "hooks.example.com" || strings.Join(ch.Secrets, ",") != "url,webhook_secret" || !ch.Enabled {
		t.Fatalf("channel = %+v", ch)
	}
	// Replacing by name keeps the id; a disabled channel says so.
	got = do(t, srv, request{method: "PUT", path: "/api/v1/channels/alerts", token: w.ownerToken,
		body: `{"kind":"webhook","enabled":false,"secrets":{"url":"https://hooks.example.com/in?key=s3cr3t","webhook_secret":"` + webhookSecret + `"}}`})
	var again signoff.Channel
	got.decode(t, &again)
	if again.ID != ch.ID || again.Enabled {
		t.Fatalf("replaced channel = %+v, was %+v", again, ch)
	}
	for _, tok := range []string{w.ownerToken, opTok, viewTok} {
		got := do(t, srv, request{method: "GET", path: "/api/v1/channels", token: tok})
		var list struct{ Channels []signoff.Channel }
		got.decode(t, &list)
		if len(list.Channels) != 1 || list.Channels[0].ID != ch.ID || strings.Join(list.Channels[0].Secrets, ",") != "url,webhook_secret" {
			t.Fatalf("channels = %+v", list.Channels)
		}
		if strings.Contains(string(got.body), "s3cr3t") || strings.Contains(string(got.body), webhookSecret) {
			t.Fatalf("channel list shows a secret: %s", got.body)
		}
	}
	tests := []struct {
		name, tok, path, body string
		want                  int
	}{
		{"no token", "", "/api/v1/channels/x", body, 401},
		{"operator", opTok, "/api/v1/channels/x", body, 403},
		{"agent", agentTok, "/api/v1/channels/x", body, 403},
		{"name in the body", w.ownerToken, "/api/v1/channels/x", `{"name":"y","kind":"webhook"}`, 422},
		{"bad name", w.ownerToken, "/api/v1/channels/Alerts%21", body, 422},
		{"unknown kind", w.ownerToken, "/api/v1/channels/x", `{"kind":"pager","secrets":{"url":"https://example.com"}}`, 422},
		{"webhook without a secret", w.ownerToken, "/api/v1/channels/x", `{"kind":"webhook","secrets":{"url":"https://example.com"}}`, 422},
		{"unknown secret", w.ownerToken, "/api/v1/channels/x", `{"kind":"webhook","secrets":{"password":"x"}}`, 422},
		{"chat approval of signed approvals", w.ownerToken, "/api/v1/channels/x",
			`{"kind":"slack","chat_approval":["candidate_approval"],"secrets":{"url":"https://hooks.slack.com/x","signing_secret":"s"}}`, 422},
		{"bad event pattern", w.ownerToken, "/api/v1/channels/x", `{"kind":"webhook","events":["case.["],"secrets":{"url":"https://example.com","webhook_secret":"` + webhookSecret + `"}}`, 422},
	}
	for _, tt := range tests {
		got := do(t, srv, request{method: "PUT", path: tt.path, token: tt.tok, body: tt.body})
		if got.status != tt.want {
			t.Errorf("%s: status %d, want %d (%s)", tt.name, got.status, tt.want, got.body)
			continue
		}
		got.problem(t)
	}
	if got := do(t, srv, request{method: "GET", path: "/api/v1/channels", token: agentTok}); got.status != 403 {
		t.Fatalf("agent lists channels: %d", got.status)
	}

	// Without the server's secret key nothing is sealed, so nothing is
	// stored.
	bare := openStore(t)
	bw := newWorkspace(t, bare, "Bare")
	if got := do(t, serve(t, bare, nil), request{method: "PUT", path: "/api/v1/channels/alerts", token: bw.ownerToken, body: body}); got.status != 503 {
		t.Fatalf("put without a sealer: %d %s", got.status, got.body)
	}
}

func TestOutboxRoutes(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	f := w.withChannels(t)
	other := w.newCase(t, signoff.KindBug, "")
	dead := w.deadMessage(t)
	opTok := w.token(t, w.actor(t, "olga", signoff.RoleOperator))
	viewTok := w.token(t, w.actor(t, "vic", signoff.RoleViewer))
	repTok := w.token(t, w.actor(t, "rita", signoff.RoleReporter))
	foreign := newWorkspace(t, store, "Globex")
	srv := serve(t, store, nil)

	list := func(tok, q string) []signoff.OutboxMessage {
		t.Helper()
		got := do(t, srv, request{method: "GET", path: "/api/v1/outbox" + q, token: tok})
		var page struct{ Messages []signoff.OutboxMessage }
		got.decode(t, &page)
		return page.Messages
	}
	if msgs := list(viewTok, ""); len(msgs) != 3 {
		t.Fatalf("outbox = %+v, want 3 messages", msgs)
	}
	if msgs := list(viewTok, "?state=dead"); len(msgs) != 1 || msgs[0].MessageID != dead || msgs[0].LastError != "receiver down" || msgs[0].Attempts != 1 {
		t.Fatalf("dead = %+v", msgs)
	}
	if msgs := list(opTok, "?case="+other.ID); len(msgs) != 1 || msgs[0].CaseID != other.ID || msgs[0].EventType != "case.created" {
		t.Fatalf("outbox of %s = %+v", other.ID, msgs)
	}
	if msgs := list(opTok, "?channel="+f.hook.ID+"&state=pending&limit=1"); len(msgs) != 1 || msgs[0].ChannelID != f.hook.ID || msgs[0].State != "pending" {
		t.Fatalf("outbox of the hook = %+v", msgs)
	}
	if msgs := list(foreign.ownerToken, ""); len(msgs) != 0 {
		t.Fatalf("another workspace's outbox = %+v", msgs)
	}
	for _, q := range []string{"?state=lost", "?limit=0", "?limit=501", "?channel=hook", "?case=nope", "?colour=red", "?state=dead&state=pending"} {
		if got := do(t, srv, request{method: "GET", path: "/api/v1/outbox" + q, token: viewTok}); got.status != 422 {
			t.Errorf("GET /api/v1/outbox%s: %d, want 422 (%s)", q, got.status, got.body)
		}
	}

	got := do(t, srv, request{method: "GET", path: "/api/v1/outbox/" + dead, token: viewTok})
	var view struct {
		Message  signoff.OutboxMessage
		Attempts []signoff.DeliveryAttempt
	}
	got.decode(t, &view)
	if view.Message.MessageID != dead || view.Message.State != signoff.OutboxDead || len(view.Attempts) != 1 ||
		view.Attempts[0].Status != 503 || view.Attempts[0].Error != "receiver down" || view.Attempts[0].FinishedAt == nil {
		t.Fatalf("message = %+v", view)
	}
	got = do(t, srv, request{method: "GET", path: "/api/v1/outbox/" + f.message, token: viewTok})
	if got.status != 200 || !strings.Contains(string(got.body), `"attempts":[]`) {
		t.Fatalf("pending message: %d %s", got.status, got.body)
	}

	tests := []struct {
		name, method, path, tok string
		want                    int
	}{
		{"unknown message", "GET", "/api/v1/outbox/nope", viewTok, 404},
		{"another workspace's message", "GET", "/api/v1/outbox/" + dead, foreign.ownerToken, 404},
		{"reporter reads", "GET", "/api/v1/outbox/" + dead, repTok, 403},
		{"reporter lists", "GET", "/api/v1/outbox", repTok, 403},
		{"no token", "GET", "/api/v1/outbox", "", 401},
		{"viewer re-drives", "POST", "/api/v1/outbox/" + dead + "/retry", viewTok, 403},
		{"another workspace re-drives", "POST", "/api/v1/outbox/" + dead + "/retry", foreign.ownerToken, 404},
		{"re-drive an unknown message", "POST", "/api/v1/outbox/nope/retry", opTok, 404},
		{"re-drive a pending message", "POST", "/api/v1/outbox/" + f.message + "/retry", opTok, 409},
	}
	for _, tt := range tests {
		got := do(t, srv, request{method: tt.method, path: tt.path, token: tt.tok})
		if got.status != tt.want {
			t.Errorf("%s: status %d, want %d (%s)", tt.name, got.status, tt.want, got.body)
			continue
		}
		got.problem(t)
	}

	// A dead message is re-driven once, under its own id; then it is
	// pending and a second re-drive conflicts, naming its state.
	got = do(t, srv, request{method: "POST", path: "/api/v1/outbox/" + dead + "/retry", token: opTok})
	var m signoff.OutboxMessage
	got.decode(t, &m)
	if got.status != 200 || m.MessageID != dead || m.State != signoff.OutboxPending {
		t.Fatalf("retry: %d %+v", got.status, m)
	}
	got = do(t, srv, request{method: "POST", path: "/api/v1/outbox/" + dead + "/retry", token: w.ownerToken})
	if p := got.problem(t); got.status != 409 || p.CurrentState != signoff.OutboxPending {
		t.Fatalf("second retry: %d %+v", got.status, p)
	}
	if msgs := list(viewTok, "?state=dead"); len(msgs) != 0 {
		t.Fatalf("dead after the re-drive = %+v", msgs)
	}
}

func TestChatUserRoutes(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	op := w.actor(t, "olga", signoff.RoleOperator)
	opTok := w.token(t, op)
	rep := w.actor(t, "rita", signoff.RoleReporter)
	agent := w.actor(t, "tri", signoff.RoleTriager)
	srv := serve(t, store, nil)

	got := do(t, srv, request{method: "PUT", path: "/api/v1/chat-users", token: w.ownerToken,
		body: `{"platform":"slack","team_id":"T1","user_id":"U1","actor_id":"` + op.ID + `"}`})
	var u signoff.ChatUser
	got.decode(t, &u)
	if got.status != 200 || u.Platform != "slack" || u.TeamID != "T1" || u.UserID != "U1" || u.ActorID != op.ID || u.CreatedAt.IsZero() {
		t.Fatalf("map: %d %+v", got.status, u)
	}
	tests := []struct {
		name, tok, body string
		want            int
	}{
		{"operator", opTok, `{"platform":"slack","team_id":"T1","user_id":"U2","actor_id":"` + op.ID + `"}`, 403},
		{"no token", "", `{"platform":"slack","team_id":"T1","user_id":"U2","actor_id":"` + op.ID + `"}`, 401},
		{"unknown platform", w.ownerToken, `{"platform":"teams","team_id":"T1","user_id":"U2","actor_id":"` + op.ID + `"}`, 422},
		{"no user", w.ownerToken, `{"platform":"slack","team_id":"T1","actor_id":"` + op.ID + `"}`, 422},
		{"a reporter", w.ownerToken, `{"platform":"slack","team_id":"T1","user_id":"U2","actor_id":"` + rep.ID + `"}`, 422},
		{"an agent", w.ownerToken, `{"platform":"slack","team_id":"T1","user_id":"U2","actor_id":"` + agent.ID + `"}`, 422},
		{"unknown person", w.ownerToken, `{"platform":"slack","team_id":"T1","user_id":"U2","actor_id":"` + signoff.NewID(signoff.PrefixActor) + `"}`, 404},
		{"created_at is not input", w.ownerToken, `{"platform":"slack","team_id":"T1","user_id":"U2","actor_id":"` + op.ID + `","created_at":"2020-01-01T00:00:00Z"}`, 422},
	}
	for _, tt := range tests {
		got := do(t, srv, request{method: "PUT", path: "/api/v1/chat-users", token: tt.tok, body: tt.body})
		if got.status != tt.want {
			t.Errorf("%s: status %d, want %d (%s)", tt.name, got.status, tt.want, got.body)
			continue
		}
		got.problem(t)
	}
}

// slackForm is a signed-or-not Slack slash command: approve or reject
// with text.
func slackForm(text, user string) string {
	return url.Values{"command": {"/signoff"}, "text": {text}, "team_id": {"T1"}, "user_id": {user}, "user_name": {"olga"}}.Encode()
}

func signedSlack(body string, at time.Time) map[string]string {
	return map[string]string{chat.HeaderSlackTimestamp: strconv.FormatInt(at.Unix(), 10), chat.HeaderSlackSignature: chat.SignSlack(slackSigningSecret, at, []byte(body))}
}

// TestChatRoutes answers a decision card from Slack: the signature is the
// credential, the mapped person decides, and the card and the decision
// record the answer. Everything else is refused without detail.
func TestChatRoutes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	f := w.withChannels(t)
	op := w.actor(t, "olga", signoff.RoleOperator)
	viewTok := w.token(t, w.actor(t, "vic", signoff.RoleViewer))
	repTok := w.token(t, w.actor(t, "rita", signoff.RoleReporter))
	desk := &notify.Desk{Store: store}
	srv := serve(t, store, nil, unlimited(), httpapi.WithNotify(desk))

	// The decision's card, as the card job opens it.
	d := w.newDecision(t, w.bug)
	c, opened, err := desk.OpenCard(ctx, 1, time.Now(), signoff.CardJob{WorkspaceID: w.ws.ID, CaseID: w.bug.ID, Seq: w.head(t)})
	if err != nil || !opened || c.DecisionID != d.ID {
		t.Fatalf("OpenCard = %+v, %v, %v", c, opened, err)
	}
	got := do(t, srv, request{method: "GET", path: "/api/v1/cases/" + w.bug.ID + "/cards", token: viewTok})
	var cards struct {
		Cards   []signoff.Card
		Answers []signoff.CardAnswer
	}
	got.decode(t, &cards)
	if len(cards.Cards) != 1 || cards.Cards[0].ID != c.ID || cards.Cards[0].Status != signoff.CardOpen || cards.Answers == nil || len(cards.Answers) != 0 {
		t.Fatalf("cards = %s", got.body)
	}
	if got := do(t, srv, request{method: "PUT", path: "/api/v1/chat-users", token: w.ownerToken,
		body: `{"platform":"slack","team_id":"T1","user_id":"U1","actor_id":"` + op.ID + `"}`}); got.status != 200 {
		t.Fatalf("map: %d %s", got.status, got.body)
	}

	slack := "/api/v1/chat/" + f.slack.ID + "/slack/commands"
	prefix := strings.TrimPrefix(d.SubjectDigest, "sha256:")[:16]
	body := slackForm("approve "+w.bug.ID+" "+prefix+" looks right", "U1")
	got = do(t, srv, request{method: "POST", path: slack, contentType: "application/x-www-form-urlencoded", body: body, header: signedSlack(body, time.Now())})
	var reply struct {
		ResponseType string `json:"response_type"`
		Text         string `json:"text"`
	}
	got.decode(t, &reply)
	if got.status != 200 || reply.ResponseType != "ephemeral" || !strings.Contains(reply.Text, "recorded: approve on "+w.bug.ID) {
		t.Fatalf("answer: %d %s", got.status, got.body)
	}
	dec, err := store.GetDecision(ctx, w.owner, d.ID)
	if err != nil || dec.Status != signoff.DecisionApproved || dec.DecidedBy != op.ID || !strings.Contains(dec.Reason, "slack:"+f.slack.ID) {
		t.Fatalf("decision = %+v, %v", dec, err)
	}
	got = do(t, srv, request{method: "GET", path: "/api/v1/cases/" + w.bug.ID + "/cards", token: viewTok})
	got.decode(t, &cards)
	if len(cards.Cards) != 1 || cards.Cards[0].Status != signoff.CardAnswered || len(cards.Answers) == 0 || cards.Answers[len(cards.Answers)-1].ActorID != op.ID {
		t.Fatalf("cards after the answer = %s", got.body)
	}

	// Mattermost's token is checked; a person who is not mapped is told
	// so, and the answer is refused.
	mm := url.Values{"command": {"/signoff"}, "text": {"reject " + w.bug.ID + " " + prefix}, "user_id": {"u9"}, "token": {mattermostToken}}.Encode()
	got = do(t, srv, request{method: "POST", path: "/api/v1/chat/" + f.mattermost.ID + "/mattermost/commands", contentType: "application/x-www-form-urlencoded", body: mm})
	var mmReply struct {
		Text          string `json:"text"`
		EphemeralText string `json:"ephemeral_text"`
	}
	got.decode(t, &mmReply)
	if got.status != 200 || mmReply.Text == "" || mmReply.EphemeralText != mmReply.Text {
		t.Fatalf("mattermost: %d %s", got.status, got.body)
	}

	refused := func(name string, rq request, want int) {
		t.Helper()
		got := do(t, srv, rq)
		if got.status != want {
			t.Errorf("%s: status %d, want %d (%s)", name, got.status, want, got.body)
			return
		}
		p := got.problem(t)
		if want == 401 && p.Detail != "request refused" {
			t.Errorf("%s: detail %q", name, p.Detail)
		}
		if want == 404 && p.Detail != "channel not found" {
			t.Errorf("%s: detail %q", name, p.Detail)
		}
	}
	form := "application/x-www-form-urlencoded"
	again := slackForm("reject "+w.bug.ID+" "+prefix, "U1")
	hdr := signedSlack(again, time.Now())
	if got := do(t, srv, request{method: "POST", path: slack, contentType: form, body: again, header: hdr}); got.status != 200 {
		t.Fatalf("second answer: %d %s", got.status, got.body)
	}
	refused("replayed", request{method: "POST", path: slack, contentType: form, body: again, header: hdr}, 401)
	refused("unsigned", request{method: "POST", path: slack, contentType: form, body: body}, 401)
	refused("an API token is no credential here", request{method: "POST", path: slack, contentType: form, body: body, token: w.ownerToken}, 401)
	refused("signed for another body", request{method: "POST", path: slack, contentType: form, body: body + "&x=1", header: signedSlack(body, time.Now())}, 401)
	refused("stale", request{method: "POST", path: slack, contentType: form, body: body, header: signedSlack(body, time.Now().Add(-time.Hour))}, 401)
	refused("wrong mattermost token", request{method: "POST", path: "/api/v1/chat/" + f.mattermost.ID + "/mattermost/commands", contentType: form,
		body: strings.Replace(mm, mattermostToken, "guess", 1)}, 401)
	refused("unknown channel", request{method: "POST", path: "/api/v1/chat/" + signoff.NewID(signoff.PrefixChannel) + "/slack/commands", contentType: form, body: body, header: signedSlack(body, time.Now())}, 404)
	refused("not a channel id", request{method: "POST", path: "/api/v1/chat/hook/slack/commands", contentType: form, body: body}, 404)
	refused("a slack channel on the mattermost route", request{method: "POST", path: "/api/v1/chat/" + f.slack.ID + "/mattermost/commands", contentType: form, body: mm}, 404)
	refused("a webhook channel", request{method: "POST", path: "/api/v1/chat/" + f.hook.ID + "/slack/actions", contentType: form, body: body, header: signedSlack(body, time.Now())}, 404)
	big := body + "&pad=" + strings.Repeat("x", chat.MaxBody)
	refused("too large", request{method: "POST", path: slack, contentType: form, body: big, header: signedSlack(big, time.Now())}, 413)
	refused("GET", request{method: "GET", path: slack}, 405)

	if got := do(t, srv, request{method: "GET", path: "/api/v1/cases/" + w.bug.ID + "/cards", token: repTok}); got.status != 403 {
		t.Fatalf("reporter reads cards: %d", got.status)
	}
	if got := do(t, srv, request{method: "GET", path: "/api/v1/cases/" + signoff.NewID(signoff.PrefixCase) + "/cards", token: viewTok}); got.status != 404 {
		t.Fatalf("cards of an unknown case: %d", got.status)
	}

	// Without a notify desk the chat endpoints are not there.
	plain := serve(t, store, nil)
	if got := do(t, plain, request{method: "POST", path: slack, contentType: form, body: body, header: signedSlack(body, time.Now())}); got.status != 404 {
		t.Fatalf("without WithNotify: %d %s", got.status, got.body)
	}
}

// TestChatRateLimit: one address knocks on the credential check at most
// so fast.
func TestChatRateLimit(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	f := w.withChannels(t)
	srv := serve(t, store, nil, unlimited(), httpapi.WithNotify(&notify.Desk{Store: store}))
	path := "/api/v1/chat/" + f.slack.ID + "/slack/commands"
	for i := 0; ; i++ {
		got := do(t, srv, request{method: "POST", path: path, contentType: "application/x-www-form-urlencoded", body: "x=1"})
		if got.status == 429 {
			if i < 50 || got.header.Get("Retry-After") == "" {
				t.Fatalf("limited after %d requests, Retry-After %q", i, got.header.Get("Retry-After"))
			}
			got.problem(t)
			return
		}
		if got.status != 401 || i > 1000 {
			t.Fatalf("request %d: %d %s", i, got.status, got.body)
		}
	}
}
