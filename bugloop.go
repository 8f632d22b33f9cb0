package signoff

import (
	"context"
	"encoding/json"
	"time"

	"github.com/riverqueue/river"
)

// ID prefixes of the bug loop's records.
const (
	PrefixHarness    = "har"
	PrefixCandidate  = "cand"
	PrefixApproval   = "apv"
	PrefixDeployment = "dep"
)

// RepoSettings bind a project to its git repository and say how its bugs
// are reproduced, fixed, verified and released. The webhook secret is set
// with them but never read back through the API.
type RepoSettings struct {
	// Path is Signoff's working repository for the project: a local git
	// repository the server owns (candidates, harness commits and merges
	// are written there).
	Path string `json:"path"`
	// URL, when set, is where Path was cloned from (a path or clone URL
	// reachable from this machine); Signoff clones it into Path when Path
	// does not exist yet.
	URL string `json:"url,omitempty"`
	// MainBranch is the branch fixes are merged into (default "main").
	MainBranch string `json:"main_branch"`
	// TestCommand and TestFormat are how the harness runs (default
	// "go test -json ./..." and "go-test-json").
	TestCommand []string `json:"test_command"`
	TestFormat  string   `json:"test_format"`
	// FixPaths are the globs a fix may change (e.g. "cart/**"); empty
	// means nothing may be changed, so a project must say it.
	FixPaths []string `json:"fix_paths"`
	// HarnessPaths are globs a fix must never touch (besides the harness
	// test files themselves, which are always protected).
	HarnessPaths []string `json:"harness_paths"`
	// MaxFixAttempts bounds the fixer (default 2).
	MaxFixAttempts int `json:"max_fix_attempts"`
	// TimeoutSeconds bounds one harness run (default 300); Runs is how
	// often each stage runs (default 1).
	TimeoutSeconds int `json:"timeout_seconds"`
	Runs           int `json:"runs"`
	// Smoke is checked against the live service once a release contains
	// the fix.
	Smoke []SmokeCheck `json:"smoke"`
	// LiveURL is the base URL of the live service, used when a
	// deployment does not name one.
	LiveURL string `json:"live_url,omitempty"`
	// LiveEnvironments are the deployment environments that put a fix
	// in front of reporters (default ["production"]); deployments to
	// others (staging, previews) never mark a fix live.
	LiveEnvironments []string `json:"live_environments"`
	// DeployHook, when set, is run (argv, on this machine, not sandboxed:
	// it is the operator's own command) after a merge, with SIGNOFF_REPO,
	// SIGNOFF_COMMIT and SIGNOFF_BRANCH set. The last line of its output
	// must be the commit it deployed; that is recorded as a deployment.
	DeployHook []string `json:"deploy_hook,omitempty"`
	// Approval policy.
	Quorum           int `json:"quorum"`
	ApprovalTTLHours int `json:"approval_ttl_hours"`
	// ConfirmWindowHours is how long the reporter has to answer "Does the
	// live fix work for you?" (default 336, 14 days).
	ConfirmWindowHours int `json:"confirm_window_hours"`
	// WebhookSecret verifies deployment webhooks (Standard Webhooks,
	// "whsec_" + base64). Write-only: reads return it empty and say
	// whether one is set in HasWebhookSecret.
	WebhookSecret    string `json:"webhook_secret,omitempty"`
	HasWebhookSecret bool   `json:"has_webhook_secret"`
}

