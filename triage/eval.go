package triage

import (
	"fmt"
	"strings"
)

// Result is what happened to one item, as the eval scores it. Ticket is
// the ticket the item created or duplicated (empty otherwise).
type Result struct {
	ItemID       string  `json:"item_id"`
	Category     string  `json:"category"`
	Outcome      string  `json:"outcome"`
	DuplicateOf  string  `json:"duplicate_of,omitempty"`
	Component    string  `json:"component,omitempty"`
	Severity     string  `json:"severity,omitempty"`
	Ticket       string  `json:"ticket,omitempty"`
	RegressionOf string  `json:"regression_of,omitempty"`
	Confidence   float64 `json:"confidence,omitempty"`
}

// ItemTickets maps each item id to the ticket it created or duplicated.
func ItemTickets(results []Result) map[string]string {
	m := map[string]string{}
	for _, r := range results {
		if r.Ticket != "" {
			m[r.ItemID] = r.Ticket
		}
	}
	return m
}

// Score checks one item's result against the eval's expectation: the
// category; the outcome; the duplicate target (a "batch:X" expectation is
// met by a duplicate that resolves to the ticket item X created or
// duplicated; a ticket id expectation by a duplicate resolving to that
// ticket); the component, when one is expected; and a severity at least
// the expected minimum. itemTicket maps item ids to the ticket each
// resolved to (ItemTickets).
func Score(exp Expected, got Result, itemTicket map[string]string) (bool, []string) {
	var why []string
	if exp.Category != "" && got.Category != exp.Category {
		why = append(why, fmt.Sprintf("category %s, want %s", got.Category, exp.Category))
	}
	if exp.Outcome != "" && got.Outcome != exp.Outcome {
		why = append(why, fmt.Sprintf("outcome %s, want %s", got.Outcome, exp.Outcome))
	}
	if exp.DuplicateOf != "" {
		want := exp.DuplicateOf
		if strings.HasPrefix(want, BatchPrefix) {
			want = itemTicket[strings.TrimPrefix(want, BatchPrefix)]
		}
		have := ResolveChain(got.DuplicateOf, itemTicket)
		if got.Ticket != "" && got.Outcome == OutcomeDuplicate {
			have = got.Ticket
		}
		if want == "" || have != want {
			why = append(why, fmt.Sprintf("duplicate of %s (ticket %s), want %s (ticket %s)", orDash(got.DuplicateOf), orDash(have), exp.DuplicateOf, orDash(want)))
		}
	}
	if exp.Component != "" && !strings.EqualFold(got.Component, exp.Component) {
		why = append(why, fmt.Sprintf("component %s, want %s", orDash(got.Component), exp.Component))
	}
	if exp.MinSeverity != "" && SeverityRank(got.Severity) < SeverityRank(exp.MinSeverity) {
		why = append(why, fmt.Sprintf("severity %s, want at least %s", orDash(got.Severity), exp.MinSeverity))
	}
	return len(why) == 0, why
}

// ItemRun is everything the reference pipeline recorded for one item.
type ItemRun struct {
	Item          Item             `json:"item"`
	Intake        Intake           `json:"intake"`
	Query         Query            `json:"query"`
	Crashes       []CrashAggregate `json:"crashes,omitempty"`
	TrackerHits   []Hit            `json:"tracker_hits,omitempty"`
	BatchHits     []Hit            `json:"batch_hits,omitempty"`
	Investigation *Investigation   `json:"investigation,omitempty"`
	Assessment    *Assessment      `json:"assessment,omitempty"`
	Action        *Action          `json:"action,omitempty"`
	Refusals      []string         `json:"refusals,omitempty"` // guard refusals met (and obeyed) on the way
	Result        Result           `json:"result"`
}

// Project is a dataset's tracker, crash log, component model and owners,
// prepared once for many items.
type Project struct {
	Tickets    []Ticket
	ByID       map[string]Ticket
	Index      *TrackerIndex
	Crash      *CrashLog
	Components *ComponentModel
	Owners     []Owner
	Releases   Releases
}

