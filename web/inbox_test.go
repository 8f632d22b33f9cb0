package web_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/pgtest"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/workflow"
)

// inboxRig is a rig with three cases: a new bug (the triager's move), a
// bug a person escalated (stuck: needs a person), and a change whose plan
// waits for the approval of the operator the policy names.
func inboxRig(t *testing.T) (r *rig, fresh, stuck, chg signoff.Case) {
	t.Helper()
	return inboxRigOn(t, newRig(t))
}

// inboxPostgresRig is the same rig on PostgreSQL (pgtest).
func inboxPostgresRig(t *testing.T) (r *rig, fresh, stuck, chg signoff.Case) {
	t.Helper()
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := &rigClock{t: time.Now().UTC().Truncate(time.Second)}
	s, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), sqlstore.Options{Signer: key, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return inboxRigOn(t, newRigOn(t, s, clock, rigOptions{}))
}

func inboxRigOn(t *testing.T, r *rig) (_ *rig, fresh, stuck, chg signoff.Case) {
	t.Helper()
	ctx := context.Background()
	fresh, _ = r.report(t, "the coupon is applied twice")
	stuck, _ = r.report(t, "the cart empties itself")
	var err error
	if stuck, _, err = r.store.TransitionCase(ctx, r.actors[signoff.RoleOperator], stuck.ID, signoff.TransitionInput{Command: "escalate", ExpectedVersion: &stuck.Version}); err != nil {
		t.Fatal(err)
	}
	chg, _ = r.changeAwaitingApproval(t)
	return r, fresh, stuck, chg
}

// inboxRows are the case ids of the rows of the table with id in body.
func inboxRows(body, id string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`<tr data-case="([^"]+)"`).FindAllStringSubmatch(elementByID(body, id), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestInboxDesk: the operator's "Needs me" and its counts, the list's
// columns in words, other roles' inboxes and the live script's rows, on
// both backends.
func TestInboxDesk(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(*testing.T) (*rig, signoff.Case, signoff.Case, signoff.Case){"sqlite": inboxRig, "postgres": inboxPostgresRig} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testInboxDesk(t, open)
		})
	}
}

func testInboxDesk(t *testing.T, open func(*testing.T) (*rig, signoff.Case, signoff.Case, signoff.Case)) {
	r, fresh, stuck, chg := open(t)
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	page := op.get("/desk")
	if page.status != http.StatusOK {
		t.Fatalf("desk: %d %s", page.status, page.body)
	}
	// The operator's inbox: the plan they approve and the stuck bug, not
	// the bug the triager works on.
	if got := inboxRows(page.body, "needs"); len(got) != 2 || got[0] != chg.ID || got[1] != stuck.ID {
		t.Fatalf("needs me %v, want [%s %s]", got, chg.ID, stuck.ID)
	}
	if got := inboxRows(page.body, "cases"); len(got) != 3 {
		t.Fatalf("all cases %v", got)
	}
	if n := textOf(elementByID(page.body, "needs-count")); n != "2" {
		t.Errorf("needs count %q", n)
	}
	counts := textOf(elementByID(page.body, "needs-counts"))
	if !strings.Contains(counts, "1 to approve") || !strings.Contains(counts, "1 stuck") {
		t.Errorf("counts %q", counts)
	}
	all := elementByID(page.body, "cases")
	for _, want := range []string{
		`<a href="/cases/` + chg.ID + `">` + chg.Title + `</a>`, // the title links, not the id
		`<td class="project" data-label="Project" title="` + r.proj.ID + `">shoplite</td>`,
		`>Plan waits for your approval</td>`,
		`>Received: triage starts next</td>`,
		`>Stuck: needs a person</td>`,
		`<span class="who who-agent">the triager agent</span>`,
		`<span class="who who-you">you</span> <a class="act" href="/cases/` + chg.ID + `/approval">`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the case list lacks %s", want)
		}
	}
	// Raw states only in the hidden cell and titles, never as the text
	// people read.
	if m := regexp.MustCompile(`>(awaiting_approval|needs_human|received)<`).FindAllString(all, -1); len(m) != 3 {
		t.Errorf("raw states shown as text: %v", m)
	}

	// Whoever the policy does not name, and a viewer, have nothing here.
	for _, role := range []signoff.Role{signoff.RoleOwner, signoff.RoleViewer} {
		b := r.visitor(t)
		b.signIn(role)
		body := b.get("/desk").body
		want := 0
		if role == signoff.RoleOwner {
			want = 1 // the owner can resume the stuck bug
		}
		if got := inboxRows(body, "needs"); len(got) != want {
			t.Errorf("%s's inbox %v", role, got)
		}
		if !strings.Contains(elementByID(body, "cases"), `<a href="/cases/`+chg.ID+`">`) {
			t.Errorf("%s does not see the change in all cases", role)
		}
	}

	// The inbox's row fragment for the live script.
	if got := op.get("/desk/rows/" + chg.ID + "?needs=1"); got.status != http.StatusOK || !strings.Contains(got.body, `data-needs="yes"`) {
		t.Errorf("needs row: %d %s", got.status, got.body)
	}
	if got := op.get("/desk/rows/" + fresh.ID + "?needs=1"); got.status != http.StatusNoContent {
		t.Errorf("a case not waiting on me: %d", got.status)
	}
	if got := op.get("/desk/rows/" + fresh.ID); got.status != http.StatusOK || !strings.Contains(got.body, "Received: triage starts next") {
		t.Errorf("list row: %d %s", got.status, got.body)
	}
}

