package web_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/storetest"
)

// TestCasePageShowsAttention: an agent's attention note, its voice where
// it may not act, reads on the case page as asking, with the state it
// left unchanged.
func TestCasePageShowsAttention(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	c, _ := r.report(t, "The basket total is wrong")
	agent := r.actors[signoff.RoleTriager]
	storetest.GiveTask(t, r.store, r.owner, agent, c.ID)
	if _, err := r.store.RequestAttention(context.Background(), agent, c.ID, "the approved fix drops the <b>refund</b> path"); err != nil {
		t.Fatal(err)
	}
	b := r.visitor(t)
	b.signIn(signoff.RoleOperator)
	got := b.get("/cases/" + c.ID)
	if got.status != http.StatusOK {
		t.Fatalf("case page: %d %s", got.status, got.body)
	}
	cur, err := r.store.GetCase(context.Background(), r.owner, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"triager asks for attention (case " + cur.State + ", unchanged)", "drops the &lt;b&gt;refund&lt;/b&gt; path"} {
		if !strings.Contains(got.body, want) {
			t.Errorf("case page lacks %q", want)
		}
	}
}
