// Package notify delivers the outbox: each message of a ledger event to
// one channel (signed webhook, Slack, Mattermost, e-mail to the reporter),
// under a lease, retried with backoff and parked as dead when its attempts
// run out. It also opens approval cards and takes chat answers to them.
//
// Delivery is at least once. A message carries the same id on every
// attempt; a worker that dies mid-delivery never acknowledges, and once
// its lease runs out another worker delivers the message again.
package notify

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/chat"
	"github.com/signoff-dev/signoff/mail"
	"github.com/signoff-dev/signoff/netguard"
	"github.com/signoff-dev/signoff/outbox"
	"github.com/signoff-dev/signoff/webhook"
)

// DefaultLease is how long a worker holds a message it is delivering.
const DefaultLease = 60 * time.Second

// DefaultAttemptTimeout bounds one delivery attempt.
const DefaultAttemptTimeout = 10 * time.Second

// Subjects resolves what a card for case c in its current state shows:
// the digest of the exact subject and when the card expires (zero for
// card.DefaultTTL). The desks provide it; it reads, never writes.
type Subjects func(ctx context.Context, c signoff.Case, spec card.Spec) (digest string, expires time.Time, err error)

// Desk delivers messages and runs cards.
type Desk struct {
	Store Store
	Log   *slog.Logger
	// Retry is the retry schedule (outbox.DefaultRetry when zero).
	Retry outbox.Retry
	// Lease is how long a claim holds a message (DefaultLease when zero).
	Lease time.Duration
	// AttemptTimeout bounds one attempt (DefaultAttemptTimeout when zero;
	// never more than 90% of the lease).
	AttemptTimeout time.Duration
	// Holder names this worker in leases and attempts.
	Holder string
	// HTTP sends webhooks and chat messages. Nil (production) is a client
	// that dials through the host rule of the store's channel rules; one
	// set here replaces that guard, so only tests set it.
	HTTP *http.Client
	// Subjects resolves state cards; without it only decision cards open.
	Subjects Subjects
	// Changes reads the plan of a change approval card, so that its
	// messages show what changes; without it they show the digest only.
	Changes Changes
	// SMTPTLS, when set, is the TLS configuration for e-mail channels
	// (tests trust their own server with it).
	SMTPTLS *tls.Config
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// ResponseHosts are hosts besides hooks.slack.com that Slack
	// response_urls may name (tests; a Slack-compatible server).
	ResponseHosts []string

	limits     answerLimits
	holderOnce sync.Once
	once       sync.Once
	mu         sync.Mutex
	channels   map[string]cachedChannel
}

func (d *Desk) log() *slog.Logger {
	if d.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Log
}

func (d *Desk) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Desk) retry() outbox.Retry {
	if d.Retry.Attempts == 0 {
		return outbox.DefaultRetry
	}
	return d.Retry
}

func (d *Desk) lease() time.Duration {
	if d.Lease <= 0 {
		return DefaultLease
	}
	return d.Lease
}

func (d *Desk) attemptTimeout() time.Duration {
	t := d.AttemptTimeout
	if t <= 0 {
		t = DefaultAttemptTimeout
	}
	return min(t, d.lease()*9/10)
}

func (d *Desk) holder() string {
	d.holderOnce.Do(func() {
		if d.Holder == "" {
			host, _ := os.Hostname()
			var b [4]byte
			rand.Read(b[:])
			d.Holder = fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b[:]))
		}
	})
	return d.Holder
}

func (d *Desk) client() *http.Client {
	d.once.Do(func() {
		if d.HTTP != nil {
			return
		}
		// Many deliveries go to one receiver at once: keep as many
		// connections to it as there are workers, instead of the default
		// two and a new TCP connection for every other message.
		// Every connection goes through the store's channel rule: the name
		// is resolved once, each address checked, and the checked address
		// dialled, so a channel's name cannot be re-pointed at an internal
		// address after it was stored (DNS rebinding).
		tr := d.channelGuard().Transport()
		tr.MaxIdleConnsPerHost = 64
		// Receivers are the customer's endpoints: no redirects followed, so
		// a signed message is never replayed somewhere it was not sent.
		d.HTTP = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	})
	return d.HTTP
}

