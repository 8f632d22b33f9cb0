package web

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/nextstep"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/sse"
	"github.com/signoff-dev/signoff/workflow"
)

// deskLimit is how many cases the desk shows at once; older ones are a
// link away. needsLimit bounds the "Needs me" list the same way.
const (
	deskLimit  = 100
	needsLimit = 200
)

// deskRowView is one row of the desk's tables.
type deskRowView struct {
	ID, Title, Kind, State, StateLabel, Severity, Owner, Age string
	Project, ProjectID                                       string
	Waiting                                                  waitingView
	Created                                                  time.Time
	Version                                                  int64
}

// optionView is one choice of a filter menu.
type optionView struct {
	Value, Label string
	Current      bool
	Href         string
}

// countView is one kind of thing waiting on the signed-in person.
type countView struct {
	Action, Label string
	N             int
}

// deskView is the desk page: what needs the signed-in person, then every
// case, filtered.
type deskView struct {
	Needs      []deskRowView
	NeedsTotal int
	NeedsCut   bool
	Counts     []countView
	Rows       []deskRowView
	// Kind and State are the filters; States are the chosen kind's own
	// states (none before a kind is chosen), Kinds the kind links.
	State, Kind string
	Query       string
	States      []optionView
	Kinds       []optionView
	Older       string // query string of the next page, if any
	Filtered    bool
}

// deskFilter reads the desk's filters from the query.
func deskFilter(q url.Values) signoff.DeskFilter {
	return signoff.DeskFilter{Kind: signoff.CaseKind(q.Get("kind")), State: q.Get("state"), Query: q.Get("q"), Before: q.Get("before")}
}

// kindTable is the loop of kind, or nil.
func kindTable(kind signoff.CaseKind) *workflow.Table {
	switch kind {
	case signoff.KindBug:
		return workflow.Bug
	case signoff.KindChange:
		return workflow.Change
	}
	return nil
}

// menuKind is the kind whose states the state menu lists: the chosen one,
// or the kind a state given alone belongs to (bug first).
func menuKind(kind signoff.CaseKind, state string) signoff.CaseKind {
	if kind != "" || state == "" {
		return kind
	}
	for _, k := range []signoff.CaseKind{signoff.KindBug, signoff.KindChange} {
		if kindTable(k).IsState(state) {
			return k
		}
	}
	return ""
}

// inboxStates are the states in which a case can wait on a person: those
// where nextstep, asked for an operator with every person-facing fact
// set, answers "you" or "stuck, and you can help". Derived, so a new
// person's step in nextstep is in the inbox without a second list.
var inboxStates = func() []string {
	var out []string
	me := signoff.Actor{ID: "act_inbox_probe", Role: signoff.RoleOperator}
	for _, tb := range []*workflow.Table{workflow.Bug, workflow.Change} {
		for _, st := range tb.States {
			f := nextstep.Facts{Kind: tb.Kind, State: st, Me: me, PendingDecisions: 1, HarnessReviewWaits: true}
			if nextstep.Next(f).Needs() && !slices.Contains(out, st) {
				out = append(out, st)
			}
		}
	}
	return out
}()

// deskPolicies reads the approval policies the rows awaiting approval are
// judged under, once per project (bugs) and once for the workspace
// (changes); a policy that cannot be read leaves the counts out.
type deskPolicies struct {
	s      *server
	by     signoff.Actor
	bug    map[string]*approval.Policy
	change *approval.Policy
	group  []string
	read   bool
}

func (p *deskPolicies) of(ctx context.Context, c signoff.Case) *approval.Policy {
	switch c.Kind {
	case signoff.KindBug:
		if pol, ok := p.bug[c.ProjectID]; ok {
			return pol
		}
		var pol *approval.Policy
		if rs, err := p.s.store.GetRepoSettings(ctx, p.by, c.ProjectID); err == nil {
			v := bugdesk.Policy(rs)
			pol = &v
		}
		if p.bug == nil {
			p.bug = map[string]*approval.Policy{}
		}
		p.bug[c.ProjectID] = pol
		return pol
	case signoff.KindChange:
		if !p.read {
			p.read = true
			if p.s.o.ChangeDesk != nil {
				if cp, _, err := p.s.o.ChangeDesk.Policy(ctx, c.WorkspaceID); err == nil {
					p.change = &approval.Policy{Quorum: cp.Approvals.Required, NoSelfApproval: cp.NoSelfApproval, ProposerCannotApprove: cp.ProposerCannotApprove}
					p.group = cp.Approvals.Group
				}
			}
		}
		return p.change
	}
	return nil
}

