package sqlstore

import (
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/identity"
)

// Limits of the bug loop's records, in bytes unless said otherwise.
const (
	maxLoopState     = 4 << 20 // a loop's state holds its candidates' diffs
	maxLoopEventJSON = 1 << 20 // one event's payload
	maxLoopEvents    = 64      // events per update
	maxLoopJobs      = 16      // jobs per update
	maxLoopConsume   = 16      // approvals consumed per update
	maxEnvelope      = 64 << 10
	maxPublicKeyPEM  = 4 << 10
	maxSmokeChecks   = 50
	maxPathGlobs     = 200
	maxArgv          = 64
	maxFixAttempts   = 20
)

// loopEventsReserved are the event types the store writes itself: an
// update may not pass one off as its own.
var loopEventsReserved = map[string]bool{
	"case.created": true, "case.transitioned": true, "loop.updated": true, "approval.recorded": true,
	"approvals.superseded": true, "key.registered": true, "deployment.received": true, "project.repo_settings": true,
	"key.revoked": true, "approvals.voided": true, "actor.disabled": true, "actor.enabled": true,
	eventAsked: true, "reporter.answered": true,
}

// ---- Repository settings ----

var (
	branchRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$`)
	keyIDRE     = regexp.MustCompile(`^[0-9a-f]{16}$`)
	commitRE    = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)
	deployIDRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$`)
	smokeMethod = map[string]bool{"GET": true, "POST": true, "PUT": true, "HEAD": true}
)

// checkBranch returns EINVALID unless b is a plain git branch name (the
// rules of git check-ref-format that matter here, and nothing that could
// be read as an option or a revision expression).
func checkBranch(b string) error {
	if !branchRE.MatchString(b) || b == "HEAD" || strings.Contains(b, "..") || strings.Contains(b, "//") ||
		strings.Contains(b, "/.") || strings.HasSuffix(b, "/") || strings.HasSuffix(b, ".") || strings.HasSuffix(b, ".lock") {
		return signoff.Errorf(signoff.EINVALID, "main_branch must be a plain git branch name such as main (letters, digits, '.', '_', '-', '/')")
	}
	return nil
}

// checkArgv returns EINVALID unless argv is a short command line of valid
// UTF-8 without NUL bytes whose program is named.
func checkArgv(what string, argv []string) error {
	if len(argv) == 0 {
		return nil
	}
	if len(argv) > maxArgv {
		return signoff.Errorf(signoff.EINVALID, "%s has more than %d arguments", what, maxArgv)
	}
	if strings.TrimSpace(argv[0]) == "" {
		return signoff.Errorf(signoff.EINVALID, "%s must start with the program to run", what)
	}
	for _, a := range argv {
		if !utf8.ValidString(a) || strings.IndexByte(a, 0) >= 0 || len(a) > 4096 {
			return signoff.Errorf(signoff.EINVALID, "%s arguments must be valid UTF-8 without NUL bytes, at most 4096 bytes each", what)
		}
	}
	return nil
}

// checkGlobs returns EINVALID unless globs are repository-relative paths.
func checkGlobs(what string, globs []string) error {
	if len(globs) > maxPathGlobs {
		return signoff.Errorf(signoff.EINVALID, "%s has more than %d entries", what, maxPathGlobs)
	}
	for _, g := range globs {
		if err := checkProse(what+" entry", g, true, 1024); err != nil {
			return err
		}
		if strings.HasPrefix(g, "/") || slices.Contains(strings.Split(g, "/"), "..") {
			return signoff.Errorf(signoff.EINVALID, "%s entries must be relative to the repository (no leading '/', no '..'): %q", what, g)
		}
	}
	return nil
}

// checkCloneURL allows what git should fetch from here: an absolute local
// path or an https, http, ssh, git or file URL without credentials.
func checkCloneURL(raw string) error {
	if raw == "" {
		return nil
	}
	if err := signoff.CheckText("url", raw, false, 2048); err != nil {
		return err
	}
	if filepath.IsAbs(raw) {
		return nil
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || strings.HasPrefix(raw, "-"):
		return signoff.Errorf(signoff.EINVALID, "url is not a valid URL or absolute path")
	case u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "ssh" && u.Scheme != "git" && u.Scheme != "file":
		return signoff.Errorf(signoff.EINVALID, "url must be an https, http, ssh, git or file URL, or an absolute path")
	case u.User != nil && u.Scheme != "ssh":
		return signoff.Errorf(signoff.EINVALID, "url must not carry credentials")
	}
	if _, has := u.User.Password(); has {
		return signoff.Errorf(signoff.EINVALID, "url must not carry a password")
	}
	return nil
}

func checkLiveURL(raw string) error {
	if raw == "" {
		return nil
	}
	if err := signoff.CheckText("live_url", raw, false, 2048); err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return signoff.Errorf(signoff.EINVALID, "live_url must be an http or https URL with a host and no credentials")
	}
	return nil
}

// checkWebhookSecret accepts Standard Webhooks secrets: "whsec_" and the
// base64 of at least 24 random bytes.
func checkWebhookSecret(secret string) error {
	const msg = `webhook_secret must be "whsec_" followed by the base64 of at least 24 bytes`
	body, ok := strings.CutPrefix(secret, "whsec_")
	if !ok || len(secret) > 1024 {
		return signoff.Errorf(signoff.EINVALID, msg)
	}
	raw, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		raw, err = base64.RawStdEncoding.DecodeString(body)
	}
	if err != nil || len(raw) < 24 {
		return signoff.Errorf(signoff.EINVALID, msg)
	}
	return nil
}

