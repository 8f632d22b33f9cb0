package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
)

// "signoff outbox", "signoff channel" and "signoff chat" are API clients
// like "signoff flags": they talk to a running server with an API token
// (SIGNOFF_URL, SIGNOFF_TOKEN). Channel secrets go to the server, which
// seals them; nothing ever shows them again.

// Environment variables a channel's secrets may come from, so that they
// stay out of shell history and process listings. A flag, when given,
// wins.
var channelSecretEnv = []struct{ flag, env, help string }{
	{"url", "SIGNOFF_CHANNEL_URL", "delivery URL: the webhook's, or Slack's or Mattermost's incoming webhook URL (it carries a token)"},
	{"secret", "SIGNOFF_CHANNEL_SECRET", "webhook signing secret, whsec_... (webhook)"},
	{"signing-secret", "SIGNOFF_CHANNEL_SIGNING_SECRET", "Slack app signing secret, verifies slash commands and buttons (slack)"},
	{"mattermost-token", "SIGNOFF_CHANNEL_TOKEN", "Mattermost slash command / integration token, verifies commands and buttons (mattermost)"},
	{"bot-token", "SIGNOFF_CHANNEL_BOT_TOKEN", "Slack bot token, posts with chat.postMessage to --slack-channel (slack)"},
	{"smtp-password", "SIGNOFF_CHANNEL_SMTP_PASSWORD", "SMTP password (email)"},
}

// parseArgs parses fs and returns exactly the positional arguments named
// in names, which may come before, between or after the flags.
func parseArgs(fs *flag.FlagSet, e *env, args []string, names ...string) ([]string, error) {
	fs.SetOutput(e.stderr)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(e.stdout)
				fs.Usage()
				return nil, err
			}
			return nil, errUsage
		}
		if fs.NArg() == 0 {
			break
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
	switch {
	case len(pos) < len(names):
		fmt.Fprintf(e.stderr, "missing %s\n", strings.Join(names[len(pos):], " "))
		fs.Usage()
		return nil, errUsage
	case len(pos) > len(names):
		fmt.Fprintf(e.stderr, "unexpected arguments: %s\n", strings.Join(pos[len(names):], " "))
		fs.Usage()
		return nil, errUsage
	}
	return pos, nil
}

// answer takes an API call's raw answer and error: it decodes the answer
// into out or, with asJSON, prints it as it came and reports that it did.
func answer(e *env, raw json.RawMessage, err error, out any, asJSON bool) (printed bool, _ error) {
	if err != nil {
		return false, err
	}
	if asJSON {
		return true, printRaw(e, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return false, unexpected(err)
	}
	return false, nil
}

// printRaw prints an API answer as indented JSON.
func printRaw(e *env, raw []byte) error {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected answer from the server: %v", err)
	}
	return printJSON(e, v)
}

func unexpected(err error) error {
	return signoff.Errorf(signoff.EUNAVAILABLE, "unexpected answer from the server: %v", err)
}

// clip cuts s to n runes for a table cell.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// ---- signoff outbox ----

func runOutbox(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "outbox", args, "list", "show", "retry")
	if err != nil {
		return err
	}
	switch verb {
	case "list":
		return runOutboxList(ctx, e, rest)
	case "show":
		return runOutboxShow(ctx, e, rest)
	}
	return runOutboxRetry(ctx, e, rest)
}

func runOutboxList(ctx context.Context, e *env, args []string) error {
	var sf serverFlags
	var state, caseID, channel string
	var limit int
	var asJSON bool
	fs := newFlags("outbox list", "signoff outbox list [--state pending|delivered|dead|skipped] [--case ID] [--channel ID] [--limit N] [--json] [--server URL]   (token from SIGNOFF_TOKEN)")
	fs.StringVar(&state, "state", "", "only messages in this state: pending, delivered, dead or skipped")
	fs.StringVar(&caseID, "case", "", "only messages of this case")
	fs.StringVar(&channel, "channel", "", "only messages to this channel (its id, chn_...)")
	fs.IntVar(&limit, "limit", 0, "at most this many messages, newest first (default: the server's page size; at most 500)")
	fs.BoolVar(&asJSON, "json", false, "print JSON for scripts")
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	q := url.Values{}
	for k, v := range map[string]string{"state": state, "case": caseID, "channel": channel} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if limit != 0 {
		q.Set("limit", fmt.Sprint(limit))
	}
	var page struct {
		Messages []signoff.OutboxMessage `json:"messages"`
	}
	raw, err := c.Outbox(ctx, q)
	if printed, err := answer(e, raw, err, &page, asJSON); printed || err != nil {
		return err
	}
	if len(page.Messages) == 0 {
		fmt.Fprintln(e.stdout, "no messages")
		return nil
	}
	d := &display{}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MESSAGE\tSTATE\tATTEMPTS\tEVENT\tSEQ\tCASE\tLAST ERROR")
	for _, m := range page.Messages {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\t%s\n", d.line(m.MessageID), d.line(m.State), m.Attempts, d.line(m.EventType), m.Seq,
			d.line(orDash(m.CaseID)), d.line(clip(orDash(m.LastError), 80)))
	}
	return tw.Flush()
}

