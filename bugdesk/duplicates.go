package bugdesk

import (
	"context"
	"fmt"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/triage"
	"github.com/signoff-dev/signoff/workflow"
)

// duplicatesOf lists the cases the triage crew landed on the primary's
// ticket as duplicates: each report stays its own case, linked by the
// ticket.
func (d *Desk) duplicatesOf(ctx context.Context, ws, projectID, primary string) ([]string, error) {
	run, err := d.Store.GetTriage(ctx, sys(ws), primary)
	if signoff.ErrorCode(err) == signoff.ENOTFOUND || (err == nil && run.TicketID == "") {
		return nil, nil // not triaged by the crew: no linked reports
	} else if err != nil {
		return nil, err
	}
	runs, err := d.Store.ListTriage(ctx, sys(ws), projectID, signoff.TriageDone)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range runs {
		if r.CaseID != primary && r.Outcome == triage.OutcomeDuplicate && r.Resolves == run.TicketID {
			out = append(out, r.CaseID)
		}
	}
	return out, nil
}

// askDuplicates asks every linked reporter, on their own tracking page,
// whether the primary's live fix works for them. Each confirms only their
// own case.
func (d *Desk) askDuplicates(ctx context.Context, p project, primary string) error {
	pc, pl, err := d.loop(ctx, sys(p.WS), primary)
	switch {
	case err != nil:
		return err
	case pl.State.Merge == nil || pl.State.Release == nil:
		return nil // the fix is not (or no longer) live
	case pc.State != workflow.BugAwaitingReporterConfirmation && pc.State != workflow.BugVerified && pc.State != workflow.BugUnconfirmed:
		return nil // reopened meanwhile: its fix does not hold
	}
	dups, err := d.duplicatesOf(ctx, p.WS, p.ID, primary)
	if err != nil {
		return err
	}
	for _, id := range dups {
		if err := d.askDuplicate(ctx, p, id, primary, pl.State); err != nil {
			d.log().ErrorContext(ctx, "ask duplicate's reporter", "case_id", id, "primary", primary, "err", err)
		}
	}
	return nil
}

func (d *Desk) askDuplicate(ctx context.Context, p project, id, primary string, pst signoff.BugLoopState) error {
	unlock := d.lock(id)
	defer unlock()
	c, l, err := d.loop(ctx, sys(p.WS), id)
	if err != nil || c.State != workflow.BugDuplicate {
		return err
	}
	if l.State.Primary == primary && l.State.PrimaryRound == pst.Round {
		return nil // already asked about this fix (and answered, or withdrawn)
	}
	now := d.now()
	st := l.State
	st.PrimaryRound = pst.Round
	// Each ask is a round of the duplicate's own loop, so its timeout job
	// is its own.
	st.Round++
	m, r := *pst.Merge, *pst.Release
	st.Primary, st.Merge, st.Release, st.AskedAt = primary, &m, &r, &now
	_, _, err = d.Store.AdvanceLoop(ctx, sys(p.WS), signoff.LoopUpdate{CaseID: id, Version: l.Version, State: st, Command: "ask_reporter",
		Events: []signoff.LoopEvent{{Type: "duplicate.asked", Payload: map[string]any{"primary": primary, "merge": m.Commit, "deployed": r.Commit}}},
		Jobs: []signoff.JobRequest{{Args: signoff.ConfirmTimeoutJob{WorkspaceID: p.WS, CaseID: id, Round: st.Round},
			At: now.Add(time.Duration(p.Settings.ConfirmWindowHours) * time.Hour)}}})
	return err
}

// reopenPrimary reopens the primary because a duplicate's reporter said
// its live fix does not work for them, with their airlocked words. The
// other duplicates' questions about that fix are withdrawn: it is known
// not to hold.
func (d *Desk) reopenPrimary(ctx context.Context, ws, primary, dup, said string) error {
	unlock := d.lock(primary)
	c, l, err := d.loop(ctx, sys(ws), primary)
	if err != nil {
		unlock()
		return err
	}
	switch c.State {
	case workflow.BugAwaitingReporterConfirmation, workflow.BugVerified, workflow.BugUnconfirmed:
	default:
		unlock()
		return nil // already reopened, or not yet released: nothing to undo
	}
	st, ev := reopenState(l.State, said)
	ev.Payload.(map[string]any)["reported_by_duplicate"] = dup
	_, _, err = d.Store.AdvanceLoop(ctx, sys(ws), signoff.LoopUpdate{CaseID: primary, Version: l.Version, State: st, Command: "reopen",
		Note:   fmt.Sprintf("the reporter of duplicate %s says the live fix does not work for them", dup),
		Events: []signoff.LoopEvent{ev},
		Jobs:   []signoff.JobRequest{{Args: signoff.ReproduceJob{WorkspaceID: ws, CaseID: primary, Round: st.Round}}}})
	unlock()
	if err != nil {
		return err
	}
	d.withdrawDuplicates(ctx, ws, c.ProjectID, primary, dup)
	return d.StartReproduction(ctx, ws, primary)
}

// withdrawDuplicates withdraws the open questions of the primary's
// duplicates (but except's) about a fix that is known not to hold.
func (d *Desk) withdrawDuplicates(ctx context.Context, ws, projectID, primary, except string) {
	dups, err := d.duplicatesOf(ctx, ws, projectID, primary)
	if err != nil {
		d.log().ErrorContext(ctx, "list duplicates", "primary", primary, "err", err)
		return
	}
	for _, id := range dups {
		if id == except {
			continue
		}
		if err := d.withdraw(ctx, ws, id, primary); err != nil {
			d.log().ErrorContext(ctx, "withdraw question", "case_id", id, "err", err)
		}
	}
}

func (d *Desk) withdraw(ctx context.Context, ws, id, primary string) error {
	unlock := d.lock(id)
	defer unlock()
	c, l, err := d.loop(ctx, sys(ws), id)
	if err != nil || c.State != workflow.BugAwaitingReporterConfirmation || l.State.Primary != primary {
		return err
	}
	st := l.State
	st.Merge, st.Release, st.AskedAt = nil, nil, nil
	_, _, err = d.Store.AdvanceLoop(ctx, sys(ws), signoff.LoopUpdate{CaseID: id, Version: l.Version, State: st, Command: "withdraw_question",
		Events: []signoff.LoopEvent{{Type: "duplicate.question_withdrawn", Payload: map[string]any{"primary": primary,
			"note": "the primary was reopened: its fix does not hold; this reporter is asked again when the next fix is live"}}}})
	return err
}
