package sqlstore

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river/rivertype"
)

// TestAttack4ScheduledWakeAfterRemove: a client removed (its job
// client stopped, the store closed) is still woken by the timers a
// committed scheduled job set (whenDue), up to an hour later and six
// times each: the timers hold the stopped client's pilot and call into
// River after Stop. TestWakersSettle checks removal only for jobs
// available at once. Was a hole: the timers check the client is still
// registered.
func TestAttack4ScheduledWakeAfterRemove(t *testing.T) {
	t.Parallel()
	var w wakers
	var woken atomic.Int32
	p := &wakePilot{notify: func(context.Context, []*rivertype.JobInsertResult) { woken.Add(1) }}
	remove := w.add(p)
	tx := new(sql.Tx)
	w.scheduledSoon(tx, "notify", time.Now().Add(20*time.Millisecond))
	w.settled(tx, true)
	remove() // the client stops before its job is due
	time.Sleep(150 * time.Millisecond)
	if n := woken.Load(); n != 0 {
		t.Fatalf("a removed client was woken %d times by a scheduled job's timer", n)
	}
}
