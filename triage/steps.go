package triage

import (
	"regexp"
	"strings"
)

// stepMarker is a step's number or bullet where a step starts: at the
// start of the text or after white space, "1." "2)" "3 -" "Step 4:" or a
// bullet, then white space. "2.4.1" and "v4.2." are not markers.
var stepMarker = regexp.MustCompile(`(?i)(?:^|\s)(?:(?:step\s*)?\d{1,2}\s*[.):-]|[-*•·]|step\s*\d{1,2})\s+`)

// SplitSteps splits the form's steps field into steps: one per line, and
// within a line one per numbered or bulleted marker ("1. open the cart 2.
// tap pay"), markers removed. Blank pieces are dropped; text without
// markers is one step.
func SplitSteps(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		locs := stepMarker.FindAllStringIndex(line, -1)
		if len(locs) == 0 {
			if s := cleanStep(line); s != "" {
				out = append(out, s)
			}
			continue
		}
		if s := cleanStep(line[:locs[0][0]]); s != "" {
			out = append(out, s)
		}
		for i, l := range locs {
			end := len(line)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			if s := cleanStep(line[l[1]:end]); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

func cleanStep(s string) string {
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), ";,"))
}

// MergeSteps returns the form's steps, then the steps found in the text
// that the form did not already give.
func MergeSteps(form, fromText []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, list := range [][]string{form, fromText} {
		for _, s := range list {
			s = strings.TrimSpace(s)
			k := strings.ToLower(s)
			if s == "" || seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, s)
		}
	}
	return out
}
