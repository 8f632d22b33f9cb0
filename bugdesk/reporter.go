package bugdesk

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/workflow"
)

// TrackView is the reporter's tracking page: the case's state and, while
// it waits for them, the question with what they are shown and the digest
// their answer must quote.
type TrackView struct {
	signoff.Tracking
	Kind   string `json:"question_kind,omitempty"`
	Shown  string `json:"shown,omitempty"`
	Digest string `json:"question_digest,omitempty"`
}

// Track returns the tracking page of a secret.
func (d *Desk) Track(ctx context.Context, secret string) (TrackView, error) {
	t, err := d.Store.Track(ctx, secret)
	if err != nil {
		return TrackView{}, err
	}
	v := TrackView{Tracking: t}
	ws, caseID, _, err := d.Store.ResolveTracking(ctx, secret)
	if err != nil {
		return TrackView{}, err
	}
	c, l, err := d.loop(ctx, sys(ws), caseID)
	if err != nil {
		return TrackView{}, err
	}
	if q, ok := repair.Ask(c, l.State); ok {
		v.Question, v.Kind, v.Shown, v.Digest = q.Text, q.Kind, q.Shown, q.Digest()
	}
	return v, nil
}

// Answer is the reporter's answer to the question on their page.
type Answer struct {
	// Digest is the question_digest they were shown.
	Digest string `json:"question_digest"`
	// Answer is "yes" or "no".
	Answer string `json:"answer"`
	// Text is what differs or still fails; required with "no".
	Text string `json:"text,omitempty"`
}

const maxAnswerText = 32 << 10

// ReporterAnswer applies the reporter's answer. Only the holder of this
// case's tracking secret can give it; an answer to a question that has
// since changed is refused as stale, and the case stays where it is.
//
//   - "Is this the bug you saw?" yes confirms the harness; it freezes (its
//     digest goes on the ledger) and the fix starts only if a member of
//     staff approved its test source too, else the case waits reproduced
//     for that review (ReviewHarness). No, with what differs, disowns the
//     reproduction and sends the case back to reproducing.
//   - "Does the live fix work for you?" yes verifies the case; no, with what
//     still fails, clears the confirmations, reopens the case and starts a
//     new round of reproduction.
func (d *Desk) ReporterAnswer(ctx context.Context, secret string, a Answer) (signoff.Case, error) {
	c, err := d.reporterAnswer(ctx, secret, a)
	if err != nil || c.State != workflow.BugReopened {
		return c, err
	}
	// Start the next round now rather than waiting for the job; the job is
	// the backstop if this process stops here, and both are idempotent.
	if err := d.StartReproduction(ctx, c.WorkspaceID, c.ID); err != nil {
		d.log().ErrorContext(ctx, "restart reproduction", "case_id", c.ID, "err", err)
		return c, nil
	}
	return d.Store.GetCase(ctx, sys(c.WorkspaceID), c.ID)
}

