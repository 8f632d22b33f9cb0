package crew

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/triage"
)

// Tools are the crew's tools, to add to the runtime's registry.
func Tools() []*agent.Tool {
	return []*agent.Tool{
		recordIntakeTool(), searchTrackerTool(), searchRecentTool(), queryCrashLogTool(),
		recordInvestigationTool(), factsTool(), recordTriageTool(), createTicketTool(), addCommentTool(), requestInfoTool(),
	}
}

// project is the case's project data, prepared for triage (index,
// crash log, component model) exactly as the reference pipeline prepares
// it.
type project struct {
	*triage.Project
	caseID, projectID string
}

func loadProject(ctx context.Context, env *agent.Env) (*project, error) {
	c, err := env.Store.GetCase(ctx, env.Actor, env.Task.CaseID)
	if err != nil {
		return nil, err
	}
	p, err := projectData(ctx, env.Store, env.Actor, c.ProjectID)
	if err != nil {
		return nil, err
	}
	return &project{Project: p, caseID: c.ID, projectID: c.ProjectID}, nil
}

// projectData reads a project's tracker, crash log, owners and releases.
func projectData(ctx context.Context, s signoff.Store, by signoff.Actor, projectID string) (*triage.Project, error) {
	var d triage.Dataset
	var err error
	if d.Tickets, err = s.ListTickets(ctx, by, projectID); err != nil {
		return nil, err
	}
	if d.Owners, err = s.GetOwners(ctx, by, projectID); err != nil {
		return nil, err
	}
	if d.Releases, err = s.GetReleases(ctx, by, projectID); err != nil && signoff.ErrorCode(err) != signoff.ENOTFOUND {
		return nil, err
	}
	if d.Crashes, err = s.ListCrashes(ctx, by, projectID); err != nil {
		return nil, err
	}
	return triage.NewProject(d), nil
}

// runAndProject reads the case's triage run and its project's data, which
// most tools need together.
func runAndProject(ctx context.Context, env *agent.Env) (*run, *project, error) {
	r, err := loadRun(ctx, env.Store, env.Actor, env.Task.CaseID)
	if err != nil {
		return nil, nil, err
	}
	p, err := loadProject(ctx, env)
	if err != nil {
		return nil, nil, err
	}
	return r, p, nil
}

func (p *project) ticket(id string) (triage.Ticket, bool) {
	t, ok := p.ByID[id]
	return t, ok
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf(`{"error":%q}`, err.Error())
	}
	return string(b)
}

func transition(ctx context.Context, env *agent.Env, cmd, note string) error {
	_, _, err := env.Store.TransitionCase(ctx, env.Actor, env.Task.CaseID, signoff.TransitionInput{Command: cmd, Note: note})
	return err
}

// ---- intake ----

type intakeArgs struct {
	Category   string   `json:"category" jsonschema:"bug, feature_request, praise, spam or support_question"`
	Language   string   `json:"language" jsonschema:"the reporter's language as an ISO 639-1 code, e.g. en, es"`
	Device     string   `json:"device,omitempty"`
	OS         string   `json:"os,omitempty"`
	AppVersion string   `json:"app_version,omitempty"`
	Steps      []string `json:"steps,omitempty" jsonschema:"reproduction steps, one per item"`
	Confidence float64  `json:"confidence,omitempty" jsonschema:"0 to 1"`
}

var categories = []string{triage.CategoryBug, triage.CategoryFeature, triage.CategoryPraise, triage.CategorySpam, triage.CategorySupport}