// channelTTL is how long an opened channel is reused: a changed secret or
// URL takes effect within it.
const channelTTL = 2 * time.Second

type cachedChannel struct {
	ch  signoff.Channel
	sec signoff.ChannelSecrets
	at  time.Time
}

// channel returns channel id of ws with its secrets opened, from a short
// cache: opening the sealed secrets for every message is needless work.
func (d *Desk) channel(ctx context.Context, ws, id string) (signoff.Channel, signoff.ChannelSecrets, error) {
	now := time.Now()
	d.mu.Lock()
	c, ok := d.channels[id]
	d.mu.Unlock()
	if ok && now.Sub(c.at) < channelTTL && c.ch.WorkspaceID == ws {
		return c.ch, c.sec, nil
	}
	ch, sec, err := d.Store.ChannelWithSecrets(ctx, ws, id)
	if err != nil {
		return ch, sec, err
	}
	d.mu.Lock()
	if d.channels == nil {
		d.channels = map[string]cachedChannel{}
	}
	d.channels[id] = cachedChannel{ch: ch, sec: sec, at: now}
	d.mu.Unlock()
	return ch, sec, nil
}

// Delivery is how one Deliver call ended.
type Delivery struct {
	Message signoff.OutboxMessage
	Attempt int
	Status  int
	// Err is the attempt's failure (nil when delivered or skipped).
	Err error
	// Dead: the attempts ran out and the message is parked.
	Dead bool
	// Skipped: nothing to deliver (no recipient, the channel disabled).
	Skipped bool
	// RetryIn is the schedule's wait before the next attempt of a
	// failed, not dead, message.
	RetryIn time.Duration
}

// ErrNoAck: the delivery was cut short (the worker's context ended) and
// nothing was acknowledged; the lease will run out.
var ErrNoAck = errors.New("notify: delivery cut short, not acknowledged")

// Deliver makes one attempt at message id: claim it under a lease, send
// it, and acknowledge with the lease's token. It returns
// signoff.ErrSettled for a message that needs nothing, a
// *signoff.WaitError while another lease runs or an earlier message of
// the case waits, and ErrNoAck when ctx ended mid-delivery (a crash, as
// far as the outbox can tell: it acknowledges nothing).
func (d *Desk) Deliver(ctx context.Context, id string) (Delivery, error) {
	claim, err := d.Store.ClaimMessage(ctx, id, d.holder(), d.lease())
	if err != nil {
		return Delivery{}, err
	}
	out := Delivery{Message: claim.Message, Attempt: claim.Attempt}
	status, skipped, serr := d.send(ctx, claim.Message)
	if ctx.Err() != nil {
		return out, fmt.Errorf("%w: %v", ErrNoAck, ctx.Err())
	}
	out.Status, out.Skipped = status, skipped
	res := signoff.OutboxResult{Status: status, Err: serr, Skipped: skipped}
	if serr != nil && !skipped {
		out.Err = serr
		out.Dead = claim.Budget >= d.retry().Attempts
		res.Dead = out.Dead
		if !out.Dead {
			// The schedule counts this message's attempts since it was last
			// re-driven, so a re-drive starts it from the beginning.
			out.RetryIn = d.retry().Delay(claim.Budget, nil)
			res.NextAt = d.now().Add(out.RetryIn)
		}
	}
	if err := d.Store.FinishMessage(ctx, claim, res); err != nil {
		return out, fmt.Errorf("acknowledge %s: %w", id, err)
	}
	if out.Err != nil {
		d.log().WarnContext(ctx, "notification not delivered", "message_id", id, "attempt", claim.Attempt, "status", status, "dead", out.Dead, "err", serr)
	}
	return out, nil
}

