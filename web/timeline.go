package web

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"

	"github.com/signoff-dev/signoff"
)

// maxTimeline bounds the events a case page lists; a longer history says
// so and the API pages through the rest.
const maxTimeline = 2000

// Evidence types (SPEC principle 7). The page shows an event's own type
// and never upgrades one.
var evidenceTypes = map[string]bool{
	signoff.EvidenceLive: true, signoff.EvidenceReplayed: true, signoff.EvidenceAuthored: true, signoff.EvidenceSimulated: true,
}

// evidenceOf is the evidence type an event's payload names in its
// "evidence" field, or live: every other event was executed and signed by
// this server.
func evidenceOf(payload []byte) string {
	var p struct {
		Evidence json.RawMessage `json:"evidence"`
	}
	if json.Unmarshal(payload, &p) != nil || len(p.Evidence) == 0 {
		return signoff.EvidenceLive
	}
	var s string
	if json.Unmarshal(p.Evidence, &s) != nil {
		return signoff.EvidenceLive // an evidence map (triage's numbers), not a type
	}
	if evidenceTypes[s] {
		return s
	}
	return signoff.EvidenceLive
}

// eventView is one line of a case's timeline: a single event, or a group
// (an agent task's machine events, or an event with the bookkeeping
// records that followed it) whose events are in Inner, each with its own
// evidence type.
type eventView struct {
	Seq       int64
	Type      string
	ActorID   string
	ActorName string
	Time      time.Time
	Evidence  string
	Summary   string
	Payload   string
	// Task is set on a task group: the line reads Summary and lists
	// Inner; Evidences are the distinct types of its events, never one
	// "best" type for all.
	Task      string
	Evidences []string
	Inner     []eventView
}

// timelineActors names the actors an event can name: the workspace's
// people and agents, and the server's own pseudo-actors.
type timelineActors map[string]string

func (s *server) timelineActors(ctx context.Context, ws string) timelineActors {
	names := timelineActors{"system": "Signoff", "public-intake": "the public report form"}
	as, err := s.store.ListActors(ctx, ws)
	if err != nil {
		// Names are a courtesy: the ids still say who it was.
		s.log.ErrorContext(ctx, "list actors for the timeline", "err", err)
		return names
	}
	for _, a := range as {
		names[a.ID] = a.Name
	}
	return names
}

// name is who id is for people: the actor's name, "the reporter" for a
// tracking link, or the id itself.
func (n timelineActors) name(id string) string {
	if v, ok := n[id]; ok && v != "" {
		return markHidden(v)
	}
	if strings.HasPrefix(id, "trk_") {
		return "the reporter"
	}
	return id
}

// payloadOf reads an event's payload as a map; nil when it is not one.
func payloadOf(e signoff.Event) map[string]any {
	var p map[string]any
	if json.Unmarshal(e.Payload, &p) != nil {
		return nil
	}
	return p
}

// hiddenRune reports whether r hides or reorders text where it is shown:
// a control or format character (bidi overrides and isolates, zero-width
// characters, tags), a line or paragraph separator, a private-use or
// surrogate code point.
func hiddenRune(r rune) bool {
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co, unicode.Cs)
}