func (d *Desk) reporterAnswer(ctx context.Context, secret string, a Answer) (signoff.Case, error) {
	ws, caseID, linkID, err := d.Store.ResolveTracking(ctx, secret)
	if err != nil {
		return signoff.Case{}, err
	}
	if a.Answer != "yes" && a.Answer != "no" {
		return signoff.Case{}, signoff.Errorf(signoff.EINVALID, `answer must be "yes" or "no"`)
	}
	if len(a.Text) > maxAnswerText {
		return signoff.Case{}, signoff.Errorf(signoff.EINVALID, "text is longer than %d bytes", maxAnswerText)
	}
	if a.Answer == "no" && strings.TrimSpace(a.Text) == "" {
		return signoff.Case{}, signoff.Errorf(signoff.EINVALID, "tell us what is different or still goes wrong (text is required with no)")
	}
	unlock := d.lock(caseID)
	defer func() { unlock() }()
	c, l, err := d.loop(ctx, sys(ws), caseID)
	if err != nil {
		return signoff.Case{}, err
	}
	q, ok := repair.Ask(c, l.State)
	if !ok {
		return c, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: "your case is not waiting for an answer from you right now"}
	}
	if a.Digest != q.Digest() {
		return c, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: "the question has changed since you loaded the page; reload it and answer again"}
	}
	// The reporter acts as themselves: the link id is the case's reporter.
	rep := signoff.Actor{ID: linkID, WorkspaceID: ws, Name: "reporter", Role: signoff.RoleReporter}
	if c.ReporterID != "" && c.ReporterID != linkID {
		return signoff.Case{}, signoff.Errorf(signoff.ENOTFOUND, "no case for this link")
	}
	said := ""
	if strings.TrimSpace(a.Text) != "" {
		// Stored for the owners as the reporter wrote it; everyone else,
		// and the ledger, sees only the dossier.
		r, err := d.Store.Answer(ctx, secret, a.Text)
		if err != nil {
			return c, err
		}
		said = r.Dossier.Text
	}
	now := d.now()
	st := l.State
	answered := signoff.LoopEvent{Type: "reporter.decided", Payload: map[string]any{"question": q.Kind, "question_digest": q.Digest(),
		"subject": q.Subject, "answer": a.Answer, "said": said, "round": st.Round}}
	u := signoff.LoopUpdate{CaseID: caseID, Version: l.Version, Events: []signoff.LoopEvent{answered}}
	st.Harnesses = slices.Clone(st.Harnesses)
	h := repair.CurrentHarness(st)
	switch {
	case q.Kind == repair.AskRepro && a.Answer == "yes":
		h.ConfirmedAt = &now
		u.Command = "confirm_reproduction"
		if repair.StaffApproved(*h) {
			// A member of staff approved the test already: both agree.
			ev, job := freeze(c, st, h, now)
			u.Events = append(u.Events, ev)
			u.Jobs = []signoff.JobRequest{job}
		} else {
			// The case waits, reproduced, for a member of staff to read
			// the test; their approval freezes it.
			h.Status = signoff.HarnessConfirmed
		}
	case q.Kind == repair.AskRepro:
		h.Status, h.ReporterNote = signoff.HarnessDisowned, said
		u.Command = "reject_reproduction"
		u.Jobs = []signoff.JobRequest{{Args: signoff.ReproduceJob{WorkspaceID: ws, CaseID: caseID, Round: st.Round, Try: len(st.Harnesses)}}}
	case a.Answer == "yes":
		u.Command = "confirm_fix"
	case st.Primary != "":
		// A duplicate's reporter says the primary's fix does not work for
		// them: their case goes back behind the primary, which reopens
		// with their words (below, once this answer is recorded).
		st.Merge, st.Release, st.AskedAt = nil, nil, nil
		u.Command = "still_broken_on_primary"
		u.Events = append(u.Events, signoff.LoopEvent{Type: "duplicate.still_broken", Payload: map[string]any{"primary": st.Primary, "reason": said}})
		u.Jobs = []signoff.JobRequest{{Args: signoff.DuplicatesJob{WorkspaceID: ws, ProjectID: c.ProjectID, Primary: st.Primary,
			Action: "reopen", Duplicate: caseID, Reason: said, Round: st.Round}}}
	default:
		var ev signoff.LoopEvent
		st, ev = reopenState(st, said)
		u.Command = "report_still_broken"
		u.Events = append(u.Events, ev)
		u.Jobs = []signoff.JobRequest{{Args: signoff.ReproduceJob{WorkspaceID: ws, CaseID: caseID, Round: st.Round}},
			{Args: signoff.DuplicatesJob{WorkspaceID: ws, ProjectID: c.ProjectID, Primary: caseID, Action: "withdraw", Round: st.Round}}}
	}
	u.State = st
	_, c, err = d.Store.AdvanceLoop(ctx, rep, u)
	if err == nil && u.Command == "report_still_broken" {
		// The fix the duplicates were asked about is known not to hold.
		unlock()
		unlock = func() {}
		d.withdrawDuplicates(ctx, ws, c.ProjectID, caseID, "")
	}
	if err == nil && u.Command == "still_broken_on_primary" {
		unlock()
		unlock = func() {}
		if rerr := d.reopenPrimary(ctx, ws, st.Primary, caseID, said); rerr != nil {
			d.log().ErrorContext(ctx, "reopen primary", "primary", st.Primary, "duplicate", caseID, "err", rerr)
		}
	}
	return c, err
}

