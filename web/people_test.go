package web_test

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/keys"
)

// TestPeoplePage: the owner sees who is disabled and which keys are
// revoked; an operator sees the people and their own keys; a viewer
// neither the people nor anyone's keys; a disabled person's session ends
// at once.
func TestPeoplePage(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	op := r.actors[signoff.RoleOperator]
	register := func(a signoff.Actor) signoff.ApproverKey {
		pub, _, err := ed25519.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := keys.EncodePublic(pub)
		if err != nil {
			t.Fatal(err)
		}
		k, err := r.store.RegisterKey(ctx, a, string(p))
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	opKey, ownerKey := register(op), register(r.owner)
	if _, _, err := r.store.RevokeKey(ctx, op, opKey.ID); err != nil {
		t.Fatal(err)
	}
	planner := r.actors[signoff.RolePlanner]
	if _, _, err := r.store.DisableActor(ctx, r.owner, planner.ID); err != nil {
		t.Fatal(err)
	}

	owner := r.visitor(t)
	owner.signIn(signoff.RoleOwner)
	operator := r.visitor(t)
	operator.signIn(signoff.RoleOperator)
	viewer := r.visitor(t)
	viewer.signIn(signoff.RoleViewer)

	tests := []struct {
		name     string
		v        *visitor
		has, not []string // element id → must contain
		rows     map[string]string
	}{
		{"owner", owner, []string{"people", "keys"}, []string{"people-hidden", "keys-hidden"},
			map[string]string{"person-" + planner.ID: "Disabled", "person-" + op.ID: "Enabled", "key-" + opKey.ID: "Revoked", "key-" + ownerKey.ID: "Valid"}},
		{"operator", operator, []string{"people", "keys"}, []string{"key-" + ownerKey.ID},
			map[string]string{"person-" + planner.ID: "Disabled", "key-" + opKey.ID: "Revoked"}},
		{"viewer", viewer, []string{"people-hidden", "no-keys"}, []string{"people", "keys"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.v.get("/people")
			if got.status != http.StatusOK {
				t.Fatalf("GET /people = %d", got.status)
			}
			for _, id := range tt.has {
				if elementByID(got.body, id) == "" {
					t.Errorf("no #%s", id)
				}
			}
			for _, id := range tt.not {
				if elementByID(got.body, id) != "" {
					t.Errorf("#%s is shown", id)
				}
			}
			for id, want := range tt.rows {
				if e := elementByID(got.body, id); !strings.Contains(e, want) {
					t.Errorf("#%s = %q, want %q", id, e, want)
				}
			}
		})
	}

	// Disabling the operator ends their session on the next page.
	if _, _, err := r.store.DisableActor(ctx, r.owner, op.ID); err != nil {
		t.Fatal(err)
	}
	if got := operator.get("/people"); got.status != http.StatusSeeOther || got.header.Get("Location") != "/login?next=%2Fpeople" {
		t.Fatalf("a disabled person's page = %d %s", got.status, got.header.Get("Location"))
	}
	if got := owner.get("/people"); got.status != http.StatusOK || !strings.Contains(elementByID(got.body, "person-"+op.ID), "Disabled") {
		t.Fatalf("the owner's page after disabling the operator = %d", got.status)
	}
}
