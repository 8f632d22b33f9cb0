package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/signoff-dev/signoff"
)

// Revoking a key and disabling a person take effect in the transaction
// that records them: the approvals that still count under the key (or by
// the person) are voided there and then, so no gate can consume them
// afterwards, and each affected case gets an event saying so. The gates
// check revoked_at and disabled_at themselves too; voiding makes the
// state say what the gates would decide, for every reader.

// Reasons recorded on approvals.voided events.
const (
	voidKeyRevoked    = "key revoked"
	voidActorDisabled = "approver disabled"
)

// voidApprovals voids the valid approvals of workspace ws that match
// column = value (key_id or approver_id), and appends one approvals.voided
// event per affected case, in case id order, whose message says so to
// whoever reads the case. It returns how many it voided.
func (s *DB) voidApprovals(ctx context.Context, tx *sql.Tx, by signoff.Actor, ws, column, value, reason, message string) (int, error) {
	if column != "key_id" && column != "approver_id" {
		return 0, fmt.Errorf("void approvals: unknown column %q", column)
	}
	type voided struct{ id, caseID string }
	rows, err := queryAll(ctx, tx, func(sc scanner, v *voided) error { return sc.Scan(&v.id, &v.caseID) },
		`UPDATE approvals SET status = '`+signoff.ApprovalVoided+`' WHERE workspace_id = $1 AND `+column+` = $2 AND status = '`+signoff.ApprovalValid+`'
		RETURNING id, case_id`, ws, value)
	if err != nil {
		return 0, err
	}
	byCase := map[string][]string{}
	for _, v := range rows {
		byCase[v.caseID] = append(byCase[v.caseID], v.id)
	}
	cases := make([]string, 0, len(byCase))
	for c := range byCase {
		cases = append(cases, c)
	}
	slices.Sort(cases)
	for _, c := range cases {
		ids := byCase[c]
		slices.Sort(ids)
		if _, err := s.appendEvent(ctx, tx, ws, c, "approvals.voided", by.ID, map[string]any{
			"approval_ids": ids, "count": len(ids), "reason": reason, column: value, "message": message,
		}); err != nil {
			return 0, err
		}
	}
	return len(rows), nil
}