func recordIntakeTool() *agent.Tool {
	return agent.NewTool("record_intake", "Record the item's category and the facts extracted from it. Non-bugs end here (routed, never lost).",
		func(ctx context.Context, env *agent.Env, in intakeArgs) (agent.Result, error) {
			if !slices.Contains(categories, in.Category) {
				return agent.Result{}, signoff.Errorf(signoff.EINVALID, "category must be one of %s", strings.Join(categories, ", "))
			}
			if in.Confidence < 0 || in.Confidence > 1 {
				return agent.Result{}, signoff.Errorf(signoff.EINVALID, "confidence must be between 0 and 1")
			}
			r, err := loadRun(ctx, env.Store, env.Actor, env.Task.CaseID)
			if err != nil {
				return agent.Result{}, err
			}
			rec := withFormFacts(triage.Intake{Category: in.Category, Language: in.Language, Device: in.Device, OS: in.OS,
				AppVersion: in.AppVersion, Steps: in.Steps, Confidence: in.Confidence}, r.st.Item)
			r.st.Intake = &rec
			out := map[string]any{"category": in.Category, "language": in.Language, "intake": r.st.Intake}
			if in.Category != triage.CategoryBug {
				r.Status, r.Outcome = signoff.TriageDone, triage.OutcomeDropped
				if err := r.save(ctx, env.Store, env.Actor); err != nil {
					return agent.Result{}, err
				}
				if err := transition(ctx, env, "drop", "routed as "+in.Category); err != nil {
					return agent.Result{}, err
				}
				out["outcome"] = triage.OutcomeDropped
				return agent.Result{Text: fmt.Sprintf("Recorded: %s; the item is routed as %s and does not go to the investigator.", in.Category, in.Category), Output: out, Final: true}, nil
			}
			if err := r.save(ctx, env.Store, env.Actor); err != nil {
				return agent.Result{}, err
			}
			return agent.Result{Text: "Recorded: bug.", Output: out, Next: RoleInvestigator}, nil
		})
}

// ---- investigator's searches ----

type searchArgs struct {
	Query string `json:"query" jsonschema:"what to look for: the symptom, the screen, the error, in any language"`
}

// hitView is how a search result is shown: STRONG or weak, so a model need
// not interpret a float. The server's words (id, status, component,
// versions, score, label) are shown as they are; the hit's title and the
// search's notes on it (which quote the words it matched) are
// public-derived: one quote holds both, named here.
type hitView struct {
	ID        string  `json:"id"`
	Title     string  `json:"title_and_notes,omitempty"`
	Status    string  `json:"status,omitempty"`
	Component string  `json:"component,omitempty"`
	FixedIn   string  `json:"fixed_in,omitempty"`
	Resolves  string  `json:"resolves,omitempty"`
	Score     float64 `json:"score"`
	Match     string  `json:"match"`
}

// viewHits renders hits into res: the JSON it returns refers to the quotes
// it adds to res.
func viewHits(res *agent.Result, hits []triage.Hit) []hitView {
	out := make([]hitView, 0, len(hits))
	for _, h := range hits {
		m := "weak"
		if h.Strong {
			m = "STRONG"
		}
		what := "title of ticket " + h.ID
		if strings.HasPrefix(h.ID, triage.BatchPrefix) {
			what = "title of the earlier report " + h.ID
		}
		text := h.Title
		if len(h.Why) > 0 {
			text += "\n(search notes: " + strings.Join(h.Why, "; ") + ")"
		}
		out = append(out, hitView{ID: h.ID, Title: res.Quote(what+", then the search's notes on it", text), Status: h.Status, Component: h.Component, FixedIn: h.FixedIn,
			Resolves: h.Resolves, Score: round2(h.Score), Match: m})
	}
	return out
}

func round2(f float64) float64 { return float64(int(f*100+0.5)) / 100 }

var searchNote = fmt.Sprintf("Only a STRONG result (score >= %.2f) from this item's own searches may be named as the duplicate. Titles and notes are public text, quoted below by name (U1, U2, ...).", triage.StrongScore)

// searchResult is a search tool's answer: the hits as JSON of the server's
// words, their texts quoted.
func searchResult(hits []triage.Hit) agent.Result {
	var res agent.Result
	res.Text = jsonText(map[string]any{"results": viewHits(&res, hits), "note": searchNote})
	return res
}

// query builds the search query: the model's words plus the item's own
// device, OS and version (from intake, else the report's metadata), which
// the server knows better than the model.
func query(st State, text string) triage.Query {
	q := triage.Query{Text: text, Device: st.Item.Metadata.Device, OS: st.Item.Metadata.OS, AppVersion: st.Item.Metadata.AppVersion}
	if st.Intake != nil {
		q.Device, q.OS, q.AppVersion = firstNonEmpty(st.Intake.Device, q.Device), firstNonEmpty(st.Intake.OS, q.OS), firstNonEmpty(st.Intake.AppVersion, q.AppVersion)
	}
	return q
}

