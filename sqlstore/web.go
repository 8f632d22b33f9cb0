package sqlstore

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/workflow"
)

// The web UI's storage: browser sessions, one-time sign-in links, and the
// desk's case list (cases with their ticket's severity and owner, searchable
// by title). Sessions and links are stored by the SHA-256 of their secret,
// as tokens are.

// WebSession is a person's browser session (signoff.WebSession).
type WebSession = signoff.WebSession

// LoginLinkPrefix starts every one-time sign-in code
// (signoff.LoginLinkPrefix).
const LoginLinkPrefix = signoff.LoginLinkPrefix

// secretBytes is the randomness of a session secret, a CSRF token and a
// sign-in code: 256 bits.
const secretBytes = 32

var (
	errNoSession = signoff.Errorf(signoff.EUNAUTHORIZED, "not signed in, or the session has ended")
	errBadLink   = signoff.Errorf(signoff.EUNAUTHORIZED, "this sign-in link is unknown, expired or already used")
)

// webRoles are the roles that may hold a web session: the people who run
// and watch the desk. Agents have their API and MCP; reporters have their
// tracking link.
func webRole(r signoff.Role) bool {
	return r == signoff.RoleOwner || r == signoff.RoleOperator || r == signoff.RoleViewer
}

func errWebRole(r signoff.Role) error {
	return signoff.Errorf(signoff.EFORBIDDEN, "role %s does not sign in to the web UI: it is for owners, operators and viewers", r)
}

// newWebSecret returns prefix plus 256 random bits in URL-safe base64.
func newWebSecret(prefix string) string {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		panic("sqlstore: crypto/rand failed: " + err.Error())
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// webSecretShaped reports whether s could be a secret made by
// newWebSecret(prefix), so that junk never reaches a query.
func webSecretShaped(prefix, s string) bool {
	body, ok := strings.CutPrefix(s, prefix)
	if !ok || len(body) != base64.RawURLEncoding.EncodedLen(secretBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(body)
	return err == nil
}

func secretHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// SignIn opens a web session for the holder of an API token. The session
// lasts ttl, and ends early when the token is revoked or expires. Returns
// EUNAUTHORIZED for any bad token (as Authenticate) and EFORBIDDEN for a
// role that does not use the web UI (agents, reporters).
func (s *DB) SignIn(ctx context.Context, token string, ttl time.Duration) (string, WebSession, error) {
	a, err := s.Authenticate(ctx, token)
	if err != nil {
		return "", WebSession{}, err
	}
	if !webRole(a.Role) {
		return "", WebSession{}, errWebRole(a.Role)
	}
	tokenID, _ := identity.ParseToken(token)
	var secret string
	var sess WebSession
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		secret, sess, err = s.openWebSession(ctx, tx, a, tokenID, ttl)
		return err
	})
	if err != nil {
		return "", WebSession{}, fmt.Errorf("sign in: %w", err)
	}
	return secret, sess, nil
}

