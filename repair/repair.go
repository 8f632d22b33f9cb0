// Package repair is the pure logic of the bug loop between a ticket and a
// merge: which paths a fix may touch, what the approval card shows (and so
// what its digest covers), what the reporter is asked and what their answer
// binds to. It does no I/O; package bugdesk runs the loop.
package repair

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/tamper"
	"github.com/signoff-dev/signoff/verify"
)

// CheckFixPaths refuses a fix that changes a harness test file, a path
// under the project's harness globs, or anything outside its allowlist.
// The refusal names every offending path, so a fixer can correct itself.
func CheckFixPaths(changed, harnessFiles, harnessGlobs, allow []string) error {
	if len(changed) == 0 {
		return signoff.Errorf(signoff.EINVALID, "the fix changes nothing")
	}
	var harness, outside []string
	for _, p := range changed {
		if err := verify.CheckPath(p); err != nil {
			return signoff.Errorf(signoff.EINVALID, "path %q: %v", p, err)
		}
		switch {
		case slices.Contains(harnessFiles, p) || matchAny(harnessGlobs, p):
			harness = append(harness, p)
		case !matchAny(allow, p):
			outside = append(outside, p)
		}
	}
	switch {
	case len(harness) > 0:
		return signoff.Errorf(signoff.EFORBIDDEN, "the fix touches harness paths (%s): the frozen harness is not the fixer's to change", strings.Join(harness, ", "))
	case len(outside) > 0:
		return signoff.Errorf(signoff.EFORBIDDEN, "the fix changes paths outside the project's allowlist %v: %s", allow, strings.Join(outside, ", "))
	}
	return nil
}

func matchAny(globs []string, p string) bool {
	for _, g := range globs {
		if verify.MatchGlob(g, p) {
			return true
		}
	}
	return false
}

// Row is one line of the verdict table on the approval card.
type Row struct {
	Stage   string `json:"stage"`
	Run     int    `json:"run,omitempty"`
	Outcome string `json:"outcome"`
	Detail  string `json:"detail"`
	Tests   []Test `json:"tests,omitempty"`
}

// Test is one harness test's outcome in a row.
type Test struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Outcome string `json:"outcome"`
}

// Table turns a verification report into the card's verdict table.
func Table(r verify.Report) []Row {
	rows := make([]Row, 0, len(r.Stages))
	for _, s := range r.Stages {
		row := Row{Stage: s.Name, Run: s.Run, Outcome: s.Outcome, Detail: s.Detail}
		for _, t := range s.Tests {
			row.Tests = append(row.Tests, Test{Name: t.Name, Kind: t.Kind, Outcome: t.Outcome})
		}
		rows = append(rows, row)
	}
	return rows
}

// SourceFile is one harness test file in full, as a person reads it.
// SHA256 is of its bytes, so a file that is not valid UTF-8 (shown with
// replacement characters in JSON) is still bound exactly.
type SourceFile struct {
	Path    string `json:"path"`
	SHA256  string `json:"sha256"`
	Content string `json:"content"`
}

// Sources lists files (path → content) as SourceFiles sorted by path.
func Sources(files map[string][]byte) []SourceFile {
	out := make([]SourceFile, 0, len(files))
	for _, p := range slices.Sorted(maps.Keys(files)) {
		sum := sha256.Sum256(files[p])
		out = append(out, SourceFile{Path: p, SHA256: hex.EncodeToString(sum[:]), Content: string(files[p])})
	}
	return out
}

// ReviewSubject is what a member of staff reads before a reproduction
// may freeze: the harness, every test file in full, what the reporter is
// shown failing, and what the static checks found in the test. Its digest
// is what their decision quotes, so a decision over a test that changed
// since (another harness, other findings) is stale.
type ReviewSubject struct {
	Case          string           `json:"case"`
	HarnessID     string           `json:"harness_id"`
	HarnessDigest string           `json:"harness_digest"`
	Files         []SourceFile     `json:"files"`
	FailingOutput string           `json:"failing_output"`
	Findings      []tamper.Finding `json:"findings"`
}

