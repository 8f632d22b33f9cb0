// Package crew runs the triage crew on the agent runtime: four runtime roles
// (intake, investigator, triage, writer) run as the triager identity, each
// with one decision and its record_* tool; the tools apply the triage
// package's guards and hold the human gate; the builtin provider answers for
// each role with the triage package's deterministic decisions, through the
// same tools a model would call.
package crew

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/triage"
)

// Runtime role names.
const (
	RoleIntake       = "intake"
	RoleInvestigator = "investigator"
	RoleTriage       = "triage"
	RoleWriter       = "writer"
)

// GateKind is the decision kind of the human gate inside create_ticket.
const GateKind = "triage_ticket"

// Gate floor: a proposed ticket at or above this severity, or an
// investigation less confident than MinConfidence, waits for a person.
const (
	GateSeverity  = "high"
	MinConfidence = 0.7
)

// State is the crew's working document for one case, kept in its triage
// run. Hits and Crashes are what the investigator's searches actually
// returned: the duplicate guard only accepts candidates from them.
type State struct {
	Item   triage.Item    `json:"item"`
	Intake *triage.Intake `json:"intake,omitempty"`
	// Query is the item's last search query, enriched by the server with
	// the device, OS, version and the telemetry-confirmed signature.
	Query       triage.Query `json:"query"`
	TrackerHits []triage.Hit `json:"tracker_hits,omitempty"`
	BatchHits   []triage.Hit `json:"batch_hits,omitempty"`
	// Hits is every result this item's searches returned (best score per
	// id): the duplicate guard accepts only these.
	Hits          []triage.Hit            `json:"hits,omitempty"`
	Crashes       []triage.CrashAggregate `json:"crashes,omitempty"`
	Investigation *triage.Investigation   `json:"investigation,omitempty"`
	Assessment    *triage.Assessment      `json:"assessment,omitempty"`
	Gate          *Gate                   `json:"gate,omitempty"`
	// Assessed is the severity the server's own numbers give the bug
	// (triage.Assess at record_triage): the gate reads the higher of it
	// and the recorded one, so a model cannot skip the gate by recording
	// a lower severity.
	Assessed string `json:"assessed_severity,omitempty"`
	// Since is when the case was sent back to triage for this round of
	// the run (zero on its first round): a gate decision asked before it
	// belongs to an earlier round, whose ticket it may have filed, and is
	// never taken back as this round's.
	Since time.Time `json:"since,omitzero"`
	// Filing is the claim of the worker filing the run's ungated ticket
	// (saved before it is filed: only one worker's save wins).
	Filing *Filing `json:"filing,omitempty"`
	// WaitsFor is the case of an earlier report this one duplicates whose
	// own ticket still waits at the gate: this run resumes when that one
	// is done.
	WaitsFor string                     `json:"waits_for,omitempty"`
	Action   *triage.Action             `json:"action,omitempty"`
	Notes    []string                   `json:"notes,omitempty"`
	Extra    map[string]json.RawMessage `json:"extra,omitempty"`
}

// Gate records the human gate of one proposed ticket. Proposal is the
// subject the person is asked about (the normalized ticket, see
// TicketSubject) and Digest its digest: once approved, exactly Proposal is
// filed, whatever a model says afterwards. It lives in the run, so a
// restart carries it.
type Gate struct {
	DecisionID string          `json:"decision_id"`
	Digest     string          `json:"digest"`
	Proposal   json.RawMessage `json:"proposal"`
	Status     string          `json:"status"`
	ApprovedBy string          `json:"approved_by,omitempty"`
	// Filing is saved, with when, just before the approved ticket is filed
	// (the save that only one worker wins); TicketID once it is.
	Filing   bool       `json:"filing,omitempty"`
	FilingAt *time.Time `json:"filing_at,omitempty"`
	TicketID string     `json:"ticket_id,omitempty"`
}

// Filing is a claim to file a run's ungated ticket: when it was made and
// the title and body the worker files, so a worker that finds the claim
// can tell whether the ticket was filed already.
type Filing struct {
	At    time.Time `json:"at"`
	Title string    `json:"title"`
	Body  string    `json:"body"`
}

// run is a triage run with its decoded state.
type run struct {
	signoff.TriageRun
	st State
}

func loadRun(ctx context.Context, s signoff.Store, by signoff.Actor, caseID string) (*run, error) {
	tr, err := s.GetTriage(ctx, by, caseID)
	if err != nil {
		return nil, err
	}
	r := &run{TriageRun: tr}
	if err := json.Unmarshal(tr.State, &r.st); err != nil {
		return nil, fmt.Errorf("triage state of %s: %w", caseID, err)
	}
	return r, nil
}

func (r *run) save(ctx context.Context, s signoff.Store, by signoff.Actor) error {
	b, err := json.Marshal(r.st)
	if err != nil {
		return err
	}
	r.TriageRun.State = b
	saved, err := s.SaveTriage(ctx, by, r.TriageRun)
	if err != nil {
		return err
	}
	r.TriageRun = saved
	return nil
}

// GateOf returns the gate of a case's run (ENOTFOUND when it never
// paused).
func GateOf(ctx context.Context, s signoff.Store, by signoff.Actor, caseID string) (Gate, error) {
	r, err := loadRun(ctx, s, by, caseID)
	if err != nil {
		return Gate{}, err
	}
	if r.st.Gate == nil {
		return Gate{}, signoff.Errorf(signoff.ENOTFOUND, "case %s did not pause at the gate", caseID)
	}
	return *r.st.Gate, nil
}
