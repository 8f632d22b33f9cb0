package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
)

// flag declares a boolean flag in the matrix project's production
// environment, as the owner.
func (f *matrixFixture) flag(t *testing.T, key string) signoff.Flag {
	t.Helper()
	fl, err := f.store.CreateFlag(context.Background(), f.owner, f.proj.ID, "production", strings.ReplaceAll(key, " ", "-"), signoff.FlagBoolean, json.RawMessage("true"))
	if err != nil {
		t.Fatal(err)
	}
	return fl
}

// flagKey issues an OFREP key for the matrix project's production
// environment, as the owner.
func (f *matrixFixture) flagKey(t *testing.T, label string) (signoff.FlagKey, string) {
	t.Helper()
	k, secret, err := f.store.CreateFlagKey(context.Background(), f.owner, f.proj.ID, "production", label)
	if err != nil {
		t.Fatal(err)
	}
	return k, secret
}

// ofrepCall is one OFREP request made with a plain net/http client, the
// way an OpenFeature OFREP provider makes it.
type ofrepCall struct {
	path   string
	header map[string]string
	body   string // sent as application/json unless header says otherwise
}

type ofrepAnswer struct {
	status int
	header http.Header
	body   string
}

func callOFREP(t testing.TB, client *http.Client, base string, c ofrepCall) ofrepAnswer {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequest(http.MethodPost, base+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if c.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return ofrepAnswer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// want checks the status and the exact body (one JSON document and a
// newline; empty for 304) and that it is served as JSON.
func (a ofrepAnswer) want(t *testing.T, what string, status int, body string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("%s: status %d, want %d (body %s)", what, a.status, status, a.body)
	}
	if body == "" {
		if a.body != "" {
			t.Fatalf("%s: body %q, want none", what, a.body)
		}
		return
	}
	if a.body != body+"\n" {
		t.Fatalf("%s: body\n  %s\nwant\n  %s", what, strings.TrimSpace(a.body), body)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s: Content-Type %q, want application/json", what, ct)
	}
	if status == http.StatusUnauthorized && a.header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("%s: 401 without WWW-Authenticate: Bearer", what)
	}
}

// ofrepSetup is a workspace whose project has flags of every type in
// production and one in staging, and a key for each environment issued
// through the API.
type ofrepSetup struct {
	*workspace
	srv                 *httptest.Server
	client              *http.Client
	prodKey, stagingKey string
	prodKeyID, apiToken string
	checkout, theme     signoff.Flag
}

func newOFREPSetup(t *testing.T) *ofrepSetup {
	t.Helper()
	store := openStore(t)
	o := &ofrepSetup{workspace: newWorkspace(t, store, "Acme")}
	o.srv = serve(t, store, nil)
	o.client = &http.Client{Timeout: 30 * time.Second}
	o.apiToken = o.ownerToken
	declare := func(env, key string, typ signoff.FlagType, value string) signoff.Flag {
		got := do(t, o.srv, request{method: "POST", path: "/api/v1/projects/" + o.proj.ID + "/flags", token: o.ownerToken,
			body: `{"environment":"` + env + `","key":"` + key + `","type":"` + string(typ) + `","value":` + value + `}`})
		if got.status != http.StatusCreated {
			t.Fatalf("declare %s/%s: %d %s", env, key, got.status, got.body)
		}
		var f signoff.Flag
		got.decode(t, &f)
		return f
	}
	o.checkout = declare("production", "checkout_v2_new_payment_flow", signoff.FlagBoolean, "false")
	declare("production", "banner", signoff.FlagString, `"Spring sale: 20% off"`)
	declare("production", "max-items", signoff.FlagNumber, "1.5e2")
	o.theme = declare("production", "theme", signoff.FlagObject, `{"sizes": [1, 2], "color": "blue"}`)
	declare("staging", "checkout_v2_new_payment_flow", signoff.FlagBoolean, "true")
	declare("staging", "staging-only", signoff.FlagString, `"x"`)
	issue := func(env string) (string, string) {
		got := do(t, o.srv, request{method: "POST", path: "/api/v1/projects/" + o.proj.ID + "/flag-keys", token: o.ownerToken,
			body: `{"environment":"` + env + `","label":"shoplite ` + env + `"}`})
		if got.status != http.StatusCreated || got.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("issue key: %d %v %s", got.status, got.header, got.body)
		}
		var created struct {
			FlagKey signoff.FlagKey `json:"flag_key"`
			Secret  string          `json:"secret"`
		}
		got.decode(t, &created)
		if !strings.HasPrefix(created.Secret, signoff.FlagKeySecretPrefix) || created.FlagKey.Env != env || created.FlagKey.ProjectID != o.proj.ID {
			t.Fatalf("issued %+v", created)
		}
		return created.FlagKey.ID, created.Secret
	}
	o.prodKeyID, o.prodKey = issue("production")
	_, o.stagingKey = issue("staging")
	return o
}