func checkRange(what string, v, lo, hi int) error {
	if v < lo || v > hi {
		return signoff.Errorf(signoff.EINVALID, "%s must be between %d and %d, not %d", what, lo, hi, v)
	}
	return nil
}

// checkRepoSettings validates settings as given; unset fields take their
// defaults, which are valid.
func checkRepoSettings(in signoff.RepoSettings) error {
	if strings.TrimSpace(in.Path) == "" {
		return signoff.Errorf(signoff.EINVALID, "path is required: the repository Signoff works in")
	}
	if err := checkProse("path", in.Path, true, 4096); err != nil {
		return err
	}
	if !filepath.IsAbs(in.Path) {
		return signoff.Errorf(signoff.EINVALID, "path must be absolute")
	}
	if err := checkCloneURL(in.URL); err != nil {
		return err
	}
	if in.MainBranch != "" {
		if err := checkBranch(in.MainBranch); err != nil {
			return err
		}
	}
	if err := checkArgv("test_command", in.TestCommand); err != nil {
		return err
	}
	if in.TestFormat != "" {
		if err := checkToken("test_format", in.TestFormat); err != nil {
			return err
		}
	}
	if err := checkGlobs("fix_paths", in.FixPaths); err != nil {
		return err
	}
	if err := checkGlobs("harness_paths", in.HarnessPaths); err != nil {
		return err
	}
	if err := checkLiveURL(in.LiveURL); err != nil {
		return err
	}
	if err := checkArgv("deploy_hook", in.DeployHook); err != nil {
		return err
	}
	d := in.WithDefaults()
	for _, r := range []struct {
		what        string
		v, min, max int
	}{
		{"max_fix_attempts", d.MaxFixAttempts, 1, maxFixAttempts},
		{"timeout_seconds", d.TimeoutSeconds, 1, 24 * 3600},
		{"runs", d.Runs, 1, 20},
		{"quorum", d.Quorum, 1, 10},
		{"approval_ttl_hours", d.ApprovalTTLHours, 1, 168},
		{"confirm_window_hours", d.ConfirmWindowHours, 1, 8760},
	} {
		if err := checkRange(r.what, r.v, r.min, r.max); err != nil {
			return err
		}
	}
	if len(in.Smoke) > maxSmokeChecks {
		return signoff.Errorf(signoff.EINVALID, "smoke has more than %d checks", maxSmokeChecks)
	}
	for i, sc := range in.Smoke {
		what := fmt.Sprintf("smoke[%d]", i)
		if err := signoff.CheckText(what+".name", sc.Name, false, 100); err != nil {
			return err
		}
		if !smokeMethod[sc.Method] {
			return signoff.Errorf(signoff.EINVALID, "%s.method must be GET, POST, PUT or HEAD", what)
		}
		if err := signoff.CheckText(what+".path", sc.Path, true, 2048); err != nil {
			return err
		}
		if !strings.HasPrefix(sc.Path, "/") || strings.HasPrefix(sc.Path, "//") {
			return signoff.Errorf(signoff.EINVALID, "%s.path must start with a single '/'", what)
		}
		if err := checkProse(what+".body", sc.Body, false, 64<<10); err != nil {
			return err
		}
		if sc.ExpectStatus != 0 && (sc.ExpectStatus < 100 || sc.ExpectStatus > 599) {
			return signoff.Errorf(signoff.EINVALID, "%s.expect_status must be an HTTP status (100 to 599), or 0 for 200", what)
		}
		if err := checkProse(what+".expect_body", sc.ExpectBody, false, 4096); err != nil {
			return err
		}
	}
	if in.WebhookSecret != "" {
		return checkWebhookSecret(in.WebhookSecret)
	}
	return nil
}

// readSettings is what every read returns: defaults filled, the secret
// reduced to whether there is one.
func readSettings(settings, secret string) (signoff.RepoSettings, error) {
	var s signoff.RepoSettings
	if err := json.Unmarshal([]byte(settings), &s); err != nil {
		return s, fmt.Errorf("repository settings: %w", err)
	}
	s = s.WithDefaults()
	s.WebhookSecret, s.HasWebhookSecret = "", secret != ""
	return s, nil
}

// GetRepoSettings implements signoff.BugLoopService.
func (s *DB) GetRepoSettings(ctx context.Context, by signoff.Actor, projectID string) (signoff.RepoSettings, error) {
	if by.Role == signoff.RoleReporter {
		return signoff.RepoSettings{}, signoff.Errorf(signoff.EFORBIDDEN, "reporters do not read repository settings")
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return signoff.RepoSettings{}, err
	}
	var settings, secret string
	err := s.db.QueryRowContext(ctx, `SELECT settings, webhook_secret FROM repo_settings WHERE project_id = $1 AND workspace_id = $2`,
		projectID, by.WorkspaceID).Scan(&settings, &secret)
	if errors.Is(err, sql.ErrNoRows) {
		return signoff.RepoSettings{}, signoff.Errorf(signoff.ENOTFOUND, "project %s has no repository settings", projectID)
	} else if err != nil {
		return signoff.RepoSettings{}, fmt.Errorf("get repository settings of %s: %w", projectID, err)
	}
	return readSettings(settings, secret)
}

