package crew

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/triage"
	"github.com/signoff-dev/signoff/workflow"
)

// Roles is the crew's role configuration on the given provider: four
// runtime roles run by the triager identity, each with its tools and its
// place in the graph (intake → investigator → triage → writer; duplicates
// and vague reports skip triage).
func Roles(provider string) string {
	return fmt.Sprintf(`roles:
  intake:
    actor: triager
    provider: %[1]s
    tools: [record_intake]
    handoffs: [investigator]
    max_turns: 4
  investigator:
    actor: triager
    provider: %[1]s
    tools: [search_tracker, search_recent_reports, query_crash_log, record_investigation]
    handoffs: [triage, writer]
    max_turns: 8
  triage:
    actor: triager
    provider: %[1]s
    tools: [query_crash_log, get_project_facts, record_triage]
    handoffs: [writer]
    max_turns: 6
  writer:
    actor: triager
    provider: %[1]s
    tools: [create_ticket, add_comment, request_info]
    handoffs: []
    max_turns: 4
`, provider)
}

// roleInstructions are the crew's prompts for a model: requests only; the
// tools' guards and the gate hold whatever the model does.
var roleInstructions = map[string]string{
	RoleIntake: `You are the intake agent. Read the feedback item in the task input.
1. Decide its category: bug, feature_request, praise, spam or support_question.
2. Extract device, OS, app version and reproduction steps if given, and the language (ISO 639-1).
3. Call record_intake once. Then do what its result says.`,
	RoleInvestigator: `You are the investigator. Decide whether the bug is new, a duplicate, or needs more information.
1. Call query_crash_log, search_tracker and search_recent_reports with the symptom.
2. A duplicate must be a STRONG result from those searches (cite its id exactly).
3. If nothing is STRONG, the verdict is new; if the report has no device, version, steps or confirmed crash, it is needs_info.
4. Call record_investigation once. Then do what its result says.`,
	RoleTriage: `You are the triage agent for a confirmed new bug.
1. Call query_crash_log and get_project_facts.
2. Severity: critical for data loss or money taken at scale; high for wrong charges or crashes in core flows or many users; medium for broken features with workarounds; low for minor issues.
3. Component: one of the components from get_project_facts.
4. Call record_triage with a rationale citing events, users, share of users on the version and days to code freeze. Then do what its result says.`,
	RoleWriter: `You are the writer. Look at the previous role's output in the task input.
- verdict new: call create_ticket with a clear title and a body with the evidence. If it answers PAUSED, stop: a person decides.
- verdict duplicate: call add_comment on the ticket in "resolves" with the reporter's device, OS and version.
- verdict needs_info: call request_info asking for device, app version and steps, in the reporter's language.`,
}

// ModelRoles is the crew's role configuration on an OpenAI-compatible
// endpoint: the four roles of Roles, each with its prompt, on model at
// baseURL, the API key read from the variable keyEnv when it is set.
func ModelRoles(baseURL, model, keyEnv string) (string, error) {
	var doc struct {
		Roles map[string]map[string]any `yaml:"roles"`
	}
	if err := yaml.Unmarshal([]byte(Roles(agent.ProviderOpenAI)), &doc); err != nil {
		return "", err
	}
	for name, rc := range doc.Roles {
		rc["base_url"], rc["model"], rc["timeout"], rc["instructions"] = baseURL, model, "120s", roleInstructions[name]
		if keyEnv != "" {
			rc["api_key_env"] = keyEnv
		}
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return "", err
	}
	if _, err := agent.ParseConfig(b, nil); err != nil {
		return "", err
	}
	return string(b), nil
}

// Runner starts triage runs and drives their tasks through the runtime.
type Runner struct {
	Store   signoff.Store
	Runtime *agent.Runtime
	Tools   *agent.Registry
	// MaxRuns bounds the task runs one Drive makes (default 16), so a graph
	// that loops cannot spin forever.
	MaxRuns int
}

// subject is what every task of a triage run carries: the item as the
// airlock let it through.
type subject struct {
	Item triage.Item `json:"item"`
}

