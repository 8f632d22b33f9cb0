package web

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/identity"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/triage"
	"github.com/signoff-dev/signoff/verify"
	"github.com/signoff-dev/signoff/workflow"
)

// The bug section of a case page: what triage found (the search hits it
// actually saw, with scores; the crash aggregates and their version
// share), the reproductions, the candidates with side-by-side diffs and
// their verdict tables, and the merge and release records. Every piece is
// read from the store as the signed-in person, and shown with the
// evidence type it was recorded with.

// bugView is the bug section.
type bugView struct {
	Triage     *triageView
	Harnesses  []harnessView
	Candidates []candidateView
	Merge      *signoff.MergeRecord
	Release    *signoff.ReleaseRecord
	Round      int
	Primary    string
	// CurrentHarness is the round's reproduction (proposed, confirmed or
	// frozen); ReviewWaits says it waits for a staff review of its source.
	CurrentHarness string
	ReviewWaits    bool
	// Resume is the command the "Resume triage" button sends, if any.
	Resume string
	// MergeForm is the merge button's data, for an approved case and a
	// person whose role merges; MergeRefused is why a merge sent from this
	// page was refused (nothing merged).
	MergeForm    *mergeFormView
	MergeRefused string
	// Names names every actor the section shows (the id itself when it
	// names no one): ids are on hover.
	Names map[string]string
}

// mergeFormView is what the merge form carries, so that the desk merges
// only what the page showed: a case that moved since (another version, or
// another subject) is refused, never merged.
type mergeFormView struct {
	CandidateID, SubjectDigest string
}

// triageView is what the triage crew recorded.
type triageView struct {
	Status, Outcome, TicketID, Resolves string
	Query                               string
	Hits                                []hitView
	Crashes                             []crashView
	Investigation                       *triage.Investigation
	Assessment                          *triage.Assessment
	Evidence                            []metaView
	Gate                                *crew.Gate
	Action                              *triage.Action
	Notes                               []string
	// Line is the folded section's one-line summary.
	Line string
}

type hitView struct {
	ID, Title, Status, Component, FixedIn, Resolves string
	Score                                           string
	Strong                                          bool
	Why                                             string
}

type crashView struct {
	Signature, StackTop string
	Events, Users       int
	Score               string
	Matched             bool
	FirstSeen, LastSeen time.Time
	Versions, Platforms []shareView
	Why                 string
}

// shareView is one value's share of a crash signature's events.
type shareView struct {
	Key     string
	Count   int
	Percent string
}

type harnessView struct {
	signoff.HarnessRecord
	Spec string
}

type candidateView struct {
	signoff.Candidate
	Rows  []repair.Row
	Files []diffFile
	// Runs and Environment come from the verification report.
	Runs        int
	RunnerImage string
}

// shares orders a count map by count (then key) with percentages.
func shares(m map[string]int) []shareView {
	total := 0
	for _, n := range m {
		total += n
	}
	out := make([]shareView, 0, len(m))
	for k, n := range m {
		pct := ""
		if total > 0 {
			pct = fmt.Sprintf("%.0f%%", 100*float64(n)/float64(total))
		}
		out = append(out, shareView{Key: k, Count: n, Percent: pct})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Key < out[j].Key
	})
	return out
}

