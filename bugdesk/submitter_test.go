package bugdesk_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/verify"
)

// TestSubmitterCannotApprove: the person who submitted the candidate
// signs an approval of its exact card with their registered key, and it is
// refused (403); another person's approval of the same card holds.
func TestSubmitterCannotApprove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, skey, _ := ed25519.GenerateKey(rand.Reader)
	s.SetSigner(skey)
	ws, owner, err := s.CreateWorkspace(ctx, "W", "olga")
	if err != nil {
		t.Fatal(err)
	}
	cli, sys := signoff.CLIActor(ws.ID), signoff.SystemActor(ws.ID)
	op, err := s.CreateActor(ctx, owner, "oscar", signoff.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.CreateActor(ctx, owner, "rita", signoff.RoleReporter)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	// The card carries the harness's test source, read from the project's
	// repository: ShopLite, with its coupon reproduction.
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	sample, err := shoplite.Build(ctx, filepath.Join(t.TempDir(), "shop"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetRepoSettings(ctx, cli, p.ID, signoff.RepoSettings{Path: sample.Dir, FixPaths: []string{"cart/**"}}); err != nil {
		t.Fatal(err)
	}
	c, err := s.CreateCase(ctx, owner, signoff.CaseInput{ProjectID: p.ID, Kind: signoff.KindBug, Title: "coupon twice", ReporterID: rep.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"start_triage", "ticket"} {
		if _, _, err := s.TransitionCase(ctx, owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	// The loop's record: a frozen harness (the reporter confirmed it, the
	// owner approved its test) and the operator's verified candidate, with
	// the verification report its card is built from.
	spec, err := json.Marshal(sample.CouponHarness())
	if err != nil {
		t.Fatal(err)
	}
	vh, err := verify.ParseHarness(spec)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := verify.HarnessDigest(ctx, sample.Dir, vh)
	if err != nil {
		t.Fatal(err)
	}
	base, commit := sample.Base, sample.Branches[shoplite.BranchGenuine]
	h := signoff.HarnessRecord{ID: "har_1", Round: 1, Status: signoff.HarnessFrozen, Spec: spec, Digest: digest, Base: base, Commit: vh.TestsFrom, TestFiles: vh.TestFiles,
		StaffReview: &signoff.HarnessReview{HarnessID: "har_1", By: owner.ID, Decision: signoff.HarnessApprove, ReviewDigest: strings.Repeat("e", 64), At: time.Now().UTC()}}
	rep1, _ := json.Marshal(verify.Report{Verdict: verify.Verified, Reason: "ok", Base: base, Candidate: commit, HarnessDigest: h.Digest, Fingerprint: strings.Repeat("f", 64)})
	cand := signoff.Candidate{ID: "cand_1", HarnessID: h.ID, Attempt: 1, Base: base, Commit: commit, Diff: "diff", Status: signoff.CandidateVerified,
		Verdict: verify.Verified, Report: rep1, SubmittedBy: op.ID, SubmitterRole: signoff.RoleOperator, Evidence: signoff.EvidenceAuthored}
	st := signoff.BugLoopState{Round: 1}
	var version int64
	for _, step := range []struct {
		by  signoff.Actor
		cmd string
	}{{sys, "start_reproduction"}, {owner, "propose_reproduction"}, {rep, "confirm_reproduction"}, {owner, "approve_harness"}, {sys, "start_fix"},
		{op, "submit_candidate"}, {sys, "record_verified"}} {
		if step.cmd == "record_verified" {
			st.Harnesses, st.Candidates = []signoff.HarnessRecord{h}, []signoff.Candidate{cand}
		}
		l, _, err := s.AdvanceLoop(ctx, step.by, signoff.LoopUpdate{CaseID: c.ID, Version: version, State: st, Command: step.cmd})
		if err != nil {
			t.Fatalf("%s: %v", step.cmd, err)
		}
		version = l.Version
	}
	d := &bugdesk.Desk{Store: s}
	sign := func(by signoff.Actor) ([]byte, ed25519.PrivateKey) {
		_, key, _ := ed25519.GenerateKey(rand.Reader)
		pem, err := keys.EncodePublic(key.Public().(ed25519.PublicKey))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.RegisterKey(ctx, by, string(pem)); err != nil {
			t.Fatal(err)
		}
		v, err := d.Card(ctx, by, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		env, err := approval.Sign(approval.NewStatement(c.ID, v.SubjectDigest, approval.Approve, v.Policy.Digest(), by.ID, time.Now(), v.Policy.TTL()), key)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(env)
		return raw, key
	}
	// The card shows the test source, exactly as the harness digest
	// covers it, and who approved the harness.
	v, err := d.Card(ctx, owner, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if src := v.Card.HarnessSource; len(src) != 1 || src[0].Path != "cart/coupon_repro_test.go" || !strings.Contains(src[0].Content, "func TestCouponAppliesOnce") {
		t.Fatalf("card source = %+v", src)
	}
	if v.Card.HarnessReview.By != owner.ID || v.Card.HarnessReview.Decision != signoff.HarnessApprove {
		t.Fatalf("card harness review = %+v", v.Card.HarnessReview)
	}
	mine, _ := sign(op)
	before, _ := s.HeadSeq(ctx, ws.ID)
	if _, _, err := d.Approve(ctx, op, c.ID, mine, "cli-signed", ""); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("the submitter's own approval: %v, want forbidden", err)
	}
	if after, _ := s.HeadSeq(ctx, ws.ID); after != before {
		t.Fatal("a refused approval moved the ledger")
	}
	// The owner opened the case: no self-approval either.
	opened, _ := sign(owner)
	if _, _, err := d.Approve(ctx, owner, c.ID, opened, "cli-signed", ""); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("the opener's approval: %v, want forbidden", err)
	}
	other, err := s.CreateActor(ctx, owner, "pia", signoff.RoleOperator)
	if err != nil {
		t.Fatal(err)
	}
	theirs, _ := sign(other)
	if _, got, err := d.Approve(ctx, other, c.ID, theirs, "cli-signed", ""); err != nil || got.State != "approved" {
		t.Fatalf("another person's approval: %v (%s)", err, got.State)
	}
}