// SmokeCheck is one HTTP request against the live service and what its
// answer must hold.
type SmokeCheck struct {
	Name   string `json:"name"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Body   string `json:"body,omitempty"`
	// ExpectStatus defaults to 200.
	ExpectStatus int `json:"expect_status"`
	// ExpectBody, when set, must appear in the response body.
	ExpectBody string `json:"expect_body,omitempty"`
}

// Defaults of RepoSettings.
const (
	DefaultMainBranch         = "main"
	DefaultFixAttempts        = 2
	DefaultHarnessTimeout     = 300
	DefaultApprovalTTLHours   = 23
	DefaultConfirmWindowHours = 14 * 24
)

// WithDefaults fills the unset fields.
func (s RepoSettings) WithDefaults() RepoSettings {
	if s.MainBranch == "" {
		s.MainBranch = DefaultMainBranch
	}
	if len(s.TestCommand) == 0 {
		s.TestCommand = []string{"go", "test", "-json", "./..."}
	}
	if s.TestFormat == "" {
		s.TestFormat = "go-test-json"
	}
	if s.MaxFixAttempts == 0 {
		s.MaxFixAttempts = DefaultFixAttempts
	}
	if s.TimeoutSeconds == 0 {
		s.TimeoutSeconds = DefaultHarnessTimeout
	}
	if s.Runs == 0 {
		s.Runs = 1
	}
	if s.Quorum == 0 {
		s.Quorum = 1
	}
	if s.ApprovalTTLHours == 0 {
		s.ApprovalTTLHours = DefaultApprovalTTLHours
	}
	if s.ConfirmWindowHours == 0 {
		s.ConfirmWindowHours = DefaultConfirmWindowHours
	}
	if s.FixPaths == nil {
		s.FixPaths = []string{}
	}
	if s.HarnessPaths == nil {
		s.HarnessPaths = []string{}
	}
	if s.Smoke == nil {
		s.Smoke = []SmokeCheck{}
	}
	if len(s.LiveEnvironments) == 0 {
		s.LiveEnvironments = []string{"production"}
	}
	return s
}

// Harness statuses. A harness freezes only when two people agree on it:
// the reporter ("this is the bug I saw") and a member of staff who read
// its test source ("the test checks the reported behaviour").
const (
	HarnessProposed   = "proposed"   // fails on base as expected; the reporter has not answered (staff may have approved)
	HarnessConfirmed  = "confirmed"  // the reporter said it is their bug; a member of staff has not approved it yet
	HarnessFrozen     = "frozen"     // the reporter and a member of staff both accepted it: fixes are judged by it
	HarnessDisowned   = "disowned"   // the reporter said it is not their bug, or a member of staff rejected it
	HarnessSuperseded = "superseded" // the case reopened
)

// Decisions of a staff review of a harness.
const (
	HarnessApprove = "approve"
	HarnessReject  = "reject"
)

// HarnessReview is a member of staff's decision on a proposed harness:
// whether its test checks the reported behaviour. It names the review
// digest they were shown (repair.ReviewSubject: the test source, the
// failing output and the static findings), so a decision binds exactly
// what was read.
type HarnessReview struct {
	// HarnessID is the harness that was reviewed. A harness rebased onto
	// a newer main carries its original's review (the same test files).
	HarnessID    string    `json:"harness_id"`
	By           string    `json:"by"`
	Decision     string    `json:"decision"`
	Note         string    `json:"note,omitempty"`
	ReviewDigest string    `json:"review_digest"`
	At           time.Time `json:"at"`
}

// HarnessRecord is one reproduction of a bug: the test files on a commit
// over the base, checked to fail there with the expected signature.
type HarnessRecord struct {
	ID     string `json:"id"`
	Round  int    `json:"round"`
	Status string `json:"status"`
	// Spec is the harness document (verify.Harness JSON).
	Spec   json.RawMessage `json:"spec"`
	Digest string          `json:"digest"`
	Base   string          `json:"base"`
	// Commit holds the test files over Base, on Branch.
	Commit    string   `json:"commit"`
	Branch    string   `json:"branch"`
	TestFiles []string `json:"test_files"`
	// FailingOutput is what the reporter is shown: the failing tests and
	// their output, in plain words.
	FailingOutput string    `json:"failing_output"`
	ProposedBy    string    `json:"proposed_by"`
	TaskID        string    `json:"task_id,omitempty"`
	Evidence      string    `json:"evidence"`
	ProposedAt    time.Time `json:"proposed_at"`
	// ConfirmedAt is set when the reporter said it is their bug.
	ConfirmedAt *time.Time `json:"confirmed_at,omitempty"`
	// FrozenAt is set when both the reporter and a member of staff
	// accepted it.
	FrozenAt *time.Time `json:"frozen_at,omitempty"`
	// ReporterNote is what the reporter said differs (airlocked), when
	// they disowned it.
	ReporterNote string `json:"reporter_note,omitempty"`
	// StaffReview is a member of staff's decision on the test source;
	// a rejection's note says why (it goes to the next reproducer).
	StaffReview *HarnessReview `json:"staff_review,omitempty"`
	// RebasedFrom names the harness this one moved onto a newer main:
	// the same test files, which the reporter confirmed, on a new base.
	RebasedFrom string `json:"rebased_from,omitempty"`
}

// Candidate statuses.
const (
	CandidateVerifying    = "verifying"
	CandidateVerified     = "verified"
	CandidateRejected     = "rejected"
	CandidateInconclusive = "inconclusive"
	CandidateSuperseded   = "superseded"
	CandidateMerged       = "merged"
)

// Candidate is one proposed fix: a commit over the harness base.
type Candidate struct {
	ID        string `json:"id"`
	HarnessID string `json:"harness_id"`
	Attempt   int    `json:"attempt"`
	Base      string `json:"base"`
	Commit    string `json:"commit"`
	Branch    string `json:"branch"`
	// Diff is the full diff from Base to Commit.
	Diff       string   `json:"diff"`
	DiffDigest string   `json:"diff_digest"`
	Changed    []string `json:"changed"`
	// SubmittedBy is the actor who proposed it; they cannot approve it.
	SubmittedBy   string `json:"submitted_by"`
	SubmitterRole Role   `json:"submitter_role"`
	TaskID        string `json:"task_id,omitempty"`
	Evidence      string `json:"evidence"`
	Status        string `json:"status"`
	// The verification, once it ran.
	Verdict     string          `json:"verdict,omitempty"`
	Reason      string          `json:"reason,omitempty"`
	Report      json.RawMessage `json:"report,omitempty"`
	Fingerprint string          `json:"fingerprint,omitempty"`
	// BundleDigest is the SHA-256 of the stored evidence bundle.
	BundleDigest string `json:"bundle_digest,omitempty"`
	// Review is the reviewer's advisory note: never an approval.
	Review *Review `json:"review,omitempty"`
	// Rejection is a person's reason for a signed rejection of this
	// candidate; the next fixer task carries it.
	Rejection string `json:"rejection,omitempty"`
	// RebasedFrom names the candidate whose diff this one carries onto a
	// newer main.
	RebasedFrom string     `json:"rebased_from,omitempty"`
	SubmittedAt time.Time  `json:"submitted_at"`
	VerifiedAt  *time.Time `json:"verified_at,omitempty"`
}

// Review is an advisory note on a verified candidate.
type Review struct {
	Note     string    `json:"note"`
	By       string    `json:"by"`
	Evidence string    `json:"evidence"`
	At       time.Time `json:"at"`
}

// MergeRecord is the human merge of an approved candidate.
type MergeRecord struct {
	CandidateID string    `json:"candidate_id"`
	Approvals   []string  `json:"approvals"`
	Commit      string    `json:"commit"`
	MainBefore  string    `json:"main_before"`
	Tree        string    `json:"tree"`
	By          string    `json:"by"`
	At          time.Time `json:"at"`
}

// ReleaseRecord is the deployment found to contain the merge, and the
// smoke check run against it.
type ReleaseRecord struct {
	DeploymentID string        `json:"deployment_id"`
	Commit       string        `json:"commit"`
	Environment  string        `json:"environment"`
	URL          string        `json:"url,omitempty"`
	At           time.Time     `json:"at"`
	Smoke        []SmokeResult `json:"smoke"`
	SmokePassed  bool          `json:"smoke_passed"`
	// SmokeAt is when the smoke checks ran; nil until they have.
	SmokeAt *time.Time `json:"smoke_at,omitempty"`
}

// SmokeResult is one smoke check as it ran.
type SmokeResult struct {
	Name       string `json:"name"`
	OK         bool   `json:"ok"`
	Status     int    `json:"status"`
	Detail     string `json:"detail"`
	DurationMS int64  `json:"duration_ms"`
}

// BugLoopState is what the bug loop keeps about a case beyond its state
// machine position. Round counts reopenings: every round starts from a new
// reproduction.
type BugLoopState struct {
	Round      int             `json:"round"`
	Harnesses  []HarnessRecord `json:"harnesses"`
	Candidates []Candidate     `json:"candidates"`
	Merge      *MergeRecord    `json:"merge,omitempty"`
	Release    *ReleaseRecord  `json:"release,omitempty"`
	// AskedAt is when the reporter was last asked a question.
	AskedAt *time.Time `json:"asked_at,omitempty"`
	// Observed are the deployments already judged for this case (the
	// release, or history rewritten after it), so none is judged twice.
	Observed []string `json:"observed,omitempty"`
	// Primary is set on a duplicate's loop: the case whose fix its
	// reporter is asked about. Merge and Release are then copies of the
	// primary's.
	Primary string `json:"primary,omitempty"`
	// PrimaryRound is the primary's round whose fix this duplicate was
	// last asked about: each fix is asked about once.
	PrimaryRound int `json:"primary_round,omitempty"`
}

// BugLoop is a case's loop record. Version is its optimistic concurrency
// token.
type BugLoop struct {
	CaseID      string       `json:"case_id"`
	WorkspaceID string       `json:"workspace_id"`
	ProjectID   string       `json:"project_id"`
	Version     int64        `json:"version"`
	State       BugLoopState `json:"state"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
}

