package crew

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/airlock"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/triage"
	"github.com/signoff-dev/signoff/workflow"
)

// ---- writer ----

type ticketArgs struct {
	Title string `json:"title" jsonschema:"a one-line summary an engineer can act on"`
	Body  string `json:"body" jsonschema:"what happens, on which devices and versions, the evidence"`
}

// Bounds of a ticket's title (characters) and body (bytes) after
// normalizing and quoting: the tracker's own, checked before a person is
// asked, so an approved ticket can always be filed.
const (
	maxTitle = 300
	maxBody  = 16 << 10
)

func createTicketTool() *agent.Tool {
	return agent.NewTool("create_ticket", "File the new ticket. High or critical severity, or a low-confidence investigation, waits for a person first.",
		func(ctx context.Context, env *agent.Env, in ticketArgs) (agent.Result, error) {
			return createTicket(ctx, env, in)
		})
}

// TicketSubject is what the gate asks a person about and, once they
// approved it, exactly what is filed: the writer's title and body,
// normalized and with instruction-like text quoted, and the fields the
// server decided (severity, component, owner from CODEOWNERS, the
// numbers). Its digest is what the decision binds; a model rewording the
// same ticket later does not change what was approved.
type TicketSubject struct {
	Title        string         `json:"title"`
	Body         string         `json:"body"`
	Severity     string         `json:"severity"`
	Component    string         `json:"component"`
	Owner        string         `json:"owner"`
	Confidence   float64        `json:"confidence"`
	Rationale    string         `json:"rationale"`
	Evidence     map[string]any `json:"evidence"`
	RegressionOf string         `json:"regression_of"`
}

// decided is the part of a subject the server decided, for comparing an
// approved subject with the run it is filed for.
func (s TicketSubject) decided() (string, error) {
	s.Title, s.Body = "", ""
	return canonical.Digest(s)
}

// propose builds the subject of the writer's words over the run's records.
// notes say what was quoted, and why.
func propose(st State, in ticketArgs) (TicketSubject, []string, error) {
	title, tSignals := neutralize(normalizeTitle(in.Title))
	body, bSignals := neutralize(normalizeBody(in.Body))
	// A ticket is read title then body: an instruction cut between them
	// (each half harmless alone) quotes both.
	if sig := detect(outsideMarks(title) + " " + outsideMarks(body)); len(sig) > 0 && body != "" {
		title, body = quoteAll(title), quoteAll(body)
		tSignals = slices.Compact(slices.Sorted(slices.Values(append(tSignals, sig...))))
		bSignals = slices.Compact(slices.Sorted(slices.Values(append(bSignals, sig...))))
	}
	if title == "" {
		return TicketSubject{}, nil, signoff.Errorf(signoff.EINVALID, "title must not be empty")
	}
	if n := utf8.RuneCountInString(title); n > maxTitle {
		return TicketSubject{}, nil, signoff.Errorf(signoff.EINVALID, "title is %d characters after normalizing and quoting; at most %d", n, maxTitle)
	}
	if len(body) > maxBody {
		return TicketSubject{}, nil, signoff.Errorf(signoff.EINVALID, "body is %d bytes after normalizing and quoting; at most %d", len(body), maxBody)
	}
	var notes []string
	for _, f := range []struct {
		what    string
		signals []string
	}{{"title", tSignals}, {"body", bSignals}} {
		if len(f.signals) > 0 {
			notes = append(notes, fmt.Sprintf("ticket text neutralized: the writer's %s carried instruction-like text (airlock signals: %s); it is filed quoted and marked %q…%q, never as the writer's own words",
				f.what, strings.Join(f.signals, ", "), quoteOpen, quoteClose))
		}
	}
	sub, err := decidedOf(st)
	if err != nil {
		return TicketSubject{}, nil, err
	}
	sub.Title, sub.Body = title, body
	return sub, notes, nil
}

