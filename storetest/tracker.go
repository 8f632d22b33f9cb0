package storetest

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/triage"
)

// sampleDataset is the shared triage sample, relative to a backend's package
// directory (where its tests run).
const sampleDataset = "../samples/orbit_run" // relative to the backend packages that run this suite

func loadSample(t *testing.T) triage.Dataset {
	t.Helper()
	if _, err := os.Stat(sampleDataset); err != nil {
		t.Fatalf("dataset %s not present: %v", sampleDataset, err)
	}
	d, err := triage.LoadDataset(os.DirFS(sampleDataset))
	if err != nil {
		t.Fatalf("LoadDataset: %v", err)
	}
	return d
}

func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// testTrackerImport imports the shared triage sample and works its tracker:
// numbering, comments, CODEOWNERS, roles and isolation.
func testTrackerImport(t *testing.T, b Backend) {
	tb := setup(t, b)
	d := loadSample(t)
	s, ctx, p := tb.store, tb.ctx, tb.proj.ID
	if len(d.Tickets) != 7 || len(d.Crashes) != 53 || len(d.Owners) != 9 {
		t.Fatalf("sample has %d tickets, %d crashes, %d owners; want 7, 53, 9", len(d.Tickets), len(d.Crashes), len(d.Owners))
	}
	// Importing twice replaces: nothing doubles.
	for range 2 {
		if err := s.ImportDataset(ctx, tb.owner, p, d); err != nil {
			t.Fatalf("ImportDataset: %v", err)
		}
	}
	tickets, err := s.ListTickets(ctx, tb.owner, p)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "tickets", tickets, d.Tickets)
	crashes, err := s.ListCrashes(ctx, tb.owner, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(crashes) != len(d.Crashes) {
		t.Fatalf("crashes = %d, want %d", len(crashes), len(d.Crashes))
	}
	for i, e := range crashes {
		if w := d.Crashes[i]; !sameCrash(e, w) {
			t.Fatalf("crash %d = %+v, want %+v", i, e, w)
		}
	}
	owners, err := s.GetOwners(ctx, tb.owner, p)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "owners", owners, d.Owners)
	rel, err := s.GetReleases(ctx, tb.owner, p)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "releases", rel, d.Releases)
	evs := tb.eventsOf(t, "project.data_imported")
	if len(evs) != 2 {
		t.Fatalf("%d import events, want 2", len(evs))
	}
	pl := payloadOf(t, evs[1])
	counts, _ := pl["counts"].(map[string]any)
	if pl["project_id"] != p || counts["tickets"] != 7.0 || counts["crashes"] != 53.0 || counts["owners"] != 9.0 {
		t.Fatalf("import event = %v", pl)
	}
	if digests, _ := pl["sha256"].(map[string]any); len(digests) != 4 || payloadOf(t, evs[0])["sha256"].(map[string]any)["crashes"] != digests["crashes"] {
		t.Fatalf("import digests = %v (the same data must digest the same)", pl["sha256"])
	}

	// A new ticket is numbered after the highest id of the most common
	// prefix, and takes its owner from CODEOWNERS.
	prefix, high := "", 0
	for _, tk := range d.Tickets {
		pre, num, _ := strings.Cut(tk.ID, "-")
		n, _ := strconv.Atoi(num)
		prefix, high = pre, max(high, n)
	}
	comp := d.Owners[len(d.Owners)-1]
	nt, err := s.CreateTicket(ctx, tb.owner, p, triage.Ticket{Title: "Checkout spinner never stops", Severity: "medium", Component: comp.Component,
		AffectedVersions: []string{d.Releases.CurrentVersion}})
	if err != nil {
		t.Fatalf("CreateTicket: %v", err)
	}
	if want := fmt.Sprintf("%s-%d", prefix, high+1); nt.ID != want || nt.Owner != comp.Team || nt.Status != "open" || nt.Created != tb.clock.Now().Format(time.DateOnly) {
		t.Fatalf("new ticket = %+v, want id %s, owner %s, open, created today", nt, want, comp.Team)
	}
	got, err := s.GetTicket(ctx, tb.owner, p, nt.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "stored ticket", got, nt)
	pl = payloadOf(t, tb.eventsOf(t, "ticket.created")[0])
	if pl["ticket_id"] != nt.ID || pl["title"] != nt.Title || pl["severity"] != "medium" || pl["component"] != comp.Component || pl["approved_by"] != "" {
		t.Fatalf("ticket.created = %v", pl)
	}

	// The triager (an agent) files and comments; the ticket records who
	// approved it.
	triager := tb.actor(t, "triage-bot", signoff.RoleTriager)
	op := tb.actor(t, "olga", signoff.RoleOperator)
	gated, err := s.CreateTicket(ctx, triager, p, triage.Ticket{Title: "Payment recorded twice", Severity: "critical",
		Component: d.Owners[0].Component, ApprovedBy: "human:" + op.ID, Description: "One payment, two records.\nSeen on two devices."})
	if err != nil {
		t.Fatalf("CreateTicket by the triager: %v", err)
	}
	if gated.ID != fmt.Sprintf("%s-%d", prefix, high+2) || gated.ApprovedBy != "human:"+op.ID {
		t.Fatalf("gated ticket = %+v", gated)
	}
	dup := d.Tickets[1]
	c, err := s.AddComment(ctx, triager, p, dup.ID, triage.Comment{Body: "+1 from a reporter: seen again on the current version"})
	if err != nil {
		t.Fatalf("AddComment: %v", err)
	}
	if len(c.Comments) != 1 || c.Comments[0].Author != "triage-bot" || c.Comments[0].Time == "" {
		t.Fatalf("commented ticket = %+v", c)
	}
	c, err = s.AddComment(ctx, tb.owner, p, dup.ID, triage.Comment{Author: "support", Body: "second", Time: "2026-09-12T10:00:00Z"})
	if err != nil || len(c.Comments) != 2 || c.Comments[1] != (triage.Comment{Author: "support", Body: "second", Time: "2026-09-12T10:00:00Z"}) {
		t.Fatalf("second comment: %+v, %v", c.Comments, err)
	}
	if got, _ := s.GetTicket(ctx, tb.owner, p, dup.ID); len(got.Comments) != 2 || got.Title != dup.Title {
		t.Fatalf("ticket after comments = %+v", got)
	}
	pl = payloadOf(t, tb.eventsOf(t, "ticket.commented")[0])
	if pl["ticket_id"] != dup.ID || pl["comments"] != 1.0 || pl["body_sha256"] == nil || strings.Contains(string(tb.eventsOf(t, "ticket.commented")[0].Payload), "seen again") {
		t.Fatalf("ticket.commented = %v (the ledger keeps the body's digest only)", pl)
	}

	// Refusals change nothing.
	seq := tb.head(t)
	for name, tc := range map[string]struct {
		tk   triage.Ticket
		code string
	}{
		"unknown component":  {triage.Ticket{Title: "x", Severity: "low", Component: "no-such-component"}, signoff.EINVALID},
		"no component":       {triage.Ticket{Title: "x", Severity: "low"}, signoff.EINVALID},
		"no severity":        {triage.Ticket{Title: "x", Component: comp.Component}, signoff.EINVALID},
		"unknown severity":   {triage.Ticket{Title: "x", Severity: "urgent", Component: comp.Component}, signoff.EINVALID},
		"bad status":         {triage.Ticket{Title: "x", Severity: "low", Status: "wontfix", Component: comp.Component}, signoff.EINVALID},
		"no title":           {triage.Ticket{Severity: "low", Component: comp.Component}, signoff.EINVALID},
		"long title":         {triage.Ticket{Title: strings.Repeat("x", 301), Severity: "low", Component: comp.Component}, signoff.EINVALID},
		"bad id":             {triage.Ticket{ID: "../x", Title: "x", Severity: "low", Component: comp.Component}, signoff.EINVALID},
		"duplicate id":       {triage.Ticket{ID: dup.ID, Title: "x", Severity: "low", Component: comp.Component}, signoff.ECONFLICT},
		"approver unknown":   {triage.Ticket{Title: "x", Severity: "low", Component: comp.Component, ApprovedBy: "human:" + signoff.NewID(signoff.PrefixActor)}, signoff.EINVALID},
		"approver an agent":  {triage.Ticket{Title: "x", Severity: "low", Component: comp.Component, ApprovedBy: "human:" + triager.ID}, signoff.EINVALID},
		"approver malformed": {triage.Ticket{Title: "x", Severity: "low", Component: comp.Component, ApprovedBy: "the boss"}, signoff.EINVALID},
	} {
		_, err := s.CreateTicket(ctx, tb.owner, p, tc.tk)
		if signoff.ErrorCode(err) != tc.code {
			t.Fatalf("%s: error = %v, want %s", name, err, tc.code)
		}
	}
	if _, err := s.AddComment(ctx, tb.owner, p, "NOPE-1", triage.Comment{Body: "x"}); signoff.ErrorCode(err) != signoff.ENOTFOUND {
		t.Fatalf("comment on a missing ticket: %v", err)
	}
	if _, err := s.AddComment(ctx, tb.owner, p, dup.ID, triage.Comment{Body: "  "}); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Fatalf("blank comment: %v", err)
	}
	tb.unchanged(t, seq, "refused ticket writes")

	// Edits: a patch touches only its fields; a new component brings its
	// owner; nothing changed records nothing.
	closed, fixed := "closed", d.Releases.CurrentVersion
	up, err := s.PatchTicket(ctx, op, p, nt.ID, signoff.TicketPatch{Status: &closed, FixedIn: &fixed, Component: &d.Owners[0].Component})
	if err != nil {
		t.Fatalf("PatchTicket: %v", err)
	}
	if up.Status != "closed" || up.FixedIn == nil || *up.FixedIn != fixed || up.Owner != d.Owners[0].Team || up.Title != nt.Title || up.Severity != "medium" {
		t.Fatalf("patched = %+v", up)
	}
	seq = tb.head(t)
	if _, err := s.PatchTicket(ctx, op, p, nt.ID, signoff.TicketPatch{Status: &closed}); err != nil {
		t.Fatal(err)
	}
	tb.unchanged(t, seq, "a patch that changes nothing")
	pl = payloadOf(t, tb.eventsOf(t, "ticket.updated")[0])
	if ch, _ := pl["changes"].(map[string]any); ch["status"] != "closed" || ch["fixed_in"] != fixed || ch["owner"] != d.Owners[0].Team || ch["title"] != nil {
		t.Fatalf("ticket.updated = %v", pl)
	}
	full := up
	full.Title, full.Severity, full.Comments, full.ApprovedBy = "Checkout spinner spins forever", "high", nil, "auto"
	up, err = s.UpdateTicket(ctx, tb.owner, p, full)
	if err != nil {
		t.Fatalf("UpdateTicket: %v", err)
	}
	if up.Title != full.Title || up.Severity != "high" || up.ApprovedBy != "" || up.Status != "closed" {
		t.Fatalf("updated = %+v (approved_by is history and stays)", up)
	}
	bad := "urgent"
	if _, err := s.PatchTicket(ctx, tb.owner, p, nt.ID, signoff.TicketPatch{Severity: &bad}); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Fatalf("patch to an unknown severity: %v", err)
	}
	nope := "no-such-component"
	if _, err := s.PatchTicket(ctx, tb.owner, p, nt.ID, signoff.TicketPatch{Component: &nope}); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Fatalf("patch to an unknown component: %v", err)
	}
	if _, err := s.PatchTicket(ctx, tb.owner, p, "NOPE-1", signoff.TicketPatch{Status: &closed}); signoff.ErrorCode(err) != signoff.ENOTFOUND {
		t.Fatalf("patch of a missing ticket: %v", err)
	}

	// Roles: agents file and read, never edit; reporters read nothing;
	// viewers only read.
	viewer := tb.actor(t, "vera", signoff.RoleViewer)
	rep := tb.actor(t, "rita", signoff.RoleReporter)
	seq = tb.head(t)
	for _, by := range []signoff.Actor{triager, viewer} {
		if _, err := s.ListTickets(ctx, by, p); err != nil {
			t.Fatalf("%s reads tickets: %v", by.Role, err)
		}
		if _, err := s.ListCrashes(ctx, by, p); err != nil {
			t.Fatalf("%s reads crashes: %v", by.Role, err)
		}
	}
	wantForbidden := func(what string, err error) {
		t.Helper()
		if signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Fatalf("%s: error = %v, want forbidden", what, err)
		}
	}
	for _, by := range []signoff.Actor{triager, viewer, rep} {
		wantForbidden(string(by.Role)+" imports", s.ImportDataset(ctx, by, p, d))
		_, err := s.UpdateTicket(ctx, by, p, up)
		wantForbidden(string(by.Role)+" updates", err)
		_, err = s.PatchTicket(ctx, by, p, up.ID, signoff.TicketPatch{Status: &closed})
		wantForbidden(string(by.Role)+" patches", err)
		wantForbidden(string(by.Role)+" adds crashes", s.AddCrashes(ctx, by, p, d.Crashes[:1]))
		wantForbidden(string(by.Role)+" puts owners", s.PutOwners(ctx, by, p, d.Owners))
		wantForbidden(string(by.Role)+" puts releases", s.PutReleases(ctx, by, p, d.Releases))
	}
	for _, by := range []signoff.Actor{viewer, rep} {
		_, err := s.CreateTicket(ctx, by, p, triage.Ticket{Title: "x", Severity: "low", Component: comp.Component})
		wantForbidden(string(by.Role)+" files", err)
		_, err = s.AddComment(ctx, by, p, dup.ID, triage.Comment{Body: "x"})
		wantForbidden(string(by.Role)+" comments", err)
	}
	_, err = s.ListTickets(ctx, rep, p)
	wantForbidden("reporter lists tickets", err)
	_, err = s.GetTicket(ctx, rep, p, dup.ID)
	wantForbidden("reporter reads a ticket", err)
	_, err = s.ListCrashes(ctx, rep, p)
	wantForbidden("reporter reads crashes", err)
	_, err = s.GetReleases(ctx, rep, p)
	wantForbidden("reporter reads releases", err)
	_, err = s.GetOwners(ctx, rep, p)
	wantForbidden("reporter reads owners", err)

	// Another workspace sees nothing and changes nothing: the project is
	// not found, exactly like a missing one.
	_, other, err := s.CreateWorkspace(ctx, "Globex", "gus")
	if err != nil {
		t.Fatal(err)
	}
	missing := signoff.NewID(signoff.PrefixProject)
	for _, pid := range []string{p, missing} {
		wantNotFound := func(what string, err error) {
			t.Helper()
			if signoff.ErrorCode(err) != signoff.ENOTFOUND {
				t.Fatalf("%s (project %s): error = %v, want not found", what, pid, err)
			}
		}
		_, err := s.ListTickets(ctx, other, pid)
		wantNotFound("list tickets", err)
		_, err = s.GetTicket(ctx, other, pid, dup.ID)
		wantNotFound("get ticket", err)
		_, err = s.CreateTicket(ctx, other, pid, triage.Ticket{Title: "x", Severity: "low", Component: comp.Component})
		wantNotFound("create ticket", err)
		_, err = s.AddComment(ctx, other, pid, dup.ID, triage.Comment{Body: "x"})
		wantNotFound("comment", err)
		_, err = s.PatchTicket(ctx, other, pid, dup.ID, signoff.TicketPatch{Status: &closed})
		wantNotFound("patch", err)
		wantNotFound("import", s.ImportDataset(ctx, other, pid, d))
		_, err = s.ListCrashes(ctx, other, pid)
		wantNotFound("list crashes", err)
		wantNotFound("add crashes", s.AddCrashes(ctx, other, pid, d.Crashes[:1]))
		_, err = s.GetReleases(ctx, other, pid)
		wantNotFound("get releases", err)
		wantNotFound("put releases", s.PutReleases(ctx, other, pid, d.Releases))
		_, err = s.GetOwners(ctx, other, pid)
		wantNotFound("get owners", err)
		wantNotFound("put owners", s.PutOwners(ctx, other, pid, d.Owners))
	}
	tb.unchanged(t, seq, "refused reads and writes")
	tb.verify(t)
}

