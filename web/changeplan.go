package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/change"
)

// A change plan in words: what the plan does to its target, read from the
// plan the digest covers (a flag's value before and after, a file's diff,
// a runbook's parameters field by field), and the policy review as
// sentences. The plan was drafted by a planner that may be an agent: its
// values are only decoded here and escaped by the template.

// planWords is a plan in words.
type planWords struct {
	// Summary is one line: "prod · checkout_v2: false → true".
	Summary string
	// Diff is a file plan's change, rendered side by side from DiffText,
	// a unified diff of the rollback's content (the file now) and the
	// params' content.
	Diff     []diffFile
	DiffText string
	// Params and Rollback are the other kinds' fields.
	Params, Rollback []fieldView
	// Health is the health check in a sentence.
	Health string
}

// wordsOf reads plan p into words; nil when it does not decode.
func wordsOf(p change.Plan) *planWords {
	w := &planWords{Health: healthWords(p.HealthCheck)}
	t, err := change.ParseTarget(p.Target)
	if err != nil {
		w.Summary = p.Target
		w.Params, w.Rollback = subjectFields(p.Params), subjectFields(p.Rollback)
		return w
	}
	switch t.Kind {
	case change.KindFlag:
		w.Summary = fmt.Sprintf("%s · %s: %s → %s", t.Env, t.Name, member(p.Rollback, "value", "(not recorded)"), member(p.Params, "value", "(no value)"))
	case change.KindFile:
		w.Summary, w.DiffText = fileWords(t.Name, p.Rollback, p.Params)
		w.Diff = sideBySide(w.DiffText)
	default:
		w.Summary = fmt.Sprintf("%s %s", t.Kind, t.Name)
		w.Params = subjectFields(p.Params)
		if !isNull(p.Rollback) {
			w.Rollback = subjectFields(p.Rollback)
		}
	}
	return w
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// member is one member of a JSON object as compact JSON, or missing.
func member(raw json.RawMessage, key, missing string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return missing
	}
	v, ok := m[key]
	if !ok {
		return missing
	}
	// Compact, as written: re-encoding would show "<" as \u003c, text
	// the plan does not hold.
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}

