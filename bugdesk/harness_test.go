package bugdesk_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/shoplite"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/storetest"
	"github.com/signoff-dev/signoff/verify"
	"github.com/signoff-dev/signoff/workflow"
)

// reviewRig is a reported ShopLite bug whose reproduction (the sample's
// coupon test, or a rigged one) waits for the reporter and for staff.
type reviewRig struct {
	s                      *sqlstore.DB
	d                      *bugdesk.Desk
	ws                     string
	owner, op, pia, viewer signoff.Actor
	repro                  signoff.Actor // the reproducer agent
	sample                 *shoplite.Sample
	caseID, secret         string
	h                      signoff.HarnessRecord
}

// newReviewRig reports the coupon bug and proposes a reproduction by
// proposer (nil: the reproducer agent) from spec's tests (nil: the
// sample's coupon test).
func newReviewRig(t *testing.T, proposer func(*reviewRig) signoff.Actor, spec func(*reviewRig) shoplite.HarnessSpec) *reviewRig {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	_, skey, _ := ed25519.GenerateKey(rand.Reader)
	s.SetSigner(skey)
	ws, owner, err := s.CreateWorkspace(ctx, "W", "olga")
	if err != nil {
		t.Fatal(err)
	}
	r := &reviewRig{s: s, d: &bugdesk.Desk{Store: s}, ws: ws.ID, owner: owner}
	for _, a := range []struct {
		to   *signoff.Actor
		name string
		role signoff.Role
	}{{&r.op, "oscar", signoff.RoleOperator}, {&r.pia, "pia", signoff.RoleOperator}, {&r.viewer, "vera", signoff.RoleViewer},
		{&r.repro, "reproducer", signoff.RoleReproducer}, {new(signoff.Actor), "fixer", signoff.RoleFixer}} {
		if *a.to, err = s.CreateActor(ctx, owner, a.name, a.role); err != nil {
			t.Fatal(err)
		}
	}
	if r.sample, err = shoplite.Build(ctx, filepath.Join(t.TempDir(), "shop")); err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetRepoSettings(ctx, signoff.CLIActor(ws.ID), p.ID, signoff.RepoSettings{Path: r.sample.Dir, FixPaths: []string{"cart/**"}}); err != nil {
		t.Fatal(err)
	}
	c, _, secret, err := s.SubmitReport(ctx, signoff.ReportInput{ProjectID: p.ID, Text: "SAVE10 is applied twice: a 100.00 lamp costs 81.00"})
	if err != nil {
		t.Fatal(err)
	}
	r.caseID, r.secret = c.ID, secret
	for _, cmd := range []string{"start_triage", "ticket"} {
		if _, _, err := s.TransitionCase(ctx, owner, c.ID, signoff.TransitionInput{Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	hs := r.sample.CouponHarness()
	if spec != nil {
		hs = spec(r)
	}
	raw, err := json.Marshal(hs)
	if err != nil {
		t.Fatal(err)
	}
	vh, err := verify.ParseHarness(raw)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := verify.HarnessDigest(ctx, r.sample.Dir, vh)
	if err != nil {
		t.Fatal(err)
	}
	by := r.repro
	if proposer != nil {
		by = proposer(r)
	}
	r.h = signoff.HarnessRecord{ID: signoff.NewID(signoff.PrefixHarness), Round: 1, Status: signoff.HarnessProposed, Spec: raw, Digest: digest,
		Base: vh.Base, Commit: vh.TestsFrom, TestFiles: vh.TestFiles, FailingOutput: "We wrote an automated test of what you described. On the current version it fails:\n- TestCouponAppliesOnce: got 8100, want 9000",
		ProposedBy: by.ID, Evidence: signoff.EvidenceAuthored, ProposedAt: time.Now().UTC()}
	l, _, err := s.AdvanceLoop(ctx, signoff.SystemActor(ws.ID), signoff.LoopUpdate{CaseID: c.ID, State: signoff.BugLoopState{Round: 1}, Command: "start_reproduction"})
	if err != nil {
		t.Fatal(err)
	}
	st := signoff.BugLoopState{Round: 1, Harnesses: []signoff.HarnessRecord{r.h}}
	var tk signoff.Task
	if by.Role.IsAgent() {
		tk = storetest.GiveTask(t, s, owner, by, c.ID) // an agent proposes on its open task
	}
	if _, _, err := s.AdvanceLoop(ctx, by, signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, State: st, Command: "propose_reproduction"}); err != nil {
		t.Fatal(err)
	}
	if tk.ID != "" {
		// and its result closes the task, as the desk's tool does.
		if _, err := s.SubmitTask(ctx, by, signoff.Submission{TaskID: tk.ID, InputDigest: tk.InputDigest, Output: json.RawMessage(`{"harness_id":"` + r.h.ID + `"}`),
			Evidence: signoff.EvidenceAuthored, Final: true}); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func (r *reviewRig) view(t *testing.T, by signoff.Actor) bugdesk.HarnessView {
	t.Helper()
	v, err := r.d.Harness(context.Background(), by, r.caseID)
	if err != nil {
		t.Fatalf("Harness as %s: %v", by.Role, err)
	}
	return v
}

func (r *reviewRig) review(by signoff.Actor, digest, decision, note string) (signoff.Case, error) {
	_, c, err := r.d.ReviewHarness(context.Background(), by, r.caseID, bugdesk.HarnessDecision{ReviewDigest: digest, Decision: decision, Note: note})
	return c, err
}

func (r *reviewRig) reporterSays(t *testing.T, answer, text string) (signoff.Case, error) {
	t.Helper()
	page, err := r.d.Track(context.Background(), r.secret)
	if err != nil {
		t.Fatal(err)
	}
	return r.d.ReporterAnswer(context.Background(), r.secret, bugdesk.Answer{Digest: page.Digest, Answer: answer, Text: text})
}

func (r *reviewRig) state(t *testing.T) (signoff.Case, signoff.HarnessRecord) {
	t.Helper()
	ctx := context.Background()
	c, err := r.s.GetCase(ctx, r.owner, r.caseID)
	if err != nil {
		t.Fatal(err)
	}
	l, err := r.s.GetLoop(ctx, r.owner, r.caseID)
	if err != nil {
		t.Fatal(err)
	}
	return c, l.State.Harnesses[len(l.State.Harnesses)-1]
}

// events returns the case's ledger events of type typ, payload decoded.
func (r *reviewRig) events(t *testing.T, typ string) []map[string]any {
	t.Helper()
	evs, err := r.s.ListEvents(context.Background(), r.owner, r.caseID, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, e := range evs {
		if e.Type != typ {
			continue
		}
		var p map[string]any
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// jobsEnqueued is every job kind the case's loop updates enqueued.
func (r *reviewRig) jobsEnqueued(t *testing.T) []string {
	t.Helper()
	var kinds []string
	for _, p := range r.events(t, "loop.updated") {
		for _, k := range p["jobs"].([]any) {
			kinds = append(kinds, k.(string))
		}
	}
	return kinds
}

// TestStaffReviewsTheReproduction: the SYNKAI rule. Whoever answers
// first, the harness freezes and the fix job is enqueued only once the
// reporter said yes and a member of staff approved the test over the
// review digest they read; nobody else decides, and nothing else counts.
func TestStaffReviewsTheReproduction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("staff first", func(t *testing.T) {
		t.Parallel()
		r := newReviewRig(t, nil, nil)
		v := r.view(t, r.viewer)
		if len(v.TestFiles) != 1 || v.TestFiles[0].Path != "cart/coupon_repro_test.go" || !strings.Contains(v.TestFiles[0].Content, "TestCouponAppliesOnce") {
			t.Fatalf("test files = %+v", v.TestFiles)
		}
		if v.Base != r.sample.Base || v.TestsFrom != r.sample.Branches[shoplite.BranchReproCoupon] || v.ExpectedFailure != "8100" ||
			!slices.Equal(v.FailToPass, []string{"TestCouponAppliesOnce"}) || len(v.PassToPass) == 0 || v.FailingOutput != r.h.FailingOutput {
			t.Fatalf("view = %+v", v)
		}
		if d, err := v.Subject().Digest(); err != nil || d != v.ReviewDigest {
			t.Fatalf("the view's subject digests to %s, not its review digest %s (%v)", d, v.ReviewDigest, err)
		}
		if len(v.Findings) != 0 {
			t.Errorf("the sample's coupon test, which checks the total, has findings: %+v", v.Findings)
		}
		if v.ReporterAnswer != repair.StatusPending || v.StaffStatus != repair.StatusPending || !v.Reviewable {
			t.Fatalf("statuses = %s, %s, reviewable %v", v.ReporterAnswer, v.StaffStatus, v.Reviewable)
		}
		before, _ := r.s.HeadSeq(ctx, r.ws)
		for _, tc := range []struct {
			name             string
			by               signoff.Actor
			digest, decision string
			note             string
			code             string
		}{
			{"a viewer", r.viewer, v.ReviewDigest, signoff.HarnessApprove, "", signoff.EFORBIDDEN},
			{"the reproducer agent", r.repro, v.ReviewDigest, signoff.HarnessApprove, "", signoff.EFORBIDDEN},
			{"the CLI", signoff.CLIActor(r.ws), v.ReviewDigest, signoff.HarnessApprove, "", signoff.EFORBIDDEN},
			{"the server", signoff.SystemActor(r.ws), v.ReviewDigest, signoff.HarnessApprove, "", signoff.EFORBIDDEN},
			{"a stale digest", r.op, strings.Repeat("0", 64), signoff.HarnessApprove, "", signoff.ECONFLICT},
			{"a malformed digest", r.op, "abc", signoff.HarnessApprove, "", signoff.EINVALID},
			{"an unknown decision", r.op, v.ReviewDigest, "maybe", "", signoff.EINVALID},
			{"a rejection without a note", r.op, v.ReviewDigest, signoff.HarnessReject, "  ", signoff.EINVALID},
			{"a note too long", r.op, v.ReviewDigest, signoff.HarnessReject, strings.Repeat("x", 4001), signoff.EINVALID},
		} {
			if _, err := r.review(tc.by, tc.digest, tc.decision, tc.note); signoff.ErrorCode(err) != tc.code {
				t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
			}
		}
		if after, _ := r.s.HeadSeq(ctx, r.ws); after != before {
			t.Fatalf("refused reviews moved the ledger from %d to %d", before, after)
		}
		if _, err := r.d.Harness(ctx, r.repro, r.caseID); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Fatalf("an agent read the review: %v", err)
		}

		c, err := r.review(r.op, v.ReviewDigest, signoff.HarnessApprove, "checks the total, not the source")
		if err != nil || c.State != workflow.BugAwaitingReporterRepro {
			t.Fatalf("approve before the reporter: %v (%s)", err, c.State)
		}
		_, h := r.state(t)
		if h.Status != signoff.HarnessProposed || h.FrozenAt != nil || h.StaffReview == nil || h.StaffReview.By != r.op.ID ||
			h.StaffReview.ReviewDigest != v.ReviewDigest || h.StaffReview.Decision != signoff.HarnessApprove {
			t.Fatalf("harness after the staff approval = %+v", h)
		}
		if slices.Contains(r.jobsEnqueued(t), "bug_fix") || len(r.events(t, "harness.frozen")) != 0 {
			t.Fatal("the harness froze on the staff approval alone")
		}
		if ev := r.events(t, "harness.reviewed"); len(ev) != 1 || ev[0]["review_digest"] != v.ReviewDigest || ev[0]["reviewed_by"] != r.op.ID || ev[0]["decision"] != "approve" {
			t.Fatalf("harness.reviewed = %v", ev)
		}
		// One review per reproduction.
		if _, err := r.review(r.pia, v.ReviewDigest, signoff.HarnessReject, "changed my mind"); signoff.ErrorCode(err) != signoff.ECONFLICT {
			t.Fatalf("a second review: %v", err)
		}
		// The reporter still answers the same question, and their yes
		// freezes the harness and starts the fix.
		c, err = r.reporterSays(t, "yes", "")
		if err != nil || c.State != workflow.BugReproduced {
			t.Fatalf("the reporter's yes: %v (%s)", err, c.State)
		}
		_, h = r.state(t)
		if h.Status != signoff.HarnessFrozen || h.FrozenAt == nil || h.ConfirmedAt == nil {
			t.Fatalf("harness after both = %+v", h)
		}
		if fr := r.events(t, "harness.frozen"); len(fr) != 1 || fr[0]["reviewed_by"] != r.op.ID || fr[0]["review_digest"] != v.ReviewDigest {
			t.Fatalf("harness.frozen = %v", fr)
		}
		if n := strings.Count(strings.Join(r.jobsEnqueued(t), " "), "bug_fix"); n != 1 {
			t.Fatalf("bug_fix enqueued %d times", n)
		}
		if err := r.d.StartFix(ctx, r.ws, r.caseID); err != nil {
			t.Fatalf("StartFix of a frozen case: %v", err)
		}
		if c, _ := r.state(t); c.State != workflow.BugFixing {
			t.Fatalf("case is %s after StartFix", c.State)
		}
	})

	t.Run("reporter first", func(t *testing.T) {
		t.Parallel()
		r := newReviewRig(t, func(r *reviewRig) signoff.Actor { return r.op }, nil)
		c, err := r.reporterSays(t, "yes", "")
		if err != nil || c.State != workflow.BugReproduced {
			t.Fatalf("the reporter's yes: %v (%s)", err, c.State)
		}
		_, h := r.state(t)
		if h.Status != signoff.HarnessConfirmed || h.FrozenAt != nil || h.ConfirmedAt == nil {
			t.Fatalf("harness after the reporter alone = %+v", h)
		}
		if slices.Contains(r.jobsEnqueued(t), "bug_fix") || len(r.events(t, "harness.frozen")) != 0 {
			t.Fatal("the harness froze on the reporter's yes alone")
		}
		// No path starts the fix without the review: the job's own step
		// refuses and leaves the case where it is.
		if err := r.d.StartFix(ctx, r.ws, r.caseID); signoff.ErrorCode(err) != signoff.ECONFLICT {
			t.Fatalf("StartFix without the staff review: %v", err)
		}
		if c, _ := r.state(t); c.State != workflow.BugReproduced {
			t.Fatalf("case is %s after a refused StartFix", c.State)
		}
		v := r.view(t, r.owner)
		if v.ReporterAnswer != repair.StatusYes || v.StaffStatus != repair.StatusPending || !v.Reviewable || v.State != workflow.BugReproduced {
			t.Fatalf("view = %s %s %v %s", v.ReporterAnswer, v.StaffStatus, v.Reviewable, v.State)
		}
		// Who proposed the reproduction does not review it.
		if _, err := r.review(r.op, v.ReviewDigest, signoff.HarnessApprove, ""); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
			t.Fatalf("the proposer's own review: %v", err)
		}
		c, err = r.review(r.pia, v.ReviewDigest, signoff.HarnessApprove, "")
		if err != nil || c.State != workflow.BugReproduced {
			t.Fatalf("the staff approval after the reporter: %v (%s)", err, c.State)
		}
		_, h = r.state(t)
		if h.Status != signoff.HarnessFrozen || h.FrozenAt == nil || h.StaffReview.By != r.pia.ID {
			t.Fatalf("harness after both = %+v", h)
		}
		if !slices.Contains(r.jobsEnqueued(t), "bug_fix") || len(r.events(t, "harness.frozen")) != 1 {
			t.Fatal("no fix job or no harness.frozen after both agreed")
		}
		if err := r.d.StartFix(ctx, r.ws, r.caseID); err != nil {
			t.Fatalf("StartFix: %v", err)
		}
		if c, _ := r.state(t); c.State != workflow.BugFixing {
			t.Fatalf("case is %s", c.State)
		}
		if ev := r.events(t, "fix.started"); len(ev) != 1 || ev[0]["reviewed_by"] != r.pia.ID {
			t.Fatalf("fix.started = %v", ev)
		}
	})

	for _, reporterFirst := range []bool{false, true} {
		name := "staff rejects while the reporter is asked"
		if reporterFirst {
			name = "staff rejects after the reporter's yes"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newReviewRig(t, nil, nil)
			if reporterFirst {
				if _, err := r.reporterSays(t, "yes", ""); err != nil {
					t.Fatal(err)
				}
			}
			page, err := r.d.Track(ctx, r.secret)
			if err != nil {
				t.Fatal(err)
			}
			v := r.view(t, r.op)
			const why = "the test hashes cart/cart.go instead of checking the total"
			c, err := r.review(r.op, v.ReviewDigest, signoff.HarnessReject, why)
			if err != nil || c.State != workflow.BugReproducing {
				t.Fatalf("reject: %v (%s)", err, c.State)
			}
			_, h := r.state(t)
			if h.Status != signoff.HarnessDisowned || h.StaffReview == nil || h.StaffReview.Decision != signoff.HarnessReject || h.StaffReview.Note != why || h.FrozenAt != nil {
				t.Fatalf("rejected harness = %+v", h)
			}
			if jobs := r.jobsEnqueued(t); !slices.Contains(jobs, "bug_reproduce") || slices.Contains(jobs, "bug_fix") {
				t.Fatalf("jobs = %v", jobs)
			}
			// The reporter's question is gone: a late answer is stale.
			if !reporterFirst {
				if _, err := r.d.ReporterAnswer(ctx, r.secret, bugdesk.Answer{Digest: page.Digest, Answer: "yes"}); signoff.ErrorCode(err) != signoff.ECONFLICT {
					t.Fatalf("the reporter's answer after the rejection: %v", err)
				}
			}
			if _, err := r.d.Harness(ctx, r.op, r.caseID); signoff.ErrorCode(err) != signoff.ECONFLICT {
				t.Fatalf("view of a case without a current reproduction: %v", err)
			}
			// The next reproducer task says why, apart from the reporter's words.
			if err := r.d.StartReproduction(ctx, r.ws, r.caseID); err != nil {
				t.Fatal(err)
			}
			ts, err := r.s.ListTasks(ctx, r.owner, signoff.TaskFilter{CaseID: r.caseID, Status: signoff.TaskOpen, Limit: 10})
			if err != nil || len(ts) != 1 {
				t.Fatalf("tasks = %v, %v", ts, err)
			}
			var in struct {
				Subject struct {
					Reporter []string `json:"reporter_said_not_this"`
					Staff    []string `json:"staff_rejected_because"`
				} `json:"subject"`
			}
			if err := json.Unmarshal(ts[0].Input, &in); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(in.Subject.Staff, []string{why}) || len(in.Subject.Reporter) != 0 {
				t.Fatalf("reproducer task subject = %+v", in.Subject)
			}
		})
	}

	t.Run("a person resumes fixing without a frozen reproduction", func(t *testing.T) {
		t.Parallel()
		r := newReviewRig(t, nil, nil)
		if _, err := r.reporterSays(t, "yes", ""); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range []string{"escalate", "resume_fix"} {
			if _, _, err := r.s.TransitionCase(ctx, r.owner, r.caseID, signoff.TransitionInput{Command: cmd}); err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
		}
		// The fix job finds no frozen reproduction: no fixer task, and the
		// case goes back to a person.
		if err := r.d.StartFix(ctx, r.ws, r.caseID); signoff.ErrorCode(err) != signoff.ECONFLICT {
			t.Fatalf("StartFix: %v", err)
		}
		if c, _ := r.state(t); c.State != workflow.BugNeedsHuman {
			t.Fatalf("case is %s", c.State)
		}
		if ts, err := r.s.ListTasks(ctx, r.owner, signoff.TaskFilter{CaseID: r.caseID, Status: signoff.TaskOpen, Limit: 10}); err != nil || len(ts) != 0 {
			t.Fatalf("open tasks = %v, %v", ts, err)
		}
	})

	t.Run("the reporter says no after staff approved", func(t *testing.T) {
		t.Parallel()
		r := newReviewRig(t, nil, nil)
		v := r.view(t, r.op)
		if _, err := r.review(r.op, v.ReviewDigest, signoff.HarnessApprove, ""); err != nil {
			t.Fatal(err)
		}
		c, err := r.reporterSays(t, "no", "my cart had two lamps")
		if err != nil || c.State != workflow.BugReproducing {
			t.Fatalf("no: %v (%s)", err, c.State)
		}
		if _, h := r.state(t); h.Status != signoff.HarnessDisowned || h.FrozenAt != nil {
			t.Fatalf("harness = %+v", h)
		}
		if slices.Contains(r.jobsEnqueued(t), "bug_fix") {
			t.Fatal("a fix job without the reporter's yes")
		}
	})
}

// TestRiggedReproductionIsShownWithFindings: a reproduction test that
// hashes the source file it guards instead of checking behaviour fails
// on main exactly as expected, and would verify any candidate that
// touches that file. Its reviewer sees the test source whole, with the
// static checks' findings, and both are covered by the review digest.
func TestRiggedReproductionIsShownWithFindings(t *testing.T) {
	t.Parallel()
	const rigged = `package cart

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"
)

// TestCouponAppliesOnce "fails" with 8100 only while cart.go is main's.
func TestCouponAppliesOnce(t *testing.T) {
	b, _ := os.ReadFile("cart.go")
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != "" {
		t.Fatalf("Total = 8100, want 9000")
	}
}
`
	r := newReviewRig(t, nil, func(r *reviewRig) shoplite.HarnessSpec {
		ctx := context.Background()
		repo := &gitx.Repo{Dir: r.sample.Dir}
		blob, err := repo.WriteBlob(ctx, []byte(rigged))
		if err != nil {
			t.Fatal(err)
		}
		commit, err := repo.CommitEdits(ctx, r.sample.Base, []gitx.TreeEdit{{Path: "cart/coupon_repro_test.go", ID: blob}},
			"rigged repro", gitx.Signature{Name: "t", Email: "t@example.com", When: time.Unix(1, 0)})
		if err != nil {
			t.Fatal(err)
		}
		hs := r.sample.CouponHarness()
		hs.TestsFrom = commit
		return hs
	})
	v := r.view(t, r.op)
	if len(v.TestFiles) != 1 || v.TestFiles[0].Content != rigged {
		t.Fatalf("the reviewer does not see the test as written: %+v", v.TestFiles)
	}
	if len(v.Findings) == 0 {
		t.Fatal("no finding on a test that reads and hashes cart.go")
	}
	t.Logf("findings: %+v", v.Findings)
	for _, f := range v.Findings {
		if f.Path != "cart/coupon_repro_test.go" {
			t.Errorf("finding on %s: %+v", f.Path, f)
		}
	}
	withoutFindings := v.Subject()
	withoutFindings.Findings = nil
	if d, _ := withoutFindings.Digest(); d == v.ReviewDigest {
		t.Fatal("the review digest does not cover the findings")
	}
}