// deskStep says who acts next on a listed case, from the facts the desk's
// query read with it (no further read per row but the policies).
func (s *server) deskStep(ctx context.Context, by signoff.Actor, d signoff.DeskCase, pols *deskPolicies) nextstep.Step {
	c := d.Case
	f := nextstep.Facts{Kind: c.Kind, State: c.State, Me: by, OpenedBy: c.CreatedBy, PendingDecisions: d.PendingDecisions,
		Approvers: d.Approvers, ProposedBy: d.PlanProposer}
	if d.Loop != nil {
		if cand := repair.LatestCandidate(*d.Loop); cand != nil {
			f.ProposedBy = cand.SubmittedBy
		}
		if h := repair.CurrentHarness(*d.Loop); h != nil {
			f.HarnessReviewWaits = repair.AwaitsStaff(c.State, *h)
		}
	}
	if c.State == workflow.BugAwaitingApproval || c.State == workflow.ChangeAwaitingApproval {
		if pol := pols.of(ctx, c); pol != nil {
			f.Quorum, f.NoSelfApproval, f.ProposerCannotApprove = pol.Quorum, pol.NoSelfApproval, pol.ProposerCannotApprove
			if c.Kind == signoff.KindChange {
				f.ApproverGroup = pols.group
			}
		} else {
			// Unknown policy: exclude as the strictest one would, so
			// the inbox never offers what the gate will refuse.
			f.NoSelfApproval, f.ProposerCannotApprove = true, true
		}
	}
	return nextstep.Next(f)
}

func (s *server) rowView(ctx context.Context, by signoff.Actor, d signoff.DeskCase, pols *deskPolicies, base string) deskRowView {
	c := d.Case
	st := s.deskStep(ctx, by, d, pols)
	project := d.ProjectName
	if project == "" {
		project = c.ProjectID
	}
	// A title an agent or a person typed: its hidden characters are marked,
	// so an override cannot reverse the rest of its cell.
	title := markHidden(c.Title)
	if strings.TrimSpace(title) == "" {
		title = c.ID
	}
	return deskRowView{ID: c.ID, Title: title, Kind: string(c.Kind), State: c.State, StateLabel: st.Label, Severity: d.Severity, Owner: d.Owner,
		Project: project, ProjectID: c.ProjectID, Waiting: waitingFor(st, c, base, s.approvalKey()),
		Age: age(s.o.Now(), c.CreatedAt), Created: c.CreatedAt, Version: c.Version}
}

// actionWords name the inbox's counts, in the order shown.
var actionWords = []struct{ action, label string }{
	{string(nextstep.ActApprove), "to approve"},
	{string(nextstep.ActDecide), "to decide"},
	{string(nextstep.ActReviewHarness), "reproductions to review"},
	{string(nextstep.ActMerge), "to merge"},
	{string(nextstep.ActExecute), "to execute"},
	{string(nextstep.ActResume), "stuck"},
	{string(nextstep.ActPlan), "to plan again"},
}

func counts(rows []deskRowView) []countView {
	var out []countView
	for _, w := range actionWords {
		n := 0
		for _, r := range rows {
			if r.Waiting.Action == w.action {
				n++
			}
		}
		if n > 0 {
			out = append(out, countView{Action: w.action, Label: w.label, N: n})
		}
	}
	return out
}