// testProjectData covers a project without a sample: numbering from
// scratch, tickets without CODEOWNERS, releases, owners and crash appends.
func testProjectData(t *testing.T, b Backend) {
	tb := setup(t, b)
	s, ctx, p := tb.store, tb.ctx, tb.proj.ID
	// Empty data reads as empty lists, never null.
	if ts, err := s.ListTickets(ctx, tb.owner, p); err != nil || ts == nil || len(ts) != 0 {
		t.Fatalf("ListTickets of an empty project = %v, %v", ts, err)
	}
	if r, err := s.GetReleases(ctx, tb.owner, p); err != nil || r.Releases == nil || r.ActiveUsersByVersion == nil || r.CurrentVersion != "" {
		t.Fatalf("GetReleases of an empty project = %+v, %v", r, err)
	}
	if o, err := s.GetOwners(ctx, tb.owner, p); err != nil || o == nil || len(o) != 0 {
		t.Fatalf("GetOwners of an empty project = %v, %v", o, err)
	}
	// Without tickets the prefix is T; without CODEOWNERS any component
	// (even none) goes.
	for i, want := range []string{"T-1", "T-2"} {
		tk, err := s.CreateTicket(ctx, tb.owner, p, triage.Ticket{Title: fmt.Sprintf("ticket %d", i), Severity: "low"})
		if err != nil || tk.ID != want {
			t.Fatalf("CreateTicket = %q, %v; want %s", tk.ID, err, want)
		}
	}
	for _, id := range []string{"SHOP-7", "SHOP-12", "SHOP-3"} {
		if _, err := s.CreateTicket(ctx, tb.owner, p, triage.Ticket{ID: id, Title: id, Severity: "high", Component: "checkout"}); err != nil {
			t.Fatal(err)
		}
	}
	if tk, err := s.CreateTicket(ctx, tb.owner, p, triage.Ticket{Title: "next", Severity: "low"}); err != nil || tk.ID != "SHOP-13" {
		t.Fatalf("after SHOP-12 came %q, %v; want SHOP-13", tk.ID, err)
	}
	ts, _ := s.ListTickets(ctx, tb.owner, p)
	var order []string
	for _, tk := range ts {
		order = append(order, tk.ID)
	}
	if strings.Join(order, " ") != "T-1 T-2 SHOP-7 SHOP-12 SHOP-3 SHOP-13" {
		t.Fatalf("tracker order = %v", order)
	}

	// CODEOWNERS: validated, replaced whole, in file order.
	owners := []triage.Owner{{Component: "checkout", Team: "team-pay", Channel: "#pay"}, {Component: "search", Team: "team-find"}}
	for name, bad := range map[string][]triage.Owner{
		"duplicate component": {owners[0], owners[0]},
		"space in component":  {{Component: "check out", Team: "t"}},
		"no team":             {{Component: "x"}},
		"comment component":   {{Component: "#x", Team: "t"}},
	} {
		if err := s.PutOwners(ctx, tb.owner, p, bad); signoff.ErrorCode(err) != signoff.EINVALID {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if err := s.PutOwners(ctx, tb.actor(t, "olga", signoff.RoleOperator), p, owners); err != nil {
		t.Fatalf("PutOwners: %v", err)
	}
	if got, _ := s.GetOwners(ctx, tb.owner, p); !reflect.DeepEqual(got, owners) {
		t.Fatalf("owners = %+v", got)
	}
	// Now a component must be one of them; the old tickets keep theirs.
	if _, err := s.CreateTicket(ctx, tb.owner, p, triage.Ticket{Title: "x", Severity: "low", Component: "payments"}); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Fatalf("component outside CODEOWNERS: %v", err)
	}
	title := "renamed"
	if tk, err := s.PatchTicket(ctx, tb.owner, p, "T-1", signoff.TicketPatch{Title: &title}); err != nil || tk.Component != "" {
		t.Fatalf("editing a ticket filed before CODEOWNERS: %+v, %v", tk, err)
	}
	pl := payloadOf(t, tb.eventsOf(t, "owners.put")[0])
	if pl["count"] != 2.0 || len(pl["components"].([]any)) != 2 || pl["sha256"] == "" {
		t.Fatalf("owners.put = %v", pl)
	}

	// Releases: stored whole, checked.
	rel := triage.Releases{Product: "Shoplite", CurrentVersion: "3.1.0", Releases: []triage.Release{{Version: "3.1.0", Date: "2026-11-20", Notes: "Faster checkout"}},
		NextRelease: triage.NextRelease{Version: "3.2.0", CodeFreeze: "2026-12-10", Date: "2026-12-17"}, ActiveUsersByVersion: map[string]float64{"3.1.0": 70.5, "3.0.2": 29.5}}
	if err := s.PutReleases(ctx, tb.owner, p, rel); err != nil {
		t.Fatalf("PutReleases: %v", err)
	}
	if got, _ := s.GetReleases(ctx, tb.owner, p); !reflect.DeepEqual(got, rel) {
		t.Fatalf("releases = %+v", got)
	}
	badRel := rel
	badRel.ActiveUsersByVersion = map[string]float64{"3.1.0": 170}
	if err := s.PutReleases(ctx, tb.owner, p, badRel); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Fatalf("share over 100%%: %v", err)
	}
	if pl := payloadOf(t, tb.eventsOf(t, "releases.put")[0]); pl["current_version"] != "3.1.0" || pl["code_freeze"] != "2026-12-10" {
		t.Fatalf("releases.put = %v", pl)
	}

	// Crashes append in arrival order and keep their instants to the
	// microsecond, whatever zone they came in.
	zone := time.FixedZone("CEST", 2*3600)
	first := []triage.CrashEvent{
		{Time: time.Date(2026, 11, 30, 23, 59, 59, 123456000, zone), AppVersion: "3.1.0", Device: "Phone A1", OS: "Android 15", Signature: "NPE:Cart", StackTop: "Cart.total(Cart.kt:12)", UserID: "u1"},
		{Time: time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC), AppVersion: "3.0.2", Signature: "NPE:Cart", UserID: "u2"},
	}
	if err := s.AddCrashes(ctx, tb.owner, p, first); err != nil {
		t.Fatalf("AddCrashes: %v", err)
	}
	if err := s.AddCrashes(ctx, tb.owner, p, []triage.CrashEvent{{Time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Signature: "ANR:Search"}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListCrashes(ctx, tb.owner, p)
	if err != nil || len(got) != 3 {
		t.Fatalf("ListCrashes = %d, %v", len(got), err)
	}
	if !got[0].Time.Equal(first[0].Time) || got[0].Time.Nanosecond() != 123456000 || got[0].StackTop != first[0].StackTop || got[2].Signature != "ANR:Search" {
		t.Fatalf("crashes = %+v", got)
	}
	seq := tb.head(t)
	for name, bad := range map[string][]triage.CrashEvent{
		"none":         nil,
		"no time":      {{Signature: "x"}},
		"no signature": {{Time: time.Now()}},
		"year 10000":   {{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Signature: "x"}},
		"huge stack":   {{Time: time.Now(), Signature: "x", StackTop: strings.Repeat("f", 1001)}},
	} {
		if err := s.AddCrashes(ctx, tb.owner, p, bad); signoff.ErrorCode(err) != signoff.EINVALID {
			t.Fatalf("%s: %v", name, err)
		}
	}
	tb.unchanged(t, seq, "refused crashes")
	evs := tb.eventsOf(t, "crashes.added")
	if pl := payloadOf(t, evs[1]); pl["count"] != 1.0 || pl["first_seq"] != 3.0 || pl["last_seq"] != 3.0 {
		t.Fatalf("crashes.added = %v", pl)
	}

	// An import that fails validation leaves everything as it was.
	d := triage.Dataset{Tickets: []triage.Ticket{{ID: "A-1", Title: "a", Component: "nowhere"}}, Owners: owners}
	if err := s.ImportDataset(ctx, tb.owner, p, d); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Fatalf("import with a ticket outside its CODEOWNERS: %v", err)
	}
	d = triage.Dataset{Tickets: []triage.Ticket{{ID: "A-1", Title: "a"}, {ID: "A-1", Title: "b"}}}
	if err := s.ImportDataset(ctx, tb.owner, p, d); signoff.ErrorCode(err) != signoff.EINVALID {
		t.Fatalf("import with a ticket twice: %v", err)
	}
	tb.unchanged(t, seq, "refused imports")
	// An empty import clears the project's data.
	if err := s.ImportDataset(ctx, signoff.CLIActor(tb.ws.ID), p, triage.Dataset{}); err != nil {
		t.Fatalf("empty import: %v", err)
	}
	if ts, _ := s.ListTickets(ctx, tb.owner, p); len(ts) != 0 {
		t.Fatalf("tickets after an empty import: %d", len(ts))
	}
	if r, _ := s.GetReleases(ctx, tb.owner, p); r.CurrentVersion != "" {
		t.Fatalf("releases after an empty import: %+v", r)
	}
	if cs, _ := s.ListCrashes(ctx, signoff.SystemActor(tb.ws.ID), p); len(cs) != 0 {
		t.Fatalf("crashes after an empty import: %d", len(cs))
	}
	tb.verify(t)
}