// ItemFromReport turns a case's first report into a triage item: the
// dossier text (never the original) and every structured field the form
// gave, as the airlock let them through: device, OS and app version as
// metadata, the steps field as the item's steps (one per line or numbered
// marker), and the signals the report's fields raised, apart and together.
// A form field triage has no place for is added to the text under its
// name, so nothing the reporter gave is lost.
func ItemFromReport(c signoff.Case, rep signoff.Report) triage.Item {
	it := triage.Item{ID: c.ID, Source: "intake", ReceivedAt: rep.CreatedAt.UTC().Format(time.RFC3339), Text: rep.Dossier.Text,
		Metadata: triage.Metadata{Device: rep.Metadata["device"], OS: rep.Metadata["os"], AppVersion: rep.Metadata["app_version"]},
		Steps:    triage.SplitSteps(rep.Metadata["steps"]), Signals: slices.Clone(rep.Dossier.Signals)}
	for _, k := range slices.Sorted(maps.Keys(rep.Metadata)) {
		switch k {
		case "device", "os", "app_version", "steps":
			continue
		}
		if v := strings.TrimSpace(rep.Metadata[k]); v != "" {
			it.Text += "\n\n" + k + ": " + v
		}
	}
	return it
}

// Start opens the triage of a bug case: the case moves to triaging, its run
// records the item (text through the airlock), and the intake task goes to
// the workspace's triager.
func (r *Runner) Start(ctx context.Context, ws, caseID string, it triage.Item) (signoff.Task, error) {
	sys := signoff.SystemActor(ws)
	if err := r.needTriager(ctx, ws); err != nil {
		return signoff.Task{}, err
	}
	// Everything free-text the item carries passes the airlock: the
	// author of a support e-mail is as personal as the text.
	it = throughAirlock(it)
	st, err := json.Marshal(State{Item: it})
	if err != nil {
		return signoff.Task{}, err
	}
	c, err := r.Store.GetCase(ctx, sys, caseID)
	if err != nil {
		return signoff.Task{}, err
	}
	if c.State == workflow.BugReceived {
		if _, _, err := r.Store.TransitionCase(ctx, sys, caseID, signoff.TransitionInput{Command: "start_triage"}); err != nil {
			return signoff.Task{}, fmt.Errorf("start triage of %s: %w", caseID, err)
		}
	}
	if _, err := r.Store.StartTriage(ctx, sys, caseID, it.ID, st); err != nil {
		return signoff.Task{}, err
	}
	input, err := json.Marshal(map[string]any{"case_id": caseID, "subject": subject{Item: it}})
	if err != nil {
		return signoff.Task{}, err
	}
	return r.Store.CreateTask(ctx, sys, signoff.TaskInput{CaseID: caseID, Kind: RoleIntake, Role: signoff.RoleTriager, Input: input})
}

// Drive runs the case's open tasks, following handoffs, until none is left,
// one parks at the human gate, or one ends needing a person. It returns the
// run as it stands.
func (r *Runner) Drive(ctx context.Context, ws, caseID string) (signoff.TriageRun, error) {
	sys := signoff.SystemActor(ws)
	max := r.MaxRuns
	if max == 0 {
		max = 16
	}
	cfg, err := agent.LoadConfig(ctx, r.Store, ws, r.Tools)
	if err != nil {
		return signoff.TriageRun{}, err
	}
	for range max {
		if waiting, err := r.waitingForPerson(ctx, sys, caseID); err != nil || waiting {
			if err != nil {
				return signoff.TriageRun{}, err
			}
			break
		}
		var next *signoff.Task
		for _, status := range []string{signoff.TaskRecorded, signoff.TaskOpen} {
			ts, err := r.Store.ListTasks(ctx, sys, signoff.TaskFilter{CaseID: caseID, Status: status, Limit: 10})
			if err != nil {
				return signoff.TriageRun{}, err
			}
			// The crew runs its own roles' tasks only: a ticketed bug's
			// reproducer and fixer tasks are the bug desk's, and a triage
			// run again (the gate decided, an answer came) must not run
			// them a second time beside it.
			ts = slices.DeleteFunc(ts, func(t signoff.Task) bool {
				return !slices.Contains([]string{RoleIntake, RoleInvestigator, RoleTriage, RoleWriter}, t.Kind)
			})
			if len(ts) > 0 {
				slices.SortFunc(ts, func(a, b signoff.Task) int { return a.CreatedAt.Compare(b.CreatedAt) })
				next = &ts[0]
				break
			}
		}
		if next == nil {
			break
		}
		a, err := r.Store.GetActor(ctx, ws, next.AssigneeID)
		if err != nil {
			return signoff.TriageRun{}, err
		}
		if settled, err := r.settleGate(ctx, a, *next, cfg); err != nil {
			return signoff.TriageRun{}, fmt.Errorf("task %s (%s): %w", next.ID, next.Kind, err)
		} else if settled {
			continue
		}
		res, err := r.Runtime.Run(ctx, a, next.ID, cfg)
		if err != nil {
			return signoff.TriageRun{}, fmt.Errorf("task %s (%s): %w", next.ID, next.Kind, err)
		}
		if res.Outcome == signoff.OutcomeNeedsHuman {
			if err := r.toPerson(ctx, ws, caseID, res.Reason); err != nil {
				return signoff.TriageRun{}, fmt.Errorf("task %s (%s): %w", next.ID, next.Kind, err)
			}
			break
		}
		if res.Outcome == agent.OutcomeParked {
			break
		}
	}
	return r.Store.GetTriage(ctx, sys, caseID)
}