// fileEditOf reads a file plan's {"content": ...} or {"delete": true}.
func fileEditOf(raw json.RawMessage) (content string, deleted, ok bool) {
	var m struct {
		Content *string `json:"content"`
		Delete  bool    `json:"delete"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return "", false, false
	}
	if m.Delete {
		return "", true, true
	}
	if m.Content == nil {
		return "", false, false
	}
	return *m.Content, false, true
}

// fileWords says what a file plan does and diffs the file as it is now
// (the rollback carries it, or deletes a file that does not exist yet)
// against what the plan writes.
func fileWords(path string, rollback, params json.RawMessage) (string, string) {
	before, absent, okB := fileEditOf(rollback)
	after, deletes, okA := fileEditOf(params)
	if !okA || !okB {
		return "file " + path + ": the plan's content does not decode", ""
	}
	oldName, newName := "a/"+path, "b/"+path
	switch {
	case absent && deletes:
		return "file " + path + ": deletes a file that does not exist", ""
	case absent:
		oldName = "/dev/null"
	case deletes:
		newName = "/dev/null"
	}
	text := unifiedDiff(oldName, newName, before, after)
	add, del := 0, 0
	for _, f := range sideBySide(text) {
		add, del = add+f.Added, del+f.Deleted
	}
	switch {
	case absent:
		return fmt.Sprintf("file %s: creates it (%d line(s))", path, add), text
	case deletes:
		return fmt.Sprintf("file %s: deletes it (%d line(s))", path, del), text
	case text == "":
		return "file " + path + ": writes the content it already has", ""
	}
	return fmt.Sprintf("file %s: +%d −%d line(s)", path, add, del), text
}

// healthWords says what the health check probes.
func healthWords(h change.HealthCheck) string {
	every := ""
	if h.WindowSeconds > 0 {
		every = fmt.Sprintf(", every %d s for %d s", h.IntervalSeconds, h.WindowSeconds)
	}
	switch h.Kind {
	case change.HealthHTTP:
		s := fmt.Sprintf("%s %s must answer %d", h.Method, wordURL(h.URL), h.ExpectStatus)
		if h.Body != "" {
			// What a POST sends is part of what is signed: said, not
			// left to the JSON below.
			s = fmt.Sprintf("%s %s, sent with the body %q, must answer %d", h.Method, wordURL(h.URL), h.Body, h.ExpectStatus)
		}
		if h.ExpectBody != "" {
			s += fmt.Sprintf(" with %q in the body", h.ExpectBody)
		}
		return s + every + "; if it does not, the target is restored."
	case change.HealthCommand:
		// Each argument quoted: joined bare, ["sh", "-c x"] and
		// ["sh", "-c", "x"] would read the same.
		args := make([]string, len(h.Command))
		for i, a := range h.Command {
			args[i] = strconv.Quote(a)
		}
		s := fmt.Sprintf("the command %s must exit %d", strings.Join(args, " "), h.ExpectStatus)
		if h.ExpectBody != "" {
			s += fmt.Sprintf(" with %q in its output", h.ExpectBody)
		}
		return s + every + "; if it does not, the target is restored."
	case "":
		return "No health check."
	}
	return "A health check of kind " + h.Kind + "."
}

// wordURL is a health check's URL in its sentence: quoted when it holds
// a space, a quote or anything but printable ASCII, so an agent's URL
// cannot write the rest of the sentence ("… must answer 200; …").
func wordURL(u string) string {
	if strings.ContainsFunc(u, func(r rune) bool { return r <= ' ' || r > '~' || r == '"' }) {
		return strconv.Quote(u)
	}
	return u
}

// ruleWords names the policy's review rules for people.
var ruleWords = map[string]string{
	change.RulePlanWellFormed:     "The plan is well formed",
	change.RuleTargetNotProtected: "The target is not protected",
	change.RuleTargetAllowed:      "The policy allows the target",
	change.RuleEnvironmentAllowed: "The environment is allowed",
	change.RuleReasonLength:       "The request says why",
	change.RuleChangeWindow:       "Inside a change window",
	change.RulePlanNotExpired:     "The plan has not expired",
	change.RuleHealthCheck:        "It has a bounded health check",
	change.RuleHealthHost:         "The health check probes a host the server may probe",
	change.RuleRollback:           "It can be rolled back",
	change.RuleRunbookNetwork:     "The runbook's network access is allowed",
	change.RuleDigests:            "Its state digests are well formed",
	change.RuleApprovers:          "Enough approvers exist",
}

// reviewWords is the review in a sentence: how many rules passed, and
// each failed rule's words.
func reviewWords(r change.Result) string {
	failed := r.Failed()
	if len(failed) == 0 {
		return fmt.Sprintf("The policy allows this plan: all %d of its rules passed. It still needs the approvals the policy asks for before the gate runs it.", len(r.Rules))
	}
	parts := make([]string, 0, len(failed))
	for _, f := range failed {
		parts = append(parts, ruleWord(f.Rule)+": no ("+f.Detail+")")
	}
	return fmt.Sprintf("The policy refuses this plan: %d of %d rules failed. %s.", len(failed), len(r.Rules), strings.Join(parts, "; "))
}

func ruleWord(rule string) string {
	if w, ok := ruleWords[rule]; ok {
		return w
	}
	return rule
}

// maxDiffCells bounds the table the line diff fills (lines before × lines
// after, once the common head and tail are set aside): a bigger change is
// shown as the old lines removed and the new ones added, still exact.
const maxDiffCells = 1 << 20

// unifiedDiff is the unified diff (3 lines of context) of two texts, as
// git writes it, or "" when they are equal.
func unifiedDiff(oldName, newName, before, after string) string {
	a, b := splitLines(before), splitLines(after)
	ops := lineDiff(a, b)
	changed := false
	for _, op := range ops {
		changed = changed || op.kind != ' '
	}
	if !changed {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	const ctx = 3
	// Each op's line numbers on each side before it.
	type pos struct{ l, r int }
	at := make([]pos, len(ops)+1)
	for i, op := range ops {
		at[i+1] = at[i]
		if op.kind != '+' {
			at[i+1].l++
		}
		if op.kind != '-' {
			at[i+1].r++
		}
	}
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-ctx)
		end := i // one past the last change of the hunk
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				if j > end+2*ctx && end > i {
					break
				}
				end = j + 1
			}
		}
		stop := min(len(ops), end+ctx)
		lc, rc := at[stop].l-at[start].l, at[stop].r-at[start].r
		ls, rs := at[start].l+1, at[start].r+1
		if lc == 0 {
			ls--
		}
		if rc == 0 {
			rs--
		}
		fmt.Fprintf(&sb, "@@ -%d,%d +%d,%d @@\n", ls, lc, rs, rc)
		for _, op := range ops[start:stop] {
			sb.WriteByte(op.kind)
			sb.WriteString(strings.TrimSuffix(op.line, "\n"))
			sb.WriteByte('\n')
			if !strings.HasSuffix(op.line, "\n") {
				sb.WriteString("\\ No newline at end of file\n")
			}
		}
		i = stop
	}
	return sb.String()
}

// splitLines splits text into lines that keep their "\n"; the last one
// lacks it when the text does not end with one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.SplitAfter(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

type diffOp struct {
	kind byte // ' ', '-' or '+'
	line string
}

// lineDiff is a shortest edit of a into b by lines: the common head and
// tail kept, the middle by longest common subsequence when it is small
// enough (maxDiffCells), otherwise removed and added whole.
func lineDiff(a, b []string) []diffOp {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	var ops []diffOp
	for _, l := range a[:p] {
		ops = append(ops, diffOp{' ', l})
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	n, m := len(ma), len(mb)
	if n*m > maxDiffCells {
		for _, l := range ma {
			ops = append(ops, diffOp{'-', l})
		}
		for _, l := range mb {
			ops = append(ops, diffOp{'+', l})
		}
	} else {
		// lcs[i][j]: the longest common subsequence of ma[i:] and mb[j:].
		lcs := make([]int32, (n+1)*(m+1))
		idx := func(i, j int) int { return i*(m+1) + j }
		for i := n - 1; i >= 0; i-- {
			for j := m - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[idx(i, j)] = lcs[idx(i+1, j+1)] + 1
				} else {
					lcs[idx(i, j)] = max(lcs[idx(i+1, j)], lcs[idx(i, j+1)])
				}
			}
		}
		i, j := 0, 0
		for i < n || j < m {
			switch {
			case i < n && j < m && ma[i] == mb[j]:
				ops = append(ops, diffOp{' ', ma[i]})
				i, j = i+1, j+1
			case j < m && (i == n || lcs[idx(i, j+1)] > lcs[idx(i+1, j)]):
				ops = append(ops, diffOp{'+', mb[j]})
				j++
			default:
				ops = append(ops, diffOp{'-', ma[i]})
				i++
			}
		}
	}
	for _, l := range a[len(a)-s:] {
		ops = append(ops, diffOp{' ', l})
	}
	return ops
}
