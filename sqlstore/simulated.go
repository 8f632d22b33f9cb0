package sqlstore

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
)

// simulatedBy reports whether an event by actorID, appended under ctx, is
// the act of a person the demo simulates (signoff.WithSimulatedPerson):
// the marked request's own authenticated person, or on a public route the
// public intake and the reporter acting through their tracking link. An
// agent's, the server's or any other actor's event in the same request
// keeps the evidence it has.
func simulatedBy(ctx context.Context, actorID string) bool {
	principal, public, ok := signoff.SimulatedPrincipal(ctx)
	switch {
	case !ok || actorID == "":
		return false
	case principal != "":
		return actorID == principal
	case public:
		return actorID == IntakeActor || strings.HasPrefix(actorID, signoff.PrefixTracking+"_")
	}
	return false
}

// simulatedPayload is body (a canonical JSON object) with its evidence
// type set to simulated. It can only lower a claim: whatever evidence the
// payload named is kept as "evidence_recorded" beside it. A payload that
// is not an object is left as it is.
func simulatedPayload(body []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil || m == nil {
		return body, nil
	}
	sim, err := json.Marshal(signoff.EvidenceSimulated)
	if err != nil {
		return nil, err
	}
	if old, ok := m["evidence"]; ok && string(old) != string(sim) {
		m["evidence_recorded"] = old
	}
	m["evidence"] = sim
	return canonical.Marshal(m)
}