// SetRepoSettings implements signoff.BugLoopService. Writes of one project
// are serialized on its row, so "keep the stored secret" never races.
func (s *DB) SetRepoSettings(ctx context.Context, by signoff.Actor, projectID string, in signoff.RepoSettings) (signoff.RepoSettings, error) {
	if by.Role != signoff.RoleOwner && !isServer(by) {
		return signoff.RepoSettings{}, signoff.Errorf(signoff.EFORBIDDEN, "only owners set repository settings, not role %s", by.Role)
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return signoff.RepoSettings{}, err
	}
	if err := checkRepoSettings(in); err != nil {
		return signoff.RepoSettings{}, err
	}
	stored := in
	stored.WebhookSecret, stored.HasWebhookSecret = "", false
	body, err := json.Marshal(stored)
	if err != nil {
		return signoff.RepoSettings{}, signoff.Errorf(signoff.EINVALID, "settings: %v", err)
	}
	var out signoff.RepoSettings
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		var pid string
		err := tx.QueryRowContext(ctx, `SELECT id FROM projects WHERE id = $1 AND workspace_id = $2`+s.d.ForUpdate, projectID, by.WorkspaceID).Scan(&pid)
		if errors.Is(err, sql.ErrNoRows) {
			return signoff.Errorf(signoff.ENOTFOUND, "project not found")
		} else if err != nil {
			return err
		}
		var old, oldSettings string
		err = tx.QueryRowContext(ctx, `SELECT webhook_secret, settings FROM repo_settings WHERE project_id = $1`, projectID).Scan(&old, &oldSettings)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		// Where the repository lives on this machine, where it is cloned
		// from and the deploy hook (a command run on the server) are the
		// server operator's configuration, set with database access; a
		// workspace owner over the API changes everything else.
		if !isServer(by) {
			var prev signoff.RepoSettings
			if oldSettings != "" {
				if err := json.Unmarshal([]byte(oldSettings), &prev); err != nil {
					return err
				}
			}
			if oldSettings == "" || prev.Path != in.Path || prev.URL != in.URL || !slices.Equal(prev.DeployHook, in.DeployHook) {
				return signoff.Errorf(signoff.EFORBIDDEN, "path, url and deploy_hook run on the server host: they are set by the server operator with database access (signoff repo bind --db), not over the API")
			}
		}
		secret, changed := old, false
		if in.WebhookSecret != "" {
			secret, changed = in.WebhookSecret, in.WebhookSecret != old
		}
		now := s.clock()
		if _, err := tx.ExecContext(ctx, `INSERT INTO repo_settings (project_id, workspace_id, settings, webhook_secret, updated_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (project_id) DO UPDATE SET settings = excluded.settings, webhook_secret = excluded.webhook_secret, updated_at = excluded.updated_at`,
			projectID, by.WorkspaceID, string(body), secret, micros(now)); err != nil {
			return err
		}
		if out, err = readSettings(string(body), secret); err != nil {
			return err
		}
		_, err = s.appendEvent(ctx, tx, by.WorkspaceID, "", "project.repo_settings", by.ID, map[string]any{
			"project_id": projectID, "settings": json.RawMessage(body),
			"webhook_secret_changed": changed, "has_webhook_secret": secret != "",
		})
		return err
	})
	if err != nil {
		return signoff.RepoSettings{}, fmt.Errorf("set repository settings of %s: %w", projectID, err)
	}
	return out, nil
}

// WebhookSecret implements signoff.BugLoopService. Every miss is the same
// ENOTFOUND: the caller is not authenticated yet.
func (s *DB) WebhookSecret(ctx context.Context, projectID string) (ws, secret string, err error) {
	notFound := signoff.Errorf(signoff.ENOTFOUND, "no webhook secret for this project")
	if !signoff.ValidID(signoff.PrefixProject, projectID) {
		return "", "", notFound
	}
	err = s.db.QueryRowContext(ctx, `SELECT workspace_id, webhook_secret FROM repo_settings WHERE project_id = $1`, projectID).Scan(&ws, &secret)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && secret == "") {
		return "", "", notFound
	} else if err != nil {
		return "", "", fmt.Errorf("webhook secret of %s: %w", projectID, err)
	}
	return ws, secret, nil
}

// ---- Loops ----

const loopColumns = `l.case_id, l.workspace_id, l.project_id, l.state, l.version, l.created_at, l.updated_at`

func scanLoop(sc scanner, l *signoff.BugLoop) error {
	var state string
	var ca, ua int64
	if err := sc.Scan(&l.CaseID, &l.WorkspaceID, &l.ProjectID, &state, &l.Version, &ca, &ua); err != nil {
		return err
	}
	l.CreatedAt, l.UpdatedAt = fromMicros(ca), fromMicros(ua)
	return decodeLoopState([]byte(state), &l.State)
}

// decodeLoopState reads stored state; lists are never null.
func decodeLoopState(b []byte, st *signoff.BugLoopState) error {
	if err := json.Unmarshal(b, st); err != nil {
		return fmt.Errorf("loop state: %w", err)
	}
	if st.Harnesses == nil {
		st.Harnesses = []signoff.HarnessRecord{}
	}
	if st.Candidates == nil {
		st.Candidates = []signoff.Candidate{}
	}
	return nil
}

