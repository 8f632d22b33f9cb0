package sqlstore_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/addressing"
	"github.com/signoff-dev/signoff/channelrules"
	"github.com/signoff-dev/signoff/intake"
	"github.com/signoff-dev/signoff/passkey"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// TestRulesRequired: the store applies no airlock and no WebAuthn check of
// its own, so a store without its rules must not open, or its
// SubmitReport, Answer and RequestInfo would keep hostile text as it came,
// RegisterPasskey and AdvancePasskeyCounter pass unchecked values and
// PostMessage open tasks for mentions no policy admits, and PutChannel
// store a channel no rule has checked. The
// engines give the rules; opening the store directly without them is
// refused, before any migration runs.
func TestRulesRequired(t *testing.T) {
	t.Parallel()
	db, err := sqlite.OpenDB(filepath.Join(t.TempDir(), "bare.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tt := range []struct {
		name    string
		o       sqlstore.Options
		missing string
	}{
		{"none", sqlstore.Options{}, "intake"},
		{"no intake rules", sqlstore.Options{Passkeys: passkey.Rules{}, Addressing: addressing.Rules{}, Outbox: channelrules.Rules{}}, "intake"},
		{"no passkey rules", sqlstore.Options{Intake: intake.Rules{}, Addressing: addressing.Rules{}, Outbox: channelrules.Rules{}}, "passkey"},
		{"no addressing rules", sqlstore.Options{Intake: intake.Rules{}, Passkeys: passkey.Rules{}, Outbox: channelrules.Rules{}}, "addressing"},
		{"no outbox rules", sqlstore.Options{Intake: intake.Rules{}, Passkeys: passkey.Rules{}, Addressing: addressing.Rules{}}, "outbox"},
		// A nil pointer is a non-nil interface that panics on first use.
		{"nil *intake.Rules", sqlstore.Options{Intake: (*intake.Rules)(nil), Passkeys: passkey.Rules{}, Addressing: addressing.Rules{}, Outbox: channelrules.Rules{}}, "intake"},
		{"nil *passkey.Rules", sqlstore.Options{Intake: intake.Rules{}, Passkeys: (*passkey.Rules)(nil), Addressing: addressing.Rules{}, Outbox: channelrules.Rules{}}, "passkey"},
		{"nil *addressing.Rules", sqlstore.Options{Intake: intake.Rules{}, Passkeys: passkey.Rules{}, Addressing: (*addressing.Rules)(nil), Outbox: channelrules.Rules{}}, "addressing"},
		{"nil *channelrules.Rules", sqlstore.Options{Intake: intake.Rules{}, Passkeys: passkey.Rules{}, Addressing: addressing.Rules{}, Outbox: (*channelrules.Rules)(nil)}, "outbox"},
	} {
		if s, err := sqlstore.New(db, sqlite.Dialect, tt.o); err == nil || !strings.Contains(err.Error(), tt.missing) {
			t.Fatalf("%s: New = %v, %v; want refused for %s", tt.name, s, err, tt.missing)
		}
		if s, err := sqlstore.Open(context.Background(), db, sqlite.Dialect, sqlite.Schema(db), tt.o); err == nil || !strings.Contains(err.Error(), tt.missing) {
			t.Fatalf("%s: Open = %v, %v; want refused for %s", tt.name, s, err, tt.missing)
		}
	}
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM sqlite_master`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a refused Open left %d schema objects (%v)", n, err)
	}
}

// TestRulesNilPointers: the engines fill only rules that are nil, so a nil
// pointer given to sqlite.Open is refused, not kept; and SetChannelRules
// ignores one instead of replacing the store's host rule with it (the
// notify desk would then dial through a nil guard).
func TestRulesNilPointers(t *testing.T) {
	t.Parallel()
	o := sqlstore.Options{Intake: (*intake.Rules)(nil)}
	if s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "typednil.db"), o); err == nil {
		s.Close()
		t.Errorf("sqlite.Open kept a nil *intake.Rules instead of refusing it")
	}
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "setnil.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetChannelRules((*channelrules.Rules)(nil))
	if _, ok := s.ChannelRules().(channelrules.Rules); !ok {
		t.Fatalf("SetChannelRules(nil pointer) replaced the store's channel rules with %#v", s.ChannelRules())
	}
}
