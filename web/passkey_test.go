package web_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/passkey"
	"github.com/signoff-dev/signoff/passkey/passkeytest"
	"github.com/signoff-dev/signoff/workflow"
)

// passkeyHost is how the passkey tests reach the rig's server: WebAuthn
// needs a host name as the relying party id, not 127.0.0.1.
func passkeyHost(r *rig) (host, origin string) {
	u, _ := url.Parse(r.srv.URL)
	host = "localhost:" + u.Port()
	return host, "http://" + host
}

// passkeyPost posts a form as passkey.js does: on the localhost name,
// with the CSRF token in its header (empty: none).
func passkeyPost(b *visitor, path, csrf string, form url.Values) (served, map[string]any) {
	b.t.Helper()
	host, origin := passkeyHost(b.r)
	req, err := http.NewRequest("POST", b.r.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Host = host
	// The client's jar would look cookies up by the Host, which it never
	// set them for: send the visitor's own.
	for _, c := range b.jar.Cookies(req.URL) {
		req.AddCookie(c)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", origin)
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	got := b.do(req)
	var out map[string]any
	_ = json.Unmarshal([]byte(got.body), &out)
	return got, out
}

func passkeyChallenge(t *testing.T, out map[string]any) []byte {
	t.Helper()
	pk, _ := out["publicKey"].(map[string]any)
	c, _ := pk["challenge"].(string)
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) == 0 {
		t.Fatalf("no challenge in %v", out)
	}
	return b
}

// TestPasskeyWeb: registration and approval over HTTP as passkey.js
// drives them, with a software authenticator: CSRF, the roles, a
// one-time-link session, a stale page, a replayed answer and a wrong
// origin are refused; a good approval is recorded by the change desk as
// web-passkey and the page then says who approved.
func TestPasskeyWeb(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	c, cd := r.changeAwaitingApproval(t)
	_, origin := passkeyHost(r)
	op := r.actors[signoff.RoleOperator]

	b := r.visitor(t)
	b.signIn(signoff.RoleOperator)
	csrf := b.csrf("/people")
	if got, _ := passkeyPost(b, "/people/passkeys/begin", "", nil); got.status != http.StatusForbidden {
		t.Fatalf("registration without CSRF: %d %s", got.status, got.body)
	}
	got, out := passkeyPost(b, "/people/passkeys/begin", csrf, url.Values{"token": {r.tokens[signoff.RoleOperator]}})
	if got.status != http.StatusOK {
		t.Fatalf("registration begin: %d %s", got.status, got.body)
	}
	a := passkeytest.New("localhost")
	reg := url.Values{"pending": {out["pending"].(string)}, "credential": {string(a.Register(passkeyChallenge(t, out), origin))}}
	if got, out = passkeyPost(b, "/people/passkeys/finish", csrf, reg); got.status != http.StatusOK || out["key_id"] != a.Credential.KeyID() {
		t.Fatalf("registration finish: %d %s", got.status, got.body)
	}
	if got, _ := passkeyPost(b, "/people/passkeys/finish", csrf, reg); got.status != http.StatusConflict {
		t.Fatalf("registration answered twice: %d %s", got.status, got.body)
	}
	if k, err := r.store.GetKey(ctx, r.ws.ID, a.Credential.KeyID()); err != nil || k.ActorID != op.ID || !passkey.IsCredential(k.PublicKey) {
		t.Fatalf("registered key %+v %v", k, err)
	}

	// A session opened with a one-time link may not register one.
	code, _, err := r.store.CreateLoginLink(ctx, op.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	lb := r.visitor(t)
	if got := lb.post("/login/"+code, url.Values{"csrf": {lb.csrf("/login/" + code)}}); got.status != http.StatusSeeOther {
		t.Fatalf("link sign-in: %d %s", got.status, got.body)
	}
	if got, _ := passkeyPost(lb, "/people/passkeys/begin", lb.csrf("/people"), nil); got.status != http.StatusForbidden || !strings.Contains(got.body, "one-time sign-in link") {
		t.Fatalf("link session registering: %d %s", got.status, got.body)
	}
	// A viewer does not register or approve.
	vb := r.visitor(t)
	vb.signIn(signoff.RoleViewer)
	if got, _ := passkeyPost(vb, "/people/passkeys/begin", vb.csrf("/people"), nil); got.status != http.StatusForbidden {
		t.Fatalf("viewer registering: %d %s", got.status, got.body)
	}

	// The approval page offers the passkey buttons to the operator.
	page := b.get("/cases/" + c.ID + "/approval")
	if page.status != http.StatusOK {
		t.Fatalf("approval page %d", page.status)
	}
	begin := "/cases/" + c.ID + "/approval/passkey/begin"
	form := url.Values{"decision": {"approve"}, "digest": {cd.SubjectDigest}}
	if got, _ := passkeyPost(b, begin, csrf, url.Values{"decision": {"approve"}, "digest": {strings.Repeat("a", 64)}}); got.status != http.StatusConflict {
		t.Fatalf("stale page: %d %s", got.status, got.body)
	}
	if got, _ := passkeyPost(b, begin, csrf, url.Values{"decision": {"reject"}, "digest": {cd.SubjectDigest}}); got.status != http.StatusUnprocessableEntity && got.status != http.StatusBadRequest {
		t.Fatalf("rejection without a reason: %d %s", got.status, got.body)
	}
	// An answer from another origin is refused, and spends the request.
	got, out = passkeyPost(b, begin, csrf, form)
	if got.status != http.StatusOK {
		t.Fatalf("approval begin: %d %s", got.status, got.body)
	}
	stmt := []byte(out["statement"].(string))
	if string(passkey.Challenge(stmt)) != string(passkeyChallenge(t, out)) {
		t.Fatal("the challenge is not SHA-256 of the statement")
	}
	var st approval.Statement
	if err := json.Unmarshal(stmt, &st); err != nil || st.Case != c.ID || st.SubjectDigest != cd.SubjectDigest || st.Approver != op.ID || st.PolicyDigest != cd.PolicyDigest {
		t.Fatalf("statement %s", stmt)
	}
	evil := a.Assert(stmt, passkeytest.Options{Origin: "http://localhost:1"})
	finish := "/cases/" + c.ID + "/approval/passkey/finish"
	if got, _ := passkeyPost(b, finish, csrf, url.Values{"pending": {out["pending"].(string)}, "credential": {string(passkeytest.AssertionJSON(evil))}}); got.status != http.StatusForbidden {
		t.Fatalf("another origin: %d %s", got.status, got.body)
	}
	// The good one.
	got, out = passkeyPost(b, begin, csrf, form)
	if got.status != http.StatusOK {
		t.Fatalf("approval begin: %d %s", got.status, got.body)
	}
	good := url.Values{"pending": {out["pending"].(string)}, "credential": {string(passkeytest.AssertionJSON(a.Assert([]byte(out["statement"].(string)), passkeytest.Options{Origin: origin})))}}
	// Another session's CSRF token does not take this session's request.
	if got, _ := passkeyPost(lb, finish, lb.csrf("/people"), good); got.status != http.StatusConflict {
		t.Fatalf("another session's answer: %d %s", got.status, got.body)
	}
	got, out = passkeyPost(b, finish, csrf, good)
	if got.status != http.StatusOK || out["redirect"] != "/cases/"+c.ID+"/approval" {
		t.Fatalf("approval finish: %d %s", got.status, got.body)
	}
	if got, _ := passkeyPost(b, finish, csrf, good); got.status != http.StatusConflict {
		t.Fatalf("replayed answer: %d %s", got.status, got.body)
	}
	now, err := r.store.GetCase(ctx, r.owner, c.ID)
	if err != nil || now.State != workflow.ChangeApproved {
		t.Fatalf("case %s %v", now.State, err)
	}
	apvs, err := r.store.ListApprovals(ctx, r.owner, c.ID)
	if err != nil || len(apvs) != 1 || apvs[0].Via != approval.ViaWebPasskey || apvs[0].ApproverID != op.ID {
		t.Fatalf("approvals %+v %v", apvs, err)
	}
	after := b.get("/cases/" + c.ID + "/approval")
	if by := elementByID(after.body, "approved-by"); !strings.Contains(by, op.Name) || !strings.Contains(by, approval.ViaWebPasskey) {
		t.Fatalf("approved by: %q", by)
	}
	// The holder revokes it on the people page; it no longer signs.
	if got := b.post("/people/passkeys/"+a.Credential.KeyID()+"/revoke", url.Values{"csrf": {csrf}}); got.status != http.StatusSeeOther {
		t.Fatalf("revoke: %d %s", got.status, got.body)
	}
	if k, _ := r.store.GetKey(ctx, r.ws.ID, a.Credential.KeyID()); k.RevokedAt == nil {
		t.Fatal("passkey not revoked")
	}
}
