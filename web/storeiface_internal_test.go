package web

import "github.com/signoff-dev/signoff/sqlstore"

// The web UI reaches storage through its own interfaces; the store must
// keep implementing them. Checked here, not in the package, so that the
// door's code never imports the store.
var (
	_ Store        = (*sqlstore.DB)(nil)
	_ passkeyStore = (*sqlstore.DB)(nil)
)