// NewReviewSubject is the review subject of harness h of case c, with its
// test files (path → content at tests_from) and the static findings.
func NewReviewSubject(c signoff.Case, h signoff.HarnessRecord, files map[string][]byte, findings []tamper.Finding) ReviewSubject {
	if findings == nil {
		findings = []tamper.Finding{}
	}
	return ReviewSubject{Case: c.ID, HarnessID: h.ID, HarnessDigest: h.Digest, Files: Sources(files),
		FailingOutput: h.FailingOutput, Findings: findings}
}

// Digest is the SHA-256 of the subject's canonical JSON: the review
// digest a staff decision names.
func (s ReviewSubject) Digest() (string, error) { return canonical.Digest(s) }

// Reporter answer and staff review statuses of a harness, as views show
// them.
const (
	StatusPending  = "pending"  // asked, not answered yet
	StatusYes      = "yes"      // the reporter said it is their bug
	StatusNo       = "no"       // the reporter said it is not
	StatusApproved = "approved" // a member of staff approved the test
	StatusRejected = "rejected" // a member of staff rejected it
	StatusNone     = "none"     // not asked any more (the harness was disowned or superseded first)
)

// ReporterStatus is the reporter's answer to "Is this the bug you saw?"
// for harness h.
func ReporterStatus(h signoff.HarnessRecord) string {
	switch {
	case h.ConfirmedAt != nil || h.Status == signoff.HarnessConfirmed || h.Status == signoff.HarnessFrozen:
		return StatusYes
	case h.ReporterNote != "":
		return StatusNo
	case h.Status == signoff.HarnessProposed:
		return StatusPending
	}
	return StatusNone
}

// StaffStatus is the staff review of harness h.
func StaffStatus(h signoff.HarnessRecord) string {
	switch {
	case h.StaffReview != nil && h.StaffReview.Decision == signoff.HarnessApprove:
		return StatusApproved
	case h.StaffReview != nil:
		return StatusRejected
	case h.Status == signoff.HarnessProposed || h.Status == signoff.HarnessConfirmed:
		return StatusPending
	}
	return StatusNone
}

// AwaitsStaff reports whether harness h of a case in state waits for a
// staff decision: proposed while the reporter is asked, or confirmed by
// them, and not reviewed yet.
func AwaitsStaff(state string, h signoff.HarnessRecord) bool {
	if h.StaffReview != nil {
		return false
	}
	return (state == "awaiting_reporter_repro" && h.Status == signoff.HarnessProposed) ||
		(state == "reproduced" && h.Status == signoff.HarnessConfirmed)
}

// StaffApproved reports whether a member of staff approved h.
func StaffApproved(h signoff.HarnessRecord) bool {
	return h.StaffReview != nil && h.StaffReview.Decision == signoff.HarnessApprove
}

// Card is what an approver sees and signs: the digest covers every field,
// so a new candidate, a new harness, another diff, another verdict or
// another test source is another card.
type Card struct {
	Case          string `json:"case"`
	Project       string `json:"project"`
	Title         string `json:"title"`
	CandidateID   string `json:"candidate_id"`
	Attempt       int    `json:"attempt"`
	SubmittedBy   string `json:"submitted_by"`
	Evidence      string `json:"evidence"`
	Base          string `json:"base"`
	Candidate     string `json:"candidate"`
	Branch        string `json:"branch"`
	Diff          string `json:"diff"`
	HarnessID     string `json:"harness_id"`
	HarnessDigest string `json:"harness_digest"`
	Verdict       string `json:"verdict"`
	Reason        string `json:"reason"`
	Table         []Row  `json:"table"`
	Fingerprint   string `json:"fingerprint"`
	// Review is the reviewer's advisory note, shown as such.
	Review string `json:"review_note,omitempty"`
	// HarnessSource is the harness's test files in full, sorted by path,
	// as they are at its tests_from commit: an approval covers the test
	// code the verdict rests on, not only its digest.
	HarnessSource []SourceFile `json:"harness_source"`
	// HarnessReview is the member of staff who approved the harness's
	// test source, and the review digest they approved.
	HarnessReview signoff.HarnessReview `json:"harness_review"`
	// Defences is what the verification did against a counterfeit
	// verdict: the frozen test tree and the candidate's discarded edits to
	// it, every static finding, the witness of each candidate run.
	Defences Defences `json:"defences"`
}

