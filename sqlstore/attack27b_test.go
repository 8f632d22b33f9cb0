package sqlstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/signoff-dev/signoff/addressing"
	"github.com/signoff-dev/signoff/channelrules"
	"github.com/signoff-dev/signoff/intake"
	"github.com/signoff-dev/signoff/passkey"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// TestAttack27bTypedNilRules: New and Open promise to refuse a store
// without its rules ("no write path can skip the airlock"), but they only
// compare the interfaces with nil. A typed nil pointer (*intake.Rules)(nil)
// is a non-nil interface: the store opens, and the first SubmitReport,
// Answer, RegisterPasskey or PutChannel panics inside the write path
// instead of the store being refused at open, where the operator sees it.
func TestAttack27bTypedNilRules(t *testing.T) {
	t.Parallel()
	db, err := sqlite.OpenDB(filepath.Join(t.TempDir(), "typednil.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, tt := range []struct {
		name string
		o    sqlstore.Options
	}{
		{"nil *intake.Rules", sqlstore.Options{Intake: (*intake.Rules)(nil), Passkeys: passkey.Rules{}, Addressing: addressing.Rules{}, Outbox: channelrules.Rules{}}},
		{"nil *passkey.Rules", sqlstore.Options{Intake: intake.Rules{}, Passkeys: (*passkey.Rules)(nil), Addressing: addressing.Rules{}, Outbox: channelrules.Rules{}}},
		{"nil *addressing.Rules", sqlstore.Options{Intake: intake.Rules{}, Passkeys: passkey.Rules{}, Addressing: (*addressing.Rules)(nil), Outbox: channelrules.Rules{}}},
		{"nil *channelrules.Rules", sqlstore.Options{Intake: intake.Rules{}, Passkeys: passkey.Rules{}, Addressing: addressing.Rules{}, Outbox: (*channelrules.Rules)(nil)}},
	} {
		if s, err := sqlstore.New(db, sqlite.Dialect, tt.o); err == nil {
			t.Errorf("%s: New opened a store (%p) with a rule that panics on first use; want it refused", tt.name, s)
		}
	}
	// The same through the engine: sqlite.Open fills only == nil rules.
	o := sqlstore.Options{Intake: (*intake.Rules)(nil)}
	if s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "typednil2.db"), o); err == nil {
		s.Close()
		t.Errorf("sqlite.Open kept a typed-nil intake rule instead of refusing or replacing it")
	}
}

// TestAttack27bSetChannelRulesTypedNil: SetChannelRules documents "a nil r
// changes nothing: the store never runs without channel rules", but a
// typed nil *channelrules.Rules passes its == nil check and replaces the
// host rule the store was opened with; the notify desk's Guard() type
// assertion then succeeds on a nil pointer and every dial panics.
func TestAttack27bSetChannelRulesTypedNil(t *testing.T) {
	t.Parallel()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "setnil.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetChannelRules((*channelrules.Rules)(nil))
	if r, ok := s.ChannelRules().(*channelrules.Rules); ok && r == nil {
		t.Fatalf("SetChannelRules(typed nil) replaced the store's channel rules with a nil pointer")
	}
}
