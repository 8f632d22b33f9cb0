package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/signoff-dev/signoff"
)

// The typed calls below cover what the signoff CLI and its demo do. An
// answer whose type lives in a desk package (bug cards, reproductions,
// change views and executions) comes back as json.RawMessage, or is decoded
// into the caller's out as Do does, so that this package stays free of
// those packages and the caller can decode it as strictly as it needs to.

// Me is the actor the token belongs to.
func (c *Client) Me(ctx context.Context) (signoff.Actor, error) {
	return call[signoff.Actor](ctx, c, http.MethodGet, Path("me"), nil)
}

// Case reads one case.
func (c *Client) Case(ctx context.Context, caseID string) (signoff.Case, error) {
	return call[signoff.Case](ctx, c, http.MethodGet, Path("cases", caseID), nil)
}

// Loop reads a bug case's loop.
func (c *Client) Loop(ctx context.Context, caseID string) (signoff.BugLoop, error) {
	return call[signoff.BugLoop](ctx, c, http.MethodGet, Path("cases", caseID, "loop"), nil)
}

// Events reads up to limit events of a case after sequence number after.
func (c *Client) Events(ctx context.Context, caseID string, after int64, limit int) ([]signoff.Event, error) {
	var out struct {
		Events []signoff.Event `json:"events"`
	}
	path := fmt.Sprintf("%s?limit=%d&after=%d", Path("cases", caseID, "events"), limit, after)
	err := c.Do(ctx, http.MethodGet, path, nil, &out)
	return out.Events, err
}

// Cards reads the cards (gates and questions) of a case.
func (c *Client) Cards(ctx context.Context, caseID string) ([]signoff.Card, error) {
	var out struct {
		Cards []signoff.Card `json:"cards"`
	}
	err := c.Do(ctx, http.MethodGet, Path("cases", caseID, "cards"), nil, &out)
	return out.Cards, err
}

// Decisions reads a case's triage decisions.
func (c *Client) Decisions(ctx context.Context, caseID string) ([]signoff.Decision, error) {
	var out struct {
		Decisions []signoff.Decision `json:"decisions"`
	}
	err := c.Do(ctx, http.MethodGet, Path("cases", caseID, "triage"), nil, &out)
	return out.Decisions, err
}

// Decide answers a pending decision over exactly subjectDigest.
func (c *Client) Decide(ctx context.Context, decisionID, subjectDigest string, approve bool) error {
	in := map[string]any{"subject_digest": subjectDigest, "approve": approve}
	return c.Do(ctx, http.MethodPost, Path("decisions", decisionID, "decide"), in, nil)
}

// --- keys -------------------------------------------------------------

// RegisterKey registers an approval public key (PEM) for the token's actor.
func (c *Client) RegisterKey(ctx context.Context, publicKeyPEM string) (signoff.ApproverKey, error) {
	return call[signoff.ApproverKey](ctx, c, http.MethodPost, Path("keys"), map[string]string{"public_key": publicKeyPEM})
}

// ListKeys lists the approval keys the caller may see.
func (c *Client) ListKeys(ctx context.Context) ([]signoff.ApproverKey, error) {
	var out struct {
		Keys []signoff.ApproverKey `json:"keys"`
	}
	err := c.Do(ctx, http.MethodGet, Path("keys"), nil, &out)
	return out.Keys, err
}

// KeyRevocation is the answer to RevokeKey.
type KeyRevocation struct {
	Key             signoff.ApproverKey `json:"key"`
	VoidedApprovals int                 `json:"voided_approvals"`
}

// RevokeKey revokes an approval key by id.
func (c *Client) RevokeKey(ctx context.Context, keyID string) (KeyRevocation, error) {
	return call[KeyRevocation](ctx, c, http.MethodPost, Path("keys", keyID, "revoke"), nil)
}

// --- approvals, merge, candidates -----------------------------------------

// ApprovalCard reads a case's approval card as it came: a bug card or a
// change card (its "kind" says which), to be decoded strictly before
// anything is signed.
func (c *Client) ApprovalCard(ctx context.Context, caseID string) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodGet, Path("cases", caseID, "approval"), nil)
}

// ApprovalRequest is a signed approval (or rejection) envelope and how it
// was made.
type ApprovalRequest struct {
	Envelope json.RawMessage `json:"envelope"`
	Via      string          `json:"via"`
	Reason   string          `json:"reason,omitempty"`
}

// ApprovalResult is the server's answer to a posted approval.
type ApprovalResult struct {
	Approval signoff.Approval `json:"approval"`
	Case     signoff.Case     `json:"case"`
}

// Approve posts a signed envelope for a case.
func (c *Client) Approve(ctx context.Context, caseID string, in ApprovalRequest) (ApprovalResult, error) {
	return call[ApprovalResult](ctx, c, http.MethodPost, Path("cases", caseID, "approvals"), in)
}

// Merge merges an approved case's candidate.
func (c *Client) Merge(ctx context.Context, caseID string) (signoff.MergeRecord, error) {
	return call[signoff.MergeRecord](ctx, c, http.MethodPost, Path("cases", caseID, "merge"), nil)
}

