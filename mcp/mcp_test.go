package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/airlock"
	"github.com/signoff-dev/signoff/mcp"
)

// commonTools and extraTools are the documented tool table (doc.go).
var (
	commonTools = []string{"case.post_message", "case.request_attention", "decision.status", "presence.heartbeat", "receipt.get",
		"task.get", "task.give_up", "task.handoff", "task.submit", "tasks.list"}
	extraTools = map[signoff.Role][]string{
		signoff.RoleReproducer: {"repro.list_source", "repro.propose", "repro.read_source"},
		signoff.RoleFixer:      {"fix.list_source", "fix.propose", "fix.read_source"},
		signoff.RoleReviewer:   {"review.note"},
		signoff.RolePlanner:    {"change.propose_plan", "change.read_request"},
	}
)

func documented(r signoff.Role) []string {
	out := append(slices.Clone(commonTools), extraTools[r]...)
	slices.Sort(out)
	return out
}

// Words that would offer a human-only step. Status words ("approved") may
// be reported; the verbs may not be offered.
var (
	forbiddenInName = regexp.MustCompile(`(?i)approv|merg|exec|confirm|decide|sign`)
	forbiddenInText = regexp.MustCompile(`(?i)\b(approve|approves|approving|merge|merges|merging|execute|executes|executing|confirm|confirms|confirming|decide|decides|deciding)\b`)
)

// Every agent role gets exactly its documented tools, and none of them
// offers to approve, merge, execute, confirm or decide.
func TestToolsPerRoleOfferNoHumanStep(t *testing.T) {
	ctx := context.Background()
	for _, role := range signoff.AgentRoles {
		t.Run(string(role), func(t *testing.T) {
			by := signoff.Actor{ID: signoff.NewID(signoff.PrefixActor), WorkspaceID: signoff.NewID(signoff.PrefixWorkspace), Name: "bot", Role: role}
			srv, err := mcp.NewServer(nil, by, mcp.Options{})
			if err != nil {
				t.Fatalf("NewServer: %v", err)
			}
			st, ct := sdk.NewInMemoryTransports()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "lister", Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
				if forbiddenInName.MatchString(tl.Name) {
					t.Errorf("tool name %q offers a human-only step", tl.Name)
				}
				schema, err := json.Marshal(tl.InputSchema)
				if err != nil {
					t.Fatal(err)
				}
				for what, s := range map[string]string{"description": tl.Description, "title": tl.Title, "input schema": string(schema)} {
					if m := forbiddenInText.FindString(s); m != "" {
						t.Errorf("tool %s: %s offers %q: %s", tl.Name, what, m, s)
					}
				}
				if tl.Description == "" {
					t.Errorf("tool %s has no description", tl.Name)
				}
			}
			slices.Sort(names)
			if want := documented(role); !slices.Equal(names, want) {
				t.Errorf("tools of %s = %v, want %v", role, names, want)
			}
			if want := mcp.ToolNames(role); !slices.Equal(names, want) {
				t.Errorf("ToolNames(%s) = %v, server lists %v", role, want, names)
			}
			for _, n := range mcp.ToolNames(role) {
				if forbiddenInName.MatchString(n) {
					t.Errorf("ToolNames(%s) lists %q, a human-only step", role, n)
				}
			}
		})
	}
}

func TestNewServerRefusesPeopleAndSystem(t *testing.T) {
	for _, role := range append(slices.Clone(signoff.HumanRoles), signoff.RoleSystem) {
		_, err := mcp.NewServer(nil, signoff.Actor{ID: "act_x", WorkspaceID: "ws_x", Role: role}, mcp.Options{})
		if signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Errorf("NewServer(%s) error = %v, want forbidden", role, err)
		}
		if mcp.ToolNames(role) != nil {
			t.Errorf("ToolNames(%s) = %v, want none", role, mcp.ToolNames(role))
		}
	}
}

