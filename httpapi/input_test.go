package httpapi_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
)

// TestBadInput sends malformed, oversized, mistyped and hostile requests as
// the owner. Each must be refused with a problem of the right status and
// code, and must leave the workspace's ledger exactly as it was.
func TestBadInput(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	srv := serve(t, store, nil)
	huge := `{"name":"` + strings.Repeat("x", 2<<20) + `"}`
	// A cursor that decodes, but not to a case id.
	badCursor := base64.RawURLEncoding.EncodeToString([]byte("prj_../../etc/passwd"))

	tests := []struct {
		name        string
		method      string
		path        func(w *workspace) string
		contentType string
		body        string
		bodyFor     func(w *workspace) string // when the body needs the fixture's ids
		want        int
		code        string
		detail      string // a substring the detail must contain
		state       string // current_state, for conflicts
	}{
		{name: "malformed JSON", method: "POST", path: fixed("/api/v1/projects"), body: `{"name" "x"}`, want: 422, code: signoff.EINVALID, detail: "malformed JSON"},
		{name: "truncated JSON", method: "POST", path: fixed("/api/v1/projects"), body: `{"name": "x"`, want: 422, code: signoff.EINVALID, detail: "malformed JSON"},
		{name: "wrong type for a string", method: "POST", path: fixed("/api/v1/projects"), body: `{"name": 5}`, want: 422, code: signoff.EINVALID, detail: `"name"`},
		{name: "wrong type for a version", method: "POST", path: bugPath("/transitions"), body: `{"command":"escalate","expected_version":"1"}`, want: 422, code: signoff.EINVALID, detail: `"expected_version"`},
		{name: "fractional version", method: "POST", path: bugPath("/transitions"), body: `{"command":"escalate","expected_version":1.5}`, want: 422, code: signoff.EINVALID, detail: `"expected_version"`},
		{name: "wrong type for a role", method: "POST", path: fixed("/api/v1/actors"), body: `{"name":"x","role":7}`, want: 422, code: signoff.EINVALID, detail: `"role"`},
		{name: "object for a string", method: "PATCH", path: fixed("/api/v1/workspace"), body: `{"name":{"first":"x"}}`, want: 422, code: signoff.EINVALID, detail: `"name"`},
		{name: "unknown field", method: "POST", path: fixed("/api/v1/projects"), body: `{"name":"x","owner":"me"}`, want: 422, code: signoff.EINVALID, detail: `"owner"`},
		{name: "field name in the wrong case", method: "POST", path: fixed("/api/v1/projects"), body: `{"NAME":"x"}`, want: 422, code: signoff.EINVALID, detail: `"NAME"`},
		{name: "duplicate key", method: "POST", path: bugPath("/transitions"), body: `{"command":"escalate","command":"approve"}`, want: 422, code: signoff.EINVALID, detail: "duplicate"},
		{name: "unknown field on a transition", method: "POST", path: bugPath("/transitions"), body: `{"command":"escalate","role":"owner"}`, want: 422, code: signoff.EINVALID, detail: `"role"`},
		{name: "second JSON value", method: "POST", path: fixed("/api/v1/projects"), body: `{"name":"x"}{"name":"y"}`, want: 422, code: signoff.EINVALID, detail: "after the JSON object"},
		{name: "trailing garbage", method: "POST", path: fixed("/api/v1/projects"), body: `{"name":"x"} trailing`, want: 422, code: signoff.EINVALID, detail: "after the JSON object"},
		{name: "empty body", method: "POST", path: fixed("/api/v1/projects"), contentType: "application/json", want: 422, code: signoff.EINVALID, detail: "empty"},
		{name: "blank body", method: "PATCH", path: fixed("/api/v1/workspace"), body: " \n\t ", want: 422, code: signoff.EINVALID, detail: "empty"},
		{name: "null body", method: "POST", path: fixed("/api/v1/cases"), body: `null`, want: 422, code: signoff.EINVALID, detail: "JSON object"},
		{name: "array body", method: "POST", path: fixed("/api/v1/projects"), body: `[{"name":"x"}]`, want: 422, code: signoff.EINVALID, detail: "JSON object"},
		{name: "oversized body", method: "POST", path: fixed("/api/v1/projects"), body: huge, want: 413, code: signoff.ETOOLARGE},
		{name: "text/plain", method: "POST", path: fixed("/api/v1/projects"), contentType: "text/plain", body: `{"name":"x"}`, want: 415, code: "unsupported_media_type"},
		{name: "no content type", method: "POST", path: fixed("/api/v1/projects"), contentType: "-", body: `{"name":"x"}`, want: 415, code: "unsupported_media_type"},
		{name: "form content type", method: "PATCH", path: fixed("/api/v1/workspace"), contentType: "application/x-www-form-urlencoded", body: `name=x`, want: 415, code: "unsupported_media_type"},
		{name: "non-UTF-8 charset", method: "POST", path: bugPath("/transitions"), contentType: "application/json; charset=latin1", body: `{"command":"escalate"}`, want: 415, code: "unsupported_media_type"},
		{name: "JSON look-alike type", method: "POST", path: fixed("/api/v1/projects"), contentType: "application/jsonx", body: `{"name":"x"}`, want: 415, code: "unsupported_media_type"},

		{name: "malformed case id", method: "GET", path: fixed("/api/v1/cases/case_x"), want: 422, code: signoff.EINVALID, detail: "invalid case id"},
		{name: "encoded traversal as id", method: "GET", path: fixed("/api/v1/cases/..%2f..%2fetc%2fpasswd"), want: 422, code: signoff.EINVALID},
		{name: "encoded dot-dot as id", method: "GET", path: fixed("/api/v1/cases/%2e%2e"), want: 422, code: signoff.EINVALID},
		{name: "very long id", method: "GET", path: fixed("/api/v1/cases/case_" + strings.Repeat("a", 5000)), want: 422, code: signoff.EINVALID},
		{name: "id of the wrong kind", method: "GET", path: func(w *workspace) string { return "/api/v1/cases/" + w.proj.ID }, want: 422, code: signoff.EINVALID},
		{name: "malformed id in events", method: "GET", path: fixed("/api/v1/cases/case_x/events"), want: 422, code: signoff.EINVALID},
		{name: "malformed id in transition", method: "POST", path: fixed("/api/v1/cases/case_x/transitions"), body: `{"command":"escalate"}`, want: 422, code: signoff.EINVALID},
		{name: "malformed project id", method: "PATCH", path: fixed("/api/v1/projects/prj_nope"), body: `{"name":"x"}`, want: 422, code: signoff.EINVALID},
		{name: "malformed actor id", method: "POST", path: fixed("/api/v1/actors/act_..%2f/tokens"), body: `{"label":"x"}`, want: 422, code: signoff.EINVALID},
		{name: "malformed token id", method: "DELETE", path: fixed("/api/v1/tokens/tok_bad"), want: 422, code: signoff.EINVALID},
		{name: "path traversal", method: "GET", path: fixed("/api/v1/cases/../../etc/passwd"), want: 404, code: signoff.ENOTFOUND},
		{name: "path traversal to a real route", method: "GET", path: fixed("/api/v1/x/../workspace"), want: 404, code: signoff.ENOTFOUND},
		{name: "doubled slash", method: "GET", path: fixed("/api/v1//cases"), want: 404, code: signoff.ENOTFOUND},
		{name: "trailing slash", method: "POST", path: fixed("/api/v1/projects/"), body: `{"name":"x"}`, want: 404, code: signoff.ENOTFOUND},
		{name: "well-formed unknown case", method: "POST", path: func(*workspace) string { return "/api/v1/cases/" + signoff.NewID(signoff.PrefixCase) + "/transitions" }, body: `{"command":"escalate"}`, want: 404, code: signoff.ENOTFOUND},

		{name: "negative limit", method: "GET", path: fixed("/api/v1/cases?limit=-1"), want: 422, code: signoff.EINVALID, detail: "limit"},
		{name: "zero limit", method: "GET", path: fixed("/api/v1/cases?limit=0"), want: 422, code: signoff.EINVALID, detail: "limit"},
		{name: "limit too large", method: "GET", path: fixed("/api/v1/cases?limit=501"), want: 422, code: signoff.EINVALID, detail: "limit"},
		{name: "limit not a number", method: "GET", path: fixed("/api/v1/cases?limit=abc"), want: 422, code: signoff.EINVALID, detail: "limit"},
		{name: "empty limit", method: "GET", path: fixed("/api/v1/cases?limit="), want: 422, code: signoff.EINVALID, detail: "limit"},
		{name: "repeated limit", method: "GET", path: fixed("/api/v1/cases?limit=1&limit=2"), want: 422, code: signoff.EINVALID, detail: "limit"},
		{name: "unknown query parameter", method: "GET", path: fixed("/api/v1/cases?status=open"), want: 422, code: signoff.EINVALID, detail: "status"},
		{name: "malformed query", method: "GET", path: fixed("/api/v1/cases?state=%zz"), want: 422, code: signoff.EINVALID},
		{name: "bad cursor", method: "GET", path: fixed("/api/v1/cases?cursor=not-a-cursor"), want: 422, code: signoff.EINVALID, detail: "cursor"},
		{name: "cursor of a non-case", method: "GET", path: fixed("/api/v1/cases?cursor=" + badCursor), want: 422, code: signoff.EINVALID, detail: "cursor"},
		{name: "unknown state", method: "GET", path: fixed("/api/v1/cases?state=exploded"), want: 422, code: signoff.EINVALID, detail: "state"},
		{name: "unknown kind", method: "GET", path: fixed("/api/v1/cases?kind=feature"), want: 422, code: signoff.EINVALID, detail: "kind"},
		{name: "malformed project filter", method: "GET", path: fixed("/api/v1/cases?project_id=1%20OR%201=1"), want: 422, code: signoff.EINVALID},
		{name: "negative after", method: "GET", path: bugPath("/events?after=-5"), want: 422, code: signoff.EINVALID, detail: "after"},
		{name: "after not a number", method: "GET", path: bugPath("/events?after=abc"), want: 422, code: signoff.EINVALID, detail: "after"},
		{name: "events limit too large", method: "GET", path: bugPath("/events?limit=100000"), want: 422, code: signoff.EINVALID, detail: "limit"},

		{name: "unknown role", method: "POST", path: fixed("/api/v1/actors"), body: `{"name":"mallory","role":"admin"}`, want: 422, code: signoff.EINVALID, detail: "role"},
		{name: "system role", method: "POST", path: fixed("/api/v1/actors"), body: `{"name":"mallory","role":"system"}`, want: 422, code: signoff.EINVALID, detail: "role"},
		{name: "missing role", method: "POST", path: fixed("/api/v1/actors"), body: `{"name":"mallory"}`, want: 422, code: signoff.EINVALID, detail: "role"},
		{name: "taken actor name", method: "POST", path: fixed("/api/v1/actors"), body: `{"name":"owner of Acme","role":"viewer"}`, want: 409, code: signoff.ECONFLICT},
		{name: "taken project name", method: "POST", path: fixed("/api/v1/projects"), body: `{"name":"shoplite"}`, want: 409, code: signoff.ECONFLICT},
		{name: "blank project name", method: "POST", path: fixed("/api/v1/projects"), body: `{"name":"  "}`, want: 422, code: signoff.EINVALID},
		{name: "control characters", method: "PATCH", path: fixed("/api/v1/workspace"), body: `{"name":"a\u0000b"}`, want: 422, code: signoff.EINVALID},
		{name: "missing workspace name", method: "PATCH", path: fixed("/api/v1/workspace"), body: `{}`, want: 422, code: signoff.EINVALID, detail: "name"},
		{name: "expiry not RFC 3339", method: "POST", path: ownerPath("/tokens"), body: `{"label":"x","expires_at":"tomorrow"}`, want: 422, code: signoff.EINVALID, detail: "expires_at"},
		{name: "expiry in the past", method: "POST", path: ownerPath("/tokens"), body: `{"label":"x","expires_at":"2001-01-01T00:00:00Z"}`, want: 422, code: signoff.EINVALID},
		{name: "case for an unknown kind", method: "POST", path: fixed("/api/v1/cases"), body: `{"project_id":"` + signoff.NewID(signoff.PrefixProject) + `","kind":"feature","title":"x"}`, want: 422, code: signoff.EINVALID},
		{name: "reporter who is not a reporter", method: "POST", path: fixed("/api/v1/cases"), bodyFor: func(w *workspace) string {
			return `{"project_id":"` + w.proj.ID + `","kind":"bug","title":"x","reporter_id":"` + w.owner.ID + `"}`
		}, want: 422, code: signoff.EINVALID, detail: "reporter"},

		{name: "illegal transition", method: "POST", path: bugPath("/transitions"), body: `{"command":"ticket"}`, want: 409, code: signoff.ECONFLICT, state: "received"},
		{name: "decision by id", method: "POST", path: bugPath("/transitions"), body: `{"command":"approve"}`, want: 403, code: signoff.EFORBIDDEN, detail: "signed approval"},
		{name: "stale version", method: "POST", path: bugPath("/transitions"), body: `{"command":"start_triage","expected_version":7}`, want: 409, code: signoff.ECONFLICT, state: "received"},
		{name: "unknown command", method: "POST", path: bugPath("/transitions"), body: `{"command":"self_destruct"}`, want: 422, code: signoff.EINVALID},
		{name: "missing command", method: "POST", path: bugPath("/transitions"), body: `{}`, want: 422, code: signoff.EINVALID, detail: "command"},

		{name: "malformed task id", method: "GET", path: fixed("/api/v1/tasks/task_x"), want: 422, code: signoff.EINVALID, detail: "task"},
		{name: "unknown task", method: "GET", path: func(*workspace) string { return "/api/v1/tasks/" + signoff.NewID(signoff.PrefixTask) + "/prompt" }, want: 404, code: signoff.ENOTFOUND},
		{name: "unknown task filter", method: "GET", path: fixed("/api/v1/tasks?state=open"), want: 422, code: signoff.EINVALID, detail: "state"},
		{name: "unknown task status", method: "GET", path: fixed("/api/v1/tasks?status=done"), want: 422, code: signoff.EINVALID, detail: "status"},
		{name: "task for a person", method: "POST", path: fixed("/api/v1/tasks"), bodyFor: func(w *workspace) string {
			return `{"case_id":"` + w.bug.ID + `","kind":"triage","role":"owner","input":{}}`
		}, want: 422, code: signoff.EINVALID, detail: "agent role"},
		{name: "task for a missing agent", method: "POST", path: fixed("/api/v1/tasks"), bodyFor: func(w *workspace) string {
			return `{"case_id":"` + w.bug.ID + `","kind":"triage","role":"triager","input":{}}`
		}, want: 404, code: signoff.ENOTFOUND, detail: "triager"},
		{name: "task input not an object", method: "POST", path: fixed("/api/v1/tasks"), bodyFor: func(w *workspace) string {
			return `{"case_id":"` + w.bug.ID + `","kind":"triage","role":"triager","input":"do it"}`
		}, want: 422, code: signoff.EINVALID},
		{name: "close without outcome", method: "POST", path: func(*workspace) string { return "/api/v1/tasks/" + signoff.NewID(signoff.PrefixTask) + "/close" }, body: `{"reason":"x"}`, want: 422, code: signoff.EINVALID, detail: "outcome"},
		{name: "empty message", method: "POST", path: bugPath("/messages"), body: `{"body":"  "}`, want: 422, code: signoff.EINVALID, detail: "body"},
		{name: "message with an author", method: "POST", path: bugPath("/messages"), body: `{"body":"hi","author_id":"act_x"}`, want: 422, code: signoff.EINVALID, detail: "author_id"},
		{name: "addressing of a person", method: "PUT", path: func(w *workspace) string { return "/api/v1/agents/" + w.owner.ID + "/addressing" }, body: `{"rules":[]}`, want: 422, code: signoff.EINVALID, detail: "not an agent"},
		{name: "malformed decision id", method: "GET", path: fixed("/api/v1/decisions/dec_x"), want: 422, code: signoff.EINVALID, detail: "decision"},
		{name: "unknown decision", method: "POST", path: func(*workspace) string {
			return "/api/v1/decisions/" + signoff.NewID(signoff.PrefixDecision) + "/decide"
		},
			body: `{"subject_digest":"` + strings.Repeat("a", 64) + `","approve":true}`, want: 404, code: signoff.ENOTFOUND},
		{name: "roles not a string", method: "PUT", path: fixed("/api/v1/roles"), body: `{"yaml":{"roles":{}}}`, want: 422, code: signoff.EINVALID, detail: `"yaml"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t, store, "Acme")
			body := tt.body
			if tt.bodyFor != nil {
				body = tt.bodyFor(w)
			}
			before := w.head(t)
			got := do(t, srv, request{method: tt.method, path: tt.path(w), token: w.ownerToken, contentType: tt.contentType, body: body})
			if got.status != tt.want {
				t.Fatalf("status = %d, want %d (body %.300s)", got.status, tt.want, got.body)
			}
			p := got.problem(t)
			if p.Code != tt.code {
				t.Fatalf("code = %q, want %q (%s)", p.Code, tt.code, p.Detail)
			}
			if !strings.Contains(p.Detail, tt.detail) {
				t.Fatalf("detail = %q, want it to mention %q", p.Detail, tt.detail)
			}
			if p.CurrentState != tt.state {
				t.Fatalf("current_state = %q, want %q", p.CurrentState, tt.state)
			}
			if after := w.head(t); after != before {
				t.Fatalf("ledger head moved from %d to %d", before, after)
			}
		})
	}
}

func fixed(path string) func(*workspace) string { return func(*workspace) string { return path } }

func bugPath(suffix string) func(*workspace) string {
	return func(w *workspace) string { return "/api/v1/cases/" + w.bug.ID + suffix }
}

func ownerPath(suffix string) func(*workspace) string {
	return func(w *workspace) string { return "/api/v1/actors/" + w.owner.ID + suffix }
}

// TestGoodInputVariants checks that the strictness does not refuse what is
// legitimately JSON: a charset parameter, surrounding whitespace and a PATCH
// that changes one field.
func TestGoodInputVariants(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil)
	got := do(t, srv, request{method: "POST", path: "/api/v1/projects", token: w.ownerToken, contentType: "Application/JSON; charset=UTF-8", body: "\n {\"name\":\"orbit\",\"repo_url\":\"/srv/git/orbit\"} \n"})
	if got.status != http.StatusCreated {
		t.Fatalf("status = %d (%s)", got.status, got.body)
	}
	var p signoff.Project
	got.decode(t, &p)
	if loc := got.header.Get("Location"); loc != "/api/v1/projects/"+p.ID {
		t.Fatalf("Location = %q", loc)
	}
	got = do(t, srv, request{method: "PATCH", path: "/api/v1/projects/" + p.ID, token: w.ownerToken, body: `{"description":"mobile game"}`})
	var up signoff.Project
	got.decode(t, &up)
	if up.Name != "orbit" || up.RepoURL != "/srv/git/orbit" || up.Description != "mobile game" {
		t.Fatalf("patched project = %+v", up)
	}
	got = do(t, srv, request{method: "POST", path: "/api/v1/cases/" + w.bug.ID + "/transitions", token: w.ownerToken, body: `{"command":"start_triage","expected_version":1,"note":"looking"}`})
	var tr struct {
		Case  signoff.Case  `json:"case"`
		Event signoff.Event `json:"event"`
	}
	got.decode(t, &tr)
	if tr.Case.State != "triaging" || tr.Case.Version != 2 || tr.Event.CaseID != w.bug.ID || tr.Event.Seq != w.head(t) {
		t.Fatalf("transition = %+v", tr)
	}
}