// LoopEvent is one ledger event an update appends.
type LoopEvent struct {
	Type    string `json:"type"`
	Payload any    `json:"payload"`
}

// LoopUpdate changes a case's loop in one transaction: the loop's state
// (only if it is still at Version; 0 creates it), optionally one case
// command through the transition table as By, the ledger events, the
// approvals consumed and the jobs enqueued. Either all of it happens or
// none.
type LoopUpdate struct {
	CaseID  string
	Version int64
	State   BugLoopState
	// Command, when set, moves the case. The caller (the bug desk) has
	// verified any decision it carries: a signed approval, the reporter's
	// capability.
	Command string
	Note    string
	Events  []LoopEvent
	// Consume marks these approvals used. Each must be unconsumed, for
	// this case, and unexpired now, or the whole update fails (ECONFLICT).
	Consume []string
	Jobs    []JobRequest
	// MaxFixAttempts, when positive, sets the case's attempt limit (from
	// the project's settings, when the loop starts).
	MaxFixAttempts int
}

// JobRequest is a job enqueued with an update. A zero At runs it now.
type JobRequest struct {
	Args interface{ Kind() string }
	At   time.Time
}

// ApproverKey is a human's registered Ed25519 public key. The private key
// never leaves their machine.
type ApproverKey struct {
	ID          string     `json:"id"` // keys.ID of the public key
	WorkspaceID string     `json:"workspace_id"`
	ActorID     string     `json:"actor_id"`
	PublicKey   string     `json:"public_key"` // PEM
	CreatedAt   time.Time  `json:"created_at"`
	RevokedAt   *time.Time `json:"revoked_at,omitempty"`
}

