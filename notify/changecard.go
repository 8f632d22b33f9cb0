package notify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/outbox"
)

// AnswerHint is where a card that chat may not answer is answered. For
// signed approvals it is the CLI command exactly as it runs (the tests
// run it), so nothing else may be appended to it.
func AnswerHint(kind, caseID string) string {
	switch kind {
	case card.CandidateApproval, card.ChangeApproval:
		return "signoff approve --case " + caseID
	case card.ReproConfirmation, card.FixConfirmation:
		return "the reporter, on their tracking page"
	}
	return "POST /api/v1/decisions/{id}/decide (the decision's id is on the case)"
}

// answerWhere is AnswerHint in a sentence: a command to run, or a place.
func answerWhere(kind, caseID string) string {
	h := AnswerHint(kind, caseID)
	if strings.HasPrefix(h, "signoff ") {
		return "run `" + h + "`"
	}
	return "answer via " + h
}

// ChangeSubject is what the change desk holds about the plan a change
// approval card asks about.
type ChangeSubject struct {
	// Digest is the current plan's subject digest: a card over another
	// digest is not about this plan.
	Digest string
	// Plan is the plan as stored (its canonical JSON).
	Plan json.RawMessage
	// Before is the target's live state as its actuator shows it
	// (changedesk.State.Value); nil when it could not be read.
	Before json.RawMessage
	Reason string
}

// Changes resolves the plan of the change case caseID in workspace ws.
// The change desk provides it; it reads, never writes.
type Changes func(ctx context.Context, ws, caseID string) (ChangeSubject, error)

// maxExcerpt is how many lines of a diff a change summary keeps; chat
// shows fewer.
const maxExcerpt = 12

// changeData composes what a change approval card over digest shows of
// sub. It refuses a subject whose plan is not the card's: the card must
// never show one plan's values next to another plan's digest.
func changeData(sub ChangeSubject, digest string) (*outbox.ChangeData, error) {
	want := strings.TrimPrefix(digest, "sha256:")
	if strings.TrimPrefix(sub.Digest, "sha256:") != want {
		return nil, fmt.Errorf("the case's plan is now %s, not the card's %s", sub.Digest, digest)
	}
	plan, err := change.DecodePlan(sub.Plan)
	if err != nil {
		return nil, err
	}
	if d, err := change.PlanDigest(plan); err != nil || d != want {
		return nil, fmt.Errorf("the stored plan does not digest to the card's %s", digest)
	}
	t, err := change.ParseTarget(plan.Target)
	if err != nil {
		return nil, err
	}
	out := &outbox.ChangeData{Kind: plan.Kind, Target: plan.Target, Reason: sub.Reason, PlanExpiresAt: plan.ExpiresAt.UTC()}
	switch plan.Kind {
	case change.KindFlag:
		out.Environment = t.Env
		flagChange(out, plan, sub.Before)
	case change.KindFile:
		out.Environment = "none: a file of the project's repository"
		fileChange(out, plan, sub.Before)
	case change.KindRunbook:
		out.Environment = "none: a runbook of the project's repository"
		runbookChange(out, plan, sub.Before)
	default:
		return nil, fmt.Errorf("plan kind %q", plan.Kind)
	}
	return out, nil
}

// flagChange: the flag's value now and the value the plan sets.
func flagChange(out *outbox.ChangeData, plan change.Plan, before json.RawMessage) {
	var now struct {
		Type  string          `json:"type"`
		Value json.RawMessage `json:"value"`
	}
	out.Before = "(not read)"
	if json.Unmarshal(before, &now) == nil && len(now.Value) > 0 {
		out.Before = compact(now.Value)
	}
	var p struct {
		Value json.RawMessage `json:"value"`
	}
	_ = json.Unmarshal(plan.Params, &p)
	out.After = compact(p.Value)
	if now.Type != "" {
		out.Summary = now.Type + " flag"
	}
}