// canAdvanceLoop reports whether by may write loops: the server, the
// people who run the desk, the reporter (for their own case, which
// visibleCase decides) and the agents that work bugs.
func canAdvanceLoop(by signoff.Actor) bool {
	switch by.Role {
	case signoff.RoleSystem, signoff.RoleOwner, signoff.RoleOperator, signoff.RoleReporter,
		signoff.RoleReproducer, signoff.RoleFixer, signoff.RoleReviewer, signoff.RoleRecorder:
		return true
	}
	return isServer(by)
}

// GetLoop implements signoff.BugLoopService.
func (s *DB) GetLoop(ctx context.Context, by signoff.Actor, caseID string) (signoff.BugLoop, error) {
	if by.Role == signoff.RoleReporter {
		return signoff.BugLoop{}, signoff.Errorf(signoff.EFORBIDDEN, "reporters do not read bug loops")
	}
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return signoff.BugLoop{}, err
	}
	return s.getLoop(ctx, s.db, by.WorkspaceID, caseID)
}

func (s *DB) getLoop(ctx context.Context, q queryer, ws, caseID string) (signoff.BugLoop, error) {
	var l signoff.BugLoop
	err := scanLoop(q.QueryRowContext(ctx, `SELECT `+loopColumns+` FROM bug_loops l WHERE l.case_id = $1 AND l.workspace_id = $2`, caseID, ws), &l)
	if errors.Is(err, sql.ErrNoRows) {
		return l, signoff.Errorf(signoff.ENOTFOUND, "case %s has no bug loop", caseID)
	} else if err != nil {
		return l, fmt.Errorf("get loop of %s: %w", caseID, err)
	}
	return l, nil
}

// ListLoops implements signoff.BugLoopService.
func (s *DB) ListLoops(ctx context.Context, by signoff.Actor, projectID string, states ...string) ([]signoff.BugLoop, error) {
	if by.Role == signoff.RoleReporter {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "reporters do not read bug loops")
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return nil, err
	}
	q, args, err := s.loopListQuery(ctx, bugLoops, loopColumns, by.WorkspaceID, projectID, states)
	if err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db, scanLoop, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list loops of %s: %w", projectID, err)
	}
	return out, nil
}

// checkLoopUpdate validates u before any transaction and returns the
// canonical state, its digest and the events' canonical payloads.
func checkLoopUpdate(u signoff.LoopUpdate) (state []byte, digest string, payloads []json.RawMessage, err error) {
	if err := checkUpdateHead(u.CaseID, u.Version, u.Note); err != nil {
		return nil, "", nil, err
	}
	if u.MaxFixAttempts < 0 || u.MaxFixAttempts > maxFixAttempts {
		return nil, "", nil, signoff.Errorf(signoff.EINVALID, "max_fix_attempts must be between 1 and %d (0 leaves it)", maxFixAttempts)
	}
	if err := checkConsumeIDs(u.Consume); err != nil {
		return nil, "", nil, err
	}
	if payloads, err = checkLoopEvents(u.Events, nil); err != nil {
		return nil, "", nil, err
	}
	if err := checkLoopJobs(u.Jobs); err != nil {
		return nil, "", nil, err
	}
	state, digest, err = encodeLoopState(u.State, maxLoopState)
	return state, digest, payloads, err
}

// AdvanceLoop implements signoff.BugLoopService. In one transaction it
// writes the loop (guarded by its version), sets the attempt limit,
// consumes the approvals, moves the case, appends the events and enqueues
// the jobs; any refusal leaves all of it undone. Locks are taken loop,
// case, approvals, ledger head: approvals are consumed before the
// transition appends to the ledger, so it never waits on an approval row
// while holding the head.
func (s *DB) AdvanceLoop(ctx context.Context, by signoff.Actor, u signoff.LoopUpdate) (signoff.BugLoop, signoff.Case, error) {
	if !canAdvanceLoop(by) {
		return signoff.BugLoop{}, signoff.Case{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not advance bug loops", by.Role)
	}
	st, digest, payloads, err := checkLoopUpdate(u)
	if err != nil {
		return signoff.BugLoop{}, signoff.Case{}, err
	}
	var loop signoff.BugLoop
	var c signoff.Case
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		if c, err = s.loopCase(ctx, tx, by, bugLoops, u.CaseID, u.Command); err != nil {
			return err
		}
		now := s.clock()
		loop = signoff.BugLoop{CaseID: c.ID, WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID, UpdatedAt: now}
		loop.Version, loop.CreatedAt, err = s.writeLoopRow(ctx, tx, bugLoops, c, st, u.Version, now, func(int64) error {
			return &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("loop of %s changed since version %d", c.ID, u.Version)}
		})
		if err != nil {
			return err
		}
		if err := decodeLoopState(st, &loop.State); err != nil {
			return err
		}
		// The attempt limit is set before the transition, so its guards
		// read it.
		if u.MaxFixAttempts > 0 && u.MaxFixAttempts != c.MaxFixAttempts {
			res, err := tx.ExecContext(ctx, `UPDATE cases SET max_fix_attempts = $1, updated_at = $2 WHERE id = $3 AND workspace_id = $4 AND version = $5`,
				u.MaxFixAttempts, micros(now), c.ID, c.WorkspaceID, c.Version)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil {
				return err
			} else if n == 0 {
				return s.caseMoved(ctx, tx, c)
			}
			c.MaxFixAttempts, c.UpdatedAt = u.MaxFixAttempts, now
		}
		// In the order given, after the loop row (unlike the change
		// loop): see the lock order above.
		for _, id := range u.Consume {
			if ok, err := s.markApprovalConsumed(ctx, tx, c, id, now); err != nil {
				return err
			} else if !ok {
				return &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("approval %s is expired, superseded or already used", id)}
			}
		}
		if c, err = s.applyLoopCommand(ctx, tx, by, c, u.Command, u.Note); err != nil {
			return err
		}
		evs := appendLoopEvents(make([]EventInput, 0, len(u.Events)+1), c.ID, by.ID, u.Events, payloads)
		summary := loopSummary(loop.Version, digest, by, u.Command, c.State, u.Consume, u.Jobs)
		summary["round"] = loop.State.Round
		if u.MaxFixAttempts > 0 {
			summary["max_fix_attempts"] = c.MaxFixAttempts
		}
		evs = append(evs, EventInput{CaseID: c.ID, Type: "loop.updated", ActorID: by.ID, Payload: summary})
		return s.recordLoopUpdate(ctx, tx, c.WorkspaceID, evs, u.Jobs)
	})
	if err != nil {
		return signoff.BugLoop{}, signoff.Case{}, fmt.Errorf("advance loop of %s: %w", u.CaseID, err)
	}
	return loop, c, nil
}

