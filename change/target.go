package change

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/signoff-dev/signoff"
)

// Plan kinds: what an actuator changes.
const (
	KindFlag    = "flag"    // a feature flag in the built-in flag store
	KindFile    = "file"    // a file in the project's repository
	KindRunbook = "runbook" // an allowlisted script run in the sandbox
)

// Kinds lists the plan kinds in a fixed order.
var Kinds = []string{KindFlag, KindFile, KindRunbook}

func validKind(k string) bool { return k == KindFlag || k == KindFile || k == KindRunbook }

// Target is a parsed plan target. Env is set for flags only: files and
// runbooks belong to the project, not to one of its environments.
type Target struct {
	Kind string
	Env  string
	Name string
}

// String is the target's one spelling, e.g. "flag:prod/checkout_v2".
// ParseTarget accepts only strings that String gives back unchanged, so
// policy globs and locks match one text per target.
func (t Target) String() string {
	if t.Env != "" {
		return t.Kind + ":" + t.Env + "/" + t.Name
	}
	return t.Kind + ":" + t.Name
}

const maxTargetLen = 256

var (
	// Environment names and flag keys follow the flag store
	// (signoff.MaxFlagEnv, signoff.MaxFlagKey), so every stored flag can
	// be a target.
	envRE     = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)
	flagKeyRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)
	runbookRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	// A path segment: no leading dash (it would read as an option to
	// git), no spaces, quotes, globs or backslashes.
	segmentRE = regexp.MustCompile(`^[A-Za-z0-9_.@+][A-Za-z0-9_.@+=,-]*$`)
)

// ParseTarget parses "flag:<env>/<key>", "file:<path>" or
// "runbook:<name>". A file path is relative to the repository root and may
// not climb out of it, name an empty, "." or ".." segment, or touch .git.
// Anything else is EINVALID.
func ParseTarget(s string) (Target, error) {
	if len(s) > maxTargetLen {
		return Target{}, signoff.Errorf(signoff.EINVALID, "target is longer than %d bytes", maxTargetLen)
	}
	kind, rest, ok := strings.Cut(s, ":")
	if !ok || !validKind(kind) {
		return Target{}, signoff.Errorf(signoff.EINVALID, "target %q must start with flag:, file: or runbook:", s)
	}
	var err error
	t := Target{Kind: kind}
	switch kind {
	case KindFlag:
		env, key, ok := strings.Cut(rest, "/")
		switch {
		case !ok:
			err = fmt.Errorf("a flag target is flag:<environment>/<key>")
		case !envRE.MatchString(env):
			err = fmt.Errorf("environment must match %s", envRE)
		case !flagKeyRE.MatchString(key) || key == "." || key == "..":
			err = fmt.Errorf("flag key must match %s", flagKeyRE)
		}
		t.Env, t.Name = env, key
	case KindFile:
		err = checkPath(rest)
		t.Name = rest
	case KindRunbook:
		if !runbookRE.MatchString(rest) {
			err = fmt.Errorf("runbook name must match %s", runbookRE)
		}
		t.Name = rest
	}
	if err != nil {
		return Target{}, signoff.Errorf(signoff.EINVALID, "target %q: %s", s, err)
	}
	return t, nil
}

func checkPath(p string) error {
	if p == "" {
		return fmt.Errorf("file path is empty")
	}
	for seg := range strings.SplitSeq(p, "/") {
		switch {
		case seg == "":
			return fmt.Errorf("file path must be relative, without empty segments")
		case seg == "." || seg == "..":
			return fmt.Errorf("file path may not contain . or .. segments")
		case strings.EqualFold(seg, ".git"):
			return fmt.Errorf("file path may not touch .git")
		case !segmentRE.MatchString(seg):
			return fmt.Errorf("file path segment %q must match %s", seg, segmentRE)
		}
	}
	return nil
}

// checkPattern validates a policy glob: a literal kind prefix, then a
// non-empty printable-ASCII pattern.
func checkPattern(p string) error {
	kind, rest, ok := strings.Cut(p, ":")
	switch {
	case !ok || !validKind(kind):
		return fmt.Errorf("pattern %q must start with flag:, file: or runbook:", p)
	case rest == "":
		return fmt.Errorf("pattern %q matches nothing after the kind", p)
	case len(p) > maxTargetLen:
		return fmt.Errorf("pattern %q is longer than %d bytes", p, maxTargetLen)
	}
	for i := 0; i < len(p); i++ {
		if p[i] <= ' ' || p[i] > '~' {
			return fmt.Errorf("pattern %q may hold printable ASCII only, without spaces", p)
		}
	}
	return nil
}

// Match reports whether target matches the policy glob pattern. '*'
// matches any run of characters except '/', '**' any run at all, '?' one
// character except '/'; everything else is literal. So "flag:prod/*" is
// every flag in prod, "flag:*/checkout_*" the checkout flags of every
// environment, "file:**" every file and "file:*" only top-level files.
//
// It runs in O(len(pattern) × len(target)) time whatever the pattern, so a
// hostile policy cannot make review slow.
func Match(pattern, target string) bool {
	n := len(target)
	// cur[j]: the pattern so far matches target[:j].
	cur := make([]bool, n+1)
	next := make([]bool, n+1)
	cur[0] = true
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '*' && i+1 < len(pattern) && pattern[i+1] == '*':
			i++
			run := false
			for j := 0; j <= n; j++ {
				run = run || cur[j]
				next[j] = run
			}
		case c == '*':
			run := false
			for j := 0; j <= n; j++ {
				run = cur[j] || (run && target[j-1] != '/')
				next[j] = run
			}
		default:
			next[0] = false
			for j := 1; j <= n; j++ {
				t := target[j-1]
				next[j] = cur[j-1] && (t == c || (c == '?' && t != '/'))
			}
		}
		cur, next = next, cur
	}
	return cur[n]
}

// firstMatch returns the first pattern in list that matches target.
func firstMatch(list []string, target string) (string, bool) {
	for _, p := range list {
		if Match(p, target) {
			return p, true
		}
	}
	return "", false
}
