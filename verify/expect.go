package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// maxMatcherBytes bounds an expected-failure text or pattern: it names a
// failure, it is not a program.
const maxMatcherBytes = 1 << 10

// Matcher is the expected failure of a fail-to-pass test: a substring of
// its output, or an RE2 pattern matched against it. In JSON it is a string
// (substring) or {"regexp": "<RE2>"}.
type Matcher struct {
	Substring string
	Regexp    string
}

// Match says whether out shows the expected failure. A zero or malformed
// matcher matches nothing, so an unset expectation never reads as
// reproduced.
func (m Matcher) Match(out string) bool {
	switch {
	case m.Regexp != "":
		re, err := regexp.Compile(m.Regexp)
		return err == nil && re.MatchString(out)
	case m.Substring != "":
		return strings.Contains(out, m.Substring)
	}
	return false
}

// String is the matcher as messages show it: a quoted substring, or
// regexp /.../.
func (m Matcher) String() string {
	if m.Regexp != "" {
		return "regexp /" + m.Regexp + "/"
	}
	return fmt.Sprintf("%q", m.Substring)
}

// hint is text to look for in a line of output when showing why a test
// failed: the substring, or nothing for a pattern.
func (m Matcher) hint() string {
	if m.Regexp != "" {
		return ""
	}
	return m.Substring
}

// check reports why m cannot be used.
func (m Matcher) check() error {
	switch {
	case m.Regexp != "" && m.Substring != "":
		return fmt.Errorf("a matcher is a string or a regexp, not both")
	case m.Regexp != "":
		if len(m.Regexp) > maxMatcherBytes {
			return fmt.Errorf("regexp is longer than %d bytes", maxMatcherBytes)
		}
		re, err := regexp.Compile(m.Regexp)
		if err != nil {
			return fmt.Errorf("regexp: %w", err)
		}
		// A pattern that matches empty output matches every failure.
		if re.MatchString("") {
			return fmt.Errorf("regexp %q matches empty output: a failure for any reason would count as reproducing the bug", m.Regexp)
		}
	default:
		if strings.TrimSpace(m.Substring) == "" {
			return fmt.Errorf("is empty: a failure for any reason would count as reproducing the bug")
		}
		if len(m.Substring) > maxMatcherBytes {
			return fmt.Errorf("is longer than %d bytes", maxMatcherBytes)
		}
	}
	return nil
}

// MarshalJSON writes the string form for a substring and the object form
// for a pattern.
func (m Matcher) MarshalJSON() ([]byte, error) {
	if m.Regexp != "" {
		return json.Marshal(struct {
			Regexp string `json:"regexp"`
		}{m.Regexp})
	}
	return json.Marshal(m.Substring)
}

// UnmarshalJSON reads a string or an object with exactly the key "regexp",
// compiling the pattern so a bad one is refused at parse time.
func (m *Matcher) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*m = Matcher{Substring: s}
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return fmt.Errorf("a matcher is a string or {\"regexp\": \"...\"}")
	}
	raw, ok := obj["regexp"]
	if len(obj) != 1 || !ok {
		return fmt.Errorf("a matcher object has exactly one key, \"regexp\"")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("regexp: %w", err)
	}
	if s == "" {
		return fmt.Errorf("regexp is empty")
	}
	*m = Matcher{Regexp: s}
	return m.check()
}

// checkKeys refuses an object key that is not exactly one of allowed.
// encoding/json matches keys case-insensitively, so "Fail_To_Pass" after
// "fail_to_pass" would silently replace the list. nested gives, per key,
// the check of its value. Values that are not objects are left to the
// decoder to refuse.
func checkKeys(raw json.RawMessage, allowed []string, nested map[string]func(json.RawMessage) error) error {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil
	}
	for k, v := range obj {
		if !contains(allowed, k) {
			for _, a := range allowed {
				if strings.EqualFold(a, k) {
					return fmt.Errorf("unknown key %q (keys are case-sensitive: did you mean %q?)", k, a)
				}
			}
			return fmt.Errorf("unknown key %q", k)
		}
		if f := nested[k]; f != nil {
			if err := f(v); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
	}
	return nil
}