// SignInWithLink redeems a one-time sign-in link and opens a web session
// of ttl for its person, in one transaction: a link opens one session at
// most. Returns EUNAUTHORIZED for an unknown, expired or used link, or a
// disabled person.
func (s *DB) SignInWithLink(ctx context.Context, code string, ttl time.Duration) (string, WebSession, error) {
	if !webSecretShaped(LoginLinkPrefix, code) {
		return "", WebSession{}, errBadLink
	}
	var secret string
	var sess WebSession
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		now := s.clock()
		var ws, actorID string
		err := tx.QueryRowContext(ctx, `SELECT workspace_id, actor_id FROM web_login_links
			WHERE code_sha256 = $1 AND used_at IS NULL AND expires_at > $2`, secretHash(code), micros(now)).Scan(&ws, &actorID)
		if errors.Is(err, sql.ErrNoRows) {
			return errBadLink
		} else if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE web_login_links SET used_at = $1 WHERE code_sha256 = $2 AND used_at IS NULL`, micros(now), secretHash(code))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return errBadLink // another request redeemed it first
		}
		a, err := s.getActor(ctx, tx, ws, actorID)
		if err != nil || a.DisabledAt != nil {
			return errBadLink
		}
		if !webRole(a.Role) {
			return errWebRole(a.Role)
		}
		secret, sess, err = s.openWebSession(ctx, tx, a, "", ttl)
		return err
	})
	if err != nil {
		return "", WebSession{}, fmt.Errorf("sign in with link: %w", err)
	}
	return secret, sess, nil
}

// openWebSession stores a new session for a inside tx and sweeps the
// sessions that have run out.
func (s *DB) openWebSession(ctx context.Context, tx *sql.Tx, a signoff.Actor, tokenID string, ttl time.Duration) (string, WebSession, error) {
	if ttl <= 0 {
		return "", WebSession{}, signoff.Errorf(signoff.EINVALID, "a session needs a positive lifetime")
	}
	now := s.clock()
	secret := newWebSecret("")
	sess := WebSession{Actor: a, CSRF: newWebSecret(""), CreatedAt: now, ExpiresAt: now.Add(ttl).Truncate(time.Microsecond)}
	if _, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE expires_at <= $1`, micros(now)); err != nil {
		return "", WebSession{}, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO web_sessions (secret_sha256, workspace_id, actor_id, token_id, csrf, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, secretHash(secret), a.WorkspaceID, a.ID, tokenID, sess.CSRF, micros(now), micros(sess.ExpiresAt)); err != nil {
		return "", WebSession{}, err
	}
	return secret, sess, nil
}

// WebSession resolves a session secret to its session, checked now: the
// session has not expired or been ended, its person is not disabled and,
// for a session opened with a token, the token still works. Every failure
// is the same EUNAUTHORIZED.
func (s *DB) WebSession(ctx context.Context, secret string) (WebSession, error) {
	if !webSecretShaped("", secret) {
		return WebSession{}, errNoSession
	}
	var sess WebSession
	var created, expires, actorAt int64
	var tokenID, role string
	var tokFound sql.NullString
	var tokExp, tokRev, disabled sql.NullInt64
	a := &sess.Actor
	err := s.db.QueryRowContext(ctx, `SELECT ws.csrf, ws.created_at, ws.expires_at, ws.token_id, t.id, t.expires_at, t.revoked_at,
		a.id, a.workspace_id, a.name, a.role, a.created_at, a.disabled_at
		FROM web_sessions ws JOIN actors a ON a.id = ws.actor_id LEFT JOIN tokens t ON t.id = ws.token_id
		WHERE ws.secret_sha256 = $1`, secretHash(secret)).Scan(&sess.CSRF, &created, &expires, &tokenID, &tokFound, &tokExp, &tokRev,
		&a.ID, &a.WorkspaceID, &a.Name, &role, &actorAt, &disabled)
	if errors.Is(err, sql.ErrNoRows) {
		return WebSession{}, errNoSession
	} else if err != nil {
		return WebSession{}, fmt.Errorf("web session: %w", err)
	}
	a.Role, a.CreatedAt, a.DisabledAt = signoff.Role(role), fromMicros(actorAt), timePtr(disabled)
	sess.CreatedAt, sess.ExpiresAt = fromMicros(created), fromMicros(expires)
	now := s.now()
	switch {
	case !now.Before(sess.ExpiresAt), a.DisabledAt != nil, !webRole(a.Role):
		return WebSession{}, errNoSession
	case tokenID != "" && (!tokFound.Valid || tokRev.Valid || (tokExp.Valid && !now.Before(fromMicros(tokExp.Int64)))):
		return WebSession{}, errNoSession
	}
	return sess, nil
}

