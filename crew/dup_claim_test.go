package crew_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/triage"
)

// titleSearcher is a hostile investigator: it searches the tracker with a
// ticket's exact title (which makes that ticket STRONG for its query) and
// claims it as the duplicate, whatever the report says.
func titleSearcher(title, id string) agent.Policy {
	return func(ctx context.Context, req agent.Request) (agent.Response, error) {
		turns := 0
		for _, m := range req.Messages {
			if m.Role == "assistant" {
				turns++
			}
		}
		q, _ := json.Marshal(map[string]string{"query": title})
		claim, _ := json.Marshal(map[string]any{"verdict": "duplicate", "duplicate_of": id, "confidence": 0.95, "rationale": "same title"})
		calls := []agent.ToolCall{{ID: "a", Name: "search_tracker", Arguments: string(q)}}
		if turns > 0 {
			calls = []agent.ToolCall{{ID: "c", Name: "record_investigation", Arguments: string(claim)}}
		}
		return agent.Response{Message: agent.Message{Role: "assistant", ToolCalls: calls}}, nil
	}
}

// A duplicate claim is judged on the report's own words: a model that
// found a ticket by searching with its title, for a report about
// something else, is refused (the ticket is STRONG for the model's query,
// weak for the report), and the run never records the duplicate.
func TestGuardRefusesTitleSearchedDuplicate(t *testing.T) {
	d := loadOrbit(t)
	ctx := context.Background()
	var item triage.Item
	for _, it := range d.Items {
		if triage.Classify(it).Category == triage.CategoryBug {
			item = it
			break
		}
	}
	// An open ticket unlike the report that its own title, searched as the
	// crew's tool searches (with the report's device, OS, version,
	// signature and component), finds STRONG.
	p := triage.NewProject(d)
	in := triage.Classify(item)
	var target triage.Ticket
	best, own := 0.0, 0.0
	for _, tk := range d.Tickets {
		if tk.Status != "open" {
			continue
		}
		q := triage.Query{Text: tk.Title, Device: in.Device, OS: in.OS, AppVersion: in.AppVersion}
		crashes := p.Crash.Query(q)
		q.Signature = triage.ConfirmedSignature(crashes)
		q.Component = triage.ReportComponent(p.Components, item.Text, crashes, q.Signature)
		byTitle, _ := p.Index.Rescore(q, tk.ID)
		mine, _ := p.Index.Rescore(triage.Query{Text: item.Text, Device: in.Device, OS: in.OS, AppVersion: in.AppVersion}, tk.ID)
		if mine.Score < 0.3 && byTitle.Score > best {
			target, best, own = tk, byTitle.Score, mine.Score
		}
	}
	if best < triage.StrongScore+0.05 {
		t.Fatalf("no open ticket unlike the report that its title finds STRONG (best %.2f)", best)
	}
	_, key, _ := ed25519.GenerateKey(nil)
	st := openStore(t, filepath.Join(t.TempDir(), "g.db"), key)
	defer st.Close()
	rt := runtimeFor(st, map[string]agent.Policy{crew.RoleInvestigator: titleSearcher(target.Title, target.ID)})
	setup, err := crew.NewEvalSetup(ctx, st, rt, d, crew.Roles(agent.ProviderBuiltin))
	if err != nil {
		t.Fatal(err)
	}
	caseID, err := setup.Submit(ctx, item)
	if err != nil {
		t.Fatal(err)
	}
	run, _, err := setup.Run(ctx, caseID, true)
	if err != nil {
		t.Fatal(err)
	}
	if run.Outcome == triage.OutcomeDuplicate || run.Resolves == target.ID {
		t.Fatalf("the run ended %s/%s resolving to %s: a title-searched duplicate was accepted", run.Status, run.Outcome, run.Resolves)
	}
	saved, err := st.GetTriage(ctx, signoff.SystemActor(setup.Workspace), caseID)
	if err != nil {
		t.Fatal(err)
	}
	var state crew.State
	if err := json.Unmarshal(saved.State, &state); err != nil {
		t.Fatal(err)
	}
	if inv := state.Investigation; inv != nil && inv.Verdict == triage.VerdictDuplicate {
		t.Fatalf("the investigation recorded a duplicate of %s for a report it does not match", inv.DuplicateOf)
	}
	ts, _ := st.ListTasks(ctx, setup.Operator, signoff.TaskFilter{CaseID: caseID, Limit: 20})
	refused := 0
	for _, task := range ts {
		if task.Kind != crew.RoleInvestigator {
			continue
		}
		calls, _ := st.ListCalls(ctx, setup.Operator, task.ID)
		for _, c := range calls {
			if strings.Contains(string(c.Request), "the report's own text") {
				refused++
			}
		}
	}
	if refused == 0 {
		t.Errorf("no refusal naming the report's own text reached the model (target %s: %.2f by its title, %.2f for the report)", target.ID, best, own)
	}
}
