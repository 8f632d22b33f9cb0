package storetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/signoff-dev/signoff"
)

// testFlags runs the feature-flag store's tests, each on its own store.
func testFlags(t *testing.T, b Backend) {
	for _, tt := range []struct {
		name string
		fn   func(*testing.T, Backend)
	}{
		{"DeclareAndRead", testFlagDeclareAndRead},
		{"DeclareValidation", testFlagDeclareValidation},
		{"WhoDeclares", testFlagWhoDeclares},
		{"Set", testFlagSet},
		{"WhoSets", testFlagWhoSets},
		{"SetValidation", testFlagSetValidation},
		{"SetRace", testFlagSetRace},
		{"Keys", testFlagKeys},
		{"KeyRefusals", testFlagKeyRefusals},
		{"HistoryReadOnly", testFlagHistoryReadOnly},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, b)
		})
	}
}

// flagKit is a store with a few flags declared in production and staging.
type flagKit struct {
	*bundle
	cli   signoff.Actor
	sys   signoff.Actor
	other signoff.Actor // the owner of another workspace
}

func newFlagKit(t *testing.T, b Backend) *flagKit {
	tb := setup(t, b)
	_, other, err := tb.store.CreateWorkspace(tb.ctx, "Globex", "bob")
	if err != nil {
		t.Fatal(err)
	}
	return &flagKit{bundle: tb, cli: signoff.CLIActor(tb.ws.ID), sys: signoff.SystemActor(tb.ws.ID), other: other}
}

func (k *flagKit) declare(t *testing.T, env, key string, typ signoff.FlagType, value string) signoff.Flag {
	t.Helper()
	f, err := k.store.CreateFlag(k.ctx, k.owner, k.proj.ID, env, key, typ, json.RawMessage(value))
	if err != nil {
		t.Fatalf("CreateFlag(%s/%s): %v", env, key, err)
	}
	return f
}

