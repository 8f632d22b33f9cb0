package signoff

import (
	"context"
	"encoding/json"
	"time"

	"github.com/signoff-dev/signoff/canonical"
)

// The built-in feature-flag store. A flag lives in one project and one
// environment and holds one typed value with a version. People declare
// flags and read them; nobody changes one in use directly: a change is a
// change request whose plan the gate applies through SetFlag. Apps read
// flags over OFREP with an API key bound to one environment.

// PrefixFlagKey starts the id of an environment's OFREP API key.
const PrefixFlagKey = "fkey"

// FlagKeySecretPrefix starts every OFREP API key secret, so it is never
// mistaken for an API token ("so_") or a tracking secret ("sot_"), and
// secret scanners can tell them apart. The rest is the key id's body, "_"
// and 160 random bits in base32, as with API tokens.
const FlagKeySecretPrefix = "sof_"

// FlagType is the type of a flag's value.
type FlagType string

// Flag types. A number is any JSON number (a double, see package canonical);
// an object is a JSON object (never an array or a scalar).
const (
	FlagBoolean FlagType = "boolean"
	FlagString  FlagType = "string"
	FlagNumber  FlagType = "number"
	FlagObject  FlagType = "object"
)

// Valid reports whether t is a known flag type.
func (t FlagType) Valid() bool {
	return t == FlagBoolean || t == FlagString || t == FlagNumber || t == FlagObject
}

// Limits of flags.
const (
	MaxFlagKey   = 128      // runes of a flag key: A-Z a-z 0-9 _ . -
	MaxFlagEnv   = 64       // runes of an environment name: a-z 0-9 _ -
	MaxFlagValue = 64 << 10 // bytes of a value's JSON
)

// Flag is one feature flag of a project in one environment. Value is the
// RFC 8785 canonical JSON of the value. Version starts at 1 and grows by one
// with every write; it is the compare-and-swap token of SetFlag.
type Flag struct {
	WorkspaceID string          `json:"workspace_id"`
	ProjectID   string          `json:"project_id"`
	Environment string          `json:"environment"`
	Key         string          `json:"key"`
	Type        FlagType        `json:"type"`
	Value       json.RawMessage `json:"value"`
	Version     int64           `json:"version"`
	UpdatedAt   time.Time       `json:"updated_at"`
	// UpdatedBy is the actor id of the last write ("system" for the gate,
	// "cli" for the CLI with database access).
	UpdatedBy string `json:"updated_by"`
}

// flagState is what a flag's state digest covers.
type flagState struct {
	Project     string          `json:"project"`
	Environment string          `json:"environment"`
	Key         string          `json:"key"`
	Type        FlagType        `json:"type"`
	Value       json.RawMessage `json:"value"`
	Version     int64           `json:"version"`
}

// FlagState returns the flag's state digest: the lowercase hex SHA-256 of
// the canonical JSON (RFC 8785) of {project, environment, key, type, value,
// version}. It is the before- and after-state digest the change gate
// compares. It includes the version, so every write changes it, even one
// that sets the value the flag already had: an approval made against one
// state never matches a flag that was written since, whatever it holds.
// It errs only when Value is not valid JSON.
func FlagState(f Flag) (string, error) {
	return canonical.Digest(flagState{Project: f.ProjectID, Environment: f.Environment, Key: f.Key, Type: f.Type, Value: f.Value, Version: f.Version})
}

// FlagWrite asks SetFlag for one compare-and-swap write.
type FlagWrite struct {
	ProjectID string          `json:"project_id"`
	Env       string          `json:"environment"`
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"`
	// ExpectedVersion is the version the writer saw; the write fails with
	// ECONFLICT unless the flag is still at it.
	ExpectedVersion int64 `json:"expected_version"`
	// Reason says why (for the gate: the change case and plan); it is
	// recorded in the ledger. Required.
	Reason string `json:"reason"`
}

