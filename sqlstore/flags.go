package sqlstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/identity"
)

// ---- Validation ----

var (
	flagKeyRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	flagEnvRE = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)
)

// checkFlagKey returns EINVALID unless key is 1 to 128 of A-Z a-z 0-9 _ . -
// and usable as a path segment ("." and ".." are not).
func checkFlagKey(key string) error {
	if !flagKeyRE.MatchString(key) || key == "." || key == ".." {
		return signoff.Errorf(signoff.EINVALID, "flag key must be 1 to %d of A-Z, a-z, 0-9, '_', '.', '-' (and not '.' or '..')", signoff.MaxFlagKey)
	}
	return nil
}

// checkFlagEnv returns EINVALID unless env is 1 to 64 of a-z 0-9 _ -.
func checkFlagEnv(env string) error {
	if !flagEnvRE.MatchString(env) {
		return signoff.Errorf(signoff.EINVALID, "environment must be 1 to %d of a-z, 0-9, '_', '-'", signoff.MaxFlagEnv)
	}
	return nil
}

// flagValue checks raw is a JSON value of type typ, at most MaxFlagValue
// bytes, and returns its canonical form.
func flagValue(typ signoff.FlagType, raw json.RawMessage) (json.RawMessage, error) {
	if !typ.Valid() {
		return nil, signoff.Errorf(signoff.EINVALID, "flag type must be boolean, string, number or object, not %q", typ)
	}
	if len(raw) == 0 {
		return nil, signoff.Errorf(signoff.EINVALID, "value is required")
	}
	if len(raw) > signoff.MaxFlagValue {
		return nil, signoff.Errorf(signoff.EINVALID, "value is larger than %d bytes", signoff.MaxFlagValue)
	}
	c, err := canonical.Transform(raw)
	if err != nil {
		return nil, signoff.Errorf(signoff.EINVALID, "value is not valid JSON: %v", err)
	}
	if len(c) > signoff.MaxFlagValue {
		return nil, signoff.Errorf(signoff.EINVALID, "value is larger than %d bytes", signoff.MaxFlagValue)
	}
	var got signoff.FlagType
	switch c[0] {
	case 't', 'f':
		got = signoff.FlagBoolean
	case '"':
		got = signoff.FlagString
	case '{':
		got = signoff.FlagObject
	case '[':
		got = "array"
	case 'n':
		got = "null"
	default:
		got = signoff.FlagNumber
	}
	if got != typ {
		return nil, signoff.Errorf(signoff.EINVALID, "the value of a %s flag must be a JSON %s, not %s", typ, typ, got)
	}
	return c, nil
}

// canReadFlags reports whether by reads flags: staff, agents and the
// server. Reporters never do.
func canReadFlags(by signoff.Actor) bool {
	return isStaff(by) || by.Role.IsAgent()
}

func checkFlagRead(by signoff.Actor) error {
	if !canReadFlags(by) {
		return signoff.Errorf(signoff.EFORBIDDEN, "role %s may not read flags", by.Role)
	}
	return nil
}

// ---- Flags ----

const flagColumns = `workspace_id, project_id, environment, flag_key, type, value, version, updated_at, updated_by`

func scanFlag(sc scanner, f *signoff.Flag) error {
	var typ, value string
	var ua int64
	if err := sc.Scan(&f.WorkspaceID, &f.ProjectID, &f.Environment, &f.Key, &typ, &value, &f.Version, &ua, &f.UpdatedBy); err != nil {
		return err
	}
	f.Type, f.Value, f.UpdatedAt = signoff.FlagType(typ), json.RawMessage(value), fromMicros(ua)
	return nil
}

// sortFlags orders by environment, then key, bytewise, so both backends
// list alike whatever their collation.
func sortFlags(fs []signoff.Flag) {
	slices.SortFunc(fs, func(a, b signoff.Flag) int {
		return cmp.Or(strings.Compare(a.Environment, b.Environment), strings.Compare(a.Key, b.Key))
	})
}