// SubmitCandidate proposes a patch (a unified diff, UTF-8) as a case's
// candidate fix.
func (c *Client) SubmitCandidate(ctx context.Context, caseID, patch string) (signoff.Candidate, error) {
	return call[signoff.Candidate](ctx, c, http.MethodPost, Path("cases", caseID, "candidates"), map[string]string{"patch": patch})
}

// Reverify moves a case's candidate onto the current main and verifies it
// again.
func (c *Client) Reverify(ctx context.Context, caseID string) (signoff.Candidate, error) {
	return call[signoff.Candidate](ctx, c, http.MethodPost, Path("cases", caseID, "reverify"), nil)
}

// CandidateEvidence downloads a candidate's evidence bundle (tar.gz).
func (c *Client) CandidateEvidence(ctx context.Context, caseID, candidateID string) ([]byte, error) {
	return call[[]byte](ctx, c, http.MethodGet, Path("cases", caseID, "candidates", candidateID, "evidence"), nil)
}

// ChangeEvidence downloads a change case's evidence bundle (tar.gz) and
// the bundle digest the server sent with it ("" when it sent none).
func (c *Client) ChangeEvidence(ctx context.Context, caseID string) ([]byte, string, error) {
	b, h, err := c.Download(ctx, Path("cases", caseID, "change", "evidence"))
	if err != nil {
		return nil, "", err
	}
	want := h.Get("X-Signoff-Bundle-Digest")
	if want == "" {
		want = h.Get("X-Bundle-Digest")
	}
	return b, want, nil
}

// --- reproductions ----------------------------------------------------------

// Harness reads a case's reproduction (bugdesk.HarnessView) as it came.
func (c *Client) Harness(ctx context.Context, caseID string) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodGet, Path("cases", caseID, "harness"), nil)
}

// ReviewHarness posts a staff review (bugdesk.HarnessDecision) of a case's
// reproduction and decodes the answer ({"harness", "case"}) into out as Do
// does (nil discards it).
func (c *Client) ReviewHarness(ctx context.Context, caseID string, decision, out any) error {
	return c.Do(ctx, http.MethodPost, Path("cases", caseID, "harness", "review"), decision, out)
}

// --- reports and tracking (public: no token needed) ---------------------------

// Report is the answer to a bug report.
type Report struct {
	CaseID   string `json:"case_id"`
	Tracking struct {
		Token string `json:"token"`
	} `json:"tracking"`
}

// SubmitReport files a bug report on a project's public intake.
func (c *Client) SubmitReport(ctx context.Context, project string, report any) (Report, error) {
	return call[Report](ctx, c, http.MethodPost, Path("projects", project, "reports"), report)
}

// Track reads a reporter's tracking page (bugdesk.TrackView) as it came.
func (c *Client) Track(ctx context.Context, token string) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodGet, Path("track", token), nil)
}

// TrackDecision posts a reporter's answer (bugdesk.Answer) on a tracking
// page.
func (c *Client) TrackDecision(ctx context.Context, token string, answer any) error {
	return c.Do(ctx, http.MethodPost, Path("track", token, "decision"), answer, nil)
}

// --- repository settings --------------------------------------------------------

// Repo reads a project's repository settings as JSON.
func (c *Client) Repo(ctx context.Context, project string) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodGet, Path("projects", project, "repo"), nil)
}

// SetRepo replaces a project's repository settings (a JSON object, checked
// strictly by the server) and returns them as stored.
func (c *Client) SetRepo(ctx context.Context, project string, settings json.RawMessage) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodPut, Path("projects", project, "repo"), settings)
}

// --- changes -------------------------------------------------------------------

// ChangeRequest opens a change case.
type ChangeRequest struct {
	Title    string `json:"title"`
	Reason   string `json:"reason"`
	Incident string `json:"incident"`
	// Plan "builtin" drafts the plan at once with the builtin planner.
	Plan string `json:"plan,omitempty"`
}

// ChangeCreated is the answer to a change request.
type ChangeCreated struct {
	Case signoff.Case       `json:"case"`
	Loop signoff.ChangeLoop `json:"loop"`
	// PlannerError is the server's {code, detail} when the builtin
	// planner could not draft a plan for the request it opened.
	PlannerError *struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
	} `json:"planner_error,omitempty"`
}

// RequestChange opens a change case on a project.
func (c *Client) RequestChange(ctx context.Context, project string, in ChangeRequest) (ChangeCreated, error) {
	return call[ChangeCreated](ctx, c, http.MethodPost, Path("projects", project, "changes"), in)
}

// ChangePlanned is the answer to Plan.
type ChangePlanned struct {
	Case signoff.Case       `json:"case"`
	Loop signoff.ChangeLoop `json:"loop"`
}

// Plan drafts a change case's plan: proposal is {"builtin": true} or a
// proposal document (raw JSON bytes or a value to encode).
func (c *Client) Plan(ctx context.Context, caseID string, proposal any) (ChangePlanned, error) {
	return call[ChangePlanned](ctx, c, http.MethodPost, Path("cases", caseID, "plan"), proposal)
}

