package signoff

import (
	"context"
	"time"
)

// WorkspaceService manages tenants.
type WorkspaceService interface {
	// CreateWorkspace creates a workspace together with its first owner and
	// returns both. It is a bootstrap operation (CLI with database access);
	// the API never exposes it. Returns EINVALID for a bad name.
	CreateWorkspace(ctx context.Context, name, ownerName string) (Workspace, Actor, error)
	// GetWorkspace returns ENOTFOUND if the workspace does not exist.
	GetWorkspace(ctx context.Context, id string) (Workspace, error)
	// ListWorkspaces lists every workspace (operators with database access).
	ListWorkspaces(ctx context.Context) ([]Workspace, error)
	// RenameWorkspace returns EINVALID for a bad name and ENOTFOUND for a
	// workspace other than by.WorkspaceID.
	RenameWorkspace(ctx context.Context, by Actor, id, name string) (Workspace, error)
}

// ProjectInput is what a caller may set on a project.
type ProjectInput struct {
	Name        string `json:"name"`
	RepoURL     string `json:"repo_url"`
	Description string `json:"description"`
}

// ProjectPatch changes some fields of a project; a nil field keeps its
// value.
type ProjectPatch struct {
	Name        *string `json:"name"`
	RepoURL     *string `json:"repo_url"`
	Description *string `json:"description"`
}

// ProjectService manages a workspace's projects.
type ProjectService interface {
	// CreateProject returns EINVALID for bad input and ECONFLICT when the name
	// is taken in the workspace.
	CreateProject(ctx context.Context, by Actor, in ProjectInput) (Project, error)
	// GetProject returns ENOTFOUND if missing or in another workspace.
	GetProject(ctx context.Context, ws, id string) (Project, error)
	ListProjects(ctx context.Context, ws string) ([]Project, error)
	// UpdateProject applies the patch atomically, so concurrent patches of
	// different fields both take effect. Same errors as create; ENOTFOUND
	// for a project outside by's workspace.
	UpdateProject(ctx context.Context, by Actor, id string, patch ProjectPatch) (Project, error)
}

// ActorService manages actors and their tokens.
type ActorService interface {
	// CreateActor returns EINVALID for an unknown or internal role or a bad
	// name, ECONFLICT when the name is taken in the workspace.
	CreateActor(ctx context.Context, by Actor, name string, role Role) (Actor, error)
	// GetActor returns ENOTFOUND if missing or in another workspace.
	GetActor(ctx context.Context, ws, id string) (Actor, error)
	ListActors(ctx context.Context, ws string) ([]Actor, error)
	// CreateToken issues a credential for actorID and returns the secret,
	// which is never stored nor shown again. A nil expiry never expires.
	CreateToken(ctx context.Context, by Actor, actorID, label string, expiresAt *time.Time) (Token, string, error)
	ListTokens(ctx context.Context, ws, actorID string) ([]Token, error)
	// RevokeToken returns ENOTFOUND for an unknown token and ECONFLICT if it
	// was already revoked.
	RevokeToken(ctx context.Context, by Actor, tokenID string) (Token, error)
	// DisableActor (owners) stops an actor at once: their tokens and web
	// sessions no longer work and their approvals that still count are
	// voided, in one transaction; it returns the actor and how many
	// approvals were voided. ECONFLICT when already disabled or when it
	// would leave the workspace without an enabled owner.
	DisableActor(ctx context.Context, by Actor, actorID string) (Actor, int, error)
	// EnableActor (owners) lets a disabled actor in again. Voided
	// approvals stay void and ended web sessions stay ended. ECONFLICT
	// when the actor is not disabled.
	EnableActor(ctx context.Context, by Actor, actorID string) (Actor, error)
	// Authenticate resolves a secret to its actor. Returns EUNAUTHORIZED for a
	// malformed, unknown, revoked or expired token, or a disabled actor, all
	// with the same message so the answer reveals nothing.
	Authenticate(ctx context.Context, secret string) (Actor, error)
}

// CaseInput is what a caller supplies to open a case.
type CaseInput struct {
	ProjectID string   `json:"project_id"`
	Kind      CaseKind `json:"kind"`
	Title     string   `json:"title"`
	// ReporterID optionally names a reporter actor of the workspace.
	ReporterID string `json:"reporter_id,omitempty"`
}

// CaseFilter selects cases for listing. Cursor is opaque and comes from a
// previous page.
type CaseFilter struct {
	ProjectID string
	Kind      CaseKind
	State     string
	Cursor    string
	Limit     int
}