func runOutboxShow(ctx context.Context, e *env, args []string) error {
	var sf serverFlags
	var asJSON bool
	fs := newFlags("outbox show", "signoff outbox show ID [--json] [--server URL]   (token from SIGNOFF_TOKEN)")
	fs.BoolVar(&asJSON, "json", false, "print JSON for scripts")
	addServerFlags(fs, e, &sf)
	pos, err := parseArgs(fs, e, args, "ID")
	if err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	var v struct {
		Message  signoff.OutboxMessage     `json:"message"`
		Attempts []signoff.DeliveryAttempt `json:"attempts"`
	}
	raw, err := c.OutboxMessage(ctx, pos[0])
	if printed, err := answer(e, raw, err, &v, asJSON); printed || err != nil {
		return err
	}
	d, m, w := &display{}, v.Message, e.stdout
	fmt.Fprintf(w, "message:     %s\n", d.line(m.MessageID))
	fmt.Fprintf(w, "state:       %s\n", d.line(m.State))
	fmt.Fprintf(w, "channel:     %s\n", d.line(m.ChannelID))
	fmt.Fprintf(w, "event:       %s (seq %d)\n", d.line(m.EventType), m.Seq)
	fmt.Fprintf(w, "case:        %s\n", d.line(orDash(m.CaseID)))
	if m.CardID != "" {
		fmt.Fprintf(w, "card:        %s\n", d.line(m.CardID))
	}
	fmt.Fprintf(w, "attempts:    %d\n", m.Attempts)
	fmt.Fprintf(w, "created:     %s\n", m.CreatedAt.UTC().Format(time.RFC3339))
	if m.DeliveredAt != nil {
		fmt.Fprintf(w, "delivered:   %s\n", m.DeliveredAt.UTC().Format(time.RFC3339))
	}
	if m.LeaseHolder != "" && m.LeaseUntil != nil {
		fmt.Fprintf(w, "leased to:   %s until %s\n", d.line(m.LeaseHolder), m.LeaseUntil.UTC().Format(time.RFC3339))
	}
	if m.LastError != "" {
		fmt.Fprintf(w, "last error:  %s\n", d.line(m.LastError))
	}
	if len(v.Attempts) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ATTEMPT\tSTARTED\tFINISHED\tSTATUS\tHOLDER\tERROR")
		for _, a := range v.Attempts {
			fin := "-"
			if a.FinishedAt != nil {
				fin = a.FinishedAt.UTC().Format(time.RFC3339)
			}
			status := "-"
			if a.Status != 0 {
				status = fmt.Sprint(a.Status)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", a.Attempt, a.StartedAt.UTC().Format(time.RFC3339), fin, status, d.line(a.Holder), d.line(orDash(a.Error)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if m.State == signoff.OutboxDead {
		fmt.Fprintf(w, "\nre-drive it with: signoff outbox retry %s\n", m.MessageID)
	}
	return nil
}

func runOutboxRetry(ctx context.Context, e *env, args []string) error {
	var sf serverFlags
	var asJSON bool
	fs := newFlags("outbox retry", "signoff outbox retry ID [--json] [--server URL]   (token from SIGNOFF_TOKEN; re-drives a dead message under the same id)")
	fs.BoolVar(&asJSON, "json", false, "print JSON for scripts")
	addServerFlags(fs, e, &sf)
	pos, err := parseArgs(fs, e, args, "ID")
	if err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	var m signoff.OutboxMessage
	raw, err := c.RetryOutbox(ctx, pos[0])
	if printed, err := answer(e, raw, err, &m, asJSON); printed || err != nil {
		return err
	}
	d := &display{}
	fmt.Fprintf(e.stdout, "message %s re-driven: %s (after %d attempts)\n", d.line(m.MessageID), d.line(m.State), m.Attempts)
	return nil
}

// ---- signoff channel ----

func runChannel(ctx context.Context, e *env, args []string) error {
	verb, rest, err := subcommand(e, "channel", args, "put", "list")
	if err != nil {
		return err
	}
	if verb == "put" {
		return runChannelPut(ctx, e, rest)
	}
	return runChannelList(ctx, e, rest)
}

// splitList reads "a,b, c" as [a b c].
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func runChannelPut(ctx context.Context, e *env, args []string) error {
	var sf serverFlags
	var in struct {
		Kind         string                  `json:"kind"`
		Events       []string                `json:"events,omitempty"`
		Settings     signoff.ChannelSettings `json:"settings"`
		Secrets      signoff.ChannelSecrets  `json:"secrets"`
		ChatApproval []string                `json:"chat_approval,omitempty"`
		Enabled      *bool                   `json:"enabled,omitempty"`
	}
	var events, chatApproval string
	var disabled, asJSON bool
	secrets := map[string]*string{}
	fs := newFlags("channel put", "signoff channel put NAME --kind webhook|slack|mattermost|email [flags]   (token from SIGNOFF_TOKEN)\n\n"+
		"Creates or replaces the channel NAME with exactly this configuration, secrets included.\n"+
		"Secrets may come from the environment instead of flags, to keep them out of shell history:\n"+
		"  "+secretEnvNames()+"\n"+
		"Examples:\n"+
		"  SIGNOFF_CHANNEL_URL=https://example.com/hook SIGNOFF_CHANNEL_SECRET=whsec_... signoff channel put ops --kind webhook\n"+
		"  SIGNOFF_CHANNEL_URL=https://hooks.slack.com/... SIGNOFF_CHANNEL_SIGNING_SECRET=... signoff channel put triage --kind slack --chat-approval triage_gate\n"+
		"  signoff channel put reporters --kind email --smtp-host smtp.example.com --smtp-port 587 --from desk@example.com --username desk   (password: SIGNOFF_CHANNEL_SMTP_PASSWORD)")
	fs.StringVar(&in.Kind, "kind", "", "webhook, slack, mattermost or email (required)")
	fs.StringVar(&events, "events", "", "comma-separated event types or globs, e.g. case.*,decision.requested (default: the server's default set)")
	fs.StringVar(&chatApproval, "chat-approval", "", "comma-separated card kinds chat may answer as an approval, e.g. triage_gate (slack, mattermost)")
	fs.BoolVar(&disabled, "disabled", false, "store the channel disabled: nothing is sent to it")
	for _, s := range channelSecretEnv {
		v := new(string)
		secrets[s.flag] = v
		fs.StringVar(v, s.flag, "", s.help+" (env "+s.env+", which is better: flags show up in process listings)")
	}
	fs.StringVar(&in.Settings.SlackChannel, "slack-channel", "", "Slack channel id to post to with --bot-token (slack)")
	fs.StringVar(&in.Settings.ActionURL, "action-url", "", "public URL of this server's /api/v1/chat/{channel}/mattermost/actions, for buttons (mattermost)")
	fs.StringVar(&in.Settings.SMTPHost, "smtp-host", "", "SMTP server host (email)")
	fs.IntVar(&in.Settings.SMTPPort, "smtp-port", 0, "SMTP server port, e.g. 587 (email)")
	fs.StringVar(&in.Settings.From, "from", "", "sender address (email)")
	fs.StringVar(&in.Settings.Username, "username", "", "SMTP user name (email)")
	fs.StringVar(&in.Settings.StartTLS, "starttls", "", "required (default) or none (email)")
	fs.StringVar(&in.Settings.CaseURL, "case-url", "", "link to a case page, with {case} in it")
	fs.BoolVar(&asJSON, "json", false, "print JSON for scripts")
	addServerFlags(fs, e, &sf)
	pos, err := parseArgs(fs, e, args, "NAME")
	if err != nil {
		return err
	}
	if err := required(fs, e, "kind", in.Kind); err != nil {
		return err
	}
	for _, s := range channelSecretEnv {
		if *secrets[s.flag] == "" {
			*secrets[s.flag] = strings.TrimSpace(e.getenv(s.env))
		}
	}
	in.Secrets = signoff.ChannelSecrets{URL: *secrets["url"], WebhookSecret: *secrets["secret"], SigningSecret: *secrets["signing-secret"],
		Token: *secrets["mattermost-token"], BotToken: *secrets["bot-token"], SMTPPassword: *secrets["smtp-password"]}
	in.Events, in.ChatApproval = splitList(events), splitList(chatApproval)
	if disabled {
		in.Enabled = new(bool)
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	var ch signoff.Channel
	raw, err := c.PutChannel(ctx, pos[0], in)
	if printed, err := answer(e, raw, err, &ch, asJSON); printed || err != nil {
		return err
	}
	d := &display{}
	fmt.Fprintf(e.stdout, "channel %s (%s) saved: %s, %s\n", d.line(ch.Name), d.line(ch.ID), d.line(ch.Kind), enabledWord(ch.Enabled))
	fmt.Fprintf(e.stdout, "events:        %s\n", d.line(strings.Join(ch.Events, ", ")))
	fmt.Fprintf(e.stdout, "secrets set:   %s (sealed with key %s)\n", d.line(orDash(strings.Join(ch.Secrets, ", "))), d.line(ch.KeyID))
	if len(ch.ChatApproval) > 0 {
		fmt.Fprintf(e.stdout, "chat approves: %s\n", d.line(strings.Join(ch.ChatApproval, ", ")))
	}
	if ch.Kind == signoff.ChannelSlack || ch.Kind == signoff.ChannelMattermost {
		fmt.Fprintf(e.stdout, "chat endpoints: %s/api/v1/chat/%s/%s/commands and .../actions\n", c.BaseURL(), ch.ID, ch.Kind)
	}
	return nil
}

func secretEnvNames() string {
	var names []string
	for _, s := range channelSecretEnv {
		names = append(names, s.env+" (--"+s.flag+")")
	}
	return strings.Join(names, ", ")
}

func enabledWord(on bool) string {
	if on {
		return "enabled"
	}
	return "disabled"
}

func runChannelList(ctx context.Context, e *env, args []string) error {
	var sf serverFlags
	var asJSON bool
	fs := newFlags("channel list", "signoff channel list [--json] [--server URL]   (token from SIGNOFF_TOKEN; secrets are never shown, only which are set)")
	fs.BoolVar(&asJSON, "json", false, "print JSON for scripts")
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, args); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	var page struct {
		Channels []signoff.Channel `json:"channels"`
	}
	raw, err := c.Channels(ctx)
	if printed, err := answer(e, raw, err, &page, asJSON); printed || err != nil {
		return err
	}
	if len(page.Channels) == 0 {
		fmt.Fprintln(e.stdout, "no channels")
		return nil
	}
	d := &display{}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tID\tKIND\tSTATE\tEVENTS\tCHAT APPROVAL\tSECRETS SET")
	for _, ch := range page.Channels {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.line(ch.Name), d.line(ch.ID), d.line(ch.Kind), enabledWord(ch.Enabled),
			d.line(clip(strings.Join(ch.Events, ","), 60)), d.line(orDash(strings.Join(ch.ChatApproval, ","))), d.line(orDash(strings.Join(ch.Secrets, ","))))
	}
	return tw.Flush()
}