// ---- Approver keys ----

const keyColumns = `id, workspace_id, actor_id, public_key, created_at, revoked_at`

func scanKey(sc scanner, k *signoff.ApproverKey) error {
	var ca int64
	var ra sql.NullInt64
	if err := sc.Scan(&k.ID, &k.WorkspaceID, &k.ActorID, &k.PublicKey, &ca, &ra); err != nil {
		return err
	}
	k.CreatedAt, k.RevokedAt = fromMicros(ca), timePtr(ra)
	return nil
}

// parsePublicKeyPEM reads one PEM "PUBLIC KEY" block holding an Ed25519
// key, as identity.EncodePublicKey writes it.
func parsePublicKeyPEM(s string) (ed25519.PublicKey, error) {
	if len(s) > maxPublicKeyPEM {
		return nil, signoff.Errorf(signoff.EINVALID, "public key is larger than %d bytes", maxPublicKeyPEM)
	}
	blk, rest := pem.Decode([]byte(s))
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return nil, signoff.Errorf(signoff.EINVALID, `public key must be a PEM "PUBLIC KEY" block`)
	}
	if strings.TrimSpace(string(rest)) != "" {
		return nil, signoff.Errorf(signoff.EINVALID, "public key is followed by other data: send one key")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, signoff.Errorf(signoff.EINVALID, "public key does not parse")
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, signoff.Errorf(signoff.EINVALID, "public key must be an Ed25519 key")
	}
	return pub, nil
}

// RegisterKey implements signoff.BugLoopService. Only people who may
// approve register keys, each for themselves: never an agent, and never
// the CLI, which acts for no one person.
func (s *DB) RegisterKey(ctx context.Context, by signoff.Actor, publicKeyPEM string) (signoff.ApproverKey, error) {
	if (by.Role != signoff.RoleOwner && by.Role != signoff.RoleOperator) || isServer(by) {
		return signoff.ApproverKey{}, signoff.Errorf(signoff.EFORBIDDEN, "only owners and operators register approval keys, each for themselves")
	}
	pub, err := parsePublicKeyPEM(publicKeyPEM)
	if err != nil {
		return signoff.ApproverKey{}, err
	}
	enc, err := identity.EncodePublicKey(pub)
	if err != nil {
		return signoff.ApproverKey{}, err
	}
	k := signoff.ApproverKey{ID: identity.KeyID(pub), WorkspaceID: by.WorkspaceID, ActorID: by.ID, PublicKey: string(enc), CreatedAt: s.clock()}
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		// A key id is unique within its workspace only, so this names
		// nothing of another workspace's.
		switch old, err := s.getKey(ctx, tx, k.WorkspaceID, k.ID, ""); {
		case err == nil && old.RevokedAt != nil:
			return signoff.Errorf(signoff.ECONFLICT, "key %s was revoked in this workspace and cannot be registered again: create a new key", k.ID)
		case err == nil:
			return signoff.Errorf(signoff.ECONFLICT, "key %s is already registered", k.ID)
		case signoff.ErrorCode(err) != signoff.ENOTFOUND:
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO approver_keys (`+keyColumns+`) VALUES ($1, $2, $3, $4, $5, NULL)`,
			k.ID, k.WorkspaceID, k.ActorID, k.PublicKey, micros(k.CreatedAt)); err != nil {
			if s.d.IsUnique(err) {
				return signoff.Errorf(signoff.ECONFLICT, "key %s is already registered", k.ID)
			}
			return err
		}
		_, err := s.appendEvent(ctx, tx, k.WorkspaceID, "", "key.registered", by.ID, map[string]any{"key_id": k.ID, "actor_id": k.ActorID})
		return err
	})
	if err != nil {
		return signoff.ApproverKey{}, fmt.Errorf("register key: %w", err)
	}
	return k, nil
}

// GetKey implements signoff.BugLoopService.
func (s *DB) GetKey(ctx context.Context, ws, keyID string) (signoff.ApproverKey, error) {
	if !keyIDRE.MatchString(keyID) {
		return signoff.ApproverKey{}, signoff.Errorf(signoff.EINVALID, "invalid key id")
	}
	return s.getKey(ctx, s.db, ws, keyID, "")
}

// getKey reads a key of ws; lock is "" or the dialect's ForUpdate.
func (s *DB) getKey(ctx context.Context, q queryer, ws, keyID, lock string) (signoff.ApproverKey, error) {
	var k signoff.ApproverKey
	err := scanKey(q.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM approver_keys WHERE workspace_id = $1 AND id = $2`+lock, ws, keyID), &k)
	if errors.Is(err, sql.ErrNoRows) {
		return k, signoff.Errorf(signoff.ENOTFOUND, "key not found")
	} else if err != nil {
		return k, fmt.Errorf("get key %s: %w", keyID, err)
	}
	return k, nil
}

