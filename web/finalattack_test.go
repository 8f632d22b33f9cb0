package web_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/keys"
)

// finalAttackRoute is one route added for issue 24 and the form a post
// carries (the CSRF token is added per visitor).
type finalAttackRoute struct {
	method, path string
	form         url.Values
}

// finalAttackRoutes are every GET and POST route issue 24 added, on a
// bug case c (with a pending decision) and a change chg awaiting approval.
func finalAttackRoutes(c, chg signoff.Case) []finalAttackRoute {
	plan := url.Values{"action": {"builtin"}, "plan_id": {"p"}, "plan_digest": {strings.Repeat("0", 64)}}
	return []finalAttackRoute{
		{"GET", "/cases/" + c.ID + "/events", nil},
		{"GET", "/cases/" + c.ID + "/candidates/cand_x/evidence", nil},
		{"GET", "/changes/new", nil},
		{"GET", "/people", nil},
		{"POST", "/cases/" + c.ID + "/merge", url.Values{"candidate_id": {"cand_x"}, "subject_digest": {strings.Repeat("0", 64)}}},
		{"POST", "/cases/" + chg.ID + "/plan", plan},
		{"POST", "/cases/" + chg.ID + "/execute", url.Values{"plan_id": {"p"}, "plan_digest": {strings.Repeat("0", 64)}}},
		{"POST", "/changes/new", url.Values{"project_id": {"x"}, "message": {"turn the flag on"}}},
		{"POST", "/people/passkeys/begin", url.Values{"token": {"x"}}},
		{"POST", "/people/passkeys/finish", url.Values{"pending": {"x"}, "credential": {"{}"}}},
		{"POST", "/people/passkeys/pk_x/revoke", url.Values{}},
		{"POST", "/cases/" + chg.ID + "/approval/passkey/begin", url.Values{"subject_digest": {strings.Repeat("0", 64)}}},
		{"POST", "/cases/" + chg.ID + "/approval/passkey/finish", url.Values{"pending": {"x"}, "assertion": {"{}"}}},
	}
}

// finalAttackNoCase is a well-formed case id no workspace has.
const finalAttackNoCase = "case_01m978jb2c8ezffvch7kzf0zzz"