func (o *ofrepSetup) call(t *testing.T, c ofrepCall) ofrepAnswer {
	t.Helper()
	return callOFREP(t, o.client, o.srv.URL, c)
}

func bearer(secret string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + secret}
}

// TestOFREPSingle evaluates one flag at a time as a server-side OFREP
// provider does, checking every request and answer shape exactly.
func TestOFREPSingle(t *testing.T) {
	t.Parallel()
	o := newOFREPSetup(t)
	ctxBody := `{"context":{"targetingKey":"user-42","email":"ana@example.com","plan":"pro"}}`
	path := func(key string) string { return "/ofrep/v1/evaluate/flags/" + key }
	tampered := o.prodKey[:len(o.prodKey)-1] + "0"
	if strings.HasSuffix(o.prodKey, "0") {
		tampered = o.prodKey[:len(o.prodKey)-1] + "1"
	}
	for _, c := range []struct {
		what, key, body string
		header          map[string]string
		want            string
	}{
		{"boolean", "checkout_v2_new_payment_flow", ctxBody, bearer(o.prodKey),
			`{"key":"checkout_v2_new_payment_flow","value":false,"reason":"STATIC","variant":"off","metadata":{}}`},
		{"string", "banner", ctxBody, bearer(o.prodKey),
			`{"key":"banner","value":"Spring sale: 20% off","reason":"STATIC","variant":"Spring sale: 20% off","metadata":{}}`},
		{"number, canonical", "max-items", ctxBody, bearer(o.prodKey),
			`{"key":"max-items","value":150,"reason":"STATIC","variant":"150","metadata":{}}`},
		{"object, canonical", "theme", ctxBody, bearer(o.prodKey),
			`{"key":"theme","value":{"color":"blue","sizes":[1,2]},"reason":"STATIC","variant":"{\"color\":\"blue\",\"sizes\":[1,2]}","metadata":{}}`},
		{"X-API-Key", "checkout_v2_new_payment_flow", ctxBody, map[string]string{"X-API-Key": o.prodKey},
			`{"key":"checkout_v2_new_payment_flow","value":false,"reason":"STATIC","variant":"off","metadata":{}}`},
		// X-API-Key is the credential when both are sent: an API token in
		// Authorization changes nothing.
		{"X-API-Key beside an API token", "checkout_v2_new_payment_flow", ctxBody, map[string]string{"X-API-Key": o.prodKey, "Authorization": "Bearer " + o.apiToken},
			`{"key":"checkout_v2_new_payment_flow","value":false,"reason":"STATIC","variant":"off","metadata":{}}`},
		{"lower-case bearer", "checkout_v2_new_payment_flow", ctxBody, map[string]string{"Authorization": "bearer " + o.prodKey},
			`{"key":"checkout_v2_new_payment_flow","value":false,"reason":"STATIC","variant":"off","metadata":{}}`},
		// The staging key reads staging, where the same flag is on.
		{"staging key", "checkout_v2_new_payment_flow", ctxBody, bearer(o.stagingKey),
			`{"key":"checkout_v2_new_payment_flow","value":true,"reason":"STATIC","variant":"on","metadata":{}}`},
		// The context is optional, and ignored: no targeting yet.
		{"no body", "banner", "", bearer(o.prodKey),
			`{"key":"banner","value":"Spring sale: 20% off","reason":"STATIC","variant":"Spring sale: 20% off","metadata":{}}`},
		{"empty object", "banner", `{}`, bearer(o.prodKey),
			`{"key":"banner","value":"Spring sale: 20% off","reason":"STATIC","variant":"Spring sale: 20% off","metadata":{}}`},
		{"null context", "banner", `{"context":null}`, bearer(o.prodKey),
			`{"key":"banner","value":"Spring sale: 20% off","reason":"STATIC","variant":"Spring sale: 20% off","metadata":{}}`},
		{"other context", "banner", `{"context":{"targetingKey":"someone-else","country":"FR"}}`, bearer(o.prodKey),
			`{"key":"banner","value":"Spring sale: 20% off","reason":"STATIC","variant":"Spring sale: 20% off","metadata":{}}`},
	} {
		o.call(t, ofrepCall{path: path(c.key), header: c.header, body: c.body}).want(t, c.what, http.StatusOK, c.want)
	}

	// Errors in OFREP's shapes.
	for _, c := range []struct {
		what, key, body, contentType string
		header                       map[string]string
		status                       int
		want                         string
	}{
		{"unknown flag", "nope", ctxBody, "", bearer(o.prodKey), 404,
			`{"key":"nope","errorCode":"FLAG_NOT_FOUND","errorDetails":"flag \"nope\" is not defined in environment production"}`},
		{"another environment's flag", "staging-only", ctxBody, "", bearer(o.prodKey), 404,
			`{"key":"staging-only","errorCode":"FLAG_NOT_FOUND","errorDetails":"flag \"staging-only\" is not defined in environment production"}`},
		{"a key no flag can have", "a:b", ctxBody, "", bearer(o.prodKey), 404,
			`{"key":"a:b","errorCode":"FLAG_NOT_FOUND","errorDetails":"flag \"a:b\" is not defined in environment production"}`},
		{"malformed JSON", "banner", `{"context":`, "", bearer(o.prodKey), 400,
			`{"key":"banner","errorCode":"PARSE_ERROR","errorDetails":"the request body is not valid JSON: canonical: unexpected end of input at offset 11"}`},
		{"not an object", "banner", `[{"context":{}}]`, "", bearer(o.prodKey), 400,
			`{"key":"banner","errorCode":"PARSE_ERROR","errorDetails":"the request body must be a JSON object such as {\"context\": {}}"}`},
		{"duplicate members", "banner", `{"context":{},"context":{"a":1}}`, "", bearer(o.prodKey), 400,
			`{"key":"banner","errorCode":"PARSE_ERROR","errorDetails":"the request body is not valid JSON: canonical: duplicate object key \"context\""}`},
		{"not JSON", "banner", `context=1`, "text/plain", bearer(o.prodKey), 400,
			`{"key":"banner","errorCode":"PARSE_ERROR","errorDetails":"Content-Type must be application/json"}`},
		{"too large", "banner", `{"context":{"a":"` + strings.Repeat("x", 64<<10) + `"}}`, "", bearer(o.prodKey), 400,
			`{"key":"banner","errorCode":"PARSE_ERROR","errorDetails":"the request body is larger than 65536 bytes"}`},
		{"context a string", "banner", `{"context":"user-42"}`, "", bearer(o.prodKey), 400,
			`{"key":"banner","errorCode":"INVALID_CONTEXT","errorDetails":"context must be a JSON object"}`},
		{"context an array", "banner", `{"context":[]}`, "", bearer(o.prodKey), 400,
			`{"key":"banner","errorCode":"INVALID_CONTEXT","errorDetails":"context must be a JSON object"}`},
		{"no credential", "banner", ctxBody, "", nil, 401,
			`{"errorDetails":"a flag key is required: X-API-Key: sof_… or Authorization: Bearer sof_…"}`},
		{"empty X-API-Key", "banner", ctxBody, "", map[string]string{"X-API-Key": " "}, 401,
			`{"errorDetails":"a flag key is required: X-API-Key: sof_… or Authorization: Bearer sof_…"}`},
		{"basic auth", "banner", ctxBody, "", map[string]string{"Authorization": "Basic " + o.prodKey}, 401,
			`{"errorDetails":"a flag key is required: X-API-Key: sof_… or Authorization: Bearer sof_…"}`},
		{"an API token", "banner", ctxBody, "", bearer(o.apiToken), 401,
			`{"errorDetails":"invalid or revoked flag key"}`},
		{"a tampered key", "banner", ctxBody, "", bearer(tampered), 401,
			`{"errorDetails":"invalid or revoked flag key"}`},
		{"a bad X-API-Key beside a good bearer", "banner", ctxBody, "", map[string]string{"X-API-Key": "nope", "Authorization": "Bearer " + o.prodKey}, 401,
			`{"errorDetails":"invalid or revoked flag key"}`},
		// The credential is checked before the body or the flag, so a
		// caller without a key learns nothing about either.
		{"bad body without a key", "nope", `{"context":"x"}`, "", nil, 401,
			`{"errorDetails":"a flag key is required: X-API-Key: sof_… or Authorization: Bearer sof_…"}`},
	} {
		if c.header != nil && c.contentType != "" {
			c.header["Content-Type"] = c.contentType
		} else if c.contentType != "" {
			c.header = map[string]string{"Content-Type": c.contentType}
		}
		o.call(t, ofrepCall{path: path(c.key), header: c.header, body: c.body}).want(t, c.what, c.status, c.want)
	}

	// Revoked through the API, the key stops working at once.
	if got := do(t, o.srv, request{method: "DELETE", path: "/api/v1/flag-keys/" + o.prodKeyID, token: o.ownerToken}); got.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", got.status, got.body)
	}
	o.call(t, ofrepCall{path: path("banner"), header: bearer(o.prodKey), body: ctxBody}).want(t, "revoked key", 401, `{"errorDetails":"invalid or revoked flag key"}`)
	o.call(t, ofrepCall{path: path("checkout_v2_new_payment_flow"), header: bearer(o.stagingKey), body: ctxBody}).want(t, "the other key", 200,
		`{"key":"checkout_v2_new_payment_flow","value":true,"reason":"STATIC","variant":"on","metadata":{}}`)
}

