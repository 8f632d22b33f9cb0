package repair_test

import (
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/tamper"
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

// testSource is the harness's one test file.
var testSource = repair.Sources(map[string][]byte{"cart/coupon_repro_test.go": []byte("package cart\n\nfunc TestCouponAppliesOnce(t *testing.T) {}\n")})

func fixture() (signoff.Case, signoff.HarnessRecord, signoff.Candidate, verify.Report) {
	c := signoff.Case{ID: "case_1", ProjectID: "prj_1", Title: "coupon twice"}
	h := signoff.HarnessRecord{ID: "har_1", Digest: strings.Repeat("d", 64), Status: signoff.HarnessFrozen,
		StaffReview: &signoff.HarnessReview{HarnessID: "har_1", By: "act_oscar", Decision: signoff.HarnessApprove, ReviewDigest: strings.Repeat("r", 64), At: time.Unix(1, 0).UTC()}}
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
	card, err := repair.NewCard(c, h, cand, rep, testSource)
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
		"review note": func(k *repair.Card) { k.Review = "looks fine" },
		"verdict":     func(k *repair.Card) { k.Verdict = verify.Rejected },
		"test source": func(k *repair.Card) { k.HarnessSource[0].Content += "// rigged\n" },
		"test path":   func(k *repair.Card) { k.HarnessSource[0].Path = "cart/other_test.go" },
		"reviewer":    func(k *repair.Card) { k.HarnessReview.By = "act_pia" },
		"review":      func(k *repair.Card) { k.HarnessReview.ReviewDigest = strings.Repeat("s", 64) },
	} {
		k, _ := repair.NewCard(c, h, cand, rep, testSource)
		mod(&k)
		if d, _ := k.Digest(); d == base {
			t.Errorf("changing %s leaves the digest", name)
		}
	}
	// The card's copy of the source is its own: the caller's slice may
	// change without changing a card already built.
	src := repair.Sources(map[string][]byte{"a_test.go": []byte("x")})
	k, err := repair.NewCard(c, h, cand, rep, src)
	if err != nil {
		t.Fatal(err)
	}
	src[0].Content = "y"
	if k.HarnessSource[0].Content != "x" {
		t.Error("the card shares its source with the caller")
	}
	// A harness no member of staff approved has no card, however frozen.
	for name, review := range map[string]*signoff.HarnessReview{
		"never reviewed": nil,
		"rejected":       {HarnessID: "har_1", By: "act_oscar", Decision: signoff.HarnessReject, Note: "reads cart.go"},
	} {
		unreviewed := h
		unreviewed.StaffReview = review
		if _, err := repair.NewCard(c, unreviewed, cand, rep, testSource); signoff.ErrorCode(err) != signoff.ECONFLICT {
			t.Errorf("card of a harness %s by staff: %v, want conflict", name, err)
		}
	}
	if _, err := repair.NewCard(c, h, cand, rep, nil); err == nil {
		t.Error("a card without the test source")
	}
	// Nothing but a verified candidate has a card.
	cand.Status = signoff.CandidateRejected
	if _, err := repair.NewCard(c, h, cand, rep, testSource); signoff.ErrorCode(err) != signoff.ECONFLICT {
		t.Errorf("card of a rejected candidate: %v", err)
	}
}

// TestReviewDigestCoversEverything: a staff decision names the review
// digest, which changes with anything the reviewer read.
func TestReviewDigestCoversEverything(t *testing.T) {
	t.Parallel()
	c := signoff.Case{ID: "case_1"}
	h := signoff.HarnessRecord{ID: "har_1", Digest: strings.Repeat("d", 64), FailingOutput: "- TestCouponAppliesOnce: got 8100, want 9000"}
	files := map[string][]byte{"cart/coupon_repro_test.go": []byte("package cart\n"), "cart/helper_test.go": []byte("package cart\n// helper\n")}
	findings := []tamper.Finding{{Rule: "reads-source", Severity: tamper.Flag, Path: "cart/coupon_repro_test.go", Line: 3, Detail: "os.ReadFile"}}
	base, err := repair.NewReviewSubject(c, h, files, findings).Digest()
	if err != nil {
		t.Fatal(err)
	}
	clone := func() map[string][]byte {
		m := map[string][]byte{}
		for k, v := range files {
			m[k] = append([]byte(nil), v...)
		}
		return m
	}
	for name, mk := range map[string]func() repair.ReviewSubject{
		"case": func() repair.ReviewSubject {
			return repair.NewReviewSubject(signoff.Case{ID: "case_2"}, h, files, findings)
		},
		"harness id": func() repair.ReviewSubject {
			h2 := h
			h2.ID = "har_2"
			return repair.NewReviewSubject(c, h2, files, findings)
		},
		"harness digest": func() repair.ReviewSubject {
			h2 := h
			h2.Digest = strings.Repeat("e", 64)
			return repair.NewReviewSubject(c, h2, files, findings)
		},
		"failing output": func() repair.ReviewSubject {
			h2 := h
			h2.FailingOutput += "!"
			return repair.NewReviewSubject(c, h2, files, findings)
		},
		"a byte of a file": func() repair.ReviewSubject {
			f := clone()
			f["cart/helper_test.go"][0] = 'P'
			return repair.NewReviewSubject(c, h, f, findings)
		},
		"a file more": func() repair.ReviewSubject {
			f := clone()
			f["cart/more_test.go"] = nil
			return repair.NewReviewSubject(c, h, f, findings)
		},
		"invalid UTF-8": func() repair.ReviewSubject {
			// Two different invalid bytes both encode as U+FFFD in JSON:
			// the file's own digest still tells them apart.
			f := clone()
			f["cart/helper_test.go"] = []byte{0xff}
			return repair.NewReviewSubject(c, h, f, findings)
		},
		"no findings": func() repair.ReviewSubject { return repair.NewReviewSubject(c, h, files, nil) },
		"another finding": func() repair.ReviewSubject {
			return repair.NewReviewSubject(c, h, files, append(findings, findings[0]))
		},
	} {
		d, err := mk().Digest()
		if err != nil {
			t.Fatal(err)
		}
		if d == base {
			t.Errorf("changing %s leaves the review digest", name)
		}
	}
	f1, f2 := clone(), clone()
	f1["cart/helper_test.go"], f2["cart/helper_test.go"] = []byte{0xff}, []byte{0xfe}
	d1, _ := repair.NewReviewSubject(c, h, f1, findings).Digest()
	d2, _ := repair.NewReviewSubject(c, h, f2, findings).Digest()
	if d1 == d2 {
		t.Error("two different invalid bytes give one review digest")
	}
	// Files are listed by path, whatever the map's order.
	s := repair.NewReviewSubject(c, h, files, findings)
	if len(s.Files) != 2 || s.Files[0].Path != "cart/coupon_repro_test.go" || s.Files[1].Path != "cart/helper_test.go" {
		t.Fatalf("files = %+v", s.Files)
	}
	if again, _ := repair.NewReviewSubject(c, h, files, findings).Digest(); again != base {
		t.Error("the review digest is not stable")
	}
}