// Change reads a change case's view as it came.
func (c *Client) Change(ctx context.Context, caseID string) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodGet, Path("cases", caseID, "change"), nil)
}

// Execute runs an approved change and decodes the answer (a
// changedesk.Execution) into out as Do does.
func (c *Client) Execute(ctx context.Context, caseID string, out any) error {
	return c.Do(ctx, http.MethodPost, Path("cases", caseID, "execute"), map[string]string{}, out)
}

// Rollback opens a compensating change for an executed one and decodes the
// answer ({"case", "execution"}, the execution when it ran at once) into
// out as Do does.
func (c *Client) Rollback(ctx context.Context, caseID, reason string, out any) error {
	return c.Do(ctx, http.MethodPost, Path("cases", caseID, "rollback"), map[string]string{"reason": reason}, out)
}

// ChangePolicy reads the workspace's change policy.
func (c *Client) ChangePolicy(ctx context.Context) (signoff.ChangePolicy, error) {
	var out struct {
		Policy signoff.ChangePolicy `json:"policy"`
	}
	err := c.Do(ctx, http.MethodGet, Path("change-policy"), nil, &out)
	return out.Policy, err
}

// SetChangePolicy stores a new change policy (YAML) over expectedVersion.
func (c *Client) SetChangePolicy(ctx context.Context, yaml string, expectedVersion int64) (signoff.ChangePolicy, error) {
	var out struct {
		Policy signoff.ChangePolicy `json:"policy"`
	}
	in := map[string]any{"yaml": yaml, "expected_version": expectedVersion}
	err := c.Do(ctx, http.MethodPut, Path("change-policy"), in, &out)
	return out.Policy, err
}

// --- feature flags ----------------------------------------------------------------

// Flags lists a project's feature flags (in one environment when env is
// not empty) as JSON.
func (c *Client) Flags(ctx context.Context, project, env string) (json.RawMessage, error) {
	path := Path("projects", project, "flags")
	if env != "" {
		path += "?env=" + url.QueryEscape(env)
	}
	return call[json.RawMessage](ctx, c, http.MethodGet, path, nil)
}

// Flag reads one feature flag as JSON.
func (c *Client) Flag(ctx context.Context, project, env, key string) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodGet, Path("projects", project, "flags", env, key), nil)
}

// EmergencyFlag writes a flag at once, bypassing approval for a while, and
// decodes the answer (a changedesk.Execution) into out as Do does.
func (c *Client) EmergencyFlag(ctx context.Context, project, env, key string, value json.RawMessage, reason string, out any) error {
	in := map[string]any{"value": value, "reason": reason}
	return c.Do(ctx, http.MethodPost, Path("projects", project, "flags", env, key, "emergency"), in, out)
}

// --- outbox, channels and chat users -------------------------------------
//
// These answer with JSON as it came: the CLI prints it verbatim with --json
// and decodes it otherwise.

// Outbox lists outbox messages; query filters them (state, case, channel,
// limit).
func (c *Client) Outbox(ctx context.Context, query url.Values) (json.RawMessage, error) {
	path := Path("outbox")
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	return call[json.RawMessage](ctx, c, http.MethodGet, path, nil)
}

// OutboxMessage reads one outbox message and its delivery attempts.
func (c *Client) OutboxMessage(ctx context.Context, id string) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodGet, Path("outbox", id), nil)
}

// RetryOutbox sends a dead or failing outbox message again.
func (c *Client) RetryOutbox(ctx context.Context, id string) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodPost, Path("outbox", id, "retry"), nil)
}

// PutChannel creates or updates a notification channel; the answer is a
// signoff.Channel (secrets never come back).
func (c *Client) PutChannel(ctx context.Context, id string, channel any) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodPut, Path("channels", id), channel)
}

// Channels lists the notification channels.
func (c *Client) Channels(ctx context.Context) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodGet, Path("channels"), nil)
}

// PutChatUser maps a chat platform's user to an actor; the answer is a
// signoff.ChatUser.
func (c *Client) PutChatUser(ctx context.Context, user any) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodPut, Path("chat-users"), user)
}

// Keys lists the approval keys the caller may see, as JSON ({"keys": [...]});
// ListKeys decodes it.
func (c *Client) Keys(ctx context.Context) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodGet, Path("keys"), nil)
}

// RevokeKeyRaw is RevokeKey's answer as JSON, for callers that print it.
func (c *Client) RevokeKeyRaw(ctx context.Context, keyID string) (json.RawMessage, error) {
	return call[json.RawMessage](ctx, c, http.MethodPost, Path("keys", keyID, "revoke"), nil)
}

// call makes one request and decodes its answer into a new T. The answer
// is read after Do returns: `return out, c.Do(..., &out)` would leave the
// order of the two to the compiler.
func call[T any](ctx context.Context, c *Client, method, path string, in any) (T, error) {
	var out T
	err := c.Do(ctx, method, path, in, &out)
	return out, err
}
