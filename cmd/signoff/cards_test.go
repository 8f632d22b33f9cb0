package main

import (
	"encoding/json"
	"testing"

	"github.com/riverqueue/river"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/notify"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/workflow"
)

// TestChangeApprovalCard: a change plan waiting for approval opens a card
// whose subject is the approval card's exact digest, addressed to the
// people who approve; its job run twice opens one card; a chat answer
// cannot approve it (signed approvals only), and once the signed approval
// moves the case on, the card closes.
func TestChangeApprovalCard(t *testing.T) {
	t.Parallel()
	e := newChgEnv(t, nil)
	id, state, _ := e.request(chgReason, true)
	if state != workflow.ChangeAwaitingApproval {
		t.Fatalf("request: %s", state)
	}
	res, err := e.s.River().JobList(e.ctx, river.NewJobListParams().Kinds(signoff.CardJob{}.Kind()).First(100))
	if err != nil {
		t.Fatal(err)
	}
	nd := &notify.Desk{Store: e.s, Subjects: cardSubjects(&bugdesk.Desk{Store: e.s}, e.desk)}
	var opened []signoff.Card
	for _, j := range res.Jobs {
		var a signoff.CardJob
		if err := json.Unmarshal(j.EncodedArgs, &a); err != nil || a.CaseID != id {
			continue
		}
		for range 2 {
			c, _, err := nd.OpenCard(e.ctx, j.ID, j.CreatedAt, a)
			if err != nil {
				t.Fatal(err)
			}
			if c.ID != "" {
				opened = append(opened, c)
			}
		}
	}
	cards, err := e.s.CardsOfCase(e.ctx, e.ws, id)
	if err != nil || len(cards) != 1 || len(opened) != 2 || opened[0].ID != opened[1].ID {
		t.Fatalf("cards = %+v (opened %+v), %v; want one card", cards, opened, err)
	}
	view, err := e.desk.Card(e.ctx, signoff.SystemActor(e.ws), id)
	if err != nil {
		t.Fatal(err)
	}
	c := cards[0]
	if c.Kind != card.ChangeApproval || c.SubjectDigest != view.SubjectDigest || c.Addressee.String() != "role:owner,operator" || c.Status != signoff.CardOpen {
		t.Fatalf("card = %+v, want the change approval over %s", c, view.SubjectDigest)
	}
	// Chat cannot answer it: the right person quoting the right digest is
	// still refused, and nothing changes.
	_, o, err := e.s.AnswerCard(e.ctx, sqlstore.CardAnswerInput{WorkspaceID: e.ws, CardID: c.ID, Channel: "slack:test",
		Responder: card.Responder{ActorID: e.alice.ID, Role: e.alice.Role}, Option: "approve", DigestPrefix: c.SubjectDigest[:12],
		Allowed: card.ChatApprovable(c.Kind), Evaluate: card.Evaluate})
	if err != nil || o != card.Refused || e.state(id) != workflow.ChangeAwaitingApproval {
		t.Fatalf("chat approval of a change = %s, %v (case %s)", o, err, e.state(id))
	}
	e.ok(e.aliceToken, nil, "approve", "--case", id, "--yes", "--key", e.aliceKey)
	got, err := e.s.CardByID(e.ctx, e.ws, c.ID)
	if err != nil || got.Status != signoff.CardClosed {
		t.Fatalf("card after the signed approval = %+v, %v", got, err)
	}
}