// ListFlags implements signoff.FlagService.
func (s *DB) ListFlags(ctx context.Context, by signoff.Actor, projectID, env string) ([]signoff.Flag, error) {
	if err := checkFlagRead(by); err != nil {
		return nil, err
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return nil, err
	}
	if env != "" {
		if err := checkFlagEnv(env); err != nil {
			return nil, err
		}
	}
	if _, err := s.getProject(ctx, s.db, by.WorkspaceID, projectID); err != nil {
		return nil, err
	}
	q := `SELECT ` + flagColumns + ` FROM flags WHERE workspace_id = $1 AND project_id = $2`
	args := []any{by.WorkspaceID, projectID}
	if env != "" {
		q += ` AND environment = $3`
		args = append(args, env)
	}
	out, err := queryAll(ctx, s.db, scanFlag, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list flags of %s: %w", projectID, err)
	}
	sortFlags(out)
	return out, nil
}

// GetFlag implements signoff.FlagService.
func (s *DB) GetFlag(ctx context.Context, by signoff.Actor, projectID, env, key string) (signoff.Flag, error) {
	if err := checkFlagRead(by); err != nil {
		return signoff.Flag{}, err
	}
	if err := checkFlagAddress(projectID, env, key); err != nil {
		return signoff.Flag{}, err
	}
	return s.getFlag(ctx, s.db, by.WorkspaceID, projectID, env, key, "")
}

func checkFlagAddress(projectID, env, key string) error {
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return err
	}
	if err := checkFlagEnv(env); err != nil {
		return err
	}
	return checkFlagKey(key)
}

// getFlag reads one flag; lock is appended to the query (a row lock in a
// write transaction).
func (s *DB) getFlag(ctx context.Context, q queryer, ws, projectID, env, key, lock string) (signoff.Flag, error) {
	var f signoff.Flag
	err := scanFlag(q.QueryRowContext(ctx, `SELECT `+flagColumns+` FROM flags WHERE project_id = $1 AND environment = $2 AND flag_key = $3 AND workspace_id = $4`+lock,
		projectID, env, key, ws), &f)
	if errors.Is(err, sql.ErrNoRows) {
		return f, signoff.Errorf(signoff.ENOTFOUND, "flag %s not found in environment %s", key, env)
	} else if err != nil {
		return f, fmt.Errorf("get flag %s/%s/%s: %w", projectID, env, key, err)
	}
	return f, nil
}