// toPerson ends a run whose task an agent could not finish (it gave up, or
// ran out of turns or budget). The run is done as needs_human first: an
// active run holds every later report of the project behind it, so a
// report that makes a model give up must not stop the project's triage.
// Then the case goes to a person, who may resume its triage.
func (r *Runner) toPerson(ctx context.Context, ws, caseID, why string) error {
	sys := signoff.SystemActor(ws)
	run, err := loadRun(ctx, r.Store, sys, caseID)
	if err != nil {
		return err
	}
	if run.Status == signoff.TriageActive {
		run.Status, run.Outcome = signoff.TriageDone, triage.OutcomeNeedsHuman
		run.st.Notes = append(run.st.Notes, "sent to a person: "+truncate(why, 500))
		if err := run.save(ctx, r.Store, sys); err != nil {
			return err
		}
	}
	c, err := r.Store.GetCase(ctx, sys, caseID)
	if err != nil || c.State != workflow.BugTriaging {
		return err
	}
	_, _, err = r.Store.TransitionCase(ctx, sys, caseID, signoff.TransitionInput{Command: "escalate", Note: truncate("triage could not finish: "+why, 500)})
	return err
}

// waitingForPerson reports whether the run is parked at a gate whose
// decision is still pending: running it again would only ask again.
func (r *Runner) waitingForPerson(ctx context.Context, sys signoff.Actor, caseID string) (bool, error) {
	run, err := loadRun(ctx, r.Store, sys, caseID)
	if err != nil || run.Status != signoff.TriageParked {
		return false, err
	}
	if run.st.WaitsFor != "" {
		other, err := r.Store.GetTriage(ctx, sys, run.st.WaitsFor)
		if err != nil {
			return false, err
		}
		return other.Status != signoff.TriageDone, nil
	}
	if run.st.Gate == nil {
		return false, nil
	}
	d, err := r.Store.GetDecision(ctx, sys, run.st.Gate.DecisionID)
	if err != nil {
		return false, err
	}
	// Pending: asking again would duplicate it. A rejection already
	// applied: the run ended with a person.
	return d.Status == signoff.DecisionPending || run.st.Gate.Status == signoff.DecisionRejected, nil
}

