package web

import (
	"net/http"
	"slices"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/passkey"
)

// The people page: who is in the workspace and which of them are
// disabled, and the approval keys with the revoked ones marked, so that
// whoever handles a lost laptop sees what is still live. Disabling people
// and revoking Ed25519 keys are done with the CLI or the API (the page
// says how); the signed-in person registers and revokes their own
// passkeys here (passkey.go).

type peopleView struct {
	// People is nil when the signed-in role does not read the actor list.
	People       []personRow
	PeopleHidden bool
	Keys         []keyRow
	KeysHidden   bool
	// Owner is whether the reader may disable people and revoke any key.
	Owner bool
	// MyPasskeys are the reader's own passkeys (revoked ones too);
	// CanPasskey whether their role approves, so may register one.
	MyPasskeys []keyRow
	CanPasskey bool
	CSRF       string
}

type personRow struct {
	signoff.Actor
	Agent bool
	// Disabled is when the actor was disabled, for people and as
	// RFC 3339; empty when enabled.
	Disabled, DisabledISO string
}

type keyRow struct {
	signoff.ApproverKey
	// Kind is "passkey" or "ed25519"; RPID the passkey's host.
	Kind, RPID string
	// Holder names the key's person where the reader can see them, else
	// their id.
	Holder string
	// Revoked is when the key was revoked, for people and as RFC 3339;
	// empty while it is valid.
	Revoked, RevokedISO string
}

func (s *server) peopleRoutes() {
	s.mux.HandleFunc("GET /people", s.signedIn(s.peoplePage))
	s.passkeyRoutes()
}

func (s *server) peoplePage(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx, me := r.Context(), sess.Actor
	v := peopleView{Owner: me.Role == signoff.RoleOwner, CSRF: sess.CSRF,
		CanPasskey: me.Role == signoff.RoleOwner || me.Role == signoff.RoleOperator}
	names := map[string]string{me.ID: me.Name}
	if identity.Authorize(me.Role, identity.OpActorRead) == nil {
		actors, err := s.store.ListActors(ctx, me.WorkspaceID)
		if err != nil {
			return err
		}
		for _, a := range actors {
			names[a.ID] = a.Name
			d, iso := since(a.DisabledAt)
			v.People = append(v.People, personRow{Actor: a, Agent: a.Role.IsAgent(), Disabled: d, DisabledISO: iso})
		}
		// Disabled people last, each group by name: the live ones are what
		// a reader checks first.
		slices.SortStableFunc(v.People, func(a, b personRow) int {
			if (a.DisabledAt == nil) != (b.DisabledAt == nil) {
				if a.DisabledAt == nil {
					return -1
				}
				return 1
			}
			return compareStrings(a.Name, b.Name)
		})
	} else {
		v.PeopleHidden = true
	}
	keys, err := s.store.ListKeys(ctx, me)
	switch {
	case signoff.ErrorCode(err) == signoff.EFORBIDDEN:
		v.KeysHidden = true
	case err != nil:
		return err
	}
	for _, k := range keys {
		holder := names[k.ActorID]
		if holder == "" {
			holder = k.ActorID
		}
		rv, iso := since(k.RevokedAt)
		row := keyRow{ApproverKey: k, Kind: "ed25519", Holder: holder, Revoked: rv, RevokedISO: iso}
		if c, err := passkey.ParseCredential(k.PublicKey); err == nil {
			row.Kind, row.RPID = "passkey", c.RPID
			if k.ActorID == me.ID {
				v.MyPasskeys = append(v.MyPasskeys, row)
			}
		}
		v.Keys = append(v.Keys, row)
	}
	script := ""
	if v.CanPasskey {
		script = "passkey.js"
	}
	s.render(w, r, http.StatusOK, "people", page{Title: "People and keys", Me: &me, CSRF: sess.CSRF, Script: script, Body: v})
	return nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// since formats a disabled or revoked time for people and as RFC 3339;
// nil is empty.
func since(t *time.Time) (human, iso string) {
	if t == nil {
		return "", ""
	}
	return when(*t), t.UTC().Format(time.RFC3339)
}