// stateOf is FlagState, failing the test on error.
func stateOf(t *testing.T, f signoff.Flag) string {
	t.Helper()
	d, err := signoff.FlagState(f)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// testFlagDeclareAndRead: every type round-trips in canonical form at
// version 1; staff, agents and the server read; reporters do not; another
// workspace sees nothing.
func testFlagDeclareAndRead(t *testing.T, b Backend) {
	k := newFlagKit(t, b)
	s, ctx := k.store, k.ctx
	declared := []struct {
		env, key  string
		typ       signoff.FlagType
		in, canon string
	}{
		{"production", "checkout_v2_new_payment_flow", signoff.FlagBoolean, ` true `, `true`},
		{"production", "banner.text", signoff.FlagString, `"Hello, \u00e9t\u00e9"`, `"Hello, été"`},
		{"production", "max-items", signoff.FlagNumber, `1.50E2`, `150`},
		{"production", "theme", signoff.FlagObject, `{ "b": [1, 2], "a": {"z": null} }`, `{"a":{"z":null},"b":[1,2]}`},
		{"staging", "checkout_v2_new_payment_flow", signoff.FlagBoolean, `false`, `false`},
		{"staging", "Zed", signoff.FlagNumber, `-0.25`, `-0.25`},
	}
	before := k.head(t)
	for _, d := range declared {
		f := k.declare(t, d.env, d.key, d.typ, d.in)
		if f.Version != 1 || string(f.Value) != d.canon || f.Type != d.typ || f.UpdatedBy != k.owner.ID ||
			f.WorkspaceID != k.ws.ID || f.ProjectID != k.proj.ID || f.Environment != d.env || f.Key != d.key || f.UpdatedAt.IsZero() {
			t.Fatalf("declared %s/%s: %+v", d.env, d.key, f)
		}
	}
	if n := k.head(t) - before; n != int64(len(declared)) {
		t.Fatalf("%d events for %d declarations", n, len(declared))
	}

	readers := []signoff.Actor{k.owner, k.cli, k.sys, k.actor(t, "op", signoff.RoleOperator), k.actor(t, "vi", signoff.RoleViewer)}
	for _, r := range signoff.AgentRoles {
		readers = append(readers, k.actor(t, "agent "+string(r), r))
	}
	for _, by := range readers {
		f, err := s.GetFlag(ctx, by, k.proj.ID, "production", "theme")
		if err != nil || string(f.Value) != `{"a":{"z":null},"b":[1,2]}` || f.Type != signoff.FlagObject {
			t.Fatalf("GetFlag as %s: %+v %v", by.Role, f, err)
		}
		all, err := s.ListFlags(ctx, by, k.proj.ID, "")
		if err != nil || len(all) != len(declared) {
			t.Fatalf("ListFlags as %s: %d flags, %v", by.Role, len(all), err)
		}
	}
	// Lists are ordered by environment, then key, bytewise.
	all, _ := s.ListFlags(ctx, k.owner, k.proj.ID, "")
	var order []string
	for _, f := range all {
		order = append(order, f.Environment+"/"+f.Key)
	}
	if want := "production/banner.text production/checkout_v2_new_payment_flow production/max-items production/theme staging/Zed staging/checkout_v2_new_payment_flow"; strings.Join(order, " ") != want {
		t.Fatalf("order %v", order)
	}
	prod, err := s.ListFlags(ctx, k.owner, k.proj.ID, "production")
	if err != nil || len(prod) != 4 {
		t.Fatalf("production flags: %d %v", len(prod), err)
	}
	none, err := s.ListFlags(ctx, k.owner, k.proj.ID, "qa")
	if err != nil || none == nil || len(none) != 0 {
		t.Fatalf("an environment without flags: %v %v", none, err)
	}
	// The same key in two environments is two flags.
	st, _ := s.GetFlag(ctx, k.owner, k.proj.ID, "staging", "checkout_v2_new_payment_flow")
	pr, _ := s.GetFlag(ctx, k.owner, k.proj.ID, "production", "checkout_v2_new_payment_flow")
	if string(st.Value) != "false" || string(pr.Value) != "true" || stateOf(t, st) == stateOf(t, pr) {
		t.Fatalf("staging %s, production %s", st.Value, pr.Value)
	}

	rep := k.actor(t, "rep", signoff.RoleReporter)
	_, err = s.GetFlag(ctx, rep, k.proj.ID, "production", "theme")
	wantCode(t, err, signoff.EFORBIDDEN)
	_, err = s.ListFlags(ctx, rep, k.proj.ID, "")
	wantCode(t, err, signoff.EFORBIDDEN)

	for name, err := range map[string]error{
		"missing flag":         second(s.GetFlag(ctx, k.owner, k.proj.ID, "production", "nope")),
		"missing env":          second(s.GetFlag(ctx, k.owner, k.proj.ID, "qa", "theme")),
		"missing project":      second(s.GetFlag(ctx, k.owner, signoff.NewID(signoff.PrefixProject), "production", "theme")),
		"foreign get":          second(s.GetFlag(ctx, k.other, k.proj.ID, "production", "theme")),
		"foreign server get":   second(s.GetFlag(ctx, signoff.SystemActor(k.other.WorkspaceID), k.proj.ID, "production", "theme")),
		"foreign list":         second(s.ListFlags(ctx, k.other, k.proj.ID, "")),
		"missing project list": second(s.ListFlags(ctx, k.owner, signoff.NewID(signoff.PrefixProject), "")),
	} {
		if signoff.ErrorCode(err) != signoff.ENOTFOUND {
			t.Errorf("%s: %v, want not_found", name, err)
		}
	}
	for name, err := range map[string]error{
		"bad project id": second(s.GetFlag(ctx, k.owner, "prj_nope", "production", "theme")),
		"bad env":        second(s.GetFlag(ctx, k.owner, k.proj.ID, "Prod", "theme")),
		"bad key":        second(s.GetFlag(ctx, k.owner, k.proj.ID, "production", "a/b")),
		"bad list env":   second(s.ListFlags(ctx, k.owner, k.proj.ID, "Prod")),
	} {
		if signoff.ErrorCode(err) != signoff.EINVALID {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}

	// One flag.created event per flag, with the value and the state digest.
	evs := k.eventsOf(t, "flag.created")
	if len(evs) != len(declared) {
		t.Fatalf("%d flag.created events", len(evs))
	}
	p := payloadOf(t, evs[3])
	theme, _ := s.GetFlag(ctx, k.owner, k.proj.ID, "production", "theme")
	if evs[3].CaseID != "" || evs[3].ActorID != k.owner.ID || p["key"] != "theme" || p["environment"] != "production" ||
		p["type"] != "object" || p["state_digest"] != stateOf(t, theme) || p["version"] != float64(1) {
		t.Fatalf("flag.created %+v %s", evs[3], evs[3].Payload)
	}
	k.verify(t)
}

func second[T any](_ T, err error) error { return err }

func third[A, B any](_ A, _ B, err error) error { return err }

// testFlagDeclareValidation: keys, environments, types and values are
// checked before anything is written.
func testFlagDeclareValidation(t *testing.T, b Backend) {
	k := newFlagKit(t, b)
	k.declare(t, "production", "taken", signoff.FlagBoolean, "true")
	big := `"` + strings.Repeat("x", signoff.MaxFlagValue) + `"`
	bigObject := `{"a":"` + strings.Repeat("x", signoff.MaxFlagValue-10) + `"}`
	cases := []struct {
		name, env, key string
		typ            signoff.FlagType
		value          string
		code           string
	}{
		{"empty key", "production", "", signoff.FlagBoolean, "true", signoff.EINVALID},
		{"key with a slash", "production", "a/b", signoff.FlagBoolean, "true", signoff.EINVALID},
		{"key with a space", "production", "a b", signoff.FlagBoolean, "true", signoff.EINVALID},
		{"key with a colon", "production", "a:b", signoff.FlagBoolean, "true", signoff.EINVALID},
		{"key dot", "production", ".", signoff.FlagBoolean, "true", signoff.EINVALID},
		{"key dot dot", "production", "..", signoff.FlagBoolean, "true", signoff.EINVALID},
		{"key non-ASCII", "production", "drapeau_é", signoff.FlagBoolean, "true", signoff.EINVALID},
		{"key too long", "production", strings.Repeat("k", signoff.MaxFlagKey+1), signoff.FlagBoolean, "true", signoff.EINVALID},
		{"empty env", "", "k", signoff.FlagBoolean, "true", signoff.EINVALID},
		{"env upper case", "Production", "k", signoff.FlagBoolean, "true", signoff.EINVALID},
		{"env with a dot", "prod.eu", "k", signoff.FlagBoolean, "true", signoff.EINVALID},
		{"env too long", strings.Repeat("e", signoff.MaxFlagEnv+1), "k", signoff.FlagBoolean, "true", signoff.EINVALID},
		{"unknown type", "production", "k", "integer", "1", signoff.EINVALID},
		{"no type", "production", "k", "", "1", signoff.EINVALID},
		{"no value", "production", "k", signoff.FlagBoolean, "", signoff.EINVALID},
		{"not JSON", "production", "k", signoff.FlagString, "hello", signoff.EINVALID},
		{"two values", "production", "k", signoff.FlagBoolean, "true false", signoff.EINVALID},
		{"duplicate keys", "production", "k", signoff.FlagObject, `{"a":1,"a":2}`, signoff.EINVALID},
		{"boolean as string", "production", "k", signoff.FlagBoolean, `"true"`, signoff.EINVALID},
		{"boolean as number", "production", "k", signoff.FlagBoolean, `1`, signoff.EINVALID},
		{"null boolean", "production", "k", signoff.FlagBoolean, `null`, signoff.EINVALID},
		{"string as number", "production", "k", signoff.FlagString, `3`, signoff.EINVALID},
		{"number as string", "production", "k", signoff.FlagNumber, `"3"`, signoff.EINVALID},
		{"number overflow", "production", "k", signoff.FlagNumber, `1e400`, signoff.EINVALID},
		{"object as array", "production", "k", signoff.FlagObject, `[1,2]`, signoff.EINVALID},
		{"object as string", "production", "k", signoff.FlagObject, `"{}"`, signoff.EINVALID},
		{"object as null", "production", "k", signoff.FlagObject, `null`, signoff.EINVALID},
		{"value too large", "production", "k", signoff.FlagString, big, signoff.EINVALID},
		{"object too large", "production", "k", signoff.FlagObject, bigObject + strings.Repeat(" ", 20), signoff.EINVALID},
		{"bad project id", "production", "k", signoff.FlagBoolean, "true", signoff.EINVALID},
		{"unknown project", "production", "k", signoff.FlagBoolean, "true", signoff.ENOTFOUND},
		{"taken", "production", "taken", signoff.FlagString, `"x"`, signoff.ECONFLICT},
	}
	before := k.head(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pid := k.proj.ID
			switch c.name {
			case "bad project id":
				pid = "prj_x"
			case "unknown project":
				pid = signoff.NewID(signoff.PrefixProject)
			}
			_, err := k.store.CreateFlag(k.ctx, k.owner, pid, c.env, c.key, c.typ, json.RawMessage(c.value))
			wantCode(t, err, c.code)
		})
	}
	// Another workspace's owner cannot declare in our project.
	_, err := k.store.CreateFlag(k.ctx, k.other, k.proj.ID, "production", "k", signoff.FlagBoolean, json.RawMessage("true"))
	wantCode(t, err, signoff.ENOTFOUND)
	k.unchanged(t, before, "refused declarations")

	// The limits themselves are allowed.
	k.declare(t, strings.Repeat("e", signoff.MaxFlagEnv), strings.Repeat("K", signoff.MaxFlagKey), signoff.FlagString,
		`"`+strings.Repeat("x", signoff.MaxFlagValue-2)+`"`)
	k.declare(t, "a_b-c", "A.b_c-9...", signoff.FlagObject, `{}`)
	k.verify(t)
}