// CasePage is one page of cases; NextCursor is empty on the last page.
type CasePage struct {
	Cases      []Case `json:"cases"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// TransitionInput asks for one command on a case. ExpectedVersion, when set,
// makes the request fail with ECONFLICT unless the case is at that version.
type TransitionInput struct {
	Command         string `json:"command"`
	ExpectedVersion *int64 `json:"expected_version,omitempty"`
	Note            string `json:"note,omitempty"`
}

// InfoRequest is a clarification asked of a bug's reporter.
type InfoRequest struct {
	// Question is shown to the reporter on their tracking page and in
	// the notice they are sent, as plain text.
	Question string `json:"question"`
	// Language is the question's ISO 639-1 code.
	Language string `json:"language,omitempty"`
	// Note is for the ledger and staff (why information is missing).
	Note string `json:"note,omitempty"`
}

// CaseService manages cases and moves them through their state machines.
type CaseService interface {
	// CreateCase opens a case in its kind's initial state. Returns EINVALID or
	// ENOTFOUND (project).
	CreateCase(ctx context.Context, by Actor, in CaseInput) (Case, error)
	// GetCase returns the case as by may see it: ENOTFOUND if missing, in
	// another workspace, or (for a reporter) not their own case.
	GetCase(ctx context.Context, by Actor, id string) (Case, error)
	// ListCases pages through cases newest first. EINVALID for a bad cursor.
	ListCases(ctx context.Context, ws string, f CaseFilter) (CasePage, error)
	// TransitionCase applies one command through the case's transition table
	// and appends the ledger event in the same transaction. Returns EFORBIDDEN
	// when the command exists from the current state but not for by's role,
	// ECONFLICT (with the current state) when the command is illegal in the
	// current state, the expected version is stale, or concurrent writers kept
	// winning past the retry bound.
	TransitionCase(ctx context.Context, by Actor, id string, in TransitionInput) (Case, Event, error)
	// RequestAttention appends a case.attention event with note and moves
	// nothing: an agent's voice where it may not act, such as a state a
	// person's decision produced. An agent asks only on a case it holds or
	// held a task on (EFORBIDDEN otherwise); people who run the desk on any.
	RequestAttention(ctx context.Context, by Actor, id, note string) (Event, error)
}

// LedgerService reads the hash-chained ledger.
type LedgerService interface {
	// ListEvents returns events of one case after seq afterSeq, oldest
	// first. Returns ENOTFOUND if by may not see the case (see GetCase).
	// An agent reads them as StreamEvents shows them: none of a case it
	// has never had a task on.
	ListEvents(ctx context.Context, by Actor, caseID string, afterSeq int64, limit int) ([]Event, error)
	// HeadSeq returns the sequence of the newest event of ws (0 if none).
	HeadSeq(ctx context.Context, ws string) (int64, error)
	// StreamEvents returns events of by's workspace with seq > afterSeq
	// that by may see, oldest first, at most limit (0 or less means 100,
	// more than 1000 means 1000). Staff see every event; a reporter only
	// case.created, case.transitioned and reporter.* events of their own
	// cases; an agent the events of cases it has (or had) a task on.
	// EINVALID for a negative afterSeq, EFORBIDDEN for any other role.
	StreamEvents(ctx context.Context, by Actor, afterSeq int64, limit int) ([]Event, error)
}

// IntakeService takes public reports and the reporter's later words. Every
// text passes the airlock before it is stored; the original is kept for
// owners only.
type IntakeService interface {
	// SubmitReport opens a bug case from a public report and returns the
	// tracking secret, shown once. ENOTFOUND for an unknown project,
	// EINVALID for empty or oversized fields.
	SubmitReport(ctx context.Context, in ReportInput) (Case, Report, string, error)
	// IntakeProject returns the name of a project for its public report
	// form and intake, so that a report to a project that does not exist
	// is refused before it spends anyone's rate limit. ENOTFOUND for an
	// unknown or malformed id.
	IntakeProject(ctx context.Context, id string) (string, error)
	// Track resolves a tracking secret to its case, as the reporter may see
	// it. Any malformed, unknown or revoked secret is ENOTFOUND.
	Track(ctx context.Context, secret string) (Tracking, error)
	// Answer records the reporter's words on their own case, through the
	// airlock, while the case waits for them. A case that needs
	// information moves to triaging (provide_info, as the reporter) and
	// its triage job is queued, in the same transaction as the answer.
	// Same errors as Track, plus EINVALID for the text and ECONFLICT,
	// with nothing stored, when the case is waiting for no answer.
	Answer(ctx context.Context, secret, text string) (Report, error)
	// RequestInfo moves a bug case from triaging to needs_info
	// (request_info, as by) and records question, in the reporter's
	// language, as the case's public question, in one transaction. The
	// question is agent-written: it passes the airlock and carries no
	// link and nothing the airlock reads as instructions. EINVALID for
	// an empty, oversized or refused question; the errors of
	// TransitionCase otherwise.
	RequestInfo(ctx context.Context, by Actor, caseID string, in InfoRequest) (Case, error)
	// ListReports returns a case's reporter texts as by may see them:
	// originals and contacts for owners only.
	ListReports(ctx context.Context, by Actor, caseID string) ([]Report, error)
}

// Store is everything a storage backend provides. One conformance suite runs
// against every implementation.
type Store interface {
	WorkspaceService
	ProjectService
	ActorService
	CaseService
	LedgerService
	IntakeService
	TaskService
	CallService
	ConversationService
	DecisionService
	AgentService
	ProjectDataService
	TriageService
	BugLoopService
	FlagService
	ChangeService
	OutboxService
	// Ready returns nil when the database answers and its migrations are
	// current, else EUNAVAILABLE.
	Ready(ctx context.Context) error
	Close() error
}
