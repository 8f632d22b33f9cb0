package notify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/chat"
)

func decode(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("event payload: %w", err)
	}
	return nil
}

// Inbound is one request from a chat platform to a channel's endpoint.
type Inbound struct {
	ChannelID string
	// Platform and Shape say what the request is: a "command" or an
	// "action" (a button).
	Platform, Shape string
	Header          http.Header
	Body            []byte
}

// Reply is what the platform is answered: always 200 with a short text
// for the person (their answer is taken, or why not), unless the request
// itself is not to be trusted (Status 401).
type Reply struct {
	Status  int
	Text    string
	Outcome card.Outcome
}

// Answer verifies an inbound chat request and applies it to its card.
// Nothing in the body is read before the platform's signature (Slack) or
// the integration's token (Mattermost) verifies. The chat user is then
// mapped to a registered person; card.Evaluate decides what the answer
// is worth; an approval only counts where the channel allows chat
// approval for the card's kind and the answer quotes the subject digest.
func (d *Desk) Answer(ctx context.Context, in Inbound) (Reply, error) {
	ch, sec, err := d.Store.ChannelByID(ctx, in.ChannelID)
	if err != nil {
		return Reply{}, err
	}
	if ch.Kind != in.Platform || !ch.Enabled {
		return Reply{}, signoff.Errorf(signoff.ENOTFOUND, "channel not found")
	}
	a, err := d.verifyAndParse(in, sec)
	if err != nil {
		return Reply{Status: http.StatusUnauthorized, Text: "request refused"}, err
	}
	// A verified request is taken once, in any process: the same request
	// again is a replay.
	key, err := replayKey(in)
	if err != nil {
		return Reply{Status: http.StatusUnauthorized, Text: "request refused"}, err
	}
	if first, err := d.Store.FirstChatRequest(ctx, key); err != nil {
		return Reply{}, err
	} else if !first {
		return Reply{Status: http.StatusUnauthorized, Text: "request refused"}, errors.New("replayed request")
	}
	if !d.limits.allow(ch.ID+":"+a.TeamID+"/"+a.UserID, d.now()) {
		return Reply{Status: http.StatusOK, Text: "too many answers from you in the last minute; wait a moment"}, nil
	}
	// A Slack request was made when Slack signed it: a card opened after
	// that moment was not the one its sender saw.
	var sentAt time.Time
	if in.Platform == signoff.ChannelSlack {
		if ts, err := strconv.ParseInt(in.Header.Get("X-Slack-Request-Timestamp"), 10, 64); err == nil {
			sentAt = time.Unix(ts, 0)
		}
	}
	resp, err := d.Store.ChatResponder(ctx, ch.WorkspaceID, a.Platform, a.TeamID, a.UserID)
	if err != nil {
		return Reply{}, err
	}
	c, err := d.findCard(ctx, ch.WorkspaceID, a)
	if err != nil {
		return Reply{Status: http.StatusOK, Text: err.Error()}, nil
	}
	allowed := allows(ch, c.Kind)
	why := ""
	switch {
	case !allowed:
		why = fmt.Sprintf("this channel does not take chat answers for %s cards: %s", c.Kind, answerWhere(c.Kind, c.CaseID))
	case a.Option == "approve" && a.DigestPrefix == "":
		allowed, why = false, fmt.Sprintf("an approval must quote the digest: /signoff approve %s %s", c.CaseID, shortDigest(c.SubjectDigest))
	case a.Option == "reject" && strings.TrimSpace(a.Reason) == "":
		allowed, why = false, fmt.Sprintf("a rejection needs a reason: /signoff reject %s %s <reason>", c.CaseID, shortDigest(c.SubjectDigest))
	case len(a.Reason) > maxChatReason:
		allowed, why = false, fmt.Sprintf("the reason is longer than %d bytes", maxChatReason)
	}
	channel := a.Platform + ":" + ch.ID
	c, outcome, err := d.Store.AnswerCard(ctx, signoff.CardAnswerInput{WorkspaceID: ch.WorkspaceID, CardID: c.ID, Channel: channel,
		PlatformUser: a.TeamID + "/" + a.UserID, Responder: resp, Option: a.Option, DigestPrefix: a.DigestPrefix, Allowed: allowed, SentAt: sentAt, Evaluate: card.Evaluate})
	if err != nil {
		return Reply{}, err
	}
	r := Reply{Status: http.StatusOK, Outcome: outcome}
	switch outcome {
	case card.Accepted:
		if err := d.act(ctx, c, resp, a, channel); err != nil {
			r.Text = "your answer was taken but could not be applied: " + err.Error()
			return r, nil
		}
		r.Text = fmt.Sprintf("recorded: %s on %s (%s), as %s", a.Option, c.CaseID, c.Kind, resp.ActorID)
	case card.Refused:
		r.Text = "not counted: " + why
	case card.WrongResponder:
		if resp.ActorID == "" {
			r.Text = "your chat account is not mapped to a person of this workspace; the card has been asked again"
		} else {
			r.Text = fmt.Sprintf("this card asks %s; the card has been asked again", c.Addressee.String())
		}
	case card.Stale:
		r.Text = fmt.Sprintf("case %s has moved on since this card; nothing was changed", c.CaseID)
	case card.ExpiredCard:
		r.Text = "this card has expired; nothing was changed"
	case card.DigestMismatch:
		r.Text = "the digest you quoted is not this card's; nothing was changed"
	case card.BadOption:
		r.Text = "that is not one of this card's options: " + strings.Join(c.Options, ", ")
	}
	// Slack shows nothing of a button's HTTP answer: the person sees what
	// became of their click only in a message to the action's response_url.
	if in.Platform == signoff.ChannelSlack && in.Shape == "action" && a.ResponseURL != "" {
		d.respond(a.ResponseURL, chat.SlackReply(r.Text, false))
	}
	return r, nil
}