// searchQuery adds the crash signature telemetry confirms for the query
// and the component the report is classified into (from the report's own
// text, not the model's query: the duplicate evidence weighs it).
func searchQuery(p *project, st State, text string) triage.Query {
	q := query(st, text)
	crashes := p.Crash.Query(q)
	q.Signature = triage.ConfirmedSignature(crashes)
	// The component is the report's (its own text, device and OS), never
	// the model's search words'.
	own := q
	own.Text = firstNonEmpty(st.Item.Text, text)
	own = triage.WithComponent(p.Components, own, crashes)
	q.Component, q.ComponentP = own.Component, own.ComponentP
	return q
}

// ownQuery is the report's own query: the server's record of the item's
// text (never the model's search words), with its device, OS, version,
// confirmed crash signature and component. A duplicate claim is judged on
// it (triage.OwnEvidence): the model's queries only find candidates.
//
// Its device, OS and version are the item's own too: the form's metadata,
// else what triage extracts from the item's text (ownFacts), never the
// values the model recorded at intake, which could pick a platform or
// version that confirms a crash signature and lifts an unrelated ticket.
func ownQuery(p *project, st State) triage.Query {
	own := st
	own.Intake = nil
	f := ownFacts(st.Item)
	own.Item.Metadata.Device, own.Item.Metadata.OS, own.Item.Metadata.AppVersion = f.Device, f.OS, f.AppVersion
	return searchQuery(p, own, st.Item.Text)
}

// ownFacts is the device, OS and app version of the item itself: its
// form's metadata, else the facts triage reads from its text (as Classify
// does, without the category: the batch memory re-reads every earlier
// report of the project on each search).
func ownFacts(it triage.Item) triage.Intake {
	return triage.Facts(triage.Item{ID: it.ID, Source: it.Source, Text: it.Text, Metadata: it.Metadata})
}

// ownVersion is the reporter's app version as the item itself states it
// (its form, else its text), never the model's record_intake value: the
// version decides whether a closed ticket is a regression or a duplicate
// and which versions a filed ticket affects, so a model choosing one
// would choose the outcome (attacker H5).
func ownVersion(st State) string { return ownFacts(st.Item).AppVersion }

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// remember adds hits to what this item has seen, keeping each id's best.
func remember(st *State, hits []triage.Hit) {
	for _, h := range hits {
		if i := slices.IndexFunc(st.Hits, func(x triage.Hit) bool { return x.ID == h.ID }); i >= 0 {
			if h.Score > st.Hits[i].Score {
				st.Hits[i] = h
			}
			continue
		}
		st.Hits = append(st.Hits, h)
	}
}

func searchTrackerTool() *agent.Tool {
	return agent.NewTool("search_tracker", "Search the project's tracker for tickets matching the report. Results carry a score and a STRONG/weak label.",
		func(ctx context.Context, env *agent.Env, in searchArgs) (agent.Result, error) {
			r, p, err := runAndProject(ctx, env)
			if err != nil {
				return agent.Result{}, err
			}
			q := searchQuery(p, r.st, in.Query)
			hits := p.Index.Search(q, triage.SearchK)
			r.st.Query, r.st.TrackerHits = q, hits
			remember(&r.st, hits)
			if err := r.save(ctx, env.Store, env.Actor); err != nil {
				return agent.Result{}, err
			}
			return searchResult(hits), nil
		})
}

func searchRecentTool() *agent.Tool {
	return agent.NewTool("search_recent_reports", "Search reports already processed in this batch (they may have created tickets that the tracker search cannot know about yet).",
		func(ctx context.Context, env *agent.Env, in searchArgs) (agent.Result, error) {
			r, p, err := runAndProject(ctx, env)
			if err != nil {
				return agent.Result{}, err
			}
			b, err := batchOf(ctx, env, r, p)
			if err != nil {
				return agent.Result{}, err
			}
			q := searchQuery(p, r.st, in.Query)
			hits := b.SearchIndexed(q, triage.SearchK, p.Index)
			r.st.Query, r.st.BatchHits = q, hits
			remember(&r.st, hits)
			if err := r.save(ctx, env.Store, env.Actor); err != nil {
				return agent.Result{}, err
			}
			return searchResult(hits), nil
		})
}