func (s *server) desk(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx, by := r.Context(), sess.Actor
	q := r.URL.Query()
	f := deskFilter(q)
	mk := menuKind(f.Kind, f.State)
	if f.Kind != "" && f.State != "" && kindTable(f.Kind) != nil && !kindTable(f.Kind).IsState(f.State) {
		// A state of the other kind, left from before the kind changed.
		f.State = ""
	}
	f.Limit = deskLimit + 1
	cases, err := s.store.DeskCases(ctx, by, f)
	if err != nil {
		return err
	}
	needs, err := s.store.DeskCases(ctx, by, signoff.DeskFilter{States: inboxStates, Limit: needsLimit + 1})
	if err != nil {
		return err
	}
	v := deskView{State: f.State, Kind: string(f.Kind), Query: f.Query,
		Filtered: f.State != "" || f.Kind != "" || strings.TrimSpace(f.Query) != ""}
	for _, k := range []struct{ kind, label string }{{"", "All kinds"}, {string(signoff.KindBug), "Bugs"}, {string(signoff.KindChange), "Changes"}} {
		link := url.Values{}
		if k.kind != "" {
			link.Set("kind", k.kind)
		}
		if f.Query != "" {
			link.Set("q", f.Query)
		}
		href := "/desk"
		if len(link) > 0 {
			href += "?" + link.Encode()
		}
		v.Kinds = append(v.Kinds, optionView{Value: k.kind, Label: k.label, Current: k.kind == string(f.Kind), Href: href + "#all"})
	}
	if tb := kindTable(mk); tb != nil {
		for _, st := range tb.States {
			v.States = append(v.States, optionView{Value: st, Label: nextstep.Label(mk, st), Current: st == f.State})
		}
	}
	if len(cases) > deskLimit {
		cases = cases[:deskLimit]
		next := url.Values{}
		for _, k := range []string{"state", "kind", "q"} {
			if q.Get(k) != "" {
				next.Set(k, q.Get(k))
			}
		}
		next.Set("before", cases[len(cases)-1].ID)
		v.Older = "/desk?" + next.Encode()
	}
	pols := &deskPolicies{s: s, by: by}
	base := s.baseURL(r)
	for _, c := range cases {
		v.Rows = append(v.Rows, s.rowView(ctx, by, c, pols, base))
	}
	if len(needs) > needsLimit {
		needs, v.NeedsCut = needs[:needsLimit], true
	}
	for _, c := range needs {
		if row := s.rowView(ctx, by, c, pols, base); row.Waiting.Needs {
			v.Needs = append(v.Needs, row)
		}
	}
	v.NeedsTotal, v.Counts = len(v.Needs), counts(v.Needs)
	me := by
	s.render(w, r, http.StatusOK, "desk", page{Title: "Desk", Me: &me, CSRF: sess.CSRF, Script: "desk.js", Body: v})
	return nil
}

