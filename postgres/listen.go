package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/signoff-dev/signoff/sqlstore"
)

// listenEvents holds one connection of pool in LISTEN on the ledger's
// notification channel and wakes s's live streams whenever any process
// commits ledger events. A lost connection is re-established after a
// pause; since notifications sent meanwhile are lost, the streams are
// woken once on every (re)connect, and their polling covers the gap.
func listenEvents(ctx context.Context, pool *pgxpool.Pool, s *sqlstore.DB) {
	const retry = time.Second
	for ctx.Err() == nil {
		listenOnce(ctx, pool, s)
		s.SetEventsFromEverywhere(false)
		select {
		case <-ctx.Done():
		case <-time.After(retry):
		}
	}
}

func listenOnce(ctx context.Context, pool *pgxpool.Pool, s *sqlstore.DB) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return
	}
	// The connection will be in LISTEN mode: it never goes back to the
	// pool.
	pc := conn.Hijack()
	defer pc.Close(context.Background())
	if _, err := pc.Exec(ctx, "LISTEN "+sqlstore.EventsChannel); err != nil {
		return
	}
	s.SetEventsFromEverywhere(true)
	s.WakeEvents()
	for {
		if _, err := pc.WaitForNotification(ctx); err != nil {
			return
		}
		s.WakeEvents()
	}
}
