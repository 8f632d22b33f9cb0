package notify_test

import (
	"github.com/signoff-dev/signoff/notify"
	"github.com/signoff-dev/signoff/sqlstore"
)

// notify reaches storage through its Store interface; the store must keep
// implementing it. Checked here, not in the package, so that the door's
// code never imports the store.
var _ notify.Store = (*sqlstore.DB)(nil)
