package web_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/storetest"
)

// TestApprovalAttackPlanHidden: the approval page is where a person now
// signs (with a passkey) the exact digest it shows. A planner agent's
// flag value holding a right-to-left override and zero-width characters
// was marked on the case page (TestChangeAttackPlanHidden) but reached
// the approval page's subject raw: the person read reordered text and
// signed the plan's real bytes. Every hidden character must be marked.
func TestApprovalAttackPlanHidden(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	changeActionsSetup(t, r)
	ctx := context.Background()
	if _, err := r.store.CreateFlag(ctx, r.owner, r.proj.ID, "prod", "banner", signoff.FlagString, json.RawMessage(`"hello"`)); err != nil {
		t.Fatal(err)
	}
	c, _, err := r.change.Request(ctx, r.owner, changedesk.RequestInput{ProjectID: r.proj.ID,
		Reason: "Change the banner in prod: the sale ended yesterday and it still says so"})
	if err != nil {
		t.Fatal(err)
	}
	planner := r.actors[signoff.RolePlanner]
	storetest.GiveTask(t, r.store, r.owner, planner, c.ID)
	hc, err := r.change.DefaultHealth(ctx, r.ws.ID, r.proj.ID)
	if err != nil {
		t.Fatal(err)
	}
	value, _ := json.Marshal(map[string]string{"value": "sale over\u202e\u200b\u2066"})
	if _, _, err := r.change.Propose(ctx, planner, c.ID, changedesk.Proposal{Target: "flag:prod/banner", Params: value, HealthCheck: hc, Via: "model"}); err != nil {
		t.Fatal(err)
	}
	op := r.visitor(t)
	op.signIn(signoff.RoleOperator)
	page := op.get("/cases/" + c.ID + "/approval")
	subject := elementByID(page.body, "subject")
	if subject == "" {
		t.Fatalf("the approval page has no subject: %s", mainElement(page.body))
	}
	if !strings.Contains(page.body, `id="passkey-approve"`) {
		t.Fatalf("the approval page offers no passkey approval (the page this attack is about)")
	}
	for _, h := range decisionAttackHidden {
		if strings.Contains(subject, h) {
			t.Errorf("the approval page's subject holds %q unmarked", h)
		}
	}
	if !strings.Contains(subject, `<mark class="hidden-char">`) {
		t.Errorf("the approval page's subject marks nothing: %s", subject)
	}
}