// testFlagWhoDeclares: declaring is for owners (and the CLI) alone.
func testFlagWhoDeclares(t *testing.T, b Backend) {
	k := newFlagKit(t, b)
	refused := []signoff.Actor{k.sys, k.actor(t, "op", signoff.RoleOperator), k.actor(t, "vi", signoff.RoleViewer), k.actor(t, "rep", signoff.RoleReporter)}
	for _, r := range signoff.AgentRoles {
		refused = append(refused, k.actor(t, "agent "+string(r), r))
	}
	before := k.head(t)
	for _, by := range refused {
		_, err := k.store.CreateFlag(k.ctx, by, k.proj.ID, "production", "k", signoff.FlagBoolean, json.RawMessage("true"))
		if signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Errorf("CreateFlag as %s: %v, want forbidden", by.Role, err)
		}
	}
	k.unchanged(t, before, "refused declarations")
	f, err := k.store.CreateFlag(k.ctx, k.cli, k.proj.ID, "production", "k", signoff.FlagBoolean, json.RawMessage("true"))
	if err != nil || f.UpdatedBy != "cli" {
		t.Fatalf("CreateFlag as the CLI: %+v %v", f, err)
	}
	if evs := k.eventsOf(t, "flag.created"); len(evs) != 1 || evs[0].ActorID != "cli" {
		t.Fatalf("flag.created %+v", evs)
	}
}

