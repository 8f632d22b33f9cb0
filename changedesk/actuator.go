package changedesk

import (
	"context"
	"encoding/json"

	"github.com/signoff-dev/signoff/change"
)

// State is a target's state as an actuator reads it.
type State struct {
	// Digest is the before/after-state digest the plan names and the gate
	// compares: it changes with every write (a flag's version is part of
	// it), so an approval never matches a target written since.
	Digest string `json:"digest"`
	// Content is the digest of what the target holds, without versions or
	// commit ids: a compensating rollback proves it restored the original
	// by its restored Content equalling the original Content.
	Content string `json:"content_digest"`
	// Value shows the state to people (a flag's value, a file's text up
	// to a bound, a runbook's script digest). It is not trusted for
	// anything: the digests are.
	Value json.RawMessage `json:"value,omitempty"`
}

// Draft is what an actuator predicts for a plan before it exists: the
// live before-state, the after-state digest the plan promises and the
// rollback that restores the before-state (nil where the kind has none).
type Draft struct {
	Before   State
	After    string
	Rollback json.RawMessage
}

// Scope names where a target lives.
type Scope struct {
	WorkspaceID string
	ProjectID   string
	// CaseID is the change case acting (for commit messages, ledger
	// reasons and sandbox run names); empty when only reading.
	CaseID string
}

// Actuator changes one kind of target. Only the gate calls Apply and
// Restore; everything else may Read and Draft.
type Actuator interface {
	Kind() string
	// Read returns the target's live state.
	Read(ctx context.Context, sc Scope, t change.Target) (State, error)
	// Draft predicts a plan's effect from the live state and params
	// (EINVALID for params the kind does not take).
	Draft(ctx context.Context, sc Scope, t change.Target, params json.RawMessage) (Draft, error)
	// Apply applies p.Params to a target the gate found in state before,
	// and returns the state after. It must not apply anything if the
	// target is no longer in before (compare-and-swap where the target
	// allows it).
	Apply(ctx context.Context, sc Scope, p change.Plan, before State) (State, error)
	// Restore applies p.Rollback to a target in state current (after
	// Apply, or later for a compensating rollback) and returns the state
	// after. ENOTSUPPORTED-like EINVALID when the plan has no rollback.
	Restore(ctx context.Context, sc Scope, p change.Plan, current State) (State, error)
}