// TestOFREPBulk evaluates every flag of an environment as a client-side
// OFREP provider does, with ETag revalidation.
func TestOFREPBulk(t *testing.T) {
	t.Parallel()
	o := newOFREPSetup(t)
	const path = "/ofrep/v1/evaluate/flags"
	const all = `{"flags":[` +
		`{"key":"banner","value":"Spring sale: 20% off","reason":"STATIC","variant":"Spring sale: 20% off","metadata":{}},` +
		`{"key":"checkout_v2_new_payment_flow","value":false,"reason":"STATIC","variant":"off","metadata":{}},` +
		`{"key":"max-items","value":150,"reason":"STATIC","variant":"150","metadata":{}},` +
		`{"key":"theme","value":{"color":"blue","sizes":[1,2]},"reason":"STATIC","variant":"{\"color\":\"blue\",\"sizes\":[1,2]}","metadata":{}}]}`
	first := o.call(t, ofrepCall{path: path, header: bearer(o.prodKey), body: `{"context":{"targetingKey":"user-42"}}`})
	first.want(t, "bulk", 200, all)
	tag := first.header.Get("ETag")
	if len(tag) != 66 || tag[0] != '"' || tag[65] != '"' {
		t.Fatalf("ETag %q, want a quoted strong tag", tag)
	}
	// The same state answers the same tag, whatever the context.
	if again := o.call(t, ofrepCall{path: path, header: map[string]string{"X-API-Key": o.prodKey}}); again.header.Get("ETag") != tag || again.body != first.body {
		t.Fatalf("a second bulk call answered %q %s", again.header.Get("ETag"), again.body)
	}
	for _, inm := range []string{tag, "W/" + tag, `"other", ` + tag, "*"} {
		h := bearer(o.prodKey)
		h["If-None-Match"] = inm
		got := o.call(t, ofrepCall{path: path, header: h, body: `{"context":{}}`})
		got.want(t, "If-None-Match "+inm, http.StatusNotModified, "")
		if got.header.Get("ETag") != tag {
			t.Fatalf("304 with ETag %q, want %q", got.header.Get("ETag"), tag)
		}
	}
	h := bearer(o.prodKey)
	h["If-None-Match"] = `"stale"`
	o.call(t, ofrepCall{path: path, header: h}).want(t, "a stale tag", 200, all)

	// The staging key sees staging only.
	o.call(t, ofrepCall{path: path, header: bearer(o.stagingKey)}).want(t, "staging", 200, `{"flags":[`+
		`{"key":"checkout_v2_new_payment_flow","value":true,"reason":"STATIC","variant":"on","metadata":{}},`+
		`{"key":"staging-only","value":"x","reason":"STATIC","variant":"x","metadata":{}}]}`)

	// A write (here the CLI's, as the gate's would be) moves the tag, even
	// one that leaves the value as it was.
	if _, _, err := o.store.SetFlag(context.Background(), signoff.CLIActor(o.ws.ID), signoff.FlagWrite{ProjectID: o.proj.ID, Env: "production",
		Key: o.checkout.Key, Value: json.RawMessage("false"), ExpectedVersion: 1, Reason: "same value"}); err != nil {
		t.Fatal(err)
	}
	h = bearer(o.prodKey)
	h["If-None-Match"] = tag
	moved := o.call(t, ofrepCall{path: path, header: h})
	moved.want(t, "after a write", 200, all)
	if moved.header.Get("ETag") == tag {
		t.Fatal("a write left the ETag as it was")
	}
	if _, _, err := o.store.SetFlag(context.Background(), signoff.SystemActor(o.ws.ID), signoff.FlagWrite{ProjectID: o.proj.ID, Env: "production",
		Key: o.checkout.Key, Value: json.RawMessage("true"), ExpectedVersion: 2, Reason: "change case_x: roll out"}); err != nil {
		t.Fatal(err)
	}
	h["If-None-Match"] = moved.header.Get("ETag")
	o.call(t, ofrepCall{path: path, header: h}).want(t, "after turning it on", 200, strings.Replace(all,
		`"checkout_v2_new_payment_flow","value":false,"reason":"STATIC","variant":"off"`, `"checkout_v2_new_payment_flow","value":true,"reason":"STATIC","variant":"on"`, 1))

	// A new environment with a key but no flags is an empty list.
	k, secret, err := o.store.CreateFlagKey(context.Background(), o.owner, o.proj.ID, "qa", "qa")
	if err != nil || k.Env != "qa" {
		t.Fatal(err)
	}
	o.call(t, ofrepCall{path: path, header: bearer(secret)}).want(t, "no flags", 200, `{"flags":[]}`)

	// Bulk errors carry no key.
	o.call(t, ofrepCall{path: path, header: bearer(o.prodKey), body: `{"context":7}`}).want(t, "bad context", 400,
		`{"errorCode":"INVALID_CONTEXT","errorDetails":"context must be a JSON object"}`)
	o.call(t, ofrepCall{path: path, header: bearer(o.prodKey), body: `{`}).want(t, "bad body", 400,
		`{"errorCode":"PARSE_ERROR","errorDetails":"the request body is not valid JSON: canonical: expected string key in object at offset 1"}`)
	o.call(t, ofrepCall{path: path}).want(t, "no key", 401,
		`{"errorDetails":"a flag key is required: X-API-Key: sof_… or Authorization: Bearer sof_…"}`)

	// Only POST evaluates.
	got := do(t, o.srv, request{method: "GET", path: path, header: bearer(o.prodKey)})
	if got.status != http.StatusMethodNotAllowed || got.header.Get("Allow") != "POST" {
		t.Fatalf("GET: %d %v", got.status, got.header)
	}
}

