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
	// IntakePerProject: reports filed into one project, from anywhere.
	IntakePerProject Limit
	// IntakeTotal: reports filed into all projects together, the
	// server's own ceiling (by default at least IntakePerProject).
	IntakeTotal Limit
	// LinkPerAddress: requests to tracking links (reads, answers,
	// decisions, found or not) per client address.
	LinkPerAddress Limit
	// ReadPerLink: reads of one valid tracking link.
	ReadPerLink Limit
	// WritePerLink: answers and decisions through one valid tracking link.
	WritePerLink Limit
	// MissPerAddress: lookups of links that do not exist, are malformed or
	// were revoked, per client address.
	MissPerAddress Limit
}

// DefaultBudgets are the budgets of a server nobody configured.
func DefaultBudgets() Budgets {
	return Budgets{
		IntakePerAddress: Limit{Rate: 10.0 / 60, Burst: 5},
		IntakePerProject: Limit{Rate: 10, Burst: 100},
		IntakeTotal:      Limit{Rate: 50, Burst: 500},
		LinkPerAddress:   Limit{Rate: 300, Burst: 3000},
		ReadPerLink:      Limit{Rate: 60, Burst: 600},
		WritePerLink:     Limit{Rate: 10.0 / 60, Burst: 10},
		MissPerAddress:   Limit{Rate: 10.0 / 60, Burst: 10},
	}
}

// withDefaults fills the zero fields of b. The server's ceiling is never
// below one project's limit.
func (b Budgets) withDefaults() Budgets {
	d := DefaultBudgets()
	if b.IntakePerProject.Rate > d.IntakeTotal.Rate || b.IntakePerProject.Burst > d.IntakeTotal.Burst {
		d.IntakeTotal = Limit{Rate: max(b.IntakePerProject.Rate, d.IntakeTotal.Rate), Burst: max(b.IntakePerProject.Burst, d.IntakeTotal.Burst)}
	}
	for _, f := range []struct{ l, def *Limit }{
		{&b.IntakePerAddress, &d.IntakePerAddress}, {&b.IntakePerProject, &d.IntakePerProject}, {&b.IntakeTotal, &d.IntakeTotal},
		{&b.LinkPerAddress, &d.LinkPerAddress}, {&b.ReadPerLink, &d.ReadPerLink}, {&b.WritePerLink, &d.WritePerLink},
		{&b.MissPerAddress, &d.MissPerAddress},
	} {
		if f.l.Rate <= 0 && f.l.Burst <= 0 {
			*f.l = *f.def
		}
	}
	return b
}

// Public holds the buckets of the public routes. One Public serves every
// door of a process (the API and the web pages), so a client cannot double
// its budget by switching between them.
type Public struct {
	b Budgets
	// mu makes Intake's three buckets one decision: a refused report
	// takes nothing from the buckets it did not exhaust.
	mu                                      sync.Mutex
	intakeAddr, intakeProject, intakeTotal  *Limiter
	linkAddr, readLink, writeLink, missAddr *Limiter
}

// NewPublic returns the public routes' buckets under b.
func NewPublic(b Budgets) *Public {
	b = b.withDefaults()
	return &Public{b: b,
		intakeAddr: New(b.IntakePerAddress), intakeProject: New(b.IntakePerProject), intakeTotal: New(b.IntakeTotal),
		linkAddr: New(b.LinkPerAddress), readLink: New(b.ReadPerLink), writeLink: New(b.WritePerLink), missAddr: New(b.MissPerAddress)}
}

// Budgets returns the budgets p applies.
func (p *Public) Budgets() Budgets { return p.b }

// Scope names the bucket that refused a report.
type Scope string

const (
	ScopeAddress Scope = "address"
	ScopeProject Scope = "project"
	ScopeServer  Scope = "server"
)

// Intake spends one report from the client address's, the project's and
// the server's buckets, or from none of them: when any is empty it returns
// the longest wait and the scope of the bucket that asks for it.
func (p *Public) Intake(addr, project string, now time.Time) (time.Duration, Scope) {
	p.mu.Lock()
	defer p.mu.Unlock()
	type take struct {
		l     *Limiter
		key   string
		scope Scope
	}
	takes := []take{{p.intakeTotal, "", ScopeServer}, {p.intakeProject, project, ScopeProject}, {p.intakeAddr, addr, ScopeAddress}}
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

// Link spends one request to a tracking link from addr, before the link
// is looked up.
func (p *Public) Link(addr string, now time.Time) time.Duration {
	return p.linkAddr.Take(addr, now)
}

// Miss spends one failed lookup from addr: a link that does not exist, is
// malformed or was revoked. A wait means the lookup is answered 429
// instead of "not found", so that a guesser learns nothing more.
func (p *Public) Miss(addr string, now time.Time) time.Duration {
	return p.missAddr.Take(addr, now)
}

// Read spends one read of the valid link (its id, never its secret).
func (p *Public) Read(link string, now time.Time) time.Duration {
	return p.readLink.Take(link, now)
}

// Write spends one answer or decision through the valid link.
func (p *Public) Write(link string, now time.Time) time.Duration {
	return p.writeLink.Take(link, now)
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