// sameCrash compares events by instant, not by time zone.
func sameCrash(a, b triage.CrashEvent) bool {
	a.Time, b.Time = a.Time.UTC(), b.Time.UTC()
	return a.Time.Equal(b.Time) && a.AppVersion == b.AppVersion && a.Device == b.Device && a.OS == b.OS &&
		a.Signature == b.Signature && a.StackTop == b.StackTop && a.UserID == b.UserID
}

// crashLoad is how many events the bulk test imports and appends.
const crashLoad = 100_000

func syntheticCrashes(n int) []triage.CrashEvent {
	base := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	evs := make([]triage.CrashEvent, n)
	for i := range evs {
		evs[i] = triage.CrashEvent{
			Time:       base.Add(time.Duration(i) * 1500 * time.Millisecond).Add(time.Duration(i%1000) * time.Microsecond),
			AppVersion: fmt.Sprintf("2.%d.%d", i%3, i%7),
			Device:     []string{"Phone A1", "Phone B2", "Tablet C3", "Phone D4"}[i%4],
			OS:         []string{"Android 15", "Android 14", "iOS 18"}[i%3],
			Signature:  fmt.Sprintf("Exception:%d", i%250),
			StackTop:   fmt.Sprintf("Module%d.call(Module%d.kt:%d)", i%250, i%250, i%97),
			UserID:     fmt.Sprintf("u%06d", i%40000),
		}
	}
	return evs
}