// CreateFlag implements signoff.FlagService.
func (s *DB) CreateFlag(ctx context.Context, by signoff.Actor, projectID, env, key string, typ signoff.FlagType, value json.RawMessage) (signoff.Flag, error) {
	if by.Role != signoff.RoleOwner {
		return signoff.Flag{}, signoff.Errorf(signoff.EFORBIDDEN, "only owners declare flags, not role %s", by.Role)
	}
	if err := checkFlagAddress(projectID, env, key); err != nil {
		return signoff.Flag{}, err
	}
	c, err := flagValue(typ, value)
	if err != nil {
		return signoff.Flag{}, err
	}
	now := s.clock()
	f := signoff.Flag{WorkspaceID: by.WorkspaceID, ProjectID: projectID, Environment: env, Key: key, Type: typ, Value: c, Version: 1, UpdatedAt: now, UpdatedBy: by.ID}
	digest, err := signoff.FlagState(f)
	if err != nil {
		return signoff.Flag{}, err
	}
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := s.getProject(ctx, tx, by.WorkspaceID, projectID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO flags (project_id, environment, flag_key, workspace_id, type, value, version, created_at, updated_at, updated_by)
			VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $7, $8)`, projectID, env, key, by.WorkspaceID, string(typ), string(c), micros(now), by.ID)
		if err != nil {
			if s.d.IsUnique(err) {
				return signoff.Errorf(signoff.ECONFLICT, "flag %s already exists in environment %s", key, env)
			}
			return err
		}
		_, err = s.appendEvent(ctx, tx, by.WorkspaceID, "", "flag.created", by.ID, map[string]any{
			"project_id": projectID, "environment": env, "key": key, "type": typ, "value": c, "version": 1, "state_digest": digest,
		})
		return err
	})
	if err != nil {
		return signoff.Flag{}, fmt.Errorf("create flag %s/%s: %w", env, key, err)
	}
	return f, nil
}

// SetFlag implements signoff.FlagService. The flag's row is read under a
// lock (SQLite serializes write transactions), so the version compared is
// the version replaced; the guarded UPDATE checks it once more.
func (s *DB) SetFlag(ctx context.Context, by signoff.Actor, w signoff.FlagWrite) (before, after signoff.Flag, err error) {
	if !isServer(by) {
		return before, after, signoff.Errorf(signoff.EFORBIDDEN, "flag changes go through change requests: role %s may not set a flag", by.Role)
	}
	if err := checkFlagAddress(w.ProjectID, w.Env, w.Key); err != nil {
		return before, after, err
	}
	if w.ExpectedVersion < 1 {
		return before, after, signoff.Errorf(signoff.EINVALID, "expected_version must be the version read (1 or more)")
	}
	if err := checkProse("reason", w.Reason, true, maxReason); err != nil {
		return before, after, err
	}
	err = s.InTx(ctx, func(tx *sql.Tx) error {
		var err error
		after = signoff.Flag{}
		if before, err = s.getFlag(ctx, tx, by.WorkspaceID, w.ProjectID, w.Env, w.Key, s.d.ForUpdate); err != nil {
			return err
		}
		value, err := flagValue(before.Type, w.Value)
		if err != nil {
			return err
		}
		if before.Version != w.ExpectedVersion {
			return signoff.Errorf(signoff.ECONFLICT, "flag %s is at version %d, not %d: read it again", w.Key, before.Version, w.ExpectedVersion)
		}
		after = before
		after.Value, after.Version, after.UpdatedAt, after.UpdatedBy = value, before.Version+1, s.clock(), by.ID
		bd, err := signoff.FlagState(before)
		if err != nil {
			return err
		}
		ad, err := signoff.FlagState(after)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE flags SET value = $1, version = $2, updated_at = $3, updated_by = $4
			WHERE project_id = $5 AND environment = $6 AND flag_key = $7 AND version = $8`,
			string(value), after.Version, micros(after.UpdatedAt), by.ID, w.ProjectID, w.Env, w.Key, before.Version)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != 1 {
			return signoff.Errorf(signoff.ECONFLICT, "flag %s changed while it was written: read it again", w.Key)
		}
		_, err = s.appendEvent(ctx, tx, by.WorkspaceID, "", "flag.set", by.ID, map[string]any{
			"project_id": w.ProjectID, "environment": w.Env, "key": w.Key, "type": before.Type, "value": value,
			"before_version": before.Version, "after_version": after.Version,
			"before_state_digest": bd, "after_state_digest": ad, "reason": w.Reason,
		})
		return err
	})
	if err != nil {
		if signoff.ErrorCode(err) != signoff.ECONFLICT {
			before = signoff.Flag{}
		}
		return before, signoff.Flag{}, fmt.Errorf("set flag %s/%s: %w", w.Env, w.Key, err)
	}
	return before, after, nil
}

// ---- OFREP API keys ----

const flagSecretLen = 32 // base32 symbols, 160 bits

const flagSecretSymbols = "0123456789abcdefghjkmnpqrstvwxyz"

// newFlagKeySecret returns a new key id, its secret ("sof_", the id's body,
// "_", 160 random bits) and the SHA-256 of the secret, which is all that
// is stored. It is the scheme of identity's API tokens with a prefix of its
// own.
func newFlagKeySecret() (id, secret string, hash []byte) {
	id = signoff.NewID(signoff.PrefixFlagKey)
	b := make([]byte, flagSecretLen)
	if _, err := rand.Read(b); err != nil {
		panic("sqlstore: crypto/rand failed: " + err.Error())
	}
	for i := range b {
		b[i] = flagSecretSymbols[b[i]&31]
	}
	secret = signoff.FlagKeySecretPrefix + strings.TrimPrefix(id, signoff.PrefixFlagKey+"_") + "_" + string(b)
	return id, secret, identity.HashSecret(secret)
}

// parseFlagKeySecret returns the key id a secret claims to be, or false
// when it is not shaped like an OFREP key at all.
func parseFlagKeySecret(secret string) (string, bool) {
	rest, ok := strings.CutPrefix(secret, signoff.FlagKeySecretPrefix)
	if !ok {
		return "", false
	}
	body, sym, ok := strings.Cut(rest, "_")
	if !ok || len(sym) != flagSecretLen || strings.Trim(sym, flagSecretSymbols) != "" {
		return "", false
	}
	id := signoff.PrefixFlagKey + "_" + body
	if !signoff.ValidID(signoff.PrefixFlagKey, id) {
		return "", false
	}
	return id, true
}

