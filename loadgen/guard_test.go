package loadgen

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeResolver answers from a table; a missing name does not resolve.
type fakeResolver map[string][]string

func (f fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	ips, ok := f[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

func TestLoadGuard(t *testing.T) {
	t.Parallel()
	r := fakeResolver{
		"localhost":         {"127.0.0.1", "::1"},
		"box.internal":      {"127.0.1.1"},
		"example.com":       {"93.184.216.34"},
		"rebind.test":       {"127.0.0.1", "203.0.113.7"}, // one public address among loopback ones
		"lan.test":          {"192.168.1.10"},
		"empty.test":        {},
		"mapped.test":       {"::ffff:127.0.0.1"},
		"mapped-public.tst": {"::ffff:8.8.8.8"},
	}
	for _, c := range []struct {
		url      string
		loopback bool   // refused with ErrNotLoopback when false
		want     string // the error says so; "" when allowed
	}{
		{"http://127.0.0.1:8080", true, ""},
		{"http://127.9.9.9", true, ""},
		{"https://[::1]:8443/x", true, ""},
		{"http://localhost:8080", true, ""},
		{"http://box.internal", true, ""},
		{"http://mapped.test", true, ""},
		{"http://93.184.216.34/", false, "93.184.216.34"},
		{"http://8.8.8.8:80", false, "8.8.8.8"},
		{"http://[2001:db8::1]:80", false, "2001:db8::1"},
		{"http://0.0.0.0:8080", false, "0.0.0.0"},
		{"http://example.com", false, "resolves to 93.184.216.34"},
		{"http://rebind.test", false, "203.0.113.7"},
		{"http://lan.test", false, "192.168.1.10"},
		{"http://mapped-public.tst", false, "8.8.8.8"},
		{"http://unknown.test", true, "does not resolve"},
		{"http://empty.test", true, "no address"},
		{"ftp://127.0.0.1", true, "http://"},
		{"127.0.0.1:8080", true, "URL"},
		{"http:///path", true, "with a host"},
	} {
		err := Guard(context.Background(), c.url, r)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("Guard(%s) = %v, want allowed", c.url, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("Guard(%s) = %v, want an error with %q", c.url, err, c.want)
		case c.want != "" && !c.loopback && !errors.Is(err, ErrNotLoopback):
			t.Errorf("Guard(%s) = %v, want ErrNotLoopback", c.url, err)
		}
	}
	// The real resolver: an IP literal needs no lookup.
	if err := Guard(context.Background(), "http://127.0.0.1:1", net.DefaultResolver); err != nil {
		t.Errorf("real resolver, loopback: %v", err)
	}
	if err := Guard(context.Background(), "http://93.184.216.34:80", net.DefaultResolver); !errors.Is(err, ErrNotLoopback) {
		t.Errorf("real resolver, public address: %v", err)
	}
}

func TestLoadDialControl(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:80", true},
		{"127.1.2.3:80", true},
		{"[::1]:443", true},
		{"[::ffff:127.0.0.1]:80", true},
		{"10.0.0.1:80", false},
		{"93.184.216.34:443", false},
		{"[2001:db8::1]:80", false},
		{"nonsense", false},
	} {
		if err := DialControl("tcp", c.addr, nil); (err == nil) != c.ok {
			t.Errorf("DialControl(%s) = %v, want ok=%v", c.addr, err, c.ok)
		}
	}
	// Wired into a transport, it lets loopback through and nothing else.
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	d := &net.Dialer{Timeout: time.Second, Control: DialControl}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatalf("loopback refused: %v", err)
	}
	resp.Body.Close()
	if _, err := client.Get("http://192.0.2.1:9/"); !errors.Is(err, ErrNotLoopback) {
		t.Errorf("TEST-NET address: %v, want ErrNotLoopback before any packet", err)
	}
}