// batchOf rebuilds the batch memory: the project's bug reports processed
// before this one, in arrival order, each with the ticket it landed on.
//
// Each earlier report is remembered by its own query (ownQuery: its text
// as the server recorded it), not by the last query a model searched
// with for it, so no model's words can make a later report match it.
func batchOf(ctx context.Context, env *agent.Env, r *run, p *project) (*triage.Batch, error) {
	// Reports done, and reports parked at the gate: a later report is
	// matched against a parked one too, and waits for its decision.
	runs, err := env.Store.ListTriage(ctx, env.Actor, r.ProjectID, "")
	if err != nil {
		return nil, err
	}
	b := triage.NewBatch()
	for _, pr := range runs {
		if pr.Seq >= r.Seq || pr.Outcome == triage.OutcomeDropped || pr.Outcome == triage.OutcomeNeedsHuman || pr.Status == signoff.TriageActive {
			continue
		}
		var ps State
		if err := json.Unmarshal(pr.State, &ps); err != nil {
			return nil, err
		}
		resolves := pr.Resolves
		if pr.Status == signoff.TriageParked && resolves == "" {
			// Its ticket waits at the gate: a report that matches it is a
			// duplicate-to-be, and waits for that decision.
			resolves = pendingPrefix + pr.CaseID
		}
		if ps.Item.Text == "" {
			// Nothing of its own to remember it by: the model's last search
			// words are no report.
			continue
		}
		b.Add(pr.ItemID, ownQuery(p, ps), resolves)
	}
	return b, nil
}

type crashArgs struct {
	Query string `json:"query" jsonschema:"the symptom in the reporter's words, or a crash signature"`
}

func queryCrashLogTool() *agent.Tool {
	return agent.NewTool("query_crash_log", "Aggregate the crash log by signature for crashes that fit the report: events, distinct users, versions, platforms, stack top.",
		func(ctx context.Context, env *agent.Env, in crashArgs) (agent.Result, error) {
			r, p, err := runAndProject(ctx, env)
			if err != nil {
				return agent.Result{}, err
			}
			aggs := p.Crash.Query(query(r.st, in.Query))
			r.st.Crashes = aggs
			if len(aggs) > 8 {
				aggs = aggs[:8]
			}
			if err := r.save(ctx, env.Store, env.Actor); err != nil {
				return agent.Result{}, err
			}
			return crashResult(aggs), nil
		})
}

// crashView is one crash signature as query_crash_log shows it: the
// counts are the server's; what crash telemetry reported in words (the
// stack top, platforms, devices), which any client can send, is quoted.
type crashView struct {
	Signature string         `json:"signature"`
	StackTop  string         `json:"stack_top,omitempty"`
	Events    int            `json:"events"`
	Users     int            `json:"users"`
	Versions  map[string]int `json:"versions,omitempty"`
	Reported  string         `json:"platforms_and_devices,omitempty"`
	FirstSeen string         `json:"first_seen"`
	LastSeen  string         `json:"last_seen"`
	Score     float64        `json:"score"`
	Matched   bool           `json:"matched"`
	Why       string         `json:"why,omitempty"`
}

func crashResult(aggs []triage.CrashAggregate) agent.Result {
	var res agent.Result
	views := make([]crashView, 0, len(aggs))
	for _, a := range aggs {
		sig := a.Signature
		if !plainIdent(sig) {
			sig = res.Quote("a crash signature as telemetry reported it", sig)
		}
		reported := ""
		if len(a.Platforms)+len(a.Devices) > 0 {
			reported = res.Quote("platforms and devices telemetry reported for "+plainOr(a.Signature, "this signature"),
				jsonText(map[string]any{"platforms": a.Platforms, "devices": a.Devices}))
		}
		versions := map[string]int{}
		for v, n := range a.Versions {
			if plainIdent(v) {
				versions[v] = n
			}
		}
		views = append(views, crashView{Signature: sig, StackTop: res.Quote("stack top of "+plainOr(a.Signature, "this signature"), a.StackTop),
			Events: a.Events, Users: a.Users, Versions: versions, Reported: reported,
			FirstSeen: a.FirstSeen.UTC().Format(time.RFC3339), LastSeen: a.LastSeen.UTC().Format(time.RFC3339),
			Score: round2(a.Score), Matched: a.Matched, Why: res.Quote("the match notes for "+plainOr(a.Signature, "this signature"), strings.Join(a.Why, "; "))})
	}
	res.Text = jsonText(map[string]any{"signatures": views, "note": "Texts from crash telemetry are quoted below by name (U1, U2, ...)."})
	return res
}