func checkFlagKeyOwner(by signoff.Actor) error {
	if by.Role != signoff.RoleOwner {
		return signoff.Errorf(signoff.EFORBIDDEN, "only owners manage flag keys, not role %s", by.Role)
	}
	return nil
}

const flagKeyColumns = `id, workspace_id, project_id, environment, label, created_at, revoked_at`

func scanFlagKey(sc scanner, k *signoff.FlagKey) error {
	var at int64
	var rev sql.NullInt64
	if err := sc.Scan(&k.ID, &k.WorkspaceID, &k.ProjectID, &k.Env, &k.Label, &at, &rev); err != nil {
		return err
	}
	k.CreatedAt, k.RevokedAt = fromMicros(at), timePtr(rev)
	return nil
}

// CreateFlagKey implements signoff.FlagService.
func (s *DB) CreateFlagKey(ctx context.Context, by signoff.Actor, projectID, env, label string) (signoff.FlagKey, string, error) {
	if err := checkFlagKeyOwner(by); err != nil {
		return signoff.FlagKey{}, "", err
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return signoff.FlagKey{}, "", err
	}
	if err := checkFlagEnv(env); err != nil {
		return signoff.FlagKey{}, "", err
	}
	if err := signoff.CheckText("flag key label", label, false, 100); err != nil {
		return signoff.FlagKey{}, "", err
	}
	id, secret, hash := newFlagKeySecret()
	k := signoff.FlagKey{ID: id, WorkspaceID: by.WorkspaceID, ProjectID: projectID, Env: env, Label: label, CreatedAt: s.clock()}
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		if _, err := s.getProject(ctx, tx, by.WorkspaceID, projectID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO flag_keys (id, workspace_id, project_id, environment, label, secret_sha256, created_by, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, k.ID, k.WorkspaceID, projectID, env, label, hash, by.ID, micros(k.CreatedAt)); err != nil {
			return err
		}
		// The secret never enters the ledger; only the fact that a key exists.
		_, err := s.appendEvent(ctx, tx, by.WorkspaceID, "", "flag_key.created", by.ID, map[string]any{
			"key_id": k.ID, "project_id": projectID, "environment": env, "label": label,
		})
		return err
	})
	if err != nil {
		return signoff.FlagKey{}, "", fmt.Errorf("create flag key for %s/%s: %w", projectID, env, err)
	}
	return k, secret, nil
}

// RevokeFlagKey implements signoff.FlagService.
func (s *DB) RevokeFlagKey(ctx context.Context, by signoff.Actor, id string) (signoff.FlagKey, error) {
	if err := checkFlagKeyOwner(by); err != nil {
		return signoff.FlagKey{}, err
	}
	if err := signoff.CheckID("flag key", signoff.PrefixFlagKey, id); err != nil {
		return signoff.FlagKey{}, err
	}
	var k signoff.FlagKey
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		err := scanFlagKey(tx.QueryRowContext(ctx, `SELECT `+flagKeyColumns+` FROM flag_keys WHERE id = $1 AND workspace_id = $2`+s.d.ForUpdate, id, by.WorkspaceID), &k)
		if errors.Is(err, sql.ErrNoRows) {
			return signoff.Errorf(signoff.ENOTFOUND, "flag key not found")
		} else if err != nil {
			return err
		}
		if k.RevokedAt != nil {
			return signoff.Errorf(signoff.ECONFLICT, "flag key already revoked")
		}
		now := s.clock()
		res, err := tx.ExecContext(ctx, `UPDATE flag_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, micros(now), id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return signoff.Errorf(signoff.ECONFLICT, "flag key already revoked")
		}
		k.RevokedAt = &now
		_, err = s.appendEvent(ctx, tx, by.WorkspaceID, "", "flag_key.revoked", by.ID, map[string]any{
			"key_id": id, "project_id": k.ProjectID, "environment": k.Env,
		})
		return err
	})
	if err != nil {
		return signoff.FlagKey{}, fmt.Errorf("revoke flag key %s: %w", id, err)
	}
	return k, nil
}

// ListFlagKeys implements signoff.FlagService.
func (s *DB) ListFlagKeys(ctx context.Context, by signoff.Actor, projectID, env string) ([]signoff.FlagKey, error) {
	if err := checkFlagKeyOwner(by); err != nil {
		return nil, err
	}
	if err := signoff.CheckID("project", signoff.PrefixProject, projectID); err != nil {
		return nil, err
	}
	if env != "" {
		if err := checkFlagEnv(env); err != nil {
			return nil, err
		}
	}
	if _, err := s.getProject(ctx, s.db, by.WorkspaceID, projectID); err != nil {
		return nil, err
	}
	q := `SELECT ` + flagKeyColumns + ` FROM flag_keys WHERE workspace_id = $1 AND project_id = $2`
	args := []any{by.WorkspaceID, projectID}
	if env != "" {
		q += ` AND environment = $3`
		args = append(args, env)
	}
	out, err := queryAll(ctx, s.db, scanFlagKey, q+` ORDER BY id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list flag keys of %s: %w", projectID, err)
	}
	return out, nil
}

