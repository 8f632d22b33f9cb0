package signoff

import (
	"context"
	"encoding/json"
	"time"
)

// Triage run statuses.
const (
	TriageActive = "active" // the crew is working on it
	TriageParked = "parked" // waiting at the human gate
	TriageDone   = "done"   // an outcome is recorded
)

// TriageRun is the triage crew's working state for one bug case. State is
// the crew's own document (what intake recorded, the search results the
// investigator actually saw, the investigation, the assessment, the gate);
// the columns beside it are what the batch memory and the desk query.
type TriageRun struct {
	CaseID      string `json:"case_id"`
	WorkspaceID string `json:"workspace_id"`
	ProjectID   string `json:"project_id"`
	// Seq is the run's arrival position in its project.
	Seq    int64  `json:"seq"`
	ItemID string `json:"item_id"`
	Status string `json:"status"`
	// Outcome is new_ticket, duplicate, needs_info or dropped once done.
	Outcome  string `json:"outcome,omitempty"`
	TicketID string `json:"ticket_id,omitempty"`
	// Resolves is the ticket the item landed on: the one it created or the
	// one it duplicates (chains resolved).
	Resolves  string          `json:"resolves,omitempty"`
	State     json.RawMessage `json:"state"`
	Version   int64           `json:"version"`
	CreatedAt time.Time       `json:"created_at"`
	UpdatedAt time.Time       `json:"updated_at"`
}

// TriageService keeps triage runs. Runs are written by the triager's tools
// (acting as the triager agent) and the server; people read them.
type TriageService interface {
	// StartTriage opens the run of a bug case, at the end of its project's
	// arrival order. ECONFLICT if the case already has one.
	StartTriage(ctx context.Context, by Actor, caseID, itemID string, state json.RawMessage) (TriageRun, error)
	// GetTriage returns ENOTFOUND when the case has no run.
	GetTriage(ctx context.Context, by Actor, caseID string) (TriageRun, error)
	// SaveTriage writes a run back; r.Version must be the version read
	// (ECONFLICT otherwise), and the returned run carries the next.
	SaveTriage(ctx context.Context, by Actor, r TriageRun) (TriageRun, error)
	// ListTriage lists a project's runs in arrival order, optionally only
	// those with status.
	ListTriage(ctx context.Context, by Actor, projectID, status string) ([]TriageRun, error)
	// TriageAhead counts the project's bug reports that arrived before
	// caseID from public intake and whose triage has not yet started or is
	// still active: a run waits for them (batch memory depends on arrival
	// order). Runs parked at the gate do not hold later ones up.
	TriageAhead(ctx context.Context, by Actor, caseID string) (int, error)
	// ListDecisions lists a case's decisions, newest first.
	ListDecisions(ctx context.Context, by Actor, caseID string) ([]Decision, error)
	// DecideAmended is Decide with what the person answered beyond yes or
	// no (a JSON object, e.g. a corrected severity), kept on the decision.
	DecideAmended(ctx context.Context, by Actor, id, subjectDigest string, approve bool, reason string, amendment json.RawMessage) (Decision, error)
}