// TestFlagRoutes covers the people's side: reading flags with their state
// digests, declaring them, keys shown once, and no way to set a value.
func TestFlagRoutes(t *testing.T) {
	t.Parallel()
	o := newOFREPSetup(t)
	viewer := o.token(t, o.actor(t, "vic", signoff.RoleViewer))
	planner := o.token(t, o.actor(t, "plan-bot", signoff.RolePlanner))

	for _, tok := range []string{viewer, planner, o.ownerToken} {
		got := do(t, o.srv, request{method: "GET", path: "/api/v1/projects/" + o.proj.ID + "/flags/production/" + o.theme.Key, token: tok})
		var v struct {
			signoff.Flag
			StateDigest string `json:"state_digest"`
		}
		got.decode(t, &v)
		want, _ := signoff.FlagState(o.theme)
		if got.status != 200 || v.StateDigest != want || string(v.Value) != `{"color":"blue","sizes":[1,2]}` || v.Version != 1 || v.Type != signoff.FlagObject {
			t.Fatalf("get flag: %d %s", got.status, got.body)
		}
	}
	var list struct {
		Flags []struct {
			Key         string `json:"key"`
			Environment string `json:"environment"`
			StateDigest string `json:"state_digest"`
		} `json:"flags"`
	}
	do(t, o.srv, request{method: "GET", path: "/api/v1/projects/" + o.proj.ID + "/flags", token: viewer}).decode(t, &list)
	if len(list.Flags) != 6 || list.Flags[0].Environment != "production" || list.Flags[0].Key != "banner" || list.Flags[5].Key != "staging-only" || list.Flags[0].StateDigest == "" {
		t.Fatalf("all flags %+v", list.Flags)
	}
	do(t, o.srv, request{method: "GET", path: "/api/v1/projects/" + o.proj.ID + "/flags?env=staging", token: viewer}).decode(t, &list)
	if len(list.Flags) != 2 {
		t.Fatalf("staging flags %+v", list.Flags)
	}

	for _, c := range []struct {
		what string
		rq   request
		code string
	}{
		{"unknown query parameter", request{method: "GET", path: "/api/v1/projects/" + o.proj.ID + "/flags?environment=staging"}, signoff.EINVALID},
		{"bad env", request{method: "GET", path: "/api/v1/projects/" + o.proj.ID + "/flags?env=Staging"}, signoff.EINVALID},
		{"missing flag", request{method: "GET", path: "/api/v1/projects/" + o.proj.ID + "/flags/production/nope"}, signoff.ENOTFOUND},
		{"type mismatch", request{method: "POST", path: "/api/v1/projects/" + o.proj.ID + "/flags", body: `{"environment":"production","key":"k","type":"boolean","value":"on"}`}, signoff.EINVALID},
		{"declared twice", request{method: "POST", path: "/api/v1/projects/" + o.proj.ID + "/flags", body: `{"environment":"production","key":"banner","type":"string","value":"x"}`}, signoff.ECONFLICT},
		{"unknown field", request{method: "POST", path: "/api/v1/projects/" + o.proj.ID + "/flags", body: `{"environment":"production","key":"k","type":"boolean","value":true,"version":7}`}, signoff.EINVALID},
		// No route writes a flag's value: changes go through change
		// requests and the gate.
		{"PUT a flag", request{method: "PUT", path: "/api/v1/projects/" + o.proj.ID + "/flags/production/banner", body: `{"value":"x"}`}, signoff.EMETHOD},
		{"PATCH a flag", request{method: "PATCH", path: "/api/v1/projects/" + o.proj.ID + "/flags/production/banner", body: `{"value":"x"}`}, signoff.EMETHOD},
		{"POST a flag", request{method: "POST", path: "/api/v1/projects/" + o.proj.ID + "/flags/production/banner", body: `{"value":"x"}`}, signoff.EMETHOD},
	} {
		c.rq.token = o.ownerToken
		if p := do(t, o.srv, c.rq).problem(t); p.Code != c.code {
			t.Errorf("%s: %+v, want %s", c.what, p, c.code)
		}
	}
	if got, _ := o.store.GetFlag(context.Background(), o.owner, o.proj.ID, "production", "banner"); got.Version != 1 {
		t.Fatalf("banner moved to version %d", got.Version)
	}

	// Keys: listed without secrets.
	got := do(t, o.srv, request{method: "GET", path: "/api/v1/projects/" + o.proj.ID + "/flag-keys?env=production", token: o.ownerToken})
	var keys struct {
		FlagKeys []signoff.FlagKey `json:"flag_keys"`
	}
	got.decode(t, &keys)
	if len(keys.FlagKeys) != 1 || keys.FlagKeys[0].ID != o.prodKeyID || strings.Contains(string(got.body), o.prodKey[len(o.prodKey)-32:]) || strings.Contains(string(got.body), `"secret"`) {
		t.Fatalf("key list %s", got.body)
	}
}