// errBadFlagKey is the one answer for every way an OFREP key can fail.
var errBadFlagKey = signoff.Errorf(signoff.EUNAUTHORIZED, "invalid or revoked flag key")

// dummyFlagKeyHash keeps the work done for an unknown key id the same as
// for a known one.
var dummyFlagKeyHash = identity.HashSecret(signoff.FlagKeySecretPrefix + "dummy")

// ResolveFlagKey implements signoff.FlagService.
func (s *DB) ResolveFlagKey(ctx context.Context, secret string) (ws, projectID, env string, err error) {
	id, ok := parseFlagKeySecret(secret)
	if !ok {
		return "", "", "", errBadFlagKey
	}
	var hash []byte
	var rev sql.NullInt64
	err = s.db.QueryRowContext(ctx, `SELECT workspace_id, project_id, environment, secret_sha256, revoked_at FROM flag_keys WHERE id = $1`, id).
		Scan(&ws, &projectID, &env, &hash, &rev)
	if errors.Is(err, sql.ErrNoRows) {
		identity.SecretMatches(secret, dummyFlagKeyHash)
		return "", "", "", errBadFlagKey
	} else if err != nil {
		return "", "", "", fmt.Errorf("resolve flag key: %w", err)
	}
	if !identity.SecretMatches(secret, hash) || rev.Valid {
		return "", "", "", errBadFlagKey
	}
	return ws, projectID, env, nil
}

// flagHistoryScan bounds how many of the workspace's flag writes
// FlagHistory reads to find one flag's.
const flagHistoryScan = 2000

// FlagHistory lists one flag's writes from the ledger's flag.set events.
func (s *DB) FlagHistory(ctx context.Context, by signoff.Actor, projectID, env, key string, limit int) ([]signoff.FlagChange, error) {
	if err := checkFlagRead(by); err != nil {
		return nil, err
	}
	if err := checkFlagAddress(projectID, env, key); err != nil {
		return nil, err
	}
	if limit < 1 || limit > signoff.MaxFlagHistory {
		return nil, signoff.Errorf(signoff.EINVALID, "limit must be 1..%d", signoff.MaxFlagHistory)
	}
	if _, err := s.getProject(ctx, s.db, by.WorkspaceID, projectID); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, `SELECT seq, actor_id, occurred_at, payload FROM ledger_events
		WHERE workspace_id = $1 AND case_id = '' AND type = 'flag.set' ORDER BY seq DESC LIMIT $2`, by.WorkspaceID, flagHistoryScan)
	if err != nil {
		return nil, fmt.Errorf("flag history: %w", err)
	}
	defer rows.Close()
	out := []signoff.FlagChange{}
	for rows.Next() && len(out) < limit {
		var seq, at int64
		var actor, payload string
		if err := rows.Scan(&seq, &actor, &at, &payload); err != nil {
			return nil, err
		}
		var p struct {
			Project string          `json:"project_id"`
			Env     string          `json:"environment"`
			Key     string          `json:"key"`
			Value   json.RawMessage `json:"value"`
			After   int64           `json:"after_version"`
			Reason  string          `json:"reason"`
			BD      string          `json:"before_state_digest"`
			AD      string          `json:"after_state_digest"`
		}
		if err := json.Unmarshal([]byte(payload), &p); err != nil || p.Project != projectID || p.Env != env || p.Key != key {
			continue
		}
		out = append(out, signoff.FlagChange{Seq: seq, At: fromMicros(at), ActorID: actor, Version: p.After, Value: p.Value,
			Reason: p.Reason, BeforeStateDigest: p.BD, AfterStateDigest: p.AD})
	}
	return out, rows.Err()
}
