package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/channelrules"
	"github.com/signoff-dev/signoff/chat"
	"github.com/signoff-dev/signoff/netguard"
	"github.com/signoff-dev/signoff/webhook"
)

// demoNotify is what the bug walk's notifications go to, in this process
// on loopback: a webhook receiver that checks every Standard Webhooks
// signature and counts message ids, and a stand-in for a Slack incoming
// webhook. The deliveries to them are live; the Slack workspace is not.
type demoNotify struct {
	srv      *http.Server
	hookKey  []byte
	signing  string
	hooks    signoff.Channel
	slack    signoff.Channel
	mu       sync.Mutex
	ids      map[string]int
	badSig   int
	slackMsg int
}

// startNotify starts the receivers and configures the demo workspace's
// channels to them; the operator is mapped to the Slack user U_DEMO, and
// the Slack channel takes chat answers for the triage gate.
func (d *demo) startNotify(ctx context.Context) (*demoNotify, error) {
	n := &demoNotify{ids: map[string]int{}, signing: webhook.NewSecret()[6:]}
	secret := webhook.NewSecret()
	key, err := webhook.ParseSecret(secret)
	if err != nil {
		return nil, err
	}
	n.hookKey = key
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hooks", n.hook)
	mux.HandleFunc("POST /slack/services/T_DEMO/B_DEMO/x", n.slackHook)
	n.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go n.srv.Serve(ln)
	base := "http://" + ln.Addr().String()
	// The demo's receivers listen on loopback, which channels reach only
	// when the operator allows it (SIGNOFF_CHANNEL_HOSTS): the demo does.
	d.s.SetChannelRules(channelrules.WithHosts(netguard.MustAllowlist("127.0.0.1"), nil))
	if n.hooks, err = d.s.PutChannel(ctx, d.owner, signoff.ChannelInput{Name: "demo-hooks", Kind: signoff.ChannelWebhook,
		Secrets: signoff.ChannelSecrets{URL: base + "/hooks", WebhookSecret: secret}}); err != nil {
		n.srv.Close()
		return nil, err
	}
	if n.slack, err = d.s.PutChannel(ctx, d.owner, signoff.ChannelInput{Name: "demo-slack", Kind: signoff.ChannelSlack,
		Events: []string{"card.*", "case.transitioned"}, ChatApproval: []string{"triage_gate"},
		Secrets: signoff.ChannelSecrets{URL: base + "/slack/services/T_DEMO/B_DEMO/x", SigningSecret: n.signing}}); err != nil {
		n.srv.Close()
		return nil, err
	}
	if _, err := d.s.MapChatUser(ctx, d.owner, signoff.ChatUser{Platform: signoff.ChannelSlack, TeamID: "T_DEMO", UserID: "U_DEMO", ActorID: d.operator.ID}); err != nil {
		n.srv.Close()
		return nil, err
	}
	return n, nil
}

func (n *demoNotify) hook(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	id, _, err := webhook.Verify(n.hookKey, r.Header, body, time.Now(), 0)
	n.mu.Lock()
	defer n.mu.Unlock()
	if err != nil {
		n.badSig++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	n.ids[id]++
}

func (n *demoNotify) slackHook(w http.ResponseWriter, r *http.Request) {
	var m map[string]any
	if json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&m) != nil || m["blocks"] == nil {
		http.Error(w, "invalid_payload", http.StatusBadRequest)
		return
	}
	n.mu.Lock()
	n.slackMsg++
	n.mu.Unlock()
	w.Write([]byte("ok"))
}

// answerGate answers case id's triage gate the way Slack would deliver
// the operator's slash command: signed with the channel's signing secret,
// quoting the first 12 hex of the card's digest.
func (w *walker) answerGate(n *demoNotify, id string) error {
	op, err := w.api(w.d.operatorToken)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	var gate signoff.Card
	for gate.ID == "" {
		cards, err := op.Cards(w.ctx, id)
		if err != nil {
			return fmt.Errorf("read the cards of case %s: %w", id, err)
		}
		for _, c := range cards {
			if c.Kind == "triage_gate" && c.Status == signoff.CardOpen {
				gate = c
			}
		}
		if gate.ID == "" {
			if time.Now().After(deadline) {
				return fmt.Errorf("no triage gate card opened for %s", id)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	digest := gate.SubjectDigest
	if len(digest) > 7 && digest[:7] == "sha256:" {
		digest = digest[7:]
	}
	form := url.Values{"command": {"/signoff"}, "text": {"approve " + id + " " + digest[:12] + " ticket it"}, "user_id": {"U_DEMO"},
		"user_name": {"demo-operator"}, "team_id": {"T_DEMO"}}
	body := []byte(form.Encode())
	now := time.Now()
	req, err := http.NewRequestWithContext(w.ctx, "POST", w.d.url+"/api/v1/chat/"+n.slack.ID+"/slack/commands", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	// The operator answering in chat is the demo too (walker.call).
	req.Header.Set(signoff.SimulatedPersonHeader, signoff.SimulatedPersonValue)
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("X-Slack-Signature", chat.SignSlack(n.signing, now, body))
	resp, err := w.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var reply struct {
		Text string `json:"text"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&reply); err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("slack command: %s %v", resp.Status, err)
	}
	if len(reply.Text) < 9 || reply.Text[:9] != "recorded:" {
		return fmt.Errorf("slack command not counted: %s", reply.Text)
	}
	return nil
}

// summary waits for the outbox to drain (up to 30 s) and says what was
// delivered, what the receivers saw, and which cards were opened.
func (n *demoNotify) summary(ctx context.Context, d *demo) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		pending, err := d.s.ListOutbox(ctx, d.owner, signoff.OutboxFilter{State: signoff.OutboxPending, Limit: 1})
		if err != nil {
			return "", err
		}
		if len(pending) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	count := func(state string) int {
		ms, _ := d.s.ListOutbox(ctx, d.owner, signoff.OutboxFilter{State: state, Limit: 500})
		return len(ms)
	}
	delivered, dead, pending := count(signoff.OutboxDelivered), count(signoff.OutboxDead), count(signoff.OutboxPending)
	n.mu.Lock()
	ids, copies := len(n.ids), 0
	for _, c := range n.ids {
		copies += c
	}
	bad, slack := n.badSig, n.slackMsg
	n.mu.Unlock()
	cards := 0
	var after int64
	for {
		evs, err := d.s.StreamEvents(ctx, d.owner, after, 1000)
		if err != nil {
			return "", err
		}
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			if e.Type == "card.opened" {
				cards++
			}
		}
		after = evs[len(evs)-1].Seq
	}
	if dead > 0 || pending > 0 || bad > 0 {
		return "", fmt.Errorf("outbox: %d delivered, %d dead, %d pending, %d bad signatures", delivered, dead, pending, bad)
	}
	return fmt.Sprintf("outbox: %d messages delivered, 0 dead, 0 pending (webhook receiver: %d copies of %d distinct ids, every signature verified; Slack stand-in: %d Block Kit messages); %d approval cards opened",
		delivered, copies, ids, slack, cards), nil
}

func (n *demoNotify) close() { n.srv.Close() }
