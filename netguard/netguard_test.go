package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/netguard/netguardtest"

	"github.com/signoff-dev/signoff/netguard"
)

func TestParseIP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string // "" when not an IP address
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"127.0.0.1.", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F.1", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0177.0000.0000.0001", "127.0.0.1"},
		{"2852039166", "169.254.169.254"},
		{"0xa9fea9fe", "169.254.169.254"},
		{"0251.0376.0251.0376", "169.254.169.254"},
		{"0xa9.0xfe.0xa9.0xfe", "169.254.169.254"},
		{"169.254.43518", "169.254.169.254"},
		{"012.0.0.1", "10.0.0.1"},
		{"0x0a.0.0.1", "10.0.0.1"},
		{"167772161", "10.0.0.1"},
		{"0", "0.0.0.0"},
		{"0x", "0.0.0.0"},
		{"[::1]", "::1"},
		{"::1", "::1"},
		{"[::ffff:169.254.169.254]", "169.254.169.254"},
		{"::ffff:a9fe:a9fe", "169.254.169.254"},
		{"[::ffff:127.0.0.1]", "127.0.0.1"},
		{"fe80::1%eth0", "fe80::1%eth0"},
		{"[fd00:ec2::254]", "fd00:ec2::254"},
		{"FD00:EC2::254", "fd00:ec2::254"},
		// Not addresses.
		{"256.0.0.1", ""},
		{"1.2.3.4.5", ""},
		{"0x100000000", ""},
		{"4294967296", ""},
		{"127.0.0.0x", "127.0.0.0"}, // "0x" alone is 0 to inet_aton and browsers
		{"08.0.0.1", ""},            // 8 is no octal digit
		{"1.2.3.-4", ""},
		{"+1.2.3.4", ""},
		{"1_0.0.0.1", ""},
		{"", ""},
		{".", ""},
		{"localhost", ""},
		{"example.com", ""},
		{"[example.com]", ""},
		{"127.0.0.1.nip.io", ""},
	}
	for _, tt := range tests {
		got, ok := netguard.ParseIP(tt.in)
		switch {
		case tt.want == "" && ok:
			t.Errorf("ParseIP(%q) = %v, want not an address", tt.in, got)
		case tt.want != "" && (!ok || got.String() != tt.want):
			t.Errorf("ParseIP(%q) = %v, %t; want %s", tt.in, got, ok, tt.want)
		}
	}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ip   string
		want netguard.Class
	}{
		{"8.8.8.8", netguard.Public},
		{"93.184.216.34", netguard.Public},
		{"2606:4700::1111", netguard.Public},
		{"64:ff9b::808:808", netguard.Public}, // NAT64 of 8.8.8.8

		{"169.254.169.254", netguard.Metadata},
		{"169.254.170.2", netguard.Metadata},
		{"fd00:ec2::254", netguard.Metadata},
		{"100.100.100.200", netguard.Metadata},
		{"168.63.129.16", netguard.Metadata},
		{"::ffff:169.254.169.254", netguard.Metadata},
		{"64:ff9b::a9fe:a9fe", netguard.Metadata},
		{"2002:a9fe:a9fe::1", netguard.Metadata},

		{"127.0.0.1", netguard.Loopback},
		{"127.255.255.254", netguard.Loopback},
		{"::1", netguard.Loopback},
		{"::ffff:127.0.0.1", netguard.Loopback},
		{"0.0.0.0", netguard.Unspecified},
		{"::", netguard.Unspecified},
		{"0.1.2.3", netguard.Reserved},

		{"10.0.0.1", netguard.Private},
		{"172.16.0.1", netguard.Private},
		{"172.31.255.255", netguard.Private},
		{"192.168.1.1", netguard.Private},
		{"fd12:3456::1", netguard.Private},
		{"fc00::1", netguard.Private},
		{"::10.0.0.1", netguard.Private}, // IPv4-compatible
		{"2002:0a00:0001::1", netguard.Private},

		{"169.254.1.1", netguard.LinkLocal},
		{"fe80::1", netguard.LinkLocal},
		{"fe80::1%eth0", netguard.LinkLocal},
		{"100.64.0.1", netguard.SharedNAT},
		{"100.127.255.255", netguard.SharedNAT},
		{"224.0.0.1", netguard.Multicast},
		{"ff02::1", netguard.Multicast},

		{"192.0.2.1", netguard.Reserved},
		{"198.18.0.1", netguard.Reserved},
		{"203.0.113.9", netguard.Reserved},
		{"240.0.0.1", netguard.Reserved},
		{"255.255.255.255", netguard.Reserved},
		{"2001:db8::1", netguard.Reserved},
		{"2001:0:4136:e378::1", netguard.Reserved}, // Teredo
		{"2002:0808:0808::1", netguard.Reserved},   // 6to4 of a public address: a tunnel
		{"::8.8.8.8", netguard.Reserved},
		{"100::1", netguard.Reserved},
		{"4000::1", netguard.Reserved}, // outside 2000::/3
		{"64:ff9b:1::a00:1", netguard.Private},

		{"172.32.0.1", netguard.Public},
		{"100.128.0.1", netguard.Public},
		{"169.255.0.1", netguard.Public},
	}
	for _, tt := range tests {
		a, err := netip.ParseAddr(tt.ip)
		if err != nil {
			t.Fatalf("%s: %v", tt.ip, err)
		}
		if got := netguard.Classify(a); got != tt.want {
			t.Errorf("Classify(%s) = %q, want %q", tt.ip, got, tt.want)
		}
	}
	if got := netguard.Classify(netip.Addr{}); got != netguard.Reserved {
		t.Errorf("Classify(zero) = %q", got)
	}
}

