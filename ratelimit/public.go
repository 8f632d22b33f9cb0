package ratelimit

import (
	"fmt"
	"sync"
	"time"
)

// Budgets are the limits of the routes anyone can call: the report form
// and its API, and the reporter's tracking link. They are sized for
// addresses many people share (carrier-grade NAT, an office): filing a
// report is scarce per address, reading a link one holds is not, and only
// a lookup that finds nothing can be someone guessing, so only those are
// strict per address. A zero field takes its default (DefaultBudgets).
type Budgets struct {
	// IntakePerAddress: reports filed per client address.
	IntakePerAddress Limit
	// IntakePerNetwork: reports filed per client network (an IPv6 /48,
	// which one subscriber can hold whole; see Client.Net).
	IntakePerNetwork Limit
	// IntakePerProject: reports filed into one project, from anywhere.
	IntakePerProject Limit
	// IntakeTotal: reports filed into all projects together, the
	// server's own ceiling (by default at least IntakePerProject).
	IntakeTotal Limit
	// LinkPerAddress: requests through valid tracking links (reads,
	// answers, decisions) per client address.
	LinkPerAddress Limit
	// PaceReserve: requests per address still let through when
	// LinkPerAddress is spent, for readers at a person's pace on their own
	// link (PacePerLink), so that a neighbour who spends the address's
	// budget does not refuse them. By default a tenth of LinkPerAddress.
	PaceReserve Limit
	// PacePerLink: a person's pace on one link from one address.
	PacePerLink Limit
	// ReadPerLink: reads of one valid tracking link.
	ReadPerLink Limit
	// WritePerLink: answers and decisions through one valid tracking link.
	WritePerLink Limit
	// MissPerAddress: lookups of links that do not exist, are malformed or
	// were revoked, per client address.
	MissPerAddress Limit
	// MissPerNetwork: the same per client network.
	MissPerNetwork Limit
}

// DefaultBudgets are the budgets of a server nobody configured.
func DefaultBudgets() Budgets {
	return Budgets{
		IntakePerAddress: Limit{Rate: 10.0 / 60, Burst: 5},
		IntakePerNetwork: Limit{Rate: 10, Burst: 300},
		IntakePerProject: Limit{Rate: 10, Burst: 100},
		IntakeTotal:      Limit{Rate: 50, Burst: 500},
		LinkPerAddress:   Limit{Rate: 300, Burst: 3000},
		PaceReserve:      Limit{Rate: 30, Burst: 300},
		PacePerLink:      Limit{Rate: 1, Burst: 30},
		ReadPerLink:      Limit{Rate: 60, Burst: 600},
		WritePerLink:     Limit{Rate: 10.0 / 60, Burst: 10},
		MissPerAddress:   Limit{Rate: 10.0 / 60, Burst: 10},
		MissPerNetwork:   Limit{Rate: 10, Burst: 300},
	}
}

// withDefaults fills the zero fields of b. The server's ceiling is never
// below one project's limit, nor a network's below its address's.
func (b Budgets) withDefaults() Budgets {
	d := DefaultBudgets()
	atLeast := func(def *Limit, floor Limit) {
		def.Rate, def.Burst = max(def.Rate, floor.Rate), max(def.Burst, floor.Burst)
	}
	atLeast(&d.IntakeTotal, b.IntakePerProject)
	atLeast(&d.IntakePerNetwork, b.IntakePerAddress)
	atLeast(&d.MissPerNetwork, b.MissPerAddress)
	if l := b.LinkPerAddress; l.Rate > 0 || l.Burst > 0 {
		d.PaceReserve = Limit{Rate: l.Rate / 10, Burst: max(1, l.Burst/10)}
	}
	for _, f := range []struct{ l, def *Limit }{
		{&b.IntakePerAddress, &d.IntakePerAddress}, {&b.IntakePerNetwork, &d.IntakePerNetwork},
		{&b.IntakePerProject, &d.IntakePerProject}, {&b.IntakeTotal, &d.IntakeTotal},
		{&b.LinkPerAddress, &d.LinkPerAddress}, {&b.PaceReserve, &d.PaceReserve}, {&b.PacePerLink, &d.PacePerLink},
		{&b.ReadPerLink, &d.ReadPerLink}, {&b.WritePerLink, &d.WritePerLink},
		{&b.MissPerAddress, &d.MissPerAddress}, {&b.MissPerNetwork, &d.MissPerNetwork},
	} {
		if f.l.Rate <= 0 && f.l.Burst <= 0 {
			*f.l = *f.def
		}
	}
	return b
}

// Client names who a request is from, for the per-address budgets.
type Client struct {
	// Addr is the client's address key.
	Addr string
	// Net is the wider network the address belongs to when one
	// subscriber can hold all of it (an IPv6 /48), "" when there is none.
	Net string
}

// Scope names the bucket that refused a request.
type Scope string

const (
	ScopeAddress Scope = "address"
	ScopeProject Scope = "project"
	ScopeServer  Scope = "server"
	ScopeLink    Scope = "link"
)

// Public holds the buckets of the public routes. One Public serves every
// door of a process (the API and the web pages), so a client cannot double
// its budget by switching between them.
type Public struct {
	// mu makes each request's buckets one decision: a refused request
	// takes nothing from the buckets that would have let it through.
	mu                                                              sync.Mutex
	intakeAddr, intakeNet, intakeProject, intakeTotal               *Limiter
	linkAddr, reserve, pace, readLink, writeLink, missAddr, missNet *Limiter
}

