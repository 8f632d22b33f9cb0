package web_test

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/httpapi"
	"github.com/signoff-dev/signoff/ledger"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/web"
	"github.com/signoff-dev/signoff/workflow"
)

// changeAwaitingApproval opens a change request whose builtin plan waits
// for approval: the flag checkout_v2 in prod, a live app to health-check,
// and a policy whose approvers are the rig's operator.
func (r *rig) changeAwaitingApproval(t *testing.T) (signoff.Case, changedesk.Card) {
	t.Helper()
	ctx := context.Background()
	changeActionsSetup(t, r)
	op := r.owner
	c, _, err := r.change.Request(ctx, op, changedesk.RequestInput{ProjectID: r.proj.ID,
		Reason: "Disable checkout_v2 in prod: checkout answers 500 since the v2 payment flow went live"})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err = r.change.Plan(ctx, op, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("change case is %s", c.State)
	}
	cd, err := r.change.Card(ctx, op, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return c, cd
}

var (
	buttonRE = regexp.MustCompile(`(?i)<button|<form|<input[^>]*type="submit"`)
	idRE     = regexp.MustCompile(`id="([^"]+)"`)
)

// TestApprovalPage: the page shows the complete plan, its digest and the
// policy results, and the approve command as pasted; with no passkey
// registered there is no button to click for anyone, and a viewer reads
// the same page. The API still refuses a
// viewer's approval.
func TestApprovalPage(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, cd := r.changeAwaitingApproval(t)
	for _, role := range []signoff.Role{signoff.RoleOperator, signoff.RoleViewer, signoff.RoleOwner} {
		b := r.visitor(t)
		b.signIn(role)
		casePage := b.get("/cases/" + c.ID)
		if !strings.Contains(casePage.body, `id="approval-link" href="/cases/`+c.ID+`/approval"`) {
			t.Errorf("%s: case page has no approval link", role)
		}
		got := b.get("/cases/" + c.ID + "/approval")
		if got.status != http.StatusOK {
			t.Fatalf("%s: approval page %d %s", role, got.status, got.body)
		}
		main := mainElement(got.body)
		if buttonRE.MatchString(main) {
			t.Errorf("%s: the approval page offers something to click: %s", role, main)
		}
		if cmd := elementByID(got.body, "approve-command"); !strings.Contains(cmd, " signoff approve --case "+c.ID+" --key ~/.config/signoff/approver.key<") || !strings.Contains(cmd, ">SIGNOFF_URL=") {
			t.Errorf("%s: approve command %q", role, cmd)
		}
		if d := elementByID(got.body, "digest"); !strings.Contains(d, ">"+cd.SubjectDigest+"<") {
			t.Errorf("%s: digest %q, want %s", role, d, cd.SubjectDigest)
		}
		subject := elementByID(got.body, "subject")
		for _, want := range []string{"flag:prod/checkout_v2", "before_state_digest", "expires_at", "health_check"} {
			if !strings.Contains(subject, want) {
				t.Errorf("%s: subject lacks %s: %s", role, want, subject)
			}
		}
		if p := elementByID(got.body, "policy"); !strings.Contains(p, "quorum") || !strings.Contains(p, "web approval") {
			t.Errorf("%s: policy %s", role, p)
		}
		if strings.Contains(got.body, `id="card-closed"`) {
			t.Errorf("%s: an open card is shown closed", role)
		}
	}
	// The API refuses the viewer's approval whatever the page shows.
	api := httptest.NewServer(httpapi.New(r.store, nil, httpapi.WithChangeDesk(r.change)))
	t.Cleanup(api.Close)
	req, _ := http.NewRequest("POST", api.URL+"/api/v1/cases/"+c.ID+"/approvals", strings.NewReader(`{"envelope":{},"via":"cli-signed"}`))
	req.Header.Set("Authorization", "Bearer "+r.tokens[signoff.RoleViewer])
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("viewer approval through the API: %d", res.StatusCode)
	}
}