// reopenState clears every confirmation of the round and starts the next:
// the reproductions and candidates no longer hold, the merge and release
// are history. It returns the event that records it.
func reopenState(st signoff.BugLoopState, reason string) (signoff.BugLoopState, signoff.LoopEvent) {
	st.Harnesses = append([]signoff.HarnessRecord(nil), st.Harnesses...)
	st.Candidates = append([]signoff.Candidate(nil), st.Candidates...)
	cleared := 0
	for i := range st.Harnesses {
		if st.Harnesses[i].Round == st.Round && st.Harnesses[i].FrozenAt != nil {
			cleared++
		}
		switch st.Harnesses[i].Status {
		case signoff.HarnessFrozen, signoff.HarnessConfirmed, signoff.HarnessProposed:
			st.Harnesses[i].Status = signoff.HarnessSuperseded
		}
	}
	for i := range st.Candidates {
		if st.Candidates[i].Status == signoff.CandidateVerified || st.Candidates[i].Status == signoff.CandidateVerifying {
			st.Candidates[i].Status = signoff.CandidateSuperseded
		}
	}
	prev := st.Round
	st.Round++
	st.Merge, st.Release, st.AskedAt = nil, nil, nil
	return st, signoff.LoopEvent{Type: "confirmations.cleared", Payload: map[string]any{
		"round": prev, "next_round": st.Round, "reproductions_cleared": cleared, "reason": reason}}
}

// ConfirmTimeout closes a case as unconfirmed when its reporter has not
// answered "Does the live fix work for you?" within the window. Silence is
// never verification.
func (d *Desk) ConfirmTimeout(ctx context.Context, ws, caseID string, round int) (time.Duration, error) {
	unlock := d.lock(caseID)
	defer unlock()
	c, l, err := d.loop(ctx, sys(ws), caseID)
	if err != nil {
		return 0, err
	}
	if c.State != workflow.BugAwaitingReporterConfirmation || l.State.Round != round || l.State.AskedAt == nil {
		return 0, nil
	}
	s, err := d.Store.GetRepoSettings(ctx, sys(ws), c.ProjectID)
	if err != nil {
		return 0, err
	}
	due := l.State.AskedAt.Add(time.Duration(s.ConfirmWindowHours) * time.Hour)
	if wait := due.Sub(d.now()); wait > 0 {
		return wait, nil // asked again since, or the window grew: not yet
	}
	_, _, err = d.Store.AdvanceLoop(ctx, sys(ws), signoff.LoopUpdate{CaseID: caseID, Version: l.Version, State: l.State, Command: "confirmation_timeout",
		Events: []signoff.LoopEvent{{Type: "reporter.silent", Payload: map[string]any{"asked_at": l.State.AskedAt, "window_hours": s.ConfirmWindowHours,
			"note": "no answer within the window: unconfirmed, which is not verified"}}}})
	if err != nil {
		return 0, fmt.Errorf("confirmation timeout of %s: %w", caseID, err)
	}
	return 0, nil
}

// QuestionDigest returns the digest of the question a case now asks its
// reporter (the subject of their confirmation card), and false when it
// asks none.
func (d *Desk) QuestionDigest(ctx context.Context, ws, caseID string) (string, bool, error) {
	c, l, err := d.loop(ctx, sys(ws), caseID)
	if err != nil {
		return "", false, err
	}
	q, ok := repair.Ask(c, l.State)
	if !ok {
		return "", false, nil
	}
	return q.Digest(), true, nil
}