// decidedOf is a subject with only what the server decided for the run:
// the assessment and the investigation's confidence.
func decidedOf(st State) (TicketSubject, error) {
	inv, a := st.Investigation, st.Assessment
	if inv == nil || a == nil {
		return TicketSubject{}, signoff.Errorf(signoff.ECONFLICT, "the run has no investigation and assessment")
	}
	// Round-trip the evidence through JSON so a fresh subject compares
	// equal to one decoded from a stored decision.
	var ev map[string]any
	if b, err := json.Marshal(a.Evidence); err != nil {
		return TicketSubject{}, err
	} else if err := json.Unmarshal(b, &ev); err != nil {
		return TicketSubject{}, err
	}
	return TicketSubject{Severity: a.Severity, Component: a.Component, Owner: a.Owner,
		Confidence: inv.Confidence, Rationale: a.Rationale, Evidence: ev, RegressionOf: inv.RegressionOf}, nil
}

// gated reports whether the run's ticket waits for a person: the higher
// of the recorded severity and the one the server's numbers give is at
// the gate's floor, or the investigation is not confident enough.
func gated(st State) bool {
	return triage.SeverityRank(gateSeverity(st)) >= triage.SeverityRank(GateSeverity) || st.Investigation.Confidence < MinConfidence
}

// gateSeverity is the severity the gate reads: the recorded one, or the
// server's assessment when that is higher.
func gateSeverity(st State) string {
	if triage.SeverityRank(st.Assessed) > triage.SeverityRank(st.Assessment.Severity) {
		return st.Assessed
	}
	return st.Assessment.Severity
}

func createTicket(ctx context.Context, env *agent.Env, in ticketArgs) (agent.Result, error) {
	if strings.TrimSpace(in.Title) == "" || len(in.Title) > 4*maxTitle {
		return agent.Result{}, signoff.Errorf(signoff.EINVALID, "title must be 1 to %d characters", maxTitle)
	}
	r, err := loadRun(ctx, env.Store, env.Actor, env.Task.CaseID)
	if err != nil {
		return agent.Result{}, err
	}
	inv, a := r.st.Investigation, r.st.Assessment
	if inv == nil || inv.Verdict != triage.VerdictNew || a == nil {
		return agent.Result{}, signoff.Errorf(signoff.ECONFLICT, "a ticket is filed only for a new bug with a recorded severity and component; use add_comment for a duplicate or request_info")
	}
	if r.Status == signoff.TriageDone {
		if g := r.st.Gate; g != nil && g.TicketID != "" && g.TicketID == r.TicketID {
			// Filed already (by the server, after the person's answer):
			// the task is done with that ticket, whatever the words now.
			t, err := env.Store.GetTicket(ctx, env.Actor, r.ProjectID, g.TicketID)
			if err != nil {
				return agent.Result{}, err
			}
			var s TicketSubject
			json.Unmarshal(g.Proposal, &s)
			return filed(t, s, g.ApprovedBy, "Already filed as a person approved it; nothing new was filed. "), nil
		}
		if f := r.st.Filing; f != nil && r.st.Gate == nil && r.TicketID != "" && r.Outcome == triage.OutcomeNewTicket {
			// Filed already, below the gate, by a worker that raced this
			// one: the task is done with that ticket.
			t, err := env.Store.GetTicket(ctx, env.Actor, r.ProjectID, r.TicketID)
			if err != nil {
				return agent.Result{}, err
			}
			sub, err := decidedOf(r.st)
			if err != nil {
				return agent.Result{}, err
			}
			return filed(t, sub, "auto", "Already filed; nothing new was filed. "), nil
		}
		return agent.Result{}, signoff.Errorf(signoff.ECONFLICT, "this run is already done (%s %s); nothing more is filed", r.Outcome, r.TicketID)
	}
	sub, notes, err := propose(r.st, in)
	if err != nil {
		return agent.Result{}, err
	}
	if !gated(r.st) {
		r.st.Notes = append(r.st.Notes, notes...)
		t, err := fileUngated(ctx, env.Store, env.Actor, r, sub)
		if err != nil {
			return agent.Result{}, err
		}
		return filed(t, sub, "auto", ""), nil
	}
	// The gate. A run asks at most once per subject it stands behind: an
	// answer already given (before a restart, or while this model was
	// being asked again) is applied, never asked anew.
	if r.st.Gate == nil {
		if err := adoptGate(ctx, env.Store, env.Actor, r, sub); err != nil {
			return agent.Result{}, err
		}
	}
	if r.st.Gate == nil {
		r.st.Notes = append(r.st.Notes, notes...)
		return askGate(ctx, env, r, sub)
	}
	g := r.st.Gate
	d, err := env.Store.GetDecision(ctx, env.Actor, g.DecisionID)
	if err != nil {
		return agent.Result{}, err
	}
	switch d.Status {
	case signoff.DecisionPending:
		return agent.Result{Text: "PAUSED: decision " + d.ID + " still waits for a person. Nothing was filed; no new decision was asked.", Park: true}, nil
	case signoff.DecisionApproved:
		approved, err := checkGate(r, d)
		if err != nil {
			why := signoff.ErrorMessage(err)
			if err := gateNeedsPerson(ctx, env.Store, env.Actor, r, env.Task.ID, why); err != nil {
				return agent.Result{}, err
			}
			return agent.Result{Text: "STOPPED: " + why + ". Nothing was filed; the case is with a person.", Park: true}, nil
		}
		t, by, err := fileApproved(ctx, env.Store, env.Actor, r, d, approved)
		if err != nil {
			return agent.Result{}, err
		}
		note := ""
		if approved.Title != sub.Title || approved.Body != sub.Body {
			note = "A person approved this ticket's exact title and body in decision " + d.ID +
				"; your new wording was not used. "
		}
		return filed(t, approved, by, note), nil
	case signoff.DecisionRejected:
		why := "a person rejected this ticket"
		if d.Reason != "" {
			why += ": " + d.Reason
		}
		if err := gateNeedsPerson(ctx, env.Store, env.Actor, r, env.Task.ID, why); err != nil {
			return agent.Result{}, err
		}
		return agent.Result{Text: "STOPPED: " + why + ". Nothing was filed; the case is with a person.", Park: true}, nil
	}
	// Expired or replaced: ask again, over the subject the run stood behind
	// unless what the server decided has changed since.
	again := sub
	var old TicketSubject
	if json.Unmarshal(g.Proposal, &old) == nil {
		od, err1 := old.decided()
		nd, err2 := sub.decided()
		if err1 == nil && err2 == nil && od == nd {
			again = old
		}
	}
	return askGate(ctx, env, r, again)
}

