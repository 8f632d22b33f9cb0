package verify

import (
	"context"

	"github.com/signoff-dev/signoff/sandbox"
)

// fetchDeps fetches the dependencies of the checkout dir before the runs
// of stage, outside the offline sandbox. ran says whether there was a
// deps stage at all; its outcome is OK or NotExecuted.
func (v *verifier) fetchDeps(ctx context.Context, stage, dir string) (st Stage, ran bool) {
	return Stage{}, false
}

// applyDeps gives a run in the checkout dir the dependencies fetchDeps
// fetched for it.
func (v *verifier) applyDeps(dir string, s *sandbox.Spec) error {
	return nil
}