// fileChange: the file's size before and after, and a line diff: the
// changed lines between the common head and tail of the two texts.
func fileChange(out *outbox.ChangeData, plan change.Plan, before json.RawMessage) {
	var now struct {
		Exists    bool    `json:"exists"`
		SHA256    string  `json:"sha256"`
		Size      int64   `json:"size"`
		Text      *string `json:"text"`
		Truncated bool    `json:"truncated"`
	}
	read := json.Unmarshal(before, &now) == nil && len(before) > 0
	switch {
	case !read:
		out.Before = "(not read)"
	case !now.Exists:
		out.Before = "absent"
	default:
		out.Before = fmt.Sprintf("%d bytes, sha256 %s", now.Size, short(now.SHA256))
	}
	var p struct {
		Content *string `json:"content"`
		Delete  bool    `json:"delete"`
	}
	_ = json.Unmarshal(plan.Params, &p)
	if p.Delete || p.Content == nil {
		out.After = "deleted"
		out.Summary = "the file is deleted"
		return
	}
	sum := sha256.Sum256([]byte(*p.Content))
	out.After = fmt.Sprintf("%d bytes, sha256 %s", len(*p.Content), short(hex.EncodeToString(sum[:])))
	after := lines(*p.Content)
	if !read || !now.Exists || now.Text == nil || now.Truncated {
		// Without the whole old text there is no diff to show: the new
		// text's first lines, as all added.
		out.Summary = fmt.Sprintf("new content, %d line(s); the old text is not compared", len(after))
		if read && !now.Exists {
			out.Summary = fmt.Sprintf("a new file, %d line(s)", len(after))
		}
		for _, l := range after[:min(len(after), maxExcerpt)] {
			out.Excerpt = append(out.Excerpt, "+ "+l)
		}
		return
	}
	old := lines(*now.Text)
	head := 0
	for head < len(old) && head < len(after) && old[head] == after[head] {
		head++
	}
	tail := 0
	for tail < len(old)-head && tail < len(after)-head && old[len(old)-1-tail] == after[len(after)-1-tail] {
		tail++
	}
	removed, added := old[head:len(old)-tail], after[head:len(after)-tail]
	if len(removed) == 0 && len(added) == 0 {
		out.Summary = "no line changes"
		return
	}
	out.Summary = fmt.Sprintf("%d line(s) removed, %d added, from line %d", len(removed), len(added), head+1)
	// Half the excerpt for each side, the rest to whichever has more.
	nr := min(len(removed), max(maxExcerpt/2, maxExcerpt-len(added)))
	na := min(len(added), maxExcerpt-nr)
	for _, l := range removed[:nr] {
		out.Excerpt = append(out.Excerpt, "- "+l)
	}
	for _, l := range added[:na] {
		out.Excerpt = append(out.Excerpt, "+ "+l)
	}
}

// runbookChange: the script that runs, and the steps of the run: the
// script with its arguments, the health check, and what a failure does.
func runbookChange(out *outbox.ChangeData, plan change.Plan, before json.RawMessage) {
	var now struct {
		Path   string `json:"path"`
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	}
	script := "runbooks/" + strings.TrimPrefix(plan.Target, change.KindRunbook+":")
	out.Before = "(not read)"
	if json.Unmarshal(before, &now) == nil && now.Path != "" {
		script = now.Path
		out.Before = fmt.Sprintf("script %s, %d bytes, sha256 %s", now.Path, now.Size, short(now.SHA256))
	}
	var p struct {
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		Network bool              `json:"network"`
	}
	_ = json.Unmarshal(plan.Params, &p)
	// The environment the params set is shown with the command, as a
	// shell would write it: it changes what the script does as much as
	// its arguments (DRY_RUN=0, PATH=...), and the digest covers it.
	var env []string
	for k := range p.Env {
		env = append(env, k)
	}
	slices.Sort(env)
	run := ""
	for _, k := range env {
		run += k + "=" + shellWord(p.Env[k]) + " "
	}
	run += "sh " + script
	for _, a := range p.Args {
		run += " " + shellWord(a)
	}
	out.After = "runs " + run
	net := "no network"
	if p.Network {
		net = "with network"
	}
	out.Summary = fmt.Sprintf("%d argument(s), %d environment variable(s), %s", len(p.Args), len(env), net)
	hc := plan.HealthCheck
	check := "health check: none"
	switch hc.Kind {
	case change.HealthHTTP:
		check = fmt.Sprintf("health check: %s %s expects %d, for %d s", cmpOr(hc.Method, "GET"), hc.URL, hc.ExpectStatus, hc.WindowSeconds)
	case change.HealthCommand:
		check = fmt.Sprintf("health check: %s exits %d, for %d s", strings.Join(hc.Command, " "), hc.ExpectStatus, hc.WindowSeconds)
	}
	undo := "3. on failure: nothing is restored (no compensating run)"
	if len(plan.Rollback) > 0 && string(plan.Rollback) != "null" {
		undo = "3. on failure: compensating run " + compact(plan.Rollback)
	}
	out.Excerpt = []string{"1. " + run, "2. " + check, undo}
}

// compact is raw JSON on one line, or "(none)".
func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "(none)"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	// As written: json.Marshal would show < as \u003c, which is not
	// what the value holds (chat escapes it for its platform).
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func lines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func short(digest string) string {
	digest = strings.TrimPrefix(digest, "sha256:")
	if len(digest) > 12 {
		return digest[:12]
	}
	return digest
}

// shellWord quotes an argument that a shell would split or expand.
func shellWord(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
		return s
	}
	return strconv.Quote(s)
}