// testFlagSet: a write moves the version by one and records before and
// after state digests; a stale version is refused with the flag as it is.
func testFlagSet(t *testing.T, b Backend) {
	k := newFlagKit(t, b)
	s, ctx := k.store, k.ctx
	f := k.declare(t, "production", "checkout_v2_new_payment_flow", signoff.FlagBoolean, "true")
	obj := k.declare(t, "production", "theme", signoff.FlagObject, `{"color":"blue"}`)
	k.clock.Advance(1e9)

	before, after, err := s.SetFlag(ctx, k.sys, signoff.FlagWrite{ProjectID: k.proj.ID, Env: "production", Key: f.Key,
		Value: json.RawMessage(" false "), ExpectedVersion: 1, Reason: "change case_1: checkout v2 fails with 500s"})
	if err != nil {
		t.Fatal(err)
	}
	if before.Version != 1 || string(before.Value) != "true" || after.Version != 2 || string(after.Value) != "false" ||
		after.UpdatedBy != "system" || !after.UpdatedAt.After(before.UpdatedAt) || after.Type != signoff.FlagBoolean {
		t.Fatalf("SetFlag: before %+v after %+v", before, after)
	}
	got, _ := s.GetFlag(ctx, k.owner, k.proj.ID, "production", f.Key)
	if got.Version != 2 || string(got.Value) != "false" || stateOf(t, got) != stateOf(t, after) || !got.UpdatedAt.Equal(after.UpdatedAt) {
		t.Fatalf("read back %+v, want %+v", got, after)
	}
	// The state digest is over exactly {project, environment, key, type,
	// value, version}.
	want := sha256.Sum256([]byte(`{"environment":"production","key":"checkout_v2_new_payment_flow","project":"` + k.proj.ID + `","type":"boolean","value":false,"version":2}`))
	if stateOf(t, got) != hex.EncodeToString(want[:]) {
		t.Fatalf("state digest %s, want %x", stateOf(t, got), want)
	}

	// A stale version: ECONFLICT, with the flag as it is now; nothing is
	// written.
	head := k.head(t)
	cur, none, err := s.SetFlag(ctx, k.cli, signoff.FlagWrite{ProjectID: k.proj.ID, Env: "production", Key: f.Key,
		Value: json.RawMessage("true"), ExpectedVersion: 1, Reason: "restore"})
	wantCode(t, err, signoff.ECONFLICT)
	if !strings.Contains(signoff.ErrorMessage(err), "version 2") || cur.Version != 2 || string(cur.Value) != "false" || none.Version != 0 {
		t.Fatalf("stale write: %q, current %+v, after %+v", signoff.ErrorMessage(err), cur, none)
	}
	k.unchanged(t, head, "a stale write")

	// Writing the value the flag already holds is still a write: the
	// version and so the state digest move.
	same, again, err := s.SetFlag(ctx, k.cli, signoff.FlagWrite{ProjectID: k.proj.ID, Env: "production", Key: f.Key,
		Value: json.RawMessage("false"), ExpectedVersion: 2, Reason: "rewrite"})
	if err != nil || again.Version != 3 || stateOf(t, same) == stateOf(t, again) || string(same.Value) != string(again.Value) {
		t.Fatalf("same value: %+v %+v %v", same, again, err)
	}
	// Objects are stored canonically.
	_, o2, err := s.SetFlag(ctx, k.sys, signoff.FlagWrite{ProjectID: k.proj.ID, Env: "production", Key: "theme",
		Value: json.RawMessage(`{"size": 2, "color": "red"}`), ExpectedVersion: obj.Version, Reason: "red"})
	if err != nil || string(o2.Value) != `{"color":"red","size":2}` {
		t.Fatalf("object write: %+v %v", o2, err)
	}

	// The ledger: one flag.set per write, outside any case, with both
	// digests.
	evs := k.eventsOf(t, "flag.set")
	if len(evs) != 3 {
		t.Fatalf("%d flag.set events, want 3", len(evs))
	}
	p := payloadOf(t, evs[0])
	if evs[0].CaseID != "" || evs[0].ActorID != "system" || p["before_state_digest"] != stateOf(t, before) || p["after_state_digest"] != stateOf(t, after) ||
		p["before_version"] != float64(1) || p["after_version"] != float64(2) || p["value"] != false || p["key"] != f.Key ||
		p["environment"] != "production" || p["project_id"] != k.proj.ID || p["reason"] != "change case_1: checkout v2 fails with 500s" {
		t.Fatalf("flag.set %+v %s", evs[0], evs[0].Payload)
	}
	if evs[1].ActorID != "cli" || payloadOf(t, evs[1])["before_state_digest"] != stateOf(t, same) {
		t.Fatalf("second flag.set %+v %s", evs[1], evs[1].Payload)
	}
	k.verify(t)
}