// TestApprovalPageClosed: an expired card, or a case that moved on,
// says so and offers nothing, not even the command.
func TestApprovalPageClosed(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, cd := r.changeAwaitingApproval(t)
	ctx := context.Background()
	now := r.clock.Now()
	// A card over an older plan is superseded, and closes nothing.
	if _, _, err := r.store.OpenCard(ctx, signoff.Card{ID: "2b7c7e61-5c5e-5e3c-9a6f-3f1a2b3c4d5e", WorkspaceID: r.ws.ID, CaseID: c.ID, Kind: card.ChangeApproval, CauseSeq: 2,
		CaseState: c.State, CaseVersion: c.Version, SubjectDigest: strings.Repeat("b", 64), Options: []string{"approve", "reject"},
		Addressee: signoff.Addressee{Kind: signoff.AddressRole, Roles: []string{"operator"}}, OpenedAt: now.Add(-time.Minute), ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.store.OpenCard(ctx, signoff.Card{ID: "0b7c7e61-5c5e-5e3c-9a6f-3f1a2b3c4d5e", WorkspaceID: r.ws.ID, CaseID: c.ID, Kind: card.ChangeApproval, CauseSeq: 1,
		CaseState: c.State, CaseVersion: c.Version, SubjectDigest: cd.SubjectDigest, Options: []string{"approve", "reject"},
		Addressee: signoff.Addressee{Kind: signoff.AddressRole, Roles: []string{"operator"}}, OpenedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	b := r.visitor(t)
	b.signIn(signoff.RoleOperator)
	if got := b.get("/cases/" + c.ID + "/approval"); strings.Contains(got.body, `id="card-closed"`) || !strings.Contains(got.body, `card-open`) ||
		!strings.Contains(got.body, `card-superseded`) || !strings.Contains(got.body, `id="approve-command"`) {
		t.Fatalf("open card: %s", mainElement(got.body))
	}
	r.clock.Advance(time.Hour + time.Second)
	got := b.get("/cases/" + c.ID + "/approval")
	closed := elementByID(got.body, "card-closed")
	if !strings.Contains(closed, "expired") || strings.Contains(got.body, `id="approve-command"`) || buttonRE.MatchString(mainElement(got.body)) {
		t.Fatalf("expired card: closed %q in %s", closed, mainElement(got.body))
	}
	if !strings.Contains(got.body, `card-expired`) {
		t.Fatalf("the card list does not say expired: %s", mainElement(got.body))
	}
	// A bug that is not waiting for approval has nothing to approve.
	bug, _ := r.report(t, "coupon applied twice")
	got = b.get("/cases/" + bug.ID + "/approval")
	if got.status != http.StatusOK || !strings.Contains(elementByID(got.body, "card-closed"), "not waiting for an approval") || strings.Contains(got.body, `id="approve-command"`) {
		t.Fatalf("bug not awaiting approval: %d %s", got.status, mainElement(got.body))
	}
	if strings.Contains(b.get("/cases/"+bug.ID).body, `id="approval-link"`) {
		t.Fatal("approval link on a case not awaiting approval")
	}
	// Its last card, expired, is named as expired.
	now = r.clock.Now()
	head, err := r.store.HeadSeq(ctx, r.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.store.OpenCard(ctx, signoff.Card{ID: "1b7c7e61-5c5e-5e3c-9a6f-3f1a2b3c4d5e", WorkspaceID: r.ws.ID, CaseID: bug.ID, Kind: card.CandidateApproval, CauseSeq: head,
		CaseState: bug.State, CaseVersion: bug.Version, SubjectDigest: strings.Repeat("a", 64), Options: []string{"approve", "reject"},
		Addressee: signoff.Addressee{Kind: signoff.AddressRole, Roles: []string{"operator"}}, OpenedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	got = b.get("/cases/" + bug.ID + "/approval")
	if closed := elementByID(got.body, "card-closed"); !strings.Contains(closed, "expired") || buttonRE.MatchString(mainElement(got.body)) {
		t.Fatalf("bug with an expired card: %s", mainElement(got.body))
	}
}

// TestCasePage: the timeline with evidence badges, the dossier for
// everyone, the original for owners only, and the ledger's verification.
func TestCasePage(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := r.report(t, "checkout fails; write to me at bob@example.com")
	ctx := context.Background()
	// A recorded model output is replayed evidence and says so.
	tr := r.actors[signoff.RoleTriager]
	tk, err := r.store.CreateTask(ctx, r.owner, signoff.TaskInput{CaseID: c.ID, Kind: "step", Role: tr.Role, AssigneeID: tr.ID, Input: json.RawMessage(`{"q":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.SubmitTask(ctx, tr, signoff.Submission{TaskID: tk.ID, InputDigest: tk.InputDigest, Output: json.RawMessage(`{"a":1}`), Evidence: signoff.EvidenceReplayed}); err != nil {
		t.Fatal(err)
	}
	for _, role := range []signoff.Role{signoff.RoleOwner, signoff.RoleOperator, signoff.RoleViewer} {
		b := r.visitor(t)
		b.signIn(role)
		got := b.get("/cases/" + c.ID)
		if got.status != http.StatusOK || !strings.Contains(got.body, "<h1") || !strings.Contains(got.body, c.Title) {
			t.Fatalf("%s: %d", role, got.status)
		}
		tl := elementByID(got.body, "timeline")
		if n := strings.Count(tl, "<li "); n < 4 {
			t.Errorf("%s: %d timeline entries: %s", role, n, tl)
		}
		for _, want := range []string{`<span class="badge evidence-live">live</span>`, `<span class="badge evidence-replayed">replayed</span>`, "case.created", "public-intake", tr.ID} {
			if !strings.Contains(tl, want) {
				t.Errorf("%s: timeline lacks %s", role, want)
			}
		}
		if d := elementByID(got.body, "dossier"); !strings.Contains(d, "write to me at [email]") || strings.Contains(d, "bob@example.com") {
			t.Errorf("%s: dossier %s", role, d)
		}
		orig := elementByID(got.body, "original")
		if role == signoff.RoleOwner && !strings.Contains(orig, "bob@example.com") {
			t.Errorf("owner does not see the original: %q", orig)
		}
		if role != signoff.RoleOwner && (orig != "" || strings.Contains(got.body, "bob@example.com")) {
			t.Errorf("%s sees the original", role)
		}
		if st := elementByID(got.body, "ledger-status"); !strings.Contains(st, "verifies") || !strings.Contains(st, `data-verified="yes"`) {
			t.Errorf("%s: ledger status %s", role, st)
		}
	}
	// Another workspace's case is not found.
	other := newRigOn(t, r.store, r.clock, rigOptions{})
	b := other.visitor(t)
	b.signIn(signoff.RoleOwner)
	for _, p := range []string{"/cases/" + c.ID, "/cases/" + c.ID + "/approval", "/desk/rows/" + c.ID} {
		if got := b.get(p); got.status != http.StatusNotFound || strings.Contains(got.body, c.Title) {
			t.Errorf("%s from another workspace: %d", p, got.status)
		}
	}
}

func TestEvidenceBadgeNeverUpgraded(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := r.report(t, "flag incident")
	ctx := context.Background()
	tr := r.actors[signoff.RoleTriager]
	for _, ev := range []string{signoff.EvidenceSimulated, signoff.EvidenceAuthored} {
		tk, err := r.store.CreateTask(ctx, r.owner, signoff.TaskInput{CaseID: c.ID, Kind: "step", Role: tr.Role, AssigneeID: tr.ID, Input: json.RawMessage(`{"e":"` + ev + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.store.SubmitTask(ctx, tr, signoff.Submission{TaskID: tk.ID, InputDigest: tk.InputDigest, Output: json.RawMessage(`{}`), Evidence: ev}); err != nil {
			t.Fatal(err)
		}
	}
	b := r.visitor(t)
	b.signIn(signoff.RoleViewer)
	tl := elementByID(b.get("/cases/"+c.ID).body, "timeline")
	for _, want := range []string{`evidence-simulated">simulated<`, `evidence-authored">authored<`} {
		if !strings.Contains(tl, want) {
			t.Errorf("timeline lacks %s", want)
		}
	}
}

// TestDesk: rows, filters, search, the row fragment.
func TestDesk(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	bug, _ := r.report(t, "the coupon is applied twice")
	r.report(t, "negative total with a large coupon")
	ch, err := r.store.CreateCase(ctx, r.owner, signoff.CaseInput{ProjectID: r.proj.ID, Kind: signoff.KindChange, Title: "turn off checkout_v2"})
	if err != nil {
		t.Fatal(err)
	}
	b := r.visitor(t)
	b.signIn(signoff.RoleViewer)
	rows := func(q string) []string {
		t.Helper()
		got := b.get("/desk" + q)
		if got.status != http.StatusOK {
			t.Fatalf("desk%s: %d %s", q, got.status, got.body)
		}
		var ids []string
		for _, m := range regexp.MustCompile(`<tr data-case="([^"]+)"`).FindAllStringSubmatch(got.body, -1) {
			ids = append(ids, m[1])
		}
		return ids
	}
	if got := rows(""); len(got) != 3 || got[0] != ch.ID {
		t.Fatalf("desk rows %v", got)
	}
	if got := rows("?kind=change"); len(got) != 1 || got[0] != ch.ID {
		t.Fatalf("kind=change %v", got)
	}
	if got := rows("?q=COUPON+is"); len(got) != 1 || got[0] != bug.ID {
		t.Fatalf("q=COUPON is %v", got)
	}
	if got := rows("?q=100%25"); len(got) != 0 {
		t.Fatalf("q=100%% matched %v", got)
	}
	if got := rows("?state=received&kind=bug"); len(got) != 2 {
		t.Fatalf("state=received %v", got)
	}
	if got := b.get("/desk?state=nonsense"); got.status != http.StatusUnprocessableEntity {
		t.Fatalf("unknown state: %d", got.status)
	}
	page := b.get("/desk?state=received")
	for _, want := range []string{`<table id="cases">`, `<td class="state">received</td>`, `<option value="received" selected>`, `id="filters"`, `src="/static/desk.js"`} {
		if !strings.Contains(page.body, want) {
			t.Errorf("desk page lacks %s", want)
		}
	}
	row := b.get("/desk/rows/" + bug.ID)
	if row.status != http.StatusOK || !strings.HasPrefix(row.body, `<tr data-case="`+bug.ID+`"`) || !strings.Contains(row.body, `<a href="/cases/`+bug.ID+`">`) {
		t.Fatalf("row: %d %s", row.status, row.body)
	}
	if got := b.get("/desk/rows/" + bug.ID + "?kind=change"); got.status != http.StatusNoContent {
		t.Fatalf("filtered-out row: %d", got.status)
	}
	if got := b.get("/desk/rows/case_00000000000000000000000000"); got.status != http.StatusNotFound {
		t.Fatalf("missing row: %d", got.status)
	}
}

// TestDeskEvents: the live stream starts at the head, names events with
// their ledger sequence as id, and carries new cases and transitions.
func TestDeskEvents(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	old, _ := r.report(t, "an old case")
	b := r.visitor(t)
	b.signIn(signoff.RoleOperator)
	req, _ := http.NewRequestWithContext(ctx, "GET", r.srv.URL+"/desk/events", nil)
	res, err := b.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	assertSecurityHeaders(t, "stream", res.Header)
	c, _ := r.report(t, "a new case")
	if _, _, err := r.store.TransitionCase(ctx, r.owner, c.ID, signoff.TransitionInput{Command: "start_triage"}); err != nil {
		t.Fatal(err)
	}
	type event struct{ id, name, data string }
	events := make(chan event, 16)
	go func() {
		sc := bufio.NewScanner(res.Body)
		var e event
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				e.id = strings.TrimPrefix(line, "id: ")
			case strings.HasPrefix(line, "event: "):
				e.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				e.data = strings.TrimPrefix(line, "data: ")
			case line == "" && e.name != "":
				events <- e
				e = event{}
			}
		}
		close(events)
	}()
	var created, moved bool
	deadline := time.After(10 * time.Second)
	for !created || !moved {
		select {
		case e, ok := <-events:
			if !ok {
				t.Fatal("stream ended")
			}
			var d struct {
				Seq     int64
				CaseID  string `json:"case_id"`
				Payload map[string]any
			}
			if err := json.Unmarshal([]byte(e.data), &d); err != nil {
				t.Fatalf("data %s: %v", e.data, err)
			}
			if e.id == "" || e.id != seqString(d.Seq) {
				t.Fatalf("id %q for seq %d", e.id, d.Seq)
			}
			if d.CaseID == old.ID {
				t.Fatalf("the stream replayed an event from before it opened: %+v", e)
			}
			switch e.name {
			case "case.created":
				created = d.CaseID == c.ID
			case "case.transitioned":
				moved = d.CaseID == c.ID && d.Payload["to"] == "triaging"
			}
		case <-deadline:
			t.Fatalf("created=%v moved=%v after 10 s", created, moved)
		}
	}
}

func seqString(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestEveryControlHasALabel: each visible form control on every page has
// a label naming its id.
func TestEveryControlHasALabel(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, secret := r.report(t, "coupon twice")
	anon, op := r.visitor(t), r.visitor(t)
	op.signIn(signoff.RoleOwner)
	control := regexp.MustCompile(`<(input|select|textarea)\b[^>]*>`)
	for _, pg := range []struct {
		b    *visitor
		path string
	}{{anon, "/login"}, {anon, "/p/" + r.proj.ID + "/report"}, {anon, "/t/" + secret}, {op, "/desk"}, {op, "/cases/" + c.ID}} {
		body := pg.b.get(pg.path).body
		for _, tag := range control.FindAllString(body, -1) {
			if strings.Contains(tag, `type="hidden"`) {
				continue
			}
			m := idRE.FindStringSubmatch(tag)
			if m == nil || !strings.Contains(body, `<label for="`+m[1]+`"`) {
				t.Errorf("%s: control without a label: %s", pg.path, tag)
			}
		}
	}
	// The login form, exactly as the browser tests find it.
	login := anon.get("/login").body
	for _, want := range []string{`<label for="token">API token</label>`, `<input id="token" name="token" type="password"`, `id="login-submit"`} {
		if !strings.Contains(login, want) {
			t.Errorf("login page lacks %s", want)
		}
	}
}

// TestRootRedirects: / goes to the desk when signed in, else to sign-in.
func TestRootRedirects(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	b := r.visitor(t)
	if got := b.get("/"); got.status != http.StatusSeeOther || got.header.Get("Location") != "/login" {
		t.Fatalf("anonymous /: %d %v", got.status, got.header.Get("Location"))
	}
	b.signIn(signoff.RoleViewer)
	if got := b.get("/"); got.status != http.StatusSeeOther || got.header.Get("Location") != "/desk" {
		t.Fatalf("signed-in /: %d %v", got.status, got.header.Get("Location"))
	}
	if got := b.get("/login"); got.status != http.StatusSeeOther || got.header.Get("Location") != "/desk" {
		t.Fatalf("signed-in /login: %d", got.status)
	}
	_ = url.Values{}
}

// TestLinkFromAnotherSite: a link to a case followed from a chat message
// arrives without the SameSite=Strict cookie; the page reloads it from
// this site, where the cookie goes along, and only then sends an
// anonymous browser to sign in.
func TestLinkFromAnotherSite(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := r.report(t, "checkout fails")
	b := r.visitor(t)
	req, _ := http.NewRequest("GET", r.srv.URL+"/cases/"+c.ID, nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	got := b.do(req)
	want := `<meta http-equiv="refresh" content="0; url=/cases/` + c.ID + `?continued=1">`
	if got.status != http.StatusOK || !strings.Contains(got.body, want) || strings.Contains(got.body, c.Title) {
		t.Fatalf("cross-site link: %d %s", got.status, got.body)
	}
	assertSecurityHeaders(t, "continue page", got.header)
	if got := b.get("/cases/" + c.ID + "?continued=1"); got.status != http.StatusSeeOther || got.header.Get("Location") != "/login?next="+url.QueryEscape("/cases/"+c.ID) {
		t.Fatalf("continued without a session: %d %s", got.status, got.header.Get("Location"))
	}
	b.signIn(signoff.RoleViewer)
	if got := b.get("/cases/" + c.ID + "?continued=1"); got.status != http.StatusOK || !strings.Contains(got.body, c.Title) {
		t.Fatalf("continued with a session: %d", got.status)
	}
}

// countingStore counts full ledger verifications and makes each one slow
// enough for concurrent pages to overlap it.
type countingStore struct {
	*sqlstore.DB
	n atomic.Int64
}

func (c *countingStore) VerifyLedger(ctx context.Context, ws string, trusted map[string]ed25519.PublicKey) (ledger.Result, error) {
	c.n.Add(1)
	time.Sleep(200 * time.Millisecond)
	return c.DB.VerifyLedger(ctx, ws, trusted)
}

// TestLedgerVerifiedOnceForConcurrentPages: many case pages at once share
// one verification of the workspace's chain instead of one each.
func TestLedgerVerifiedOnceForConcurrentPages(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := r.report(t, "the coupon is applied twice")
	cs := &countingStore{DB: r.store}
	r2 := *r
	r2.srv = httptest.NewServer(web.New(web.Options{Store: cs, BugDesk: r.bug, ChangeDesk: r.change, Now: r.clock.Now,
		LoginPerIP: web.Limit{Rate: 1000, Burst: 1000}}))
	t.Cleanup(r2.srv.Close)
	b := r2.visitor(t)
	b.signIn(signoff.RoleViewer)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if got := b.get("/cases/" + c.ID); got.status != http.StatusOK || !strings.Contains(got.body, `data-verified="yes"`) {
				t.Errorf("case page: %d", got.status)
			}
		})
	}
	wg.Wait()
	if n := cs.n.Load(); n != 1 {
		t.Fatalf("%d verifications for 20 concurrent pages, want 1", n)
	}
}