// ListKeys implements signoff.BugLoopService: owners and the server see
// every key of the workspace, other people their own.
func (s *DB) ListKeys(ctx context.Context, by signoff.Actor) ([]signoff.ApproverKey, error) {
	if by.Role.IsAgent() || by.Role == signoff.RoleReporter {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "role %s has no approval keys", by.Role)
	}
	q, args := `SELECT `+keyColumns+` FROM approver_keys WHERE workspace_id = $1 AND actor_id = $2 ORDER BY created_at, id`, []any{by.WorkspaceID, by.ID}
	if by.Role == signoff.RoleOwner || isServer(by) {
		q, args = `SELECT `+keyColumns+` FROM approver_keys WHERE workspace_id = $1 ORDER BY created_at, id`, []any{by.WorkspaceID}
	}
	out, err := queryAll(ctx, s.db, scanKey, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	return out, nil
}

// ---- Approvals ----

const approvalColumns = `id, workspace_id, case_id, subject_digest, decision, approver_id, key_id, nonce, policy_digest, issued_at, expires_at, envelope, via, status, created_at, consumed_at`

func scanApproval(sc scanner, a *signoff.Approval) error {
	var envelope string
	var ia, ea, ca int64
	var co sql.NullInt64
	if err := sc.Scan(&a.ID, &a.WorkspaceID, &a.CaseID, &a.SubjectDigest, &a.Decision, &a.ApproverID, &a.KeyID, &a.Nonce,
		&a.PolicyDigest, &ia, &ea, &envelope, &a.Via, &a.Status, &ca, &co); err != nil {
		return err
	}
	a.IssuedAt, a.ExpiresAt, a.CreatedAt, a.ConsumedAt = fromMicros(ia), fromMicros(ea), fromMicros(ca), timePtr(co)
	a.Envelope = json.RawMessage(envelope)
	return nil
}

func checkApproval(a signoff.Approval) error {
	if err := signoff.CheckID("case", signoff.PrefixCase, a.CaseID); err != nil {
		return err
	}
	if err := checkDigest("subject_digest", a.SubjectDigest); err != nil {
		return err
	}
	if err := checkToken("decision", a.Decision); err != nil {
		return err
	}
	if err := signoff.CheckID("approver", signoff.PrefixActor, a.ApproverID); err != nil {
		return err
	}
	if !keyIDRE.MatchString(a.KeyID) {
		return signoff.Errorf(signoff.EINVALID, "invalid key id")
	}
	if err := checkProse("nonce", a.Nonce, true, 256); err != nil {
		return err
	}
	if a.PolicyDigest != "" {
		if err := checkDigest("policy_digest", a.PolicyDigest); err != nil {
			return err
		}
	}
	if a.IssuedAt.IsZero() || !a.ExpiresAt.After(a.IssuedAt) {
		return signoff.Errorf(signoff.EINVALID, "an approval needs an issue time and a later expiry")
	}
	if len(a.Envelope) == 0 || len(a.Envelope) > maxEnvelope || !json.Valid(a.Envelope) {
		return signoff.Errorf(signoff.EINVALID, "envelope must be JSON of at most %d bytes", maxEnvelope)
	}
	return checkToken("via", a.Via)
}