// plainIdent reports whether s is an identifier a model may read as the
// server's word: short, without spaces, of letters, digits and the marks
// signatures and versions use.
func plainIdent(s string) bool {
	if s == "" || len(s) > 120 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.:/#@$+()[]", c)) {
			return false
		}
	}
	return true
}

func plainOr(s, alt string) string {
	if plainIdent(s) {
		return s
	}
	return alt
}

// confirmed is the telemetry-confirmed signature among what the
// investigator saw, if the claimed one is among them and matched.
func confirmed(st State, claimed string) string {
	sig := triage.ConfirmedSignature(st.Crashes)
	if claimed != "" && claimed != sig {
		return ""
	}
	return sig
}

// ---- investigation ----

type investigationArgs struct {
	Verdict     string  `json:"verdict" jsonschema:"new, duplicate or needs_info"`
	DuplicateOf string  `json:"duplicate_of,omitempty" jsonschema:"for a duplicate: the id of a STRONG result from your searches (a ticket id or batch:<item id>)"`
	Confidence  float64 `json:"confidence" jsonschema:"0 to 1"`
	Signature   string  `json:"signature,omitempty" jsonschema:"the crash signature from query_crash_log that confirms the report, if any"`
	Rationale   string  `json:"rationale" jsonschema:"one or two sentences citing the evidence"`
}