// eachElement applies check to every element of a JSON array.
func eachElement(check func(json.RawMessage) error) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		var list []json.RawMessage
		if json.Unmarshal(raw, &list) != nil {
			return nil
		}
		for _, e := range list {
			if err := check(e); err != nil {
				return err
			}
		}
		return nil
	}
}

// eachValue applies check to every value of a JSON object.
func eachValue(check func(json.RawMessage) error) func(json.RawMessage) error {
	return func(raw json.RawMessage) error {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		for k, v := range obj {
			if err := check(v); err != nil {
				return fmt.Errorf("%q: %w", k, err)
			}
		}
		return nil
	}
}

// jsonKeys lists the JSON names of a struct type's fields.
func jsonKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}

// checkHarnessKeys applies checkKeys to a harness and the objects inside
// it.
func checkHarnessKeys(raw []byte) error {
	exemption := func(v json.RawMessage) error {
		return checkKeys(v, jsonKeys(reflect.TypeFor[Exemption]()), nil)
	}
	matcher := func(v json.RawMessage) error { return checkKeys(v, []string{"regexp"}, nil) }
	return checkKeys(raw, jsonKeys(reflect.TypeFor[Harness]()), map[string]func(json.RawMessage) error{
		"unprotect":         eachElement(exemption),
		"expected_failures": eachValue(matcher),
	})
}

// MissingDependency says whether build or run output shows a dependency
// absent from the offline cache, and names it: the runs have no network,
// so such a failure says the fetch stage was skipped or incomplete, not
// that the code is broken. The output may come from the code under test,
// so callers use it to explain, never to change a candidate's verdict.
func MissingDependency(output string) (name string, ok bool) {
	for _, line := range strings.Split(output, "\n") {
		if n, ok := missingDependencyLine(line); ok {
			return n, true
		}
	}
	return "", false
}

var (
	reGoModuleAt   = regexp.MustCompile(`([A-Za-z0-9][^\s:@]*)@[^\s:]+: (?:module lookup disabled by GOPROXY=off|missing go\.sum entry)`)
	reGoPackage    = regexp.MustCompile(`(?:no required module provides package|cannot find module providing package|missing go\.sum entry for module providing package) ([^\s;:]+)`)
	reGoDownload   = regexp.MustCompile(`^go: downloading (\S+)`)
	reGoCacheWrite = regexp.MustCompile(`(?:pkg/mod|cache/download)/([^@\s]+?)/@v.*read-only file system`)
	reNodeModule   = regexp.MustCompile(`Cannot find module '([^']+)'`)
	rePyModule     = regexp.MustCompile(`ModuleNotFoundError: No module named '([^']+)'`)
)

func missingDependencyLine(line string) (string, bool) {
	for _, re := range []*regexp.Regexp{reGoModuleAt, reGoPackage, reGoDownload, reGoCacheWrite, rePyModule} {
		if m := re.FindStringSubmatch(line); m != nil {
			return m[1], true
		}
	}
	// A relative or absolute path is a file of the project, not a
	// dependency.
	if m := reNodeModule.FindStringSubmatch(line); m != nil && !strings.HasPrefix(m[1], ".") && !strings.HasPrefix(m[1], "/") {
		return m[1], true
	}
	if strings.Contains(line, "missing go.sum entry") || strings.Contains(line, "module lookup disabled by GOPROXY=off") {
		return "a module", true
	}
	return "", false
}

// MissingDependencyText is how a stage detail says that name is missing.
func MissingDependencyText(name string) string {
	return "dependency " + name + " is not in the offline cache: fetch it first (go mod download / npm ci / pip install)"
}