// NewPublic returns the public routes' buckets under b.
func NewPublic(b Budgets) *Public {
	b = b.withDefaults()
	return &Public{
		intakeAddr: New(b.IntakePerAddress), intakeNet: New(b.IntakePerNetwork),
		intakeProject: New(b.IntakePerProject), intakeTotal: New(b.IntakeTotal),
		linkAddr: New(b.LinkPerAddress), reserve: New(b.PaceReserve), pace: New(b.PacePerLink),
		readLink: New(b.ReadPerLink), writeLink: New(b.WritePerLink),
		missAddr: New(b.MissPerAddress), missNet: New(b.MissPerNetwork)}
}

// take is one bucket a request spends from.
type take struct {
	l     *Limiter
	key   string
	scope Scope
}

// all spends one token from every bucket named, or from none: when any is
// empty it returns the longest wait and the scope of that bucket.
func (p *Public) all(now time.Time, takes ...take) (time.Duration, Scope) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var wait time.Duration
	var scope Scope
	for _, t := range takes {
		if w := t.l.Wait(t.key, now); w > wait {
			wait, scope = w, t.scope
		}
	}
	if wait > 0 {
		return wait, scope
	}
	for _, t := range takes {
		t.l.Take(t.key, now)
	}
	return 0, ""
}

// Intake spends one report from the client's address (and network), the
// project's and the server's buckets, or from none of them. Call it only
// for a project that exists: its id is a key.
func (p *Public) Intake(c Client, project string, now time.Time) (time.Duration, Scope) {
	takes := []take{{p.intakeTotal, "", ScopeServer}, {p.intakeProject, project, ScopeProject}, {p.intakeAddr, c.Addr, ScopeAddress}}
	if c.Net != "" {
		takes = append(takes, take{p.intakeNet, c.Net, ScopeAddress})
	}
	return p.all(now, takes...)
}

// Found spends one request through a valid tracking link, after the
// lookup proved it: from the link's own reads or writes, and from the
// address's budget. link is the link's id, never its secret. A guesser's
// misses spend none of these. When the address's budget is spent (a
// neighbour reading their own links fast), a reader at a person's pace on
// their own link still gets through on the address's reserve: to refuse
// them too, the neighbour would need dozens of links (a report filed for
// each) read without pause.
func (p *Public) Found(c Client, link string, write bool, now time.Time) (time.Duration, Scope) {
	per := p.readLink
	if write {
		per = p.writeLink
	}
	own := take{per, link, ScopeLink}
	wait, scope := p.all(now, own, take{p.linkAddr, c.Addr, ScopeAddress})
	if wait == 0 || scope == ScopeLink {
		return wait, scope
	}
	if w, _ := p.all(now, own, take{p.pace, c.Addr + " " + link, ScopeAddress}, take{p.reserve, c.Addr, ScopeAddress}); w == 0 {
		return 0, ""
	}
	return wait, scope
}

// Looked settles the budgets of one tracking-link lookup from c: found
// says the lookup found the link (link is then its id, which the lookup
// authenticated: never what a caller claims), write that the request
// answers through it. A lookup that found nothing spends the address's
// strict budget of misses, and past it is to be answered 429 rather than
// "not found", so that a guesser learns nothing more for a while; a found
// link spends as Found says. It returns 0, or how long to wait and why,
// in plain words.
func (p *Public) Looked(c Client, link string, found, write bool, now time.Time) (time.Duration, string) {
	if !found {
		if wait := p.Miss(c, now); wait > 0 {
			return wait, "Too many links that lead nowhere were tried from your network."
		}
		return 0, ""
	}
	wait, scope := p.Found(c, link, write, now)
	switch {
	case wait == 0:
		return 0, ""
	case scope == ScopeAddress:
		return wait, "Too many requests came from your network just now."
	case write:
		return wait, "Too many answers were sent through this link just now."
	default:
		return wait, "This link was opened very many times just now."
	}
}

// IntakeWords says in plain words why Intake refused a report.
func IntakeWords(s Scope) string {
	if s == ScopeAddress {
		return "Too many reports came from your network just now."
	}
	return "This project is receiving more reports than it can take just now."
}

// Miss spends one failed lookup: a link that does not exist, is malformed
// or was revoked. A wait means the lookup is answered 429 instead of "not
// found", so that a guesser learns nothing more for a while.
func (p *Public) Miss(c Client, now time.Time) time.Duration {
	takes := []take{{p.missAddr, c.Addr, ScopeAddress}}
	if c.Net != "" {
		takes = append(takes, take{p.missNet, c.Net, ScopeAddress})
	}
	wait, _ := p.all(now, takes...)
	return wait
}

// Retry is the whole seconds a Retry-After header gives for wait: at
// least one.
func Retry(wait time.Duration) int {
	return max(1, int((wait+time.Second-1)/time.Second))
}

// Words says wait the way a person reads it: "in 1 second", "in 40
// seconds", "in about 3 minutes", "in about an hour".
func Words(wait time.Duration) string {
	s := Retry(wait)
	switch {
	case s == 1:
		return "in 1 second"
	case s < 90:
		return fmt.Sprintf("in %d seconds", s)
	case s < 45*60:
		return fmt.Sprintf("in about %d minutes", (s+30)/60)
	case s < 90*60:
		return "in about an hour"
	default:
		return fmt.Sprintf("in about %d hours", (s+1800)/3600)
	}
}