// FlagKey is an environment's API key for OFREP evaluation. The secret is
// shown once at creation and only its SHA-256 is stored.
type FlagKey struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	ProjectID   string     `json:"project_id"`
	Env         string     `json:"environment"`
	Label       string     `json:"label"`
	CreatedAt   time.Time  `json:"created_at"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
}

// FlagChange is one write of a flag as the ledger recorded it.
type FlagChange struct {
	Seq               int64           `json:"seq"`
	At                time.Time       `json:"at"`
	ActorID           string          `json:"actor_id"`
	Version           int64           `json:"version"`
	Value             json.RawMessage `json:"value"`
	Reason            string          `json:"reason"`
	BeforeStateDigest string          `json:"before_state_digest"`
	AfterStateDigest  string          `json:"after_state_digest"`
}

// MaxFlagHistory bounds FlagHistory's answer.
const MaxFlagHistory = 100

// FlagService is the built-in feature-flag store.
type FlagService interface {
	// ListFlags lists a project's flags ordered by environment and key; an
	// empty env lists every environment. Staff, agents and the server
	// read; reporters get EFORBIDDEN. ENOTFOUND for a project outside by's
	// workspace.
	ListFlags(ctx context.Context, by Actor, projectID, env string) ([]Flag, error)
	// GetFlag returns one flag. Same readers as ListFlags; ENOTFOUND for a
	// missing flag or a project outside by's workspace.
	GetFlag(ctx context.Context, by Actor, projectID, env, key string) (Flag, error)
	// CreateFlag declares a new flag at version 1. It is for owners (and
	// the CLI): declaring a flag is not changing one in use. EINVALID for
	// a bad key, environment, type or a value that does not match the
	// type; ECONFLICT when the flag exists; ENOTFOUND for the project.
	CreateFlag(ctx context.Context, by Actor, projectID, env, key string, typ FlagType, value json.RawMessage) (Flag, error)
	// SetFlag writes a flag's value by compare-and-swap on its version and
	// appends the ledger event "flag.set" with the before and after state
	// digests, in one transaction. Only the server (the change gate) and
	// the CLI with database access may: everyone else gets EFORBIDDEN,
	// because flag changes go through change requests. EINVALID when the
	// value does not match the flag's type; ENOTFOUND for a missing flag;
	// ECONFLICT when the flag is no longer at ExpectedVersion, in which case
	// before is the flag as it is now.
	SetFlag(ctx context.Context, by Actor, w FlagWrite) (before, after Flag, err error)
	// CreateFlagKey issues an OFREP API key for one environment of a
	// project and returns its secret, which is never stored nor shown
	// again. Owners (and the CLI) only.
	CreateFlagKey(ctx context.Context, by Actor, projectID, env, label string) (FlagKey, string, error)
	// RevokeFlagKey stops a key from working. Owners only; ENOTFOUND for an
	// unknown key or one of another workspace, ECONFLICT if already
	// revoked.
	RevokeFlagKey(ctx context.Context, by Actor, id string) (FlagKey, error)
	// ListFlagKeys lists a project's keys (revoked ones too), without
	// secrets; an empty env lists every environment. Owners only.
	ListFlagKeys(ctx context.Context, by Actor, projectID, env string) ([]FlagKey, error)
	// FlagHistory lists a flag's recent writes from the ledger, newest
	// first, at most limit (1..MaxFlagHistory). Same readers as GetFlag.
	// It is a diagnostic read for planners, served from the read-only
	// pool where the store has one.
	FlagHistory(ctx context.Context, by Actor, projectID, env, key string, limit int) ([]FlagChange, error)
	// ResolveFlagKey resolves an OFREP API key secret to what it may
	// read. Every malformed, unknown or revoked secret answers the same
	// EUNAUTHORIZED, so the answer reveals nothing.
	ResolveFlagKey(ctx context.Context, secret string) (ws, projectID, env string, err error)
}
