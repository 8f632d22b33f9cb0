package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/approval"
)

// TestPasskeyViaRefusedByAPI: a passkey approval is given on the web
// approval page, which also checks the authenticator's counter; the API
// refuses one whatever it carries, and the case does not move.
func TestPasskeyViaRefusedByAPI(t *testing.T) {
	t.Parallel()
	e := newChangeEnv(t)
	c := e.request(t)
	card := e.card(t, c.ID)
	st := approval.NewStatement(c.ID, card.SubjectDigest, approval.Approve, card.PolicyDigest, e.alice.ID, time.Now(), card.Policy.TTL())
	env, err := approval.Sign(st, e.aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	got := e.do(t, request{method: "POST", path: "/api/v1/cases/" + c.ID + "/approvals", token: e.aliceToken,
		body: mustJSON(t, map[string]any{"envelope": env, "via": approval.ViaWebPasskey})})
	if got.status != http.StatusUnprocessableEntity || !strings.Contains(string(got.body), "approval page") {
		t.Fatalf("passkey via through the API: %d %s", got.status, got.body)
	}
	if now := e.card(t, c.ID); now.SubjectDigest != card.SubjectDigest {
		t.Fatalf("card moved")
	}
	if got := e.approve(t, c.ID); got.status != http.StatusCreated {
		t.Fatalf("the CLI's approval after the refusal: %d %s", got.status, got.body)
	}
}
