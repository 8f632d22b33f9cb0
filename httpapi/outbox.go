package httpapi

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/chat"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/notify"
	"github.com/signoff-dev/signoff/ratelimit"
)

// ---- Notifications: channels, the outbox, approval cards, chat ----
//
// The people who run and watch the desk read where notifications go, what
// was sent and how each attempt went, and the cards a case asked; the
// owner configures channels and maps chat users to people. A channel's
// secrets go in and never come out: the store seals them and answers only
// their names.
//
// The chat endpoints are public in the API's sense: Slack's request
// signature, or the Mattermost integration's token, is the credential, and
// notify.Desk.Answer verifies it before it reads anything of the body.

// maxChatBody bounds a chat platform's request (64 KiB, what the chat
// parsers take): a slash command or a button press is a few kilobytes.
const maxChatBody = chat.MaxBody

// chatLimit is the per-address limit of the chat endpoints. Chat platforms
// send every person's answers from a few addresses of theirs, so it is far
// above the intake's (which is made for one person's browser); it only
// bounds how fast one address can knock on the credential check.
var chatLimit = Limit{Rate: 10, Burst: 100}

// notifyOptions are the chat endpoints' desk and rate limiter.
type notifyOptions struct {
	desk  *notify.Desk
	perIP *ratelimit.Limiter
}

// WithNotify serves the chat platforms' endpoints (slash commands and
// buttons answering approval cards) with d. Without it they answer 404, as
// for a channel that does not exist.
func WithNotify(d *notify.Desk) Option {
	return func(o *options) { o.notify = notifyOptions{desk: d, perIP: ratelimit.New(chatLimit)} }
}

func (s *server) registerNotify() {
	s.api("GET /api/v1/channels", identity.OpChannelRead, s.listChannels)
	s.api("PUT /api/v1/channels/{name}", identity.OpChannelWrite, s.putChannel)
	s.api("GET /api/v1/outbox", identity.OpOutboxRead, s.listOutbox)
	s.api("GET /api/v1/outbox/{id}", identity.OpOutboxRead, s.getOutbox)
	s.api("POST /api/v1/outbox/{id}/retry", identity.OpOutboxRetry, s.retryOutbox)
	s.api("GET /api/v1/cases/{id}/cards", identity.OpCardRead, s.listCards)
	s.api("PUT /api/v1/chat-users", identity.OpChatUserWrite, s.putChatUser)
	for _, p := range []string{signoff.ChannelSlack, signoff.ChannelMattermost} {
		s.public("POST /api/v1/chat/{channel}/"+p+"/commands", s.chatAnswer(p, "command"))
		s.public("POST /api/v1/chat/{channel}/"+p+"/actions", s.chatAnswer(p, "action"))
	}
}

func (s *server) listChannels(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	chs, err := s.store.ListChannels(r.Context(), by)
	if err != nil {
		return err
	}
	if chs == nil {
		chs = []signoff.Channel{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"channels": chs})
	return nil
}

// channelBody is a channel's configuration as PUT takes it: a
// signoff.ChannelInput whose name is the path's.
type channelBody struct {
	Kind         string                  `json:"kind"`
	Events       []string                `json:"events,omitempty"`
	Settings     signoff.ChannelSettings `json:"settings"`
	Secrets      signoff.ChannelSecrets  `json:"secrets"`
	ChatApproval []string                `json:"chat_approval,omitempty"`
	Enabled      *bool                   `json:"enabled,omitempty"`
}

// putChannel creates or replaces the channel named in the path. The whole
// configuration is given each time, secrets included: nothing is merged
// with what was stored.
func (s *server) putChannel(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in channelBody
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	ch, err := s.store.PutChannel(r.Context(), by, signoff.ChannelInput{Name: r.PathValue("name"), Kind: in.Kind, Events: in.Events,
		Settings: in.Settings, Secrets: in.Secrets, ChatApproval: in.ChatApproval, Enabled: in.Enabled})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ch)
	return nil
}

