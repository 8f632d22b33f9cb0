package sqlstore

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"errors"
	"fmt"

	"github.com/signoff-dev/signoff"
)

// maxBundle bounds one stored evidence bundle.
const maxBundle = 64 << 20

// PutEvidence implements signoff.BugLoopService.
func (s *DB) PutEvidence(ctx context.Context, by signoff.Actor, caseID, candidateID string, archive []byte) (string, error) {
	if by.Role != signoff.RoleSystem {
		return "", signoff.Errorf(signoff.EFORBIDDEN, "only the server writes evidence")
	}
	if err := signoff.CheckID("case", signoff.PrefixCase, caseID); err != nil {
		return "", err
	}
	if err := signoff.CheckID("candidate", signoff.PrefixCandidate, candidateID); err != nil {
		return "", err
	}
	if len(archive) == 0 || len(archive) > maxBundle {
		return "", signoff.Errorf(signoff.EINVALID, "an evidence bundle is 1 byte to %d bytes", maxBundle)
	}
	digest := sha256Hex(archive)
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := s.getCase(ctx, tx, by.WorkspaceID, caseID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO evidence_bundles (candidate_id, workspace_id, case_id, digest, archive, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			candidateID, by.WorkspaceID, caseID, digest, archive, micros(s.clock())); err != nil {
			if s.d.IsUnique(err) {
				return signoff.Errorf(signoff.ECONFLICT, "candidate %s already has its evidence", candidateID)
			}
			return err
		}
		_, err := s.appendEvent(ctx, tx, by.WorkspaceID, caseID, "evidence.stored", by.ID, map[string]any{
			"candidate_id": candidateID, "bundle_digest": digest, "bytes": len(archive)})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store evidence of %s: %w", candidateID, err)
	}
	return digest, nil
}

// GetEvidence implements signoff.BugLoopService.
func (s *DB) GetEvidence(ctx context.Context, by signoff.Actor, caseID, candidateID string) ([]byte, string, error) {
	if by.Role == signoff.RoleReporter {
		return nil, "", signoff.Errorf(signoff.EFORBIDDEN, "reporters do not read evidence bundles")
	}
	// A bundle carries the frozen harness's test source (tests/<path>),
	// which only people read (harness.read): a fixer must not read the
	// tests it is to make pass, and no agent hands them to one.
	if by.Role.IsAgent() {
		return nil, "", signoff.Errorf(signoff.EFORBIDDEN, "agents do not read evidence bundles: a bundle carries the harness's test source, which only people read")
	}
	if err := signoff.CheckID("candidate", signoff.PrefixCandidate, candidateID); err != nil {
		return nil, "", err
	}
	if _, err := s.GetCase(ctx, by, caseID); err != nil {
		return nil, "", err
	}
	var archive []byte
	var digest string
	err := s.db.QueryRowContext(ctx, `SELECT archive, digest FROM evidence_bundles WHERE candidate_id = $1 AND case_id = $2 AND workspace_id = $3`,
		candidateID, caseID, by.WorkspaceID).Scan(&archive, &digest)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", signoff.Errorf(signoff.ENOTFOUND, "candidate %s has no evidence bundle", candidateID)
	} else if err != nil {
		return nil, "", fmt.Errorf("read evidence of %s: %w", candidateID, err)
	}
	return archive, digest, nil
}

// Signer is the server's signing key (nil when none is attached), for
// the evidence the server signs besides ledger checkpoints.
func (s *DB) Signer() ed25519.PrivateKey { return s.signer }
