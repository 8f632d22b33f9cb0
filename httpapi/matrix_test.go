package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/notify"
	"github.com/signoff-dev/signoff/webhook"
)

// principals are the columns of the matrix: every assignable role (in the
// order of signoff.AllRoles), then no credential, a well-formed but unknown
// token, and the owner of another workspace using this workspace's ids.
var principals = [14]string{
	"reporter", "operator", "owner", "viewer",
	"concierge", "triager", "reproducer", "fixer", "reviewer", "planner", "recorder",
	"none", "unknown", "foreign",
}

// statuses holds one expected status per principal, in column order.
type statuses [14]int

// matrix is the expected status of every route for every principal. It is
// written out rather than derived from identity's policy so that a wrong
// policy fails here. The reporter's 404s are cases that are not theirs.
var matrix = []struct {
	route string
	req   func(t *testing.T, f *matrixFixture, who string) request
	want  statuses
}{
	//                                                       rep  op   own  view conc tri  repr fix  rev  plan rec  none unk  foreign
	{"GET /healthz", get("/healthz"), statuses{200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200}},
	{"GET /readyz", get("/readyz"), statuses{200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200}},
	{"GET /api/v1/me", get("/api/v1/me"), statuses{200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 200}},

	{"GET /api/v1/workspace", get("/api/v1/workspace"), statuses{403, 200, 200, 200, 403, 403, 403, 403, 403, 403, 403, 401, 401, 200}},
	{"PATCH /api/v1/workspace", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "PATCH", path: "/api/v1/workspace", body: `{"name":"renamed by ` + who + `"}`}
	}, statuses{403, 403, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 200}},

	{"GET /api/v1/projects", get("/api/v1/projects"), statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 200}},
	{"GET /api/v1/projects/{id}", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/projects/" + f.proj.ID}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"POST /api/v1/projects", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/projects", body: `{"name":"project of ` + who + `"}`}
	}, statuses{403, 403, 201, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 201}},
	{"PATCH /api/v1/projects/{id}", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "PATCH", path: "/api/v1/projects/" + f.proj.ID, body: `{"description":"edited by ` + who + `"}`}
	}, statuses{403, 403, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},

	{"GET /api/v1/actors", get("/api/v1/actors"), statuses{403, 200, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 200}},
	{"GET /api/v1/actors/{id}", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/actors/" + f.target.ID}
	}, statuses{403, 200, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"POST /api/v1/actors", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/actors", body: `{"name":"made by ` + who + `","role":"viewer"}`}
	}, statuses{403, 403, 201, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 201}},
	{"GET /api/v1/actors/{id}/tokens", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/actors/" + f.target.ID + "/tokens"}
	}, statuses{403, 403, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"POST /api/v1/actors/{id}/tokens", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/actors/" + f.target.ID + "/tokens", body: `{"label":"by ` + who + `"}`}
	}, statuses{403, 403, 201, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"DELETE /api/v1/tokens/{id}", func(t *testing.T, f *matrixFixture, who string) request {
		tok, _, err := f.store.CreateToken(context.Background(), f.owner, f.target.ID, "doomed", nil)
		if err != nil {
			t.Fatal(err)
		}
		return request{method: "DELETE", path: "/api/v1/tokens/" + tok.ID}
	}, statuses{403, 403, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	// Each cell disables (or enables) a person of its own.
	{"POST /api/v1/actors/{id}/disable", func(t *testing.T, f *matrixFixture, who string) request {
		a := f.actor(t, "to disable by "+who, signoff.RoleViewer)
		return request{method: "POST", path: "/api/v1/actors/" + a.ID + "/disable"}
	}, statuses{403, 403, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"POST /api/v1/actors/{id}/enable", func(t *testing.T, f *matrixFixture, who string) request {
		a := f.actor(t, "to enable by "+who, signoff.RoleViewer)
		if _, _, err := f.store.DisableActor(context.Background(), f.owner, a.ID); err != nil {
			t.Fatal(err)
		}
		return request{method: "POST", path: "/api/v1/actors/" + a.ID + "/enable"}
	}, statuses{403, 403, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},

	{"GET /api/v1/cases", get("/api/v1/cases"), statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 200}},
	{"POST /api/v1/cases", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/cases", body: `{"project_id":"` + f.proj.ID + `","kind":"bug","title":"filed by ` + who + `"}`}
	}, statuses{403, 201, 201, 403, 201, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/cases/{id}", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/cases/" + f.bug.ID}
	}, statuses{404, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	// escalate from received is open to every agent on its open task there
	// and to the humans who work cases; the viewer is stopped by policy,
	// the reporter by owning a different case.
	{"POST /api/v1/cases/{id}/transitions", func(t *testing.T, f *matrixFixture, who string) request {
		c := f.newCase(t, signoff.KindBug, f.otherReporter.ID)
		f.taskOn(t, c, who)
		return request{method: "POST", path: "/api/v1/cases/" + c.ID + "/transitions", body: `{"command":"escalate","note":"by ` + who + `"}`}
	}, statuses{404, 200, 200, 403, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	// A note that moves nothing: agents on a case they have a task on, and
	// the people who run the desk.
	{"POST /api/v1/cases/{id}/attention", func(t *testing.T, f *matrixFixture, who string) request {
		c := f.newCase(t, signoff.KindBug, f.otherReporter.ID)
		f.taskOn(t, c, who)
		return request{method: "POST", path: "/api/v1/cases/" + c.ID + "/attention", body: `{"note":"please look, from ` + who + `"}`}
	}, statuses{403, 201, 201, 403, 201, 201, 201, 201, 201, 201, 201, 401, 401, 404}},
	{"GET /api/v1/cases/{id}/events", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/cases/" + f.bug.ID + "/events"}
	}, statuses{404, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	// The ledger's event stream, each caller's own view of it; once=1
	// answers the first batch and ends.
	{"GET /api/v1/events", get("/api/v1/events?after=0&once=1"), statuses{200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 200}},
	{"GET /api/v1/cases/{id}/reports", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/cases/" + f.bug.ID + "/reports"}
	}, statuses{404, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"GET /api/v1/cases/{id}/triage", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/cases/" + f.bug.ID + "/triage"}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},

	// Tasks. Reads of one task show the store's isolation: an agent sees
	// only its own (the fixer's task answers 404 to every other agent, as
	// if it did not exist). Where a cell acts on a task, the task is made
	// for it and assigned to the calling agent itself, so that the status
	// is the policy's; receipt_test covers acting on another's task.
	{"GET /api/v1/tasks", get("/api/v1/tasks"), statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 200}},
	{"POST /api/v1/tasks", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/tasks", body: `{"case_id":"` + f.bug.ID + `","kind":"triage","role":"triager","assignee_id":"` +
			f.actors["triager"].ID + `","input":{"asked_by":"` + who + `"}}`}
	}, statuses{403, 201, 201, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/tasks/{id}", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/tasks/" + f.task.ID}
	}, statuses{403, 200, 200, 200, 404, 404, 404, 200, 404, 404, 404, 401, 401, 404}},
	{"GET /api/v1/tasks/{id}/prompt", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/tasks/" + f.task.ID + "/prompt"}
	}, statuses{403, 200, 200, 200, 404, 404, 404, 200, 404, 404, 404, 401, 401, 404}},
	{"POST /api/v1/tasks/{id}/submit", func(t *testing.T, f *matrixFixture, who string) request {
		tk := f.newTask(t, f.assignee(who))
		return request{method: "POST", path: "/api/v1/tasks/" + tk.ID + "/submit", body: `{"input_digest":"` + tk.InputDigest + `","output":{"by":"` + who + `"}}`}
	}, statuses{403, 403, 403, 403, 200, 200, 200, 200, 200, 200, 200, 401, 401, 403}},
	{"POST /api/v1/tasks/{id}/handoff", func(t *testing.T, f *matrixFixture, who string) request {
		tk := f.recordedTask(t, f.assignee(who))
		return request{method: "POST", path: "/api/v1/tasks/" + tk.ID + "/handoff", body: `{"input_digest":"` + tk.InputDigest + `","to":"` + handoffTo[who] + `","reason":"next step"}`}
	}, statuses{403, 403, 403, 403, 201, 201, 201, 201, 201, 201, 201, 401, 401, 403}},
	// People cancel; an agent gives its own task up.
	{"POST /api/v1/tasks/{id}/close", func(t *testing.T, f *matrixFixture, who string) request {
		tk := f.newTask(t, f.assignee(who))
		outcome := signoff.OutcomeCancelled
		if signoff.Role(who).IsAgent() {
			outcome = signoff.OutcomeNeedsHuman
		}
		return request{method: "POST", path: "/api/v1/tasks/" + tk.ID + "/close", body: `{"outcome":"` + outcome + `","reason":"closed by ` + who + `"}`}
	}, statuses{403, 200, 200, 403, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"GET /api/v1/tasks/{id}/calls", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/tasks/" + f.task.ID + "/calls"}
	}, statuses{403, 200, 200, 200, 404, 404, 404, 200, 404, 404, 404, 401, 401, 404}},

	// The case room. Viewers watch and reporters speak through their
	// tracking link only.
	{"GET /api/v1/cases/{id}/messages", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/cases/" + f.bug.ID + "/messages"}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	// An agent posts in the room of a case it has (or had) a task on.
	{"POST /api/v1/cases/{id}/messages", func(t *testing.T, f *matrixFixture, who string) request {
		c := f.newCase(t, signoff.KindBug, f.otherReporter.ID)
		f.taskOn(t, c, who)
		return request{method: "POST", path: "/api/v1/cases/" + c.ID + "/messages", body: `{"body":"a note from ` + who + `"}`}
	}, statuses{403, 201, 201, 403, 201, 201, 201, 201, 201, 201, 201, 401, 401, 404}},

	// Agents: presence, addressing and the role configuration. An agent
	// reads its own addressing policy; the one people read and write is
	// the operator's agent, so the operator passes as its owner.
	{"GET /api/v1/agents", get("/api/v1/agents"), statuses{403, 200, 200, 200, 403, 403, 403, 403, 403, 403, 403, 401, 401, 200}},
	{"POST /api/v1/agents/heartbeat", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/agents/heartbeat", body: `{"client":"matrix ` + who + `"}`}
	}, statuses{403, 403, 403, 403, 200, 200, 200, 200, 200, 200, 200, 401, 401, 403}},
	{"GET /api/v1/agents/{id}/addressing", func(t *testing.T, f *matrixFixture, who string) request {
		id := f.opAgent.ID
		if signoff.Role(who).IsAgent() {
			id = f.actors[who].ID
		}
		return request{method: "GET", path: "/api/v1/agents/" + id + "/addressing"}
	}, statuses{403, 200, 200, 403, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"PUT /api/v1/agents/{id}/addressing", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "PUT", path: "/api/v1/agents/" + f.opAgent.ID + "/addressing", body: `{"rules":[{"owner":true}]}`}
	}, statuses{403, 200, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/roles", get("/api/v1/roles"), statuses{403, 200, 200, 200, 403, 403, 403, 403, 403, 403, 403, 401, 401, 200}},
	// Every PUT stores the fixture's own configuration, so the handoff
	// cells running alongside see the same graph.
	{"PUT /api/v1/roles", func(t *testing.T, f *matrixFixture, who string) request {
		b, _ := json.Marshal(map[string]string{"yaml": matrixRoles})
		return request{method: "PUT", path: "/api/v1/roles", body: string(b)}
	}, statuses{403, 403, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 200}},

	// Decisions: every agent may read one; only the people who run the
	// desk decide (SPEC principle 4). Each decide cell has a case and a
	// pending decision of its own.
	{"GET /api/v1/decisions/{id}", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/decisions/" + f.decision.ID}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"POST /api/v1/decisions/{id}/decide", func(t *testing.T, f *matrixFixture, who string) request {
		d := f.newDecision(t, f.newCase(t, signoff.KindChange, ""))
		return request{method: "POST", path: "/api/v1/decisions/" + d.ID + "/decide", body: `{"subject_digest":"` + d.SubjectDigest + `","approve":true}`}
	}, statuses{403, 200, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},

	// Project data. Everyone but reporters reads; the desk and agents file
	// tickets and comments; only the desk edits and imports. Writes that
	// replace data (owners, datasets) each get a project of their own, so
	// the cells running alongside keep theirs.
	{"GET /api/v1/projects/{id}/tickets", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/projects/" + f.proj.ID + "/tickets"}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"POST /api/v1/projects/{id}/tickets", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/projects/" + f.proj.ID + "/tickets", body: `{"title":"filed by ` + who + `","severity":"low"}`}
	}, statuses{403, 201, 201, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/projects/{id}/tickets/{ticket}", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/projects/" + f.proj.ID + "/tickets/" + f.ticket(t).ID}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"PATCH /api/v1/projects/{id}/tickets/{ticket}", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "PATCH", path: "/api/v1/projects/" + f.proj.ID + "/tickets/" + f.ticket(t).ID, body: `{"status":"closed","owner":"` + who + `"}`}
	}, statuses{403, 200, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"POST /api/v1/projects/{id}/tickets/{ticket}/comments", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/projects/" + f.proj.ID + "/tickets/" + f.ticket(t).ID + "/comments", body: `{"body":"+1 from ` + who + `"}`}
	}, statuses{403, 201, 201, 403, 201, 201, 201, 201, 201, 201, 201, 401, 401, 404}},
	{"GET /api/v1/projects/{id}/crashes", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/projects/" + f.proj.ID + "/crashes"}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"POST /api/v1/projects/{id}/crashes", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/projects/" + f.proj.ID + "/crashes", body: `{"crashes":[{"timestamp":"2026-09-01T04:26:00Z","signature":"NPE:Cart","user_id":"` + who + `"}]}`}
	}, statuses{403, 201, 201, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/projects/{id}/releases", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/projects/" + f.proj.ID + "/releases"}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"PUT /api/v1/projects/{id}/releases", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "PUT", path: "/api/v1/projects/" + f.proj.ID + "/releases", body: `{"current_version":"3.1.0","active_users_by_version":{"3.1.0":100}}`}
	}, statuses{403, 200, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/projects/{id}/owners", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/projects/" + f.proj.ID + "/owners"}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"PUT /api/v1/projects/{id}/owners", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "PUT", path: "/api/v1/projects/" + f.dataProject(t).ID + "/owners", body: `{"owners":[{"component":"checkout","team":"team-pay"}]}`}
	}, statuses{403, 200, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"POST /api/v1/projects/{id}/dataset", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/projects/" + f.dataProject(t).ID + "/dataset", body: `{"tickets":[{"id":"SHOP-1","title":"imported by ` + who + `"}]}`}
	}, statuses{403, 200, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},

	// The public intake and the tracking link ignore credentials: the
	// project id and the tracking secret are all that count.
	{"POST /api/v1/projects/{id}/reports", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/projects/" + f.proj.ID + "/reports", body: `{"text":"crash on checkout, sent with ` + who + `"}`}
	}, statuses{201, 201, 201, 201, 201, 201, 201, 201, 201, 201, 201, 201, 201, 201}},
	{"GET /api/v1/track/{token}", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/track/" + f.track(t)}
	}, statuses{200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200}},
	// A new report's case is asking nothing yet, so its answer is
	// refused, whoever sends it.
	{"POST /api/v1/track/{token}/answers", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/track/" + f.track(t) + "/answers", body: `{"text":"still broken"}`}
	}, statuses{409, 409, 409, 409, 409, 409, 409, 409, 409, 409, 409, 409, 409, 409}},
	// The reporter's yes or no reaches the case through the secret alone;
	// a new report's case is asking nothing yet.
	{"POST /api/v1/track/{token}/decision", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/track/" + f.track(t) + "/decision", body: `{"question_digest":"` + strings.Repeat("0", 64) + `","answer":"yes"}`}
	}, statuses{409, 409, 409, 409, 409, 409, 409, 409, 409, 409, 409, 409, 409, 409}},

	// The bug loop. Everyone but reporters reads the repository settings,
	// the deployments and the loop record; only the owner sets the
	// repository. Starting the loop and submitting candidates are the
	// desk's, and approving, merging and the approval keys are for people
	// who run the desk and for no agent (SPEC principle 4). Past the
	// policy, the desk answers from the store: the matrix project has no
	// repository settings (404 from reproduce), and the bug has only just
	// been received, so it takes no candidate and has no card to approve
	// or merge (409).
	{"GET /api/v1/projects/{id}/repo", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/projects/" + f.repoProj.ID + "/repo"}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"PUT /api/v1/projects/{id}/repo", func(t *testing.T, f *matrixFixture, who string) request {
		// The server operator binds the repository (path, url, deploy
		// hook: database access only); owners change the rest over the API.
		p := f.dataProject(t)
		if _, err := f.store.SetRepoSettings(context.Background(), signoff.CLIActor(f.owner.WorkspaceID), p.ID, signoff.RepoSettings{Path: "/srv/signoff/repos/shoplite"}); err != nil {
			t.Fatal(err)
		}
		return request{method: "PUT", path: "/api/v1/projects/" + p.ID + "/repo",
			body: `{"path":"/srv/signoff/repos/shoplite","main_branch":"main","fix_paths":["cart/**"],"harness_paths":["testdata/**"]}`}
	}, statuses{403, 403, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/projects/{id}/deployments", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/projects/" + f.proj.ID + "/deployments"}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"GET /api/v1/cases/{id}/loop", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/cases/" + f.loopCase.ID + "/loop"}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"POST /api/v1/cases/{id}/reproduce", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/cases/" + f.loopCase.ID + "/reproduce"}
	}, statuses{403, 404, 404, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"POST /api/v1/cases/{id}/candidates", func(t *testing.T, f *matrixFixture, who string) request {
		b, _ := json.Marshal(map[string]string{"patch": "--- a/cart/coupon.go\n+++ b/cart/coupon.go\n@@ -1 +1 @@\n-package cart\n+package cart // by " + who + "\n"})
		return request{method: "POST", path: "/api/v1/cases/" + f.bug.ID + "/candidates", body: string(b)}
	}, statuses{403, 409, 409, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	// The staff review of a reproduction: people who run or watch the
	// desk read its source, only those who run it decide, no agent and no
	// reporter does either. The fixture's bug has no reproduction yet, so
	// the desk answers 409 past the policy (harness_test.go reviews a
	// real one).
	{"GET /api/v1/cases/{id}/harness", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/cases/" + f.bug.ID + "/harness"}
	}, statuses{403, 409, 409, 409, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"POST /api/v1/cases/{id}/harness/review", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/cases/" + f.bug.ID + "/harness/review",
			body: `{"review_digest":"` + strings.Repeat("ab", 32) + `","decision":"approve","note":"by ` + who + `"}`}
	}, statuses{403, 409, 409, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/cases/{id}/approval", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/cases/" + f.bug.ID + "/approval"}
	}, statuses{403, 409, 409, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	// Each cell signs with a key of its own, registered first when the
	// caller may hold one, so that people get past the signature to the
	// case itself.
	{"POST /api/v1/cases/{id}/approvals", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/cases/" + f.bug.ID + "/approvals", body: f.approval(t, who, f.bug.ID)}
	}, statuses{403, 409, 409, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"POST /api/v1/cases/{id}/merge", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/cases/" + f.bug.ID + "/merge"}
	}, statuses{403, 409, 409, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"POST /api/v1/cases/{id}/reverify", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/cases/" + f.bug.ID + "/reverify"}
	}, statuses{403, 409, 409, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/cases/{id}/candidates/{candidate}/evidence", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/cases/" + f.bug.ID + "/candidates/" + signoff.NewID(signoff.PrefixCandidate) + "/evidence"}
	}, statuses{403, 404, 404, 404, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/keys", get("/api/v1/keys"), statuses{403, 200, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 200}},
	{"POST /api/v1/keys", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/keys", body: keyBody(t)}
	}, statuses{403, 201, 201, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 201}},
	// Each cell revokes a new key of the owner's: the owner may, an
	// operator only their own (another's answers as missing), the foreign
	// owner finds nothing.
	{"POST /api/v1/keys/{id}/revoke", func(t *testing.T, f *matrixFixture, who string) request {
		_, pemKey := newApproverKey(t)
		k, err := f.store.RegisterKey(context.Background(), f.owner, pemKey)
		if err != nil {
			t.Fatal(err)
		}
		return request{method: "POST", path: "/api/v1/keys/" + k.ID + "/revoke"}
	}, statuses{403, 404, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	// The deployment webhook ignores credentials too: its signature is
	// the credential. Every cell is a genuine delivery of its own.
	{"POST /api/v1/hooks/deployments/{id}", func(t *testing.T, f *matrixFixture, who string) request {
		return hookRequest(t, f.repoProj.ID, f.hookSecret, "matrix-"+who, time.Now(), deploymentBody)
	}, statuses{202, 202, 202, 202, 202, 202, 202, 202, 202, 202, 202, 202, 202, 202}},

	// The flag store. Everyone but reporters reads flags; only the owner
	// declares them and manages the environments' OFREP keys. No route
	// sets a flag's value. Each cell that needs a flag or a key gets its
	// own (see ofrep_test.go).
	{"GET /api/v1/projects/{id}/flags", func(t *testing.T, f *matrixFixture, who string) request {
		f.flag(t, "listed-"+who)
		return request{method: "GET", path: "/api/v1/projects/" + f.proj.ID + "/flags?env=production"}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"POST /api/v1/projects/{id}/flags", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/projects/" + f.proj.ID + "/flags", body: `{"environment":"production","key":"declared-by-` + who + `","type":"boolean","value":false}`}
	}, statuses{403, 403, 201, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/projects/{id}/flags/{env}/{key}", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/projects/" + f.proj.ID + "/flags/production/" + f.flag(t, "read-"+who).Key}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	{"GET /api/v1/projects/{id}/flag-keys", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/projects/" + f.proj.ID + "/flag-keys"}
	}, statuses{403, 403, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"POST /api/v1/projects/{id}/flag-keys", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/projects/" + f.proj.ID + "/flag-keys", body: `{"environment":"production","label":"issued to ` + who + `"}`}
	}, statuses{403, 403, 201, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"DELETE /api/v1/flag-keys/{id}", func(t *testing.T, f *matrixFixture, who string) request {
		k, _ := f.flagKey(t, "doomed "+who)
		return request{method: "DELETE", path: "/api/v1/flag-keys/" + k.ID}
	}, statuses{403, 403, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},

	// The change loop. Everyone but reporters reads the policy, change
	// cases and receipts; only the owner sets the policy. People open
	// requests; people and the planner draft plans; only people run the
	// gate and roll back (SPEC principle 4). Past the policy, the change
	// desk answers: the fixture's change is only requested, so it has no
	// approved plan to run (409) and nothing executed to roll back (409).
	// The card and approvals of a change case are the routes above.
	{"GET /api/v1/change-policy", get("/api/v1/change-policy"), statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 200}},
	{"PUT /api/v1/change-policy", func(t *testing.T, f *matrixFixture, who string) request {
		// The same policy again, at the version in force: the cells that
		// plan meanwhile see the same digest.
		by := f.owner
		if who == "foreign" {
			by = f.foreign.owner
		}
		var version int64
		if cur, err := f.store.GetChangePolicy(context.Background(), by); err == nil {
			version = cur.Version
		}
		b, _ := json.Marshal(map[string]any{"yaml": f.changePolicy, "expected_version": version})
		return request{method: "PUT", path: "/api/v1/change-policy", body: string(b)}
	}, statuses{403, 403, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 200}},
	{"POST /api/v1/projects/{id}/changes", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/projects/" + f.proj.ID + "/changes", body: `{"reason":"turn matrix_change on in prod, asked by ` + who + `"}`}
	}, statuses{403, 201, 201, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/cases/{id}/change", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/cases/" + f.changeCase.ID + "/change"}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},
	// Each cell plans a request of its own.
	{"POST /api/v1/cases/{id}/plan", func(t *testing.T, f *matrixFixture, who string) request {
		c := f.newChange(t, who)
		f.taskOn(t, c, who)
		return request{method: "POST", path: "/api/v1/cases/" + c.ID + "/plan",
			body: `{"target":"flag:prod/matrix_change","params":{"value":true},"health_check":{"kind":"http","method":"GET","url":"http://127.0.0.1:1/health","expect_status":200,"window_seconds":2,"interval_seconds":1}}`}
	}, statuses{403, 201, 201, 403, 403, 403, 403, 403, 403, 201, 403, 401, 401, 404}},
	{"POST /api/v1/cases/{id}/execute", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/cases/" + f.changeCase.ID + "/execute"}
	}, statuses{403, 409, 409, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"POST /api/v1/cases/{id}/rollback", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/cases/" + f.changeCase.ID + "/rollback", body: `{"reason":"undo, asked by ` + who + `"}`}
	}, statuses{403, 409, 409, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	// The emergency write: the op admits the desk's people, and the
	// matrix's policy names no bypass roles, so the desk refuses them too.
	{"POST /api/v1/projects/{id}/flags/{env}/{key}/emergency", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/projects/" + f.proj.ID + "/flags/prod/matrix_change/emergency",
			body: `{"value":true,"reason":"an emergency write asked by ` + who + `"}`}
	}, statuses{403, 403, 403, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 403}},
	// People export a change's evidence; the matrix's change has no plan
	// yet, so there is nothing to export (409). Agents hold change.read
	// but the desk refuses them.
	{"GET /api/v1/cases/{id}/change/evidence", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/cases/" + f.changeCase.ID + "/change/evidence"}
	}, statuses{403, 409, 409, 409, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/cases/{id}/receipts", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/cases/" + f.changeCase.ID + "/receipts"}
	}, statuses{403, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 404}},

	// Notifications (outbox.go). The staff read channels, the outbox and
	// cards; the owner configures channels and maps chat users; the desk
	// re-drives a dead message (a new one for every cell).
	{"GET /api/v1/channels", get("/api/v1/channels"), statuses{403, 200, 200, 200, 403, 403, 403, 403, 403, 403, 403, 401, 401, 200}},
	{"PUT /api/v1/channels/{name}", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "PUT", path: "/api/v1/channels/hook-" + who, body: `{"kind":"webhook","secrets":{"url":"https://hooks.example.com/` + who + `","webhook_secret":"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}}`}
	}, statuses{403, 403, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 200}},
	{"GET /api/v1/outbox", get("/api/v1/outbox?state=pending&limit=10"), statuses{403, 200, 200, 200, 403, 403, 403, 403, 403, 403, 403, 401, 401, 200}},
	{"GET /api/v1/outbox/{id}", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/outbox/" + f.message}
	}, statuses{403, 200, 200, 200, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"POST /api/v1/outbox/{id}/retry", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/outbox/" + f.deadMessage(t) + "/retry"}
	}, statuses{403, 200, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	{"GET /api/v1/cases/{id}/cards", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "GET", path: "/api/v1/cases/" + f.bug.ID + "/cards"}
	}, statuses{403, 200, 200, 200, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	// The foreign owner names a person of workspace A: not found in theirs.
	{"PUT /api/v1/chat-users", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "PUT", path: "/api/v1/chat-users", body: `{"platform":"slack","team_id":"T0MATRIX","user_id":"U` + strings.ToUpper(who) + `","actor_id":"` + f.actors["operator"].ID + `"}`}
	}, statuses{403, 403, 200, 403, 403, 403, 403, 403, 403, 403, 403, 401, 401, 404}},
	// The chat platforms' endpoints ignore API tokens: the platform's
	// signature (Slack) or token (Mattermost) is the credential, and no
	// request here has one.
	{"POST /api/v1/chat/{channel}/slack/commands", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/chat/" + f.slack.ID + "/slack/commands", contentType: "application/x-www-form-urlencoded", body: "command=%2Fsignoff&user_id=U1&team_id=T1&text=approve"}
	}, statuses{401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401}},
	{"POST /api/v1/chat/{channel}/slack/actions", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/chat/" + f.slack.ID + "/slack/actions", contentType: "application/x-www-form-urlencoded", body: "payload=%7B%7D"}
	}, statuses{401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401}},
	{"POST /api/v1/chat/{channel}/mattermost/commands", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/chat/" + f.mattermost.ID + "/mattermost/commands", contentType: "application/x-www-form-urlencoded", body: "command=%2Fsignoff&user_id=u1&token=guess&text=approve"}
	}, statuses{401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401}},
	{"POST /api/v1/chat/{channel}/mattermost/actions", func(t *testing.T, f *matrixFixture, who string) request {
		return request{method: "POST", path: "/api/v1/chat/" + f.mattermost.ID + "/mattermost/actions", body: `{"user_id":"u1","context":{"token":"guess"}}`}
	}, statuses{401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401, 401}},

	// OFREP ignores API tokens: the environment's flag key, sent here in
	// X-API-Key beside the caller's token, is the credential, so every
	// principal evaluates alike (ofrep_test.go covers the keys).
	{"POST /ofrep/v1/evaluate/flags/{key}", func(t *testing.T, f *matrixFixture, who string) request {
		_, secret := f.flagKey(t, "app of "+who)
		return request{method: "POST", path: "/ofrep/v1/evaluate/flags/" + f.flag(t, "evaluated-by-"+who).Key, body: `{"context":{"targetingKey":"` + who + `"}}`,
			header: map[string]string{"X-API-Key": secret}}
	}, statuses{200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200}},
	{"POST /ofrep/v1/evaluate/flags", func(t *testing.T, f *matrixFixture, who string) request {
		_, secret := f.flagKey(t, "bulk app of "+who)
		return request{method: "POST", path: "/ofrep/v1/evaluate/flags", body: `{"context":{}}`, header: map[string]string{"X-API-Key": secret}}
	}, statuses{200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200}},
}