// filed is create_ticket's answer once a ticket exists.
// The note, when there is one, is in the task's output too: the task ends
// with this answer, so no later turn would show it to the model.
func filed(t triage.Ticket, sub TicketSubject, approvedBy, note string) agent.Result {
	out := map[string]any{"ticket_id": t.ID, "severity": t.Severity, "approved_by": approvedBy}
	if note != "" {
		out["note"] = strings.TrimSpace(note)
	}
	return agent.Result{Text: fmt.Sprintf("%sFiled %s (%s, %s, approved by %s).", note, t.ID, t.Severity, sub.Component, approvedBy),
		Output: out, Final: true}
}

// askGate requests a person's decision over sub, moves the case to the
// gate, records the gate in the run and parks the task.
func askGate(ctx context.Context, env *agent.Env, r *run, sub TicketSubject) (agent.Result, error) {
	subject, err := json.Marshal(sub)
	if err != nil {
		return agent.Result{}, err
	}
	why := gateReason(gateSeverity(r.st), sub.Confidence)
	if s := gateSeverity(r.st); s != sub.Severity && sub.Confidence >= MinConfidence {
		why = fmt.Sprintf("the numbers give severity %s (recorded %s), which needs a person's approval", s, sub.Severity)
	}
	// The case moves to the gate in the transaction that asks: the chat
	// card the request opens records the case's state and version (a
	// move after it would leave the card stale before anyone could answer
	// it), and nobody sees the case at the gate without its decision. A
	// case at the gate already (asked again) does not move.
	nd, err := env.Store.RequestDecisionMoving(ctx, env.Actor, r.CaseID, GateKind, subject, 0,
		workflow.BugTriaging, signoff.TransitionInput{Command: "request_triage_approval", Note: "gate: " + why})
	if err != nil {
		return agent.Result{}, err
	}
	r.st.Gate = &Gate{DecisionID: nd.ID, Digest: nd.SubjectDigest, Proposal: nd.Subject, Status: nd.Status}
	r.Status = signoff.TriageParked
	if err := r.save(ctx, env.Store, env.Actor); err != nil {
		return agent.Result{}, err
	}
	return agent.Result{Text: fmt.Sprintf("PAUSED: %s; decision %s waits for a person. Nothing was filed.", why, nd.ID), Park: true}, nil
}

