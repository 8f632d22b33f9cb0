package sqlstore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/signoff-dev/signoff"
)

// RegisterPasskey stores a verified WebAuthn credential, registered on
// origin (the page's exact origin, on the credential's RP id), as an
// approval key of by: a row of approver_keys whose public key is the credential's PEM
// text (so approvals reference it, revocation voids them, and the gate
// and evidence bundles find it like an Ed25519 key), its counter in
// passkeys, and a passkey.registered event carrying the credential, so an
// offline verifier can check an approval made with it later. As with
// RegisterKey, only owners and operators register, each for themselves.
func (s *DB) RegisterPasskey(ctx context.Context, by signoff.Actor, cred signoff.PasskeyCredential, signCount uint32, origin string) (signoff.ApproverKey, error) {
	if (by.Role != signoff.RoleOwner && by.Role != signoff.RoleOperator) || isServer(by) {
		return signoff.ApproverKey{}, signoff.Errorf(signoff.EFORBIDDEN, "only owners and operators register passkeys, each for themselves")
	}
	text := cred.Encode()
	if err := s.passkeys.CheckRegistration(cred, origin); err != nil {
		return signoff.ApproverKey{}, signoff.Errorf(signoff.EINVALID, "%v", err)
	}
	credID := base64.RawURLEncoding.EncodeToString(cred.ID)
	k := signoff.ApproverKey{ID: cred.KeyID(), WorkspaceID: by.WorkspaceID, ActorID: by.ID, PublicKey: text, CreatedAt: s.clock()}
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		switch _, err := s.getKey(ctx, tx, k.WorkspaceID, k.ID, ""); {
		case err == nil:
			return signoff.Errorf(signoff.ECONFLICT, "passkey %s is already registered", k.ID)
		case signoff.ErrorCode(err) != signoff.ENOTFOUND:
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM passkeys WHERE workspace_id = $1 AND credential_id = $2`, k.WorkspaceID, credID).Scan(&n); err != nil {
			return err
		} else if n > 0 {
			return signoff.Errorf(signoff.ECONFLICT, "this passkey is already registered")
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO approver_keys (`+keyColumns+`) VALUES ($1, $2, $3, $4, $5, NULL)`,
			k.ID, k.WorkspaceID, k.ActorID, k.PublicKey, micros(k.CreatedAt)); err != nil {
			if s.d.IsUnique(err) {
				return signoff.Errorf(signoff.ECONFLICT, "passkey %s is already registered", k.ID)
			}
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO passkeys (workspace_id, key_id, actor_id, credential_id, rp_id, origin, sign_count, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, k.WorkspaceID, k.ID, k.ActorID, credID, cred.RPID, origin, int64(signCount), micros(k.CreatedAt)); err != nil {
			if s.d.IsUnique(err) {
				return signoff.Errorf(signoff.ECONFLICT, "this passkey is already registered")
			}
			return err
		}
		_, err := s.appendEvent(ctx, tx, k.WorkspaceID, "", "passkey.registered", by.ID, map[string]any{"key_id": k.ID, "actor_id": k.ActorID,
			"kind": "passkey", "credential_id": credID, "rp_id": cred.RPID, "origin": origin, "public_key": k.PublicKey})
		return err
	})
	if err != nil {
		return signoff.ApproverKey{}, fmt.Errorf("register passkey: %w", err)
	}
	return k, nil
}

// AdvancePasskeyCounter records the signature counter of an assertion
// made on origin with a passkey of ws. The origin must be the one the
// passkey was registered on (EFORBIDDEN otherwise): the browser lets any
// port of the RP id's host ask for an assertion, and the request's Host
// header, which names the origin the server expects, is the sender's to
// choose. WebAuthn's clone check refuses a counter that does not go up
// (signoff.PasskeyRules.CounterOK; an authenticator that keeps no counter sends 0
// every time and is accepted). ENOTFOUND for an unknown passkey, ECONFLICT
// for a counter that went backwards.
func (s *DB) AdvancePasskeyCounter(ctx context.Context, ws, keyID, origin string, got uint32) error {
	return s.InTx(ctx, func(tx *sql.Tx) error {
		var stored int64
		var registeredOn string
		err := tx.QueryRowContext(ctx, `SELECT sign_count, origin FROM passkeys WHERE workspace_id = $1 AND key_id = $2`+s.d.ForUpdate, ws, keyID).Scan(&stored, &registeredOn)
		if errors.Is(err, sql.ErrNoRows) {
			return signoff.Errorf(signoff.ENOTFOUND, "passkey not found")
		} else if err != nil {
			return fmt.Errorf("passkey counter: %w", err)
		}
		if registeredOn == "" || origin != registeredOn {
			return signoff.Errorf(signoff.EFORBIDDEN, "this passkey was registered on %s and approves only there, not on %s", registeredOn, origin)
		}
		if !s.passkeys.CounterOK(uint32(stored), got) {
			return signoff.Errorf(signoff.ECONFLICT, "the passkey's signature counter went from %d to %d: the authenticator may have been cloned; revoke this passkey", stored, got)
		}
		// The guard makes two assertions racing past the read count once.
		res, err := tx.ExecContext(ctx, `UPDATE passkeys SET sign_count = $1 WHERE workspace_id = $2 AND key_id = $3 AND sign_count = $4`, int64(got), ws, keyID, stored)
		if err != nil {
			return fmt.Errorf("passkey counter: %w", err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return signoff.Errorf(signoff.ECONFLICT, "the passkey's signature counter moved meanwhile")
		}
		return nil
	})
}

// PasskeyCounter reads a passkey's stored signature counter.
func (s *DB) PasskeyCounter(ctx context.Context, ws, keyID string) (uint32, error) {
	var n int64
	err := s.db.QueryRowContext(ctx, `SELECT sign_count FROM passkeys WHERE workspace_id = $1 AND key_id = $2`, ws, keyID).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, signoff.Errorf(signoff.ENOTFOUND, "passkey not found")
	}
	return uint32(n), err
}

// WebSessionByToken reports whether the live session of secret was opened
// with an API token (true) or with a one-time sign-in link (false).
func (s *DB) WebSessionByToken(ctx context.Context, secret string) (bool, error) {
	if !webSecretShaped("", secret) {
		return false, errNoSession
	}
	var tokenID string
	err := s.db.QueryRowContext(ctx, `SELECT token_id FROM web_sessions WHERE secret_sha256 = $1`, secretHash(secret)).Scan(&tokenID)
	if errors.Is(err, sql.ErrNoRows) {
		return false, errNoSession
	} else if err != nil {
		return false, fmt.Errorf("web session: %w", err)
	}
	return tokenID != "", nil
}