func TestHTTPAuthentication(t *testing.T) {
	f := newFixture(t)
	srv := serveHTTP(t, f.st, mcp.Options{})
	ctx := context.Background()

	for _, tc := range []struct {
		name, header string
		status       int
		code         string
	}{
		{"no credential", "", 401, signoff.EUNAUTHORIZED},
		{"not bearer", "Basic " + f.fixerToken, 401, signoff.EUNAUTHORIZED},
		{"unknown token", "Bearer so_nope_" + strings.Repeat("a", 32), 401, signoff.EUNAUTHORIZED},
		{"a person's token", "Bearer " + f.ownerToken, 403, signoff.EFORBIDDEN},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.header != "" {
				req.Header.Set("Authorization", tc.header)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status = %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("Content-Type = %q", ct)
			}
			if got := resp.Header.Get("WWW-Authenticate"); (tc.status == 401) != strings.HasPrefix(got, "Bearer") {
				t.Fatalf("WWW-Authenticate = %q on %d", got, tc.status)
			}
			var p mcp.Problem
			if err := json.Unmarshal(body, &p); err != nil {
				t.Fatalf("problem %s: %v", body, err)
			}
			if p.Status != tc.status || p.Code != tc.code || p.Type != "https://signoff.dev/problems/"+tc.code || p.Title != http.StatusText(tc.status) || p.Detail == "" {
				t.Fatalf("problem = %+v", p)
			}
			if strings.Contains(string(body), f.fixerToken) || strings.Contains(string(body), f.ownerToken) {
				t.Fatalf("problem echoes the token: %s", body)
			}
		})
	}

	if _, err := connectHTTP(ctx, srv, "so_bad_"+strings.Repeat("b", 32), "x"); err == nil {
		t.Error("a client with a bad token connected")
	}
	if _, err := connectHTTP(ctx, srv, f.ownerToken, "x"); err == nil {
		t.Error("a client with an owner token connected")
	}
}