// send delivers m once. It reports the receiver's status and whether
// there was nothing to send.
func (d *Desk) send(ctx context.Context, m signoff.OutboxMessage) (int, bool, error) {
	ch, sec, err := d.channel(ctx, m.WorkspaceID, m.ChannelID)
	if err != nil {
		return 0, false, err
	}
	if !ch.Enabled {
		// Disabling a channel stops what is queued for it too.
		return 0, true, errors.New("channel disabled")
	}
	ev, err := d.event(ctx, m, ch)
	if err != nil {
		return 0, false, err
	}
	// The attempt's time limit covers the talking to the receiver, not
	// the reading of what to say.
	ctx, cancel := context.WithTimeout(ctx, d.attemptTimeout())
	defer cancel()
	switch ch.Kind {
	case signoff.ChannelWebhook:
		return d.sendWebhook(ctx, ev, sec)
	case signoff.ChannelSlack:
		return d.sendSlack(ctx, ev, ch, sec)
	case signoff.ChannelMattermost:
		body, err := chat.MattermostIncomingToken(chatMessage(ev, ch), ch.Settings.ActionURL, sec.Token)
		if err != nil {
			return 0, false, err
		}
		st, err := d.post(ctx, sec.URL, body, nil)
		return st, false, err
	case signoff.ChannelEmail:
		return d.sendMail(ctx, ev, ch, sec)
	}
	return 0, false, fmt.Errorf("channel %s: unknown kind %q", ch.ID, ch.Kind)
}

// event builds the JSON event of m from its ledger event (and card).
func (d *Desk) event(ctx context.Context, m signoff.OutboxMessage, ch signoff.Channel) (outbox.Event, error) {
	e, err := d.Store.EventAt(ctx, m.WorkspaceID, m.Seq)
	if err != nil {
		return outbox.Event{}, fmt.Errorf("message %s: %w", m.MessageID, err)
	}
	ev := outbox.Event{ID: m.MessageID, Type: e.Type, Timestamp: e.Time, Data: outbox.EventData{
		WorkspaceID: e.WorkspaceID, CaseID: e.CaseID, Seq: e.Seq, Hash: e.Hash, ActorID: e.ActorID, Payload: e.Payload,
	}}
	if ch.Settings.CaseURL != "" && e.CaseID != "" {
		ev.Data.Link = strings.ReplaceAll(ch.Settings.CaseURL, "{case}", e.CaseID)
	}
	if m.CardID != "" {
		c, err := d.Store.CardByID(ctx, m.WorkspaceID, m.CardID)
		if err != nil {
			return outbox.Event{}, fmt.Errorf("message %s: card: %w", m.MessageID, err)
		}
		ev.Data.Card = &outbox.CardData{ID: c.ID, Kind: c.Kind, SubjectDigest: c.SubjectDigest, Options: c.Options,
			Addressee: c.Addressee.String(), ExpiresAt: c.ExpiresAt, ChatApproval: allows(ch, c.Kind), AnswerHint: AnswerHint(c.Kind, c.CaseID)}
		if c.Kind == card.ChangeApproval && d.Changes != nil {
			// Without the plan the message still goes out, digest and
			// command intact: a case that moved on has no plan to show,
			// and retrying would not give it one.
			sub, err := d.Changes(ctx, m.WorkspaceID, c.CaseID)
			if err == nil {
				ev.Data.Card.Change, err = changeData(sub, c.SubjectDigest)
			}
			if err != nil {
				d.log().WarnContext(ctx, "change card without its plan", "message_id", m.MessageID, "case_id", c.CaseID, "err", err)
			}
		}
	}
	return ev, nil
}

// allows reports whether channel ch lets a chat command answer cards of
// kind as an approval.
func allows(ch signoff.Channel, kind string) bool {
	for _, k := range ch.ChatApproval {
		if k == kind && card.ChatApprovable(kind) {
			return true
		}
	}
	return false
}

func (d *Desk) sendWebhook(ctx context.Context, ev outbox.Event, sec signoff.ChannelSecrets) (int, bool, error) {
	key, err := webhook.ParseSecret(sec.WebhookSecret)
	if err != nil {
		return 0, false, err
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return 0, false, err
	}
	st, err := d.post(ctx, sec.URL, body, webhook.Headers(key, ev.ID, d.now(), body))
	return st, false, err
}

