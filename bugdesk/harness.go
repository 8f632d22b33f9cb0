package bugdesk

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/tamper"
	"github.com/signoff-dev/signoff/verify"
	"github.com/signoff-dev/signoff/workflow"
)

// The SYNKAI rule: a reproduction test is agent-written code, and a
// rigged one (a test that fails with the expected message only while
// cart.go hashes as it does on main) verifies any candidate that touches
// the file at all. So no fix is tried until a member of staff has read
// the test's source and approved "the test checks the reported
// behaviour", besides the reporter's "this is the bug I saw". Either may
// come first; the harness freezes, and the fix starts, when both have.

// HarnessView is a case's current reproduction as a member of staff
// reviews it: the harness, its test files in full, what fails on the
// base, what the static checks found in the test, the review digest a
// decision must quote, and where the reporter's answer and the staff
// review stand.
type HarnessView struct {
	CaseID          string                 `json:"case_id"`
	State           string                 `json:"state"`
	Round           int                    `json:"round"`
	ID              string                 `json:"id"`
	Status          string                 `json:"status"`
	Digest          string                 `json:"digest"`
	Base            string                 `json:"base"`
	TestsFrom       string                 `json:"tests_from"`
	Branch          string                 `json:"branch"`
	ProposedBy      string                 `json:"proposed_by"`
	Evidence        string                 `json:"evidence"`
	ProposedAt      time.Time              `json:"proposed_at"`
	RebasedFrom     string                 `json:"rebased_from,omitempty"`
	TestFiles       []repair.SourceFile    `json:"test_files"`
	FailToPass      []string               `json:"fail_to_pass"`
	PassToPass      []string               `json:"pass_to_pass"`
	ExpectedFailure string                 `json:"expected_failure"`
	FailingOutput   string                 `json:"failing_output"`
	Findings        []tamper.Finding       `json:"findings"`
	ReviewDigest    string                 `json:"review_digest"`
	ReporterAnswer  string                 `json:"reporter_answer"`
	ReporterNote    string                 `json:"reporter_note,omitempty"`
	StaffStatus     string                 `json:"staff_review_status"`
	StaffReview     *signoff.HarnessReview `json:"staff_review,omitempty"`
	// Reviewable: the case waits for a staff decision on this harness.
	Reviewable bool `json:"reviewable"`
}

// Subject is the review subject the view shows, whose digest is
// ReviewDigest: a client recomputes it from what it displayed.
func (v HarnessView) Subject() repair.ReviewSubject {
	return repair.ReviewSubject{Case: v.CaseID, HarnessID: v.ID, HarnessDigest: v.Digest, Files: v.TestFiles,
		FailingOutput: v.FailingOutput, Findings: v.Findings}
}

// HarnessDecision is a member of staff's decision on a reproduction.
type HarnessDecision struct {
	// ReviewDigest is the review_digest of the view they read.
	ReviewDigest string `json:"review_digest"`
	// Decision is "approve" (the test checks the reported behaviour) or
	// "reject".
	Decision string `json:"decision"`
	// Note says why; required with a rejection (it goes to the next
	// reproducer).
	Note string `json:"note,omitempty"`
}

const maxStaffNote = 4000

var hexDigest = regexp.MustCompile(`^[0-9a-f]{64}$`)

// reviewsHarness reports whether by may review a reproduction: a person
// holding a role on the table's approve_harness rows (owners, operators),
// never the server or the CLI, which act for no one person.
func reviewsHarness(by signoff.Actor) bool {
	if by.ID == "" || by.ID == signoff.SystemActor(by.WorkspaceID).ID || by.ID == signoff.CLIActor(by.WorkspaceID).ID {
		return false
	}
	for _, tr := range workflow.Bug.Transitions {
		if tr.Command == "approve_harness" && tr.Permits(by.Role) {
			return true
		}
	}
	return false
}