func recordInvestigationTool() *agent.Tool {
	return agent.NewTool("record_investigation", "Record whether the bug is new, a duplicate of a STRONG result from your searches, or needs more information.",
		func(ctx context.Context, env *agent.Env, in investigationArgs) (agent.Result, error) {
			if in.Confidence < 0 || in.Confidence > 1 {
				return agent.Result{}, signoff.Errorf(signoff.EINVALID, "confidence must be between 0 and 1")
			}
			r, err := loadRun(ctx, env.Store, env.Actor, env.Task.CaseID)
			if err != nil {
				return agent.Result{}, err
			}
			if r.st.Intake == nil {
				return agent.Result{}, signoff.Errorf(signoff.ECONFLICT, "intake has not been recorded for this item")
			}
			inv := triage.Investigation{Verdict: in.Verdict, Confidence: in.Confidence, Rationale: in.Rationale}
			switch in.Verdict {
			case triage.VerdictDuplicate:
				if err := triage.CheckDuplicate(in.DuplicateOf, r.st.Hits); err != nil {
					return agent.Result{}, signoff.Errorf(signoff.EINVALID, "%s", err.Error())
				}
				p, err := loadProject(ctx, env)
				if err != nil {
					return agent.Result{}, err
				}
				// The claim must hold for the reporter's words, not only
				// for the query the model searched with.
				b, err := batchOf(ctx, env, r, p)
				if err != nil {
					return agent.Result{}, err
				}
				own, found := triage.OwnEvidence(in.DuplicateOf, ownQuery(p, r.st), p.Index, b)
				if err := triage.CheckOwnEvidence(in.DuplicateOf, own, found); err != nil {
					return agent.Result{}, signoff.Errorf(signoff.EINVALID, "%s", err.Error())
				}
				itemTicket, err := batchResolves(ctx, env, r)
				if err != nil {
					return agent.Result{}, err
				}
				tid, err := triage.ResolveTicketID(in.DuplicateOf, p.known(), itemTicket)
				if err != nil {
					// The earlier report it duplicates may still wait at
					// the gate: then this one waits for that decision.
					if waits, werr := earlierParked(ctx, env, r, in.DuplicateOf); werr != nil {
						return agent.Result{}, werr
					} else if waits != "" {
						r.st.WaitsFor, r.Status = waits, signoff.TriageParked
						if err := r.save(ctx, env.Store, env.Actor); err != nil {
							return agent.Result{}, err
						}
						return agent.Result{Text: "PAUSED: " + in.DuplicateOf + " is still waiting for a person at the gate; this report is matched against it once that is decided.", Park: true}, nil
					}
					return agent.Result{}, signoff.Errorf(signoff.EINVALID, "%s", err.Error())
				}
				r.st.WaitsFor = ""
				r.Status = signoff.TriageActive
				if v := ownVersion(r.st); triage.CheckRegression(p.ByID[tid], v) != nil {
					return agent.Result{}, regressionRefusal(p.ByID[tid], v)
				}
				inv.DuplicateOf, inv.Resolved = in.DuplicateOf, tid
			case triage.VerdictNew:
				inv.Signature = confirmed(r.st, in.Signature)
				if err := triage.CheckActionable(*r.st.Intake, inv.Signature); err != nil {
					return agent.Result{}, signoff.Errorf(signoff.EINVALID, "%s", err.Error())
				}
				inv.RegressionOf = regressionOf(ctx, env, r)
			case triage.VerdictNeedsInfo:
			default:
				return agent.Result{}, signoff.Errorf(signoff.EINVALID, "verdict must be new, duplicate or needs_info")
			}
			r.st.Investigation = &inv
			if err := r.save(ctx, env.Store, env.Actor); err != nil {
				return agent.Result{}, err
			}
			next := RoleWriter
			if in.Verdict == triage.VerdictNew {
				next = RoleTriage
			}
			return agent.Result{Text: "Recorded: " + in.Verdict + ".", Next: next, Output: map[string]any{
				"verdict": in.Verdict, "duplicate_of": inv.DuplicateOf, "resolves": inv.Resolved, "confidence": in.Confidence,
				"intake": r.st.Intake, "investigation": inv}}, nil
		})
}

// regressionRefusal is the regression guard's refusal of t for a
// reporter on version v. The version is the reporter's (typed on the
// form, or read from their words): unless it is a plain identifier it is
// named only as a quote, outside the server's words.
func regressionRefusal(t triage.Ticket, v string) error {
	if plainIdent(v) {
		return signoff.Errorf(signoff.EINVALID, "%s", triage.CheckRegression(t, v).Error())
	}
	const ref = "the reporter's version (quoted below as U1)"
	msg := strings.ReplaceAll(triage.CheckRegression(t, v).Error(), v, ref)
	return agent.Refuse(signoff.Errorf(signoff.EINVALID, "%s", msg), "the app version the reporter gave", v)
}

// regressionOf names a closed ticket among the seen hits that this report
// would duplicate but for its fix being older than the reporter's version.
func regressionOf(ctx context.Context, env *agent.Env, r *run) string {
	p, err := loadProject(ctx, env)
	if err != nil {
		return ""
	}
	for _, h := range r.st.Hits {
		if !h.Strong || strings.HasPrefix(h.ID, "batch:") {
			continue
		}
		if t, ok := p.ticket(h.ID); ok && triage.CheckRegression(t, ownVersion(r.st)) != nil {
			return t.ID
		}
	}
	return ""
}

// ---- triage ----

type triageArgs struct {
	Severity  string `json:"severity" jsonschema:"low, medium, high or critical"`
	Component string `json:"component" jsonschema:"a component from CODEOWNERS"`
	Rationale string `json:"rationale" jsonschema:"why, citing the numbers: events, users, share of users on the version, days to code freeze"`
}

