package storerules_test

import (
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/channelrules"
	"github.com/signoff-dev/signoff/intake"
	"github.com/signoff-dev/signoff/netguard"
	"github.com/signoff-dev/signoff/storerules"
)

func TestFill(t *testing.T) {
	t.Parallel()
	var in signoff.IntakeRules
	var pk signoff.PasskeyRules
	var ad signoff.AddressingRules
	var ob signoff.OutboxRules
	storerules.Fill(&in, &pk, &ad, &ob)
	if in == nil || pk == nil || ad == nil || ob == nil {
		t.Fatalf("Fill left a rule unset: %v %v %v %v", in, pk, ad, ob)
	}
	if _, ok := in.(intake.Rules); !ok {
		t.Errorf("intake rules are %T", in)
	}
	// A rule the caller set stays: the server's channel rules carry its
	// host allowlist.
	mine := channelrules.WithHosts(netguard.MustAllowlist("127.0.0.1"), nil)
	ob = mine
	storerules.Fill(&in, &pk, &ad, &ob)
	if got, ok := ob.(channelrules.Rules); !ok || got.Hosts != mine.Hosts {
		t.Errorf("Fill replaced the caller's channel rules with %#v", ob)
	}
}