// Harness returns the case's current reproduction for review. People who
// run or watch the desk read it; agents and reporters do not.
func (d *Desk) Harness(ctx context.Context, by signoff.Actor, caseID string) (HarnessView, error) {
	if by.Role.IsAgent() || by.Role == signoff.RoleReporter || !by.Role.IsHuman() {
		return HarnessView{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s does not review reproductions", by.Role)
	}
	c, l, err := d.loop(ctx, by, caseID)
	if err != nil {
		return HarnessView{}, err
	}
	h := repair.CurrentHarness(l.State)
	if h == nil {
		return HarnessView{}, &signoff.Error{Code: signoff.ECONFLICT, State: c.State,
			Message: fmt.Sprintf("case %s is %s: it has no reproduction waiting for a decision or frozen", caseID, c.State)}
	}
	v, _, err := d.harnessView(ctx, c, l.State, h)
	return v, err
}

// harnessView reads harness h's test files at its tests_from commit, runs
// the static checks on them and builds the view with its review digest.
func (d *Desk) harnessView(ctx context.Context, c signoff.Case, st signoff.BugLoopState, h *signoff.HarnessRecord) (HarnessView, verify.Harness, error) {
	spec, err := harnessOf(h)
	if err != nil {
		return HarnessView{}, spec, fmt.Errorf("harness %s: %w", h.ID, err)
	}
	p, err := d.project(ctx, c.WorkspaceID, c.ProjectID)
	if err != nil {
		return HarnessView{}, spec, err
	}
	files, err := harnessFiles(ctx, p, h, spec)
	if err != nil {
		return HarnessView{}, spec, err
	}
	findings, err := reproductionFindings(ctx, p, spec, files)
	if err != nil {
		return HarnessView{}, spec, err
	}
	subject := repair.NewReviewSubject(c, *h, files, findings)
	digest, err := subject.Digest()
	if err != nil {
		return HarnessView{}, spec, fmt.Errorf("review digest of %s: %w", h.ID, err)
	}
	v := HarnessView{CaseID: c.ID, State: c.State, Round: st.Round, ID: h.ID, Status: h.Status, Digest: h.Digest, Base: h.Base,
		TestsFrom: spec.TestsFrom, Branch: h.Branch, ProposedBy: h.ProposedBy, Evidence: h.Evidence, ProposedAt: h.ProposedAt,
		RebasedFrom: h.RebasedFrom, TestFiles: subject.Files, FailToPass: orEmpty(spec.FailToPass), PassToPass: orEmpty(spec.PassToPass),
		ExpectedFailure: spec.ExpectedFailure, FailingOutput: h.FailingOutput, Findings: subject.Findings, ReviewDigest: digest,
		ReporterAnswer: repair.ReporterStatus(*h), ReporterNote: h.ReporterNote, StaffStatus: repair.StaffStatus(*h),
		StaffReview: h.StaffReview, Reviewable: repair.AwaitsStaff(c.State, *h)}
	return v, spec, nil
}

// harnessFiles reads the harness test files at its tests_from commit and
// checks them against the harness digest: what a person reads (and an
// approver signs) is exactly what the verdicts ran.
func harnessFiles(ctx context.Context, p project, h *signoff.HarnessRecord, spec verify.Harness) (map[string][]byte, error) {
	files, err := verify.ReadTestFiles(ctx, p.Repo, spec)
	if err != nil {
		return nil, fmt.Errorf("test files of harness %s: %w", h.ID, err)
	}
	digest, err := verify.DigestHarness(spec, files)
	if err != nil {
		return nil, fmt.Errorf("digest of harness %s: %w", h.ID, err)
	}
	if digest != h.Digest {
		return nil, fmt.Errorf("the test files of harness %s at %s digest to %s, not the recorded %s", h.ID, short(spec.TestsFrom), digest, h.Digest)
	}
	return files, nil
}

// harnessSource is harness h's test source for the approval card.
func (d *Desk) harnessSource(ctx context.Context, c signoff.Case, h *signoff.HarnessRecord) ([]repair.SourceFile, error) {
	spec, err := harnessOf(h)
	if err != nil {
		return nil, fmt.Errorf("harness %s: %w", h.ID, err)
	}
	p, err := d.project(ctx, c.WorkspaceID, c.ProjectID)
	if err != nil {
		return nil, err
	}
	files, err := harnessFiles(ctx, p, h, spec)
	if err != nil {
		return nil, err
	}
	return repair.Sources(files), nil
}

// reproductionFindings runs the advisory static checks on the test files
// (tamper.Reproduction): each file as at tests_from, and as at the base
// when it exists there. Findings are sorted, so the review digest does
// not depend on the order the checks ran in.
func reproductionFindings(ctx context.Context, p project, spec verify.Harness, files map[string][]byte) ([]tamper.Finding, error) {
	in := make([]tamper.File, 0, len(files))
	for _, path := range spec.TestFiles {
		f := tamper.File{Path: path, Cand: files[path], CandExists: true}
		e, ok, err := p.Repo.Entry(ctx, spec.Base, path)
		if err != nil {
			return nil, fmt.Errorf("%s at the base %s: %w", path, short(spec.Base), err)
		}
		if ok && e.Type == "blob" {
			if f.Base, err = p.Repo.ShowFile(ctx, spec.Base, path); err != nil {
				return nil, fmt.Errorf("%s at the base %s: %w", path, short(spec.Base), err)
			}
			f.BaseExists = true
		}
		in = append(in, f)
	}
	out := slices.Clone(tamper.Reproduction(in))
	if out == nil {
		out = []tamper.Finding{}
	}
	slices.SortStableFunc(out, func(a, b tamper.Finding) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.Severity, b.Severity), cmp.Compare(a.Detail, b.Detail))
	})
	return out, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// ReviewHarness records a member of staff's decision on the case's