// SignOut ends the session of secret. Ending one that is unknown or over
// already is not an error.
func (s *DB) SignOut(ctx context.Context, secret string) error {
	if !webSecretShaped("", secret) {
		return nil
	}
	return s.InTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE secret_sha256 = $1`, secretHash(secret))
		return err
	})
}

// LoginLink is a one-time sign-in link as issued; the code itself is
// returned once and only its SHA-256 is stored.
type LoginLink struct {
	Actor     signoff.Actor `json:"actor"`
	ExpiresAt time.Time     `json:"expires_at"`
}

// CreateLoginLink issues a one-time sign-in link for a person (owner,
// operator or viewer) valid for ttl, and returns its code. It is a
// bootstrap operation for whoever has database access (signoff
// login-link), recorded on the person's workspace ledger as done by the
// CLI; the code never enters the ledger. Returns ENOTFOUND for an unknown
// actor, EFORBIDDEN for a role that does not use the web UI or a disabled
// person.
func (s *DB) CreateLoginLink(ctx context.Context, actorID string, ttl time.Duration) (string, LoginLink, error) {
	if err := signoff.CheckID("actor", signoff.PrefixActor, actorID); err != nil {
		return "", LoginLink{}, err
	}
	if ttl <= 0 {
		return "", LoginLink{}, signoff.Errorf(signoff.EINVALID, "a sign-in link needs a positive lifetime")
	}
	code := newWebSecret(LoginLinkPrefix)
	var link LoginLink
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		var a signoff.Actor
		err := scanActor(tx.QueryRowContext(ctx, `SELECT `+actorColumns+` FROM actors WHERE id = $1`, actorID), &a)
		if errors.Is(err, sql.ErrNoRows) {
			return signoff.Errorf(signoff.ENOTFOUND, "actor not found")
		} else if err != nil {
			return err
		}
		switch {
		case !webRole(a.Role):
			return errWebRole(a.Role)
		case a.DisabledAt != nil:
			return signoff.Errorf(signoff.EFORBIDDEN, "actor %s is disabled", a.ID)
		}
		now := s.clock()
		link = LoginLink{Actor: a, ExpiresAt: now.Add(ttl).Truncate(time.Microsecond)}
		if _, err := tx.ExecContext(ctx, `INSERT INTO web_login_links (code_sha256, workspace_id, actor_id, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
			secretHash(code), a.WorkspaceID, a.ID, micros(now), micros(link.ExpiresAt)); err != nil {
			return err
		}
		_, err = s.appendEvent(ctx, tx, a.WorkspaceID, "", "login_link.created", cliActorID, map[string]any{
			"actor_id": a.ID, "expires_at": link.ExpiresAt.Format(time.RFC3339)})
		return err
	})
	if err != nil {
		return "", LoginLink{}, fmt.Errorf("create login link for %s: %w", actorID, err)
	}
	return code, link, nil
}

// DeskCase is a case as the desk lists it (signoff.DeskCase).
type DeskCase = signoff.DeskCase

// DeskFilter selects the desk's cases (signoff.DeskFilter).
type DeskFilter = signoff.DeskFilter

