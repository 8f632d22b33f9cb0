package clientip

import (
	"net/http"
	"testing"
)

func TestAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		proxies string
		remote  string
		xff     []string
		want    string
	}{
		{"no proxies: the header is ignored", "", "203.0.113.9:5000", []string{"198.51.100.1"}, "203.0.113.9"},
		{"untrusted peer: the header is ignored", "10.0.0.0/8", "203.0.113.9:5000", []string{"198.51.100.1"}, "203.0.113.9"},
		{"trusted peer: the entry it added", "10.0.0.0/8", "10.1.2.3:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a forged left entry is not reached", "10.0.0.0/8", "10.1.2.3:5000", []string{"1.1.1.1, 198.51.100.1"}, "198.51.100.1"},
		{"two trusted hops", "10.0.0.0/8, 192.0.2.7", "10.1.2.3:5000", []string{"1.1.1.1, 198.51.100.1, 192.0.2.7"}, "198.51.100.1"},
		{"header lines joined in order", "10.0.0.0/8", "10.1.2.3:5000", []string{"1.1.1.1", "198.51.100.1, 10.9.9.9"}, "198.51.100.1"},
		{"all trusted: the leftmost readable", "10.0.0.0/8", "10.1.2.3:5000", []string{"10.4.4.4, 10.5.5.5"}, "10.4.4.4"},
		{"unreadable entry stops the walk", "10.0.0.0/8", "10.1.2.3:5000", []string{"198.51.100.1, garbage, 10.5.5.5"}, "10.5.5.5"},
		{"empty header: the proxy", "10.0.0.0/8", "10.1.2.3:5000", nil, "10.1.2.3"},
		{"entry with a port", "10.0.0.0/8", "10.1.2.3:5000", []string{"198.51.100.1:4711"}, "198.51.100.1"},
		{"IPv6 entry with a port", "10.0.0.0/8", "10.1.2.3:5000", []string{"[2001:db8::1]:80"}, "2001:db8::1"},
		{"IPv4-mapped peer and proxy list", "::ffff:10.0.0.0/104", "[::ffff:10.1.2.3]:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"single trusted address", "127.0.0.1", "127.0.0.1:5000", []string{"198.51.100.1"}, "198.51.100.1"},
		{"zone in an entry is unreadable", "10.0.0.0/8", "10.1.2.3:5000", []string{"fe80::1%eth0"}, "10.1.2.3"},
		{"IPv6 peer with a zone", "", "[fe80::1%eth0]:5000", nil, "fe80::1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := Parse(tc.proxies)
			if err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequest("GET", "/", nil)
			req.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				req.Header.Add("X-Forwarded-For", v)
			}
			a, ok := r.Addr(req)
			if !ok || a.String() != tc.want {
				t.Fatalf("Addr = %v %v, want %s", a, ok, tc.want)
			}
		})
	}
}

func TestLongChainReadsOnlyTheRight(t *testing.T) {
	t.Parallel()
	r, _ := Parse("10.0.0.0/8")
	req, _ := http.NewRequest("GET", "/", nil)
	req.RemoteAddr = "10.0.0.1:1"
	chain := "198.51.100.1"
	for range 100 {
		chain += ", 10.0.0.2"
	}
	req.Header.Set("X-Forwarded-For", chain)
	// 100 trusted hops exceed what is read: the client cannot be placed
	// past the 32nd, so the leftmost read (a proxy) stands.
	if a, _ := r.Addr(req); a.String() != "10.0.0.2" {
		t.Fatalf("Addr = %v", a)
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0.1/8/1", "fe80::1%eth0", "300.1.1.1", "::ffff:10.0.0.0/8", "0.0.0.0/0", "::/0", "::ffff:0.0.0.0/96"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	r, err := Parse(" 10.0.0.0/8 ,, 192.0.2.7, 2001:db8::/32, 10.1.2.3/8")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Proxies(); len(got) != 4 || got[0] != "10.0.0.0/8" || got[1] != "192.0.2.7/32" || got[3] != "10.0.0.0/8" {
		t.Fatalf("Proxies = %v", got)
	}
}

func TestKey(t *testing.T) {
	t.Parallel()
	r := Resolver{}
	for _, tc := range []struct{ remote, want string }{
		{"198.51.100.7:1", "198.51.100.7"},
		{"[2001:db8:1:2:aaaa::1]:1", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:bbbb::9]:1", "2001:db8:1:2::/64"},
		{"[::ffff:198.51.100.7]:1", "198.51.100.7"},
		{"pipe", "pipe"},
	} {
		req, _ := http.NewRequest("GET", "/", nil)
		req.RemoteAddr = tc.remote
		if got := keyOf(r, req); got != tc.want {
			t.Errorf("KeyOf(%s) = %s, want %s", tc.remote, got, tc.want)
		}
	}
}

func FuzzAddr(f *testing.F) {
	f.Add("10.1.2.3:5000", "1.1.1.1, 198.51.100.1")
	f.Add("[::1]:80", "[2001:db8::1]:80, ,garbage")
	r, _ := Parse("10.0.0.0/8, ::1")
	f.Fuzz(func(t *testing.T, remote, xff string) {
		req, _ := http.NewRequest("GET", "/", nil)
		req.RemoteAddr = remote
		req.Header.Set("X-Forwarded-For", xff)
		a, ok := r.Addr(req)
		if !ok {
			return
		}
		peer, _ := peerAddr(remote)
		// The client is the peer, or an address the peer forwarded for:
		// never something not in the request.
		if a != peer && !r.trusted(peer) {
			t.Fatalf("untrusted peer %v: client %v", peer, a)
		}
		if a.Zone() != "" || a.Is4In6() {
			t.Fatalf("unnormalised %v", a)
		}
	})
}

// keyOf is the address key ClientOf gives req.
func keyOf(r Resolver, req *http.Request) string { return r.ClientOf(req).Addr }