// RevokeKey implements signoff.BugLoopService. Owners revoke any key of
// the workspace, the person who holds a key their own: a lost laptop is
// dealt with by whoever notices first.
func (s *DB) RevokeKey(ctx context.Context, by signoff.Actor, keyID string) (signoff.ApproverKey, int, error) {
	if by.Role != signoff.RoleOwner && by.Role != signoff.RoleOperator {
		return signoff.ApproverKey{}, 0, signoff.Errorf(signoff.EFORBIDDEN, "only owners and the key's holder revoke approval keys")
	}
	if !keyIDRE.MatchString(keyID) {
		return signoff.ApproverKey{}, 0, signoff.Errorf(signoff.EINVALID, "invalid key id")
	}
	var k signoff.ApproverKey
	var n int
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		err := scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM approver_keys WHERE workspace_id = $1 AND id = $2`+s.d.ForUpdate,
			by.WorkspaceID, keyID), &k)
		// An operator sees their own keys only (ListKeys): another's key
		// answers as a missing one.
		if errors.Is(err, sql.ErrNoRows) || (err == nil && by.Role != signoff.RoleOwner && k.ActorID != by.ID) {
			return signoff.Errorf(signoff.ENOTFOUND, "key not found")
		} else if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return signoff.Errorf(signoff.ECONFLICT, "key %s is already revoked", keyID)
		}
		now := s.clock()
		if _, err := tx.ExecContext(ctx, `UPDATE approver_keys SET revoked_at = $1 WHERE workspace_id = $2 AND id = $3`,
			micros(now), by.WorkspaceID, keyID); err != nil {
			return err
		}
		k.RevokedAt = &now
		if _, err := s.appendEvent(ctx, tx, by.WorkspaceID, "", "key.revoked", by.ID, map[string]any{"key_id": k.ID, "actor_id": k.ActorID}); err != nil {
			return err
		}
		n, err = s.voidApprovals(ctx, tx, by, by.WorkspaceID, "key_id", keyID, voidKeyRevoked,
			"approvals signed with key "+keyID+" no longer count: the key was revoked")
		return err
	})
	if err != nil {
		return signoff.ApproverKey{}, 0, fmt.Errorf("revoke key %s: %w", keyID, err)
	}
	return k, n, nil
}

// lockActor reads an actor of ws under a row lock (where the database has
// them), so that two changes to one actor are applied one after the other.
func (s *DB) lockActor(ctx context.Context, tx *sql.Tx, ws, id string) (signoff.Actor, error) {
	var a signoff.Actor
	err := scanActor(tx.QueryRowContext(ctx, `SELECT `+actorColumns+` FROM actors WHERE id = $1 AND workspace_id = $2`+s.d.ForUpdate, id, ws), &a)
	if errors.Is(err, sql.ErrNoRows) {
		return a, signoff.Errorf(signoff.ENOTFOUND, "actor not found")
	}
	return a, err
}

// DisableActor implements signoff.ActorService. The last enabled owner
// is never disabled, by themselves or by the CLI: nobody could then run
// the workspace through the API. Their web sessions are deleted rather
// than only refused, so enabling the person later does not bring an old
// session cookie back to life.
func (s *DB) DisableActor(ctx context.Context, by signoff.Actor, actorID string) (signoff.Actor, int, error) {
	if by.Role != signoff.RoleOwner {
		return signoff.Actor{}, 0, signoff.Errorf(signoff.EFORBIDDEN, "only owners disable actors")
	}
	if err := signoff.CheckID("actor", signoff.PrefixActor, actorID); err != nil {
		return signoff.Actor{}, 0, err
	}
	var a signoff.Actor
	var n int
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		if a, err = s.getActor(ctx, tx, by.WorkspaceID, actorID); err != nil {
			return err
		}
		if a.Role == signoff.RoleOwner {
			// The enabled owners are locked, in id order, before they are
			// counted: two owners disabling each other at once are applied
			// in turn, and the second finds the first alone.
			owners, err := queryAll(ctx, tx, scanString, `SELECT id FROM actors WHERE workspace_id = $1 AND role = $2 AND disabled_at IS NULL ORDER BY id`+s.d.ForUpdate,
				by.WorkspaceID, string(signoff.RoleOwner))
			if err != nil {
				return err
			}
			if len(owners) <= 1 && slices.Contains(owners, actorID) {
				return signoff.Errorf(signoff.ECONFLICT, "%s is the workspace's last enabled owner: enable or add another owner first", a.Name)
			}
		}
		if a, err = s.lockActor(ctx, tx, by.WorkspaceID, actorID); err != nil {
			return err
		}
		if a.DisabledAt != nil {
			return signoff.Errorf(signoff.ECONFLICT, "actor %s is already disabled", actorID)
		}
		now := s.clock()
		if _, err := tx.ExecContext(ctx, `UPDATE actors SET disabled_at = $1 WHERE id = $2 AND workspace_id = $3`, micros(now), actorID, by.WorkspaceID); err != nil {
			return err
		}
		a.DisabledAt = &now
		res, err := tx.ExecContext(ctx, `DELETE FROM web_sessions WHERE workspace_id = $1 AND actor_id = $2`, by.WorkspaceID, actorID)
		if err != nil {
			return err
		}
		ended, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if _, err := s.appendEvent(ctx, tx, by.WorkspaceID, "", "actor.disabled", by.ID, map[string]any{
			"actor_id": a.ID, "role": string(a.Role), "sessions_ended": int(ended),
		}); err != nil {
			return err
		}
		n, err = s.voidApprovals(ctx, tx, by, by.WorkspaceID, "approver_id", actorID, voidActorDisabled,
			"approvals by "+a.Name+" no longer count: they were disabled")
		return err
	})
	if err != nil {
		return signoff.Actor{}, 0, fmt.Errorf("disable actor %s: %w", actorID, err)
	}
	return a, n, nil
}

// EnableActor implements signoff.ActorService.
func (s *DB) EnableActor(ctx context.Context, by signoff.Actor, actorID string) (signoff.Actor, error) {
	if by.Role != signoff.RoleOwner {
		return signoff.Actor{}, signoff.Errorf(signoff.EFORBIDDEN, "only owners enable actors")
	}
	if err := signoff.CheckID("actor", signoff.PrefixActor, actorID); err != nil {
		return signoff.Actor{}, err
	}
	var a signoff.Actor
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		if a, err = s.lockActor(ctx, tx, by.WorkspaceID, actorID); err != nil {
			return err
		}
		if a.DisabledAt == nil {
			return signoff.Errorf(signoff.ECONFLICT, "actor %s is not disabled", actorID)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE actors SET disabled_at = NULL WHERE id = $1 AND workspace_id = $2`, actorID, by.WorkspaceID); err != nil {
			return err
		}
		a.DisabledAt = nil
		_, err = s.appendEvent(ctx, tx, by.WorkspaceID, "", "actor.enabled", by.ID, map[string]any{"actor_id": a.ID, "role": string(a.Role)})
		return err
	})
	if err != nil {
		return signoff.Actor{}, fmt.Errorf("enable actor %s: %w", actorID, err)
	}
	return a, nil
}