// current reproduction, over the review digest they were shown:
//
//   - approve, while the reporter is still asked: recorded on the harness;
//     the case waits for the reporter, and their yes freezes it.
//   - approve, after the reporter's yes: the harness freezes
//     (harness.frozen) and the fix starts (bug_fix), in one step.
//   - reject, with a note saying why: the harness is disowned, the case
//     goes back to reproducing (bug_reproduce), and the next reproducer
//     task carries the note.
//
// A stale digest, a harness already reviewed or no longer waiting is
// refused (409); so is the person who proposed the harness (403). Every
// refusal leaves the case where it was.
func (d *Desk) ReviewHarness(ctx context.Context, by signoff.Actor, caseID string, in HarnessDecision) (HarnessView, signoff.Case, error) {
	if !reviewsHarness(by) {
		return HarnessView{}, signoff.Case{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s does not review reproductions: owners and operators do, each as themselves", by.Role)
	}
	if in.Decision != signoff.HarnessApprove && in.Decision != signoff.HarnessReject {
		return HarnessView{}, signoff.Case{}, signoff.Errorf(signoff.EINVALID, `decision must be "approve" or "reject"`)
	}
	in.Note = strings.TrimSpace(in.Note)
	if in.Decision == signoff.HarnessReject && in.Note == "" {
		return HarnessView{}, signoff.Case{}, signoff.Errorf(signoff.EINVALID, "say why you reject the reproduction (note is required with reject): it goes to the next reproducer")
	}
	if len(in.Note) > maxStaffNote {
		return HarnessView{}, signoff.Case{}, signoff.Errorf(signoff.EINVALID, "note is longer than %d bytes", maxStaffNote)
	}
	if !hexDigest.MatchString(in.ReviewDigest) {
		return HarnessView{}, signoff.Case{}, signoff.Errorf(signoff.EINVALID, "review_digest must be the 64 lowercase hex digits of the view you reviewed")
	}
	unlock := d.lock(caseID)
	defer unlock()
	c, l, err := d.loop(ctx, by, caseID)
	if err != nil {
		return HarnessView{}, signoff.Case{}, err
	}
	st := l.State
	st.Harnesses = slices.Clone(st.Harnesses)
	h := repair.CurrentHarness(st)
	switch {
	case h == nil:
		return HarnessView{}, c, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s is %s: no reproduction waits for a review", caseID, c.State)}
	case h.StaffReview != nil:
		return HarnessView{}, c, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("reproduction %s was already reviewed by %s (%s)", h.ID, h.StaffReview.By, h.StaffReview.Decision)}
	case !repair.AwaitsStaff(c.State, *h):
		return HarnessView{}, c, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: fmt.Sprintf("case %s is %s with reproduction %s %s: it does not wait for a staff review", caseID, c.State, h.ID, h.Status)}
	case h.ProposedBy == by.ID:
		return HarnessView{}, c, signoff.Errorf(signoff.EFORBIDDEN, "you proposed reproduction %s: another member of staff reviews it", h.ID)
	}
	v, _, err := d.harnessView(ctx, c, l.State, h)
	if err != nil {
		return HarnessView{}, c, err
	}
	if in.ReviewDigest != v.ReviewDigest {
		return v, c, &signoff.Error{Code: signoff.ECONFLICT, State: c.State, Message: "the reproduction changed since you read it (the review digest is stale): read it again and decide on what it shows now"}
	}
	now := d.now()
	h.StaffReview = &signoff.HarnessReview{HarnessID: h.ID, By: by.ID, Decision: in.Decision, Note: in.Note, ReviewDigest: v.ReviewDigest, At: now}
	rules := make([]string, 0, len(v.Findings))
	for _, f := range v.Findings {
		rules = append(rules, f.Rule)
	}
	u := signoff.LoopUpdate{CaseID: c.ID, Version: l.Version, Events: []signoff.LoopEvent{{Type: "harness.reviewed", Payload: map[string]any{
		"harness_id": h.ID, "harness_digest": h.Digest, "review_digest": v.ReviewDigest, "decision": in.Decision, "note": in.Note,
		"reviewed_by": by.ID, "reporter_answer": v.ReporterAnswer, "findings": len(v.Findings), "finding_rules": rules,
		"test_files": h.TestFiles, "tests_from": v.TestsFrom}}}}
	switch {
	case in.Decision == signoff.HarnessReject:
		h.Status = signoff.HarnessDisowned
		u.Command = "reject_harness"
		u.Jobs = []signoff.JobRequest{{Args: signoff.ReproduceJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID, Round: st.Round, Try: len(st.Harnesses), Version: c.Version}}}
	case c.State == workflow.BugReproduced:
		// The reporter said yes already: both agree, the harness freezes.
		u.Command = "approve_harness"
		ev, job := freeze(c, st, h, now)
		u.Events = append(u.Events, ev)
		u.Jobs = []signoff.JobRequest{job}
	}
	u.State = st
	_, c, err = d.Store.AdvanceLoop(ctx, by, u)
	if err != nil {
		return v, c, err
	}
	v.State, v.Status, v.StaffStatus, v.StaffReview, v.Reviewable = c.State, h.Status, repair.StaffStatus(*h), h.StaffReview, false
	return v, c, nil
}