// NewProject prepares a dataset's data for triage.
func NewProject(d Dataset) *Project {
	p := &Project{Tickets: d.Tickets, ByID: map[string]Ticket{}, Index: NewTrackerIndex(d.Tickets), Crash: NewCrashLog(d.Crashes),
		Components: NewComponentModel(d.Owners, d.Tickets), Owners: d.Owners, Releases: d.Releases}
	p.Index.LinkCrashLog(p.Crash)
	for _, t := range d.Tickets {
		p.ByID[t.ID] = t
	}
	return p
}

// SearchK is how many hits each search returns to the investigator.
const SearchK = 5

// Session is one batch run over a project: the batch memory, the ticket
// each processed item resolved to, and the ids of tickets it created.
// Items must be processed in arrival order; a Session is not safe for
// concurrent use.
type Session struct {
	Project    *Project
	Batch      *Batch
	ItemTicket map[string]string // item id → ticket it created or duplicated
	Known      map[string]bool   // tracker ticket ids and the ones this session created
	// NewTicketID allocates the id of a created ticket; by default NEW-1,
	// NEW-2...
	NewTicketID func() string
}

// NewSession starts a batch run over the project.
func (p *Project) NewSession() *Session {
	s := &Session{Project: p, Batch: NewBatch(), ItemTicket: map[string]string{}, Known: map[string]bool{}}
	for _, t := range p.Tickets {
		s.Known[t.ID] = true
	}
	n := 0
	s.NewTicketID = func() string {
		n++
		return fmt.Sprintf("NEW-%d", n)
	}
	return s
}

// Process is the reference pipeline for one item: intake; for a bug, the
// crash log, tracker and batch searches, the investigator, the guards
// (as the server's tools apply them), triage for a new bug and the
// writer, with the human gate auto-approved. A processed bug is added to
// the batch memory with the ticket it resolved to. The agent runtime must
// reproduce this with the same functions.
func (s *Session) Process(it Item) ItemRun {
	p := s.Project
	r := ItemRun{Item: it, Intake: Classify(it)}
	r.Result = Result{ItemID: it.ID, Category: r.Intake.Category, Confidence: r.Intake.Confidence}
	if r.Intake.Category != CategoryBug {
		r.Result.Outcome = OutcomeDropped
		return r
	}
	q := Query{Text: it.Text, Device: r.Intake.Device, OS: r.Intake.OS, AppVersion: r.Intake.AppVersion}
	r.Crashes = p.Crash.Query(q)
	q.Signature = ConfirmedSignature(r.Crashes)
	q = WithComponent(p.Components, q, r.Crashes)
	r.Query = q
	r.TrackerHits = p.Index.Search(q, SearchK)
	r.BatchHits = s.Batch.SearchIndexed(q, SearchK, p.Index)
	own := func(id string) (Hit, bool) { return OwnEvidence(id, q, p.Index, s.Batch) }
	inv := Investigate(InvestigateInput{Item: it, Intake: r.Intake, TrackerHits: r.TrackerHits, BatchHits: r.BatchHits, Crashes: r.Crashes, Tickets: p.ByID, Own: own})
	seen := append(append([]Hit(nil), r.TrackerHits...), r.BatchHits...)
	// The investigator already respects the guards; a refusal here would
	// be a bug in it, recorded and obeyed.
	if inv.Verdict == VerdictDuplicate {
		err := CheckDuplicate(inv.DuplicateOf, seen)
		if err == nil {
			h, ok := own(inv.DuplicateOf)
			err = CheckOwnEvidence(inv.DuplicateOf, h, ok)
		}
		var tid string
		if err == nil {
			tid, err = ResolveTicketID(inv.DuplicateOf, s.Known, s.ItemTicket)
		}
		if err == nil {
			err = CheckRegression(p.ByID[tid], r.Intake.AppVersion)
		}
		if err != nil {
			r.Refusals = append(r.Refusals, err.Error())
			inv.Verdict = VerdictNew
		} else {
			inv.Resolved = tid
		}
	}
	if inv.Verdict == VerdictNew {
		if err := CheckActionable(r.Intake, inv.Signature); err != nil {
			r.Refusals = append(r.Refusals, err.Error())
			inv.Verdict = VerdictNeedsInfo
		}
	}
	r.Investigation = &inv
	r.Result.Confidence = inv.Confidence
	wi := WriteInput{Item: it, Intake: r.Intake, Investigation: inv}
	switch inv.Verdict {
	case VerdictDuplicate:
		r.Result.Outcome = OutcomeDuplicate
		r.Result.DuplicateOf = inv.DuplicateOf
		r.Result.Ticket = inv.Resolved
		wi.TicketID = inv.Resolved
	case VerdictNew:
		as := Assess(AssessInput{Item: it, Intake: r.Intake, Investigation: inv, Crashes: r.Crashes, CrashUsers: p.Crash.TotalUsers(),
			Releases: p.Releases, Owners: p.Owners, TrackerHits: r.TrackerHits, Tickets: p.ByID, Components: p.Components})
		if err := CheckComponent(as.Component, p.Owners); err != nil {
			r.Refusals = append(r.Refusals, err.Error())
		}
		r.Assessment = &as
		wi.Assessment = &as
		tid := s.NewTicketID()
		s.Known[tid] = true
		r.Result.Outcome = OutcomeNewTicket
		r.Result.Ticket = tid
		r.Result.Component = as.Component
		r.Result.Severity = as.Severity
		r.Result.RegressionOf = inv.RegressionOf
	default:
		r.Result.Outcome = OutcomeNeedsInfo
	}
	a := Write(wi)
	r.Action = &a
	if r.Result.Ticket != "" {
		s.ItemTicket[it.ID] = r.Result.Ticket
	}
	s.Batch.Add(it.ID, q, r.Result.Ticket)
	return r
}

