package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/sqlstore"
)

// simulatedEvidence is the evidence type an event's payload names in its
// "evidence" field, the way the web's timeline reads it: a string there,
// or live.
func simulatedEvidence(t *testing.T, e signoff.Event) string {
	t.Helper()
	var p struct {
		Evidence json.RawMessage `json:"evidence"`
	}
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		t.Fatalf("payload of %s: %v", e.Type, err)
	}
	var s string
	if len(p.Evidence) == 0 || json.Unmarshal(p.Evidence, &s) != nil {
		return signoff.EvidenceLive
	}
	return s
}

// simulatedDo sends one JSON request with the given marker headers (each
// value one header line) and answers its status.
func simulatedDo(t *testing.T, method, url, token string, body any, marks ...string) *http.Response {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, m := range marks {
		req.Header.Add(signoff.SimulatedPersonHeader, m)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// TestSimulatedPeopleHeader checks the demo's marker for simulated people
// end to end over a real SQLite store: the server started with
// WithSimulatedPeople records a marked request's own person (the public
// intake's reporter, an authenticated human) as simulated, and nobody
// else; an agent that sends the marker changes nothing; a server started
// without the option (production) ignores it; a marker with another
// value, or sent twice, is no marker.
func TestSimulatedPeopleHeader(t *testing.T) {
	ctx := context.Background()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	agent := w.actor(t, "triage-bot", signoff.RoleTriager)
	agentToken := w.token(t, agent)
	demo := serve(t, store, nil, unlimited(), httpapi.WithSimulatedPeople())
	prod := serve(t, store, nil, unlimited())

	report := func(base string, marks ...string) string {
		t.Helper()
		b, _ := json.Marshal(map[string]string{"text": "the coupon is applied twice at checkout"})
		req, _ := http.NewRequest("POST", base+"/api/v1/projects/"+w.proj.ID+"/reports", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		for _, m := range marks {
			req.Header.Add(signoff.SimulatedPersonHeader, m)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			CaseID string `json:"case_id"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("report: %d %v", resp.StatusCode, err)
		}
		return out.CaseID
	}
	// evidence answers the evidence of each of the case's events of typ
	// by actor (any actor when empty), oldest first.
	evidence := func(caseID, typ, actor string) []string {
		t.Helper()
		evs, err := store.ListEvents(ctx, w.owner, caseID, 0, 500)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range evs {
			if e.Type == typ && (actor == "" || e.ActorID == actor) {
				out = append(out, simulatedEvidence(t, e))
			}
		}
		if len(out) == 0 {
			t.Fatalf("case %s has no %s event by %q", caseID, typ, actor)
		}
		return out
	}
	want := func(what string, got []string, ev string) {
		t.Helper()
		for _, g := range got {
			if g != ev {
				t.Errorf("%s: evidence %v, want all %s", what, got, ev)
				return
			}
		}
	}
	transition := func(base, token, caseID, command string, marks ...string) {
		t.Helper()
		if resp := simulatedDo(t, "POST", base+"/api/v1/cases/"+caseID+"/transitions", token, signoff.TransitionInput{Command: command}, marks...); resp.StatusCode != http.StatusOK {
			t.Fatalf("%s on %s: %d", command, caseID, resp.StatusCode)
		}
	}

	// The public intake on the demo's server: the marked report is the
	// demo's reporter, the unmarked one a real one.
	marked := report(demo.URL, signoff.SimulatedPersonValue)
	want("marked report on the demo server", evidence(marked, "report.received", sqlstore.IntakeActor), signoff.EvidenceSimulated)
	want("marked report's case on the demo server", evidence(marked, "case.created", ""), signoff.EvidenceSimulated)
	plain := report(demo.URL)
	want("unmarked report on the demo server", evidence(plain, "report.received", ""), signoff.EvidenceLive)
	for _, bad := range [][]string{{"live"}, {"Demo"}, {signoff.SimulatedPersonValue, signoff.SimulatedPersonValue}} {
		c := report(demo.URL, bad...)
		want(fmt.Sprintf("report marked %q", bad), evidence(c, "report.received", ""), signoff.EvidenceLive)
	}
	// Production ignores the marker altogether.
	genuine := report(prod.URL, signoff.SimulatedPersonValue)
	want("marked report on a production server", evidence(genuine, "report.received", ""), signoff.EvidenceLive)

	// A hostile agent sends the marker on the demo's server: its own act
	// stays live. A person's marked act afterwards on the same case is
	// simulated; only the person's event is.
	for _, c := range []string{plain, genuine} {
		if _, err := store.CreateTask(ctx, w.owner, signoff.TaskInput{CaseID: c, Kind: "triage", Role: agent.Role, AssigneeID: agent.ID,
			Input: json.RawMessage(`{"question":"what broke?"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	transition(demo.URL, agentToken, plain, "start_triage", signoff.SimulatedPersonValue)
	want("an agent's marked transition", evidence(plain, "case.transitioned", agent.ID), signoff.EvidenceLive)
	transition(demo.URL, w.ownerToken, plain, "ticket", signoff.SimulatedPersonValue)
	want("the owner's marked transition", evidence(plain, "case.transitioned", w.owner.ID), signoff.EvidenceSimulated)
	want("the agent's transition after the owner's", evidence(plain, "case.transitioned", agent.ID), signoff.EvidenceLive)
	want("the real report after marked acts on its case", evidence(plain, "report.received", ""), signoff.EvidenceLive)

	// The same acts on production: live.
	transition(prod.URL, agentToken, genuine, "start_triage", signoff.SimulatedPersonValue)
	transition(prod.URL, w.ownerToken, genuine, "ticket", signoff.SimulatedPersonValue)
	want("marked transitions on production", evidence(genuine, "case.transitioned", ""), signoff.EvidenceLive)

	// A marked request that fails authentication records nothing.
	if resp := simulatedDo(t, "POST", demo.URL+"/api/v1/cases/"+genuine+"/transitions", "so_not_a_token", signoff.TransitionInput{Command: "drop"}, signoff.SimulatedPersonValue); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a marked request with a bad token: %d, want 401", resp.StatusCode)
	}
}
