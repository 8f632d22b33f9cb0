package verify

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/tamper"
)

// Report is the outcome of one verification.
type Report struct {
	Verdict string `json:"verdict"`
	// Reason is the one line that decided the verdict.
	Reason string `json:"reason"`
	// Base and Candidate are full commit ids; CandidateRev is what the
	// caller asked for (a branch, a tag or a commit).
	Base          string      `json:"base"`
	Candidate     string      `json:"candidate"`
	CandidateRev  string      `json:"candidate_rev"`
	HarnessDigest string      `json:"harness_digest"`
	RunnerDigest  string      `json:"runner_digest"`
	Environment   Environment `json:"environment"`
	// Fingerprint is the SHA-256 of the canonical JSON of {base,
	// candidate, harness_digest, runner_digest, environment}: the same
	// fingerprint means the same inputs were verified.
	Fingerprint string `json:"fingerprint"`
	Runs        int    `json:"runs"`
	// Changed are the paths the candidate changed relative to base;
	// HarnessEdits those harness test files among them whose contents
	// differ from tests_from (discarded before running).
	Changed      []string `json:"changed"`
	HarnessEdits []string `json:"harness_edits"`
	// Protected are the globs of the frozen test tree, restored from
	// tests_from before every run; Unprotected the defaults the harness
	// took out, with its reasons. TestEdits are the candidate's changes
	// to protected paths, discarded, file by file.
	Protected   []string    `json:"protected,omitempty"`
	Unprotected []Exemption `json:"unprotected,omitempty"`
	TestEdits   []TestEdit  `json:"test_edits,omitempty"`
	// TestOnly are the directories of Go packages that only tests use
	// (assertion helpers, fixtures), read from tests_from: their files
	// are frozen with the tests.
	TestOnly []string `json:"test_only,omitempty"`
	// Findings are what the static checks saw in the candidate's diff
	// (package tamper), whether or not they refused it; BuildChanges is
	// the harness's policy for changes to how tests run or build.
	Findings     []tamper.Finding `json:"findings,omitempty"`
	BuildChanges string           `json:"build_changes,omitempty"`
	// Cache says how the candidate's runs saw the shared build cache:
	// layered (read-only, under a throwaway layer) or private (cold).
	Cache  string  `json:"cache,omitempty"`
	Stages []Stage `json:"stages"`
	// TestFiles are the harness test files as they are at tests_from,
	// kept for the evidence bundle (the harness digest covers them).
	TestFiles map[string][]byte `json:"-"`
}

// Environment is what else a run depended on.
type Environment struct {
	GoVersion string `json:"go_version"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	Sandbox   string `json:"sandbox"`
	// Isolated is false only when the runner was the none backend.
	Isolated bool `json:"isolated"`
}

// Stage is one step of a verification.
type Stage struct {
	Name       string        `json:"name"`
	Run        int           `json:"run,omitempty"` // 1-based, runs only
	Outcome    string        `json:"outcome"`
	Detail     string        `json:"detail"`
	DurationMS int64         `json:"duration_ms"`
	Runner     *RunSummary   `json:"runner,omitempty"`
	Tests      []TestOutcome `json:"tests,omitempty"`
	// Witness is the witness check of a candidate run.
	Witness *WitnessCheck `json:"witness,omitempty"`
	// Reused is set on a base stage taken from the base cache: the time
	// (RFC 3339) of the run it repeats, output and all (basecache.go).
	Reused string `json:"reused,omitempty"`
	// Stdout and Stderr are the raw output of the run, kept for the
	// evidence bundle; the JSON report carries their digests only.
	Stdout []byte `json:"-"`
	Stderr []byte `json:"-"`
}

// WitnessCheck is what the witness said about one candidate run: whether
// it was applied (and if not, why), how many Test functions it
// instrumented, how many harness test results it checked and which of
// them lacked the witness of their pass.
type WitnessCheck struct {
	Applied      bool     `json:"applied"`
	Reason       string   `json:"reason,omitempty"`
	Instrumented int      `json:"instrumented,omitempty"`
	Checked      int      `json:"checked"`
	Missing      []string `json:"missing,omitempty"`
}

// RunSummary is the sandbox's account of one run.
type RunSummary struct {
	Backend      string         `json:"backend"`
	Isolated     bool           `json:"isolated"`
	Limits       sandbox.Limits `json:"limits"`
	ExitCode     int            `json:"exit_code"`
	Signal       string         `json:"signal,omitempty"`
	TimedOut     bool           `json:"timed_out"`
	Killed       string         `json:"killed,omitempty"`
	DurationMS   int64          `json:"duration_ms"`
	Truncated    bool           `json:"truncated"`
	RunnerDigest string         `json:"runner_digest"`
	StdoutSHA256 string         `json:"stdout_sha256"`
	StderrSHA256 string         `json:"stderr_sha256"`
	// Error is set when the runner itself failed and there is no result.
	Error string `json:"error,omitempty"`
}

// Identity is what a fingerprint covers.
type Identity struct {
	Base          string      `json:"base"`
	Candidate     string      `json:"candidate"`
	HarnessDigest string      `json:"harness_digest"`
	RunnerDigest  string      `json:"runner_digest"`
	Environment   Environment `json:"environment"`
}

// Fingerprint returns the SHA-256 of the canonical JSON of id.
func Fingerprint(id Identity) (string, error) {
	return canonical.Digest(id)
}

// Identity returns the inputs the report's fingerprint covers.
func (r Report) Identity() Identity {
	return Identity{Base: r.Base, Candidate: r.Candidate, HarnessDigest: r.HarnessDigest, RunnerDigest: r.RunnerDigest, Environment: r.Environment}
}

// Table renders the report as SYNKAI did: one row per stage (stage,
// outcome, detail) and the verdict on the last line, as
// "verdict: VERIFIED|REJECTED|INCONCLUSIVE".
func Table(r Report) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STAGE\tOUTCOME\tDETAIL")
	runs := map[string]int{}
	for _, s := range r.Stages {
		if s.Run > runs[s.Name] {
			runs[s.Name] = s.Run
		}
	}
	for _, s := range r.Stages {
		name := s.Name
		if s.Run > 0 {
			name = fmt.Sprintf("%s run %d/%d", s.Name, s.Run, max(runs[s.Name], r.Runs))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", name, s.Outcome, oneLine(s.Detail))
	}
	tw.Flush()
	for _, e := range r.TestEdits {
		fmt.Fprintf(&b, "discarded: %s (%s by the candidate; restored from tests_from)\n", e.Path, e.Change)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(&b, "finding [%s] %s\n", f.Severity, oneLine(f.Detail))
	}
	for _, s := range r.Stages {
		if s.Witness != nil && !s.Witness.Applied && s.Run == 1 {
			fmt.Fprintf(&b, "witness %s\n", s.Witness.Reason)
		}
	}
	if r.Environment.Sandbox != "" && !r.Environment.Isolated {
		b.WriteString("warning: sandbox \"none\": the tests ran without isolation\n")
	}
	fmt.Fprintf(&b, "verdict: %s\n", r.Verdict)
	return b.String()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