// Run processes a dataset's inbox in arrival order in one session.
func Run(d Dataset) []ItemRun {
	s := NewProject(d).NewSession()
	out := make([]ItemRun, 0, len(d.Items))
	for _, it := range d.Items {
		out = append(out, s.Process(it))
	}
	return out
}

// RunBatch runs the reference pipeline and returns each item's result.
func RunBatch(d Dataset) []Result {
	runs := Run(d)
	out := make([]Result, len(runs))
	for i, r := range runs {
		out[i] = r.Result
	}
	return out
}

// EvalRow is one item's score.
type EvalRow struct {
	Result
	Expected Expected `json:"expected"`
	OK       bool     `json:"ok"`
	Why      []string `json:"why,omitempty"`
}

// Evaluate scores results against the dataset's expectations. Items
// without an expectation are not scored.
func Evaluate(d Dataset, results []Result) (rows []EvalRow, score, total int) {
	it := ItemTickets(results)
	for _, r := range results {
		exp, ok := d.Expected[r.ItemID]
		if !ok {
			continue
		}
		good, why := Score(exp, r, it)
		rows = append(rows, EvalRow{Result: r, Expected: exp, OK: good, Why: why})
		total++
		if good {
			score++
		}
	}
	return rows, score, total
}

// FormatTable renders eval rows as a plain-text table ending with the line
// "score: N/M".
func FormatTable(rows []EvalRow, score, total int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %-17s %-11s %-22s %-12s %-9s %s\n", "item", "category", "outcome", "duplicate_of", "component", "severity", "ok")
	for _, r := range rows {
		dup := r.DuplicateOf
		if r.Ticket != "" && r.Outcome == OutcomeDuplicate && r.Ticket != dup {
			dup += "→" + r.Ticket
		}
		ok := "ok"
		if !r.OK {
			ok = "FAIL " + strings.Join(r.Why, "; ")
		}
		fmt.Fprintf(&b, "%-10s %-17s %-11s %-22s %-12s %-9s %s\n", r.ItemID, r.Category, r.Outcome, orDash(dup), orDash(r.Component), orDash(r.Severity), ok)
	}
	fmt.Fprintf(&b, "score: %d/%d\n", score, total)
	return b.String()
}