// finalAttackSend sends rt as b with the csrf token (none when empty)
// and, on a post, the Origin header origin.
func (b *visitor) finalAttackSend(rt finalAttackRoute, csrf, origin string) served {
	b.t.Helper()
	if rt.method == "GET" {
		req, _ := http.NewRequest("GET", b.r.srv.URL+rt.path, nil)
		if strings.HasSuffix(rt.path, "/events") {
			// An open stream never ends: read the status and hang up.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			res, err := b.c.Do(req.WithContext(ctx))
			if err != nil {
				b.t.Fatalf("GET %s: %v", rt.path, err)
			}
			res.Body.Close()
			return served{status: res.StatusCode, header: res.Header}
		}
		return b.do(req)
	}
	form := url.Values{}
	for k, v := range rt.form {
		form[k] = v
	}
	if csrf != "" {
		form.Set("csrf", csrf)
	}
	req, _ := http.NewRequest("POST", b.r.srv.URL+rt.path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", origin)
	return b.do(req)
}

// TestFinalAttackRouteMatrix extends TestRoleRouteMatrix and
// TestCSRFMissingIs403 to every route issue 24 added: signed out, a GET
// goes to the sign-in page (the live stream answers 401) and a POST is
// 401; a person of another workspace finds no case; every POST by a
// signed-in person without the CSRF token, or from another site with it,
// is 403; and none of the posts below, by anyone, moves the ledger.
func TestFinalAttackRouteMatrix(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	c, _ := r.report(t, "the coupon is applied twice")
	r.decisionOn(t, c)
	chg, _ := r.changeAwaitingApproval(t)
	visitors := map[string]*visitor{"anon": r.visitor(t)}
	for _, role := range []signoff.Role{signoff.RoleOwner, signoff.RoleOperator, signoff.RoleViewer} {
		b := r.visitor(t)
		b.signIn(role)
		visitors[string(role)] = b
	}
	other := newRigOn(t, r.store, r.clock, rigOptions{})
	stranger := other.visitor(t)
	stranger.signIn(signoff.RoleOwner)
	before, err := r.store.HeadSeq(ctx, r.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	otherBefore, err := r.store.HeadSeq(ctx, other.ws.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range finalAttackRoutes(c, chg) {
		for _, name := range []string{"anon", "owner", "operator", "viewer"} {
			b := visitors[name]
			if name == "anon" {
				b.csrf("/login") // the browser holds a double-submit cookie
				got := b.finalAttackSend(rt, "", r.srv.URL)
				want := http.StatusSeeOther
				if rt.method == "POST" || strings.HasSuffix(rt.path, "/events") {
					want = http.StatusUnauthorized
				}
				if got.status != want {
					t.Errorf("%s %s signed out: %d, want %d", rt.method, rt.path, got.status, want)
				}
				if want == http.StatusSeeOther && !strings.HasPrefix(got.header.Get("Location"), "/login") {
					t.Errorf("%s %s signed out goes to %q", rt.method, rt.path, got.header.Get("Location"))
				}
				continue
			}
			if rt.method == "GET" {
				if got := b.finalAttackSend(rt, "", r.srv.URL); got.status == http.StatusUnauthorized || got.status >= 500 {
					t.Errorf("GET %s as %s: %d", rt.path, name, got.status)
				}
				continue
			}
			csrf := b.csrf("/desk")
			for _, bad := range []struct{ csrf, origin string }{{"", r.srv.URL}, {"wrong-token", r.srv.URL}, {csrf, "https://evil.example"}} {
				if got := b.finalAttackSend(rt, bad.csrf, bad.origin); got.status != http.StatusForbidden {
					t.Errorf("POST %s as %s, csrf %q origin %s: %d, want 403", rt.path, name, bad.csrf, bad.origin, got.status)
				}
			}
			if got := b.finalAttackSend(rt, csrf, r.srv.URL); got.status < 400 {
				t.Errorf("POST %s as %s with a bogus form: %d", rt.path, name, got.status)
			}
		}
		if strings.HasPrefix(rt.path, "/cases/") {
			csrf := ""
			if rt.method == "POST" {
				csrf = stranger.csrf("/desk")
			}
			// Another workspace's case answers as a case that does not
			// exist: 404, or the same refusal before the case is read.
			got := stranger.finalAttackSend(rt, csrf, other.srv.URL)
			none := rt
			none.path = strings.NewReplacer(c.ID, finalAttackNoCase, chg.ID, finalAttackNoCase).Replace(rt.path)
			want := stranger.finalAttackSend(none, csrf, other.srv.URL)
			if got.status != want.status || (got.status != http.StatusNotFound && got.status != http.StatusConflict) ||
				strings.Contains(got.body, c.Title) || strings.Contains(got.body, chg.Title) {
				t.Errorf("%s %s from another workspace: %d (a missing case: %d)", rt.method, rt.path, got.status, want.status)
			}
		}
	}
	if after, err := r.store.HeadSeq(ctx, r.ws.ID); err != nil || after != before {
		t.Fatalf("ledger moved from %d to %d (%v)", before, after, err)
	}
	if after, err := r.store.HeadSeq(ctx, other.ws.ID); err != nil || after != otherBefore {
		t.Fatalf("other ledger moved from %d to %d (%v)", otherBefore, after, err)
	}
}

// TestFinalAttackInboxStaleApproval: the desk's "Needs me" and the case
// page must agree on whether a person still has to approve. An approval
// of an earlier plan that is still recorded valid (an approval recorded
// while a new plan was being drafted: the store records it after the
// desk superseded the old ones, and only the card's digest tells them
// apart) does not count for the current plan: the gate refuses it, the
// case page asks the approver again, and the inbox must not tell them
// they are done.
func TestFinalAttackInboxStaleApproval(t *testing.T) {
	t.Parallel()
	for name, open := range map[string]func(*testing.T) (*rig, signoff.Case){
		"sqlite": func(t *testing.T) (*rig, signoff.Case) {
			r := newRig(t)
			c, _ := r.changeAwaitingApproval(t)
			return r, c
		},
		"postgres": func(t *testing.T) (*rig, signoff.Case) {
			r, _, _, chg := inboxPostgresRig(t)
			return r, chg
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r, c := open(t)
			testFinalAttackInboxStaleApproval(t, r, c)
		})
	}
}

func testFinalAttackInboxStaleApproval(t *testing.T, r *rig, c signoff.Case) {
	ctx := context.Background()
	cd, err := r.change.Card(ctx, r.owner, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	op := r.actors[signoff.RoleOperator]
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pemKey, err := keys.EncodePublic(pub)
	if err != nil {
		t.Fatal(err)
	}
	k, err := r.store.RegisterKey(ctx, op, string(pemKey))
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Repeat("ab", 32) // an earlier plan's digest
	st := approval.NewStatement(c.ID, old, approval.Approve, cd.PolicyDigest, op.ID, r.clock.Now(), cd.Policy.TTL())
	env, err := approval.Sign(st, priv)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.RecordApproval(ctx, op, signoff.Approval{CaseID: c.ID, SubjectDigest: old, Decision: approval.Approve, ApproverID: op.ID,
		KeyID: k.ID, Nonce: st.Nonce, PolicyDigest: st.PolicyDigest, IssuedAt: st.IssuedAt, ExpiresAt: st.ExpiresAt, Envelope: raw, Via: "cli-signed"}); err != nil {
		t.Fatal(err)
	}
	b := r.visitor(t)
	b.signIn(signoff.RoleOperator)
	waiting := elementByID(b.get("/cases/"+c.ID).body, "waiting")
	if !strings.Contains(waiting, `href="/cases/`+c.ID+`/approval"`) {
		t.Fatalf("the case page does not ask the operator to approve the current plan: %s", waiting)
	}
	if got := inboxRows(b.get("/desk").body, "needs"); !slices.Contains(got, c.ID) {
		t.Errorf("the inbox drops the plan the operator must still approve: needs me %v", got)
	}
	if got := b.get("/desk/rows/" + c.ID + "?needs=1"); got.status != http.StatusOK || !strings.Contains(got.body, `href="/cases/`+c.ID+`/approval"`) {
		t.Errorf("the inbox row does not ask for the approval: %d %s", got.status, got.body)
	}
}

// TestFinalAttackWaitingExpiredApproval: an approval that expired no
// longer counts (the gate's quorum leaves it out, and the inbox too), so
// the case page's waiting line must ask its approver to sign again, not
// tell them they already did.
func TestFinalAttackWaitingExpiredApproval(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	c, cd := r.changeAwaitingApproval(t)
	op := r.actors[signoff.RoleOperator]
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	pemKey, err := keys.EncodePublic(pub)
	if err != nil {
		t.Fatal(err)
	}
	k, err := r.store.RegisterKey(ctx, op, string(pemKey))
	if err != nil {
		t.Fatal(err)
	}
	// Recorded as the desk does before it counts the quorum (a quorum of
	// two would leave it there), then left to expire.
	st := approval.NewStatement(c.ID, cd.SubjectDigest, approval.Approve, cd.PolicyDigest, op.ID, r.clock.Now(), cd.Policy.TTL())
	env, err := approval.Sign(st, priv)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.RecordApproval(ctx, op, signoff.Approval{CaseID: c.ID, SubjectDigest: cd.SubjectDigest, Decision: approval.Approve, ApproverID: op.ID,
		KeyID: k.ID, Nonce: st.Nonce, PolicyDigest: st.PolicyDigest, IssuedAt: st.IssuedAt, ExpiresAt: st.ExpiresAt, Envelope: raw, Via: "cli-signed"}); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(st.ExpiresAt.Sub(r.clock.Now()) + time.Minute)
	b := r.visitor(t)
	b.signIn(signoff.RoleOperator)
	if waiting := elementByID(b.get("/cases/"+c.ID).body, "waiting"); !strings.Contains(waiting, `href="/cases/`+c.ID+`/approval"`) {
		t.Fatalf("the case page counts an expired approval: %s", waiting)
	}
	if got := inboxRows(b.get("/desk").body, "needs"); !slices.Contains(got, c.ID) {
		t.Errorf("the inbox counts an expired approval: needs me %v", got)
	}
}