// testFlagWhoSets: only the server (the change gate) and the CLI write a
// flag; people and agents go through change requests.
func testFlagWhoSets(t *testing.T, b Backend) {
	k := newFlagKit(t, b)
	f := k.declare(t, "production", "k", signoff.FlagBoolean, "true")
	w := signoff.FlagWrite{ProjectID: k.proj.ID, Env: "production", Key: f.Key, Value: json.RawMessage("false"), ExpectedVersion: 1, Reason: "r"}
	refused := []signoff.Actor{k.owner, k.actor(t, "op", signoff.RoleOperator), k.actor(t, "vi", signoff.RoleViewer), k.actor(t, "rep", signoff.RoleReporter)}
	for _, r := range signoff.AgentRoles {
		refused = append(refused, k.actor(t, "agent "+string(r), r))
	}
	// An actor that calls itself the CLI by id but lives in an actor row
	// would carry an act_ id; an owner named "cli" is still an owner.
	refused = append(refused, k.actor(t, "cli", signoff.RoleOwner))
	head := k.head(t)
	for _, by := range refused {
		_, _, err := k.store.SetFlag(k.ctx, by, w)
		if signoff.ErrorCode(err) != signoff.EFORBIDDEN || !strings.Contains(signoff.ErrorMessage(err), "change requests") {
			t.Errorf("SetFlag as %s (%s): %v, want forbidden", by.Role, by.ID, err)
		}
	}
	k.unchanged(t, head, "refused writes")
	// The server of another workspace finds no such flag.
	_, _, err := k.store.SetFlag(k.ctx, signoff.SystemActor(k.other.WorkspaceID), w)
	wantCode(t, err, signoff.ENOTFOUND)
	k.unchanged(t, head, "a foreign write")
	if got, _ := k.store.GetFlag(k.ctx, k.owner, k.proj.ID, "production", "k"); got.Version != 1 {
		t.Fatalf("flag moved to version %d", got.Version)
	}
	if _, _, err := k.store.SetFlag(k.ctx, k.sys, w); err != nil {
		t.Fatal(err)
	}
}

// testFlagSetValidation: the value must match the flag's type, and the
// write must name a flag, a version and a reason.
func testFlagSetValidation(t *testing.T, b Backend) {
	k := newFlagKit(t, b)
	for _, d := range []struct {
		key   string
		typ   signoff.FlagType
		value string
	}{{"b", signoff.FlagBoolean, "true"}, {"s", signoff.FlagString, `"x"`}, {"n", signoff.FlagNumber, "1"}, {"o", signoff.FlagObject, "{}"}} {
		k.declare(t, "production", d.key, d.typ, d.value)
	}
	ok := func(key, value string) signoff.FlagWrite {
		return signoff.FlagWrite{ProjectID: k.proj.ID, Env: "production", Key: key, Value: json.RawMessage(value), ExpectedVersion: 1, Reason: "test"}
	}
	cases := []struct {
		name string
		w    signoff.FlagWrite
		code string
	}{
		{"boolean gets a string", ok("b", `"false"`), signoff.EINVALID},
		{"boolean gets null", ok("b", `null`), signoff.EINVALID},
		{"string gets a number", ok("s", `1`), signoff.EINVALID},
		{"number gets a string", ok("n", `"1"`), signoff.EINVALID},
		{"number gets a boolean", ok("n", `true`), signoff.EINVALID},
		{"object gets an array", ok("o", `[]`), signoff.EINVALID},
		{"object gets a string", ok("o", `"{}"`), signoff.EINVALID},
		{"not JSON", ok("s", `x`), signoff.EINVALID},
		{"no value", ok("s", ``), signoff.EINVALID},
		{"too large", ok("s", `"`+strings.Repeat("x", signoff.MaxFlagValue)+`"`), signoff.EINVALID},
		{"missing flag", ok("nope", `true`), signoff.ENOTFOUND},
		{"bad key", ok("a/b", `true`), signoff.EINVALID},
		{"bad env", func() signoff.FlagWrite { w := ok("b", "false"); w.Env = "PROD"; return w }(), signoff.EINVALID},
		{"bad project", func() signoff.FlagWrite { w := ok("b", "false"); w.ProjectID = "x"; return w }(), signoff.EINVALID},
		{"unknown project", func() signoff.FlagWrite {
			w := ok("b", "false")
			w.ProjectID = signoff.NewID(signoff.PrefixProject)
			return w
		}(), signoff.ENOTFOUND},
		{"no version", func() signoff.FlagWrite { w := ok("b", "false"); w.ExpectedVersion = 0; return w }(), signoff.EINVALID},
		{"negative version", func() signoff.FlagWrite { w := ok("b", "false"); w.ExpectedVersion = -1; return w }(), signoff.EINVALID},
		{"future version", func() signoff.FlagWrite { w := ok("b", "false"); w.ExpectedVersion = 9; return w }(), signoff.ECONFLICT},
		{"no reason", func() signoff.FlagWrite { w := ok("b", "false"); w.Reason = "  "; return w }(), signoff.EINVALID},
		{"reason with control characters", func() signoff.FlagWrite { w := ok("b", "false"); w.Reason = "a\x1b[2Kb"; return w }(), signoff.EINVALID},
	}
	head := k.head(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := k.store.SetFlag(k.ctx, k.sys, c.w)
			wantCode(t, err, c.code)
		})
	}
	k.unchanged(t, head, "refused writes")
	for _, key := range []string{"b", "s", "n", "o"} {
		if f, _ := k.store.GetFlag(k.ctx, k.owner, k.proj.ID, "production", key); f.Version != 1 {
			t.Fatalf("flag %s moved to version %d", key, f.Version)
		}
	}
}

