package bugdesk

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/workflow"
)

// TestFixerNeverReadsTheHarnessThroughAnEarlierAttempt: a fixer cannot
// read the frozen test (read_source hides it), but its candidate's code
// runs beside it in the sandbox. A candidate that reads the test file and
// prints it while the tests run must not carry the test's source into the
// next attempt's task: the earlier attempt's reason names the tests that
// failed and how many passed, never the output the candidate controls.
func TestFixerNeverReadsTheHarnessThroughAnEarlierAttempt(t *testing.T) {
	runner, err := sandbox.Default()
	if err != nil {
		if testing.Short() {
			t.Skipf("no isolated sandbox: %v", err)
		}
		t.Fatalf("no isolated sandbox (run with -short to skip): %v", err)
	}
	sc := newFixingCase(t, 300)
	ctx := context.Background()
	st := sc.open(t)
	d := sc.desk(st, runner)
	fixer, err := st.CreateActor(ctx, signoff.CLIActor(sc.ws), "fixer", signoff.RoleFixer)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.StartFix(ctx, sc.ws, sc.caseID); err != nil {
		t.Fatal(err)
	}
	// Every harness test that prices a cart fails with an error carrying
	// the next piece of the test files of its package that base does not
	// have (the frozen test); the test prints the error.
	spy := `package cart

import (
	"errors"
	"os"
	"strings"
)

var spied int

func spy() error {
	ents, _ := os.ReadDir(".")
	var all string
	for _, e := range ents {
		n := e.Name()
		if strings.HasSuffix(n, "go") && strings.Contains(n, "_te") && !strings.HasPrefix(n, "cart") {
			b, _ := os.ReadFile(n)
			all += strings.Join(strings.Fields(string(b)), " ")
		}
	}
	i := spied * 60
	spied++
	if i >= len(all) {
		return errors.New("x")
	}
	return errors.New("LEAK " + all[i:min(len(all), i+60)])
}
`
	base, err := os.ReadFile(filepath.Join(sc.repo, "cart", "cart.go"))
	if err != nil {
		t.Fatal(err)
	}
	cart := strings.Replace(string(base), "func Total(items []Item, coupon string) (int64, error) {\n", "func Total(items []Item, coupon string) (int64, error) {\n\tif err := spy(); err != nil {\n\t\treturn 0, err\n\t}\n", 1)
	if cart == string(base) {
		t.Fatal("the sample's Total changed: update the test")
	}
	open, err := d.openTasks(ctx, signoff.Case{ID: sc.caseID, WorkspaceID: sc.ws}, RoleFixer)
	if err != nil || len(open) != 1 {
		t.Fatalf("open fixer tasks: %v %v", open, err)
	}
	cand, err := d.SubmitCandidate(ctx, fixer, sc.caseID, proposal{Files: []FileArg{{Path: "cart/cart.go", Content: cart}, {Path: "cart/spy.go", Content: spy}}}, open[0].ID, signoff.EvidenceLive)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SubmitTask(ctx, fixer, signoff.Submission{TaskID: open[0].ID, InputDigest: open[0].InputDigest,
		Output: json.RawMessage(`{"candidate_id":"` + cand.ID + `"}`), Evidence: signoff.EvidenceLive, Final: true}); err != nil {
		t.Fatal(err)
	}
	if err := d.VerifyCandidate(ctx, sc.ws, sc.caseID, cand.ID); err != nil {
		t.Fatal(err)
	}
	if err := d.StartFix(ctx, sc.ws, sc.caseID); err != nil {
		t.Fatal(err)
	}
	c, l, err := d.loop(ctx, sys(sc.ws), sc.caseID)
	if err != nil {
		t.Fatal(err)
	}
	if c.State != workflow.BugFixing || l.State.Candidates[0].Verdict != "REJECTED" {
		t.Fatalf("case %s, candidate %s (%s)", c.State, l.State.Candidates[0].Verdict, l.State.Candidates[0].Reason)
	}
	open, err = d.openTasks(ctx, c, RoleFixer)
	if err != nil || len(open) != 1 {
		t.Fatalf("open fixer tasks: %v %v", open, err)
	}
	var in fixInput
	if err := json.Unmarshal(open[0].Input, &in); err != nil {
		t.Fatal(err)
	}
	if len(in.Subject.Previous) != 1 || !strings.Contains(in.Subject.Previous[0].Reason, "TestCouponAppliesOnce failed") {
		t.Fatalf("the next attempt is not told which test failed: %+v", in.Subject.Previous)
	}
	// The candidate's own diff carries its spy code (and its "LEAK "
	// marker); what it read of the frozen test appears nowhere.
	if strings.Contains(in.Subject.Previous[0].Reason, "LEAK") || strings.Contains(string(open[0].Input), "must leave 9000 cents") {
		t.Fatalf("the frozen test's source reached the fixer's next task: %s", in.Subject.Previous[0].Reason)
	}
}