// DeskCases lists the cases of by's workspace newest first, for the people
// who run and watch the desk. EFORBIDDEN for anyone else, EINVALID for an
// unknown kind or state or a malformed id.
func (s *DB) DeskCases(ctx context.Context, by signoff.Actor, f DeskFilter) ([]DeskCase, error) {
	if !isStaff(by) {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "role %s does not read the desk", by.Role)
	}
	var q strings.Builder
	q.WriteString(`SELECT c.` + strings.ReplaceAll(caseColumns, ", ", ", c.") + `, coalesce(t.severity, ''), coalesce(t.owner, ''), coalesce(p.name, '')
		FROM cases c LEFT JOIN triage_runs tr ON tr.case_id = c.id
		LEFT JOIN projects p ON p.id = c.project_id
		LEFT JOIN tickets t ON t.project_id = tr.project_id AND t.id = tr.ticket_id
		WHERE c.workspace_id = $1`)
	args := []any{by.WorkspaceID}
	add := func(cond string, v any) {
		args = append(args, v)
		fmt.Fprintf(&q, " AND %s$%d", cond, len(args))
	}
	if f.Kind != "" {
		if !f.Kind.Valid() {
			return nil, signoff.Errorf(signoff.EINVALID, "unknown kind %q", f.Kind)
		}
		add("c.kind = ", string(f.Kind))
	}
	if f.State != "" {
		if !workflow.Bug.IsState(f.State) && !workflow.Change.IsState(f.State) {
			return nil, signoff.Errorf(signoff.EINVALID, "unknown state %q", f.State)
		}
		add("c.state = ", f.State)
	}
	if len(f.States) > 0 {
		if len(f.States) > 64 {
			return nil, signoff.Errorf(signoff.EINVALID, "too many states")
		}
		var ph []string
		for _, st := range f.States {
			if !workflow.Bug.IsState(st) && !workflow.Change.IsState(st) {
				return nil, signoff.Errorf(signoff.EINVALID, "unknown state %q", st)
			}
			args = append(args, st)
			ph = append(ph, fmt.Sprintf("$%d", len(args)))
		}
		fmt.Fprintf(&q, " AND c.state IN (%s)", strings.Join(ph, ", "))
	}
	if f.ID != "" {
		if err := signoff.CheckID("case", signoff.PrefixCase, f.ID); err != nil {
			return nil, err
		}
		add("c.id = ", f.ID)
	}
	if f.Before != "" {
		if err := signoff.CheckID("before", signoff.PrefixCase, f.Before); err != nil {
			return nil, err
		}
		add("c.id < ", f.Before)
	}
	if query := strings.TrimSpace(f.Query); query != "" {
		if len(query) > 200 {
			return nil, signoff.Errorf(signoff.EINVALID, "search is longer than 200 bytes")
		}
		esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(query))
		args = append(args, "%"+esc+"%")
		fmt.Fprintf(&q, ` AND lower(c.title) LIKE $%d ESCAPE '\'`, len(args))
	}
	args = append(args, clampLimit(f.Limit))
	fmt.Fprintf(&q, " ORDER BY c.id DESC LIMIT $%d", len(args))
	out, err := queryAll(ctx, s.db, func(sc scanner, d *DeskCase) error {
		var kind string
		var ca, ua int64
		c := &d.Case
		if err := sc.Scan(&c.ID, &c.WorkspaceID, &c.ProjectID, &kind, &c.Title, &c.State, &c.Version, &c.FixAttempts, &c.MaxFixAttempts,
			&c.ReporterID, &c.CreatedBy, &ca, &ua, &d.Severity, &d.Owner, &d.ProjectName); err != nil {
			return err
		}
		c.Kind, c.CreatedAt, c.UpdatedAt = signoff.CaseKind(kind), fromMicros(ca), fromMicros(ua)
		return nil
	}, q.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("desk cases: %w", err)
	}
	if err := s.deskFacts(ctx, by.WorkspaceID, out); err != nil {
		return nil, fmt.Errorf("desk cases: %w", err)
	}
	return out, nil
}