// Approval statuses.
const (
	ApprovalValid      = "valid"
	ApprovalConsumed   = "consumed"
	ApprovalSuperseded = "superseded"
	// ApprovalVoided is an approval that stopped counting because its key
	// was revoked or its approver disabled. Nothing makes it valid again.
	ApprovalVoided = "voided"
)

// Approval is a verified, stored approval envelope.
type Approval struct {
	ID            string          `json:"id"`
	WorkspaceID   string          `json:"workspace_id"`
	CaseID        string          `json:"case_id"`
	SubjectDigest string          `json:"subject_digest"`
	Decision      string          `json:"decision"`
	ApproverID    string          `json:"approver_id"`
	KeyID         string          `json:"key_id"`
	Nonce         string          `json:"nonce"`
	PolicyDigest  string          `json:"policy_digest"`
	IssuedAt      time.Time       `json:"issued_at"`
	ExpiresAt     time.Time       `json:"expires_at"`
	Envelope      json.RawMessage `json:"envelope"`
	// Via says how it was given: "cli-signed" (a DSSE envelope signed on
	// the approver's machine) or "cli-signed-yes" (the same, confirmed
	// with --yes instead of typing the case id).
	Via        string     `json:"via"`
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	ConsumedAt *time.Time `json:"consumed_at,omitempty"`
}