// ---- signoff chat ----

func runChat(ctx context.Context, e *env, args []string) error {
	_, rest, err := subcommand(e, "chat", args, "map")
	if err != nil {
		return err
	}
	var sf serverFlags
	var u struct {
		Platform string `json:"platform"`
		TeamID   string `json:"team_id"`
		UserID   string `json:"user_id"`
		ActorID  string `json:"actor_id"`
	}
	var asJSON bool
	fs := newFlags("chat map", "signoff chat map --platform slack|mattermost [--team T] --user U --actor act_...   (token from SIGNOFF_TOKEN; owners only)\n\n"+
		"Maps a chat user to a person of the workspace: their chat answers to cards count as that person's.")
	fs.StringVar(&u.Platform, "platform", "", "slack or mattermost (required)")
	fs.StringVar(&u.TeamID, "team", "", "the platform's team (workspace) id, e.g. T0123 (Slack always sends one)")
	fs.StringVar(&u.UserID, "user", "", "the platform's user id, e.g. U0456 (required)")
	fs.StringVar(&u.ActorID, "actor", "", "the person's actor id (required)")
	fs.BoolVar(&asJSON, "json", false, "print JSON for scripts")
	addServerFlags(fs, e, &sf)
	if err := parse(fs, e, rest); err != nil {
		return err
	}
	if err := required(fs, e, "platform", u.Platform, "user", u.UserID, "actor", u.ActorID); err != nil {
		return err
	}
	c, err := sf.client(e)
	if err != nil {
		return err
	}
	var got signoff.ChatUser
	raw, err := c.PutChatUser(ctx, u)
	if printed, err := answer(e, raw, err, &got, asJSON); printed || err != nil {
		return err
	}
	d := &display{}
	who := got.UserID
	if got.TeamID != "" {
		who = got.TeamID + "/" + got.UserID
	}
	fmt.Fprintf(e.stdout, "%s user %s is now %s\n", d.line(got.Platform), d.line(who), d.line(got.ActorID))
	return nil
}
