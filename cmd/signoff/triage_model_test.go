package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/openai/openaitest"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
)

// crewModel is a scripted model for the four crew roles: a simple policy
// that decides only from what each request shows (the tools offered, the
// task input, its own earlier tool results), as a model would. Its writer
// words the ticket differently on every call.
type crewModel struct {
	wordings atomic.Int64
	// writerCalls counts create_ticket proposals.
	writerCalls atomic.Int64
}

// crewSeen is what one request shows the model.
type crewSeen struct {
	tools   []string
	input   map[string]any
	results map[string]string // latest result per tool name
	last    string            // the newest tool result
}

// crewUnspot reads data the prompt spotlighted: the text between a block's
// start and end markers, with the whitespace markers turned back into
// spaces. Text without a block is returned as is.
func crewUnspot(s string) string {
	if i := strings.Index(s, ">>>\n"); i >= 0 && strings.Contains(s[:i], "<<<") {
		s = s[i+4:]
		if j := strings.LastIndex(s, "\n<<<END"); j >= 0 {
			s = s[:j]
		}
	}
	return strings.ReplaceAll(s, "ˆ", " ")
}

func readCrewRequest(r openaitest.ChatRequest) crewSeen {
	v := crewSeen{tools: r.ToolNames(), results: map[string]string{}}
	names := map[string]string{}
	for _, m := range r.Messages {
		switch m.Role {
		case "user":
			if v.input == nil {
				json.Unmarshal([]byte(crewUnspot(m.Content)), &v.input)
			}
		case "assistant":
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Function.Name
			}
		case "tool":
			name := m.Name
			if name == "" {
				name = names[m.ToolCallID]
			}
			v.results[name], v.last = m.Content, m.Content
		}
	}
	return v
}

func (v crewSeen) has(tool string) bool { return slices.Contains(v.tools, tool) }