// Each kind has its own state menu; with no kind there is none.
func TestInboxKindFilters(t *testing.T) {
	t.Parallel()
	r, fresh, _, chg := inboxRig(t)
	b := r.visitor(t)
	b.signIn(signoff.RoleViewer)
	none := b.get("/desk").body
	if strings.Contains(none, `id="f-state"`) {
		t.Error("a state menu without a kind")
	}
	menu := func(q string) string {
		t.Helper()
		got := b.get("/desk" + q)
		if got.status != http.StatusOK {
			t.Fatalf("desk%s: %d", q, got.status)
		}
		return elementByID(got.body, "f-state")
	}
	bugs := menu("?kind=bug")
	changes := menu("?kind=change")
	for _, st := range workflow.Bug.States {
		if !strings.Contains(bugs, `<option value="`+st+`"`) {
			t.Errorf("bug menu lacks %s", st)
		}
	}
	for _, st := range workflow.Change.States {
		if !strings.Contains(changes, `<option value="`+st+`"`) {
			t.Errorf("change menu lacks %s", st)
		}
	}
	if strings.Contains(changes, `value="triaging"`) || strings.Contains(bugs, `value="review_failed"`) {
		t.Error("a kind's menu holds the other kind's states")
	}
	if n := strings.Count(bugs, "<option"); n != len(workflow.Bug.States)+1 {
		t.Errorf("bug menu has %d options", n)
	}
	if !strings.Contains(changes, `<option value="review_failed">Plan broke the policy: needs a new plan</option>`) {
		t.Errorf("change menu does not say review_failed in words: %s", changes)
	}
	if got := inboxRows(b.get("/desk?kind=change&state=awaiting_approval").body, "cases"); len(got) != 1 || got[0] != chg.ID {
		t.Errorf("change awaiting approval: %v", got)
	}
	// A state left from the other kind is dropped, not applied.
	if got := inboxRows(b.get("/desk?kind=bug&state=review_failed").body, "cases"); len(got) != 2 || got[1] != fresh.ID {
		t.Errorf("bug with a change state: %v", got)
	}
}