// testFlagSetRace: racers write the same flag from the same version;
// exactly one wins, every loser is told the version it lost to, and the
// ledger holds one write.
func testFlagSetRace(t *testing.T, b Backend) {
	k := newFlagKit(t, b)
	f := k.declare(t, "production", "limit", signoff.FlagNumber, "0")
	errs := make([]error, racers)
	afters := make([]signoff.Flag, racers)
	befores := make([]signoff.Flag, racers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			by := k.sys
			if i%2 == 1 {
				by = k.cli
			}
			befores[i], afters[i], errs[i] = k.store.SetFlag(k.ctx, by, signoff.FlagWrite{ProjectID: k.proj.ID, Env: "production", Key: f.Key,
				Value: json.RawMessage(strconv.Itoa(i * 100)), ExpectedVersion: 1, Reason: "race"})
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if winner >= 0 {
				t.Fatalf("racers %d and %d both won", winner, i)
			}
			winner = i
		case signoff.ErrorCode(err) != signoff.ECONFLICT:
			t.Fatalf("racer %d: %v, want conflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("nobody won")
	}
	got, _ := k.store.GetFlag(k.ctx, k.owner, k.proj.ID, "production", f.Key)
	if got.Version != 2 || !bytes.Equal(got.Value, afters[winner].Value) {
		t.Fatalf("flag %+v, winner wrote %+v", got, afters[winner])
	}
	for i, err := range errs {
		if err != nil && (befores[i].Version != 2 || !bytes.Equal(befores[i].Value, got.Value)) {
			t.Fatalf("loser %d saw %+v, want the winner's flag", i, befores[i])
		}
	}
	evs := k.eventsOf(t, "flag.set")
	if len(evs) != 1 || payloadOf(t, evs[0])["after_state_digest"] != stateOf(t, got) {
		t.Fatalf("%d flag.set events", len(evs))
	}
	k.verify(t)
}

// testFlagKeys: a key's secret is shown once, stored hashed, resolves to
// its environment until revoked, and never enters the ledger.
func testFlagKeys(t *testing.T, b Backend) {
	k := newFlagKit(t, b)
	s, ctx := k.store, k.ctx
	prod, secret, err := s.CreateFlagKey(ctx, k.owner, k.proj.ID, "production", "shoplite checkout")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, signoff.FlagKeySecretPrefix) || strings.HasPrefix(secret, "so_") || !signoff.ValidID(signoff.PrefixFlagKey, prod.ID) ||
		prod.ProjectID != k.proj.ID || prod.Env != "production" || prod.Label != "shoplite checkout" || prod.WorkspaceID != k.ws.ID || prod.RevokedAt != nil {
		t.Fatalf("CreateFlagKey = %+v, %q", prod, secret)
	}
	stg, stgSecret, err := s.CreateFlagKey(ctx, k.cli, k.proj.ID, "staging", "")
	if err != nil {
		t.Fatal(err)
	}
	ws, pid, env, err := s.ResolveFlagKey(ctx, secret)
	if err != nil || ws != k.ws.ID || pid != k.proj.ID || env != "production" {
		t.Fatalf("ResolveFlagKey = %s %s %s %v", ws, pid, env, err)
	}
	if _, _, env, _ := s.ResolveFlagKey(ctx, stgSecret); env != "staging" {
		t.Fatalf("the staging key resolves to %q", env)
	}

	// Stored as its SHA-256 only.
	var stored []byte
	if err := s.SQL().QueryRowContext(ctx, `SELECT secret_sha256 FROM flag_keys WHERE id = $1`, prod.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256([]byte(secret)); !bytes.Equal(stored, sum[:]) {
		t.Fatal("the stored hash is not the SHA-256 of the secret")
	}

	keys, err := s.ListFlagKeys(ctx, k.owner, k.proj.ID, "")
	if err != nil || len(keys) != 2 || keys[0].ID != prod.ID || keys[1].ID != stg.ID {
		t.Fatalf("ListFlagKeys = %+v %v", keys, err)
	}
	if only, _ := s.ListFlagKeys(ctx, k.owner, k.proj.ID, "staging"); len(only) != 1 || only[0].ID != stg.ID {
		t.Fatalf("staging keys %+v", only)
	}
	if b, _ := json.Marshal(keys); bytes.Contains(b, []byte(secret[len(secret)-32:])) {
		t.Fatal("the key list shows a secret")
	}

	// Revoked, it stops resolving; a second revocation conflicts.
	rk, err := s.RevokeFlagKey(ctx, k.owner, prod.ID)
	if err != nil || rk.RevokedAt == nil || rk.ID != prod.ID {
		t.Fatalf("RevokeFlagKey = %+v %v", rk, err)
	}
	_, _, _, err = s.ResolveFlagKey(ctx, secret)
	wantCode(t, err, signoff.EUNAUTHORIZED)
	_, err = s.RevokeFlagKey(ctx, k.owner, prod.ID)
	wantCode(t, err, signoff.ECONFLICT)
	if _, _, _, err := s.ResolveFlagKey(ctx, stgSecret); err != nil {
		t.Fatalf("revoking one key revoked another: %v", err)
	}
	if keys, _ := s.ListFlagKeys(ctx, k.owner, k.proj.ID, "production"); len(keys) != 1 || keys[0].RevokedAt == nil {
		t.Fatalf("revoked key listed as %+v", keys)
	}

	// Every bad secret is the same EUNAUTHORIZED.
	last := byte('a')
	if stgSecret[len(stgSecret)-1] == 'a' {
		last = 'b'
	}
	_, apiToken, err := s.CreateToken(ctx, k.owner, k.owner.ID, "api", nil)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.TrimPrefix(stg.ID, signoff.PrefixFlagKey+"_")
	for _, bad := range []string{
		"", "sof_", stgSecret[:len(stgSecret)-1], stgSecret + "a", stgSecret[:len(stgSecret)-1] + string(last),
		"so_" + strings.TrimPrefix(stgSecret, "sof_"), apiToken, "Bearer " + stgSecret, " " + stgSecret,
		"sof_" + body + "_" + strings.Repeat("i", 32),                                                   // not a symbol of the alphabet
		"sof_" + strings.TrimPrefix(prod.ID, signoff.PrefixFlagKey+"_") + stgSecret[len(stgSecret)-33:], // another key's id
		"sof_../../x_" + strings.Repeat("a", 32),
		"sof_" + strings.TrimPrefix(signoff.NewID(signoff.PrefixFlagKey), signoff.PrefixFlagKey+"_") + "_" + strings.Repeat("a", 32),
	} {
		ws, pid, env, err := s.ResolveFlagKey(ctx, bad)
		if signoff.ErrorCode(err) != signoff.EUNAUTHORIZED || signoff.ErrorMessage(err) != "invalid or revoked flag key" || ws+pid+env != "" {
			t.Errorf("ResolveFlagKey(%q) = %q %q %q %v", bad, ws, pid, env, err)
		}
	}

	// The ledger records keys, never their secrets.
	created, revoked := k.eventsOf(t, "flag_key.created"), k.eventsOf(t, "flag_key.revoked")
	if len(created) != 2 || len(revoked) != 1 || payloadOf(t, created[0])["key_id"] != prod.ID || created[1].ActorID != "cli" ||
		payloadOf(t, revoked[0])["key_id"] != prod.ID || payloadOf(t, created[0])["environment"] != "production" {
		t.Fatalf("key events %+v %+v", created, revoked)
	}
	for _, e := range allEvents(t, k.bundle) {
		for _, sec := range []string{secret, stgSecret, secret[len(secret)-32:], stgSecret[len(stgSecret)-32:]} {
			if strings.Contains(string(e.Payload), sec) {
				t.Fatalf("a secret leaked into a %s event", e.Type)
			}
		}
	}
	k.verify(t)
}

// testFlagKeyRefusals: only owners manage keys, only in their workspace.
func testFlagKeyRefusals(t *testing.T, b Backend) {
	k := newFlagKit(t, b)
	s, ctx := k.store, k.ctx
	key, _, err := s.CreateFlagKey(ctx, k.owner, k.proj.ID, "production", "app")
	if err != nil {
		t.Fatal(err)
	}
	refused := []signoff.Actor{k.sys, k.actor(t, "op", signoff.RoleOperator), k.actor(t, "vi", signoff.RoleViewer), k.actor(t, "rep", signoff.RoleReporter)}
	for _, r := range signoff.AgentRoles {
		refused = append(refused, k.actor(t, "agent "+string(r), r))
	}
	head := k.head(t)
	for _, by := range refused {
		_, _, err := s.CreateFlagKey(ctx, by, k.proj.ID, "production", "x")
		wantCode(t, err, signoff.EFORBIDDEN)
		_, err = s.RevokeFlagKey(ctx, by, key.ID)
		wantCode(t, err, signoff.EFORBIDDEN)
		_, err = s.ListFlagKeys(ctx, by, k.proj.ID, "")
		wantCode(t, err, signoff.EFORBIDDEN)
	}
	for name, c := range map[string]struct {
		err  error
		code string
	}{
		"foreign create":       {third(s.CreateFlagKey(ctx, k.other, k.proj.ID, "production", "x")), signoff.ENOTFOUND},
		"foreign revoke":       {second(s.RevokeFlagKey(ctx, k.other, key.ID)), signoff.ENOTFOUND},
		"foreign list":         {second(s.ListFlagKeys(ctx, k.other, k.proj.ID, "")), signoff.ENOTFOUND},
		"unknown project":      {third(s.CreateFlagKey(ctx, k.owner, signoff.NewID(signoff.PrefixProject), "production", "x")), signoff.ENOTFOUND},
		"unknown key":          {second(s.RevokeFlagKey(ctx, k.owner, signoff.NewID(signoff.PrefixFlagKey))), signoff.ENOTFOUND},
		"bad key id":           {second(s.RevokeFlagKey(ctx, k.owner, "tok_x")), signoff.EINVALID},
		"api token id":         {second(s.RevokeFlagKey(ctx, k.owner, signoff.NewID(signoff.PrefixToken))), signoff.EINVALID},
		"bad env":              {third(s.CreateFlagKey(ctx, k.owner, k.proj.ID, "Prod", "x")), signoff.EINVALID},
		"label with a control": {third(s.CreateFlagKey(ctx, k.owner, k.proj.ID, "production", "a\x00b")), signoff.EINVALID},
		"label too long":       {third(s.CreateFlagKey(ctx, k.owner, k.proj.ID, "production", strings.Repeat("l", 101))), signoff.EINVALID},
	} {
		if signoff.ErrorCode(c.err) != c.code {
			t.Errorf("%s: %v, want %s", name, c.err, c.code)
		}
	}
	k.unchanged(t, head, "refused key operations")
	if keys, _ := s.ListFlagKeys(ctx, k.owner, k.proj.ID, ""); len(keys) != 1 || keys[0].RevokedAt != nil {
		t.Fatalf("keys after refusals %+v", keys)
	}
}

// testFlagHistoryReadOnly: a flag's history comes from the ledger, newest
// first; served from the read-only pool, whose connections the database
// itself keeps from writing.
func testFlagHistoryReadOnly(t *testing.T, b Backend) {
	k := newFlagKit(t, b)
	s, ctx := k.store, k.ctx
	f := k.declare(t, "production", "checkout_v2", signoff.FlagBoolean, "false")
	k.declare(t, "staging", "checkout_v2", signoff.FlagBoolean, "false")
	for i, v := range []string{"true", "false", "true"} {
		if _, _, err := s.SetFlag(ctx, k.sys, signoff.FlagWrite{ProjectID: k.proj.ID, Env: "production", Key: f.Key,
			Value: json.RawMessage(v), ExpectedVersion: int64(i + 1), Reason: fmt.Sprintf("write %d", i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.SetFlag(ctx, k.sys, signoff.FlagWrite{ProjectID: k.proj.ID, Env: "staging", Key: f.Key,
		Value: json.RawMessage("true"), ExpectedVersion: 1, Reason: "staging"}); err != nil {
		t.Fatal(err)
	}
	ro := s.ReadOnly()
	if ro == nil {
		t.Fatal("the store has no read-only pool")
	}
	hs, err := ro.FlagHistory(ctx, k.owner, k.proj.ID, "production", f.Key, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 2 || hs[0].Version != 4 || string(hs[0].Value) != "true" || hs[0].Reason != "write 3" || hs[1].Version != 3 || hs[0].Seq <= hs[1].Seq {
		t.Fatalf("history %+v", hs)
	}
	wantCode(t, func() error { _, err := ro.FlagHistory(ctx, k.owner, k.proj.ID, "production", f.Key, 0); return err }(), signoff.EINVALID)
	wantCode(t, func() error { _, err := ro.FlagHistory(ctx, k.other, k.proj.ID, "production", f.Key, 5); return err }(), signoff.ENOTFOUND)
	// The view refuses writes in code (no signer) and the pool refuses
	// them in the database.
	if _, _, err := ro.SetFlag(ctx, k.sys, signoff.FlagWrite{ProjectID: k.proj.ID, Env: "production", Key: f.Key,
		Value: json.RawMessage("false"), ExpectedVersion: 4, Reason: "through the read-only view"}); err == nil {
		t.Fatal("the read-only view wrote a flag")
	}
	if _, err := ro.SQL().ExecContext(ctx, `UPDATE flags SET version = version + 1`); err == nil {
		t.Fatal("the read-only pool ran an UPDATE")
	}
	if got, _ := s.GetFlag(ctx, k.owner, k.proj.ID, "production", f.Key); got.Version != 4 {
		t.Fatalf("flag at version %d after refused writes", got.Version)
	}
}
