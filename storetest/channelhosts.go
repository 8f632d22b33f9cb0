package storetest

import (
	"crypto/rand"
	"database/sql"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/netguard/netguardtest"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/channelrules"
	"github.com/signoff-dev/signoff/netguard"
	"github.com/signoff-dev/signoff/notify"
	"github.com/signoff-dev/signoff/secretbox"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/webhook"
)

// testChannelHosts: a channel whose webhook, chat or SMTP host is, or
// resolves to, a loopback, private, link-local, metadata or other
// non-public address is refused when it is stored, unless the server
// allowlists it; plain SMTP goes to loopback only; and a name that
// resolved to a public address when stored and to loopback afterwards
// (DNS rebinding) is not delivered to.
func testChannelHosts(t *testing.T, b Backend) {
	tb := setupWith(t, b, nil)
	key := make([]byte, 32)
	rand.Read(key)
	box, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	tb.store.SetSealer(box)
	secret := webhook.NewSecret()
	hook := func(u string) signoff.ChannelInput {
		return signoff.ChannelInput{Name: "hooks", Kind: signoff.ChannelWebhook, Events: []string{"probe.*"},
			Secrets: signoff.ChannelSecrets{URL: u, WebhookSecret: secret}}
	}
	email := func(host, starttls string) signoff.ChannelInput {
		return signoff.ChannelInput{Name: "mail", Kind: signoff.ChannelEmail,
			Settings: signoff.ChannelSettings{SMTPHost: host, SMTPPort: 587, From: "signoff@example.com", StartTLS: starttls}}
	}
	r := netguardtest.NewRebinding(map[string][]string{
		"hooks.example.com":    {"93.184.216.34"},
		"localhost.nip.io":     {"127.0.0.1"},
		"10.0.0.1.nip.io":      {"10.0.0.1"},
		"metadata.example.com": {"169.254.169.254"},
		"split.example.com":    {"93.184.216.34 192.168.0.4"},
		"smtp.internal.test":   {"10.0.0.25"},
		"hooks.internal.test":  {"10.1.2.3"},
	})

	refused := []struct {
		name string
		in   signoff.ChannelInput
	}{
		{"metadata", hook("http://169.254.169.254/latest/meta-data/")},
		{"metadata, mapped IPv6", hook("http://[::ffff:169.254.169.254]/")},
		{"metadata, IPv6", hook("http://[fd00:ec2::254]/")},
		{"metadata, decimal", hook("http://2852039166/")},
		{"metadata, hex", hook("http://0xa9fea9fe/")},
		{"metadata by name", hook("https://metadata.example.com/hook")},
		{"link-local", hook("http://169.254.10.1/")},
		{"link-local IPv6", hook("http://[fe80::1]/")},
		{"RFC 1918 10/8", hook("http://10.0.0.1/")},
		{"RFC 1918 172.16/12", hook("http://172.16.5.4:8080/")},
		{"RFC 1918 192.168/16", hook("http://192.168.1.10/")},
		{"unique local", hook("http://[fd12:3456::1]/")},
		{"loopback", hook("http://127.0.0.1:9/hook")},
		{"loopback, short form", hook("http://127.1:9/hook")},
		{"loopback IPv6", hook("http://[::1]:9/hook")},
		{"localhost", hook("http://localhost:9/hook")},
		{"localhost, upper case and dot", hook("http://LOCALHOST.:9/hook")},
		{"under .localhost", hook("http://hooks.localhost/")},
		{"wildcard DNS to loopback", hook("http://localhost.nip.io/")},
		{"wildcard DNS to private", hook("http://10.0.0.1.nip.io/")},
		{"a name with one private address", hook("https://split.example.com/")},
		{"unspecified", hook("http://0.0.0.0:9/")},
		{"carrier NAT", hook("http://100.64.0.1/")},
		{"multicast", hook("http://224.0.0.1/")},
		{"documentation", hook("http://192.0.2.10/")},
		{"userinfo hides the host", hook("http://hooks.example.com@10.0.0.1/")},
		{"slack webhook", signoff.ChannelInput{Name: "slack", Kind: signoff.ChannelSlack,
			Secrets: signoff.ChannelSecrets{URL: "http://10.0.0.1/services/T/B/secret-token"}}},
		{"slack api", signoff.ChannelInput{Name: "slack", Kind: signoff.ChannelSlack,
			Settings: signoff.ChannelSettings{SlackChannel: "C1", SlackAPI: "http://127.0.0.1:1/api"}, Secrets: signoff.ChannelSecrets{BotToken: "xoxb-secret-token"}}},
		{"mattermost", signoff.ChannelInput{Name: "mm", Kind: signoff.ChannelMattermost,
			Secrets: signoff.ChannelSecrets{URL: "http://[::ffff:169.254.169.254]/hooks/secret-token"}}},
		{"smtp private", email("10.0.0.5", "")},
		{"smtp private by name", email("smtp.internal.test", "required")},
		{"smtp loopback", email("127.0.0.1", "required")},
		{"smtp metadata", email("169.254.169.254", "required")},
		{"plain smtp to a public host", email("smtp.example.com", "none")},
		{"plain smtp to a private host", email("10.0.0.5", "none")},
	}
	tb.store.SetChannelRules(channelrules.WithHosts(netguard.Allowlist{}, r))
	for _, tt := range refused {
		_, err := tb.store.PutChannel(tb.ctx, tb.owner, tt.in)
		if signoff.ErrorCode(err) != signoff.EINVALID {
			t.Errorf("%s: PutChannel = %v, want refused (invalid)", tt.name, err)
			continue
		}
		if strings.Contains(err.Error(), "secret-token") {
			t.Errorf("%s: the refusal shows the URL's secret path: %v", tt.name, err)
		}
	}
	if chs, err := tb.store.ListChannels(tb.ctx, tb.owner); err != nil || len(chs) != 0 {
		t.Fatalf("channels stored after refusals: %+v, %v", chs, err)
	}

	// Public hosts, and names that do not resolve where the server runs
	// (delivery checks them again), are stored.
	for _, u := range []string{"https://hooks.example.com/in", "https://93.184.216.34/in", "https://unresolvable.example.com/in"} {
		if _, err := tb.store.PutChannel(tb.ctx, tb.owner, hook(u)); err != nil {
			t.Errorf("public %s: %v", u, err)
		}
	}
	if _, err := tb.store.PutChannel(tb.ctx, tb.owner, email("smtp.example.com", "required")); err != nil {
		t.Errorf("public smtp: %v", err)
	}

	// What the operator allowlists is stored: loopback for plain SMTP, an
	// internal name, a private range.
	tb.store.SetChannelRules(channelrules.WithHosts(netguard.MustAllowlist("127.0.0.1", "hooks.internal.test", "10.0.0.0/24"), r))
	for _, in := range []signoff.ChannelInput{hook("http://127.0.0.1:9/hook"), hook("http://hooks.internal.test/"), hook("http://10.0.0.1/"),
		email("127.0.0.1", "none"), email("10.0.0.25", "required")} {
		if _, err := tb.store.PutChannel(tb.ctx, tb.owner, in); err != nil {
			t.Errorf("allowlisted %+v: %v", in, err)
		}
	}
	// The allowlist opens only what it lists.
	for _, in := range []signoff.ChannelInput{hook("http://169.254.169.254/"), hook("http://10.0.1.1/"), hook("http://[::1]:9/"), hook("https://metadata.example.com/")} {
		if _, err := tb.store.PutChannel(tb.ctx, tb.owner, in); signoff.ErrorCode(err) != signoff.EINVALID {
			t.Errorf("not allowlisted %s: PutChannel = %v", in.Secrets.URL, err)
		}
	}

	// DNS rebinding: the name answers a public address when the channel is
	// stored, loopback afterwards. The delivery resolves it again, checks
	// what it got, and never connects.
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	r.Set("rebind.example.com", "93.184.216.34", "127.0.0.1")
	tb.store.SetChannelRules(channelrules.WithHosts(netguard.Allowlist{}, r))
	if _, err := tb.store.PutChannel(tb.ctx, tb.owner, hook("http://rebind.example.com:"+port+"/hook")); err != nil {
		t.Fatalf("rebinding name, first answer public: %v", err)
	}
	if err := tb.store.InTx(tb.ctx, func(tx *sql.Tx) error {
		_, err := tb.store.AppendTx(tb.ctx, tx, tb.ws.ID, sqlstore.EventInput{Type: "probe.rebind", ActorID: tb.owner.ID, Payload: map[string]any{"n": 1}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	ms, err := tb.store.ListOutbox(tb.ctx, tb.owner, signoff.OutboxFilter{Limit: 10})
	if err != nil || len(ms) == 0 || ms[0].EventType != "probe.rebind" {
		t.Fatalf("outbox = %+v, %v", ms, err)
	}
	d := &notify.Desk{Store: tb.store, Holder: "rebind"}
	out, err := d.Deliver(tb.ctx, ms[0].MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if out.Err == nil || !strings.Contains(out.Err.Error(), "loopback") {
		t.Fatalf("delivery to a rebound name = %+v, want refused as loopback", out)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback receiver was reached %d times", n)
	}

	// Pinning: the delivery's own check sees a public address and any
	// later lookup loopback. The connection goes to the checked address
	// (whatever answers there), never to a second answer.
	r.Set("pin.example.com", "93.184.216.34", "93.184.216.34", "127.0.0.1")
	if _, err := tb.store.PutChannel(tb.ctx, tb.owner, hook("http://pin.example.com:"+port+"/hook")); err != nil {
		t.Fatalf("pinned name: %v", err)
	}
	if err := tb.store.InTx(tb.ctx, func(tx *sql.Tx) error {
		_, err := tb.store.AppendTx(tb.ctx, tx, tb.ws.ID, sqlstore.EventInput{Type: "probe.pin", ActorID: tb.owner.ID, Payload: map[string]any{"n": 2}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if ms, err = tb.store.ListOutbox(tb.ctx, tb.owner, signoff.OutboxFilter{Limit: 10}); err != nil || len(ms) == 0 || ms[0].EventType != "probe.pin" {
		t.Fatalf("outbox = %+v, %v", ms, err)
	}
	d = &notify.Desk{Store: tb.store, Holder: "pin", AttemptTimeout: time.Second}
	if _, err := d.Deliver(tb.ctx, ms[0].MessageID); err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the delivery connected to a second lookup's loopback answer (%d hits)", n)
	}
}