// respond posts body to a Slack response_url in the background, if the URL
// is Slack's (or a host the desk was told to trust): the URL comes from a
// signed request, but the server still only talks to where Slack lives.
func (d *Desk) respond(raw string, body []byte) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" && !(u.Scheme == "http" && d.ResponseHosts != nil) {
		return
	}
	if u.Hostname() != "hooks.slack.com" && !slices.Contains(d.ResponseHosts, u.Host) {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := d.post(ctx, raw, body, nil); err != nil {
			d.log().Warn("slack response_url", "err", err)
		}
	}()
}

// act applies an accepted answer: a decision card's decision is decided
// by the mapped person over the card's exact digest, and the reason names
// the channel, so the ledger records where the answer came from.
func (d *Desk) act(ctx context.Context, c signoff.Card, r card.Responder, a chat.Answer, channel string) error {
	if c.DecisionID == "" {
		return fmt.Errorf("%s cards are not answered in chat", c.Kind)
	}
	by, err := d.Store.ActorOf(ctx, c.WorkspaceID, r.ActorID)
	if err != nil {
		return err
	}
	reason := fmt.Sprintf("answered in %s by %s/%s on card %s", channel, a.TeamID, a.UserID, c.ID)
	if a.Reason != "" {
		reason += ": " + a.Reason
	}
	if _, err := d.Store.DecideAmended(ctx, by, c.DecisionID, c.SubjectDigest, a.Option == "approve", reason, nil); err != nil {
		return err
	}
	// The decision stands, whatever becomes of the card's own record: the
	// decision already closed the card, and its reason names the channel.
	if err := d.Store.SettleCard(ctx, c.WorkspaceID, c.ID, signoff.CardAnswer{CardID: c.ID, Channel: channel, PlatformUser: a.TeamID + "/" + a.UserID,
		ActorID: by.ID, Option: a.Option, Outcome: string(card.Accepted), At: d.now().UTC()}); err != nil {
		d.log().ErrorContext(ctx, "settle card after its decision", "card_id", c.ID, "err", err)
	}
	return nil
}

// maxChatReason bounds a chat reason so that, with the channel and user
// the decision's reason also names, it fits the store's limit.
const maxChatReason = 1500

func shortDigest(d string) string {
	d = strings.TrimPrefix(d, "sha256:")
	return d[:min(12, len(d))]
}

