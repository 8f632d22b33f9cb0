package agent

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
)

// maxArgBytes bounds a tool call's argument text. Anything longer is refused
// before it is parsed.
const maxArgBytes = 256 << 10

// Coerce parses a model's argument text and repairs the slips small models
// commonly make, guided by the tool's schema: arguments double-encoded as a
// JSON string or wrapped in a code fence, numbers written as words or
// strings, booleans as "yes"/"no", lists sent as one string ("1. open the
// app 2. tap pay" or one item a line), a single value where a list is
// expected, objects sent as JSON text, enum values in the wrong case, and
// property names in the wrong case. It never invents a value: what it cannot
// read as the schema's type is left for validation to refuse. notes says
// what was repaired.
func Coerce(s *jsonschema.Schema, raw string) (any, []string, error) {
	var notes []string
	if len(raw) > maxArgBytes {
		return nil, nil, fmt.Errorf("arguments are longer than %d bytes", maxArgBytes)
	}
	raw = strings.TrimSpace(raw)
	if raw == "" {
		raw = "{}"
		notes = append(notes, "empty arguments read as {}")
	}
	v, err := decodeLoose(raw)
	if err != nil {
		fixed := unfence(raw)
		if fixed == raw {
			return nil, nil, fmt.Errorf("arguments are not valid JSON: %v", err)
		}
		if v, err = decodeLoose(fixed); err != nil {
			return nil, nil, fmt.Errorf("arguments are not valid JSON: %v", err)
		}
		notes = append(notes, "removed text around the JSON arguments")
	}
	if str, ok := v.(string); ok && schemaType(s) == "object" {
		if inner, err := decodeLoose(strings.TrimSpace(str)); err == nil {
			v = inner
			notes = append(notes, "arguments were a JSON string; decoded it")
		}
	}
	v = coerceValue(s, v, "", &notes)
	return v, notes, nil
}

func decodeLoose(s string) (any, error) {
	var v any
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("extra data after the JSON value")
	}
	return v, nil
}

// unfence returns the outermost {...} of s, dropping code fences or prose
// around it.
func unfence(s string) string {
	i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || j <= i {
		return s
	}
	return s[i : j+1]
}

// schemaType is the schema's one non-null type, or "" when it has none or
// several.
func schemaType(s *jsonschema.Schema) string {
	if s == nil {
		return ""
	}
	if s.Type != "" {
		return s.Type
	}
	var t string
	for _, x := range s.Types {
		if x == "null" {
			continue
		}
		if t != "" {
			return ""
		}
		t = x
	}
	return t
}

