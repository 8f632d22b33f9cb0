// Package outbox is the pure part of Signoff's notification outbox: the
// stable message ids receivers de-duplicate on, the retry schedule, which
// events a channel subscribes to, and the JSON event every channel is
// built from. Storage (sqlstore) enqueues messages in the transaction of
// the state change that causes them; the notify package delivers them.
//
// Delivery is at least once: a message may arrive more than once, always
// with the same id, and never exactly once by promise.
package outbox

import (
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path"
	"strconv"
	"time"
)

// Namespace is the UUID namespace of message and card ids (a UUIDv4 fixed
// once, so ids are stable across releases).
var Namespace = [16]byte{0x5d, 0x1c, 0x8e, 0x41, 0x2a, 0x7b, 0x4c, 0x0e, 0x9f, 0x33, 0x61, 0xd2, 0x0b, 0x86, 0xa4, 0x17}

// UUIDv5 returns the RFC 9562 version 5 UUID of name in namespace ns.
func UUIDv5(ns [16]byte, name string) string {
	h := sha1.New()
	h.Write(ns[:])
	h.Write([]byte(name))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// JobName names a River job for UUIDv5. The creation time is part of it
// because SQLite may reuse the id of a deleted job: the pair never repeats.
func JobName(kind string, jobID int64, createdAt time.Time) string {
	return kind + ":" + strconv.FormatInt(jobID, 10) + ":" + strconv.FormatInt(createdAt.UTC().UnixMicro(), 10)
}

// MessageID is the id of the message a notification job carries.
func MessageID(jobID int64, createdAt time.Time) string {
	return UUIDv5(Namespace, JobName("notify", jobID, createdAt))
}

// CardID is the id of the card a card job opens.
func CardID(jobID int64, createdAt time.Time) string {
	return UUIDv5(Namespace, JobName("card", jobID, createdAt))
}

// Retry is the retry schedule: exponential from Base, doubled per failed
// attempt, capped at Max, with full jitter in [d/2, d] so that receivers
// that fail together are not retried together.
type Retry struct {
	Base time.Duration
	Max  time.Duration
	// Attempts is how many deliveries are tried before the message is
	// parked as dead.
	Attempts int
}

// DefaultRetry: 1 s doubling up to an hour; 20 attempts take about ten
// hours before a message is parked.
var DefaultRetry = Retry{Base: time.Second, Max: time.Hour, Attempts: 20}

// Delay is how long to wait after failed attempt n (1-based). r draws the
// jitter; a nil r uses the global source.
func (p Retry) Delay(n int, r *rand.Rand) time.Duration {
	if n < 1 {
		n = 1
	}
	d := p.Base
	for i := 1; i < n && d < p.Max; i++ {
		d *= 2
	}
	d = min(d, p.Max)
	half := int64(d / 2)
	if half <= 0 {
		return d
	}
	var j int64
	if r != nil {
		j = r.Int64N(half + 1)
	} else {
		j = rand.Int64N(half + 1)
	}
	return time.Duration(half + j)
}

// DefaultEvents are the events a channel gets when it names none: case
// moves, decisions and approvals asked and given, verdicts, receipts,
// reporter answers and cards, and what makes a person's earlier decision
// stop counting (approvals voided by a revoked key or a disabled person, a
// lapsed approval, a change overwritten by a later rollback) or an agent's
// request for a person's attention: each asks someone to act.
var DefaultEvents = []string{
	"case.created", "case.transitioned", "decision.*", "approval.*", "card.*",
	"verification.completed", "gate.*", "change.approval_requested", "change.settled", "change.rejected",
	"merge.recorded", "release.observed", "reporter.decided",
	"approvals.voided", "change.approval_lapsed", "change.overwritten", "case.attention",
}

// Match reports whether event type typ is one of patterns (path.Match
// globs: "case.*", "decision.requested", "*").
func Match(patterns []string, typ string) bool {
	for _, p := range patterns {
		if ok, err := path.Match(p, typ); err == nil && ok {
			return true
		}
	}
	return false
}

// CheckPatterns returns an error for a malformed glob.
func CheckPatterns(patterns []string) error {
	for _, p := range patterns {
		if p == "" || len(p) > 64 {
			return fmt.Errorf("event pattern %q: must be 1 to 64 characters", p)
		}
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("event pattern %q: %w", p, err)
		}
	}
	return nil
}

// Event is the JSON body of every outbound message (the webhook body, and
// what chat and mail messages are built from). Its schema is documented in
// docs/notifications.md; fields are only ever added.
type Event struct {
	// ID is the message id (also the webhook-id header).
	ID string `json:"id"`
	// Type is the ledger event type ("case.transitioned", ...), or
	// "card.opened" for an approval request.
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      EventData `json:"data"`
}

// EventData is what happened, as the ledger recorded it.
type EventData struct {
	WorkspaceID string `json:"workspace_id"`
	CaseID      string `json:"case_id,omitempty"`
	// Seq and Hash place the event in the workspace's hash chain; a
	// receiver orders a case's messages by Seq.
	Seq     int64           `json:"seq"`
	Hash    string          `json:"hash"`
	ActorID string          `json:"actor_id"`
	Payload json.RawMessage `json:"payload"`
	Card    *CardData       `json:"card,omitempty"`
	// Link is the case's page, when the server knows its public URL.
	Link string `json:"link,omitempty"`
}

// CardData is an approval request: who is asked, about which exact
// subject, until when.
type CardData struct {
	ID            string    `json:"id"`
	Kind          string    `json:"kind"`
	SubjectDigest string    `json:"subject_digest"`
	Options       []string  `json:"options"`
	Addressee     string    `json:"addressee"`
	ExpiresAt     time.Time `json:"expires_at"`
	// ChatApproval says whether a chat command may answer it as an
	// approval on this channel.
	ChatApproval bool `json:"chat_approval"`
	// AnswerHint is where to answer when chat may not: a command exactly
	// as it is run (e.g. "signoff approve --case case_…"), or a route.
	AnswerHint string `json:"answer_hint,omitempty"`
	// Change is, on a change approval, what the plan changes.
	Change *ChangeData `json:"change,omitempty"`
}

// ChangeData is what a change approval asks about: the target, its
// environment, the before and after values, and the reason. Values are
// the requester's and the target's own text, unescaped: a receiver
// escapes them for wherever it shows them.
type ChangeData struct {
	Kind        string `json:"kind"`
	Target      string `json:"target"`
	Environment string `json:"environment"`
	Before      string `json:"before"`
	After       string `json:"after"`
	// Summary and Excerpt: a file's diff size and first changed lines, or
	// a runbook's steps.
	Summary       string    `json:"summary,omitempty"`
	Excerpt       []string  `json:"excerpt,omitempty"`
	Reason        string    `json:"reason"`
	PlanExpiresAt time.Time `json:"plan_expires_at"`
}
