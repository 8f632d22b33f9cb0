package changedesk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/netguard"
	"github.com/signoff-dev/signoff/sandbox"
)

// HealthReport is the outcome of a plan's health check: Passed only if
// every probe passed.
type HealthReport struct {
	Passed bool    `json:"passed"`
	Probes []Probe `json:"probes"`
}

// Probe is one probe of a health check. Status is the HTTP status or the
// command's exit status (0 when the probe never got one; see Detail).
type Probe struct {
	At         time.Time `json:"at"`
	OK         bool      `json:"ok"`
	Status     int       `json:"status"`
	Detail     string    `json:"detail"`
	DurationMS int64     `json:"duration_ms"`
}

// Prober runs one probe of a health check. It never fails: a probe that
// cannot be made is a failing Probe saying why.
type Prober interface {
	Probe(ctx context.Context, hc change.HealthCheck) Probe
}

// RunHealth runs hc after an Apply: one probe at once, then one every
// IntervalSeconds for as long as WindowSeconds lasts (1 + window/interval
// probes; a window of 0 is the one probe), stopping at the first failing
// probe, since one failure already decides. sleep waits between probes
// (nil: the wall clock); it is given so tests need not wait. A cancelled
// wait ends the check as failed: a window not watched to its end did not
// pass.
func RunHealth(ctx context.Context, hc change.HealthCheck, p Prober, sleep func(context.Context, time.Duration) error) HealthReport {
	if sleep == nil {
		sleep = sleepContext
	}
	n, interval := 1, time.Duration(hc.IntervalSeconds)*time.Second
	switch {
	case hc.WindowSeconds <= 0:
	case hc.IntervalSeconds <= 0:
		// No interval: look at the start and at the end of the window.
		n, interval = 2, time.Duration(hc.WindowSeconds)*time.Second
	default:
		n += hc.WindowSeconds / hc.IntervalSeconds
	}
	rep := HealthReport{Passed: true}
	if p == nil {
		return HealthReport{Probes: []Probe{{At: time.Now().UTC(), Detail: "no health prober is configured on this server"}}}
	}
	for i := range n {
		if i > 0 {
			if err := sleep(ctx, interval); err != nil {
				rep.Passed = false
				rep.Probes = append(rep.Probes, Probe{At: time.Now().UTC(),
					Detail: fmt.Sprintf("the health check stopped after %d of %d probes: %v", i, n, err)})
				return rep
			}
		}
		pr := p.Probe(ctx, hc)
		if pr.At.IsZero() {
			pr.At = time.Now().UTC()
		}
		rep.Probes = append(rep.Probes, pr)
		if !pr.OK {
			rep.Passed = false
			return rep
		}
	}
	return rep
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Probers dispatches on the health check's kind. A kind without a prober
// fails its probe.
type Probers struct {
	HTTP    Prober // change.HealthHTTP; nil means HTTPProber{}
	Command Prober // change.HealthCommand; nil fails (no sandbox)
}

// HealthHosts reports the hosts besides loopback its HTTP prober
// reaches, for the review's health_host rule.
func (ps Probers) HealthHosts() []string {
	if h, ok := ps.HTTP.(interface{ HealthHosts() []string }); ok {
		return h.HealthHosts()
	}
	return nil
}

// Probe implements Prober.
func (ps Probers) Probe(ctx context.Context, hc change.HealthCheck) Probe {
	switch hc.Kind {
	case change.HealthHTTP:
		if ps.HTTP == nil {
			return HTTPProber{}.Probe(ctx, hc)
		}
		return ps.HTTP.Probe(ctx, hc)
	case change.HealthCommand:
		if ps.Command != nil {
			return ps.Command.Probe(ctx, hc)
		}
		return Probe{At: time.Now().UTC(), Detail: "command health checks need a sandbox, which this server does not have"}
	}
	return Probe{At: time.Now().UTC(), Detail: fmt.Sprintf("unknown health check kind %q", hc.Kind)}
}

// Bounds of an HTTP probe.
const (
	DefaultProbeTimeout = 5 * time.Second
	maxProbeBody        = 64 << 10
)

// HTTPProber probes a URL: GET (the default), HEAD, or POST with the
// check's body. It passes when the status is ExpectStatus and, when
// ExpectBody is set, the first 64 KiB of the body contain it. Redirects
// are not followed (a 3xx is the status compared) and no proxy is used.
//
// Plans come from agents, so the URL is a request the server makes on
// their behalf: only loopback hosts (localhost, 127.0.0.0/8, ::1) and
// Hosts are probed (change.HealthPolicy, the rule the review applies
// too). The URL's host is checked first; then the name is resolved once,
// every address checked, and the checked address dialled, so a name that
// resolves elsewhere, or differently the second time, is refused too.
type HTTPProber struct {
	// Timeout bounds one probe (default DefaultProbeTimeout).
	Timeout time.Duration
	// Hosts are the hosts besides loopback that may be probed: names, IP
	// addresses or CIDR prefixes (SIGNOFF_HEALTH_HOSTS). A listed name
	// reaches whatever it resolves to except cloud metadata.
	Hosts []string
	// Resolver looks names up (nil: the system resolver).
	Resolver netguard.Resolver
}

// HealthHosts reports the hosts besides loopback the prober reaches, for
// the review's health_host rule.
func (hp HTTPProber) HealthHosts() []string { return hp.Hosts }

// LoopbackHost reports whether host is localhost or a loopback address in
// any form (127.1, [::ffff:127.0.0.1], a trailing dot): HTTPProber's
// default rule.
func LoopbackHost(host string) bool {
	if ip, ok := netguard.ParseIP(host); ok {
		return netguard.Classify(ip) == netguard.Loopback
	}
	return netguard.NormalHost(host) == "localhost"
}

// Probe implements Prober.
func (hp HTTPProber) Probe(ctx context.Context, hc change.HealthCheck) Probe {
	start := time.Now()
	pr := Probe{At: start.UTC()}
	fail := func(format string, args ...any) Probe {
		pr.Detail = fmt.Sprintf(format, args...)
		pr.DurationMS = time.Since(start).Milliseconds()
		return pr
	}
	u, err := url.Parse(hc.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return fail("refused: %q is not an http(s) URL with a host", hc.URL)
	}
	pol, err := change.HealthPolicy(hp.Hosts)
	if err != nil {
		return fail("refused: the server's health hosts are malformed: %v", err)
	}
	rule := "loopback addresses"
	if len(hp.Hosts) > 0 {
		rule = "loopback addresses and the hosts the server allows"
	}
	if err := pol.CheckHost(u.Hostname()); err != nil {
		return fail("refused: health probes may not reach host %s (only %s): %v; the server's probe rule keeps plans from making it call other hosts",
			u.Hostname(), rule, err)
	}
	method := hc.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	switch method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost:
		body = strings.NewReader(hc.Body)
	default:
		return fail("refused: method %q (GET, HEAD or POST)", method)
	}
	timeout := hp.Timeout
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return fail("refused: %v", err)
	}
	req.Header.Set("User-Agent", "signoff-health-probe")
	guard := &netguard.Guard{Policy: pol, Resolver: hp.Resolver, DialTimeout: timeout}
	client := &http.Client{
		Transport:     probeTransport(guard, timeout),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		var ne net.Error
		var refused *netguard.Error
		switch {
		case errors.As(err, &refused):
			return fail("%s %s: refused: %v (only %s)", method, hc.URL, refused, rule)
		case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
			return fail("%s %s: no answer within %v", method, hc.URL, timeout)
		}
		return fail("%s %s: %v", method, hc.URL, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
	pr.Status = resp.StatusCode
	switch {
	case err != nil && hc.ExpectBody != "":
		return fail("%s %s: status %d, reading the body: %v", method, hc.URL, resp.StatusCode, err)
	case resp.StatusCode != hc.ExpectStatus:
		return fail("%s %s: status %d, want %d", method, hc.URL, resp.StatusCode, hc.ExpectStatus)
	case hc.ExpectBody != "" && !bytes.Contains(got, []byte(hc.ExpectBody)):
		return fail("%s %s: status %d, but the body (first %d bytes) does not contain %q", method, hc.URL, resp.StatusCode, maxProbeBody, hc.ExpectBody)
	}
	pr.OK = true
	pr.Detail = fmt.Sprintf("%s %s: status %d", method, hc.URL, resp.StatusCode)
	if hc.ExpectBody != "" {
		pr.Detail += fmt.Sprintf(", body contains %q", hc.ExpectBody)
	}
	pr.DurationMS = time.Since(start).Milliseconds()
	return pr
}

func probeTransport(g *netguard.Guard, timeout time.Duration) http.RoundTripper {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            g.DialContext,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// CommandProber runs the check's command in the sandbox, without network
// and without the repository, /tmp its working directory. It passes when
// the exit status is ExpectStatus and, when ExpectBody is set, stdout
// contains it.
type CommandProber struct {
	Runner sandbox.Runner
	// Timeout bounds one probe (default 30 s).
	Timeout time.Duration
}

// DefaultCommandProbeTimeout bounds a command probe.
const DefaultCommandProbeTimeout = 30 * time.Second

// Probe implements Prober.
func (cp CommandProber) Probe(ctx context.Context, hc change.HealthCheck) Probe {
	start := time.Now()
	pr := Probe{At: start.UTC()}
	fail := func(format string, args ...any) Probe {
		pr.Detail = fmt.Sprintf(format, args...)
		pr.DurationMS = time.Since(start).Milliseconds()
		return pr
	}
	if cp.Runner == nil {
		return fail("command health checks need a sandbox, which this server does not have")
	}
	if len(hc.Command) == 0 || hc.Command[0] == "" {
		return fail("the health check has no command")
	}
	timeout := cp.Timeout
	if timeout <= 0 {
		timeout = DefaultCommandProbeTimeout
	}
	res, err := cp.Runner.Run(ctx, sandbox.Spec{
		Command: hc.Command,
		Workdir: "/tmp",
		Env:     map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"},
		Limits:  sandbox.Limits{WallTime: timeout, CPUTime: timeout, OutputBytes: maxProbeBody, MemoryBytes: runbookMemory, Processes: runbookProcs},
	})
	if err != nil {
		return fail("%s: the sandbox could not run it: %v", hc.Command[0], err)
	}
	pr.Status = res.ExitCode
	switch {
	case res.Killed != "":
		return fail("%s: killed (%s)", hc.Command[0], res.Killed)
	case res.ExitCode != hc.ExpectStatus:
		return fail("%s: exit status %d, want %d: %s", hc.Command[0], res.ExitCode, hc.ExpectStatus, probeTail(res.Stderr, res.Stdout))
	case hc.ExpectBody != "" && !bytes.Contains(res.Stdout, []byte(hc.ExpectBody)):
		return fail("%s: exit status %d, but stdout does not contain %q", hc.Command[0], res.ExitCode, hc.ExpectBody)
	}
	pr.OK = true
	pr.Detail = fmt.Sprintf("%s: exit status %d", hc.Command[0], res.ExitCode)
	pr.DurationMS = time.Since(start).Milliseconds()
	return pr
}

func probeTail(outs ...[]byte) string {
	for _, b := range outs {
		if s := strings.TrimSpace(string(b)); s != "" {
			if len(s) > 200 {
				s = "..." + s[len(s)-200:]
			}
			return strings.ToValidUTF8(s, "")
		}
	}
	return "no output"
}
