package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// groupMax bounds how many writes share one transaction.
const groupMax = 128

type groupReq struct {
	fn   func(*sql.Tx) error
	done chan error
}

// grouper commits many small, independent writes in one transaction
// (group commit). On a single-writer database every transaction costs one
// turn of the write lock; the outbox claims and acknowledges a message in
// two short writes each, so at a thousand deliveries a second the turns,
// not the work, would set the pace.
type grouper struct {
	once sync.Once
	reqs chan groupReq
	quit chan struct{}
}

// grouped runs fn in a transaction shared with other grouped writes. Each
// fn runs under its own savepoint: its error rolls back its own writes
// only, and is its caller's alone. If the shared transaction fails to
// commit, every caller in it gets that error. fn must not use a
// cancellable context for its statements (an interrupted statement can
// abort the whole transaction): callers pass context.WithoutCancel.
// Databases with concurrent writers run fn in its own transaction.
func (s *DB) grouped(ctx context.Context, fn func(*sql.Tx) error) error {
	if !s.d.SingleWriter {
		return s.InTx(ctx, fn)
	}
	g := &s.group
	g.once.Do(func() {
		g.reqs, g.quit = make(chan groupReq), make(chan struct{})
		s.closer = append(s.closer, func() error { close(g.quit); return nil })
		go s.groupLoop()
	})
	req := groupReq{fn: fn, done: make(chan error, 1)}
	select {
	case g.reqs <- req:
	case <-ctx.Done():
		return ctx.Err()
	case <-g.quit:
		return fmt.Errorf("store closed")
	}
	// Once handed over, the write happens or fails as a whole: wait for
	// its answer even if ctx ends, so the caller never guesses.
	return <-req.done
}

func (s *DB) groupLoop() {
	g := &s.group
	for {
		var batch []groupReq
		select {
		case r := <-g.reqs:
			batch = append(batch, r)
		case <-g.quit:
			return
		}
	more:
		for len(batch) < groupMax {
			select {
			case r := <-g.reqs:
				batch = append(batch, r)
			default:
				break more
			}
		}
		errs := make([]error, len(batch))
		err := s.InTx(context.Background(), func(tx *sql.Tx) error {
			for i, r := range batch {
				if _, err := tx.Exec(`SAVEPOINT grouped`); err != nil {
					return err
				}
				errs[i] = r.fn(tx)
				if errs[i] != nil {
					if _, err := tx.Exec(`ROLLBACK TO SAVEPOINT grouped`); err != nil {
						return err
					}
				}
				if _, err := tx.Exec(`RELEASE SAVEPOINT grouped`); err != nil {
					return err
				}
			}
			return nil
		})
		for i, r := range batch {
			if err != nil {
				r.done <- err
			} else {
				r.done <- errs[i]
			}
		}
	}
}