func TestInboxCaseHeader(t *testing.T) {
	t.Parallel()
	r, fresh, stuck, chg := inboxRig(t)
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	body := op.get("/cases/" + chg.ID).body
	w := elementByID(body, "waiting")
	line := textOf(w)
	if !strings.Contains(w, `data-who="you"`) || !strings.Contains(line, "Waiting on: you — Approve or reject the plan (0 of 1 approvals so far).") {
		t.Errorf("waiting line %q", line)
	}
	if !strings.Contains(w, `href="/cases/`+chg.ID+`/approval"`) {
		t.Errorf("no approval link in %s", w)
	}
	cmd := textOf(elementByID(body, "waiting-command"))
	if want := "SIGNOFF_URL=" + r.srv.URL + " signoff approve --case " + chg.ID + " --key ~/.config/signoff/approver.key"; cmd != want {
		t.Errorf("command %q, want %q", cmd, want)
	}
	// The waiting line comes first, before the facts.
	if i, j := strings.Index(body, `id="waiting"`), strings.Index(body, `class="facts case-facts"`); i < 0 || j < 0 || i > j {
		t.Error("the waiting line is not at the top")
	}
	for id, want := range map[string]string{"case-state-label": "Plan waits for your approval", "case-project": "shoplite", "case-opener": "olivia", "case-state": "awaiting_approval"} {
		if got := textOf(elementByID(body, id)); got != want {
			t.Errorf("#%s = %q, want %q", id, got, want)
		}
	}
	if !strings.Contains(body, `id="case-project" title="`+r.proj.ID+`"`) || !strings.Contains(body, `id="case-opener" title="`+r.owner.ID+`"`) {
		t.Error("the ids are not on hover")
	}

	// The owner opened it and the policy names the operator.
	owner := r.visitor(t)
	owner.signIn(signoff.RoleOwner)
	ob := owner.get("/cases/" + chg.ID).body
	if line := textOf(elementByID(ob, "waiting")); !strings.Contains(line, "Waiting on: an approver the policy names") || strings.Contains(ob, `id="waiting-command"`) {
		t.Errorf("owner's waiting line %q", line)
	}
	// A new bug waits on an agent; a stuck one on nobody, with the way
	// back for a person who may take it.
	if line := textOf(elementByID(op.get("/cases/"+fresh.ID).body, "waiting")); !strings.Contains(line, "Waiting on: the triager agent — Start triage") {
		t.Errorf("new bug: %q", line)
	}
	sb := op.get("/cases/" + stuck.ID).body
	if line := textOf(elementByID(sb, "waiting")); !strings.Contains(line, "Waiting on: nobody: stuck") || !strings.Contains(sb, `href="/cases/`+stuck.ID+`#resume-triage"`) {
		t.Errorf("stuck bug: %q", line)
	}

	// A Host header that is not a plain host never reaches the command.
	req, _ := http.NewRequest("GET", r.srv.URL+"/cases/"+chg.ID, nil)
	req.Host = "evil.example;touch${IFS}pwned"
	if got := op.do(req); strings.Contains(got.body, "touch") {
		t.Errorf("the Host header reached the page: %s", elementByID(got.body, "waiting"))
	}
}

// TestInboxDeskScale measures the desk over 500 cases: its queries are a
// constant few per page, whatever the number of rows.
func TestInboxDeskScale(t *testing.T) {
	t.Parallel()
	r, _, _, _ := inboxRig(t)
	ctx := context.Background()
	op := r.actors[signoff.RoleOperator]
	for i := range 500 {
		c, err := r.store.CreateCase(ctx, r.owner, signoff.CaseInput{ProjectID: r.proj.ID, Kind: signoff.KindBug, Title: fmt.Sprintf("case %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, _, err := r.store.TransitionCase(ctx, op, c.ID, signoff.TransitionInput{Command: "escalate", ExpectedVersion: &c.Version}); err != nil {
				t.Fatal(err)
			}
		}
	}
	b := r.visitor(t)
	b.signIn(signoff.RoleOperator)
	b.get("/desk") // warm
	const n = 5
	start := time.Now()
	var page served
	for range n {
		page = b.get("/desk")
	}
	per := time.Since(start) / n
	rows, needs := len(inboxRows(page.body, "cases")), len(inboxRows(page.body, "needs"))
	t.Logf("desk over 503 cases: %v a render (%d rows in all cases, %d in needs me)", per, rows, needs)
	if rows != 100 || needs != 200 || !strings.Contains(page.body, `id="older"`) || !strings.Contains(page.body, "more wait on you") {
		t.Errorf("rows %d, needs %d", rows, needs)
	}
}