func recordTriageTool() *agent.Tool {
	return agent.NewTool("record_triage", "Record severity and component of a confirmed new bug; the owner comes from CODEOWNERS.",
		func(ctx context.Context, env *agent.Env, in triageArgs) (agent.Result, error) {
			if triage.SeverityRank(in.Severity) < 0 {
				return agent.Result{}, signoff.Errorf(signoff.EINVALID, "severity must be one of %s", strings.Join(triage.Severities, ", "))
			}
			r, err := loadRun(ctx, env.Store, env.Actor, env.Task.CaseID)
			if err != nil {
				return agent.Result{}, err
			}
			if r.st.Investigation == nil || r.st.Investigation.Verdict != triage.VerdictNew {
				return agent.Result{}, signoff.Errorf(signoff.ECONFLICT, "only a bug the investigator recorded as new is triaged")
			}
			p, err := loadProject(ctx, env)
			if err != nil {
				return agent.Result{}, err
			}
			if err := triage.CheckComponent(in.Component, p.Owners); err != nil {
				return agent.Result{}, signoff.Errorf(signoff.EINVALID, "%s", err.Error())
			}
			owner, err := triage.OwnerOf(in.Component, p.Owners)
			if err != nil {
				return agent.Result{}, signoff.Errorf(signoff.EINVALID, "%s", err.Error())
			}
			srv := assessed(p, r.st)
			a := triage.Assessment{Severity: in.Severity, Component: in.Component, Owner: owner.Team, Rationale: in.Rationale,
				Evidence: srv.Evidence}
			r.st.Assessment, r.st.Assessed = &a, srv.Severity
			if err := r.save(ctx, env.Store, env.Actor); err != nil {
				return agent.Result{}, err
			}
			return agent.Result{Text: fmt.Sprintf("Recorded: %s, %s, owner %s.", in.Severity, in.Component, a.Owner),
				Output: map[string]any{"severity": in.Severity, "component": in.Component, "owner": a.Owner,
					"intake": r.st.Intake, "investigation": r.st.Investigation, "assessment": a}, Next: RoleWriter}, nil
		})
}

type commentArgs struct {
	TicketID string `json:"ticket_id" jsonschema:"the ticket to +1 (a feedback id is resolved to its ticket)"`
	Body     string `json:"body" jsonschema:"the +1 with the reporter's device, OS, version and what they saw"`
}

func addCommentTool() *agent.Tool {
	return agent.NewTool("add_comment", "Add a +1 comment with the reporter's details to the ticket this duplicate landed on.",
		func(ctx context.Context, env *agent.Env, in commentArgs) (agent.Result, error) {
			r, err := loadRun(ctx, env.Store, env.Actor, env.Task.CaseID)
			if err != nil {
				return agent.Result{}, err
			}
			inv := r.st.Investigation
			if inv == nil || inv.Verdict != triage.VerdictDuplicate {
				return agent.Result{}, signoff.Errorf(signoff.ECONFLICT, "add_comment is for a recorded duplicate")
			}
			p, err := loadProject(ctx, env)
			if err != nil {
				return agent.Result{}, err
			}
			itemTicket, err := batchResolves(ctx, env, r)
			if err != nil {
				return agent.Result{}, err
			}
			want := inv.Resolved
			id, err := triage.ResolveTicketID(in.TicketID, p.known(), itemTicket)
			if err != nil {
				return agent.Result{}, signoff.Errorf(signoff.EINVALID, "%s", err.Error())
			}
			if want != "" && id != want {
				return agent.Result{}, signoff.Errorf(signoff.EINVALID, "the investigation resolved this duplicate to %s, not %s", want, id)
			}
			// The comment is the writer's text on a ticket, like a
			// ticket's body: normalized, instructions quoted and marked.
			body, signals := neutralize(normalizeBody(in.Body))
			if body == "" {
				return agent.Result{}, signoff.Errorf(signoff.EINVALID, "body must not be empty")
			}
			if len(signals) > 0 {
				r.st.Notes = append(r.st.Notes, fmt.Sprintf("comment text neutralized: the writer's comment carried instruction-like text (airlock signals: %s); it is filed quoted and marked", strings.Join(signals, ", ")))
			}
			if _, err := env.Store.AddComment(ctx, env.Actor, r.ProjectID, id, triage.Comment{Author: env.Actor.Name, Body: body, Time: time.Now().UTC().Format(time.RFC3339)}); err != nil {
				return agent.Result{}, err
			}
			r.st.Action = &triage.Action{Kind: "comment", TicketID: id, Body: body}
			r.Status, r.Outcome, r.Resolves = signoff.TriageDone, triage.OutcomeDuplicate, id
			if err := r.save(ctx, env.Store, env.Actor); err != nil {
				return agent.Result{}, err
			}
			if err := transition(ctx, env, "mark_duplicate", "duplicate of "+id); err != nil {
				return agent.Result{}, err
			}
			return agent.Result{Text: "Commented on " + id + ".", Output: map[string]any{"ticket_id": id, "duplicate_of": inv.DuplicateOf}, Final: true}, nil
		})
}

