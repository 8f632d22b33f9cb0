package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/signoff-dev/signoff"
)

// CreateWorkspace implements signoff.WorkspaceService.
func (s *DB) CreateWorkspace(ctx context.Context, name, ownerName string) (signoff.Workspace, signoff.Actor, error) {
	if err := signoff.CheckText("workspace name", name, true, 100); err != nil {
		return signoff.Workspace{}, signoff.Actor{}, err
	}
	if err := signoff.CheckText("owner name", ownerName, true, 100); err != nil {
		return signoff.Workspace{}, signoff.Actor{}, err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	w := signoff.Workspace{ID: signoff.NewID(signoff.PrefixWorkspace), Name: name, CreatedAt: now}
	owner := signoff.Actor{ID: signoff.NewID(signoff.PrefixActor), WorkspaceID: w.ID, Name: ownerName, Role: signoff.RoleOwner, CreatedAt: now}
	sys := signoff.SystemActor(w.ID)
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (id, name, created_at) VALUES ($1, $2, $3)`, w.ID, w.Name, micros(now)); err != nil {
			return err
		}
		if err := s.createHead(ctx, tx, w.ID); err != nil {
			return err
		}
		// The chain is registered with its first event, in the same
		// transaction: a chain never exists unregistered, so one that
		// disappears, or is replaced, is noticed. The first event names its
		// registry entry, which keeps a removed registry from being
		// rebuilt from what is left (establishRegistry).
		reg, err := s.lockRegistry(ctx, tx)
		if err != nil {
			return err
		}
		ev, err := s.appendEvent(ctx, tx, w.ID, "", "workspace.created", sys.ID, map[string]any{"workspace_id": w.ID, "name": w.Name, "registry_seq": reg.Seq + 1})
		if err != nil {
			return err
		}
		if err := s.register(ctx, tx, &reg, w.ID, ev.Hash); err != nil {
			return err
		}
		return s.insertActor(ctx, tx, sys, owner)
	})
	if err != nil {
		return signoff.Workspace{}, signoff.Actor{}, fmt.Errorf("create workspace %q: %w", name, err)
	}
	return w, owner, nil
}

// GetWorkspace implements signoff.WorkspaceService.
func (s *DB) GetWorkspace(ctx context.Context, id string) (signoff.Workspace, error) {
	if err := signoff.CheckID("workspace", signoff.PrefixWorkspace, id); err != nil {
		return signoff.Workspace{}, err
	}
	var w signoff.Workspace
	err := scanWorkspace(s.db.QueryRowContext(ctx, `SELECT id, name, created_at FROM workspaces WHERE id = $1`, id), &w)
	if errors.Is(err, sql.ErrNoRows) {
		return w, signoff.Errorf(signoff.ENOTFOUND, "workspace not found")
	} else if err != nil {
		return w, fmt.Errorf("get workspace %s: %w", id, err)
	}
	return w, nil
}

// ListWorkspaces implements signoff.WorkspaceService.
func (s *DB) ListWorkspaces(ctx context.Context) ([]signoff.Workspace, error) {
	out, err := queryAll(ctx, s.db, scanWorkspace, `SELECT id, name, created_at FROM workspaces ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	return out, nil
}

func scanWorkspace(sc scanner, w *signoff.Workspace) error {
	var at int64
	if err := sc.Scan(&w.ID, &w.Name, &at); err != nil {
		return err
	}
	w.CreatedAt = fromMicros(at)
	return nil
}

// RenameWorkspace implements signoff.WorkspaceService.
func (s *DB) RenameWorkspace(ctx context.Context, by signoff.Actor, id, name string) (signoff.Workspace, error) {
	if err := signoff.CheckID("workspace", signoff.PrefixWorkspace, id); err != nil {
		return signoff.Workspace{}, err
	}
	if id != by.WorkspaceID {
		return signoff.Workspace{}, signoff.Errorf(signoff.ENOTFOUND, "workspace not found")
	}
	if err := signoff.CheckText("workspace name", name, true, 100); err != nil {
		return signoff.Workspace{}, err
	}
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE workspaces SET name = $1 WHERE id = $2`, name, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return signoff.Errorf(signoff.ENOTFOUND, "workspace not found")
		}
		_, err = s.appendEvent(ctx, tx, id, "", "workspace.renamed", by.ID, map[string]any{"name": name})
		return err
	})
	if err != nil {
		return signoff.Workspace{}, fmt.Errorf("rename workspace %s: %w", id, err)
	}
	return s.GetWorkspace(ctx, id)
}
