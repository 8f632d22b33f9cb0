package main

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/passkey"
	"github.com/signoff-dev/signoff/workflow"
)

// TestPasskeyBrowser registers a passkey on the people page with
// Chromium's virtual authenticator (CTAP2, internal transport, resident
// keys, user verification) and approves a change plan with it on the
// approval page: the approval is recorded by the change desk as
// web-passkey, counts toward the quorum, and the page then names the
// approver and the next step.
func TestPasskeyBrowser(t *testing.T) {
	exe, d, _ := browserDemo(t)
	ctx := context.Background()
	// WebAuthn wants a host name as the relying party id, not an IP
	// address: the same server, reached as localhost.
	base := strings.Replace(d.url, "127.0.0.1", "localhost", 1)
	caseID := apiChange(t, d)

	b := newBrowser(t, exe, 1280, 900)
	b.run("sign in with the operator's token",
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), d.operatorToken),
		chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.ID("who")))
	if _, err := chromedp.Call(b.ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	if _, err := chromedp.Call(b.ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true}}); err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}

	// Register.
	b.run("register a passkey",
		chromedp.Navigate(base+"/people"),
		chromedp.WaitVisible(chromedp.ID("passkey-register-btn")),
		chromedp.WaitEnabled(chromedp.ID("passkey-register-btn")), // passkey.js has bound its handler
		// Registering asks for the API token again, not only the session.
		chromedp.SendKeys(chromedp.ID("passkey-token"), d.operatorToken),
		chromedp.Click(chromedp.ID("passkey-register-btn")),
		chromedp.WaitVisible(chromedp.ID("my-passkeys")))
	b.checkPage("people")
	keys, err := d.s.ListKeys(ctx, d.operator)
	if err != nil {
		t.Fatal(err)
	}
	var keyID string
	for _, k := range keys {
		if c, err := passkey.ParseCredential(k.PublicKey); err == nil && c.RPID == "localhost" && k.RevokedAt == nil {
			keyID = k.ID
		}
	}
	if keyID == "" {
		t.Fatalf("no passkey registered to the operator: %+v", keys)
	}

	// Approve the plan with it.
	b.run("approval page",
		chromedp.Navigate(base+"/cases/"+caseID+"/approval"),
		chromedp.WaitVisible(chromedp.ID("passkey-approve-btn")),
		chromedp.WaitEnabled(chromedp.ID("passkey-approve-btn")))
	b.checkPage("approval with passkey")
	b.shotOf("passkey-approve-form", "#how-h + #passkey-approve")
	b.run("approve with the passkey",
		chromedp.Click(chromedp.ID("passkey-approve-btn")),
		chromedp.WaitVisible(chromedp.ID("decided")))
	c, err := d.s.GetCase(ctx, d.owner, caseID)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != workflow.ChangeApproved {
		t.Fatalf("case %s after the passkey approval, want %s", c.State, workflow.ChangeApproved)
	}
	apvs, err := d.s.ListApprovals(ctx, d.owner, caseID)
	if err != nil {
		t.Fatal(err)
	}
	if len(apvs) != 1 || apvs[0].Via != approval.ViaWebPasskey || apvs[0].KeyID != keyID || apvs[0].ApproverID != d.operator.ID {
		t.Fatalf("approvals %+v", apvs)
	}
	// The envelope verifies offline under the registered credential.
	k, err := d.s.GetKey(ctx, d.ws.ID, keyID)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := approval.VerifyWith(apvs[0].Envelope, k); err != nil || st.Case != caseID || st.Approver != d.operator.ID {
		t.Fatalf("stored envelope: %+v %v", st, err)
	}
	by := value(b, "approved by", chromedp.Text(chromedp.ID("approved-by")))
	if !strings.Contains(by, d.operator.Name) || !strings.Contains(by, approval.ViaWebPasskey) {
		t.Errorf("approved by: %q", by)
	}
	if n := value(b, "next step", chromedp.Evaluate[int](`document.querySelectorAll('#decided #waiting').length`)); n != 1 {
		t.Errorf("no next step on the approval page after approval")
	}
	b.checkPage("approval after passkey")
	b.shot("passkey-approval")
}