// RecordApproval implements signoff.BugLoopService. The server records
// approvals it verified; an approver may record their own. The approver
// must be a person who may approve and the key theirs, registered and not
// revoked.
func (s *DB) RecordApproval(ctx context.Context, by signoff.Actor, a signoff.Approval) (signoff.Approval, error) {
	if !isServer(by) && (by.ID != a.ApproverID || (by.Role != signoff.RoleOwner && by.Role != signoff.RoleOperator)) {
		return signoff.Approval{}, signoff.Errorf(signoff.EFORBIDDEN, "approvals are recorded by the server or by the approver")
	}
	if err := checkApproval(a); err != nil {
		return signoff.Approval{}, err
	}
	now := s.clock()
	if !a.ExpiresAt.After(now) {
		return signoff.Approval{}, signoff.Errorf(signoff.EINVALID, "approval expired at %s", a.ExpiresAt.UTC().Format(time.RFC3339))
	}
	a.ID, a.WorkspaceID, a.Status, a.CreatedAt, a.ConsumedAt = signoff.NewID(signoff.PrefixApproval), by.WorkspaceID, signoff.ApprovalValid, now, nil
	a.IssuedAt, a.ExpiresAt = a.IssuedAt.UTC().Truncate(time.Microsecond), a.ExpiresAt.UTC().Truncate(time.Microsecond)
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		c, err := s.getCase(ctx, tx, a.WorkspaceID, a.CaseID)
		if err != nil {
			return err
		}
		if c.Kind == signoff.KindChange {
			if err := s.checkApprovalPolicy(ctx, tx, a); err != nil {
				return err
			}
		}
		// The approver's and the key's rows are locked until commit, so a
		// concurrent disable or revoke either sees this approval (and voids
		// it) or is seen by it (and it is refused).
		approver, err := s.lockActor(ctx, tx, a.WorkspaceID, a.ApproverID)
		if signoff.ErrorCode(err) == signoff.ENOTFOUND {
			return signoff.Errorf(signoff.EINVALID, "approver_id does not name an actor of this workspace")
		} else if err != nil {
			return err
		}
		if (approver.Role != signoff.RoleOwner && approver.Role != signoff.RoleOperator) || approver.DisabledAt != nil {
			return signoff.Errorf(signoff.EFORBIDDEN, "actor %s may not approve", a.ApproverID)
		}
		k, err := s.getKey(ctx, tx, a.WorkspaceID, a.KeyID, s.d.ForUpdate)
		switch {
		case signoff.ErrorCode(err) == signoff.ENOTFOUND:
			return signoff.Errorf(signoff.EINVALID, "key %s is not registered in this workspace", a.KeyID)
		case err != nil:
			return err
		case k.ActorID != a.ApproverID:
			return signoff.Errorf(signoff.EINVALID, "key %s is not the approver's", a.KeyID)
		case k.RevokedAt != nil:
			return signoff.Errorf(signoff.EINVALID, "key %s is revoked", a.KeyID)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO approvals (`+approvalColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, NULL)`,
			a.ID, a.WorkspaceID, a.CaseID, a.SubjectDigest, a.Decision, a.ApproverID, a.KeyID, a.Nonce, a.PolicyDigest,
			micros(a.IssuedAt), micros(a.ExpiresAt), string(a.Envelope), a.Via, a.Status, micros(a.CreatedAt)); err != nil {
			if s.d.IsUnique(err) {
				return signoff.Errorf(signoff.ECONFLICT, "approval nonce already used")
			}
			return err
		}
		_, err = s.appendEvent(ctx, tx, a.WorkspaceID, a.CaseID, "approval.recorded", by.ID, map[string]any{
			"approval_id": a.ID, "subject_digest": a.SubjectDigest, "decision": a.Decision, "approver_id": a.ApproverID,
			"key_id": a.KeyID, "nonce": a.Nonce, "policy_digest": a.PolicyDigest, "issued_at": a.IssuedAt.Format(time.RFC3339Nano),
			"expires_at": a.ExpiresAt.Format(time.RFC3339Nano), "via": a.Via, "envelope_sha256": sha256Hex(a.Envelope),
		})
		return err
	})
	if err != nil {
		return signoff.Approval{}, fmt.Errorf("record approval of %s: %w", a.CaseID, err)
	}
	return a, nil
}

// checkApprovalPolicy refuses an approval of a change case made under a
// policy that is not the one in force. The policy row is locked until
// commit, so a concurrent policy write either comes first (and this
// approval, checked by the desk under the old policy, is refused) or
// after (and voids it with the others): an approval can never slip in
// between and count again once the old policy is put back.
func (s *DB) checkApprovalPolicy(ctx context.Context, tx *sql.Tx, a signoff.Approval) error {
	var cur string
	err := tx.QueryRowContext(ctx, `SELECT digest FROM change_policies WHERE workspace_id = $1`+s.d.ForUpdate, a.WorkspaceID).Scan(&cur)
	if errors.Is(err, sql.ErrNoRows) {
		cur, err = signoff.EmptyChangePolicyDigest, nil
	}
	if err != nil {
		return fmt.Errorf("change policy: %w", err)
	}
	if a.PolicyDigest != cur {
		return signoff.Errorf(signoff.ECONFLICT, "the change policy changed (it is now %s, the approval names %s): the approval is not recorded; read the card again and sign that", shortHex(cur), shortHex(a.PolicyDigest))
	}
	return nil
}

func shortHex(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}

// ListApprovals implements signoff.BugLoopService.
func (s *DB) ListApprovals(ctx context.Context, by signoff.Actor, caseID string) ([]signoff.Approval, error) {
	if by.Role == signoff.RoleReporter {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "reporters do not read approvals")
	}
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return nil, err
	}
	if _, err := s.getCase(ctx, s.db, by.WorkspaceID, caseID); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db, scanApproval, `SELECT `+approvalColumns+` FROM approvals WHERE workspace_id = $1 AND case_id = $2 ORDER BY created_at, id`,
		by.WorkspaceID, caseID)
	if err != nil {
		return nil, fmt.Errorf("list approvals of %s: %w", caseID, err)
	}
	return out, nil
}

// SupersedeApprovals implements signoff.BugLoopService. An empty keep
// supersedes every valid approval of the case.
func (s *DB) SupersedeApprovals(ctx context.Context, by signoff.Actor, caseID, keep string) (int, error) {
	if !canIssue(by) && !isServer(by) {
		return 0, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not supersede approvals", by.Role)
	}
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return 0, err
	}
	if keep != "" {
		if err := checkDigest("keep", keep); err != nil {
			return 0, err
		}
	}
	var n int
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		c, err := s.getCase(ctx, tx, by.WorkspaceID, caseID)
		if err != nil {
			return err
		}
		ids, err := queryAll(ctx, tx, scanString, `UPDATE approvals SET status = 'superseded'
			WHERE workspace_id = $1 AND case_id = $2 AND status = 'valid' AND subject_digest <> $3 RETURNING id`, c.WorkspaceID, c.ID, keep)
		if err != nil {
			return err
		}
		if n = len(ids); n == 0 {
			return nil
		}
		slices.Sort(ids)
		_, err = s.appendEvent(ctx, tx, c.WorkspaceID, c.ID, "approvals.superseded", by.ID, map[string]any{
			"count": n, "keep": keep, "approval_ids": ids,
		})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("supersede approvals of %s: %w", caseID, err)
	}
	return n, nil
}