func (d *Desk) sendSlack(ctx context.Context, ev outbox.Event, ch signoff.Channel, sec signoff.ChannelSecrets) (int, bool, error) {
	m := chatMessage(ev, ch)
	if sec.BotToken != "" && ch.Settings.SlackChannel != "" {
		body, err := chat.SlackPostMessage(ch.Settings.SlackChannel, m)
		if err != nil {
			return 0, false, err
		}
		api := ch.Settings.SlackAPI
		if api == "" {
			api = "https://slack.com/api"
		}
		h := http.Header{"Authorization": {"Bearer " + sec.BotToken}}
		resp, st, err := d.postRead(ctx, strings.TrimSuffix(api, "/")+"/chat.postMessage", body, h)
		if err != nil {
			return st, false, err
		}
		// The Web API answers 200 with ok=false for its own errors.
		var r struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(resp, &r); err != nil || !r.OK {
			return st, false, fmt.Errorf("slack chat.postMessage: %s", cmpOr(r.Error, "unreadable answer"))
		}
		return st, false, nil
	}
	body, err := chat.SlackIncoming(m)
	if err != nil {
		return 0, false, err
	}
	st, err := d.post(ctx, sec.URL, body, nil)
	return st, false, err
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// post sends body as JSON to url; any 2xx is delivered.
func (d *Desk) post(ctx context.Context, url string, body []byte, h http.Header) (int, error) {
	_, st, err := d.postRead(ctx, url, body, h)
	return st, err
}

func (d *Desk) postRead(ctx context.Context, url string, body []byte, h http.Header) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("request: %v", redactURL(err))
	}
	for k, v := range h {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Signoff-Outbox/1")
	resp, err := d.client().Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("post: %v", redactURL(err))
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return b, resp.StatusCode, fmt.Errorf("receiver answered %s", resp.Status)
	}
	return b, resp.StatusCode, nil
}

// redactURL keeps a URL's path and query (Slack and Mattermost put
// their tokens there) out of errors that are stored and shown.
func redactURL(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	shown := "(url)"
	if u, perr := url.Parse(ue.URL); perr == nil {
		shown = u.Scheme + "://" + u.Host + "/…"
	}
	return fmt.Errorf("%s %s: %w", ue.Op, shown, ue.Err)
}

// sendMail writes the reporter of the case, when they left an address.
func (d *Desk) sendMail(ctx context.Context, ev outbox.Event, ch signoff.Channel, sec signoff.ChannelSecrets) (int, bool, error) {
	contact, err := d.Store.ReporterContact(ctx, ev.Data.WorkspaceID, ev.Data.CaseID)
	if err != nil {
		return 0, false, err
	}
	to, ok := mail.ValidAddress(contact)
	if !ok {
		return 0, true, nil
	}
	var p struct {
		To string `json:"to"`
	}
	_ = json.Unmarshal(ev.Data.Payload, &p)
	cfg := mail.Config{Host: ch.Settings.SMTPHost, Port: ch.Settings.SMTPPort, From: ch.Settings.From, Username: ch.Settings.Username,
		Password: sec.SMTPPassword, StartTLS: ch.Settings.StartTLS, Dial: d.channelGuard().DialContext}
	if d.SMTPTLS != nil {
		cfg.TLSConfig = d.SMTPTLS
	}
	question := ""
	if p.To == "needs_info" {
		// The clarification recorded with this move (agent-written,
		// through the airlock, no link): the reporter reads what they are
		// asked without opening the page first.
		if question, _, err = d.Store.QuestionAsked(ctx, ev.Data.WorkspaceID, ev.Data.CaseID, ev.Data.Seq); err != nil {
			return 0, false, err
		}
	}
	msg := mail.Message{ID: ev.ID, To: to, Subject: "Your report " + ev.Data.CaseID + ": " + reporterHeadline(p.To), Text: reporterNotice(ev.Data.CaseID, p.To, question)}
	return 0, false, mail.Send(ctx, cfg, msg)
}

func reporterHeadline(state string) string {
	switch state {
	case "needs_info":
		return "we need more information"
	case "awaiting_reporter_repro":
		return "is this the bug you saw?"
	case "awaiting_reporter_confirmation":
		return "does the fix work for you?"
	case "verified", "closed":
		return "done"
	case "reopened":
		return "reopened"
	}
	return "an update"
}

