package change

import (
	"fmt"
	"net/url"

	"github.com/signoff-dev/signoff/netguard"
)

// RuleHealthHost: an http health check's host is one the server's health
// prober may reach.
const RuleHealthHost = "health_host"

// HealthLoopback is what health probes reach without being told more.
var HealthLoopback = []string{"localhost", "127.0.0.0/8", "::1"}

// HealthPolicy is the rule health probes are made under: loopback, plus
// hosts (the server's SIGNOFF_HEALTH_HOSTS: names, IP addresses, CIDR
// prefixes). Nothing public is reachable unless listed: plans come from
// agents, and a probe is a request the server makes on their behalf.
func HealthPolicy(hosts []string) (netguard.Policy, error) {
	allow, err := netguard.ParseAllowlist(append(append([]string(nil), HealthLoopback...), hosts...)...)
	if err != nil {
		return netguard.Policy{}, err
	}
	return netguard.Policy{Allow: allow}, nil
}

// reviewHealthHost checks the health check's URL host against the hosts
// the request says the prober allows, at review, so a plan the prober
// would refuse when it dials (and roll back for) never reaches approval.
// It does not resolve names: a name passes only if it is listed, and the
// prober checks what it resolves to when it dials.
func reviewHealthHost(p Plan, req Request) RuleResult {
	h := p.HealthCheck
	switch h.Kind {
	case HealthCommand:
		return RuleResult{Rule: RuleHealthHost, OK: true, Detail: "a command health check runs without network"}
	case HealthHTTP:
	default:
		return RuleResult{Rule: RuleHealthHost, Detail: "no http or command health check, so no host can be checked"}
	}
	u, err := url.Parse(h.URL)
	if err != nil || u.Hostname() == "" {
		return RuleResult{Rule: RuleHealthHost, Detail: "health_check.url has no host to check"}
	}
	pol, err := HealthPolicy(req.HealthHosts)
	if err != nil {
		return RuleResult{Rule: RuleHealthHost, Detail: fmt.Sprintf("the server's health hosts are malformed, so none is allowed: %v", err)}
	}
	host := u.Hostname()
	if err := pol.CheckHost(host); err != nil {
		return RuleResult{Rule: RuleHealthHost, Detail: fmt.Sprintf("health_check.url: %v; health probes reach only loopback and the server's SIGNOFF_HEALTH_HOSTS", err)}
	}
	return RuleResult{Rule: RuleHealthHost, OK: true, Detail: fmt.Sprintf("health probe host %s is one the server may probe", netguard.NormalHost(host))}
}