// findCard finds the card an answer is for: the button's card, or for a
// command the open card of the case whose digest it quotes (else the
// newest open card, which then refuses the digest).
func (d *Desk) findCard(ctx context.Context, ws string, a chat.Answer) (signoff.Card, error) {
	if a.CardID != "" {
		c, err := d.Store.CardByID(ctx, ws, a.CardID)
		if err != nil {
			return c, errors.New("no such card")
		}
		return c, nil
	}
	open, err := d.Store.OpenCardsOfCase(ctx, ws, a.CaseID)
	if err != nil {
		return signoff.Card{}, err
	}
	var match []signoff.Card
	for _, c := range open {
		if card.QuotesDigest(c.SubjectDigest, a.DigestPrefix) {
			match = append(match, c)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
	default:
		return signoff.Card{}, fmt.Errorf("%d open cards of case %s match that digest; quote more of it", len(match), a.CaseID)
	}
	// No open card quotes it: an answer to a card the case has left
	// behind is still recorded, as stale.
	all, err := d.Store.CardsOfCase(ctx, ws, a.CaseID)
	if err != nil {
		return signoff.Card{}, err
	}
	for i := len(all) - 1; i >= 0; i-- {
		if card.QuotesDigest(all[i].SubjectDigest, a.DigestPrefix) {
			return all[i], nil
		}
	}
	if len(open) > 0 {
		return open[0], nil
	}
	return signoff.Card{}, fmt.Errorf("case %s has no card to answer", a.CaseID)
}

// verifyAndParse checks the request's credential, then parses it.
func (d *Desk) verifyAndParse(in Inbound, sec signoff.ChannelSecrets) (chat.Answer, error) {
	switch in.Platform {
	case signoff.ChannelSlack:
		if sec.SigningSecret == "" {
			return chat.Answer{}, errors.New("channel has no signing secret")
		}
		if err := chat.VerifySlack(sec.SigningSecret, in.Header, in.Body, d.now(), 0); err != nil {
			return chat.Answer{}, err
		}
		if in.Shape == "action" {
			return chat.ParseSlackInteraction(in.Body)
		}
		return chat.ParseSlackCommand(in.Body)
	case signoff.ChannelMattermost:
		var a chat.Answer
		var err error
		if in.Shape == "action" {
			a, err = chat.ParseMattermostAction(in.Body)
		} else {
			a, err = chat.ParseMattermostCommand(in.Body)
		}
		if err != nil {
			return chat.Answer{}, err
		}
		// The token is the only credential Mattermost sends; nothing
		// parsed is used before it is checked.
		if err := chat.VerifyMattermostToken(sec.Token, a.Token); err != nil {
			return chat.Answer{}, err
		}
		return a, nil
	}
	return chat.Answer{}, fmt.Errorf("unknown platform %q", in.Platform)
}

// answerLimits bounds how many answers one chat user gives a minute, in
// this process: the route's own limit is per address, and a platform
// sends everyone's answers from a few of its own.
type answerLimits struct {
	mu   sync.Mutex
	seen map[string][]time.Time
}

const answersPerMinute = 20

// allow reports whether key may answer now, and counts it.
func (l *answerLimits) allow(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = map[string][]time.Time{}
	}
	if len(l.seen) > 10000 {
		for k, ts := range l.seen {
			if len(ts) == 0 || now.Sub(ts[len(ts)-1]) > time.Minute {
				delete(l.seen, k)
			}
		}
	}
	recent := l.seen[key][:0]
	for _, t := range l.seen[key] {
		if now.Sub(t) < time.Minute {
			recent = append(recent, t)
		}
	}
	if len(recent) >= answersPerMinute {
		l.seen[key] = recent
		return false
	}
	l.seen[key] = append(recent, now)
	return true
}

// replayKey names a request so that the same request twice is seen: a
// Slack request by its signature (decoded, so letter case does not make a
// new one), a Mattermost request, which carries no time, by its body.
func replayKey(in Inbound) (string, error) {
	if in.Platform == signoff.ChannelSlack {
		sig := strings.TrimPrefix(in.Header.Get("X-Slack-Signature"), "v0=")
		mac, err := hex.DecodeString(sig)
		if err != nil {
			return "", errors.New("malformed signature")
		}
		return "slack:" + in.ChannelID + ":" + hex.EncodeToString(mac), nil
	}
	sum := sha256.Sum256(in.Body)
	return "mattermost:" + in.ChannelID + ":" + hex.EncodeToString(sum[:]), nil
}