// Digest is the SHA-256 of the card's canonical JSON: the subject an
// approval names.
func (c Card) Digest() (string, error) { return canonical.Digest(c) }

// NewCard builds the card of a verified candidate. report is the
// candidate's verification report; source is the harness's test files
// (Sources of the files at its tests_from commit), which the caller has
// checked against the harness digest. A harness no member of staff
// approved has no card: nothing judged by it is approved.
func NewCard(c signoff.Case, h signoff.HarnessRecord, cand signoff.Candidate, report verify.Report, source []SourceFile) (Card, error) {
	if cand.Status != signoff.CandidateVerified || report.Verdict != verify.Verified {
		return Card{}, signoff.Errorf(signoff.ECONFLICT, "candidate %s is %s, not verified: there is nothing to approve", cand.ID, cand.Status)
	}
	if report.Candidate != cand.Commit || report.HarnessDigest != h.Digest {
		return Card{}, fmt.Errorf("card: the report is for %s under harness %s, not candidate %s under %s", report.Candidate, report.HarnessDigest, cand.Commit, h.Digest)
	}
	if !StaffApproved(h) {
		return Card{}, signoff.Errorf(signoff.ECONFLICT, "harness %s was never approved by a member of staff: nothing judged by it can be approved", h.ID)
	}
	if len(source) == 0 {
		return Card{}, fmt.Errorf("card: harness %s comes without its test source", h.ID)
	}
	card := Card{Case: c.ID, Project: c.ProjectID, Title: c.Title, CandidateID: cand.ID, Attempt: cand.Attempt,
		SubmittedBy: cand.SubmittedBy, Evidence: cand.Evidence, Base: cand.Base, Candidate: cand.Commit, Branch: cand.Branch,
		Diff: cand.Diff, HarnessID: h.ID, HarnessDigest: h.Digest, Verdict: report.Verdict, Reason: report.Reason,
		Table: Table(report), Fingerprint: report.Fingerprint, HarnessSource: slices.Clone(source), HarnessReview: *h.StaffReview,
		Defences: DefencesOf(report)}
	if cand.Review != nil {
		card.Review = fmt.Sprintf("[advisory, %s] %s", cand.Review.Evidence, cand.Review.Note)
	}
	return card, nil
}

// Question kinds on the reporter's tracking page.
const (
	AskRepro = "reproduction" // "Is this the bug you saw?"
	AskFix   = "live_fix"     // "Does the live fix work for you?"
)

// Question is what the reporter is asked, with what they are shown. Its
// digest is what their answer must quote: an answer to a question that has
// since changed is stale.
type Question struct {
	Case    string `json:"case"`
	Kind    string `json:"kind"`
	Text    string `json:"text"`
	Shown   string `json:"shown"`
	Subject string `json:"subject"` // the harness digest, or the merge commit
	Round   int    `json:"round"`
}

// Digest is the SHA-256 of the question's canonical JSON.
func (q Question) Digest() string {
	d, err := canonical.Digest(q)
	if err != nil {
		panic("repair: question digest: " + err.Error()) // strings and ints always encode
	}
	return d
}