func (s *server) bugSection(ctx context.Context, by signoff.Actor, c signoff.Case) (*bugView, error) {
	v := &bugView{Names: map[string]string{}}
	names := s.timelineActors(ctx, c.WorkspaceID)
	defer func() {
		// Every id the section shows, after it is built.
		ids := []string{}
		if v.Triage != nil && v.Triage.Gate != nil {
			ids = append(ids, v.Triage.Gate.ApprovedBy)
		}
		for _, h := range v.Harnesses {
			ids = append(ids, h.ProposedBy)
			if h.StaffReview != nil {
				ids = append(ids, h.StaffReview.By)
			}
		}
		for _, cand := range v.Candidates {
			ids = append(ids, cand.SubmittedBy)
			if cand.Review != nil {
				ids = append(ids, cand.Review.By)
			}
		}
		if v.Merge != nil {
			ids = append(ids, v.Merge.By)
		}
		for _, id := range ids {
			v.Names[id] = names.name(id)
		}
	}()
	tr, err := s.store.GetTriage(ctx, by, c.ID)
	switch {
	case err == nil:
		v.Triage = triageOf(tr)
	case signoff.ErrorCode(err) == signoff.ENOTFOUND:
	default:
		return nil, fmt.Errorf("triage: %w", err)
	}
	v.Resume = resumeCommand(c, by.Role, v.Triage != nil && v.Triage.TicketID != "")
	v.MergeRefused = mergeRefusalFrom(ctx)
	if c.State == workflow.BugApproved && identity.Can(by.Role, identity.OpMerge) && s.o.BugDesk != nil {
		// The card names what the approvals cover; the desk checks them
		// again when the form is sent.
		if cv, err := s.o.BugDesk.Card(ctx, by, c.ID); err == nil {
			v.MergeForm = &mergeFormView{CandidateID: cv.Card.CandidateID, SubjectDigest: cv.SubjectDigest}
		} else {
			s.log.ErrorContext(ctx, "approval card for the merge form", "case", c.ID, "err", err)
		}
	}
	l, err := s.store.GetLoop(ctx, by, c.ID)
	switch {
	case err == nil:
	case signoff.ErrorCode(err) == signoff.ENOTFOUND:
		return v, nil
	default:
		return nil, fmt.Errorf("loop: %w", err)
	}
	st := l.State
	v.Round, v.Primary, v.Merge, v.Release = st.Round, st.Primary, st.Merge, st.Release
	if h := repair.CurrentHarness(st); h != nil {
		v.CurrentHarness, v.ReviewWaits = h.ID, repair.AwaitsStaff(c.State, *h)
	}
	// Newest first: the current reproduction and candidate lead.
	for i := len(st.Harnesses) - 1; i >= 0; i-- {
		h := st.Harnesses[i]
		v.Harnesses = append(v.Harnesses, harnessView{HarnessRecord: h, Spec: indentJSON(h.Spec)})
	}
	for i := len(st.Candidates) - 1; i >= 0; i-- {
		cand := st.Candidates[i]
		cv := candidateView{Candidate: cand, Files: sideBySide(cand.Diff)}
		if len(cand.Report) > 0 {
			var rep verify.Report
			if err := json.Unmarshal(cand.Report, &rep); err == nil {
				cv.Rows, cv.Runs = repair.Table(rep), rep.Runs
			}
		}
		v.Candidates = append(v.Candidates, cv)
	}
	return v, nil
}

// triageLine sums a triage run up in a line: status, outcome, ticket,
// verdict and severity, and how many hits and crash signatures it saw.
func triageLine(tv *triageView) string {
	parts := []string{tv.Status}
	if tv.Outcome != "" {
		parts = append(parts, strings.ReplaceAll(tv.Outcome, "_", " "))
	}
	if tv.TicketID != "" {
		parts = append(parts, "ticket "+tv.TicketID)
	}
	if tv.Investigation != nil && tv.Investigation.Verdict != "" {
		parts = append(parts, "verdict "+tv.Investigation.Verdict)
	}
	if tv.Assessment != nil && tv.Assessment.Severity != "" {
		parts = append(parts, "severity "+tv.Assessment.Severity)
	}
	parts = append(parts, fmt.Sprintf("%d search hit(s), %d crash signature(s)", len(tv.Hits), len(tv.Crashes)))
	return strings.Join(parts, " · ")
}

// triageOf decodes a triage run for the page. A state this version cannot
// read shows the run's columns only.
func triageOf(tr signoff.TriageRun) *triageView {
	tv := &triageView{Status: tr.Status, Outcome: tr.Outcome, TicketID: tr.TicketID, Resolves: tr.Resolves}
	var st crew.State
	if json.Unmarshal(tr.State, &st) != nil {
		return tv
	}
	tv.Query = st.Query.Text
	for _, h := range st.Hits {
		tv.Hits = append(tv.Hits, hitView{ID: h.ID, Title: h.Title, Status: h.Status, Component: h.Component, FixedIn: h.FixedIn,
			Resolves: h.Resolves, Score: fmt.Sprintf("%.3f", h.Score), Strong: h.Strong, Why: strings.Join(h.Why, "; ")})
	}
	sort.SliceStable(tv.Hits, func(i, j int) bool { return tv.Hits[i].Score > tv.Hits[j].Score })
	for _, a := range st.Crashes {
		tv.Crashes = append(tv.Crashes, crashView{Signature: a.Signature, StackTop: a.StackTop, Events: a.Events, Users: a.Users,
			Score: fmt.Sprintf("%.3f", a.Score), Matched: a.Matched, FirstSeen: a.FirstSeen, LastSeen: a.LastSeen,
			Versions: shares(a.Versions), Platforms: shares(a.Platforms), Why: strings.Join(a.Why, "; ")})
	}
	tv.Investigation, tv.Assessment, tv.Gate, tv.Action, tv.Notes = st.Investigation, st.Assessment, st.Gate, st.Action, st.Notes
	tv.Line = triageLine(tv)
	if st.Assessment != nil {
		for k, val := range st.Assessment.Evidence {
			b, err := json.Marshal(val)
			if err != nil {
				continue
			}
			tv.Evidence = append(tv.Evidence, metaView{Key: k, Value: string(b)})
		}
		sort.Slice(tv.Evidence, func(i, j int) bool { return tv.Evidence[i].Key < tv.Evidence[j].Key })
	}
	return tv
}
