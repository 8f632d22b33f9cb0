package changedesk_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
)

func TestReviewNote(t *testing.T) {
	t.Parallel()
	plan := func(target, params, url string) json.RawMessage {
		p := change.Plan{Kind: change.KindFlag, Target: target, Params: json.RawMessage(params), Rollback: json.RawMessage(`{"value":true}`),
			BeforeStateDigest: strings.Repeat("a", 64), AfterStateDigest: strings.Repeat("b", 64), ExpiresAt: time.Unix(2e9, 0),
			HealthCheck: change.HealthCheck{Kind: change.HealthHTTP, Method: "GET", URL: url, ExpectStatus: 200, WindowSeconds: 6, IntervalSeconds: 2}}
		b, err := change.Canonical(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name, target, url string
		caveat            bool
	}{
		{"probe of the flag's endpoint", "flag:prod/checkout_v2_new_payment_flow", "http://127.0.0.1:8080/checkout", false},
		{"probe of healthz only", "flag:prod/checkout_v2_new_payment_flow", "http://127.0.0.1:8080/healthz", true},
		{"short words do not count", "flag:prod/new_ui", "http://127.0.0.1:8080/new/ui", true},
		{"a query is not the path", "flag:prod/search_limit", "http://127.0.0.1:8080/healthz?search=1", true},
		{"case and separators", "flag:prod/Search-Limit", "http://127.0.0.1:8080/api/search", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			note := changedesk.ReviewNote(changedesk.ReviewTask{Plan: plan(tt.target, `{"value":false}`, tt.url), Before: json.RawMessage(`{"value":true}`)})
			if got := strings.Contains(note, "shares no word"); got != tt.caveat {
				t.Fatalf("caveat %v, want %v: %s", got, tt.caveat, note)
			}
			if !strings.Contains(note, "advisory") || !strings.Contains(note, tt.target) {
				t.Fatalf("note %q", note)
			}
		})
	}
	if n := changedesk.ReviewNote(changedesk.ReviewTask{Plan: json.RawMessage(`{"kind":`)}); !strings.Contains(n, "could not read") {
		t.Fatalf("unreadable plan: %q", n)
	}
}

// TestAdvisoryReviewer: with a reviewer configured for changes, the card
// carries its note after the policy's review; the case still waits for a
// person, and the note decides nothing.
func TestAdvisoryReviewer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, openSQLite)
	reg := agent.NewRegistry(agent.BaseTools()...)
	b := agent.NewBuiltin()
	e.desk.Register(reg, b)
	b.Register(string(signoff.RoleReviewer), changedesk.BuiltinReviewer)
	e.desk.Runtime = &agent.Runtime{Store: e.store, Tools: reg, Providers: agent.Factory{Builtin: b}.Make}
	e.desk.Tools = reg
	_, err := e.store.CreateActor(e.ctx, e.owner, "reviewer", signoff.RoleReviewer)
	must(t, err)
	_, err = agent.SaveConfig(e.ctx, e.store, e.owner, []byte(`roles:
  reviewer:
    actor: reviewer
    provider: builtin
    tools: [`+changedesk.ToolRecordReview+`]
    handoffs: []
    max_turns: 2
`), reg)
	must(t, err)
	c := e.request("false")
	card, err := e.desk.Card(e.ctx, e.alice, c.ID)
	must(t, err)
	if !strings.Contains(card.ReviewNote, "Deterministic review") || card.State != "awaiting_approval" {
		t.Fatalf("card: state %s, note %q", card.State, card.ReviewNote)
	}
	// The note is not part of what is signed.
	e.approve(e.alice, c.ID)
	if _, err := e.desk.Execute(e.ctx, e.alice, c.ID); err != nil {
		t.Fatal(err)
	}
}