// CurrentHarness returns the newest harness of the round that is not
// disowned or superseded, or nil.
func CurrentHarness(st signoff.BugLoopState) *signoff.HarnessRecord {
	for i := len(st.Harnesses) - 1; i >= 0; i-- {
		h := &st.Harnesses[i]
		if h.Round == st.Round && (h.Status == signoff.HarnessProposed || h.Status == signoff.HarnessConfirmed || h.Status == signoff.HarnessFrozen) {
			return h
		}
	}
	return nil
}

// FrozenHarness returns the round's frozen harness, or nil. Frozen means
// the reporter and a member of staff both accepted it: a harness marked
// frozen that no member of staff approved (one frozen before the rule) is
// not, and nothing is fixed, verified or approved under it.
func FrozenHarness(st signoff.BugLoopState) *signoff.HarnessRecord {
	if h := CurrentHarness(st); h != nil && h.Status == signoff.HarnessFrozen && StaffApproved(*h) {
		return h
	}
	return nil
}

// LatestCandidate returns the newest candidate of the round's frozen
// harness, or nil.
func LatestCandidate(st signoff.BugLoopState) *signoff.Candidate {
	h := FrozenHarness(st)
	if h == nil {
		return nil
	}
	for i := len(st.Candidates) - 1; i >= 0; i-- {
		if st.Candidates[i].HarnessID == h.ID {
			return &st.Candidates[i]
		}
	}
	return nil
}

// Ask returns the question a case in state asks its reporter, or false.
func Ask(c signoff.Case, st signoff.BugLoopState) (Question, bool) {
	switch c.State {
	case "awaiting_reporter_repro":
		h := CurrentHarness(st)
		if h == nil || h.Status != signoff.HarnessProposed {
			return Question{}, false
		}
		return Question{Case: c.ID, Kind: AskRepro, Text: "Is this the bug you saw?", Shown: h.FailingOutput, Subject: h.Digest, Round: st.Round}, true
	case "awaiting_reporter_confirmation":
		if st.Merge == nil || st.Release == nil {
			return Question{}, false
		}
		return Question{Case: c.ID, Kind: AskFix, Text: "Does the live fix work for you?", Shown: ReleaseWords(*st.Release, *st.Merge), Subject: st.Merge.Commit, Round: st.Round}, true
	}
	return Question{}, false
}

// ReleaseWords tells the reporter, in plain words, what went live.
func ReleaseWords(r signoff.ReleaseRecord, m signoff.MergeRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "A fix for your report was merged (commit %s) and is live in %s since %s (deployed commit %s).",
		short(m.Commit), orDefault(r.Environment, "production"), r.At.UTC().Format(time.RFC1123), short(r.Commit))
	if len(r.Smoke) > 0 {
		passed := 0
		for _, s := range r.Smoke {
			if s.OK {
				passed++
			}
		}
		fmt.Fprintf(&b, " Our checks against the live service: %d of %d passed.", passed, len(r.Smoke))
	}
	b.WriteString(" Please try what went wrong before and tell us whether it works now.")
	return b.String()
}

// FailureWords describes a reproduction in plain words: which tests fail
// on the current version and how.
func FailureWords(r verify.Report) string {
	var b strings.Builder
	b.WriteString("We wrote an automated test of what you described. On the current version it fails:\n")
	for _, s := range r.Stages {
		if s.Name != verify.StageBase {
			continue
		}
		for _, t := range s.Tests {
			if t.Kind != verify.FailToPass {
				continue
			}
			fmt.Fprintf(&b, "- %s: %s\n", t.Name, firstLines(t.Output, 4))
		}
		break
	}
	return strings.TrimRight(b.String(), "\n")
}

// firstLines keeps the lines of test output that say something (not the
// === RUN / --- FAIL framing), at most n of them.
func firstLines(out string, n int) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") || t == "FAIL" || strings.HasPrefix(t, "FAIL\t") {
			continue
		}
		keep = append(keep, t)
		if len(keep) == n {
			break
		}
	}
	if len(keep) == 0 {
		return "failed (no output)"
	}
	return strings.Join(keep, " / ")
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
