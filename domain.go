package signoff

import (
	"encoding/json"
	"time"

	"github.com/signoff-dev/signoff/airlock"
)

// Workspace is a tenant. No data crosses workspaces: a foreign id answers
// ENOTFOUND exactly like a missing one.
type Workspace struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Project is a target codebase plus its data. Later capabilities add their
// settings (test command, allowlists, health checks) to it.
type Project struct {
	ID          string    `json:"id"`
	WorkspaceID string    `json:"workspace_id"`
	Name        string    `json:"name"`
	RepoURL     string    `json:"repo_url"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Actor is a human or an agent with its own credentials.
type Actor struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	Name        string     `json:"name"`
	Role        Role       `json:"role"`
	CreatedAt   time.Time  `json:"created_at"`
	DisabledAt  *time.Time `json:"disabled_at,omitempty"`
}

// SystemActor is the server acting on its own inside workspace ws.
func SystemActor(ws string) Actor {
	return Actor{ID: "system", WorkspaceID: ws, Name: "signoff", Role: RoleSystem}
}

// CLIActor is whoever runs the signoff CLI with direct database access. It
// acts with owner rights and the ledger records it as "cli", not as any
// person, because the database cannot tell who typed the command.
func CLIActor(ws string) Actor {
	return Actor{ID: "cli", WorkspaceID: ws, Name: "signoff CLI (database access)", Role: RoleOwner}
}

// Token describes an API credential. The secret is shown once at creation and
// only its SHA-256 is stored.
type Token struct {
	ID          string     `json:"id"`
	WorkspaceID string     `json:"workspace_id"`
	ActorID     string     `json:"actor_id"`
	Label       string     `json:"label"`
	CreatedAt   time.Time  `json:"created_at"`
	ExpiresAt   *time.Time `json:"expires_at,omitempty"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
}

// CaseKind is bug or change.
type CaseKind string

const (
	KindBug    CaseKind = "bug"
	KindChange CaseKind = "change"
)

// Valid reports whether k is a known case kind.
func (k CaseKind) Valid() bool { return k == KindBug || k == KindChange }

// Case is one bug or one change request with its state machine position.
// Version increases by one with every transition and is the optimistic
// concurrency token.
type Case struct {
	ID             string   `json:"id"`
	WorkspaceID    string   `json:"workspace_id"`
	ProjectID      string   `json:"project_id"`
	Kind           CaseKind `json:"kind"`
	Title          string   `json:"title"`
	State          string   `json:"state"`
	Version        int64    `json:"version"`
	FixAttempts    int      `json:"fix_attempts"`
	MaxFixAttempts int      `json:"max_fix_attempts"`
	// ReporterID is the reporter actor whose case this is: only they may
	// confirm a reproduction or the live fix.
	ReporterID string    `json:"reporter_id,omitempty"`
	CreatedBy  string    `json:"created_by"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Event is one entry of a workspace's hash-chained ledger.
type Event struct {
	WorkspaceID string          `json:"workspace_id"`
	Seq         int64           `json:"seq"`
	CaseID      string          `json:"case_id,omitempty"`
	Type        string          `json:"type"`
	ActorID     string          `json:"actor_id"`
	Time        time.Time       `json:"time"`
	Payload     json.RawMessage `json:"payload"`
	PrevHash    string          `json:"prev_hash"`
	Hash        string          `json:"hash"`
}

// ReportInput is what the public intake form sends. Everything in it is
// hostile until the airlock has seen it.
type ReportInput struct {
	ProjectID  string `json:"-"`
	Text       string `json:"text"`
	Device     string `json:"device,omitempty"`
	OS         string `json:"os,omitempty"`
	AppVersion string `json:"app_version,omitempty"`
	Steps      string `json:"steps,omitempty"`
	Contact    string `json:"contact,omitempty"`
}

// Report is one piece of reporter text on a case: the first report or a
// later answer. Agents and most people see only the dossier; Original and
// Contact are filled for owners alone.
type Report struct {
	ID        string            `json:"id"`
	CaseID    string            `json:"case_id"`
	Kind      string            `json:"kind"` // "report" or "answer"
	Dossier   airlock.Dossier   `json:"dossier"`
	Metadata  map[string]string `json:"metadata"`
	Original  string            `json:"original,omitempty"`
	Contact   string            `json:"contact,omitempty"`
	CreatedAt time.Time         `json:"created_at"`
}

// Tracking is what a reporter sees through their tracking link.
type Tracking struct {
	CaseID string `json:"case_id"`
	Title  string `json:"title"`
	State  string `json:"state"`
	// Question is what the case asks its reporter now: the yes-or-no of
	// a reproduction or a live fix, or, while it needs information, the
	// clarification triage wrote in their language (through the airlock).
	Question string `json:"question,omitempty"`
	// QuestionLanguage is the clarification's language (ISO 639-1).
	QuestionLanguage string `json:"question_language,omitempty"`
	// AskedAt is when information was last asked for; AnsweredAt when
	// the reporter last answered since (nil while the ask is open).
	AskedAt    *time.Time `json:"asked_at,omitempty"`
	AnsweredAt *time.Time `json:"answered_at,omitempty"`
	// History is the case in plain steps, oldest first: what happened,
	// never who did it or what staff wrote.
	History   []TrackStep `json:"history,omitempty"`
	UpdatedAt time.Time   `json:"updated_at"`
}

// TrackStep is one step of a case's history as its reporter sees it: the
// state it entered, or "answered" for an answer of theirs.
type TrackStep struct {
	At   time.Time `json:"at"`
	Step string    `json:"step"`
}

// MaxPublicQuestion bounds the clarification a case shows its reporter,
// in bytes.
const MaxPublicQuestion = 2000

// MaxQuestions bounds how many clarifications triage asks one reporter;
// every answer runs triage again, so a model that keeps asking would loop.
const MaxQuestions = 3