// batchResolves maps each processed item of the project to the ticket it
// landed on, for resolving feedback ids and duplicate chains.
func batchResolves(ctx context.Context, env *agent.Env, r *run) (map[string]string, error) {
	runs, err := env.Store.ListTriage(ctx, env.Actor, r.ProjectID, signoff.TriageDone)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, pr := range runs {
		if pr.Resolves != "" && pr.ItemID != "" {
			m[pr.ItemID] = pr.Resolves
		}
	}
	return m, nil
}

// ---- facts for triage ----

type factsArgs struct{}

// Facts is what get_project_facts answers: the components a ticket may be
// filed under, and the release data severity is argued from.
type Facts struct {
	Components []triage.Owner  `json:"components"`
	Releases   triage.Releases `json:"releases"`
	Received   string          `json:"received_at"`
	CrashUsers int             `json:"crash_users"`
}

func factsTool() *agent.Tool {
	return agent.NewTool("get_project_facts", "Read the project's components and owners (CODEOWNERS) and its release data: versions, share of users per version, next release and code freeze.",
		func(ctx context.Context, env *agent.Env, _ factsArgs) (agent.Result, error) {
			r, p, err := runAndProject(ctx, env)
			if err != nil {
				return agent.Result{}, err
			}
			return agent.Result{Text: jsonText(Facts{Components: p.Owners, Releases: p.Releases, Received: r.st.Item.ReceivedAt, CrashUsers: p.Crash.TotalUsers()})}, nil
		})
}

// evidence is the numbers a ticket carries whoever assessed it: what the
// crash log and the release data say about this item.
func evidence(p *project, st State) map[string]any {
	return assessed(p, st).Evidence
}

// assessed is the server's own assessment of the run's bug from its
// records: the evidence, and the severity its numbers give.
func assessed(p *project, st State) triage.Assessment {
	in := triage.Intake{}
	if st.Intake != nil {
		in = *st.Intake
	}
	inv := triage.Investigation{Verdict: triage.VerdictNew}
	if st.Investigation != nil {
		inv = *st.Investigation
	}
	return triage.Assess(assessInput(p, st, in, inv))
}

// assessInput is triage's input for an item, as the reference pipeline
// builds it.
func assessInput(p *project, st State, in triage.Intake, inv triage.Investigation) triage.AssessInput {
	return triage.AssessInput{Item: st.Item, Intake: in, Investigation: inv, Crashes: st.Crashes, CrashUsers: p.Crash.TotalUsers(),
		Releases: p.Releases, Owners: p.Owners, TrackerHits: st.TrackerHits, Tickets: p.ByID, Components: p.Components}
}

func (p *project) known() map[string]bool {
	m := make(map[string]bool, len(p.ByID))
	for id := range p.ByID {
		m[id] = true
	}
	return m
}

// pendingPrefix marks, in the batch memory, the ticket of a report still
// waiting at the gate.
const pendingPrefix = "pending:"

// earlierParked returns the case of the batch item claim names when that
// run is parked (its ticket not filed yet), else "".
func earlierParked(ctx context.Context, env *agent.Env, r *run, claim string) (string, error) {
	if !strings.HasPrefix(claim, triage.BatchPrefix) {
		return "", nil
	}
	runs, err := env.Store.ListTriage(ctx, env.Actor, r.ProjectID, signoff.TriageParked)
	if err != nil {
		return "", err
	}
	for _, pr := range runs {
		if pr.ItemID == strings.TrimPrefix(claim, triage.BatchPrefix) && pr.Seq < r.Seq {
			return pr.CaseID, nil
		}
	}
	return "", nil
}
