package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
)

const agentColumns = actorColumns + `, owner_id, last_seen_at, client`

func scanAgent(sc scanner, a *signoff.Agent) error {
	var at int64
	var disabled, seen sql.NullInt64
	var role string
	var owner sql.NullString
	if err := sc.Scan(&a.ID, &a.WorkspaceID, &a.Name, &role, &at, &disabled, &owner, &seen, &a.Client); err != nil {
		return err
	}
	a.Role, a.CreatedAt, a.DisabledAt = signoff.Role(role), fromMicros(at), timePtr(disabled)
	a.OwnerID, a.LastSeenAt = owner.String, timePtr(seen)
	return nil
}

// agentRoleList is the SQL list of agent roles, for "role IN (...)".
var agentRoleList = func() string {
	q := make([]string, len(signoff.AgentRoles))
	for i, r := range signoff.AgentRoles {
		q[i] = "'" + string(r) + "'"
	}
	return "(" + strings.Join(q, ", ") + ")"
}()

// getAgent reads an agent actor of ws; a human answers EINVALID.
func (s *DB) getAgent(ctx context.Context, q queryer, ws, id string) (signoff.Agent, error) {
	var a signoff.Agent
	err := scanAgent(q.QueryRowContext(ctx, `SELECT `+agentColumns+` FROM actors WHERE id = $1 AND workspace_id = $2`, id, ws), &a)
	if errors.Is(err, sql.ErrNoRows) {
		return a, signoff.Errorf(signoff.ENOTFOUND, "agent not found")
	} else if err != nil {
		return a, fmt.Errorf("get agent %s: %w", id, err)
	}
	if !a.Role.IsAgent() {
		return a, signoff.Errorf(signoff.EINVALID, "actor %s is a %s, not an agent", a.ID, a.Role)
	}
	return a, nil
}

func (s *DB) listAgents(ctx context.Context, q rowsQueryer, ws string, enabledOnly bool) ([]signoff.Agent, error) {
	cond := ""
	if enabledOnly {
		cond = " AND disabled_at IS NULL"
	}
	out, err := queryAll(ctx, q, scanAgent, `SELECT `+agentColumns+` FROM actors WHERE workspace_id = $1 AND role IN `+agentRoleList+cond+` ORDER BY id`, ws)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	return out, nil
}

// agentOwner names the person responsible for a new agent created by by:
// by itself when it is a person of the workspace, else (the CLI, the
// server) the workspace's earliest enabled owner. Empty when there is none.
func (s *DB) agentOwner(ctx context.Context, tx *sql.Tx, by signoff.Actor, ws string) (string, error) {
	if signoff.ValidID(signoff.PrefixActor, by.ID) {
		a, err := s.getActor(ctx, tx, ws, by.ID)
		if err == nil && a.Role.IsHuman() && a.DisabledAt == nil {
			return a.ID, nil
		} else if err != nil && signoff.ErrorCode(err) != signoff.ENOTFOUND {
			return "", err
		}
	}
	var id string
	err := tx.QueryRowContext(ctx, `SELECT id FROM actors WHERE workspace_id = $1 AND role = $2 AND disabled_at IS NULL ORDER BY created_at, id LIMIT 1`,
		ws, string(signoff.RoleOwner)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return id, err
}

// Heartbeat implements signoff.AgentService. It is presence, not history:
// no ledger event.
func (s *DB) Heartbeat(ctx context.Context, by signoff.Actor, client string) error {
	if !by.Role.IsAgent() {
		return signoff.Errorf(signoff.EFORBIDDEN, "only agents send heartbeats")
	}
	client = cleanLine(client, maxClientRunes)
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE actors SET last_seen_at = $1, client = $2 WHERE id = $3 AND workspace_id = $4 AND disabled_at IS NULL`,
			micros(s.clock()), client, by.ID, by.WorkspaceID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return signoff.Errorf(signoff.ENOTFOUND, "agent not found")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("heartbeat of %s: %w", by.ID, err)
	}
	return nil
}

// ListAgents implements signoff.AgentService. A disabled agent is never
// connected; window <= 0 means signoff.DefaultPresenceWindow.
func (s *DB) ListAgents(ctx context.Context, ws string, window time.Duration) ([]signoff.Agent, error) {
	if window <= 0 {
		window = signoff.DefaultPresenceWindow
	}
	out, err := s.listAgents(ctx, s.db, ws, false)
	if err != nil {
		return nil, err
	}
	now := s.now()
	for i := range out {
		a := &out[i]
		a.Connected = a.LastSeenAt != nil && a.DisabledAt == nil && now.Sub(*a.LastSeenAt) <= window
	}
	return out, nil
}

// GetSetting implements signoff.AgentService.
func (s *DB) GetSetting(ctx context.Context, ws, key string) ([]byte, error) {
	if err := signoff.CheckID("workspace", signoff.PrefixWorkspace, ws); err != nil {
		return nil, err
	}
	if err := checkToken("setting key", key); err != nil {
		return nil, err
	}
	var v []byte
	err := s.db.QueryRowContext(ctx, `SELECT value FROM settings WHERE workspace_id = $1 AND key = $2`, ws, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, signoff.Errorf(signoff.ENOTFOUND, "setting %s not found", key)
	} else if err != nil {
		return nil, fmt.Errorf("get setting %s: %w", key, err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// PutSetting implements signoff.AgentService: workspace owners (the CLI
// acts as one) and the server only. The ledger keeps the value's SHA-256,
// not the value.
func (s *DB) PutSetting(ctx context.Context, by signoff.Actor, key string, value []byte) error {
	if by.Role != signoff.RoleOwner && by.Role != signoff.RoleSystem {
		return signoff.Errorf(signoff.EFORBIDDEN, "role %s may not change workspace settings", by.Role)
	}
	if err := checkToken("setting key", key); err != nil {
		return err
	}
	if len(value) > maxSettingValue {
		return signoff.Errorf(signoff.EINVALID, "setting value is larger than %d bytes", maxSettingValue)
	}
	if value == nil {
		value = []byte{}
	}
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO settings (workspace_id, key, value, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (workspace_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, updated_by = excluded.updated_by`,
			by.WorkspaceID, key, value, micros(s.clock()), by.ID); err != nil {
			return err
		}
		_, err := s.appendEvent(ctx, tx, by.WorkspaceID, "", "setting.put", by.ID, map[string]any{
			"key": key, "value_sha256": sha256Hex(value), "bytes": len(value),
		})
		return err
	})
	if err != nil {
		return fmt.Errorf("put setting %s: %w", key, err)
	}
	return nil
}
