package repair_test

import (
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/verify"
)

func TestCheckFixPaths(t *testing.T) {
	t.Parallel()
	harness := []string{"cart/coupon_repro_test.go"}
	globs := []string{"harness/**"}
	allow := []string{"cart/**", "cmd/**"}
	tests := []struct {
		name    string
		changed []string
		code    string
	}{
		{"inside the allowlist", []string{"cart/cart.go"}, ""},
		{"two allowed", []string{"cart/cart.go", "cmd/shoplite/main.go"}, ""},
		{"harness test file", []string{"cart/cart.go", "cart/coupon_repro_test.go"}, signoff.EFORBIDDEN},
		{"harness glob", []string{"harness/spec.json"}, signoff.EFORBIDDEN},
		{"outside the allowlist", []string{"go.mod"}, signoff.EFORBIDDEN},
		{"nothing", nil, signoff.EINVALID},
		{"escaping path", []string{"../etc/passwd"}, signoff.EINVALID},
		{"absolute path", []string{"/etc/passwd"}, signoff.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := repair.CheckFixPaths(tt.changed, harness, globs, allow)
			if got := signoff.ErrorCode(err); (err == nil) != (tt.code == "") || (err != nil && got != tt.code) {
				t.Fatalf("CheckFixPaths(%v) = %v, want code %q", tt.changed, err, tt.code)
			}
		})
	}
	if err := repair.CheckFixPaths([]string{"cart/cart.go"}, nil, nil, nil); err == nil {
		t.Error("an empty allowlist allowed a change")
	}
}

func fixture() (signoff.Case, signoff.HarnessRecord, signoff.Candidate, verify.Report) {
	c := signoff.Case{ID: "case_1", ProjectID: "prj_1", Title: "coupon twice"}
	h := signoff.HarnessRecord{ID: "har_1", Digest: strings.Repeat("d", 64), Status: signoff.HarnessFrozen}
	cand := signoff.Candidate{ID: "cand_1", HarnessID: "har_1", Attempt: 2, Base: strings.Repeat("1", 40), Commit: strings.Repeat("2", 40),
		Diff: "diff --git a/cart/cart.go b/cart/cart.go\n+fixed\n", Status: signoff.CandidateVerified, SubmittedBy: "act_fixer", Evidence: "authored"}
	rep := verify.Report{Verdict: verify.Verified, Candidate: cand.Commit, HarnessDigest: h.Digest, Fingerprint: strings.Repeat("f", 64),
		Stages: []verify.Stage{{Name: "candidate", Run: 1, Outcome: verify.Passed}}}
	return c, h, cand, rep
}

// TestCardDigestCoversEverything: each field shown on the card changes
// the digest, so an approval of one card never applies to another.
func TestCardDigestCoversEverything(t *testing.T) {
	t.Parallel()
	c, h, cand, rep := fixture()
	card, err := repair.NewCard(c, h, cand, rep)
	if err != nil {
		t.Fatal(err)
	}
	base, err := card.Digest()
	if err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*repair.Card){
		"diff":        func(k *repair.Card) { k.Diff += " " },
		"candidate":   func(k *repair.Card) { k.Candidate = strings.Repeat("3", 40) },
		"base":        func(k *repair.Card) { k.Base = strings.Repeat("4", 40) },
		"harness":     func(k *repair.Card) { k.HarnessDigest = strings.Repeat("e", 64) },
		"fingerprint": func(k *repair.Card) { k.Fingerprint = strings.Repeat("0", 64) },
		"table":       func(k *repair.Card) { k.Table[0].Outcome = verify.Failed },
		"review":      func(k *repair.Card) { k.Review = "looks fine" },
		"verdict":     func(k *repair.Card) { k.Verdict = verify.Rejected },
	} {
		k, _ := repair.NewCard(c, h, cand, rep)
		mod(&k)
		if d, _ := k.Digest(); d == base {
			t.Errorf("changing %s leaves the digest", name)
		}
	}
	// Nothing but a verified candidate has a card.
	cand.Status = signoff.CandidateRejected
	if _, err := repair.NewCard(c, h, cand, rep); signoff.ErrorCode(err) != signoff.ECONFLICT {
		t.Errorf("card of a rejected candidate: %v", err)
	}
}

func TestAsk(t *testing.T) {
	t.Parallel()
	now := time.Now()
	st := signoff.BugLoopState{Round: 1, Harnesses: []signoff.HarnessRecord{{ID: "har_1", Round: 1, Status: signoff.HarnessProposed, Digest: "d1", FailingOutput: "fails"}}}
	c := signoff.Case{ID: "case_1", State: "awaiting_reporter_repro"}
	q, ok := repair.Ask(c, st)
	if !ok || q.Kind != repair.AskRepro || q.Shown != "fails" {
		t.Fatalf("repro question: %+v %v", q, ok)
	}
	// Another harness is another question.
	st2 := st
	st2.Harnesses = []signoff.HarnessRecord{{ID: "har_2", Round: 1, Status: signoff.HarnessProposed, Digest: "d2", FailingOutput: "fails"}}
	if q2, _ := repair.Ask(c, st2); q2.Digest() == q.Digest() {
		t.Error("a new reproduction kept the question digest")
	}
	if _, ok := repair.Ask(signoff.Case{ID: "case_1", State: "fixing"}, st); ok {
		t.Error("a fixing case asks the reporter")
	}
	st.Merge = &signoff.MergeRecord{Commit: strings.Repeat("9", 40)}
	st.Release = &signoff.ReleaseRecord{Commit: strings.Repeat("9", 40), At: now, Smoke: []signoff.SmokeResult{{OK: true}}}
	q, ok = repair.Ask(signoff.Case{ID: "case_1", State: "awaiting_reporter_confirmation"}, st)
	if !ok || q.Kind != repair.AskFix || !strings.Contains(q.Shown, "1 of 1 passed") {
		t.Fatalf("fix question: %+v %v", q, ok)
	}
}