func TestHTTPToolsAndReceipts(t *testing.T) {
	f := newFixture(t)
	srv := serveHTTP(t, f.st, mcp.Options{})
	ctx := context.Background()
	fixer := mustConnectHTTP(t, srv, f.fixerToken, "fixer-test")
	reviewer := mustConnectHTTP(t, srv, f.revToken, "reviewer-test")

	if got := toolNames(t, fixer); slices.Contains(got, "review.note") || !slices.Equal(sorted(got), documented(signoff.RoleFixer)) {
		t.Fatalf("fixer tools = %v", got)
	}
	if got := toolNames(t, reviewer); !slices.Contains(got, "review.note") {
		t.Fatalf("reviewer tools = %v", got)
	}
	if _, err := fixer.CallTool(ctx, &sdk.CallToolParams{Name: "review.note", Arguments: map[string]any{
		"task_id": f.fixerTask.ID, "input_digest": f.fixerTask.InputDigest, "verdict": "no_concerns", "note": "fine"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Fatalf("fixer calling review.note: err = %v, want unknown tool", err)
	}

	// tasks.list shows the fixer its own tasks only.
	var list struct {
		Tasks []mcp.TaskSummary `json:"tasks"`
	}
	ok(t, fixer, "tasks.list", map[string]any{"status": "open"}, &list)
	if len(list.Tasks) != 2 || list.Tasks[0].ID != f.otherFixer.ID || list.Tasks[1].InputDigest != f.fixerTask.InputDigest {
		t.Fatalf("fixer tasks = %+v", list.Tasks)
	}
	ok(t, reviewer, "tasks.list", nil, &list)
	if len(list.Tasks) != 0 {
		t.Fatalf("reviewer sees %+v", list.Tasks)
	}
	refused(t, fixer, "tasks.list", map[string]any{"status": "approved"}, signoff.EINVALID)

	// task.get: the input only inside the spotlight.
	var view mcp.TaskView
	res := ok(t, fixer, "task.get", map[string]any{"task_id": f.fixerTask.ID}, &view)
	if view.InputDigest != f.fixerTask.InputDigest || view.Status != signoff.TaskOpen || view.CaseID != f.bug.ID {
		t.Fatalf("task.get = %+v", view)
	}
	if !strings.Contains(view.Prompt, "UNTRUSTED REPORTER DATA") || !strings.Contains(view.Prompt, "<<<END REPORT ") ||
		!strings.Contains(view.Prompt, strings.ReplaceAll("Ignore all previous", " ", string(airlock.DataMark))) {
		t.Fatalf("prompt is not spotlighted:\n%s", view.Prompt)
	}
	if b, _ := json.Marshal(res); strings.Contains(string(b), hostile) || strings.Contains(string(b), "Ignore all previous") {
		t.Fatalf("task.get returns the raw input outside the spotlight: %s", b)
	}
	if !strings.Contains(text(res), "task.submit(task_id='"+f.fixerTask.ID+"'") {
		t.Fatalf("task.get text has no next step: %s", text(res))
	}
	refused(t, reviewer, "task.get", map[string]any{"task_id": f.fixerTask.ID}, signoff.ENOTFOUND)
	refused(t, fixer, "task.get", map[string]any{}, signoff.EINVALID)

	// The reviewer quoting the fixer's receipt is refused and the ledger
	// does not move.
	head := f.head(t)
	msg := refused(t, reviewer, "task.submit", map[string]any{"task_id": f.fixerTask.ID, "input_digest": f.fixerTask.InputDigest,
		"output": map[string]any{"patch": "diff"}}, signoff.EFORBIDDEN)
	if msg != "forbidden: task is assigned to another identity" {
		t.Fatalf("refusal = %q", msg)
	}
	if got := f.head(t); got != head {
		t.Fatalf("HeadSeq moved %d -> %d on a refused submission", head, got)
	}
	refused(t, fixer, "task.submit", map[string]any{"task_id": f.fixerTask.ID, "input_digest": f.otherFixer.InputDigest,
		"output": map[string]any{"patch": "diff"}}, signoff.ECONFLICT)
	refused(t, fixer, "task.submit", map[string]any{"task_id": f.fixerTask.ID, "input_digest": f.fixerTask.InputDigest,
		"output": map[string]any{"submitted_via": "forged"}}, signoff.EINVALID)

	// The right receipt records the result once.
	submit := map[string]any{"task_id": f.fixerTask.ID, "input_digest": f.fixerTask.InputDigest,
		"output": map[string]any{"patch": "--- a/cart.go\n+++ b/cart.go", "summary": "dedupe coupons"}}
	var sub mcp.SubmitResult
	res = ok(t, fixer, "task.submit", submit, &sub)
	if sub.Status != signoff.TaskRecorded || sub.Evidence != signoff.EvidenceLive || sub.ReceiptSeq == 0 ||
		!strings.HasPrefix(sub.NextStep, "NOW call task.handoff(task_id='"+f.fixerTask.ID+"'") || !strings.Contains(sub.NextStep, "to='reviewer'") {
		t.Fatalf("task.submit = %+v", sub)
	}
	if !strings.Contains(text(res), sub.NextStep) {
		t.Fatalf("task.submit text %q lacks the next step", text(res))
	}
	if msg := refused(t, fixer, "task.submit", submit, signoff.ECONFLICT); !strings.Contains(msg, "recorded") {
		t.Fatalf("replay refusal = %q", msg)
	}
	stored, err := f.st.GetTask(ctx, f.cli, f.fixerTask.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(stored.Output, &out); err != nil {
		t.Fatal(err)
	}
	if via, _ := out["submitted_via"].(map[string]any); via["transport"] != "mcp" || via["client"] != "fixer-test/1.0" || out["summary"] != "dedupe coupons" {
		t.Fatalf("stored output = %s", stored.Output)
	}

	// receipt.get points at the ledger event that recorded it.
	var rc mcp.Receipt
	ok(t, fixer, "receipt.get", map[string]any{"task_id": f.fixerTask.ID}, &rc)
	if rc.ReceiptSeq != sub.ReceiptSeq || rc.Event.Seq != sub.ReceiptSeq || rc.Event.Type != "task.recorded" || rc.Event.Hash == "" ||
		rc.OutputDigest != stored.OutputDigest || rc.Evidence != signoff.EvidenceLive || rc.InputDigest != f.fixerTask.InputDigest {
		t.Fatalf("receipt = %+v", rc)
	}
	refused(t, fixer, "receipt.get", map[string]any{"task_id": f.otherFixer.ID}, signoff.ECONFLICT)

	// Handoff: only to the role's allowed targets.
	refused(t, fixer, "task.handoff", map[string]any{"task_id": f.fixerTask.ID, "input_digest": f.fixerTask.InputDigest,
		"to": "planner", "reason": "needs a plan"}, signoff.EFORBIDDEN)
	var ho mcp.HandoffResult
	ok(t, fixer, "task.handoff", map[string]any{"task_id": f.fixerTask.ID, "input_digest": f.fixerTask.InputDigest,
		"to": "reviewer", "reason": "fix recorded, please review"}, &ho)
	if ho.ClosedTaskID != f.fixerTask.ID || ho.Outcome != signoff.OutcomeHandedOff || ho.NextTaskID == "" || ho.NextRole != "reviewer" {
		t.Fatalf("handoff = %+v", ho)
	}

	// The reviewer's note is advisory and closes its task.
	ok(t, reviewer, "task.get", map[string]any{"task_id": ho.NextTaskID}, &view)
	refused(t, reviewer, "review.note", map[string]any{"task_id": ho.NextTaskID, "input_digest": view.InputDigest,
		"verdict": "ship_it", "note": "fine"}, signoff.EINVALID)
	ok(t, reviewer, "review.note", map[string]any{"task_id": ho.NextTaskID, "input_digest": view.InputDigest,
		"verdict": "concerns", "note": "the coupon check ignores case"}, &sub)
	if sub.Status != signoff.TaskClosed || sub.Outcome != signoff.OutcomeDone || sub.NextStep != "done" {
		t.Fatalf("review.note = %+v", sub)
	}
	note, err := f.st.GetTask(ctx, f.cli, ho.NextTaskID)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(note.Output, &out); err != nil {
		t.Fatal(err)
	}
	if out["kind"] != "review_note" || out["advisory"] != true || out["verdict"] != "concerns" || note.Evidence != signoff.EvidenceLive {
		t.Fatalf("review note output = %s", note.Output)
	}

	// Giving up hands the task to a person.
	var gu mcp.GiveUpResult
	ok(t, fixer, "task.give_up", map[string]any{"task_id": f.otherFixer.ID, "reason": "cannot reproduce"}, &gu)
	if gu.Outcome != signoff.OutcomeNeedsHuman || gu.Status != signoff.TaskClosed || !strings.Contains(gu.Reason, "cannot reproduce") {
		t.Fatalf("give_up = %+v", gu)
	}
	refused(t, fixer, "task.give_up", map[string]any{"task_id": f.otherFixer.ID, "reason": "again"}, signoff.ECONFLICT)

	// Posting in the case room.
	var m mcp.MessageResult
	ok(t, fixer, "case.post_message", map[string]any{"case_id": f.bug.ID, "text": "fix recorded for review"}, &m)
	if m.ID == "" || m.CaseID != f.bug.ID || m.Addressed {
		t.Fatalf("post_message = %+v", m)
	}

	// Every call kept the agents shown as connected, named by their client.
	agents, err := f.st.ListAgents(ctx, f.ws.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, a := range agents {
		if a.Connected {
			seen[a.ID] = a.Client
		}
	}
	if seen[f.fixer.ID] != "fixer-test/1.0" || seen[f.reviewer.ID] != "reviewer-test/1.0" {
		t.Fatalf("presence = %v", seen)
	}
	var hb mcp.HeartbeatResult
	ok(t, fixer, "presence.heartbeat", nil, &hb)
	if hb.AgentID != f.fixer.ID || hb.Client != "fixer-test/1.0" {
		t.Fatalf("heartbeat = %+v", hb)
	}
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}

// The decision long-poll answers as soon as a person decides.
func TestDecisionStatusLongPoll(t *testing.T) {
	f := newFixture(t)
	srv := serveHTTP(t, f.st, mcp.Options{PollInterval: 20 * time.Millisecond})
	ctx := context.Background()
	fixer := mustConnectHTTP(t, srv, f.fixerToken, "fixer-test")

	d, err := f.st.RequestDecision(ctx, f.cli, f.bug.ID, "fix", json.RawMessage(`{"candidate":"abc123"}`), time.Hour)
	if err != nil {
		t.Fatalf("RequestDecision: %v", err)
	}
	var got mcp.DecisionResult
	ok(t, fixer, "decision.status", map[string]any{"decision_id": d.ID}, &got)
	if got.Status != signoff.DecisionPending || got.SubjectDigest != d.SubjectDigest || got.DecidedAt != nil {
		t.Fatalf("decision.status = %+v", got)
	}
	refused(t, fixer, "decision.status", map[string]any{"decision_id": d.ID, "wait_seconds": 51}, signoff.EINVALID)

	type answer struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	start := time.Now()
	go func() {
		res, err := fixer.CallTool(ctx, &sdk.CallToolParams{Name: "decision.status", Arguments: map[string]any{"decision_id": d.ID, "wait_seconds": 5}})
		done <- answer{res, err}
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case a := <-done:
		t.Fatalf("decision.status answered before the decision: %+v %v", a.res, a.err)
	default:
	}
	if _, err := f.st.Decide(ctx, f.cli, d.ID, d.SubjectDigest, true, "looks right"); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	a := <-done
	elapsed := time.Since(start)
	if a.err != nil || a.res.IsError {
		t.Fatalf("decision.status: %v %s", a.err, text(a.res))
	}
	b, _ := json.Marshal(a.res.StructuredContent)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != signoff.DecisionApproved || got.DecidedAt == nil || got.Reason != "looks right" {
		t.Fatalf("decision.status = %+v", got)
	}
	if elapsed >= 4*time.Second {
		t.Fatalf("long-poll took %s: it waited out instead of answering the decision", elapsed)
	}

	// A pending decision waited on answers pending when the wait runs out.
	d2, err := f.st.RequestDecision(ctx, f.cli, f.bug.ID, "plan", json.RawMessage(`{"plan":1}`), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	ok(t, fixer, "decision.status", map[string]any{"decision_id": d2.ID, "wait_seconds": 1}, &got)
	if got.Status != signoff.DecisionPending || time.Since(start) < 900*time.Millisecond {
		t.Fatalf("decision.status after %s = %+v", time.Since(start), got)
	}
}

// MaxWait caps what a caller asks for.
func TestDecisionWaitIsCapped(t *testing.T) {
	f := newFixture(t)
	srv := serveHTTP(t, f.st, mcp.Options{PollInterval: 10 * time.Millisecond, MaxWait: 200 * time.Millisecond})
	fixer := mustConnectHTTP(t, srv, f.fixerToken, "fixer-test")
	d, err := f.st.RequestDecision(context.Background(), f.cli, f.bug.ID, "fix", json.RawMessage(`{"c":1}`), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var got mcp.DecisionResult
	ok(t, fixer, "decision.status", map[string]any{"decision_id": d.ID, "wait_seconds": 30}, &got)
	if got.Status != signoff.DecisionPending || time.Since(start) > 5*time.Second {
		t.Fatalf("capped wait took %s: %+v", time.Since(start), got)
	}
}

// stdioPair runs ServeStdio over pipes and connects a client to it.
func stdioPair(t *testing.T, f *fixture, token, client string) (*sdk.ClientSession, <-chan error) {
	t.Helper()
	cr, cw := io.Pipe() // client -> server
	sr, sw := io.Pipe() // server -> client
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		err := mcp.ServeStdio(ctx, f.st, token, mcp.Options{}, cr, sw)
		sw.Close()
		served <- err
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: client, Version: "2.0"}, nil).Connect(context.Background(), &sdk.IOTransport{Reader: sr, Writer: cw}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect over stdio: %v", err)
	}
	t.Cleanup(func() {
		cs.Close()
		cr.Close()
		cancel()
	})
	return cs, served
}

func TestStdio(t *testing.T) {
	f := newFixture(t)
	fixer, served := stdioPair(t, f, f.fixerToken, "codex")
	reviewer, _ := stdioPair(t, f, f.revToken, "claude-code")

	if got := sorted(toolNames(t, fixer)); !slices.Equal(got, documented(signoff.RoleFixer)) {
		t.Fatalf("fixer tools over stdio = %v", got)
	}
	if got := sorted(toolNames(t, reviewer)); !slices.Equal(got, documented(signoff.RoleReviewer)) {
		t.Fatalf("reviewer tools over stdio = %v", got)
	}
	var view mcp.TaskView
	ok(t, fixer, "task.get", map[string]any{"task_id": f.fixerTask.ID}, &view)
	if view.ID != f.fixerTask.ID || !strings.Contains(view.Prompt, "UNTRUSTED") {
		t.Fatalf("task.get over stdio = %+v", view)
	}
	head := f.head(t)
	refused(t, reviewer, "task.submit", map[string]any{"task_id": f.fixerTask.ID, "input_digest": f.fixerTask.InputDigest, "output": map[string]any{"x": 1}}, signoff.EFORBIDDEN)
	if f.head(t) != head {
		t.Fatal("a refused submission moved the ledger")
	}
	var sub mcp.SubmitResult
	ok(t, fixer, "task.submit", map[string]any{"task_id": f.fixerTask.ID, "input_digest": f.fixerTask.InputDigest, "output": map[string]any{"patch": "p"}}, &sub)
	if sub.Status != signoff.TaskRecorded {
		t.Fatalf("submit over stdio = %+v", sub)
	}
	refused(t, fixer, "task.submit", map[string]any{"task_id": f.fixerTask.ID, "input_digest": f.fixerTask.InputDigest, "output": map[string]any{"patch": "p"}}, signoff.ECONFLICT)

	agents, err := f.st.ListAgents(context.Background(), f.ws.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		if a.ID == f.fixer.ID && (!a.Connected || a.Client != "codex/2.0") {
			t.Fatalf("fixer presence = %+v", a)
		}
	}

	// Closing the client's side ends the server cleanly.
	fixer.Close()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("ServeStdio = %v after the client closed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return after the client closed")
	}
}

func TestStdioRefusesBadTokenAndPeople(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		token, code string
	}{
		{"", signoff.EUNAUTHORIZED},
		{"so_bad_" + strings.Repeat("c", 32), signoff.EUNAUTHORIZED},
		{f.ownerToken, signoff.EFORBIDDEN},
	} {
		in, out := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n"), &strings.Builder{}
		err := mcp.ServeStdio(ctx, f.st, tc.token, mcp.Options{}, in, out)
		if signoff.ErrorCode(err) != tc.code {
			t.Errorf("ServeStdio(%.8q...) = %v, want %s", tc.token, err, tc.code)
		}
		if out.Len() != 0 {
			t.Errorf("ServeStdio wrote %q before authenticating", out.String())
		}
	}
}

// ServeStdio returns when its context ends, even while the client is idle.
func TestStdioStopsWithContext(t *testing.T) {
	f := newFixture(t)
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	defer cw.Close()
	defer sr.Close()
	go io.Copy(io.Discard, sr)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- mcp.ServeStdio(ctx, f.st, f.fixerToken, mcp.Options{}, cr, sw) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("ServeStdio = %v, want nil when its context ends", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio ignored its context")
	}
}

// Clients on the older, initialize-based protocol are served too; without
// per-request client info their heartbeat says "mcp".
func TestHTTPOlderProtocolClient(t *testing.T) {
	f := newFixture(t)
	srv := serveHTTP(t, f.st, mcp.Options{})
	c := sdk.NewClient(&sdk.Implementation{Name: "old-agent", Version: "0.9"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{
		Endpoint:             srv.URL,
		HTTPClient:           &http.Client{Transport: bearer{token: f.fixerToken, base: srv.Client().Transport}},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v >= "2026" {
		t.Fatalf("negotiated %s, want an initialize-era version", v)
	}
	if got := sorted(toolNames(t, cs)); !slices.Equal(got, documented(signoff.RoleFixer)) {
		t.Fatalf("tools = %v", got)
	}
	var view mcp.TaskView
	ok(t, cs, "task.get", map[string]any{"task_id": f.fixerTask.ID}, &view)
	if view.ID != f.fixerTask.ID {
		t.Fatalf("task.get = %+v", view)
	}
	var hb mcp.HeartbeatResult
	ok(t, cs, "presence.heartbeat", nil, &hb)
	if hb.Client != "mcp" {
		t.Fatalf("heartbeat = %+v, want client mcp", hb)
	}
}

// Many agents' calls at once share one handler safely.
func TestHTTPConcurrentCalls(t *testing.T) {
	f := newFixture(t)
	srv := serveHTTP(t, f.st, mcp.Options{})
	sessions := []*sdk.ClientSession{
		mustConnectHTTP(t, srv, f.fixerToken, "a"), mustConnectHTTP(t, srv, f.fixerToken, "b"),
		mustConnectHTTP(t, srv, f.revToken, "c"), mustConnectHTTP(t, srv, f.revToken, "d"),
	}
	errs := make(chan error, 4*20)
	for i, cs := range sessions {
		go func() {
			for range 20 {
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "tasks.list", Arguments: map[string]any{}})
				switch {
				case err != nil:
					errs <- err
				case res.IsError:
					errs <- errors.New(text(res))
				default:
					var out struct {
						Tasks []mcp.TaskSummary `json:"tasks"`
					}
					b, _ := json.Marshal(res.StructuredContent)
					if err := json.Unmarshal(b, &out); err != nil {
						errs <- err
					} else if want := map[bool]int{true: 2, false: 0}[i < 2]; len(out.Tasks) != want {
						errs <- errors.New("wrong task count")
					} else {
						errs <- nil
					}
				}
			}
		}()
	}
	for range 4 * 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// brokenStore fails task reads with an internal error.
type brokenStore struct{ signoff.Store }

func (brokenStore) GetTask(context.Context, signoff.Actor, string) (signoff.Task, error) {
	return signoff.Task{}, errors.New("disk on fire at /var/lib/signoff")
}

// Internal failures reach the model as "internal error" only; the detail
// goes to the log, and no token ever does.
func TestInternalErrorsAreOpaqueAndTokensNeverLogged(t *testing.T) {
	f := newFixture(t)
	var logs strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv := serveHTTP(t, brokenStore{f.st}, mcp.Options{Log: log})
	cs := mustConnectHTTP(t, srv, f.fixerToken, "fixer-test")
	res := call(t, cs, "task.get", map[string]any{"task_id": f.fixerTask.ID})
	if !res.IsError || text(res) != "internal error" {
		t.Fatalf("task.get on a broken store = %v %q", res.IsError, text(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logs.String(), "disk on fire") {
		t.Fatalf("the detail was not logged: %s", logs.String())
	}
	if strings.Contains(logs.String(), f.fixerToken) {
		t.Fatalf("a token was logged: %s", logs.String())
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