// BenchmarkOFREPEvaluate measures single-flag evaluation end to end over
// loopback HTTP (key lookup, flag read, JSON answer) on SQLite with 32
// concurrent clients, and reports evaluations/s and latency percentiles.
// The store is as sqlite.Open configures it (16 connections kept idle;
// with database/sql's default of 2 this measured about 6,000/s).
func BenchmarkOFREPEvaluate(b *testing.B) {
	store := openStore(b)
	w := newWorkspace(b, store, "Bench")
	ctx := context.Background()
	if _, err := store.CreateFlag(ctx, w.owner, w.proj.ID, "production", "checkout_v2_new_payment_flow", signoff.FlagBoolean, json.RawMessage("false")); err != nil {
		b.Fatal(err)
	}
	_, secret, err := store.CreateFlagKey(ctx, w.owner, w.proj.ID, "production", "bench")
	if err != nil {
		b.Fatal(err)
	}
	srv := serve(b, store, nil)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	url := srv.URL + "/ofrep/v1/evaluate/flags/checkout_v2_new_payment_flow"
	body := []byte(`{"context":{"targetingKey":"user-42","plan":"pro"}}`)
	want := []byte(`"variant":"off"`)
	const clients = 32
	lat := make([][]time.Duration, clients)
	var next atomic.Int64
	var failed atomic.Value
	var once sync.Once
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				t0 := time.Now()
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+secret)
				resp, err := client.Do(req)
				if err != nil {
					once.Do(func() { failed.Store(err) })
					return
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || !bytes.Contains(got, want) {
					once.Do(func() { failed.Store(fmt.Errorf("status %d: %s", resp.StatusCode, got)) })
					return
				}
				lat[c] = append(lat[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if err, ok := failed.Load().(error); ok {
		b.Fatal(err)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) / 1000 }
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "evaluations/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
