package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/identity"
)

// CreateActor implements signoff.ActorService.
func (s *DB) CreateActor(ctx context.Context, by signoff.Actor, name string, role signoff.Role) (signoff.Actor, error) {
	if err := signoff.CheckText("actor name", name, true, 100); err != nil {
		return signoff.Actor{}, err
	}
	if !role.Assignable() {
		return signoff.Actor{}, signoff.Errorf(signoff.EINVALID, "unknown role %q", role)
	}
	a := signoff.Actor{ID: signoff.NewID(signoff.PrefixActor), WorkspaceID: by.WorkspaceID, Name: name, Role: role, CreatedAt: s.now().UTC().Truncate(time.Microsecond)}
	if err := s.InTx(ctx, func(tx *sql.Tx) error { return s.insertActor(ctx, tx, by, a) }); err != nil {
		return signoff.Actor{}, fmt.Errorf("create actor %q: %w", name, err)
	}
	return a, nil
}

// insertActor stores a new actor. An agent gets an owner, the person
// responsible for it (see agentOwner); people get none.
func (s *DB) insertActor(ctx context.Context, tx *sql.Tx, by, a signoff.Actor) error {
	var owner sql.NullString
	if a.Role.IsAgent() {
		id, err := s.agentOwner(ctx, tx, by, a.WorkspaceID)
		if err != nil {
			return err
		}
		owner = sql.NullString{String: id, Valid: id != ""}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO actors (id, workspace_id, name, role, created_at, owner_id) VALUES ($1, $2, $3, $4, $5, $6)`,
		a.ID, a.WorkspaceID, a.Name, string(a.Role), micros(a.CreatedAt), owner)
	if err != nil {
		if s.d.IsUnique(err) {
			return signoff.Errorf(signoff.ECONFLICT, "an actor named %q already exists", a.Name)
		}
		return err
	}
	payload := map[string]any{"actor_id": a.ID, "name": a.Name, "role": string(a.Role)}
	if owner.Valid {
		payload["owner_id"] = owner.String
	}
	_, err = s.appendEvent(ctx, tx, a.WorkspaceID, "", "actor.created", by.ID, payload)
	return err
}

const actorColumns = `id, workspace_id, name, role, created_at, disabled_at`

func scanActor(sc scanner, a *signoff.Actor) error {
	var at int64
	var disabled sql.NullInt64
	var role string
	if err := sc.Scan(&a.ID, &a.WorkspaceID, &a.Name, &role, &at, &disabled); err != nil {
		return err
	}
	a.Role, a.CreatedAt, a.DisabledAt = signoff.Role(role), fromMicros(at), timePtr(disabled)
	return nil
}

// GetActor implements signoff.ActorService.
func (s *DB) GetActor(ctx context.Context, ws, id string) (signoff.Actor, error) {
	if err := signoff.CheckID("actor", signoff.PrefixActor, id); err != nil {
		return signoff.Actor{}, err
	}
	return s.getActor(ctx, s.db, ws, id)
}

type queryer interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func (s *DB) getActor(ctx context.Context, q queryer, ws, id string) (signoff.Actor, error) {
	var a signoff.Actor
	err := scanActor(q.QueryRowContext(ctx, `SELECT `+actorColumns+` FROM actors WHERE id = $1 AND workspace_id = $2`, id, ws), &a)
	if errors.Is(err, sql.ErrNoRows) {
		return a, signoff.Errorf(signoff.ENOTFOUND, "actor not found")
	} else if err != nil {
		return a, fmt.Errorf("get actor %s: %w", id, err)
	}
	return a, nil
}

// ListActors implements signoff.ActorService.
func (s *DB) ListActors(ctx context.Context, ws string) ([]signoff.Actor, error) {
	out, err := queryAll(ctx, s.db, scanActor, `SELECT `+actorColumns+` FROM actors WHERE workspace_id = $1 ORDER BY id`, ws)
	if err != nil {
		return nil, fmt.Errorf("list actors: %w", err)
	}
	return out, nil
}

// CreateToken implements signoff.ActorService.
func (s *DB) CreateToken(ctx context.Context, by signoff.Actor, actorID, label string, expiresAt *time.Time) (signoff.Token, string, error) {
	if err := signoff.CheckID("actor", signoff.PrefixActor, actorID); err != nil {
		return signoff.Token{}, "", err
	}
	if err := signoff.CheckText("token label", label, false, 100); err != nil {
		return signoff.Token{}, "", err
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	if expiresAt != nil {
		e := expiresAt.UTC().Truncate(time.Microsecond)
		if !e.After(now) {
			return signoff.Token{}, "", signoff.Errorf(signoff.EINVALID, "token expiry must be in the future")
		}
		expiresAt = &e
	}
	id, secret, hash := identity.NewToken()
	t := signoff.Token{ID: id, WorkspaceID: by.WorkspaceID, ActorID: actorID, Label: label, CreatedAt: now, ExpiresAt: expiresAt}
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := s.getActor(ctx, tx, by.WorkspaceID, actorID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO tokens (id, workspace_id, actor_id, label, secret_sha256, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			t.ID, t.WorkspaceID, t.ActorID, t.Label, hash, micros(now), nullMicros(expiresAt)); err != nil {
			return err
		}
		// The secret never enters the ledger; only the fact that a token exists.
		_, err := s.appendEvent(ctx, tx, t.WorkspaceID, "", "token.created", by.ID, map[string]any{"token_id": t.ID, "actor_id": actorID, "label": label})
		return err
	})
	if err != nil {
		return signoff.Token{}, "", fmt.Errorf("create token for %s: %w", actorID, err)
	}
	return t, secret, nil
}

const tokenColumns = `id, workspace_id, actor_id, label, created_at, expires_at, revoked_at`

func scanToken(sc scanner, t *signoff.Token) error {
	var at int64
	var exp, rev sql.NullInt64
	if err := sc.Scan(&t.ID, &t.WorkspaceID, &t.ActorID, &t.Label, &at, &exp, &rev); err != nil {
		return err
	}
	t.CreatedAt, t.ExpiresAt, t.RevokedAt = fromMicros(at), timePtr(exp), timePtr(rev)
	return nil
}

// ListTokens implements signoff.ActorService.
func (s *DB) ListTokens(ctx context.Context, ws, actorID string) ([]signoff.Token, error) {
	if err := signoff.CheckID("actor", signoff.PrefixActor, actorID); err != nil {
		return nil, err
	}
	if _, err := s.getActor(ctx, s.db, ws, actorID); err != nil {
		return nil, err
	}
	out, err := queryAll(ctx, s.db, scanToken, `SELECT `+tokenColumns+` FROM tokens WHERE workspace_id = $1 AND actor_id = $2 ORDER BY id`, ws, actorID)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// RevokeToken implements signoff.ActorService.
func (s *DB) RevokeToken(ctx context.Context, by signoff.Actor, tokenID string) (signoff.Token, error) {
	if err := signoff.CheckID("token", signoff.PrefixToken, tokenID); err != nil {
		return signoff.Token{}, err
	}
	var t signoff.Token
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		err := scanToken(tx.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE id = $1 AND workspace_id = $2`, tokenID, by.WorkspaceID), &t)
		if errors.Is(err, sql.ErrNoRows) {
			return signoff.Errorf(signoff.ENOTFOUND, "token not found")
		} else if err != nil {
			return err
		}
		if t.RevokedAt != nil {
			return signoff.Errorf(signoff.ECONFLICT, "token already revoked")
		}
		now := s.now().UTC().Truncate(time.Microsecond)
		res, err := tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, micros(now), tokenID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return signoff.Errorf(signoff.ECONFLICT, "token already revoked")
		}
		t.RevokedAt = &now
		_, err = s.appendEvent(ctx, tx, by.WorkspaceID, "", "token.revoked", by.ID, map[string]any{"token_id": tokenID})
		return err
	})
	if err != nil {
		return signoff.Token{}, fmt.Errorf("revoke token %s: %w", tokenID, err)
	}
	return t, nil
}