// Deployment is one deployment event of a project, from a signed webhook
// or the deploy hook. The id is the webhook id (unique per project), so a
// repeated delivery is recorded once.
type Deployment struct {
	ID          string    `json:"id"`
	WorkspaceID string    `json:"workspace_id"`
	ProjectID   string    `json:"project_id"`
	Commit      string    `json:"commit"`
	Environment string    `json:"environment"`
	URL         string    `json:"url,omitempty"`
	Source      string    `json:"source"` // "webhook" or "deploy_hook"
	ReceivedAt  time.Time `json:"received_at"`
}

// BugLoopService stores the bug loop. It checks roles and workspaces and
// keeps every change transactional; what is legal beyond the transition
// table is decided by the bug desk (package repair) before it asks.
type BugLoopService interface {
	// GetRepoSettings returns the project's settings with defaults and
	// the webhook secret blanked. ENOTFOUND when the project has none.
	GetRepoSettings(ctx context.Context, by Actor, projectID string) (RepoSettings, error)
	// SetRepoSettings replaces them (owner or server). An empty
	// WebhookSecret keeps the stored one.
	SetRepoSettings(ctx context.Context, by Actor, projectID string, s RepoSettings) (RepoSettings, error)
	// WebhookSecret returns a project's workspace and webhook secret for
	// verifying a deployment webhook (no caller: the signature is the
	// credential). ENOTFOUND when the project or its secret is missing.
	WebhookSecret(ctx context.Context, projectID string) (ws, secret string, err error)

	// GetLoop returns ENOTFOUND when the case has no loop yet.
	GetLoop(ctx context.Context, by Actor, caseID string) (BugLoop, error)
	// ListLoops lists the loops of a project whose case is in one of
	// states (all when empty).
	ListLoops(ctx context.Context, by Actor, projectID string, states ...string) ([]BugLoop, error)
	// AdvanceLoop applies u atomically (see LoopUpdate). ECONFLICT when
	// the loop or the case moved on, or an approval cannot be consumed.
	AdvanceLoop(ctx context.Context, by Actor, u LoopUpdate) (BugLoop, Case, error)

	// RegisterKey records a human's public key (PEM) for by itself.
	// EINVALID for a bad key, ECONFLICT when it is registered already.
	RegisterKey(ctx context.Context, by Actor, publicKeyPEM string) (ApproverKey, error)
	// GetKey returns a registered key of workspace ws by id.
	GetKey(ctx context.Context, ws, keyID string) (ApproverKey, error)
	ListKeys(ctx context.Context, by Actor) ([]ApproverKey, error)
	// RevokeKey revokes a key of by's workspace (an owner any key, a
	// person their own) and, in the same transaction, voids the key's
	// approvals that still count; it returns the key and how many were
	// voided. ENOTFOUND for an unknown key (or another person's, to a
	// non-owner), ECONFLICT when it is revoked already.
	RevokeKey(ctx context.Context, by Actor, keyID string) (ApproverKey, int, error)
	// RecordApproval stores a verified approval. ECONFLICT when its nonce
	// was used before (single use).
	RecordApproval(ctx context.Context, by Actor, a Approval) (Approval, error)
	// ListApprovals lists a case's approvals, oldest first.
	ListApprovals(ctx context.Context, by Actor, caseID string) ([]Approval, error)
	// SupersedeApprovals marks every valid approval of the case whose
	// subject is not keep as superseded and returns how many.
	SupersedeApprovals(ctx context.Context, by Actor, caseID, keep string) (int, error)

	// RecordDeployment stores a deployment; created is false when one
	// with the same id was already stored (a repeated delivery).
	RecordDeployment(ctx context.Context, d Deployment) (stored Deployment, created bool, err error)
	// ListDeployments lists a project's deployments, newest first.
	ListDeployments(ctx context.Context, by Actor, projectID string, limit int) ([]Deployment, error)

	// ResolveTracking returns the case and reporter (the link id) a
	// tracking secret is bound to; ENOTFOUND for any bad secret.
	ResolveTracking(ctx context.Context, secret string) (ws, caseID, reporterID string, err error)

	// PutEvidence stores a candidate's evidence bundle (a gzip'd tar) and
	// returns its SHA-256. Server only; a second put of the same candidate
	// is ECONFLICT (evidence is written once).
	PutEvidence(ctx context.Context, by Actor, caseID, candidateID string, archive []byte) (string, error)
	// GetEvidence returns a candidate's bundle and its digest, as by may
	// see the case; ENOTFOUND when there is none.
	GetEvidence(ctx context.Context, by Actor, caseID, candidateID string) ([]byte, string, error)
}

