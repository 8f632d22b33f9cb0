package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/triage"
)

// ticket files a ticket on the workspace's project as the owner.
func (w *workspace) ticket(t testing.TB) triage.Ticket {
	t.Helper()
	tk, err := w.store.CreateTicket(context.Background(), w.owner, w.proj.ID, triage.Ticket{Title: "coupon applied twice", Severity: "medium"})
	if err != nil {
		t.Fatalf("CreateTicket: %v", err)
	}
	return tk
}

// dataProject makes a project of its own in the workspace, for a write
// that replaces project data.
func (w *workspace) dataProject(t testing.TB) signoff.Project {
	t.Helper()
	p, err := w.store.CreateProject(context.Background(), w.owner, signoff.ProjectInput{Name: "data " + signoff.NewID(signoff.PrefixProject)})
	if err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	return p
}

// TestTrackerAPI imports the orbit_run sample (or a small stand-in when it
// is absent) through the API and works the tracker the way the desk and
// the triage crew do.
func TestTrackerAPI(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil)
	triager := w.token(t, w.actor(t, "triage-bot", signoff.RoleTriager))
	viewer := w.token(t, w.actor(t, "vera", signoff.RoleViewer))
	base := "/api/v1/projects/" + w.proj.ID

	d := triage.Dataset{
		Tickets: []triage.Ticket{{ID: "SHOP-1", Title: "Cart empties on rotate", Status: "open", Severity: "high", Component: "checkout", AffectedVersions: []string{"3.1.0"}}},
		Owners:  []triage.Owner{{Component: "checkout", Team: "team-pay", Channel: "#pay"}, {Component: "search", Team: "team-find"}},
	}
	if sample := "../samples/orbit_run"; dirExists(sample) {
		var err error
		if d, err = triage.LoadDataset(os.DirFS(sample)); err != nil {
			t.Fatal(err)
		}
	}
	withItems := d
	d.Items, d.Expected = nil, nil
	if len(withItems.Items) > 0 {
		body, _ := json.Marshal(withItems)
		if got := do(t, srv, request{method: "POST", path: base + "/dataset", token: w.ownerToken, body: string(body)}); got.status != 422 {
			t.Fatalf("dataset with items: status %d (%s)", got.status, got.body)
		}
	}
	body, _ := json.Marshal(d)
	before := w.head(t)
	got := do(t, srv, request{method: "POST", path: base + "/dataset", token: w.ownerToken, body: string(body)})
	if got.status != 200 {
		t.Fatalf("import: status %d (%s)", got.status, got.body)
	}
	var counts map[string]int
	got.decode(t, &counts)
	if counts["tickets"] != len(d.Tickets) || counts["crashes"] != len(d.Crashes) || counts["owners"] != len(d.Owners) {
		t.Fatalf("import counts = %v", counts)
	}
	if w.head(t) != before+1 {
		t.Fatalf("an import is one ledger event; the head moved from %d to %d", before, w.head(t))
	}

	var list struct{ Tickets []triage.Ticket }
	do(t, srv, request{method: "GET", path: base + "/tickets", token: viewer}).decode(t, &list)
	if len(list.Tickets) != len(d.Tickets) || list.Tickets[0].ID != d.Tickets[0].ID {
		t.Fatalf("tickets = %+v", list.Tickets)
	}
	var owners struct{ Owners []triage.Owner }
	do(t, srv, request{method: "GET", path: base + "/owners", token: triager}).decode(t, &owners)
	if len(owners.Owners) != len(d.Owners) {
		t.Fatalf("owners = %+v", owners.Owners)
	}
	var crashes struct{ Crashes []triage.CrashEvent }
	do(t, srv, request{method: "GET", path: base + "/crashes", token: triager}).decode(t, &crashes)
	if len(crashes.Crashes) != len(d.Crashes) {
		t.Fatalf("crashes = %d, want %d", len(crashes.Crashes), len(d.Crashes))
	}

	// An agent cannot file a ticket over the API at all: that would skip
	// the human gate the crew's create_ticket tool holds.
	comp := d.Owners[0]
	got = do(t, srv, request{method: "POST", path: base + "/tickets", token: triager,
		body: `{"title":"Double charge on purchase","severity":"critical","component":"` + comp.Component + `"}`})
	if got.status != 403 {
		t.Fatalf("agent filing over the API: status %d (%s)", got.status, got.body)
	}
	// The owner files a ticket: it is numbered, owned per CODEOWNERS,
	// and found where Location says.
	got = do(t, srv, request{method: "POST", path: base + "/tickets", token: w.ownerToken,
		body: `{"title":"Double charge on purchase","severity":"critical","component":"` + comp.Component + `","description":"charged twice"}`})
	if got.status != 201 {
		t.Fatalf("create: status %d (%s)", got.status, got.body)
	}
	var tk triage.Ticket
	got.decode(t, &tk)
	if tk.ID == "" || tk.Owner != comp.Team || tk.Status != "open" || got.header.Get("Location") != base+"/tickets/"+tk.ID {
		t.Fatalf("created %+v at %q", tk, got.header.Get("Location"))
	}
	var again triage.Ticket
	do(t, srv, request{method: "GET", path: got.header.Get("Location"), token: viewer}).decode(t, &again)
	if again.ID != tk.ID || again.Title != tk.Title {
		t.Fatalf("read back %+v", again)
	}
	// An agent cannot claim a person approved its ticket.
	got = do(t, srv, request{method: "POST", path: base + "/tickets", token: triager,
		body: `{"title":"x","severity":"high","component":"` + comp.Component + `","approved_by":"human:` + w.owner.ID + `"}`})
	if got.status != 403 {
		t.Fatalf("agent claiming an approval: status %d (%s)", got.status, got.body)
	}
	for name, rq := range map[string]request{
		"unknown component":  {method: "POST", path: base + "/tickets", body: `{"title":"x","severity":"low","component":"nowhere"}`},
		"bad severity":       {method: "POST", path: base + "/tickets", body: `{"title":"x","severity":"urgent","component":"` + comp.Component + `"}`},
		"unknown field":      {method: "POST", path: base + "/tickets", body: `{"title":"x","severity":"low","priority":"p1"}`},
		"patch comments":     {method: "PATCH", path: base + "/tickets/" + tk.ID, body: `{"comments":[]}`},
		"patch approved_by":  {method: "PATCH", path: base + "/tickets/" + tk.ID, body: `{"approved_by":"auto"}`},
		"bad ticket id":      {method: "GET", path: base + "/tickets/a%20b"},
		"owners missing":     {method: "PUT", path: base + "/owners", body: `{}`},
		"empty comment":      {method: "POST", path: base + "/tickets/" + tk.ID + "/comments", body: `{"body":""}`},
		"crash without time": {method: "POST", path: base + "/crashes", body: `{"crashes":[{"signature":"x"}]}`},
	} {
		rq.token = w.ownerToken
		if got := do(t, srv, rq); got.status != 422 {
			t.Fatalf("%s: status %d (%s)", name, got.status, got.body)
		}
	}
	if got := do(t, srv, request{method: "GET", path: base + "/tickets/NOPE-1", token: viewer}); got.status != 404 {
		t.Fatalf("missing ticket: status %d", got.status)
	}

	// A +1 comment, then the desk closes the ticket.
	got = do(t, srv, request{method: "POST", path: base + "/tickets/" + tk.ID + "/comments", token: triager, body: `{"body":"+1: same on Pixel 8, 3.1.0"}`})
	if got.status != 201 {
		t.Fatalf("comment: status %d (%s)", got.status, got.body)
	}
	got.decode(t, &tk)
	if len(tk.Comments) != 1 || tk.Comments[0].Author != "triage-bot" {
		t.Fatalf("comments = %+v", tk.Comments)
	}
	got = do(t, srv, request{method: "PATCH", path: base + "/tickets/" + tk.ID, token: w.ownerToken, body: `{"status":"closed","fixed_in":"3.1.1"}`})
	if got.status != 200 {
		t.Fatalf("patch: status %d (%s)", got.status, got.body)
	}
	got.decode(t, &tk)
	if tk.Status != "closed" || tk.FixedIn == nil || *tk.FixedIn != "3.1.1" || len(tk.Comments) != 1 || tk.Severity != "critical" {
		t.Fatalf("patched = %+v", tk)
	}

	// Crashes append; releases and owners are replaced and read back.
	got = do(t, srv, request{method: "POST", path: base + "/crashes", token: w.ownerToken,
		body: `{"crashes":[{"timestamp":"2026-12-01T10:00:00.000123+02:00","signature":"NPE:Cart","app_version":"3.1.0","device":"Pixel 8","os":"Android 15","stack_top":"Cart.total","user_id":"u1"}]}`})
	if got.status != 201 {
		t.Fatalf("add crashes: status %d (%s)", got.status, got.body)
	}
	do(t, srv, request{method: "GET", path: base + "/crashes", token: viewer}).decode(t, &crashes)
	last := crashes.Crashes[len(crashes.Crashes)-1]
	if len(crashes.Crashes) != len(d.Crashes)+1 || last.Time.UTC().Format("2006-01-02T15:04:05.000000Z07:00") != "2026-12-01T08:00:00.000123Z" {
		t.Fatalf("last crash = %+v of %d", last, len(crashes.Crashes))
	}
	got = do(t, srv, request{method: "PUT", path: base + "/releases", token: w.ownerToken,
		body: `{"product":"Shoplite","current_version":"3.1.0","releases":[{"version":"3.1.0","date":"2026-11-20","notes":""}],"next_release":{"version":"3.2.0","code_freeze":"2026-12-10","date":"2026-12-17"},"active_users_by_version":{"3.1.0":80,"older":20}}`})
	if got.status != 200 {
		t.Fatalf("put releases: status %d (%s)", got.status, got.body)
	}
	var rel triage.Releases
	do(t, srv, request{method: "GET", path: base + "/releases", token: triager}).decode(t, &rel)
	if rel.CurrentVersion != "3.1.0" || rel.NextRelease.CodeFreeze != "2026-12-10" || rel.ActiveUsersByVersion["older"] != 20 {
		t.Fatalf("releases = %+v", rel)
	}
	got = do(t, srv, request{method: "PUT", path: base + "/owners", token: w.ownerToken, body: `{"owners":[{"component":"checkout","team":"team-pay"}]}`})
	if got.status != 200 {
		t.Fatalf("put owners: status %d (%s)", got.status, got.body)
	}
	got.decode(t, &owners)
	if len(owners.Owners) != 1 || owners.Owners[0].Team != "team-pay" {
		t.Fatalf("owners = %+v", owners.Owners)
	}
	// The component list now decides what a new ticket may name.
	if got := do(t, srv, request{method: "POST", path: base + "/tickets", token: w.ownerToken, body: `{"title":"x","severity":"low","component":"` + d.Owners[1].Component + `"}`}); got.status != 422 {
		t.Fatalf("component dropped from CODEOWNERS: status %d (%s)", got.status, got.body)
	}
	// Another workspace's owner finds none of it.
	other := newWorkspace(t, store, "Globex")
	for _, path := range []string{base + "/tickets", base + "/tickets/" + tk.ID, base + "/crashes", base + "/releases", base + "/owners"} {
		if got := do(t, srv, request{method: "GET", path: path, token: other.ownerToken}); got.status != 404 {
			t.Fatalf("foreign GET %s: status %d", path, got.status)
		}
	}
}