func gateReason(severity string, confidence float64) string {
	if confidence < MinConfidence {
		return fmt.Sprintf("investigation confidence %.2f is below %.2f", confidence, MinConfidence)
	}
	return "severity " + severity + " needs a person's approval"
}

// adoptGate finds a gate decision of this case the run lost track of (a
// restart between asking and saving) and takes it as the run's gate when
// it is one this tool could have asked: by the same identity, over what
// the server decided for this run, with a title and body already in the
// form propose gives them (normalized, instructions quoted). Only a live
// decision (pending or answered) of this round of the run is adopted:
// never one asked before the case was sent back to triage.
func adoptGate(ctx context.Context, st signoff.Store, by signoff.Actor, r *run, sub TicketSubject) error {
	ds, err := st.ListDecisions(ctx, by, r.CaseID)
	if err != nil {
		return err
	}
	want, err := sub.decided()
	if err != nil {
		return err
	}
	for _, d := range ds { // newest first
		if d.Kind != GateKind || d.CaseID != r.CaseID {
			continue
		}
		if d.Status != signoff.DecisionPending && d.Status != signoff.DecisionApproved && d.Status != signoff.DecisionRejected {
			continue
		}
		if !r.st.Since.IsZero() && !d.CreatedAt.After(r.st.Since) {
			continue // an earlier round's: its approval may have filed a ticket already
		}
		var s TicketSubject
		if d.RequestedBy != by.ID || json.Unmarshal(d.Subject, &s) != nil {
			continue
		}
		if got, err := s.decided(); err != nil || got != want {
			continue
		}
		if t, _ := neutralize(normalizeTitle(s.Title)); t != s.Title {
			continue
		}
		if b, _ := neutralize(normalizeBody(s.Body)); b != s.Body {
			continue
		}
		if len(detect(outsideMarks(s.Title)+" "+outsideMarks(s.Body))) > 0 {
			continue // an instruction cut between title and body, unquoted
		}
		r.st.Gate = &Gate{DecisionID: d.ID, Digest: d.SubjectDigest, Proposal: d.Subject, Status: d.Status}
		r.st.Notes = append(r.st.Notes, "gate: took back decision "+d.ID+", asked before the run recorded it")
		r.Status = signoff.TriageParked
		return r.save(ctx, st, by)
	}
	return nil
}

// Reasons an answered gate decision is not applied to a run.
const (
	gateOtherDecision = "the run's gate names another decision"
	gateOtherCase     = "the decision is about another case"
	gateOtherKind     = "the decision is not a ticket gate"
	gateOtherDigest   = "the decision was made over a different subject than the run's gate proposal"
	gateBadProposal   = "the run's gate proposal does not have the digest the person approved"
	gateDrifted       = "severity, component, owner or evidence changed since the person approved"
)

// checkGate returns the subject a person approved in d for r, after
// checking that d is the run's own gate decision, over exactly the
// proposal the run stored, and that what the server decided still holds.
// A decision over anything else never files this run's ticket.
func checkGate(r *run, d signoff.Decision) (TicketSubject, error) {
	g := r.st.Gate
	refuse := func(why string) (TicketSubject, error) {
		return TicketSubject{}, signoff.Errorf(signoff.ECONFLICT, "gate decision %s is not applied: %s", d.ID, why)
	}
	switch {
	case g == nil || d.ID != g.DecisionID:
		return refuse(gateOtherDecision)
	case d.CaseID != r.CaseID:
		return refuse(gateOtherCase)
	case d.Kind != GateKind:
		return refuse(gateOtherKind)
	case d.SubjectDigest != g.Digest:
		return refuse(gateOtherDigest)
	}
	for _, raw := range []json.RawMessage{g.Proposal, d.Subject} {
		if got, err := canonical.Digest(raw); err != nil || got != g.Digest {
			return refuse(gateBadProposal)
		}
	}
	var s TicketSubject
	if err := json.Unmarshal(g.Proposal, &s); err != nil {
		return refuse(gateBadProposal)
	}
	now, err := decidedOf(r.st)
	if err != nil {
		return refuse(gateBadProposal)
	}
	want, err1 := now.decided()
	got, err2 := s.decided()
	if err1 != nil || err2 != nil || want != got {
		return refuse(gateDrifted)
	}
	return s, nil
}

