package web

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

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

// eventView is one entry of a case's timeline.
type eventView struct {
	Seq      int64
	Type     string
	ActorID  string
	Time     time.Time
	Evidence string
	Summary  string
	Payload  string
}

// summary says in a line what an event did, where that is easy to tell.
func summary(e signoff.Event) string {
	var p map[string]any
	if json.Unmarshal(e.Payload, &p) != nil {
		return ""
	}
	str := func(k string) string { v, _ := p[k].(string); return v }
	switch e.Type {
	case "case.created":
		return fmt.Sprintf("opened as %s: %s", str("state"), str("title"))
	case "case.transitioned":
		out := fmt.Sprintf("%s → %s (%s)", str("from"), str("to"), str("command"))
		if n := str("note"); n != "" {
			out += ": " + n
		}
		return out
	case "case.attention":
		// An agent (or a person) asks the desk to look, where it may not
		// act: it moved nothing.
		return fmt.Sprintf("%s asks for attention (case %s, unchanged): %s", str("role"), str("state"), str("note"))
	case "report.received", "reporter.answered":
		return "reporter text through the airlock (dossier below)"
	case "reporter.asked":
		return fmt.Sprintf("asked the reporter (%s), shown on their page: %s", str("language"), str("question"))
	case "reporter.decided":
		return fmt.Sprintf("reporter answered %q to %s", str("answer"), str("question"))
	case "harness.reviewed":
		out := fmt.Sprintf("staff %s reproduction %s over review digest %s", str("decision"), str("harness_id"), str("review_digest"))
		if n := str("note"); n != "" {
			out += ": " + n
		}
		return out
	}
	return ""
}

// timeline reads the case's events, oldest first, at most maxTimeline;
// cut says there are more.
func (s *server) timeline(ctx context.Context, by signoff.Actor, c signoff.Case) (out []eventView, cut bool, err error) {
	var after int64
	for len(out) < maxTimeline {
		evs, err := s.store.ListEvents(ctx, by, c.ID, after, 500)
		if err != nil {
			return nil, false, err
		}
		for _, e := range evs {
			out = append(out, eventView{Seq: e.Seq, Type: e.Type, ActorID: e.ActorID, Time: e.Time,
				Evidence: evidenceOf(e.Payload), Summary: summary(e), Payload: indentJSON(e.Payload)})
		}
		if len(evs) < 500 {
			break
		}
		after = evs[len(evs)-1].Seq
	}
	if len(out) >= maxTimeline {
		out, cut = out[:maxTimeline], true
	}
	return out, cut, nil
}