// ---- Deployments ----

const deploymentColumns = `id, workspace_id, project_id, commit_sha, environment, url, source, received_at`

func scanDeployment(sc scanner, d *signoff.Deployment) error {
	var at int64
	if err := sc.Scan(&d.ID, &d.WorkspaceID, &d.ProjectID, &d.Commit, &d.Environment, &d.URL, &d.Source, &at); err != nil {
		return err
	}
	d.ReceivedAt = fromMicros(at)
	return nil
}

func checkDeployment(d signoff.Deployment) error {
	if err := signoff.CheckID("project", signoff.PrefixProject, d.ProjectID); err != nil {
		return err
	}
	if d.WorkspaceID != "" {
		if err := signoff.CheckID("workspace", signoff.PrefixWorkspace, d.WorkspaceID); err != nil {
			return err
		}
	}
	if !deployIDRE.MatchString(d.ID) {
		return signoff.Errorf(signoff.EINVALID, "deployment id must be 1 to 200 of letters, digits, '_', '.', ':', '-'")
	}
	if !commitRE.MatchString(d.Commit) {
		return signoff.Errorf(signoff.EINVALID, "commit must be a full lower-case hex commit id (40 or 64 digits)")
	}
	if err := signoff.CheckText("environment", d.Environment, true, 100); err != nil {
		return err
	}
	if err := signoff.CheckText("url", d.URL, false, 2048); err != nil {
		return err
	}
	if d.Source != "webhook" && d.Source != "deploy_hook" {
		return signoff.Errorf(signoff.EINVALID, "source must be webhook or deploy_hook")
	}
	return nil
}

// RecordDeployment implements signoff.BugLoopService. The caller proved
// the delivery (a webhook signature, or the server's own deploy hook).
func (s *DB) RecordDeployment(ctx context.Context, d signoff.Deployment) (signoff.Deployment, bool, error) {
	if err := checkDeployment(d); err != nil {
		return signoff.Deployment{}, false, err
	}
	if d.ReceivedAt.IsZero() {
		d.ReceivedAt = s.clock()
	}
	d.ReceivedAt = d.ReceivedAt.UTC().Truncate(time.Microsecond)
	created := false
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		var ws string
		err := tx.QueryRowContext(ctx, `SELECT workspace_id FROM projects WHERE id = $1`, d.ProjectID).Scan(&ws)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && d.WorkspaceID != "" && d.WorkspaceID != ws) {
			return signoff.Errorf(signoff.ENOTFOUND, "project not found")
		} else if err != nil {
			return err
		}
		d.WorkspaceID = ws
		res, err := tx.ExecContext(ctx, `INSERT INTO deployments (`+deploymentColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
			ON CONFLICT (project_id, id) DO NOTHING`, d.ID, d.WorkspaceID, d.ProjectID, d.Commit, d.Environment, d.URL, d.Source, micros(d.ReceivedAt))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return scanDeployment(tx.QueryRowContext(ctx, `SELECT `+deploymentColumns+` FROM deployments WHERE project_id = $1 AND id = $2`, d.ProjectID, d.ID), &d)
		}
		created = true
		_, err = s.appendEvent(ctx, tx, d.WorkspaceID, "", "deployment.received", systemActorID, map[string]any{
			"deployment_id": d.ID, "project_id": d.ProjectID, "commit": d.Commit, "environment": d.Environment,
			"url": d.URL, "source": d.Source, "received_at": d.ReceivedAt.Format(time.RFC3339Nano),
		})
		if err != nil {
			return err
		}
		// The reconciliation exists exactly when the deployment does.
		return s.enqueue(ctx, tx, signoff.ReconcileJob{WorkspaceID: d.WorkspaceID, ProjectID: d.ProjectID, Cause: "deployment:" + d.ID})
	})
	if err != nil {
		return signoff.Deployment{}, false, fmt.Errorf("record deployment %s: %w", d.ID, err)
	}
	return d, created, nil
}

// ListDeployments implements signoff.BugLoopService.
func (s *DB) ListDeployments(ctx context.Context, by signoff.Actor, projectID string, limit int) ([]signoff.Deployment, error) {
	if by.Role == signoff.RoleReporter {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "reporters do not read deployments")
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return nil, err
	}
	if _, err := s.getProject(ctx, s.db, by.WorkspaceID, projectID); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db, scanDeployment, `SELECT `+deploymentColumns+` FROM deployments WHERE workspace_id = $1 AND project_id = $2
		ORDER BY received_at DESC, id DESC LIMIT $3`, by.WorkspaceID, projectID, clampLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("list deployments of %s: %w", projectID, err)
	}
	return out, nil
}

// ResolveTracking implements signoff.BugLoopService.
func (s *DB) ResolveTracking(ctx context.Context, secret string) (ws, caseID, reporterID string, err error) {
	return s.resolveLink(ctx, s.db, secret)
}