// filingLease is how long a worker's claim to file an approved ticket
// holds off others: far longer than filing takes, so only a crashed
// worker's claim runs out.
const filingLease = time.Minute

// fileApproved files the subject a person approved in d, with any severity
// they set, as approved by them: once, whoever gets here first (a worker
// resuming the run or a writer asked again), and again after a restart
// only if it was not filed before.
func fileApproved(ctx context.Context, st signoff.Store, by signoff.Actor, r *run, d signoff.Decision, sub TicketSubject) (triage.Ticket, string, error) {
	g := r.st.Gate
	approvedBy := "human:" + d.DecidedBy
	if g.TicketID != "" {
		t, err := st.GetTicket(ctx, by, r.ProjectID, g.TicketID)
		return t, approvedBy, err
	}
	var amend struct {
		Severity string `json:"severity"`
	}
	if len(d.Amendment) > 0 && json.Unmarshal(d.Amendment, &amend) == nil && triage.SeverityRank(amend.Severity) >= 0 {
		sub.Severity = amend.Severity
	}
	if g.Filing {
		// Claimed before: by a worker that crashed before recording the
		// ticket, or by one still filing it. The ticket may exist already.
		if t, ok, err := filedBefore(ctx, st, by, r, sub, approvedBy); err != nil {
			return triage.Ticket{}, "", err
		} else if ok {
			return t, approvedBy, recordFiled(ctx, st, by, r, t, sub)
		}
		if g.FilingAt != nil && time.Since(*g.FilingAt) < filingLease {
			// Another worker is filing it now: try again later (the job
			// retries) rather than file it twice.
			return triage.Ticket{}, "", signoff.Errorf(signoff.ECONFLICT, "the approved ticket of %s is being filed since %s", r.CaseID, g.FilingAt.Format(time.RFC3339))
		}
	}
	// Claim the filing: the run's version makes a second worker's claim
	// fail, so one approval files one ticket; a claim older than the lease
	// is a crashed worker's, taken over.
	now := time.Now().UTC()
	g.Status, g.ApprovedBy, g.Filing, g.FilingAt = d.Status, approvedBy, true, &now
	if err := r.save(ctx, st, by); err != nil {
		return triage.Ticket{}, "", fmt.Errorf("claim the approved ticket of %s: %w", r.CaseID, err)
	}
	t, err := fileTicket(ctx, st, by, r, sub, approvedBy)
	return t, approvedBy, err
}

// fileUngated files the run's ungated ticket once, whichever of the
// workers driving the run (each asking its model) gets here first: the
// claim saved on the run's version lets one of them file; a worker that
// finds a claim looks for the ticket it filed, waits while the claim is
// younger than the lease, and takes over a crashed worker's claim.
func fileUngated(ctx context.Context, st signoff.Store, by signoff.Actor, r *run, sub TicketSubject) (triage.Ticket, error) {
	if f := r.st.Filing; f != nil {
		claimed := sub
		claimed.Title, claimed.Body = f.Title, f.Body
		if t, ok, err := filedBefore(ctx, st, by, r, claimed, "auto"); err != nil {
			return triage.Ticket{}, err
		} else if ok {
			err := recordFiled(ctx, st, by, r, t, claimed)
			if signoff.ErrorCode(err) == signoff.ECONFLICT {
				return filedElsewhere(ctx, st, by, r) // its filer recorded it meanwhile
			}
			return t, err
		}
		if time.Since(f.At) < filingLease {
			return filedElsewhere(ctx, st, by, r)
		}
	}
	r.st.Filing = &Filing{At: time.Now().UTC(), Title: sub.Title, Body: sub.Body}
	if err := r.save(ctx, st, by); err != nil {
		if signoff.ErrorCode(err) == signoff.ECONFLICT {
			return filedElsewhere(ctx, st, by, r)
		}
		return triage.Ticket{}, fmt.Errorf("claim the ticket of %s: %w", r.CaseID, err)
	}
	t, err := fileTicket(ctx, st, by, r, sub, "auto")
	if signoff.ErrorCode(err) == signoff.ECONFLICT {
		// A worker that found the ticket recorded it first.
		return filedElsewhere(ctx, st, by, r)
	}
	return t, err
}