// reporterNotice is the e-mail body: what happened and where to answer.
// It carries no reporter text and no tracking secret (the server keeps
// only its hash): the reporter answers on their tracking page. The one
// agent-written text it may carry is the clarification a case that needs
// information asks, which passed the airlock and carries no link; it is
// quoted as plain text.
func reporterNotice(caseID, state, question string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Hello,\n\nThere is news on the bug you reported (%s): %s.\n\n", caseID, reporterHeadline(state))
	if state == "needs_info" && strings.TrimSpace(question) != "" {
		b.WriteString("Our question:\n\n")
		for line := range strings.SplitSeq(strings.TrimSpace(question), "\n") {
			b.WriteString("> " + strings.TrimRight(line, "\r") + "\n")
		}
		b.WriteString("\n")
	}
	switch state {
	case "needs_info", "awaiting_reporter_repro", "awaiting_reporter_confirmation":
		b.WriteString("We are waiting for your answer. Open the tracking link you were given when you reported the bug to see the question and answer it.\n")
	default:
		b.WriteString("Open the tracking link you were given when you reported the bug to see the details.\n")
	}
	b.WriteString("\nYou get this message because you left this address with your report.\n")
	return b.String()
}

// chatMessage is the chat form of ev on ch. Payload text may come from
// reporters or agents: the chat package escapes whatever it shows.
func chatMessage(ev outbox.Event, ch signoff.Channel) chat.Message {
	m := chat.Message{ID: ev.ID, CaseID: ev.Data.CaseID, Link: ev.Data.Link}
	var p map[string]any
	_ = json.Unmarshal(ev.Data.Payload, &p)
	str := func(k string) string { s, _ := p[k].(string); return s }
	switch ev.Type {
	case "case.transitioned":
		m.Title = fmt.Sprintf("%s: %s → %s", ev.Data.CaseID, str("from"), str("to"))
		m.Fields = append(m.Fields, chat.Field{Name: "command", Value: str("command")}, chat.Field{Name: "by", Value: ev.Data.ActorID})
	case "card.opened", "card.reasked":
		m.Title = fmt.Sprintf("%s: a decision is waiting", ev.Data.CaseID)
		if c := ev.Data.Card; c != nil && c.Change != nil {
			m.Title = fmt.Sprintf("%s: a change to %s is waiting for approval", ev.Data.CaseID, c.Change.Target)
		}
	default:
		m.Title = fmt.Sprintf("%s: %s", cmpOr(ev.Data.CaseID, ev.Data.WorkspaceID), ev.Type)
		m.Fields = append(m.Fields, chat.Field{Name: "by", Value: ev.Data.ActorID})
	}
	m.Text = fmt.Sprintf("ledger seq %d, hash %s", ev.Data.Seq, shortHash(ev.Data.Hash))
	if c := ev.Data.Card; c != nil && (ev.Type == "card.opened" || ev.Type == "card.reasked") {
		m.Card = &chat.Card{ID: c.ID, Kind: c.Kind, CaseID: ev.Data.CaseID, SubjectDigest: c.SubjectDigest, Options: c.Options,
			Addressee: c.Addressee, ExpiresAt: c.ExpiresAt, ChatApproval: c.ChatApproval,
			ApproveHint: cmpOr(c.AnswerHint, AnswerHint(c.Kind, ev.Data.CaseID)), Change: (*chat.Change)(c.Change)}
	}
	return m
}

func shortHash(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	return h
}

// channelGuard is the host rule the store checked channels with, so that
// delivery dials only what configuration accepted. Rules that carry no
// guard leave public addresses only: delivery never gets looser than the
// check.
func (d *Desk) channelGuard() *netguard.Guard {
	if r, ok := d.Store.ChannelRules().(interface{ Guard() *netguard.Guard }); ok {
		if g := guardOf(r); g != nil {
			return g
		}
	}
	return &netguard.Guard{Policy: netguard.Policy{Public: true}}
}

// guardOf asks r for its guard; a nil receiver that panics, or a nil
// guard, is no guard.
func guardOf(r interface{ Guard() *netguard.Guard }) (g *netguard.Guard) {
	defer func() {
		if recover() != nil {
			g = nil
		}
	}()
	return r.Guard()
}
