package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/passkey/passkeytest"
	"github.com/signoff-dev/signoff/workflow"
)

// passkeyAttackPost is passkeyPost on a Host of the caller's choosing,
// with a matching Origin header: what anyone holding a session's cookie
// and CSRF token can send (the server cannot tell it from a browser).
func passkeyAttackPost(b *visitor, host, path, csrf string, form url.Values) served {
	b.t.Helper()
	req, err := http.NewRequest("POST", b.r.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Host = host
	for _, c := range b.jar.Cookies(req.URL) {
		req.AddCookie(c)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://"+host)
	req.Header.Set("X-CSRF-Token", csrf)
	return b.do(req)
}

// TestPasskeyAttackHostOrigin: the origin an approval is accepted from is
// the one the passkey was registered on, not whatever the request's Host
// names. WebAuthn scopes a passkey to a host name, not a port, so a page
// on another port of the same host (a hostile agent's server on
// localhost:PORT, another service on the host) can get the person's
// authenticator to sign a challenge; with a stolen session, naming that
// port in the Host header made the server expect exactly that origin and
// record the approval.
func TestPasskeyAttackHostOrigin(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	c, cd := r.changeAwaitingApproval(t)
	_, origin := passkeyHost(r)

	b := r.visitor(t)
	b.signIn(signoff.RoleOperator)
	csrf := b.csrf("/people")
	got, out := passkeyPost(b, "/people/passkeys/begin", csrf, url.Values{"token": {r.tokens[signoff.RoleOperator]}})
	if got.status != http.StatusOK {
		t.Fatalf("registration begin: %d %s", got.status, got.body)
	}
	a := passkeytest.New("localhost")
	reg := url.Values{"pending": {out["pending"].(string)}, "credential": {string(a.Register(passkeyChallenge(t, out), origin))}}
	if got, _ := passkeyPost(b, "/people/passkeys/finish", csrf, reg); got.status != http.StatusOK {
		t.Fatalf("registration finish: %d %s", got.status, got.body)
	}

	// The attacker drives the session on localhost:1, where their page
	// asked the authenticator.
	const evilHost = "localhost:1"
	begin := "/cases/" + c.ID + "/approval/passkey/begin"
	finish := "/cases/" + c.ID + "/approval/passkey/finish"
	got = passkeyAttackPost(b, evilHost, begin, csrf, url.Values{"decision": {"approve"}, "digest": {cd.SubjectDigest}})
	if got.status == http.StatusOK {
		// Refusing at begin is as good; if begin answers, finish must not.
		var o struct {
			Pending   string `json:"pending"`
			Statement string `json:"statement"`
		}
		if err := json.Unmarshal([]byte(got.body), &o); err != nil {
			t.Fatal(err)
		}
		env := a.Assert([]byte(o.Statement), passkeytest.Options{Origin: "http://" + evilHost})
		got = passkeyAttackPost(b, evilHost, finish, csrf, url.Values{"pending": {o.Pending}, "credential": {string(passkeytest.AssertionJSON(env))}})
		if got.status == http.StatusOK {
			t.Fatalf("an assertion made on %s was accepted for a passkey registered on %s: %s", evilHost, origin, got.body)
		}
	}
	if now, err := r.store.GetCase(ctx, r.owner, c.ID); err != nil || now.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("case %s %v", now.State, err)
	}
	if apvs, err := r.store.ListApprovals(ctx, r.owner, c.ID); err != nil || len(apvs) != 0 {
		t.Fatalf("approvals %+v %v", apvs, err)
	}

	// The registered origin still works.
	got, out = passkeyPost(b, begin, csrf, url.Values{"decision": {"approve"}, "digest": {cd.SubjectDigest}})
	if got.status != http.StatusOK {
		t.Fatalf("approval begin: %d %s", got.status, got.body)
	}
	env := a.Assert([]byte(out["statement"].(string)), passkeytest.Options{Origin: origin})
	if got, _ := passkeyPost(b, finish, csrf, url.Values{"pending": {out["pending"].(string)}, "credential": {string(passkeytest.AssertionJSON(env))}}); got.status != http.StatusOK {
		t.Fatalf("approval on the registered origin: %d %s", got.status, got.body)
	}
}

// TestPasskeyAttackCrossUse: an answer signed with another person's
// passkey, a registration request spent on an approval, and a pending
// approval finished by another person are all refused, and the case is
// left awaiting approval.
func TestPasskeyAttackCrossUse(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	c, cd := r.changeAwaitingApproval(t)
	_, origin := passkeyHost(r)
	register := func(role signoff.Role) (*visitor, string, *passkeytest.Authenticator) {
		b := r.visitor(t)
		b.signIn(role)
		csrf := b.csrf("/people")
		got, out := passkeyPost(b, "/people/passkeys/begin", csrf, url.Values{"token": {r.tokens[role]}})
		if got.status != http.StatusOK {
			t.Fatalf("%s registration begin: %d %s", role, got.status, got.body)
		}
		a := passkeytest.New("localhost")
		reg := url.Values{"pending": {out["pending"].(string)}, "credential": {string(a.Register(passkeyChallenge(t, out), origin))}}
		if got, _ := passkeyPost(b, "/people/passkeys/finish", csrf, reg); got.status != http.StatusOK {
			t.Fatalf("%s registration finish: %d %s", role, got.status, got.body)
		}
		return b, csrf, a
	}
	ob, ocsrf, ownerPK := register(signoff.RoleOwner)
	b, csrf, _ := register(signoff.RoleOperator)
	begin := "/cases/" + c.ID + "/approval/passkey/begin"
	finish := "/cases/" + c.ID + "/approval/passkey/finish"
	form := url.Values{"decision": {"approve"}, "digest": {cd.SubjectDigest}}

	// The operator's statement signed with the owner's passkey.
	got, out := passkeyPost(b, begin, csrf, form)
	if got.status != http.StatusOK {
		t.Fatalf("approval begin: %d %s", got.status, got.body)
	}
	env := ownerPK.Assert([]byte(out["statement"].(string)), passkeytest.Options{Origin: origin})
	if got, _ := passkeyPost(b, finish, csrf, url.Values{"pending": {out["pending"].(string)}, "credential": {string(passkeytest.AssertionJSON(env))}}); got.status != http.StatusForbidden {
		t.Fatalf("another person's passkey: %d %s", got.status, got.body)
	}
	// A registration request answered on the approval route.
	got, out = passkeyPost(b, "/people/passkeys/begin", csrf, url.Values{"token": {r.tokens[signoff.RoleOperator]}})
	if got.status != http.StatusOK {
		t.Fatalf("registration begin: %d %s", got.status, got.body)
	}
	if got, _ := passkeyPost(b, finish, csrf, url.Values{"pending": {out["pending"].(string)}, "credential": {string(passkeytest.AssertionJSON(env))}}); got.status != http.StatusConflict {
		t.Fatalf("a registration request spent on an approval: %d %s", got.status, got.body)
	}
	// The operator's pending approval finished by the owner with the
	// owner's passkey (the statement names the operator).
	got, out = passkeyPost(b, begin, csrf, form)
	if got.status != http.StatusOK {
		t.Fatalf("approval begin: %d %s", got.status, got.body)
	}
	env = ownerPK.Assert([]byte(out["statement"].(string)), passkeytest.Options{Origin: origin})
	if got, _ := passkeyPost(ob, finish, ocsrf, url.Values{"pending": {out["pending"].(string)}, "credential": {string(passkeytest.AssertionJSON(env))}}); got.status != http.StatusConflict {
		t.Fatalf("another person finished the operator's request: %d %s", got.status, got.body)
	}
	if now, err := r.store.GetCase(ctx, r.owner, c.ID); err != nil || now.State != workflow.ChangeAwaitingApproval {
		t.Fatalf("case %s %v", now.State, err)
	}
	if apvs, err := r.store.ListApprovals(ctx, r.owner, c.ID); err != nil || len(apvs) != 0 {
		t.Fatalf("approvals %+v %v", apvs, err)
	}
}

// TestPasskeyAttackStolenSession: a session's cookie and CSRF token alone
// (taken from the browser, or a screen left open within minutes of
// signing in) do not register a passkey: that would be a lasting way to
// approve in the person's name, outliving the session. Registering asks
// for the person's API token again; another person's token, or none, is
// refused.
func TestPasskeyAttackStolenSession(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	ctx := context.Background()
	_, origin := passkeyHost(r)
	b := r.visitor(t)
	b.signIn(signoff.RoleOperator)
	csrf := b.csrf("/people")
	for name, tok := range map[string]string{"no token": "", "another person's token": r.tokens[signoff.RoleOwner], "a made-up token": "so_x_y"} {
		got, out := passkeyPost(b, "/people/passkeys/begin", csrf, url.Values{"token": {tok}})
		if got.status == http.StatusOK {
			a := passkeytest.New("localhost")
			reg := url.Values{"pending": {out["pending"].(string)}, "credential": {string(a.Register(passkeyChallenge(t, out), origin))}}
			got, _ = passkeyPost(b, "/people/passkeys/finish", csrf, reg)
		}
		if got.status != http.StatusForbidden {
			t.Fatalf("%s: registration %d %s", name, got.status, got.body)
		}
	}
	if ks, err := r.store.ListKeys(ctx, r.actors[signoff.RoleOperator]); err != nil || len(ks) != 0 {
		t.Fatalf("keys %+v %v", ks, err)
	}
	got, out := passkeyPost(b, "/people/passkeys/begin", csrf, url.Values{"token": {r.tokens[signoff.RoleOperator]}})
	if got.status != http.StatusOK {
		t.Fatalf("registration with the person's own token: %d %s", got.status, got.body)
	}
	a := passkeytest.New("localhost")
	reg := url.Values{"pending": {out["pending"].(string)}, "credential": {string(a.Register(passkeyChallenge(t, out), origin))}}
	if got, _ := passkeyPost(b, "/people/passkeys/finish", csrf, reg); got.status != http.StatusOK {
		t.Fatalf("registration finish: %d %s", got.status, got.body)
	}
}
