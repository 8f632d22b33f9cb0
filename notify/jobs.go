package notify

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/outbox"
)

// AddWorkers adds the outbox's workers to w: delivery, card opening and
// card expiry. They work the signoff.QueueOutbox queue.
func (d *Desk) AddWorkers(w *river.Workers) {
	river.AddWorker(w, &notifyWorker{d: d})
	river.AddWorker(w, &cardWorker{d: d})
	river.AddWorker(w, &expiryWorker{d: d})
}

type notifyWorker struct {
	river.WorkerDefaults[signoff.NotifyJob]
	d *Desk
}

// Timeout is the lease: a worker past it has lost the message anyway.
func (w *notifyWorker) Timeout(*river.Job[signoff.NotifyJob]) time.Duration { return w.d.lease() }

func (w *notifyWorker) Work(ctx context.Context, job *river.Job[signoff.NotifyJob]) error {
	m, err := w.d.Store.MessageFor(ctx, job.Args)
	if err != nil {
		return err
	}
	res, err := w.d.Deliver(ctx, m.MessageID)
	var wait *signoff.WaitError
	switch {
	case errors.Is(err, signoff.ErrSettled):
		return nil
	case errors.As(err, &wait):
		// Not a failed attempt: look again when the lease ends or the
		// earlier message has gone.
		return river.JobSnooze(max(time.Until(wait.Until), 0) + 10*time.Millisecond)
	case err != nil:
		return err
	case res.Dead:
		return river.JobCancel(fmt.Errorf("parked as dead after %d attempts: %w", res.Attempt, res.Err))
	case res.Err != nil:
		// The outbox keeps the attempt and its error; River only waits.
		// Snoozing (not failing) keeps the schedule the outbox's own, so
		// a re-driven message starts it afresh.
		return river.JobSnooze(res.RetryIn)
	}
	return nil
}

type cardWorker struct {
	river.WorkerDefaults[signoff.CardJob]
	d *Desk
}

func (w *cardWorker) Work(ctx context.Context, job *river.Job[signoff.CardJob]) error {
	_, _, err := w.d.OpenCard(ctx, job.ID, job.CreatedAt, job.Args)
	return err
}

type expiryWorker struct {
	river.WorkerDefaults[signoff.CardExpiryJob]
	d *Desk
}

func (w *expiryWorker) Work(ctx context.Context, job *river.Job[signoff.CardExpiryJob]) error {
	return w.d.Store.ExpireCard(ctx, job.Args.WorkspaceID, job.Args.CardID)
}

// OpenCard opens the card that card job (jobID, createdAt, args) asks
// for: its id is the job's UUIDv5, so running the job again reopens the
// same card. It opens nothing when the case has moved on since the event
// (the card would be stale before anyone saw it) or asks for nothing.
func (d *Desk) OpenCard(ctx context.Context, jobID int64, createdAt time.Time, j signoff.CardJob) (signoff.Card, bool, error) {
	cause, err := d.Store.CardCauseOf(ctx, j)
	if err != nil {
		return signoff.Card{}, false, err
	}
	now := d.now().UTC()
	c := signoff.Card{ID: outbox.CardID(jobID, createdAt), WorkspaceID: j.WorkspaceID, CaseID: j.CaseID, CauseSeq: j.Seq,
		CaseState: cause.Case.State, CaseVersion: cause.Case.Version, OpenedAt: now}
	switch cause.Event.Type {
	case "decision.requested":
		var p struct {
			DecisionID    string    `json:"decision_id"`
			Kind          string    `json:"kind"`
			SubjectDigest string    `json:"subject_digest"`
			ExpiresAt     time.Time `json:"expires_at"`
		}
		if err := decode(cause.Event.Payload, &p); err != nil {
			return signoff.Card{}, false, err
		}
		// A decision settled before its card's job ran needs no card.
		if dec, err := d.Store.GetDecision(ctx, signoff.SystemActor(j.WorkspaceID), p.DecisionID); err != nil {
			return signoff.Card{}, false, err
		} else if dec.Status != signoff.DecisionPending {
			return signoff.Card{}, false, nil
		}
		spec := card.ForDecision(p.Kind)
		c.Kind, c.Options, c.Addressee, c.DecisionID, c.SubjectDigest, c.ExpiresAt = spec.Kind, spec.Options, spec.Addressee, p.DecisionID, p.SubjectDigest, p.ExpiresAt
	case "case.transitioned":
		var p struct {
			To      string `json:"to"`
			Version int64  `json:"version"`
		}
		if err := decode(cause.Event.Payload, &p); err != nil {
			return signoff.Card{}, false, err
		}
		if cause.Case.State != p.To || cause.Case.Version != p.Version {
			return signoff.Card{}, false, nil
		}
		spec, ok := card.ForState(cause.Case.Kind, p.To)
		if !ok || d.Subjects == nil {
			return signoff.Card{}, false, nil
		}
		digest, exp, err := d.Subjects(ctx, cause.Case, spec)
		if err != nil {
			return signoff.Card{}, false, fmt.Errorf("card for %s: %w", j.CaseID, err)
		}
		c.Kind, c.Options, c.Addressee, c.SubjectDigest, c.ExpiresAt = spec.Kind, spec.Options, spec.Addressee, digest, exp
	default:
		return signoff.Card{}, false, nil
	}
	if c.ExpiresAt.IsZero() {
		c.ExpiresAt = now.Add(card.DefaultTTL)
	}
	return d.Store.OpenCard(ctx, c)
}