// str digs a string out of the task input.
func (v crewSeen) str(path ...string) string {
	var cur any = v.input
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

func (v crewSeen) text() string { return v.str("subject", "item", "text") }

func crewCalls(cs ...agent.ToolCall) openaitest.Step { return openaitest.ToolCalls(cs...) }

func crewCall(name string, args any) agent.ToolCall {
	b, _ := json.Marshal(args)
	return agent.ToolCall{Name: name, Arguments: string(b)}
}

func crewMentions(s string, words ...string) bool {
	s = strings.ToLower(s)
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func (m *crewModel) respond(r openaitest.ChatRequest) openaitest.Step {
	v := readCrewRequest(r)
	if strings.Contains(v.last, "task is complete") || strings.HasPrefix(v.last, "PAUSED") || strings.HasPrefix(v.last, "Handed off") {
		return openaitest.Text("Done.")
	}
	if i := strings.Index(v.last, "NOW call handoff(to='"); i >= 0 {
		to := v.last[i+len("NOW call handoff(to='"):]
		to = to[:strings.IndexByte(to, '\'')]
		return crewCalls(crewCall("handoff", map[string]string{"to": to, "reason": "recorded; the tool named the next step"}))
	}
	switch {
	case v.has("record_intake"):
		return m.intake(v)
	case v.has("record_investigation"):
		return m.investigate(v)
	case v.has("record_triage"):
		return m.triage(v)
	case v.has("create_ticket"):
		return m.write(v)
	}
	return openaitest.Text("I have no tool for this task.")
}

func crewRefused(v crewSeen, tool string) (string, bool) {
	res, ok := v.results[tool]
	return strings.TrimPrefix(res, "ERROR: "), ok && strings.HasPrefix(res, "ERROR: ")
}

func crewGiveUp(why string) openaitest.Step {
	return crewCalls(crewCall("give_up", map[string]string{"reason": why}))
}

func (m *crewModel) intake(v crewSeen) openaitest.Step {
	if why, bad := crewRefused(v, "record_intake"); bad {
		return crewGiveUp(why)
	}
	text := v.text()
	cat := "bug"
	switch {
	case crewMentions(text, "please add", "would be nice", "would love", "feature request", "could you add", "wish"):
		cat = "feature_request"
	case crewMentions(text, "love this", "great game", "awesome", "thank you", "best game") && !crewMentions(text, "crash", "bug", "error", "broken", "charged", "lost", "freez", "stuck"):
		cat = "praise"
	case crewMentions(text, "how do i", "how can i"):
		cat = "support_question"
	}
	md := map[string]any{"category": cat, "language": "en", "confidence": 0.8,
		"device": v.str("subject", "item", "metadata", "device"), "os": v.str("subject", "item", "metadata", "os"),
		"app_version": v.str("subject", "item", "metadata", "app_version")}
	return crewCalls(crewCall("record_intake", md))
}

type crewHit struct {
	ID    string  `json:"id"`
	Score float64 `json:"score"`
	Match string  `json:"match"`
}

func crewStrongest(results ...string) string {
	best, id := 0.0, ""
	for _, res := range results {
		var out struct {
			Results []crewHit `json:"results"`
		}
		json.Unmarshal([]byte(crewUnspot(res)), &out)
		for _, h := range out.Results {
			if h.Match == "STRONG" && h.Score > best {
				best, id = h.Score, h.ID
			}
		}
	}
	return id
}

func (m *crewModel) investigate(v crewSeen) openaitest.Step {
	_, tr := v.results["search_tracker"]
	_, ba := v.results["search_recent_reports"]
	_, cr := v.results["query_crash_log"]
	if !tr || !ba || !cr {
		q := map[string]string{"query": v.text()}
		return crewCalls(crewCall("query_crash_log", q), crewCall("search_tracker", q), crewCall("search_recent_reports", q))
	}
	var crashes struct {
		Signatures []struct {
			Signature string `json:"signature"`
			Matched   bool   `json:"matched"`
		} `json:"signatures"`
	}
	json.Unmarshal([]byte(crewUnspot(v.results["query_crash_log"])), &crashes)
	sig := ""
	if len(crashes.Signatures) > 0 && crashes.Signatures[0].Matched {
		sig = crashes.Signatures[0].Signature
	}
	inv := map[string]any{"verdict": "new", "confidence": 0.8, "signature": sig, "rationale": "no STRONG match in the searches"}
	dup := crewStrongest(v.results["search_tracker"], v.results["search_recent_reports"])
	prev, wasRefused := crewRefused(v, "record_investigation")
	switch {
	case wasRefused && strings.Contains(prev, "needs_info"):
		inv = map[string]any{"verdict": "needs_info", "confidence": 0.6, "rationale": "the report lacks device, version, steps or a confirmed crash"}
	case wasRefused:
		return crewGiveUp("record_investigation was refused: " + prev)
	case dup != "":
		inv = map[string]any{"verdict": "duplicate", "duplicate_of": dup, "confidence": 0.85, "rationale": "STRONG match " + dup}
	}
	return crewCalls(crewCall("record_investigation", inv))
}

func (m *crewModel) triage(v crewSeen) openaitest.Step {
	facts, ok := v.results["get_project_facts"]
	if !ok {
		q := map[string]string{"query": v.text()}
		return crewCalls(crewCall("query_crash_log", q), crewCall("get_project_facts", map[string]string{}))
	}
	var f struct {
		Components []struct {
			Component string `json:"component"`
		} `json:"components"`
	}
	json.Unmarshal([]byte(crewUnspot(facts)), &f)
	var comps []string
	for _, c := range f.Components {
		comps = append(comps, c.Component)
	}
	if len(comps) == 0 {
		return crewGiveUp("get_project_facts named no component")
	}
	text := strings.ToLower(v.text())
	comp := comps[0]
	for _, c := range comps {
		if strings.Contains(text, c) {
			comp = c
			break
		}
	}
	if crewMentions(text, "charge", "refund", "payment", "paid", "billing") && slices.Contains(comps, "billing") {
		comp = "billing"
	}
	if why, bad := crewRefused(v, "record_triage"); bad {
		if !strings.Contains(why, "component") {
			return crewGiveUp(why)
		}
		i := slices.Index(comps, comp)
		comp = comps[(i+1)%len(comps)]
	}
	sev := "medium"
	if crewMentions(text, "charge", "crash", "lost", "money", "paid") {
		sev = "high"
	}
	return crewCalls(crewCall("record_triage", map[string]string{"severity": sev, "component": comp,
		"rationale": "from the report and the crash log the tools returned"}))
}

func (m *crewModel) write(v crewSeen) openaitest.Step {
	for _, tool := range []string{"create_ticket", "add_comment", "request_info"} {
		if why, bad := crewRefused(v, tool); bad {
			return crewGiveUp(tool + " was refused: " + why)
		}
	}
	verdict := v.str("previous", "verdict")
	if verdict == "" {
		verdict = v.str("previous", "investigation", "verdict")
	}
	switch verdict {
	case "duplicate":
		return crewCalls(crewCall("add_comment", map[string]string{"ticket_id": v.str("previous", "resolves"),
			"body": "+1 from a reporter: " + v.str("subject", "item", "metadata", "device") + " " + v.str("subject", "item", "metadata", "app_version")}))
	case "needs_info":
		return crewCalls(crewCall("request_info", map[string]string{"message": "Could you tell us your device, app version and the steps that lead to the problem?", "language": "en"}))
	}
	m.writerCalls.Add(1)
	n := m.wordings.Add(1)
	words := strings.Fields(v.text())
	if len(words) > 9 {
		words = words[:9]
	}
	return crewCalls(crewCall("create_ticket", map[string]string{
		"title": fmt.Sprintf("%s (draft %d)", strings.Join(words, " "), n),
		"body":  fmt.Sprintf("Wording %d of the report below.\n\n%s", n, v.text()),
	}))
}

// The acceptance of issue 22 for the gate: triage eval through the openai
// provider, against a scripted model whose writer words every ticket
// differently each time, finishes every gated item after exactly one
// approval each, with no decision superseded and none pending at the end.
func TestTriageEvalOpenAIGateOnce(t *testing.T) {
	t.Parallel()
	m := &crewModel{}
	s := openaitest.NewServer(t)
	s.Respond(m.respond)
	keep := t.TempDir()
	out, code := signoffEnv(t, nil, "", "triage", "eval", "--dataset", "../../samples/orbit_run", "--provider", "openai",
		"--base-url", s.URL(), "--model", "scripted-crew", "--json", "--keep", keep)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	var rep crew.EvalReport
	if err := json.Unmarshal([]byte(out[strings.IndexByte(out, '{'):]), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	t.Logf("%d requests; score %d/%d; gated %d, finished %d; decisions %+v; %d ticket proposals",
		len(s.Requests()), rep.Score, rep.Total, rep.Gated, rep.Finished, rep.Decisions, m.writerCalls.Load())
	if rep.Gated == 0 {
		t.Fatal("no item paused at the gate: the scripted crew never reached it")
	}
	for _, it := range rep.Items {
		// Every task's evidence is the openai provider's label, the gated
		// writer's included (the server closed it, the provider wrote the
		// proposal). The answers here are the test's scripted server's,
		// not a model's: nothing of this run is shown to anyone as such.
		if it.Evidence != signoff.EvidenceLive {
			t.Errorf("%s: evidence %s, want the openai provider's label (live)", it.ItemID, it.Evidence)
		}
		if it.Approvals == 0 {
			continue
		}
		if it.Approvals != 1 || !it.Finished || !strings.Contains(it.Gate, crew.EvalApprover) {
			t.Errorf("%s: %d approvals, finished %v, gate %q, outcome %s", it.ItemID, it.Approvals, it.Finished, it.Gate, it.Outcome)
		}
	}
	if rep.Decisions.Superseded != 0 || rep.Decisions.Pending != 0 || rep.Decisions.Approved != rep.Gated {
		t.Errorf("decisions %+v for %d gated items", rep.Decisions, rep.Gated)
	}

	// The kept database says the same, read directly.
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(keep, "signoff.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	wss, err := st.LedgerWorkspaceIDs(ctx)
	if err != nil || len(wss) != 1 {
		t.Fatalf("workspaces %v %v", wss, err)
	}
	sys := signoff.SystemActor(wss[0])
	for _, it := range rep.Items {
		ds, err := st.ListDecisions(ctx, sys, it.CaseID)
		if err != nil {
			t.Fatal(err)
		}
		if len(ds) != it.Approvals {
			t.Errorf("%s: %d decisions asked, %d approved by the eval", it.ItemID, len(ds), it.Approvals)
		}
		run, err := st.GetTriage(ctx, sys, it.CaseID)
		if err != nil {
			t.Fatal(err)
		}
		if it.Approvals > 0 && run.TicketID != "" {
			var g struct {
				Gate crew.Gate `json:"gate"`
			}
			json.Unmarshal(run.State, &g)
			var p map[string]any
			json.Unmarshal(g.Gate.Proposal, &p)
			tk, err := st.GetTicket(ctx, sys, run.ProjectID, run.TicketID)
			if err != nil {
				t.Fatal(err)
			}
			if tk.Title != p["title"] || !strings.HasPrefix(tk.ApprovedBy, "human:") {
				t.Errorf("%s: filed %q approved by %s; the person approved %q", it.ItemID, tk.Title, tk.ApprovedBy, p["title"])
			}
		}
	}
}

// The endpoint flags are for the openai provider, and replace a roles
// file rather than mix with it.
func TestTriageEvalEndpointFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"builtin with a model", []string{"--model", "m"}, "are for --provider openai"},
		{"openai without endpoint or roles", []string{"--provider", "openai"}, "--base-url URL and --model NAME"},
		{"openai with a base URL only", []string{"--provider", "openai", "--base-url", "http://127.0.0.1:9/v1"}, "--base-url URL and --model NAME"},
		{"roles and endpoint together", []string{"--provider", "openai", "--roles", "x.yaml", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"}, "not both"},
		{"a bad base URL", []string{"--provider", "openai", "--base-url", "ftp://x", "--model", "m"}, "base_url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"triage", "eval", "--dataset", "../../samples/orbit_run"}, tc.args...)
			out, code := signoffEnv(t, nil, "", args...)
			if code == 0 || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, output %q, want an error naming %q", code, out, tc.want)
			}
		})
	}
}