// filingWait is how long a worker that lost the claim to file waits for
// the worker that won it to record the ticket: filing takes milliseconds.
const filingWait = 10 * time.Second

// filedElsewhere waits for another worker's filing of r's ticket and
// answers the ticket it recorded; nothing is filed here. A filing still
// unrecorded after filingWait is refused (ECONFLICT).
func filedElsewhere(ctx context.Context, st signoff.Store, by signoff.Actor, r *run) (triage.Ticket, error) {
	deadline := time.Now().Add(filingWait)
	for {
		cur, err := loadRun(ctx, st, by, r.CaseID)
		if err != nil {
			return triage.Ticket{}, err
		}
		if cur.Status == signoff.TriageDone && cur.TicketID != "" {
			return st.GetTicket(ctx, by, cur.ProjectID, cur.TicketID)
		}
		if time.Now().After(deadline) {
			return triage.Ticket{}, signoff.Errorf(signoff.ECONFLICT, "another worker is filing the ticket of %s; nothing was filed", r.CaseID)
		}
		select {
		case <-ctx.Done():
			return triage.Ticket{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// filedBefore finds the ticket a worker that claimed the filing of sub
// may have filed before it crashed: one with exactly sub's title, body,
// severity, component and owner, approved as approvedBy, that no other
// triage run filed. A ticket of another report that merely looks alike
// (a writer can copy a title) is never taken for it.
func filedBefore(ctx context.Context, st signoff.Store, by signoff.Actor, r *run, sub TicketSubject, approvedBy string) (triage.Ticket, bool, error) {
	ts, err := st.ListTickets(ctx, by, r.ProjectID)
	if err != nil {
		return triage.Ticket{}, false, err
	}
	var runs []signoff.TriageRun
	for _, t := range ts {
		if t.Title != sub.Title || t.Description != sub.Body || t.Severity != sub.Severity || t.Component != sub.Component ||
			t.Owner != sub.Owner || t.ApprovedBy != approvedBy {
			continue
		}
		if runs == nil {
			if runs, err = st.ListTriage(ctx, by, r.ProjectID, ""); err != nil {
				return triage.Ticket{}, false, err
			}
		}
		if !slices.ContainsFunc(runs, func(o signoff.TriageRun) bool { return o.CaseID != r.CaseID && o.TicketID == t.ID }) {
			return t, true, nil
		}
	}
	return triage.Ticket{}, false, nil
}

// fileTicket files sub in the run's project and records it in the run.
func fileTicket(ctx context.Context, st signoff.Store, by signoff.Actor, r *run, sub TicketSubject, approvedBy string) (triage.Ticket, error) {
	t, err := st.CreateTicket(ctx, by, r.ProjectID, triage.Ticket{
		Title: sub.Title, Status: "open", Severity: sub.Severity, Component: sub.Component, Owner: sub.Owner,
		AffectedVersions: versions(ownVersion(r.st)), Created: time.Now().UTC().Format("2006-01-02"),
		Description: sub.Body, ApprovedBy: approvedBy,
	})
	if err != nil {
		return triage.Ticket{}, err
	}
	return t, recordFiled(ctx, st, by, r, t, sub)
}

// recordFiled records a filed ticket in the run and moves the case.
func recordFiled(ctx context.Context, st signoff.Store, by signoff.Actor, r *run, t triage.Ticket, sub TicketSubject) error {
	r.st.Assessment.Severity = t.Severity
	if r.st.Gate != nil {
		r.st.Gate.TicketID = t.ID
	}
	r.st.Action = &triage.Action{Kind: "create_ticket", TicketID: t.ID, Title: sub.Title, Body: sub.Body}
	r.Status, r.Outcome, r.TicketID, r.Resolves = signoff.TriageDone, triage.OutcomeNewTicket, t.ID, t.ID
	if err := r.save(ctx, st, by); err != nil {
		return err
	}
	if c, err := st.GetCase(ctx, by, r.CaseID); err == nil && c.State == workflow.BugTriaging {
		if _, _, err := st.TransitionCase(ctx, by, r.CaseID, signoff.TransitionInput{Command: "ticket", Note: "filed " + t.ID}); err != nil {
			return err
		}
	}
	return nil
}

// gateNeedsPerson ends a gated run with a person: the writer task closes
// as needs_human, the case is escalated, and the run is done as
// needs_human with why in its notes (done, so a person's resume_triage
// starts a new run, and runs waiting for this one go on). No new decision
// is asked.
func gateNeedsPerson(ctx context.Context, st signoff.Store, by signoff.Actor, r *run, taskID, why string) error {
	if r.st.Gate != nil {
		if d, err := st.GetDecision(ctx, by, r.st.Gate.DecisionID); err == nil {
			r.st.Gate.Status = d.Status
		}
	}
	r.st.Notes = append(r.st.Notes, "gate: "+why)
	r.Status, r.Outcome = signoff.TriageDone, triage.OutcomeNeedsHuman
	if err := r.save(ctx, st, by); err != nil {
		return err
	}
	// The server escalates: it is its check, or a person's answer, that
	// ends the run, not the agent's choice.
	sys := signoff.SystemActor(r.WorkspaceID)
	if c, err := st.GetCase(ctx, sys, r.CaseID); err == nil && c.State != workflow.BugNeedsHuman && !workflow.HumanDecided(c.Kind, c.State) {
		if _, _, err := st.TransitionCase(ctx, sys, r.CaseID, signoff.TransitionInput{Command: "escalate", Note: truncate(why, 500)}); err != nil {
			return fmt.Errorf("escalate %s: %w", r.CaseID, err)
		}
	}
	if t, err := st.GetTask(ctx, by, taskID); err == nil && t.Status != signoff.TaskClosed {
		if _, err := st.CloseTask(ctx, by, taskID, signoff.OutcomeNeedsHuman, truncate(why, 500)); err != nil {
			return fmt.Errorf("close writer task %s: %w", taskID, err)
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func versions(v string) []string {
	if v == "" {
		return []string{}
	}
	return []string{v}
}

// ---- normalizing and neutralizing the writer's text ----

// normalizeTitle puts a title in one form: Unicode NFC, invisible and
// control characters removed (a bidi override would show a person one
// title and file another), every run of whitespace one space, trimmed.
func normalizeTitle(s string) string {
	return strings.Join(strings.Fields(visible(norm.NFC.String(s), false)), " ")
}

// normalizeBody puts a body in one form: NFC, invisible and control
// characters removed, line breaks "\n", trailing spaces trimmed, runs of
// spaces inside a line one space (indentation kept), at most one blank
// line in a row, trimmed.
func normalizeBody(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(visible(norm.NFC.String(s), true), "\n")
	var out []string
	blank := 0
	for _, l := range lines {
		l = strings.TrimRightFunc(l, unicode.IsSpace)
		body := strings.TrimLeftFunc(l, unicode.IsSpace)
		indent := l[:len(l)-len(body)]
		l = indent + strings.Join(strings.Fields(body), " ")
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// visible drops control and format characters; lines keeps "\n" and tabs.
func visible(s string, lines bool) string {
	return strings.Map(func(r rune) rune {
		switch {
		case lines && (r == '\n' || r == '\t'):
			return r
		case r == '\n' || r == '\t' || r == '\u2028' || r == '\u2029':
			return ' '
		case unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
}

// The marker around text a ticket quotes because it reads as an
// instruction: a person reading the tracker cannot take it for the
// writer's own words, nor can the text close it early (both brackets are
// removed from whatever it quotes).
const (
	quoteOpen  = "⟦quoted from report: "
	quoteClose = "⟧"
)

// neutralize quotes and marks every instruction-like span of text (the
// airlock's detection, airlock.Detect): each sentence or clause that fires
// is wrapped in the marker; when the instruction only shows across clauses,
// the whole text is. It returns the airlock signals that fired (none: text
// unchanged). Spans already marked stay as they are, so neutralizing twice
// changes nothing.
func neutralize(text string) (string, []string) {
	parts := splitMarked(text)
	fired := map[string]bool{}
	var rest []string
	for i, p := range parts {
		if p.marked {
			continue
		}
		sig := detect(p.text)
		if len(sig) == 0 {
			rest = append(rest, p.text)
			continue
		}
		for _, s := range sig {
			fired[s] = true
		}
		var b strings.Builder
		var left []string
		for _, seg := range clauses(p.text) {
			core := strings.TrimSpace(seg)
			if core != "" && len(detect(core)) > 0 {
				lead := seg[:strings.Index(seg, core)]
				b.WriteString(lead + quoteOpen + core + quoteClose + seg[len(lead)+len(core):])
				continue
			}
			b.WriteString(seg)
			left = append(left, seg)
		}
		parts[i].text = b.String()
		rest = append(rest, strings.Join(left, " "))
	}
	out := joinMarked(parts)
	if sig := detect(strings.Join(rest, " ")); len(sig) > 0 {
		// The instruction is cut across clauses or marked spans (a
		// writer's own marks can cut one into halves that say nothing
		// alone): quote everything.
		for _, s := range sig {
			fired[s] = true
		}
		flat := strings.NewReplacer(quoteOpen, "", quoteClose, "").Replace(out)
		out = quoteOpen + strings.TrimSpace(flat) + quoteClose
	}
	if len(fired) == 0 {
		return out, nil
	}
	signals := make([]string, 0, len(fired))
	for _, f := range airlockFamilies {
		if fired[f] {
			signals = append(signals, f)
		}
	}
	return out, signals
}

// outsideMarks is text without its marked spans: what a reader could
// take for the writer's own words.
func outsideMarks(text string) string {
	var b strings.Builder
	for _, p := range splitMarked(text) {
		if !p.marked {
			b.WriteString(p.text)
		}
	}
	return b.String()
}

// quoteAll quotes and marks the whole of text (its marked spans joined
// into one); empty text stays empty.
func quoteAll(text string) string {
	flat := strings.TrimSpace(strings.NewReplacer(quoteOpen, "", quoteClose, "").Replace(joinMarked(splitMarked(text))))
	if flat == "" {
		return ""
	}
	return quoteOpen + flat + quoteClose
}

var airlockFamilies = []string{airlock.SignalEncodedBlob, airlock.SignalHiddenComment, airlock.SignalOperatorCommand,
	airlock.SignalOverride, airlock.SignalRolePlay, airlock.SignalSystemPrompt, airlock.SignalToolCall,
	airlock.SignalInvisibleText, airlock.SignalTransformedText}

// detect reads s as the airlock does: normalized, and with any text spelled
// in invisible characters (which Normalize removes) decoded and read too.
func detect(s string) []string {
	return airlock.Sanitize(s).Signals
}

type markedPart struct {
	text   string
	marked bool
}

// splitMarked cuts text into marked spans and the text between them, in
// which stray marker brackets become plain ones.
func splitMarked(text string) []markedPart {
	stray := strings.NewReplacer("⟦", "[", "⟧", "]")
	var parts []markedPart
	for text != "" {
		i := strings.Index(text, quoteOpen)
		if i < 0 {
			parts = append(parts, markedPart{text: stray.Replace(text)})
			break
		}
		j := strings.Index(text[i+len(quoteOpen):], quoteClose)
		if j < 0 {
			parts = append(parts, markedPart{text: stray.Replace(text)})
			break
		}
		end := i + len(quoteOpen) + j + len(quoteClose)
		if i > 0 {
			parts = append(parts, markedPart{text: stray.Replace(text[:i])})
		}
		inner := text[i+len(quoteOpen) : end-len(quoteClose)]
		parts = append(parts, markedPart{text: quoteOpen + stray.Replace(inner) + quoteClose, marked: true})
		text = text[end:]
	}
	return parts
}

func joinMarked(parts []markedPart) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.text)
	}
	return b.String()
}

// clauses cuts text after each sentence or clause end (. ! ? ; : followed
// by a space, a line break, or a dash between spaces), keeping every byte:
// the clauses joined are the text.
func clauses(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		cut := -1
		switch c := text[i]; {
		case c == '\n':
			cut = i + 1
		case strings.IndexByte(".!?;:", c) >= 0 && (i+1 == len(text) || text[i+1] == ' '):
			cut = i + 1
		case c == ' ' && (strings.HasPrefix(text[i:], " - ") || strings.HasPrefix(text[i:], " — ") || strings.HasPrefix(text[i:], " | ")):
			cut = i
		}
		if cut > start {
			out = append(out, text[start:cut])
			start = cut
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