// Bug loop jobs. All are idempotent: each rereads the case and does
// nothing when it has moved on.

// ReproduceJob asks for a reproducer task to be driven for the case's
// current round.
type ReproduceJob struct {
	WorkspaceID string `json:"workspace_id"`
	CaseID      string `json:"case_id"`
	Round       int    `json:"round"`
	Try         int    `json:"try"`
	// Version is the case version that asked for it, so each request is
	// its own job (jobs are unique by their arguments).
	Version int64 `json:"version,omitempty"`
}

func (ReproduceJob) Kind() string { return "bug_reproduce" }

// InsertOpts puts the job on its queue.
func (ReproduceJob) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: QueueAgent} }

// FixJob asks for a fixer task for the given attempt.
type FixJob struct {
	WorkspaceID string `json:"workspace_id"`
	CaseID      string `json:"case_id"`
	Round       int    `json:"round"`
	Attempt     int    `json:"attempt"`
	Version     int64  `json:"version,omitempty"`
}

func (FixJob) Kind() string { return "bug_fix" }

// InsertOpts puts the job on its queue.
func (FixJob) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: QueueAgent} }

// VerifyJob verifies one candidate with the frozen harness.
type VerifyJob struct {
	WorkspaceID string `json:"workspace_id"`
	CaseID      string `json:"case_id"`
	CandidateID string `json:"candidate_id"`
}

func (VerifyJob) Kind() string { return "bug_verify" }

// InsertOpts puts the job on its queue.
func (VerifyJob) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: QueueSandbox} }

// ReconcileJob checks a project's deployments against its merged fixes.
type ReconcileJob struct {
	WorkspaceID string `json:"workspace_id"`
	ProjectID   string `json:"project_id"`
	// Cause makes each trigger its own job (a deployment id or a merge).
	Cause string `json:"cause"`
}

func (ReconcileJob) Kind() string { return "bug_reconcile" }

// ConfirmTimeoutJob closes a case as unconfirmed if the reporter has not
// answered by its scheduled time.
type ConfirmTimeoutJob struct {
	WorkspaceID string `json:"workspace_id"`
	CaseID      string `json:"case_id"`
	Round       int    `json:"round"`
}

func (ConfirmTimeoutJob) Kind() string { return "bug_confirm_timeout" }

// DuplicatesJob carries a primary's news to its duplicates (SPEC section
// 7), in the same transaction as the news: "ask" when its fix is live,
// "withdraw" when its own reporter reopened it, "reopen" when a
// duplicate's reporter said the fix does not work for them (Reason is
// their airlocked words).
type DuplicatesJob struct {
	WorkspaceID string `json:"workspace_id"`
	ProjectID   string `json:"project_id"`
	Primary     string `json:"primary"`
	Action      string `json:"action"`
	Duplicate   string `json:"duplicate,omitempty"`
	Reason      string `json:"reason,omitempty"`
	Round       int    `json:"round"`
}

func (DuplicatesJob) Kind() string { return "bug_duplicates" }