func get(path string) func(*testing.T, *matrixFixture, string) request {
	return func(*testing.T, *matrixFixture, string) request { return request{method: "GET", path: path} }
}

// matrixFixture is workspace A with one actor and token per role, the
// reporter's own case, another reporter's case, and workspace B's owner.
type matrixFixture struct {
	*workspace
	tokens        map[string]string
	actors        map[string]signoff.Actor
	otherReporter signoff.Actor
	target        signoff.Actor // whose tokens are listed and issued
	ownCase       signoff.Case  // the reporter's own case, in needs_info
	opAgent       signoff.Actor // an agent the operator owns
	task          signoff.Task  // an open task of the fixer's on the bug
	decision      signoff.Decision
	foreign       *workspace      // the foreign principal's workspace
	repoProj      signoff.Project // a project with repository settings and a webhook secret
	hookSecret    string          // repoProj's webhook secret
	loopCase      signoff.Case    // a ticketed bug of the matrix project with a loop record
	changeDesk    *changedesk.Desk
	changePolicy  string       // workspace A's change policy
	changeCase    signoff.Case // a change request of the matrix project, not planned
	notifyFixture              // channels and an outbox message of workspace A (outbox_test.go)
}

// newChange opens a change request on the matrix project as the owner.
func (f *matrixFixture) newChange(t *testing.T, who string) signoff.Case {
	t.Helper()
	c, _, err := f.changeDesk.Request(context.Background(), f.owner, changedesk.RequestInput{ProjectID: f.proj.ID,
		Reason: "turn matrix_change on in prod for " + who})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// matrixRoles is the fixture's role configuration: the built-in handoffs,
// and one for the reviewer and the recorder too, so that every agent role
// has somewhere to hand off to (see handoffTo).
const matrixRoles = `roles:
  reviewer:
    provider: external
    handoffs: [fixer]
  recorder:
    provider: external
    handoffs: [concierge]
`

// handoffTo is where each agent role hands off under matrixRoles; every
// target has exactly one agent in the fixture. People hand off nowhere:
// the policy stops them first.
var handoffTo = map[string]string{
	"concierge": "triager", "triager": "reproducer", "reproducer": "fixer", "fixer": "reviewer",
	"reviewer": "fixer", "planner": "reviewer", "recorder": "concierge",
	"reporter": "fixer", "operator": "fixer", "owner": "fixer", "viewer": "fixer", "none": "fixer", "unknown": "fixer", "foreign": "fixer",
}

func newMatrixFixture(t *testing.T) *matrixFixture {
	t.Helper()
	store := openStore(t)
	f := &matrixFixture{workspace: newWorkspace(t, store, "Acme"), tokens: map[string]string{}, actors: map[string]signoff.Actor{}}
	for _, role := range signoff.AllRoles() {
		var a signoff.Actor
		if role == signoff.RoleOwner {
			a = f.owner
		} else {
			a = f.actor(t, string(role)+" one", role)
		}
		f.actors[string(role)] = a
		f.tokens[string(role)] = f.token(t, a)
	}
	f.tokens["unknown"] = unknownToken()
	f.foreign = newWorkspace(t, store, "Globex")
	f.tokens["foreign"] = f.foreign.ownerToken
	f.otherReporter = f.actor(t, "another reporter", signoff.RoleReporter)
	f.target = f.actor(t, "token holder", signoff.RoleViewer)
	f.bug = f.newCase(t, signoff.KindBug, f.otherReporter.ID)
	f.ownCase = f.newCase(t, signoff.KindBug, f.actors["reporter"].ID)
	f.move(t, f.ownCase, "start_triage", "request_info")
	ctx := context.Background()
	// The operator's agent is a second planner: planners are nobody's
	// handoff target, so tasks for every target role still find exactly
	// one agent.
	var err error
	if f.opAgent, err = f.store.CreateActor(ctx, f.actors["operator"], "operators planner", signoff.RolePlanner); err != nil {
		t.Fatal(err)
	}
	if _, err := agent.SaveConfig(ctx, f.store, f.owner, []byte(matrixRoles), agent.NewRegistry(agent.BaseTools()...)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.StartTriage(ctx, f.owner, f.bug.ID, "matrix-item", nil); err != nil {
		t.Fatal(err)
	}
	f.task = f.newTask(t, f.actors["fixer"])
	f.decision = f.newDecision(t, f.bug)
	f.repoProj = f.dataProject(t)
	f.hookSecret = webhook.NewSecret()
	if _, err := f.store.SetRepoSettings(ctx, signoff.CLIActor(f.owner.WorkspaceID), f.repoProj.ID, signoff.RepoSettings{Path: t.TempDir(), WebhookSecret: f.hookSecret}); err != nil {
		t.Fatal(err)
	}
	f.loopCase = f.newCase(t, signoff.KindBug, f.otherReporter.ID)
	f.move(t, f.loopCase, "start_triage", "ticket")
	if _, _, err := f.store.AdvanceLoop(ctx, signoff.SystemActor(f.ws.ID), signoff.LoopUpdate{CaseID: f.loopCase.ID, State: signoff.BugLoopState{Round: 1}}); err != nil {
		t.Fatal(err)
	}
	// The change loop: a prod flag, a policy that allows it, a request.
	if _, err := f.store.CreateFlag(ctx, f.owner, f.proj.ID, "prod", "matrix_change", signoff.FlagBoolean, json.RawMessage("false")); err != nil {
		t.Fatal(err)
	}
	f.changePolicy = changePolicyYAML(f.actors["operator"].ID)
	if _, err := f.store.SetChangePolicy(ctx, f.owner, f.changePolicy, 0, change.PolicyDigest); err != nil {
		t.Fatal(err)
	}
	f.changeDesk = newChangeDesk(f.store)
	f.changeCase = f.newChange(t, "the fixture")
	f.notifyFixture = f.withChannels(t)
	return f
}

// approval is the body of an approval of caseID by who, signed with a new
// key that is registered for who when who may register one.
func (f *matrixFixture) approval(t *testing.T, who, caseID string) string {
	t.Helper()
	key, pemKey := newApproverKey(t)
	var by signoff.Actor
	switch who {
	case "foreign":
		by = f.foreign.owner
	case "none", "unknown":
	default:
		by = f.actors[who]
	}
	if by.Role == signoff.RoleOwner || by.Role == signoff.RoleOperator {
		if _, err := f.store.RegisterKey(context.Background(), by, pemKey); err != nil {
			t.Fatal(err)
		}
	}
	return approvalBody(t, key, caseID, by.ID)
}

// taskOn opens a task on c for who when who is an agent: an agent changes
// a case only on its open task there.
func (f *matrixFixture) taskOn(t *testing.T, c signoff.Case, who string) {
	t.Helper()
	if !signoff.Role(who).IsAgent() {
		return
	}
	a := f.actors[who]
	if _, err := f.store.CreateTask(context.Background(), f.owner, signoff.TaskInput{CaseID: c.ID, Kind: "step", Role: a.Role, AssigneeID: a.ID,
		Input: json.RawMessage(`{"case":"` + c.ID + `"}`)}); err != nil {
		t.Fatalf("CreateTask for %s: %v", who, err)
	}
}

// assignee is who a task acted on by who is assigned to: the caller itself
// when it is an agent, else the fixer.
func (f *matrixFixture) assignee(who string) signoff.Actor {
	if signoff.Role(who).IsAgent() {
		return f.actors[who]
	}
	return f.actors["fixer"]
}

func TestRoleMatrix(t *testing.T) {
	t.Parallel()
	for i, r := range signoff.AllRoles() {
		if principals[i] != string(r) {
			t.Fatalf("principal %d = %q, want role %q: update the matrix for the new role list", i, principals[i], r)
		}
	}
	if n := len(signoff.AllRoles()); n != 11 {
		t.Fatalf("%d assignable roles, the matrix has 11 columns for them", n)
	}
	f := newMatrixFixture(t)
	srv := serveDesk(t, f.store, httpapi.WithChangeDesk(f.changeDesk), httpapi.WithNotify(&notify.Desk{Store: f.store}))
	cells := 0
	for _, row := range matrix {
		for col, who := range principals {
			want := row.want[col]
			cells++
			t.Run(row.route+"/"+who, func(t *testing.T) {
				t.Parallel()
				rq := row.req(t, f, who)
				rq.token = f.tokens[who]
				got := do(t, srv, rq)
				if got.status != want {
					t.Fatalf("%s as %s: status = %d, want %d (body %s)", row.route, who, got.status, want, got.body)
				}
				checkShape(t, got)
			})
		}
	}
	// Every route the server registers has a row, and every row a route.
	rows := map[string]bool{}
	for _, row := range matrix {
		rows[row.route] = true
	}
	for _, p := range httpapi.Routes() {
		if !rows[p] {
			t.Errorf("route %s has no row in the matrix", p)
		}
		delete(rows, p)
	}
	for r := range rows {
		t.Errorf("matrix row %s names no route", r)
	}
	if want := len(httpapi.Routes()) * len(principals); cells != want {
		t.Fatalf("tested %d cells, want %d", cells, want)
	}
}

// checkShape checks what every response must carry whatever its status.
func checkShape(t *testing.T, got response) {
	t.Helper()
	if got.header.Get("X-Content-Type-Options") != "nosniff" || got.header.Get("Cache-Control") != "no-store" || got.header.Get("X-Request-Id") == "" {
		t.Fatalf("missing common headers: %v", got.header)
	}
	if got.status >= 400 {
		got.problem(t)
	} else if ct := got.header.Get("Content-Type"); ct != "application/json" && ct != "text/event-stream" { // GET /api/v1/events
		t.Fatalf("Content-Type = %q, want application/json", ct)
	}
	if got.status == http.StatusUnauthorized && got.header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("401 without WWW-Authenticate: Bearer: %v", got.header)
	}
}

// TestReporterOwnCase covers the reporter on the one case that is theirs:
// they may read it and its events and give their answer, but the transition
// table still decides which commands they hold.
func TestReporterOwnCase(t *testing.T) {
	t.Parallel()
	f := newMatrixFixture(t)
	srv := serve(t, f.store, nil)
	tok := f.tokens["reporter"]
	tests := []struct {
		name string
		rq   request
		want int
	}{
		{"read own case", request{method: "GET", path: "/api/v1/cases/" + f.ownCase.ID}, 200},
		{"read own events", request{method: "GET", path: "/api/v1/cases/" + f.ownCase.ID + "/events"}, 200},
		{"escalate is not a reporter command", request{method: "POST", path: "/api/v1/cases/" + f.ownCase.ID + "/transitions", body: `{"command":"escalate"}`}, 403},
		{"provide info on own case", request{method: "POST", path: "/api/v1/cases/" + f.ownCase.ID + "/transitions", body: `{"command":"provide_info","note":"it happens on Android 14"}`}, 200},
		{"list cases", request{method: "GET", path: "/api/v1/cases"}, 403},
	}
	for _, tt := range tests {
		// Sequential: the transitions act on the same case in order.
		tt.rq.token = tok
		got := do(t, srv, tt.rq)
		if got.status != tt.want {
			t.Fatalf("%s: status = %d, want %d (body %s)", tt.name, got.status, tt.want, got.body)
		}
		checkShape(t, got)
	}
	// Another reporter's case is indistinguishable from one that does not
	// exist.
	others := do(t, srv, request{method: "GET", path: "/api/v1/cases/" + f.bug.ID, token: tok}).problem(t)
	missing := do(t, srv, request{method: "GET", path: "/api/v1/cases/" + signoff.NewID(signoff.PrefixCase), token: tok}).problem(t)
	if others.Status != missing.Status || others.Code != missing.Code || others.Detail != missing.Detail {
		t.Fatalf("another's case answers %+v, a missing one %+v", others, missing)
	}
	got := do(t, srv, request{method: "GET", path: "/api/v1/cases/" + f.ownCase.ID + "/events?after=0&limit=500", token: tok})
	var evs struct{ Events []signoff.Event }
	got.decode(t, &evs)
	if len(evs.Events) != 4 { // created, start_triage, request_info, provide_info
		t.Fatalf("events = %d, want 4", len(evs.Events))
	}
	for _, e := range evs.Events {
		if e.CaseID != f.ownCase.ID {
			t.Fatalf("event of case %s in the events of %s", e.CaseID, f.ownCase.ID)
		}
	}
}

// TestTokenSecretShownOnce checks that the secret appears in the creation
// response only, is never cached, and works.
func TestTokenSecretShownOnce(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	op := w.actor(t, "olga", signoff.RoleOperator)
	srv := serve(t, store, nil)
	got := do(t, srv, request{method: "POST", path: "/api/v1/actors/" + op.ID + "/tokens", token: w.ownerToken, body: `{"label":"laptop","expires_at":"2099-01-02T03:04:05Z"}`})
	if got.status != http.StatusCreated {
		t.Fatalf("status = %d, want 201 (%s)", got.status, got.body)
	}
	if cc := got.header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control = %q, want no-store", cc)
	}
	var created struct {
		Token  signoff.Token `json:"token"`
		Secret string        `json:"secret"`
	}
	got.decode(t, &created)
	if !strings.HasPrefix(created.Secret, "so_") || created.Token.ActorID != op.ID || created.Token.ExpiresAt == nil {
		t.Fatalf("created = %+v", created)
	}
	list := do(t, srv, request{method: "GET", path: "/api/v1/actors/" + op.ID + "/tokens", token: w.ownerToken})
	if list.status != http.StatusOK {
		t.Fatalf("list status = %d", list.status)
	}
	if strings.Contains(string(list.body), created.Secret) || strings.Contains(string(list.body), `"secret"`) {
		t.Fatalf("token list shows a secret: %s", list.body)
	}
	var toks struct{ Tokens []map[string]any }
	list.decode(t, &toks)
	if len(toks.Tokens) != 1 || toks.Tokens[0]["id"] != created.Token.ID {
		t.Fatalf("tokens = %v", toks.Tokens)
	}
	me := do(t, srv, request{method: "GET", path: "/api/v1/me", token: created.Secret})
	var a signoff.Actor
	me.decode(t, &a)
	if a.ID != op.ID {
		t.Fatalf("me = %+v, want %s", a, op.ID)
	}
	// Revoked, the secret stops working.
	if got := do(t, srv, request{method: "DELETE", path: "/api/v1/tokens/" + created.Token.ID, token: w.ownerToken}); got.status != http.StatusOK {
		t.Fatalf("revoke status = %d", got.status)
	}
	if got := do(t, srv, request{method: "GET", path: "/api/v1/me", token: created.Secret}); got.status != http.StatusUnauthorized {
		t.Fatalf("revoked token: status = %d, want 401", got.status)
	}
	if got := do(t, srv, request{method: "DELETE", path: "/api/v1/tokens/" + created.Token.ID, token: w.ownerToken}); got.status != http.StatusConflict {
		t.Fatalf("second revoke: status = %d, want 409", got.status)
	}
}