// settleGate finishes the writer task of a run whose gate a person has
// answered, without asking the model again: an approval files exactly
// the subject the person approved (with their severity) and closes the
// task with the ticket as its output, under the evidence of the provider
// that wrote the proposal; a rejection, or a decision that does not hold
// for this run, closes the task as needs_human and escalates the case. It
// reports false when there is nothing to settle (no gate, or one whose
// decision expired or was replaced: then the writer proposes again).
func (r *Runner) settleGate(ctx context.Context, a signoff.Actor, t signoff.Task, cfg agent.Config) (bool, error) {
	if t.Kind != RoleWriter || t.Status != signoff.TaskOpen {
		return false, nil
	}
	run, err := loadRun(ctx, r.Store, a, t.CaseID)
	if err != nil {
		return false, err
	}
	g := run.st.Gate
	if g == nil || run.Status == signoff.TriageDone && g.TicketID == "" {
		return false, nil
	}
	d, err := r.Store.GetDecision(ctx, a, g.DecisionID)
	if err != nil {
		return false, err
	}
	switch d.Status {
	case signoff.DecisionPending:
		return true, nil
	case signoff.DecisionRejected:
		why := "a person rejected this ticket"
		if d.Reason != "" {
			why += ": " + d.Reason
		}
		return true, gateNeedsPerson(ctx, r.Store, a, run, t.ID, why)
	case signoff.DecisionApproved:
	default:
		return false, nil
	}
	var tk triage.Ticket
	approvedBy := g.ApprovedBy
	if run.Status == signoff.TriageDone {
		// Filed before a restart; only the task is left to close.
		if tk, err = r.Store.GetTicket(ctx, a, run.ProjectID, g.TicketID); err != nil {
			return false, err
		}
	} else {
		sub, err := checkGate(run, d)
		if err != nil {
			return true, gateNeedsPerson(ctx, r.Store, a, run, t.ID, signoff.ErrorMessage(err))
		}
		if tk, approvedBy, err = fileApproved(ctx, r.Store, a, run, d, sub); err != nil {
			return false, err
		}
	}
	out, err := json.Marshal(map[string]any{"ticket_id": tk.ID, "severity": tk.Severity, "approved_by": approvedBy,
		"decision_id": d.ID, "filed_by": "server: the approved subject, without asking the model again"})
	if err != nil {
		return false, err
	}
	ev, err := r.writerEvidence(ctx, a, t, cfg)
	if err != nil {
		return false, err
	}
	if _, err := r.Store.SubmitTask(ctx, a, signoff.Submission{TaskID: t.ID, InputDigest: t.InputDigest, Output: out, Evidence: ev, Final: true}); err != nil {
		return false, fmt.Errorf("close writer task %s with %s: %w", t.ID, tk.ID, err)
	}
	return true, nil
}

// writerEvidence is the evidence of the provider that wrote the proposal:
// what its recorded calls say, else what the role's provider is.
func (r *Runner) writerEvidence(ctx context.Context, a signoff.Actor, t signoff.Task, cfg agent.Config) (string, error) {
	calls, err := r.Store.ListCalls(ctx, a, t.ID)
	if err != nil {
		return "", err
	}
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].Evidence != "" {
			return calls[i].Evidence, nil
		}
	}
	rc, err := cfg.ForTask(t)
	if err != nil {
		return "", err
	}
	p, err := r.Runtime.Providers(rc)
	if err != nil {
		return "", err
	}
	return p.Evidence(), nil
}

// needTriager checks, before anything is written, that the workspace has
// an agent to take the triage tasks.
func (r *Runner) needTriager(ctx context.Context, ws string) error {
	agents, err := r.Store.ListAgents(ctx, ws, signoff.DefaultPresenceWindow)
	if err != nil {
		return err
	}
	for _, a := range agents {
		if a.Role == signoff.RoleTriager && a.DisabledAt == nil {
			return nil
		}
	}
	return signoff.Errorf(signoff.ENOTFOUND, "the workspace has no triager agent to take triage tasks (signoff actor add --role triager)")
}

// Resume drives the case, then every parked run of its project that was
// waiting for it.
func (r *Runner) Resume(ctx context.Context, ws, caseID string) (signoff.TriageRun, error) {
	run, err := r.Drive(ctx, ws, caseID)
	if err != nil || run.Status != signoff.TriageDone {
		return run, err
	}
	sys := signoff.SystemActor(ws)
	parked, err := r.Store.ListTriage(ctx, sys, run.ProjectID, signoff.TriageParked)
	if err != nil {
		return run, err
	}
	for _, p := range parked {
		var st State
		if json.Unmarshal(p.State, &st) != nil || st.WaitsFor != caseID {
			continue
		}
		if _, err := r.Resume(ctx, ws, p.CaseID); err != nil {
			return run, err
		}
	}
	return run, nil
}