func coerceValue(s *jsonschema.Schema, v any, path string, notes *[]string) any {
	if s == nil || v == nil {
		return v
	}
	note := func(format string, args ...any) {
		where := path
		if where == "" {
			where = "arguments"
		}
		*notes = append(*notes, where+": "+fmt.Sprintf(format, args...))
	}
	switch schemaType(s) {
	case "object":
		if str, ok := v.(string); ok {
			if inner, err := decodeLoose(strings.TrimSpace(str)); err == nil {
				if _, isObj := inner.(map[string]any); isObj {
					note("object sent as JSON text; decoded it")
					v = inner
				}
			}
		}
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		for k, val := range m {
			if _, known := s.Properties[k]; known {
				continue
			}
			for name := range s.Properties {
				if _, taken := m[name]; !taken && strings.EqualFold(name, k) {
					note("property %q read as %q", k, name)
					delete(m, k)
					m[name] = val
					break
				}
			}
		}
		for name, ps := range s.Properties {
			if val, ok := m[name]; ok {
				m[name] = coerceValue(ps, val, join(path, name), notes)
			}
		}
		return m
	case "array":
		switch x := v.(type) {
		case []any:
			for i := range x {
				x[i] = coerceValue(s.Items, x[i], fmt.Sprintf("%s[%d]", path, i), notes)
			}
			return x
		case string:
			items := splitList(x, schemaType(s.Items))
			note("list sent as a string; split into %d item(s)", len(items))
			out := make([]any, len(items))
			for i, it := range items {
				out[i] = coerceValue(s.Items, it, fmt.Sprintf("%s[%d]", path, i), notes)
			}
			return out
		default:
			note("single value where a list was expected; wrapped it")
			return []any{coerceValue(s.Items, x, path+"[0]", notes)}
		}
	case "integer", "number":
		switch x := v.(type) {
		case string:
			if f, ok := parseNumber(x, s); ok {
				note("number sent as text %q", truncate(x, 40))
				return f
			}
		case bool:
			// A boolean is not a number; leave it for validation to refuse.
		}
		return v
	case "boolean":
		switch x := v.(type) {
		case string:
			if b, ok := parseBool(x); ok {
				note("boolean sent as text %q", truncate(x, 20))
				return b
			}
		case float64:
			if x == 0 || x == 1 {
				note("boolean sent as the number %v", x)
				return x == 1
			}
		}
		return v
	case "string":
		switch x := v.(type) {
		case float64:
			note("text sent as a number")
			v = strconv.FormatFloat(x, 'f', -1, 64)
		case bool:
			note("text sent as a boolean")
			v = strconv.FormatBool(x)
		}
		if str, ok := v.(string); ok && len(s.Enum) > 0 {
			return matchEnum(s.Enum, str, note)
		}
		return v
	}
	return v
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// matchEnum maps a value to the enum member it differs from only in case,
// surrounding space or quotes.
func matchEnum(enum []any, s string, note func(string, ...any)) any {
	for _, e := range enum {
		if e == s {
			return s
		}
	}
	t := strings.Trim(strings.TrimSpace(s), `"'`)
	for _, e := range enum {
		if es, ok := e.(string); ok && strings.EqualFold(es, t) {
			note("%q read as %q", truncate(s, 40), es)
			return es
		}
	}
	return s
}

var (
	numberedRE = regexp.MustCompile(`(\d{1,2})[.)](?:\s+|$)`)
	bulletRE   = regexp.MustCompile(`^\s*(?:[-*•]|\d{1,2}[.)])\s+`)
)

// splitList reads one string as a list: a JSON array, numbered steps
// ("1. a 2. b"), one item a line, or comma-separated scalars.
func splitList(s, itemType string) []any {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "[") {
		if v, err := decodeLoose(t); err == nil {
			if arr, ok := v.([]any); ok {
				return arr
			}
		}
	}
	var parts []string
	if lines := nonEmptyLines(t); len(lines) > 1 {
		for _, l := range lines {
			parts = append(parts, strings.TrimSpace(bulletRE.ReplaceAllString(l, "")))
		}
	} else if locs := numberedSteps(t); len(locs) > 1 {
		for i, loc := range locs {
			end := len(t)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			parts = append(parts, strings.TrimSpace(t[loc[1]:end]))
		}
	} else if itemType != "string" && itemType != "object" {
		for p := range strings.SplitSeq(t, ",") {
			parts = append(parts, strings.TrimSpace(p))
		}
	} else {
		parts = []string{t}
	}
	out := make([]any, 0, len(parts))
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func nonEmptyLines(s string) []string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// numberedSteps finds the markers "1.", "2.", "3." ... counting up from
// one, skipping numbers that do not continue the count, so that "version 2."
// inside a step is not read as a step marker.
func numberedSteps(s string) [][]int {
	var out [][]int
	for _, loc := range numberedRE.FindAllStringSubmatchIndex(s, -1) {
		if loc[0] > 0 && !unicode.IsSpace(rune(s[loc[0]-1])) {
			continue // part of a longer number or word
		}
		n, err := strconv.Atoi(s[loc[2]:loc[3]])
		if err == nil && n == len(out)+1 {
			out = append(out, loc)
		}
	}
	if len(out) > 0 && out[0][0] != 0 && strings.TrimSpace(s[:out[0][0]]) != "" {
		return nil // text before "1." is not a numbered list
	}
	return out
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(s), `"'.!`)) {
	case "true", "yes", "y", "on", "1", "yep", "correct":
		return true, true
	case "false", "no", "n", "off", "0", "nope", "none":
		return false, true
	}
	return false, false
}

// parseNumber reads "3", " 3.5 ", "1,024", "70%" (as 0.7 unless the
// schema's maximum is above 1) and numbers written as English words.
func parseNumber(s string, sc *jsonschema.Schema) (float64, bool) {
	t := strings.TrimSpace(strings.Trim(strings.TrimSpace(s), `"'`))
	percent := strings.HasSuffix(t, "%")
	t = strings.TrimSpace(strings.TrimSuffix(t, "%"))
	if f, err := strconv.ParseFloat(strings.ReplaceAll(t, ",", ""), 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		if percent && (sc.Maximum == nil || *sc.Maximum <= 1) {
			f /= 100 // a fraction, unless the schema says it counts to 100
		}
		return f, true
	}
	if percent {
		return 0, false
	}
	return wordsToNumber(t)
}

var smallNumbers = map[string]float64{
	"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
	"six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
	"thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
	"eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
	"sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}

// wordsToNumber reads English number words up to the millions ("three",
// "twenty-one", "one hundred and five", "two thousand").
func wordsToNumber(s string) (float64, bool) {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ' ' || r == '-' || r == '\t' })
	if len(words) == 0 || len(words) > 12 {
		return 0, false
	}
	var total, cur float64
	seen := false
	for _, w := range words {
		switch w {
		case "and":
			continue
		case "hundred":
			if cur == 0 {
				cur = 1
			}
			cur *= 100
		case "thousand", "million":
			if cur == 0 {
				cur = 1
			}
			mult := 1000.0
			if w == "million" {
				mult = 1_000_000
			}
			total += cur * mult
			cur = 0
		default:
			n, ok := smallNumbers[w]
			if !ok {
				return 0, false
			}
			cur += n
		}
		seen = true
	}
	return total + cur, seen
}
