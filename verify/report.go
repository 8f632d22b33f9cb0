package verify

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/sandbox"
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
	Stages       []Stage  `json:"stages"`
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
	// Stdout and Stderr are the raw output of the run, kept for the
	// evidence bundle; the JSON report carries their digests only.
	Stdout []byte `json:"-"`
	Stderr []byte `json:"-"`
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
