package notify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/chat"
	"github.com/signoff-dev/signoff/sqlstore"
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
		why = fmt.Sprintf("this channel does not take chat answers for %s cards: run `signoff approve %s`", c.Kind, c.CaseID)
	case a.Option == "approve" && a.DigestPrefix == "":
		allowed, why = false, fmt.Sprintf("an approval must quote the digest: /signoff approve %s %s", c.CaseID, c.SubjectDigest[:min(12, len(c.SubjectDigest))])
	}
	channel := a.Platform + ":" + ch.ID
	c, outcome, err := d.Store.AnswerCard(ctx, sqlstore.CardAnswerInput{WorkspaceID: ch.WorkspaceID, CardID: c.ID, Channel: channel,
		PlatformUser: a.TeamID + "/" + a.UserID, Responder: resp, Option: a.Option, DigestPrefix: a.DigestPrefix, Allowed: allowed})
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
	return d.Store.SettleCard(ctx, c.WorkspaceID, c.ID, signoff.CardAnswer{CardID: c.ID, Channel: channel, PlatformUser: a.TeamID + "/" + a.UserID,
		ActorID: by.ID, Option: a.Option, Outcome: string(card.Accepted), At: d.now().UTC()})
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
	for _, c := range open {
		if card.QuotesDigest(c.SubjectDigest, a.DigestPrefix) {
			return c, nil
		}
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
		// A signature verifies for five minutes: the same request twice is
		// a replay.
		if !d.replays.first(in.ChannelID+" "+in.Header.Get("X-Slack-Signature"), d.now()) {
			return chat.Answer{}, errors.New("replayed request")
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

// replayGuard remembers request signatures for as long as they verify.
type replayGuard struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

const replayWindow = 10 * time.Minute

// first reports whether key is new, and remembers it.
func (g *replayGuard) first(key string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.seen == nil {
		g.seen = map[string]time.Time{}
	}
	if len(g.seen) > 10000 {
		for k, t := range g.seen {
			if now.Sub(t) > replayWindow {
				delete(g.seen, k)
			}
		}
	}
	if t, ok := g.seen[key]; ok && now.Sub(t) <= replayWindow {
		return false
	}
	g.seen[key] = now
	return true
}