// errBadCredential is one answer for every way a credential can fail, so
// the response says nothing about which part was wrong.
var errBadCredential = signoff.Errorf(signoff.EUNAUTHORIZED, "invalid or expired credential")

// dummyHash keeps the work done for an unknown token id the same as for a
// known one.
var dummyHash = identity.HashSecret("so_dummy")

// Authenticate implements signoff.ActorService.
func (s *DB) Authenticate(ctx context.Context, secret string) (signoff.Actor, error) {
	id, ok := identity.ParseToken(secret)
	if !ok {
		return signoff.Actor{}, errBadCredential
	}
	var a signoff.Actor
	var hash []byte
	var exp, rev sql.NullInt64
	var at int64
	var disabled sql.NullInt64
	var role string
	err := s.db.QueryRowContext(ctx, `SELECT t.secret_sha256, t.expires_at, t.revoked_at, a.id, a.workspace_id, a.name, a.role, a.created_at, a.disabled_at
		FROM tokens t JOIN actors a ON a.id = t.actor_id WHERE t.id = $1`, id).
		Scan(&hash, &exp, &rev, &a.ID, &a.WorkspaceID, &a.Name, &role, &at, &disabled)
	if errors.Is(err, sql.ErrNoRows) {
		identity.SecretMatches(secret, dummyHash)
		return signoff.Actor{}, errBadCredential
	} else if err != nil {
		return signoff.Actor{}, fmt.Errorf("authenticate: %w", err)
	}
	now := s.now()
	match := identity.SecretMatches(secret, hash)
	if !match || rev.Valid || disabled.Valid || (exp.Valid && !now.Before(fromMicros(exp.Int64))) {
		return signoff.Actor{}, errBadCredential
	}
	a.Role, a.CreatedAt = signoff.Role(role), fromMicros(at)
	return a, nil
}