// deskFacts reads, for the listed cases, what says who acts next on them:
// pending decisions, standing approvals, the newest plan's proposer and
// the bug loop where it matters. One query per fact for the whole page,
// each by case id through an index of its table.
func (s *DB) deskFacts(ctx context.Context, ws string, cases []DeskCase) error {
	if len(cases) == 0 {
		return nil
	}
	at := map[string]*DeskCase{}
	var all, approving, changes, loops []string
	for i := range cases {
		c := &cases[i]
		at[c.ID] = c
		all = append(all, c.ID)
		if c.State == workflow.BugAwaitingApproval || c.State == workflow.ChangeAwaitingApproval {
			approving = append(approving, c.ID)
		}
		if c.Kind == signoff.KindChange {
			changes = append(changes, c.ID)
		}
		if c.Kind == signoff.KindBug && (c.State == workflow.BugAwaitingApproval || c.State == workflow.BugAwaitingReporterRepro || c.State == workflow.BugReproduced) {
			loops = append(loops, c.ID)
		}
	}
	now := micros(s.now())
	in := func(args []any, ids []string) ([]any, string) {
		ph := make([]string, len(ids))
		for i, id := range ids {
			args = append(args, id)
			ph[i] = fmt.Sprintf("$%d", len(args))
		}
		return args, strings.Join(ph, ", ")
	}
	each := func(q string, args []any, scan func(scanner) error) error {
		rows, err := s.db.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := scan(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	args, list := in([]any{ws, now}, all)
	err := each(`SELECT case_id, count(*) FROM decisions WHERE workspace_id = $1 AND status = 'pending' AND expires_at > $2 AND case_id IN (`+list+`) GROUP BY case_id`, args,
		func(sc scanner) error {
			var id string
			var n int
			if err := sc.Scan(&id, &n); err != nil {
				return err
			}
			at[id].PendingDecisions = n
			return nil
		})
	if err != nil {
		return fmt.Errorf("pending decisions: %w", err)
	}
	// The approvals read here are filtered below to the case's current
	// subject, as the card counts them: an approval of an earlier plan or
	// candidate still recorded valid (recorded while a new one was being
	// drafted, after the desk superseded the rest) is not an approval of
	// this one, and the inbox must not tell its approver they are done.
	type standing struct {
		who, digest string
		at          int64
	}
	approvals := map[string][]standing{}
	if len(approving) > 0 {
		args, list := in([]any{ws, now}, approving)
		err := each(`SELECT case_id, approver_id, subject_digest, created_at FROM approvals WHERE workspace_id = $1 AND status = 'valid' AND decision = 'approve' AND expires_at > $2 AND case_id IN (`+list+`) ORDER BY case_id, created_at`, args,
			func(sc scanner) error {
				var id string
				var a standing
				if err := sc.Scan(&id, &a.who, &a.digest, &a.at); err != nil {
					return err
				}
				approvals[id] = append(approvals[id], a)
				return nil
			})
		if err != nil {
			return fmt.Errorf("approvals: %w", err)
		}
	}
	planDigest := map[string]string{}
	if len(changes) > 0 {
		args, list := in([]any{ws}, changes)
		err := each(`SELECT case_id, proposer, digest FROM change_plans WHERE workspace_id = $1 AND case_id IN (`+list+`) ORDER BY case_id, created_at, id`, args,
			func(sc scanner) error {
				var id, who, digest string
				if err := sc.Scan(&id, &who, &digest); err != nil {
					return err
				}
				at[id].PlanProposer, planDigest[id] = who, digest // the newest wins
				return nil
			})
		if err != nil {
			return fmt.Errorf("plan proposers: %w", err)
		}
	}
	if len(loops) > 0 {
		args, list := in([]any{ws}, loops)
		err := each(`SELECT case_id, state FROM bug_loops WHERE workspace_id = $1 AND case_id IN (`+list+`)`, args,
			func(sc scanner) error {
				var id, raw string
				if err := sc.Scan(&id, &raw); err != nil {
					return err
				}
				var st signoff.BugLoopState
				if err := decodeLoopState([]byte(raw), &st); err != nil {
					return fmt.Errorf("bug loop of %s: %w", id, err)
				}
				at[id].Loop = &st
				return nil
			})
		if err != nil {
			return fmt.Errorf("bug loops: %w", err)
		}
	}
	for id, as := range approvals {
		c := at[id]
		for _, a := range as {
			if current(c, a.digest, a.at, planDigest[id]) && !slices.Contains(c.Approvers, a.who) {
				c.Approvers = append(c.Approvers, a.who)
			}
		}
	}
	return nil
}

// current reports whether an approval of digest, recorded at (micros),
// is of c's current subject: for a change, its newest plan's digest; for
// a bug, the card of its newest candidate, which no approval recorded
// before that candidate was submitted can be of (a new candidate
// supersedes every approval; the card's digest itself is not stored).
func current(c *DeskCase, digest string, at int64, plan string) bool {
	switch c.Kind {
	case signoff.KindChange:
		return digest == plan
	case signoff.KindBug:
		if c.Loop == nil || len(c.Loop.Candidates) == 0 {
			return false
		}
		newest := c.Loop.Candidates[0].SubmittedAt
		for _, cand := range c.Loop.Candidates[1:] {
			if cand.SubmittedAt.After(newest) {
				newest = cand.SubmittedAt
			}
		}
		return at >= micros(newest)
	}
	return false
}

// IntakeProject returns the name of a project for its public report form.
// The form is public, as the API's intake is; a project's id is what the
// team publishes. ENOTFOUND for an unknown project.
func (s *DB) IntakeProject(ctx context.Context, id string) (string, error) {
	if err := signoff.CheckID("project", signoff.PrefixProject, id); err != nil {
		return "", signoff.Errorf(signoff.ENOTFOUND, "project not found")
	}
	var name string
	err := s.db.QueryRowContext(ctx, `SELECT name FROM projects WHERE id = $1`, id).Scan(&name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", signoff.Errorf(signoff.ENOTFOUND, "project not found")
	} else if err != nil {
		return "", fmt.Errorf("intake project %s: %w", id, err)
	}
	return name, nil
}
