// Package tamper reads a candidate's diff, and a proposed reproduction
// test, for the ways code can counterfeit a test verdict instead of earning
// it: leaving the test process early, writing the runner's output itself,
// reaching into the test framework, reading its own or the tests' sources,
// and changing which tests run or how they build. It is pure: callers hand
// it file contents and get findings back; what a finding costs (a refusal
// or a flag on the card) is decided by its severity and the harness.
//
// Candidate reads a candidate fix's changed files, Reproduction a proposed
// reproduction test's, and Rules lists every rule either can report. Go is
// parsed (go/parser) and compared with base by counting uses per rule, so
// what base already did is not held against a fix; JavaScript and Python
// are read line by line, and only lines new to the file count. Build and
// test configuration (go.mod, package.json, pyproject.toml, ...) is
// compared by the keys and directives that decide what runs, and any
// .gitattributes change is reported, since it decides how the frozen
// tests are checked out.
package tamper

// Severities of a finding.
const (
	// Refuse: the candidate is not run; the verdict is REJECTED.
	Refuse = "refuse"
	// BuildChange: the change alters which tests run or how they build;
	// the harness's build-change policy decides whether it refuses.
	BuildChange = "build-change"
	// Flag: shown on the card, decides nothing.
	Flag = "flag"
)

// File is one changed path: its content on base and on the candidate.
// A path absent on one side has a nil content there and Exists false.
// Path is slash-separated and relative to the repository root.
type File struct {
	Path       string
	Base       []byte
	BaseExists bool
	Cand       []byte
	CandExists bool
}

// Finding is one thing a check saw. Line is 1-based, 0 when the finding is
// about the file as a whole; Detail is a sentence for the approval card
// that starts with the location ("cart/zz.go:12 calls os.Exit ...").
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Path     string `json:"path"`
	Line     int    `json:"line,omitempty"`
	Detail   string `json:"detail"`
}