func (s *server) listOutbox(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	q, err := query(r, "state", "channel", "case", "limit")
	if err != nil {
		return err
	}
	f := signoff.OutboxFilter{State: q["state"], ChannelID: q["channel"], CaseID: q["case"]}
	if f.ChannelID != "" && !signoff.ValidID(signoff.PrefixChannel, f.ChannelID) {
		return signoff.Errorf(signoff.EINVALID, "channel must be a channel id (%s_...)", signoff.PrefixChannel)
	}
	if f.CaseID != "" && !signoff.ValidID(signoff.PrefixCase, f.CaseID) {
		return signoff.Errorf(signoff.EINVALID, "case must be a case id (%s_...)", signoff.PrefixCase)
	}
	if f.Limit, err = limitParam(q); err != nil {
		return err
	}
	msgs, err := s.store.ListOutbox(r.Context(), by, f)
	if err != nil {
		return err
	}
	if msgs == nil {
		msgs = []signoff.OutboxMessage{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": msgs})
	return nil
}

// outboxView is one message with its delivery attempts, oldest first.
type outboxView struct {
	Message  signoff.OutboxMessage     `json:"message"`
	Attempts []signoff.DeliveryAttempt `json:"attempts"`
}

func (s *server) getOutbox(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	m, atts, err := s.store.GetOutbox(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	if atts == nil {
		atts = []signoff.DeliveryAttempt{}
	}
	writeJSON(w, http.StatusOK, outboxView{Message: m, Attempts: atts})
	return nil
}

// retryOutbox re-drives a dead message under its own id; a message that is
// not dead answers 409 with its state.
func (s *server) retryOutbox(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	m, err := s.store.RetryOutbox(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, m)
	return nil
}

func (s *server) listCards(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	cards, answers, err := s.store.ListCards(r.Context(), by, r.PathValue("id"))
	if err != nil {
		return err
	}
	if cards == nil {
		cards = []signoff.Card{}
	}
	if answers == nil {
		answers = []signoff.CardAnswer{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"cards": cards, "answers": answers})
	return nil
}

// chatUserBody maps one chat user to a person of the workspace.
type chatUserBody struct {
	Platform string `json:"platform"`
	TeamID   string `json:"team_id"`
	UserID   string `json:"user_id"`
	ActorID  string `json:"actor_id"`
}

func (s *server) putChatUser(w http.ResponseWriter, r *http.Request, by signoff.Actor) error {
	var in chatUserBody
	if err := decodeJSON(w, r, &in); err != nil {
		return err
	}
	u, err := s.store.MapChatUser(r.Context(), by, signoff.ChatUser{Platform: in.Platform, TeamID: in.TeamID, UserID: in.UserID, ActorID: in.ActorID})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, u)
	return nil
}

var (
	errNoChannel   = signoff.Errorf(signoff.ENOTFOUND, "channel not found")
	errChatRefused = signoff.Errorf(signoff.EUNAUTHORIZED, "request refused")
)

// chatAnswer serves one chat platform's requests of one shape to a
// channel: a slash command or a button press answering a card. The
// platform is always answered 200 with a reply the person sees, unless the
// request is not to be trusted (401, "request refused", whatever the
// reason) or names no channel of that platform (404). Nothing about the
// channel, its workspace or why a request was refused is told.
func (s *server) chatAnswer(platform, shape string) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		n := s.opts.notify
		if n.desk == nil {
			return errNoChannel
		}
		if wait := n.perIP.Take(s.client(r).Addr, time.Now()); wait > 0 {
			return refuse(w, wait, "Too many requests came from this address just now.")
		}
		id := r.PathValue("channel")
		if !signoff.ValidID(signoff.PrefixChannel, id) {
			return errNoChannel
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxChatBody))
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return signoff.Errorf(signoff.ETOOLARGE, "request body is larger than %d bytes", maxChatBody)
		} else if err != nil {
			return signoff.Errorf(signoff.EINVALID, "could not read the request body")
		}
		reply, err := n.desk.Answer(r.Context(), notify.Inbound{ChannelID: id, Platform: platform, Shape: shape, Header: r.Header, Body: body})
		switch {
		case err != nil && reply.Status == http.StatusUnauthorized:
			s.log.InfoContext(r.Context(), "chat request refused", "channel_id", id, "platform", platform, "err", err, "request_id", infoFrom(r.Context()).id)
			return errChatRefused
		case signoff.ErrorCode(err) == signoff.ENOTFOUND:
			return errNoChannel
		case err != nil && signoff.ErrorCode(err) != signoff.EINTERNAL:
			// The caller may be anyone: the detail (a key id, a card)
			// goes to the log, the status to the caller.
			s.log.WarnContext(r.Context(), "chat answer failed", "channel_id", id, "platform", platform, "err", err, "request_id", infoFrom(r.Context()).id)
			return signoff.Errorf(signoff.ErrorCode(err), "the answer could not be taken")
		case err != nil:
			return err
		}
		out := chat.MattermostReply(reply.Text)
		if platform == signoff.ChannelSlack {
			out = chat.SlackReply(reply.Text, false)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write(out); err != nil {
			s.log.DebugContext(r.Context(), "write chat reply", "err", err)
		}
		return nil
	}
}
