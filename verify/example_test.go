package verify_test

import (
	"fmt"

	"github.com/signoff-dev/signoff/verify"
)

// Table prints one row per stage and the verdict on the last line.
func ExampleTable() {
	r := verify.Report{Runs: 1, Environment: verify.Environment{Sandbox: "bwrap", Isolated: true}}
	r.Stages = []verify.Stage{
		{Name: verify.StageDiff, Outcome: verify.Restored, Detail: "1 file changed; the candidate's edits to harness files cart/coupon_repro_test.go are discarded"},
		{Name: verify.StageBase, Run: 1, Outcome: verify.Reproduced, Detail: `fail-to-pass 1/1 failed with "8100"`},
		{Name: verify.StageCandidate, Run: 1, Outcome: verify.Failed, Detail: "TestCouponAppliesOnce failed (got 8100, want 9000)"},
	}
	r.Verdict = verify.Decide(r.Stages)
	fmt.Print(verify.Table(r))
	// Output:
	// STAGE              OUTCOME           DETAIL
	// diff               harness-restored  1 file changed; the candidate's edits to harness files cart/coupon_repro_test.go are discarded
	// base run 1/1       reproduced        fail-to-pass 1/1 failed with "8100"
	// candidate run 1/1  failed            TestCouponAppliesOnce failed (got 8100, want 9000)
	// verdict: REJECTED
}
