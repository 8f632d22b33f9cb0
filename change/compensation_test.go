package change_test

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/change"
)

// TestCompensate is the rollback rule, row by row (docs/changes.md,
// "Compensating rollback").
func TestCompensate(t *testing.T) {
	t.Parallel()
	flags, err := change.Parse([]byte("preapproved_rollbacks: [flag]\n"))
	if err != nil {
		t.Fatal(err)
	}
	none, err := change.Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	left, other := sha("the state the change left"), sha("someone wrote since")
	exact := change.CompensationInput{OriginalState: "executed", OriginalKind: change.KindFlag, HasRollback: true,
		RecordedAfterDigest: left, LiveDigest: left, ExactInverse: true}
	with := func(f func(*change.CompensationInput)) change.CompensationInput {
		in := exact
		f(&in)
		return in
	}
	later := []change.LaterChange{{CaseID: id("case", 7), AfterStateDigest: other}}
	tests := []struct {
		name    string
		in      change.CompensationInput
		pol     change.Policy
		verdict string
		says    []string // in the reason
	}{
		{"exact inverse on what it left, kind pre-approved", exact, flags, change.CompensationPreapproved, []string{"preapproved_rollbacks includes flag"}},
		{"the policy does not pre-approve the kind", exact, none, change.CompensationNeedsApproval, []string{"does not pre-approve flag"}},
		{"file rollbacks not listed", with(func(in *change.CompensationInput) { in.OriginalKind = change.KindFile }), flags, change.CompensationNeedsApproval, []string{"does not pre-approve file"}},
		{"a rollback of a rollback", with(func(in *change.CompensationInput) { in.OriginalIsCompensation = true }), flags, change.CompensationNeedsApproval, []string{"itself a compensating rollback"}},
		{"later changes on the target", with(func(in *change.CompensationInput) { in.Later, in.LiveDigest = later, other }), flags, change.CompensationNeedsApproval,
			[]string{id("case", 7), "would overwrite", "not what the change left"}},
		{"later change left the same state", with(func(in *change.CompensationInput) { in.Later = later }), flags, change.CompensationNeedsApproval, []string{id("case", 7)}},
		{"live state drifted", with(func(in *change.CompensationInput) { in.LiveDigest = other }), flags, change.CompensationNeedsApproval, []string{other[:12], left[:12]}},
		{"live state unreadable", with(func(in *change.CompensationInput) { in.LiveDigest = "" }), flags, change.CompensationNeedsApproval, []string{"could not be read"}},
		{"no recorded after-state", with(func(in *change.CompensationInput) { in.RecordedAfterDigest = "" }), flags, change.CompensationNeedsApproval, []string{"(none)"}},
		{"re-planned to something else", with(func(in *change.CompensationInput) { in.ExactInverse = false }), flags, change.CompensationNeedsApproval, []string{"not the change's own rollback"}},
		{"everything wrong at once lists every reason", with(func(in *change.CompensationInput) {
			in.OriginalIsCompensation, in.Later, in.LiveDigest, in.ExactInverse = true, later, other, false
		}), none, change.CompensationNeedsApproval, []string{"itself a compensating", "would overwrite", "not what the change left", "own rollback", "does not pre-approve"}},
		{"not executed", with(func(in *change.CompensationInput) { in.OriginalState = "awaiting_approval" }), flags, change.CompensationRefused, []string{"awaiting_approval, not executed"}},
		{"rolled back by its health check", with(func(in *change.CompensationInput) { in.OriginalState = "rolled_back" }), flags, change.CompensationRefused, []string{"nothing to compensate"}},
		{"already reverted", with(func(in *change.CompensationInput) { in.OriginalState = "reverted" }), flags, change.CompensationRefused, []string{"already reverted"}},
		{"a compensation under way", with(func(in *change.CompensationInput) { in.ActiveCompensation = id("case", 5) }), flags, change.CompensationRefused, []string{id("case", 5)}},
		{"no rollback", with(func(in *change.CompensationInput) { in.HasRollback = false }), flags, change.CompensationRefused, []string{"no rollback"}},
		{"refusal wins over needing approval", with(func(in *change.CompensationInput) { in.OriginalState, in.OriginalIsCompensation = "reverted", true }), flags, change.CompensationRefused, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := change.Compensate(tt.in, tt.pol)
			if d.Verdict != tt.verdict || d.Preapproved() != (tt.verdict == change.CompensationPreapproved) {
				t.Fatalf("verdict %s (%s), want %s", d.Verdict, d.Reason, tt.verdict)
			}
			for _, s := range tt.says {
				if !strings.Contains(d.Reason, s) {
					t.Errorf("reason %q lacks %q", d.Reason, s)
				}
			}
			// Needing approval shows the difference; a refusal shows none.
			if tt.verdict == change.CompensationNeedsApproval && (d.LiveDigest != tt.in.LiveDigest || d.RecordedAfterDigest != tt.in.RecordedAfterDigest || len(d.Later) != len(tt.in.Later)) {
				t.Errorf("the difference is not shown: %+v", d)
			}
		})
	}
}
