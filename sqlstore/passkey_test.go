package sqlstore_test

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/passkey"
	"github.com/signoff-dev/signoff/passkey/passkeytest"
	"github.com/signoff-dev/signoff/pgtest"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// TestPasskeyStore runs migration 00016 and the passkey storage on both
// backends: a passkey is an approval key of its person with its
// credential on the ledger, registered once, its counter only goes up,
// revoking it is revoking a key, and a session says whether a token or a
// one-time link opened it.
// pkOrigin is the origin the store tests register passkeys on.
const pkOrigin = "http://localhost:8080"

func TestPasskeyStore(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(t *testing.T, o sqlstore.Options) *sqlstore.DB{
		"sqlite": func(t *testing.T, o sqlstore.Options) *sqlstore.DB {
			s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "passkey.db"), o)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		"postgres": func(t *testing.T, o sqlstore.Options) *sqlstore.DB {
			s, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), o)
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, key, _ := ed25519.GenerateKey(nil)
			s := open(t, sqlstore.Options{Signer: key})
			t.Cleanup(func() { s.Close() })
			testPasskeyStore(t, s)
		})
	}
}

func testPasskeyStore(t *testing.T, s *sqlstore.DB) {
	ctx := context.Background()
	_, owner, err := s.CreateWorkspace(ctx, "Acme", "olivia")
	if err != nil {
		t.Fatal(err)
	}
	op, err := s.CreateActor(ctx, owner, "oscar", signoff.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	viewer, err := s.CreateActor(ctx, owner, "vic", signoff.RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	a := passkeytest.New("localhost")
	if _, err := s.RegisterPasskey(ctx, viewer, a.Credential, 0, pkOrigin); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("a viewer registered a passkey: %v", err)
	}
	k, err := s.RegisterPasskey(ctx, op, a.Credential, 3, pkOrigin)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetKey(ctx, op.WorkspaceID, k.ID)
	if err != nil || got.ActorID != op.ID || got.PublicKey != a.Credential.Encode() || k.ID != a.Credential.KeyID() {
		t.Fatalf("stored key %+v, %v", got, err)
	}
	if _, err := s.RegisterPasskey(ctx, op, a.Credential, 0, pkOrigin); signoff.ErrorCode(err) != signoff.ECONFLICT {
		t.Fatalf("registered twice: %v", err)
	}
	// The ledger carries the credential for offline verifiers.
	var payload string
	if err := s.SQL().QueryRowContext(ctx, `SELECT payload FROM ledger_events WHERE workspace_id = $1 AND type = 'passkey.registered'`, op.WorkspaceID).Scan(&payload); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(payload, k.ID) || !strings.Contains(payload, passkey.PEMType) {
		t.Fatalf("ledger payload %s", payload)
	}
	// Approvals are taken only on the origin the passkey was registered
	// on: another port of the same host is another page.
	for _, o := range []string{"http://localhost:1", "https://localhost:8443", ""} {
		if err := s.AdvancePasskeyCounter(ctx, op.WorkspaceID, k.ID, o, 9); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Fatalf("an assertion on %q was taken: %v", o, err)
		}
	}
	// A registration names an origin on the credential's RP id.
	for _, o := range []string{"", "http://evil.example", "https://localhost.evil.example", "http://localhost:8080/path"} {
		if _, err := s.RegisterPasskey(ctx, op, passkeytest.New("localhost").Credential, 0, o); signoff.ErrorCode(err) != signoff.EINVALID {
			t.Fatalf("registered on origin %q: %v", o, err)
		}
	}
	// The counter: up is fine, the same or lower is a clone signal.
	if err := s.AdvancePasskeyCounter(ctx, op.WorkspaceID, k.ID, pkOrigin, 4); err != nil {
		t.Fatal(err)
	}
	for _, n := range []uint32{4, 2, 0} {
		if err := s.AdvancePasskeyCounter(ctx, op.WorkspaceID, k.ID, pkOrigin, n); signoff.ErrorCode(err) != signoff.ECONFLICT {
			t.Fatalf("counter 4 -> %d: %v", n, err)
		}
	}
	if n, err := s.PasskeyCounter(ctx, op.WorkspaceID, k.ID); err != nil || n != 4 {
		t.Fatalf("counter %d, %v", n, err)
	}
	// A counterless authenticator (always 0) is accepted.
	z := passkeytest.New("localhost")
	zk, err := s.RegisterPasskey(ctx, owner, z.Credential, 0, pkOrigin)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.AdvancePasskeyCounter(ctx, owner.WorkspaceID, zk.ID, pkOrigin, 0); err != nil {
			t.Fatalf("zero counter: %v", err)
		}
	}
	// Revoked like any key, by its holder.
	if _, _, err := s.RevokeKey(ctx, op, k.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetKey(ctx, op.WorkspaceID, k.ID); got.RevokedAt == nil {
		t.Fatal("passkey not revoked")
	}
	// Sessions: opened with a token, or with a one-time link.
	_, tok, err := s.CreateToken(ctx, owner, op.ID, "web", nil)
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := s.SignIn(ctx, tok, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if by, err := s.WebSessionByToken(ctx, secret); err != nil || !by {
		t.Fatalf("token session: %v %v", by, err)
	}
	code, _, err := s.CreateLoginLink(ctx, op.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err = s.SignInWithLink(ctx, code, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if by, err := s.WebSessionByToken(ctx, secret); err != nil || by {
		t.Fatalf("link session: %v %v", by, err)
	}
}