// testCrashBulk imports and then appends 100,000 crash events and reports
// how long each took; both must stay batch-fast (well under a minute even
// on a slow CI machine).
func testCrashBulk(t *testing.T, b Backend) {
	if testing.Short() {
		t.Skip("bulk crash import skipped in -short mode")
	}
	tb := setup(t, b)
	s, ctx, p := tb.store, tb.ctx, tb.proj.ID
	evs := syntheticCrashes(crashLoad)
	start := time.Now()
	if err := s.ImportDataset(ctx, tb.owner, p, triage.Dataset{Crashes: evs}); err != nil {
		t.Fatalf("ImportDataset: %v", err)
	}
	imported := time.Since(start)
	start = time.Now()
	if err := s.AddCrashes(ctx, tb.owner, p, evs); err != nil {
		t.Fatalf("AddCrashes: %v", err)
	}
	added := time.Since(start)
	start = time.Now()
	got, err := s.ListCrashes(ctx, tb.owner, p)
	if err != nil {
		t.Fatal(err)
	}
	listed := time.Since(start)
	if len(got) != 2*crashLoad {
		t.Fatalf("crashes = %d, want %d", len(got), 2*crashLoad)
	}
	for _, i := range []int{0, 1, crashLoad - 1, crashLoad, 2*crashLoad - 1} {
		if w := evs[i%crashLoad]; !sameCrash(got[i], w) {
			t.Fatalf("crash %d = %+v, want %+v", i, got[i], w)
		}
	}
	t.Logf("%s: import of %d crash events %v, append of %d %v, list of %d %v", b.Name, crashLoad, imported, crashLoad, added, 2*crashLoad, listed)
	if limit := time.Minute; imported > limit || added > limit {
		t.Fatalf("bulk crash writes took %v and %v, over %v: are they batched?", imported, added, limit)
	}
	tb.verify(t)
}