// TestDatasetBodyLimit: a dataset may be much larger than other bodies,
// but not unbounded.
func TestDatasetBodyLimit(t *testing.T) {
	t.Parallel()
	store := openStore(t)
	w := newWorkspace(t, store, "Acme")
	srv := serve(t, store, nil)
	var b strings.Builder
	b.WriteString(`{"crashes":[`)
	ev := `{"timestamp":"2026-09-01T04:26:00Z","app_version":"2.4.0","device":"Pixel 7","os":"Android 14","signature":"GoogleSignInException:10","stack_top":"AuthManager.onSignInResult(AuthManager.kt:142)","user_id":"u80069"}`
	for i := range 6_000 { // just over the default 1 MiB body limit
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(ev)
	}
	b.WriteString(`]}`)
	if b.Len() <= 1<<20 {
		t.Fatalf("body of %d bytes is not over the default limit", b.Len())
	}
	got := do(t, srv, request{method: "POST", path: "/api/v1/projects/" + w.proj.ID + "/crashes", token: w.ownerToken, body: b.String()})
	if got.status != http.StatusCreated {
		t.Fatalf("%d bytes of crashes: status %d (%s)", b.Len(), got.status, got.body)
	}
	huge := `{"crashes":[` + strings.Repeat(ev+",", (32<<20)/len(ev)+1) + ev + `]}`
	if got := do(t, srv, request{method: "POST", path: "/api/v1/projects/" + w.proj.ID + "/dataset", token: w.ownerToken, body: huge}); got.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("over 32 MB: status %d", got.status)
	}
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
