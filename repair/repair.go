// Package repair is the pure logic of the bug loop between a ticket and a
// merge: which paths a fix may touch, what the approval card shows (and so
// what its digest covers), what the reporter is asked and what their answer
// binds to. It does no I/O; package bugdesk runs the loop.
package repair

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
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

// Card is what an approver sees and signs: the digest covers every field,
// so a new candidate, a new harness, another diff or another verdict is
// another card.
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
}

// Digest is the SHA-256 of the card's canonical JSON: the subject an
// approval names.
func (c Card) Digest() (string, error) { return canonical.Digest(c) }

// NewCard builds the card of a verified candidate. report is the
// candidate's verification report.
func NewCard(c signoff.Case, h signoff.HarnessRecord, cand signoff.Candidate, report verify.Report) (Card, error) {
	if cand.Status != signoff.CandidateVerified || report.Verdict != verify.Verified {
		return Card{}, signoff.Errorf(signoff.ECONFLICT, "candidate %s is %s, not verified: there is nothing to approve", cand.ID, cand.Status)
	}
	if report.Candidate != cand.Commit || report.HarnessDigest != h.Digest {
		return Card{}, fmt.Errorf("card: the report is for %s under harness %s, not candidate %s under %s", report.Candidate, report.HarnessDigest, cand.Commit, h.Digest)
	}
	card := Card{Case: c.ID, Project: c.ProjectID, Title: c.Title, CandidateID: cand.ID, Attempt: cand.Attempt,
		SubmittedBy: cand.SubmittedBy, Evidence: cand.Evidence, Base: cand.Base, Candidate: cand.Commit, Branch: cand.Branch,
		Diff: cand.Diff, HarnessID: h.ID, HarnessDigest: h.Digest, Verdict: report.Verdict, Reason: report.Reason,
		Table: Table(report), Fingerprint: report.Fingerprint}
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
		if h.Round == st.Round && (h.Status == signoff.HarnessProposed || h.Status == signoff.HarnessFrozen) {
			return h
		}
	}
	return nil
}

// FrozenHarness returns the round's frozen harness, or nil.
func FrozenHarness(st signoff.BugLoopState) *signoff.HarnessRecord {
	if h := CurrentHarness(st); h != nil && h.Status == signoff.HarnessFrozen {
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