// TestAwaitsStaff: a reproduction waits for a staff decision while the
// reporter is asked about it or after their yes, until someone decides.
func TestAwaitsStaff(t *testing.T) {
	t.Parallel()
	review := &signoff.HarnessReview{Decision: signoff.HarnessApprove}
	for _, tc := range []struct {
		state  string
		status string
		review *signoff.HarnessReview
		want   bool
	}{
		{"awaiting_reporter_repro", signoff.HarnessProposed, nil, true},
		{"awaiting_reporter_repro", signoff.HarnessProposed, review, false},
		{"reproduced", signoff.HarnessConfirmed, nil, true},
		{"reproduced", signoff.HarnessConfirmed, review, false},
		{"reproduced", signoff.HarnessFrozen, review, false},
		{"reproducing", signoff.HarnessProposed, nil, false},
		{"fixing", signoff.HarnessFrozen, nil, false},
		{"needs_human", signoff.HarnessConfirmed, nil, false},
	} {
		if got := repair.AwaitsStaff(tc.state, signoff.HarnessRecord{Status: tc.status, StaffReview: tc.review}); got != tc.want {
			t.Errorf("AwaitsStaff(%s, %s, reviewed %v) = %v", tc.state, tc.status, tc.review != nil, got)
		}
	}
}

// TestFrozenNeedsBothPeople: a harness is frozen, for every purpose of
// the loop, only when the reporter confirmed it and staff approved it.
func TestFrozenNeedsBothPeople(t *testing.T) {
	t.Parallel()
	now := time.Now()
	approved := &signoff.HarnessReview{HarnessID: "har_1", By: "act_oscar", Decision: signoff.HarnessApprove}
	rejected := &signoff.HarnessReview{HarnessID: "har_1", By: "act_oscar", Decision: signoff.HarnessReject, Note: "hashes cart.go"}
	for _, tc := range []struct {
		name             string
		h                signoff.HarnessRecord
		current, frozen  bool
		reporter, staffS string
	}{
		{"proposed", signoff.HarnessRecord{Status: signoff.HarnessProposed}, true, false, repair.StatusPending, repair.StatusPending},
		{"staff approved first", signoff.HarnessRecord{Status: signoff.HarnessProposed, StaffReview: approved}, true, false, repair.StatusPending, repair.StatusApproved},
		{"reporter said yes", signoff.HarnessRecord{Status: signoff.HarnessConfirmed, ConfirmedAt: &now}, true, false, repair.StatusYes, repair.StatusPending},
		{"both", signoff.HarnessRecord{Status: signoff.HarnessFrozen, ConfirmedAt: &now, FrozenAt: &now, StaffReview: approved}, true, true, repair.StatusYes, repair.StatusApproved},
		{"frozen before the rule", signoff.HarnessRecord{Status: signoff.HarnessFrozen, FrozenAt: &now}, true, false, repair.StatusYes, repair.StatusNone},
		{"staff rejected", signoff.HarnessRecord{Status: signoff.HarnessDisowned, StaffReview: rejected}, false, false, repair.StatusNone, repair.StatusRejected},
		{"reporter said no", signoff.HarnessRecord{Status: signoff.HarnessDisowned, ReporterNote: "not my bug"}, false, false, repair.StatusNo, repair.StatusNone},
	} {
		tc.h.ID, tc.h.Round = "har_1", 1
		st := signoff.BugLoopState{Round: 1, Harnesses: []signoff.HarnessRecord{tc.h}}
		if got := repair.CurrentHarness(st) != nil; got != tc.current {
			t.Errorf("%s: current = %v", tc.name, got)
		}
		if got := repair.FrozenHarness(st) != nil; got != tc.frozen {
			t.Errorf("%s: frozen = %v", tc.name, got)
		}
		if got := repair.ReporterStatus(tc.h); got != tc.reporter {
			t.Errorf("%s: reporter status %s, want %s", tc.name, got, tc.reporter)
		}
		if got := repair.StaffStatus(tc.h); got != tc.staffS {
			t.Errorf("%s: staff status %s, want %s", tc.name, got, tc.staffS)
		}
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