// freeze marks h frozen, now that the reporter and a member of staff both
// accepted it, and returns its ledger event and the job that starts the
// fix. The job carries the case version, so a harness frozen again in the
// same round (after a person resumed the reproduction) gets its own.
func freeze(c signoff.Case, st signoff.BugLoopState, h *signoff.HarnessRecord, now time.Time) (signoff.LoopEvent, signoff.JobRequest) {
	h.Status, h.FrozenAt = signoff.HarnessFrozen, &now
	ev := signoff.LoopEvent{Type: "harness.frozen", Payload: map[string]any{"harness_id": h.ID, "harness_digest": h.Digest,
		"base": h.Base, "tests_from": h.Commit, "test_files": h.TestFiles,
		"reviewed_by": h.StaffReview.By, "review_digest": h.StaffReview.ReviewDigest}}
	return ev, signoff.JobRequest{Args: signoff.FixJob{WorkspaceID: c.WorkspaceID, CaseID: c.ID, Round: st.Round, Attempt: c.FixAttempts + 1, Version: c.Version}}
}

// errNotFrozen: the case has no harness that both the reporter and a
// member of staff accepted, so no fix starts.
var errNotFrozen = &signoff.Error{Code: signoff.ECONFLICT,
	Message: "no frozen reproduction: a fix starts only once the reporter and a member of staff have both accepted the reproduction"}

// notFrozen reports whether err is errNotFrozen.
func notFrozen(err error) bool { return errors.Is(err, errNotFrozen) }