// deskRow answers one case's row for the desk's script, or 204 when the
// case does not match the filters in the query (the desk the script runs
// on). With needs=1 it answers the row only when the case waits on the
// signed-in person (the "Needs me" table).
func (s *server) deskRow(w http.ResponseWriter, r *http.Request, sess signoff.WebSession) error {
	ctx := r.Context()
	f := deskFilter(r.URL.Query())
	needs := r.URL.Query().Get("needs") == "1"
	if needs {
		f = signoff.DeskFilter{}
	}
	f.Before, f.ID, f.Limit = "", r.PathValue("id"), 1
	if err := signoff.CheckID("case", signoff.PrefixCase, f.ID); err != nil {
		return signoff.Errorf(signoff.ENOTFOUND, "There is no such case.")
	}
	cases, err := s.store.DeskCases(ctx, sess.Actor, f)
	if err != nil {
		return err
	}
	var row deskRowView
	if len(cases) > 0 {
		row = s.rowView(ctx, sess.Actor, cases[0], &deskPolicies{s: s, by: sess.Actor}, s.baseURL(r))
	}
	if len(cases) == 0 || (needs && !row.Waiting.Needs) {
		// Missing, another workspace's, or filtered out: the script
		// inserts nothing either way.
		if _, err := s.store.GetCase(ctx, sess.Actor, f.ID); err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	var buf bytes.Buffer
	if err := s.pages["desk"].ExecuteTemplate(&buf, "row", row); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
	return nil
}

// eventsPath is the desk's live stream of ledger events (Server-Sent
// Events), for the signed-in person's session. It reuses the store's
// visibility filter (StreamEvents) as the person sees it, starts at the
// head (or after Last-Event-ID when the browser reconnects) and sends each
// event's ledger sequence as its id.
const eventsPath = "/desk/events"

const (
	eventBatch       = 1000
	eventWriteWindow = 30 * time.Second
	eventKeepalive   = 15 * time.Second
	// maxStreamsPerActor bounds one person's open streams in this
	// process (a few tabs).
	maxStreamsPerActor = 8
)

// streamData is the data line of an event. The desk's script needs the
// payload of case.created and case.transitioned only; other events go
// without it, as the "ledger" event, to keep the stream light.
type streamData struct {
	Seq     int64           `json:"seq"`
	Type    string          `json:"type"`
	CaseID  string          `json:"case_id,omitempty"`
	ActorID string          `json:"actor_id"`
	Time    time.Time       `json:"time"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

func writeSSE(b *bytes.Buffer, e signoff.Event) {
	d := streamData{Seq: e.Seq, Type: e.Type, CaseID: e.CaseID, ActorID: e.ActorID, Time: e.Time}
	name := "ledger"
	if e.Type == "case.created" || e.Type == "case.transitioned" {
		name, d.Payload = e.Type, e.Payload
	}
	data, err := json.Marshal(d)
	if err != nil {
		d.Payload = nil
		data, _ = json.Marshal(d)
	}
	b.WriteString("id: ")
	b.WriteString(strconv.FormatInt(e.Seq, 10))
	b.WriteString("\nevent: ")
	b.WriteString(name)
	b.WriteString("\ndata: ")
	b.Write(data)
	b.WriteString("\n\n")
}

func (s *server) deskEvents(w http.ResponseWriter, r *http.Request) {
	sess, secret, ok := s.session(r)
	if !ok {
		s.fail(w, r, errNotSignedIn)
		return
	}
	by := sess.Actor
	var after int64
	resume := false
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			s.fail(w, r, signoff.Errorf(signoff.EINVALID, "Last-Event-ID must be an event sequence number."))
			return
		}
		after, resume = n, true
	}
	if !s.streams.Acquire(by.ID) {
		s.fail(w, r, signoff.Errorf(signoff.ERATELIMIT, "Too many live desks open at once; close a tab."))
		return
	}
	defer s.streams.Release(by.ID)
	ctx := r.Context()
	call := func() (context.Context, context.CancelFunc) { return context.WithTimeout(ctx, requestTimeout) }
	if !resume {
		cctx, cancel := call()
		head, err := s.store.HeadSeq(cctx, by.WorkspaceID)
		cancel()
		if err != nil {
			s.fail(w, r, err)
			return
		}
		after = head
	}
	// poll reads the next batch and where the one after it starts (see
	// httpapi's stream: past a short batch, the head read before it).
	poll := func() ([]signoff.Event, int64, error) {
		cctx, cancel := call()
		defer cancel()
		head, err := s.store.HeadSeq(cctx, by.WorkspaceID)
		if err != nil {
			return nil, 0, err
		}
		evs, err := s.store.StreamEvents(cctx, by, after, eventBatch)
		if err != nil {
			return nil, 0, err
		}
		next := after
		if len(evs) > 0 {
			next = evs[len(evs)-1].Seq
		}
		if len(evs) < eventBatch && head > next {
			next = head
		}
		return evs, next, nil
	}
	// Taken before each read: a commit after the read still wakes the
	// wait below (EventsCommitted).
	wake := sse.Commits(s.store)
	evs, next, err := poll()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, ok := s.openStream(w, r)
	defer p.close()
	if !ok {
		return
	}
	var buf bytes.Buffer
	lastAuth := time.Now()
	for {
		if len(evs) > 0 {
			buf.Reset()
			for _, e := range evs {
				writeSSE(&buf, e)
			}
			if !p.send(buf.Bytes()) {
				return
			}
		}
		after = next
		if !p.wait(len(evs) >= eventBatch, wake) {
			return
		}
		if time.Since(lastAuth) >= s.o.EventRecheck {
			// A session that ended (signed out, expired, person disabled)
			// stops receiving events.
			cctx, cancel := call()
			cur, err := s.store.WebSession(cctx, secret)
			cancel()
			if err != nil || cur.Actor.ID != by.ID || cur.Actor.Role != by.Role {
				return
			}
			lastAuth = time.Now()
		}
		if !p.keepalive() {
			return
		}
		wake = sse.Commits(s.store)
		if evs, next, err = poll(); err != nil {
			if ctx.Err() == nil {
				s.log.ErrorContext(ctx, "desk event stream", "err", err)
			}
			return
		}
	}
}

// caseStates lists every state of both machines once, bug states first
// (the charts' order).
func caseStates() []string {
	out := slices.Clone(workflow.Bug.States)
	for _, st := range workflow.Change.States {
		if !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	return out
}