// TestCaseListing walks pages through the API.
func TestCaseListing(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	for i := 0; i < 4; i++ {
		w.newCase(t, signoff.KindChange, "")
	}
	srv := serve(t, store, nil)
	seen := map[string]bool{}
	path := "/api/v1/cases?limit=2&project_id=" + w.proj.ID
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("too many pages")
		}
		got := do(t, srv, request{method: "GET", path: path, token: w.ownerToken})
		var page struct {
			Cases      []signoff.Case `json:"cases"`
			NextCursor string         `json:"next_cursor"`
		}
		got.decode(t, &page)
		for _, c := range page.Cases {
			seen[c.ID] = true
		}
		path = ""
		if page.NextCursor != "" {
			path = "/api/v1/cases?limit=2&cursor=" + page.NextCursor
		}
	}
	if len(seen) != 5 {
		t.Fatalf("listed %d cases, want 5", len(seen))
	}
	got := do(t, srv, request{method: "GET", path: "/api/v1/cases?kind=change&state=requested", token: w.ownerToken})
	var page struct{ Cases []json.RawMessage }
	got.decode(t, &page)
	if len(page.Cases) != 4 {
		t.Fatalf("change cases = %d, want 4", len(page.Cases))
	}
}

// track files a public report and returns its tracking secret.
func (f *matrixFixture) track(t *testing.T) string {
	t.Helper()
	_, _, secret, err := f.store.SubmitReport(context.Background(), signoff.ReportInput{ProjectID: f.proj.ID, Text: "the coupon applies twice"})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}
