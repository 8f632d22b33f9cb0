package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
)

// simulatedBy reports whether an event by actorID, appended under ctx, is
// the act of a person the demo simulates (signoff.WithSimulatedPerson):
// the marked request's own authenticated person; or, on a public route
// (no credential), the public intake, the reporter acting through their
// tracking link, or a person answering through a chat platform, whom
// person (looked up only for a marked request) says is human. An agent's,
// the server's or any other actor's event in the same request keeps the
// evidence it has.
func simulatedBy(ctx context.Context, actorID string, person func(id string) bool) bool {
	principal, public, ok := signoff.SimulatedPrincipal(ctx)
	switch {
	case !ok || actorID == "":
		return false
	case principal != "":
		return actorID == principal
	case public:
		return actorID == IntakeActor || strings.HasPrefix(actorID, signoff.PrefixTracking+"_") ||
			(strings.HasPrefix(actorID, signoff.PrefixActor+"_") && person(actorID))
	}
	return false
}

// humanActor reports whether id is a person of workspace ws, read in tx.
func (s *DB) humanActor(ctx context.Context, tx *sql.Tx, ws, id string) bool {
	var role string
	if err := tx.QueryRowContext(ctx, `SELECT role FROM actors WHERE id = $1 AND workspace_id = $2`, id, ws).Scan(&role); err != nil {
		return false
	}
	return signoff.Role(role).IsHuman()
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