func TestNormalHost(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Example.COM.":             "example.com",
		"example.com..":            "example.com",
		"[::FFFF:169.254.169.254]": "169.254.169.254",
		"0x7f.1":                   "127.0.0.1",
		"LOCALHOST":                "localhost",
	} {
		if got := netguard.NormalHost(in); got != want {
			t.Errorf("NormalHost(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestPolicyCheckHost: the channel rule (public) and the health rule
// (allowlist only) on the same hosts, without resolving.
func TestPolicyCheckHost(t *testing.T) {
	t.Parallel()
	channels := netguard.Policy{Public: true, Allow: netguard.MustAllowlist("hooks.internal, 10.9.0.0/16")}
	health := netguard.Policy{Allow: netguard.MustAllowlist("localhost", "127.0.0.0/8", "::1", "status.example.com", "203.0.113.7")}
	tests := []struct {
		host                string
		channelOK, healthOK bool
		class               netguard.Class // of a refusal, when it has one
	}{
		{"8.8.8.8", true, false, netguard.Public},
		{"example.com", true, false, ""},
		{"status.example.com", true, true, ""},
		{"STATUS.Example.com.", true, true, ""},
		{"hooks.internal", true, false, ""},
		{"127.0.0.1", false, true, netguard.Loopback},
		{"127.1", false, false, netguard.Loopback}, // legacy forms: refused, named
		{"2130706433", false, false, netguard.Loopback},
		{"0177.0.0.1", false, false, netguard.Loopback},
		{"::ffff:127.0.0.1", false, true, netguard.Loopback},
		{"localhost", false, true, netguard.Loopback},
		{"api.localhost", false, false, netguard.Loopback},
		{"169.254.169.254", false, false, netguard.Metadata},
		{"::ffff:169.254.169.254", false, false, netguard.Metadata},
		{"[::ffff:169.254.169.254]", false, false, netguard.Metadata},
		{"0xa9fea9fe", false, false, netguard.Metadata},
		{"2852039166", false, false, netguard.Metadata},
		{"fd00:ec2::254", false, false, netguard.Metadata},
		{"10.0.0.1", false, false, netguard.Private},
		{"10.9.1.2", true, false, ""},
		{"192.168.0.10", false, false, netguard.Private},
		{"fd00::1", false, false, netguard.Private},
		{"169.254.1.1", false, false, netguard.LinkLocal},
		{"fe80::1%25eth0", false, false, ""},
		{"100.64.1.1", false, false, netguard.SharedNAT},
		{"0.0.0.0", false, false, netguard.Unspecified},
		{"::", false, false, netguard.Unspecified},
		{"203.0.113.7", false, true, netguard.Reserved}, // listed for health only, though documentation space
		{"localhost.nip.io", true, false, ""},
		{"1.2.3.4.5", false, false, ""},
		{"bad host", false, false, ""},
		{"", false, false, ""},
	}
	for _, tt := range tests {
		cerr, herr := channels.CheckHost(tt.host), health.CheckHost(tt.host)
		if (cerr == nil) != tt.channelOK || (herr == nil) != tt.healthOK {
			t.Errorf("%q: channels %v, health %v; want channels ok %t, health ok %t", tt.host, cerr, herr, tt.channelOK, tt.healthOK)
		}
		var e *netguard.Error
		if tt.class != "" && !tt.channelOK && (!errors.As(cerr, &e) || e.Class != tt.class) {
			t.Errorf("%q: refusal %v, want class %q", tt.host, cerr, tt.class)
		}
	}
}

func TestParseAllowlist(t *testing.T) {
	t.Parallel()
	a, err := netguard.ParseAllowlist("hooks.example.com, 10.0.0.0/8 ::ffff:192.168.1.0/120", "0x7f.1", "SMTP.Example.com.")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"hooks.example.com", "HOOKS.example.com.", "smtp.example.com"} {
		if !a.Name(h) {
			t.Errorf("Name(%q) = false", h)
		}
	}
	for _, ip := range []string{"10.1.2.3", "192.168.1.7", "::ffff:192.168.1.9", "127.0.0.1"} {
		if !a.Addr(netip.MustParseAddr(ip)) {
			t.Errorf("Addr(%s) = false", ip)
		}
	}
	for _, ip := range []string{"192.168.2.1", "127.0.0.2", "11.0.0.1"} {
		if a.Addr(netip.MustParseAddr(ip)) {
			t.Errorf("Addr(%s) = true", ip)
		}
	}
	if a.Name("example.com") || a.Name("evil.hooks.example.com") {
		t.Error("a name matched more than itself")
	}
	for _, bad := range []string{"10.0.0.0/33", "ex ample/", "1.2.3.4.5", "a..b", "http://x"} {
		if _, err := netguard.ParseAllowlist(bad); err == nil {
			t.Errorf("ParseAllowlist(%q) accepted", bad)
		}
	}
	if empty, err := netguard.ParseAllowlist("", " , "); err != nil || !empty.Empty() {
		t.Errorf("empty list: %v, %v", empty, err)
	}
}

func TestGuardResolve(t *testing.T) {
	t.Parallel()
	r := netguardtest.NewRebinding(map[string][]string{
		"hooks.example.com":  {"93.184.216.34"},
		"localhost.nip.io":   {"127.0.0.1"},
		"meta.example.com":   {"169.254.169.254"},
		"mixed.example.com":  {"93.184.216.34 10.0.0.7"},
		"mapped.example.com": {"::ffff:10.0.0.7"},
		"hooks.internal":     {"10.1.2.3"},
		"meta.internal":      {"169.254.169.254"},
	})
	g := &netguard.Guard{Policy: netguard.Policy{Public: true, Allow: netguard.MustAllowlist("hooks.internal meta.internal")}, Resolver: r}
	ctx := context.Background()
	tests := []struct {
		host   string
		ok     bool
		config bool // CheckConfig's verdict
	}{
		{"hooks.example.com", true, true},
		{"localhost.nip.io", false, false},
		{"meta.example.com", false, false},
		{"mixed.example.com", false, false},
		{"mapped.example.com", false, false},
		{"hooks.internal", true, true},
		{"meta.internal", false, false}, // a listed name never reaches metadata
		{"localhost", false, false},
		{"unknown.example.com", false, true}, // does not resolve: delivery checks again
		{"169.254.169.254", false, false},
	}
	for _, tt := range tests {
		_, err := g.Resolve(ctx, tt.host)
		if (err == nil) != tt.ok {
			t.Errorf("Resolve(%q) = %v, want ok %t", tt.host, err, tt.ok)
		}
		if err := g.CheckConfig(ctx, tt.host); (err == nil) != tt.config {
			t.Errorf("CheckConfig(%q) = %v, want ok %t", tt.host, err, tt.config)
		}
	}
}

// TestGuardDialPinsTheCheckedAddress: a name that resolves to a public
// address when checked and to loopback at any later lookup (DNS
// rebinding) is dialled at the checked address, never at loopback; a later
// dial sees loopback and refuses; names and legacy forms of loopback are
// never connected to.
func TestGuardDialPinsTheCheckedAddress(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	r := netguardtest.NewRebinding(map[string][]string{
		"rebind.example.com": {"93.184.216.34", "127.0.0.1"},
		"loop.example.com":   {"127.0.0.1"},
	})
	g := &netguard.Guard{Policy: netguard.Policy{Public: true}, Resolver: r, DialTimeout: 300 * time.Millisecond}
	client := &http.Client{Transport: g.Transport(), Timeout: 2 * time.Second}
	// The first dial checks the first (public) answer and must connect
	// there, whatever answers it; a dialer that looked the name up again
	// would connect to loopback.
	if resp, err := client.Get("http://rebind.example.com:" + port + "/"); err == nil {
		resp.Body.Close()
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the dial after the check went to loopback (%d hits): the address was not pinned", n)
	}
	for _, host := range []string{"rebind.example.com", "loop.example.com", "127.0.0.1", "0x7f.1", "localhost"} {
		resp, err := client.Get("http://" + host + ":" + port + "/")
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s: answered %s, want refused", host, resp.Status)
			continue
		}
		var refused *netguard.Error
		if !errors.As(err, &refused) {
			t.Errorf("GET %s: %v, want a netguard refusal", host, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback server was reached %d times", n)
	}

	// Allowlisted, the same loopback server is reached, through the
	// checked address.
	ok := &netguard.Guard{Policy: netguard.Policy{Public: true, Allow: netguard.MustAllowlist("127.0.0.1")}, Resolver: r}
	resp, err := (&http.Client{Transport: ok.Transport()}).Get("http://loop.example.com:" + port + "/")
	if err != nil {
		t.Fatalf("allowlisted: %v", err)
	}
	resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatalf("allowlisted loopback: %d hits, want 1", hits.Load())
	}
}

// FuzzParseIP: whatever ParseIP accepts, its canonical form parses back
// to the same address and classifies the same; NormalHost is idempotent.
func FuzzParseIP(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "0x7f.1", "0177.0.0.1", "2130706433", "[::ffff:169.254.169.254]", "fe80::1%eth0", "1.2.3.4.5", "0x", "example.com.", "08.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, ok := netguard.ParseIP(s)
		if ok {
			b, ok2 := netguard.ParseIP(a.String())
			if !ok2 || b != a {
				t.Fatalf("ParseIP(%q) = %v, which parses back as %v, %t", s, a, b, ok2)
			}
			if a.Is4In6() {
				t.Fatalf("ParseIP(%q) = %v: mapped form kept", s, a)
			}
			if netguard.Classify(a) != netguard.Classify(b) {
				t.Fatalf("classes differ for %q", s)
			}
		}
		if n := netguard.NormalHost(s); netguard.NormalHost(n) != n {
			t.Fatalf("NormalHost(%q) = %q, not idempotent (%q)", s, n, netguard.NormalHost(n))
		}
		_ = (netguard.Policy{Public: true}).CheckHost(s)
	})
}