// markHidden shows every hidden rune of s as a visible ⟨U+XXXX⟩ and an
// invalid byte as U+FFFD. Agent and reporter text reaches the timeline
// through the ledger's payloads: an unterminated right-to-left override
// in a note would otherwise reverse the rest of its line, "by <actor>"
// included, and a zero-width one hide what is there.
func markHidden(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return hiddenRune(r) || r == '\uFFFD' }) {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if hiddenRune(r) {
			fmt.Fprintf(&b, "⟨%U⟩", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// visibleJSON escapes the hidden runes of JSON text as \uXXXX (a UTF-16
// pair outside the BMP): the same JSON value, with nothing that hides or
// reorders what is shown. JSON allows hidden runes only inside strings,
// where the escape means the rune itself; text that is not JSON gets the
// marks of markHidden.
func visibleJSON(s string) string {
	if !json.Valid([]byte(s)) {
		return markHidden(s)
	}
	if !strings.ContainsFunc(s, hiddenRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t' || r == '\r' || !hiddenRune(r):
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// summary says in a plain line what an event did. Every string in it
// comes from the ledger, so the template escapes it like any other text,
// and its hidden characters are marked (markHidden).
func summary(e signoff.Event, names timelineActors) string {
	return markHidden(summaryText(e, names))
}

func summaryText(e signoff.Event, names timelineActors) string {
	p := payloadOf(e)
	if p == nil {
		return ""
	}
	str := func(k string) string { v, _ := p[k].(string); return v }
	num := func(k string) int { v, _ := p[k].(float64); return int(v) }
	short := func(k string) string {
		v := str(k)
		if len(v) > 12 {
			return v[:12]
		}
		return v
	}
	switch e.Type {
	case "case.created":
		return fmt.Sprintf("opened as %s: %s", plainState(str("state")), str("title"))
	case "case.transitioned":
		out := fmt.Sprintf("moved from %s to %s (%s by %s)", plainState(str("from")), plainState(str("to")), strings.ReplaceAll(str("command"), "_", " "), str("role"))
		if n := str("note"); n != "" {
			out += ": " + n
		}
		return out
	case "case.attention":
		// An agent (or a person) asks the desk to look, where it may not
		// act: it moved nothing.
		return fmt.Sprintf("%s asks for attention (case %s, unchanged): %s", str("role"), plainState(str("state")), str("note"))
	case "report.received":
		return "the report arrived through the airlock (see the dossier)"
	case "reporter.answered":
		return "the reporter's answer arrived through the airlock (see the dossier)"
	case "reporter.asked":
		return fmt.Sprintf("asked the reporter (%s), shown on their page: %s", str("language"), str("question"))
	case "reporter.decided":
		out := fmt.Sprintf("the reporter answered %q to the %s question", str("answer"), strings.ReplaceAll(str("question"), "_", " "))
		if said := str("said"); said != "" {
			out += ": " + said
		}
		return out
	case "harness.reviewed":
		out := fmt.Sprintf("%s's test source reviewed: %s (review digest %s)", str("harness_id"), str("decision"), short("review_digest"))
		if n := str("note"); n != "" {
			out += ": " + n
		}
		return out
	case "triage.started":
		return "triage started"
	case "triage.updated":
		if t := str("ticket_id"); t != "" {
			return fmt.Sprintf("triage %s: ticket %s (%s)", str("status"), t, strings.ReplaceAll(str("outcome"), "_", " "))
		}
		return "triage state recorded (" + str("status") + ")"
	case "reproduction.started":
		return fmt.Sprintf("reproduction round %d started", num("round"))
	case "reproduction.proposed":
		return fmt.Sprintf("reproduction %s proposed: test files %s, it fails on main %s", str("harness_id"), joinList(p["test_files"]), short("base"))
	case "harness.frozen":
		return fmt.Sprintf("reproduction %s frozen: the reporter and a member of staff both accepted it (harness digest %s)", str("harness_id"), short("harness_digest"))
	case "fix.started":
		return fmt.Sprintf("fixing started on the frozen reproduction %s", str("harness_id"))
	case "candidate.submitted":
		return fmt.Sprintf("candidate %s (attempt %d) submitted: changes %s", str("candidate_id"), num("attempt"), joinList(p["changed"]))
	case "evidence.stored":
		return fmt.Sprintf("evidence bundle of %s stored (%d bytes, digest %s)", str("candidate_id"), num("bytes"), short("bundle_digest"))
	case "verification.completed":
		return fmt.Sprintf("candidate %s %s by the frozen reproduction: %s", str("candidate_id"), str("verdict"), str("reason"))
	case "review.noted":
		return fmt.Sprintf("advisory review note on %s (never an approval)", str("candidate_id"))
	case "approval.requested":
		return fmt.Sprintf("approval requested for %s (subject %s)", str("candidate_id"), short("subject_digest"))
	case "approval.recorded":
		return fmt.Sprintf("%s signed %s of subject %s (key %s, via %s)", names.name(str("approver_id")), str("decision"), short("subject_digest"), str("key_id"), str("via"))
	case "approval.quorum":
		return fmt.Sprintf("quorum of %d reached for %s: approved", num("quorum"), str("candidate_id"))
	case "approvals.voided", "approvals.superseded":
		return strings.ReplaceAll(e.Type, ".", " ")
	case "merge.recorded":
		return fmt.Sprintf("%s merged into %s: commit %s (main was %s)", str("candidate_id"), str("branch"), short("commit"), short("main_before"))
	case "release.observed":
		return fmt.Sprintf("released to %s: deployed %s (%s)", str("environment"), short("deployed"), str("ancestry"))
	case "release.smoke":
		if b, _ := p["passed"].(bool); b {
			return "smoke checks passed against the live service"
		}
		return "smoke checks FAILED against the live service"
	case "card.opened":
		return fmt.Sprintf("asked %s: %s", str("addressee"), strings.ReplaceAll(str("kind"), "_", " "))
	case "card.answered", "card.expired", "card.reasked":
		return strings.ReplaceAll(e.Type, ".", " ") + ": " + strings.ReplaceAll(str("kind"), "_", " ")
	case "loop.updated":
		return fmt.Sprintf("loop state recorded (%s, round %d)", plainState(str("case_state")), num("round"))
	case "task.created":
		return fmt.Sprintf("%s task opened for %s", str("kind"), names.name(str("assignee_id")))
	case "task.recorded":
		return fmt.Sprintf("task output recorded (%s)", str("status"))
	case "task.handed_off":
		return "handed off: " + str("reason")
	case "task.closed":
		return "task closed: " + str("outcome")
	case "agent.call":
		out := fmt.Sprintf("model call %d (%s", num("turn"), str("provider"))
		if m := str("model"); m != "" {
			out += " " + m
		}
		return out + "): " + str("outcome")
	case "decision.requested", "decision.decided":
		return strings.ReplaceAll(e.Type, ".", " ") + ": " + str("kind")
	}
	return strings.ReplaceAll(e.Type, ".", " ")
}

// plainState words a state for people: "awaiting_approval" reads
// "awaiting approval".
func plainState(st string) string { return strings.ReplaceAll(st, "_", " ") }

// joinList joins a JSON list of strings.
func joinList(v any) string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// timeline reads the case's events, oldest first, at most maxTimeline;
// cut says there are more. It folds them for reading (timelineGroups).
func (s *server) timeline(ctx context.Context, by signoff.Actor, c signoff.Case) (out []eventView, cut bool, err error) {
	var evs []signoff.Event
	var after int64
	for len(evs) < maxTimeline {
		page, err := s.store.ListEvents(ctx, by, c.ID, after, 500)
		if err != nil {
			return nil, false, err
		}
		evs = append(evs, page...)
		if len(page) < 500 {
			break
		}
		after = page[len(page)-1].Seq
	}
	if len(evs) >= maxTimeline {
		evs, cut = evs[:maxTimeline], true
	}
	return timelineGroups(evs, s.timelineActors(ctx, c.WorkspaceID)), cut, nil
}

// oneEvent is the view of one event.
func oneEvent(e signoff.Event, names timelineActors) eventView {
	return eventView{Seq: e.Seq, Type: e.Type, ActorID: e.ActorID, ActorName: names.name(e.ActorID), Time: e.Time,
		Evidence: evidenceOf(e.Payload), Summary: summary(e, names), Payload: visibleJSON(indentJSON(e.Payload))}
}

// bookkeeping events record state another line already says (the loop's
// and triage's digests): they join the line before them.
var bookkeeping = map[string]bool{"loop.updated": true, "triage.updated": true, "triage.started": true}

// taskEvent reports whether e is one of an agent task's machine events and
// names its task.
func taskEvent(e signoff.Event) (string, bool) {
	if !strings.HasPrefix(e.Type, "task.") && e.Type != "agent.call" {
		return "", false
	}
	p := payloadOf(e)
	id, _ := p["task_id"].(string)
	return id, id != ""
}

// timelineGroups folds events into lines: each agent task's machine events
// (task.*, agent.call, and the bookkeeping its agent wrote while the task
// was open) become one line at the task's first event; a bookkeeping
// record outside a task joins the line before it; every other event is a
// line of its own. The order of lines is the order of their first events.
func timelineGroups(evs []signoff.Event, names timelineActors) []eventView {
	var out []eventView
	open := map[string]int{}     // task id → index in out, while open
	assignee := map[string]int{} // actor id → index of their open task line
	for _, e := range evs {
		v := oneEvent(e, names)
		if id, ok := taskEvent(e); ok {
			i, seen := open[id]
			if !seen {
				out = append(out, eventView{Seq: e.Seq, Type: "task", Task: id, ActorID: e.ActorID, ActorName: v.ActorName, Time: e.Time})
				i = len(out) - 1
				open[id] = i
			}
			g := &out[i]
			g.Inner = append(g.Inner, v)
			if e.Type == "task.created" {
				p := payloadOf(e)
				if a, _ := p["assignee_id"].(string); a != "" {
					g.ActorID, g.ActorName = a, names.name(a)
					assignee[a] = i
				}
				if k, _ := p["kind"].(string); k != "" {
					g.Type = k
				}
			}
			if taskDone(e) {
				delete(open, id)
				if assignee[g.ActorID] == i {
					delete(assignee, g.ActorID)
				}
			}
			continue
		}
		if bookkeeping[e.Type] {
			if i, ok := assignee[e.ActorID]; ok {
				out[i].Inner = append(out[i].Inner, v)
				continue
			}
			if n := len(out); n > 0 && out[n-1].Task == "" {
				out[n-1].Inner = append(out[n-1].Inner, v)
				continue
			}
		}
		out = append(out, v)
	}
	for i := range out {
		if out[i].Task != "" {
			out[i].Summary = taskSummary(out[i])
		}
		out[i].Evidences = evidencesOf(out[i])
	}
	return out
}

// taskDone reports whether e ends its task's group.
func taskDone(e signoff.Event) bool {
	switch e.Type {
	case "task.handed_off", "task.closed":
		return true
	case "task.recorded":
		p := payloadOf(e)
		st, _ := p["status"].(string)
		return st == "closed"
	}
	return false
}

// taskSummary says what a task did: "reproducer task: 6 model calls, 3
// tool calls, closed done".
func taskSummary(g eventView) string {
	calls, recorded, other := 0, 0, 0
	end := "still open"
	for _, v := range g.Inner {
		switch v.Type {
		case "agent.call":
			calls++
		case "task.recorded":
			recorded++
			var p struct{ Status, Outcome string }
			if json.Unmarshal([]byte(v.Payload), &p) == nil && p.Status == "closed" {
				end = "closed " + p.Outcome
			}
		case "task.handed_off":
			end = "handed off"
		case "task.closed":
			end = "closed"
		case "task.created":
		default:
			other++
		}
	}
	out := fmt.Sprintf("%s task: %d model call%s, %d output%s recorded", g.Type, calls, plural(calls), recorded, plural(recorded))
	if other > 0 {
		out += fmt.Sprintf(", %d state record%s", other, plural(other))
	}
	return strings.TrimSpace(out + ", " + end)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// evidencesOf lists the distinct evidence types of a line's events in the
// order they first appear.
func evidencesOf(v eventView) []string {
	var out []string
	add := func(e string) {
		for _, x := range out {
			if x == e {
				return
			}
		}
		out = append(out, e)
	}
	if v.Task == "" {
		add(v.Evidence)
	}
	for _, in := range v.Inner {
		add(in.Evidence)
	}
	return out
}
