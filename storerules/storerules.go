// Package storerules gives a store the rules it applies inside its
// transactions (sqlstore.Options' Intake, Passkeys, Addressing and Outbox):
// the airlock over reporter text, the WebAuthn checks, who may address an
// agent, and what a notification channel may be. The engines and every
// command that opens a store call Fill, so no opened store runs without
// them and the list is written once.
package storerules

import (
	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/addressing"
	"github.com/signoff-dev/signoff/channelrules"
	"github.com/signoff-dev/signoff/intake"
	"github.com/signoff-dev/signoff/passkey"
)

// Fill sets each rule that is nil to the real one and leaves the others
// (a caller's own channel rules with a host allowlist, say) as given.
func Fill(in *signoff.IntakeRules, pk *signoff.PasskeyRules, ad *signoff.AddressingRules, ob *signoff.OutboxRules) {
	if *in == nil {
		*in = intake.Rules{}
	}
	if *pk == nil {
		*pk = passkey.Rules{}
	}
	if *ad == nil {
		*ad = addressing.Rules{}
	}
	if *ob == nil {
		*ob = channelrules.Rules{}
	}
}
