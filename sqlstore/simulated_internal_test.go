package sqlstore

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
)

// TestSimulatedPayloadOnlyLowers checks the relabelling of a simulated
// person's event: the evidence becomes simulated whatever it claimed,
// the old claim is kept beside it, the rest of the payload is untouched,
// and a payload that is not an object is left alone.
func TestSimulatedPayloadOnlyLowers(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"no evidence", `{"a":1,"b":"x"}`, `{"a":1,"b":"x","evidence":"simulated"}`},
		{"live", `{"evidence":"live","n":2.5}`, `{"evidence":"simulated","evidence_recorded":"live","n":2.5}`},
		{"authored", `{"evidence":"authored"}`, `{"evidence":"simulated","evidence_recorded":"authored"}`},
		{"already simulated", `{"evidence":"simulated"}`, `{"evidence":"simulated"}`},
		{"a map of numbers", `{"evidence":{"crashes":3}}`, `{"evidence":"simulated","evidence_recorded":{"crashes":3}}`},
		{"an array", `[1,2]`, `[1,2]`},
		{"null", `null`, `null`},
	} {
		body, err := canonical.Transform([]byte(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := simulatedPayload(body)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(got) != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
		var v any
		if err := json.Unmarshal(got, &v); err != nil {
			t.Errorf("%s: not JSON: %v", tc.name, err)
		}
	}
}

// TestSimulatedBy checks who a marked context relabels: nobody before the
// request's person is known, only the authenticated human afterwards,
// only the public intake and tracking links on a public route, nobody for
// an agent or the server.
func TestSimulatedBy(t *testing.T) {
	human := signoff.Actor{ID: "act_person", Role: signoff.RoleOperator}
	agent := signoff.Actor{ID: "act_agent", Role: signoff.RoleFixer}
	actors := []string{"act_person", "act_agent", "act_chat", "system", "cli", IntakeActor, "trk_link", ""}
	// act_chat is a person (answering in chat), act_agent is not.
	person := func(id string) bool { return id == "act_chat" || id == "act_person" }
	for _, tc := range []struct {
		name string
		ctx  func() context.Context
		want map[string]bool
	}{
		{"unmarked", func() context.Context { return context.Background() }, nil},
		{"marked, unbound", func() context.Context { return signoff.WithSimulatedPerson(context.Background()) }, nil},
		{"a person", func() context.Context {
			ctx := signoff.WithSimulatedPerson(context.Background())
			signoff.BindSimulatedPerson(ctx, human)
			return ctx
		}, map[string]bool{"act_person": true}},
		{"an agent", func() context.Context {
			ctx := signoff.WithSimulatedPerson(context.Background())
			signoff.BindSimulatedPerson(ctx, agent)
			return ctx
		}, nil},
		{"the server", func() context.Context {
			ctx := signoff.WithSimulatedPerson(context.Background())
			signoff.BindSimulatedPerson(ctx, signoff.SystemActor("ws_x"))
			return ctx
		}, nil},
		{"bound twice", func() context.Context {
			ctx := signoff.WithSimulatedPerson(context.Background())
			signoff.BindSimulatedPerson(ctx, human)
			signoff.BindSimulatedPerson(ctx, human)
			return ctx
		}, nil},
		{"public", func() context.Context {
			ctx := signoff.WithSimulatedPerson(context.Background())
			signoff.BindSimulatedPublic(ctx)
			return ctx
		}, map[string]bool{IntakeActor: true, "trk_link": true, "act_chat": true, "act_person": true}},
		{"public, then a person", func() context.Context {
			ctx := signoff.WithSimulatedPerson(context.Background())
			signoff.BindSimulatedPublic(ctx)
			signoff.BindSimulatedPerson(ctx, human)
			return ctx
		}, nil},
	} {
		ctx := tc.ctx()
		for _, a := range actors {
			if got := simulatedBy(ctx, a, person); got != tc.want[a] {
				t.Errorf("%s: simulatedBy(%q) = %v, want %v", tc.name, a, got, tc.want[a])
			}
		}
	}
}
