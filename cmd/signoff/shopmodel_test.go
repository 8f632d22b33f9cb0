package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/openai/openaitest"
)

// shopModel is a scripted model for ShopLite: it answers an
// OpenAI-compatible chat server (openaitest) from what each request
// shows, the way a competent but imperfect tool-calling model would. It is
// honestly a script: its knowledge of ShopLite's bugs (the tests it writes
// and the edits it makes) is written here by hand. It decides from what it
// is shown, never from ids: the offered tools say its role, the task
// input says what was reported (and, for the fixer, the failing output
// and the earlier attempts' verdicts), and the files it read with
// read_source are what it edits. Where it cannot tell, it gives up.
//
// Its imperfections are deliberate and ordinary: the reproducer first
// takes expected_failure from the report's wording ("-1.00") although its
// test prints cents, and corrects it from the refusal's output; the
// fixer's first patch for the coupon bug rewrites the whole discount and
// loses fixed-amount coupons, which the verifier rejects; it fixes an
// overflow only where the test shows one.
type shopModel struct{}

// shopRequest is a chat request as the script reads it.
type shopRequest struct {
	tools []string
	input map[string]any
	// calls are the tool calls made so far, in order, with their results.
	calls []shopCall
}

type shopCall struct {
	name   string
	args   string
	result string
}

func (shopModel) respond(r openaitest.ChatRequest) openaitest.Step {
	q, err := readShopRequest(r)
	if err != nil {
		return giveUp(q, "I cannot read the task: "+err.Error())
	}
	switch {
	case slices.Contains(q.tools, "propose_reproduction"):
		return q.reproduce()
	case slices.Contains(q.tools, "propose_fix"):
		return q.fix()
	}
	return giveUp(q, "this is not a task I know how to do")
}

func readShopRequest(r openaitest.ChatRequest) (shopRequest, error) {
	q := shopRequest{tools: r.ToolNames()}
	byID := map[string]int{}
	for _, m := range r.Messages {
		switch m.Role {
		case "user":
			if q.input == nil {
				in, err := taskInput(m.Content)
				if err != nil {
					return q, err
				}
				q.input = in
			}
		case "assistant":
			for _, tc := range m.ToolCalls {
				byID[tc.ID] = len(q.calls)
				q.calls = append(q.calls, shopCall{name: tc.Function.Name, args: tc.Function.Arguments})
			}
		case "tool":
			if i, ok := byID[m.ToolCallID]; ok {
				q.calls[i].result = m.Content
			}
		}
	}
	if q.input == nil {
		return q, fmt.Errorf("no task input in the conversation")
	}
	return q, nil
}

// taskInput finds the task's JSON input in the user message: the data
// block between the report markers, whitespace shown as the datamark.
func taskInput(content string) (map[string]any, error) {
	start := strings.Index(content, "<<<REPORT ")
	end := strings.LastIndex(content, "<<<END REPORT ")
	if start < 0 || end < start {
		return nil, fmt.Errorf("no data block")
	}
	block := content[start:end]
	open, closing := strings.Index(block, "{"), strings.LastIndex(block, "}")
	if open < 0 || closing < open {
		return nil, fmt.Errorf("no JSON in the data block")
	}
	text := strings.ReplaceAll(block[open:closing+1], "ˆ", " ")
	var in map[string]any
	if err := json.Unmarshal([]byte(text), &in); err != nil {
		return nil, fmt.Errorf("task input: %w", err)
	}
	return in, nil
}

func (q shopRequest) str(path ...string) string {
	var cur any = q.input
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return ""
		}
		cur = m[p]
	}
	s, _ := cur.(string)
	return s
}

// last returns the result of the last call of the named tool.
func (q shopRequest) last(name string) (shopCall, bool) {
	for i := len(q.calls) - 1; i >= 0; i-- {
		if q.calls[i].name == name {
			return q.calls[i], true
		}
	}
	return shopCall{}, false
}

// files are the repository files read so far, by path.
func (q shopRequest) files() map[string]string {
	out := map[string]string{}
	for _, c := range q.calls {
		if c.name != "read_source" || strings.HasPrefix(c.result, "ERROR") {
			continue
		}
		var a struct{ Path string }
		if json.Unmarshal([]byte(c.args), &a) != nil {
			continue
		}
		if body, ok := fileBody(c.result); ok {
			out[a.Path] = body
		}
	}
	return out
}

// fileBody is a read_source result's file text, between its markers.
func fileBody(result string) (string, bool) {
	start := strings.Index(result, "<<<FILE ")
	end := strings.LastIndex(result, "\n<<<END FILE ")
	if start < 0 || end < start {
		return "", false
	}
	nl := strings.Index(result[start:], "\n")
	if nl < 0 || start+nl+1 > end {
		return "", false
	}
	return result[start+nl+1 : end], true
}

// explore lists the repository, then reads the Go code that is not a
// command (where the reported behaviour lives) and its tests, all in one
// turn, as a model calling tools in parallel would. It returns false
// when it has read what it wanted.
func (q shopRequest) explore() (openaitest.Step, bool) {
	list, ok := q.last("list_source")
	if !ok {
		return openaitest.ToolCall("list_source", "{}"), true
	}
	if _, read := q.last("read_source"); read {
		return openaitest.Step{}, false
	}
	var calls []agent.ToolCall
	for _, line := range strings.Split(list.result, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		f := fields[0]
		if !strings.HasSuffix(f, ".go") || strings.HasPrefix(f, "cmd/") {
			continue
		}
		args, _ := json.Marshal(map[string]string{"path": f})
		calls = append(calls, agent.ToolCall{Name: "read_source", Arguments: string(args)})
	}
	if len(calls) == 0 {
		return giveUp(q, "the repository has no Go code I could read"), true
	}
	return openaitest.ToolCalls(calls...), true
}

func giveUp(q shopRequest, why string) openaitest.Step {
	args, _ := json.Marshal(map[string]string{"reason": why})
	return openaitest.ToolCall(agent.GiveUpTool, string(args))
}

// codeFile is the one non-test Go file read, and its path.
func (q shopRequest) codeFile() (string, string, bool) {
	var path, src string
	for p, body := range q.files() {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		if path != "" {
			return "", "", false // more than one: this script knows one file
		}
		path, src = p, body
	}
	return path, src, path != ""
}

var (
	couponRE   = regexp.MustCompile(`"(\w+)":\s*\{Code: "\w+"(?:, (Percent|AmountCents): (\d+))?\}`)
	moneyRE    = regexp.MustCompile(`-?\d+\.\d\d\b`)
	priceRE    = regexp.MustCompile(`price_cents (\d+)`)
	quantityRE = regexp.MustCompile(`quantity (\d+)`)
	linesRE    = regexp.MustCompile(`\b(one|two|three|four|\d+) lines?\b`)
	packageRE  = regexp.MustCompile(`(?m)^package (\w+)`)
	gotRE      = regexp.MustCompile(`= (-?\d+)`)
)

// coupon is a coupon as the source declares it.
type coupon struct {
	percent, amount int64
}

func coupons(src string) map[string]coupon {
	out := map[string]coupon{}
	for _, m := range couponRE.FindAllStringSubmatch(src, -1) {
		n, _ := strconv.ParseInt(m[3], 10, 64)
		c := coupon{}
		if m[2] == "Percent" {
			c.percent = n
		} else {
			c.amount = n
		}
		out[m[1]] = c
	}
	return out
}

func cents(money string) int64 {
	n, _ := strconv.ParseInt(strings.Replace(money, ".", "", 1), 10, 64)
	return n
}

// latest is what the reporter said last: on a reopened case, the answer
// saying what still fails, which the new round must pin.
func latest(report string) string {
	const later = "The reporter answered later:"
	if i := strings.LastIndex(report, later); i >= 0 {
		return report[i+len(later):]
	}
	return report
}

// reproTest is a test the reproducer proposes.
type reproTest struct {
	path, name, content, expected, explanation string
}

func (q shopRequest) reproduce() openaitest.Step {
	if step, more := q.explore(); more {
		return step
	}
	path, src, ok := q.codeFile()
	if !ok || !strings.Contains(src, "func Total(") || !strings.Contains(src, "type Item struct") {
		return giveUp(q, "I did not find the cart's Total and Item in what I read")
	}
	pkg := packageRE.FindStringSubmatch(src)
	if pkg == nil {
		return giveUp(q, "no package clause in "+path)
	}
	dir := path[:strings.LastIndex(path, "/")+1]
	report := latest(q.str("subject", "report"))
	t, why := planTest(report, src)
	if why != "" {
		return giveUp(q, why)
	}
	// A refused proposal shows the test's output: take expected_failure
	// from what the test really printed.
	if prev, ok := q.last("propose_reproduction"); ok {
		if !strings.HasPrefix(prev.result, "ERROR") {
			return giveUp(q, "my proposal was accepted; nothing is left to do")
		}
		// The output is quoted: its whitespace reads as ˆ.
		out := strings.ReplaceAll(prev.result, "ˆ", " ")
		i := strings.Index(out, t.name+": fail")
		m := gotRE.FindStringSubmatch(out[max(i, 0):])
		if i < 0 || m == nil || m[0] == t.expected {
			return giveUp(q, "my test did not reproduce the bug and I cannot tell why: "+prev.result)
		}
		t.expected = m[0]
	}
	args, _ := json.Marshal(map[string]any{
		"test_files":       []map[string]string{{"path": dir + t.path, "content": "package " + pkg[1] + "\n\n" + t.content}},
		"fail_to_pass":     []string{t.name},
		"expected_failure": t.expected,
		"explanation":      t.explanation,
	})
	return openaitest.ToolCall("propose_reproduction", string(args))
}

// planTest decides which behaviour the report describes, from the report
// and the source, and writes the test for it.
func planTest(report, src string) (reproTest, string) {
	lower := strings.ToLower(report)
	table := coupons(src)
	code := ""
	for _, w := range strings.FieldsFunc(report, func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') }) {
		if _, ok := table[w]; ok {
			code = w
			break
		}
	}
	prices := priceRE.FindAllStringSubmatch(report, -1)
	switch {
	case len(prices) > 0 && (strings.Contains(lower, "error") || strings.Contains(lower, "refused") || strings.Contains(lower, "overflow")):
		price, _ := strconv.ParseInt(prices[0][1], 10, 64)
		qty := int64(1)
		if m := quantityRE.FindStringSubmatch(report); m != nil {
			qty, _ = strconv.ParseInt(m[1], 10, 64)
		}
		lines := 1
		if m := linesRE.FindStringSubmatch(lower); m != nil {
			lines = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4}[m[1]]
			if lines == 0 {
				lines, _ = strconv.Atoi(m[1])
			}
		}
		if price < 1<<40 {
			return reproTest{}, "the prices in the report are not large enough to overflow; I do not know what fails"
		}
		var items []string
		for i := range lines {
			items = append(items, fmt.Sprintf("{SKU: \"bulk-%d\", PriceCents: %d, Quantity: %d}", i+1, price, qty))
		}
		name, file, what := "TestSubtotalOverflowIsRefused", "subtotal_overflow_test.go", "the sum of the lines"
		if lines == 1 {
			name, file, what = "TestLineTotalOverflowIsRefused", "line_overflow_test.go", "price times quantity"
		}
		return reproTest{path: file, name: name, expected: "want an error",
			explanation: fmt.Sprintf("%d line(s) of price_cents %d and quantity %d: %s does not fit in int64, and Total must refuse it instead of wrapping.", lines, price, qty, what),
			content: fmt.Sprintf(`import "testing"

// %[1]s reproduces the reported bug: %[2]s overflows int64 and
// the total wraps instead of being refused.
func %[1]s(t *testing.T) {
	items := []Item{%[3]s}
	got, err := Total(items, "")
	if err == nil {
		t.Errorf("Total(%[4]d line(s) of price_cents %[5]d, quantity %[6]d) = %%d, nil; want an error: the total does not fit in int64", got)
	}
}
`, name, what, strings.Join(items, ", "), lines, price, qty)}, ""
	case code != "" && table[code].percent > 0:
		amounts := moneyRE.FindAllString(report, -1)
		if len(amounts) < 2 {
			return reproTest{}, "the report does not say the price and the total it saw"
		}
		price, got := cents(amounts[0]), cents(amounts[1])
		want := price * (100 - table[code].percent) / 100
		return reproTest{path: "coupon_once_test.go", name: "TestPercentCouponAppliesOnce", expected: fmt.Sprintf("= %d", got),
			explanation: fmt.Sprintf("%s takes %d%% off once: %d cents must cost %d, the report saw %d.", code, table[code].percent, price, want, got),
			content: fmt.Sprintf(`import "testing"

// TestPercentCouponAppliesOnce reproduces the reported bug: %[1]s takes
// %[2]d%% off once, not twice.
func TestPercentCouponAppliesOnce(t *testing.T) {
	items := []Item{{SKU: "item", PriceCents: %[3]d, Quantity: 1}}
	got, err := Total(items, %[1]q)
	if err != nil {
		t.Fatalf("Total(%[3]d cents, %[1]s): %%v", err)
	}
	if got != %[4]d {
		t.Errorf("Total(%[3]d cents, %[1]s) = %%d; want %[4]d", got)
	}
}
`, code, table[code].percent, price, want)}, ""
	case code != "" && table[code].amount > 0 && strings.Contains(lower, "negative"):
		amounts := moneyRE.FindAllString(report, -1)
		if len(amounts) < 2 {
			return reproTest{}, "the report does not say the price and the total it saw"
		}
		price := cents(amounts[0])
		// The report's own words for the wrong total: a first guess at
		// what the failing test prints.
		return reproTest{path: "coupon_negative_test.go", name: "TestCouponNeverMakesTotalNegative", expected: amounts[1],
			explanation: fmt.Sprintf("%s is worth more than a %d-cent cart: the total must be 0, not negative.", code, price),
			content: fmt.Sprintf(`import "testing"

// TestCouponNeverMakesTotalNegative reproduces the reported bug: a coupon
// worth more than the cart leaves nothing to pay, never a negative total.
func TestCouponNeverMakesTotalNegative(t *testing.T) {
	items := []Item{{SKU: "item", PriceCents: %[2]d, Quantity: 1}}
	got, err := Total(items, %[1]q)
	if err != nil {
		t.Fatalf("Total(%[2]d cents, %[1]s): %%v", err)
	}
	if got != 0 {
		t.Errorf("Total(%[2]d cents, %[1]s) = %%d; want 0", got)
	}
}
`, code, price)}, ""
	}
	return reproTest{}, "I cannot tell from the report and the code which behaviour is wrong"
}

// Patterns of the code the fixer changes, as it reads it.
var (
	twicePattern  = regexp.MustCompile(`(?s)(\n\tif c\.Percent != 0 \{\n)\t\tdiscounted := cents \* \(100 - c\.Percent\) / 100\n\t\treturn discounted \* \(100 - c\.Percent\) / 100\n`)
	applyPattern  = regexp.MustCompile(`(?s)(func \(c Coupon\) Apply\(cents int64\) int64 \{\n).*?\n\}\n`)
	amountPattern = regexp.MustCompile(`\n\treturn cents - c\.AmountCents\n`)
	sumPattern    = regexp.MustCompile(`\n\t\tsubtotal \+= it\.PriceCents \* it\.Quantity\n`)
	linePattern   = regexp.MustCompile(`\n\t\tline := it\.PriceCents \* it\.Quantity\n`)
)

func (q shopRequest) fix() openaitest.Step {
	if step, more := q.explore(); more {
		return step
	}
	if prev, ok := q.last("propose_fix"); ok {
		return giveUp(q, "my fix was refused: "+prev.result)
	}
	path, src, ok := q.codeFile()
	if !ok {
		return giveUp(q, "I did not find the code the failing test exercises")
	}
	failing := q.str("subject", "failing_output")
	var previous []struct {
		Verdict, Reason string
	}
	if subj, ok := q.input["subject"].(map[string]any); ok {
		b, _ := json.Marshal(subj["previous_attempts"])
		json.Unmarshal(b, &previous)
	}
	// Which tests broke before: an earlier attempt rejected for a test
	// that must keep passing.
	brokeOthers := false
	for _, p := range previous {
		if p.Verdict == "REJECTED" && strings.Contains(p.Reason, "pass-to-pass") && !strings.Contains(p.Reason, "pass-to-pass 0/0") {
			for _, kept := range q.keepPassing() {
				brokeOthers = brokeOthers || strings.Contains(p.Reason, kept+" failed")
			}
		}
	}
	var out, summary string
	switch {
	case twicePattern.MatchString(src) && mentionsPercentCoupon(failing, src):
		if !brokeOthers {
			// First try: a percentage discount is one formula. (It loses
			// the fixed-amount coupons' branch: the verifier will say.)
			out = applyPattern.ReplaceAllString(src, "${1}\treturn cents * (100 - c.Percent) / 100\n}\n")
			summary = "Apply computes the discount once: cents * (100 - Percent) / 100."
		} else {
			out = twicePattern.ReplaceAllString(src, "${1}\t\treturn cents * (100 - c.Percent) / 100\n")
			summary = "Apply takes a percentage off once and keeps fixed-amount coupons as they were (the previous attempt broke them)."
		}
	case strings.Contains(failing, "want 0") && amountPattern.MatchString(src):
		out = amountPattern.ReplaceAllString(src, "\n\tif c.AmountCents >= cents {\n\t\treturn 0\n\t}\n\treturn cents - c.AmountCents\n")
		summary = "A fixed-amount coupon worth more than the cart leaves 0, never a negative total."
	case strings.Contains(failing, "want an error") && sumPattern.MatchString(src):
		out = sumPattern.ReplaceAllString(src, "\n\t\tline := it.PriceCents * it.Quantity\n\t\tif subtotal > math.MaxInt64-line {\n\t\t\treturn 0, fmt.Errorf(\"%w: line %d: the total does not fit in int64\", ErrInvalidItem, i+1)\n\t\t}\n\t\tsubtotal += line\n")
		out = withImport(out, "math")
		summary = "Total refuses a subtotal that would overflow int64 instead of wrapping."
	case strings.Contains(failing, "want an error") && linePattern.MatchString(src) && !strings.Contains(src, "math.MaxInt64/"):
		out = linePattern.ReplaceAllString(src, "\n\t\tif it.Quantity > math.MaxInt64/max(it.PriceCents, 1) {\n\t\t\treturn 0, fmt.Errorf(\"%w: line %d: price times quantity does not fit in int64\", ErrInvalidItem, i+1)\n\t\t}\n\t\tline := it.PriceCents * it.Quantity\n")
		summary = "Total also refuses a line whose price times quantity overflows int64."
	default:
		return giveUp(q, "I cannot tell from the failing output which part of "+path+" to change")
	}
	args, _ := json.Marshal(map[string]any{"files": []map[string]string{{"path": path, "content": out}}, "summary": summary})
	return openaitest.ToolCall("propose_fix", string(args))
}

func (q shopRequest) keepPassing() []string {
	subj, _ := q.input["subject"].(map[string]any)
	var out []string
	list, _ := subj["must_keep_passing"].([]any)
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// mentionsPercentCoupon reports whether text names one of the source's
// percentage coupons.
func mentionsPercentCoupon(text, src string) bool {
	for code, c := range coupons(src) {
		if c.percent > 0 && strings.Contains(text, code) {
			return true
		}
	}
	return false
}

// withImport adds an import to a Go file's import block, in order.
func withImport(src, pkg string) string {
	start := strings.Index(src, "import (\n")
	if start < 0 || strings.Contains(src, "\t\""+pkg+"\"\n") {
		return src
	}
	start += len("import (\n")
	end := start + strings.Index(src[start:], ")")
	lines := strings.Split(strings.TrimSuffix(src[start:end], "\n"), "\n")
	lines = append(lines, "\t\""+pkg+"\"")
	slices.Sort(lines)
	return src[:start] + strings.Join(lines, "\n") + "\n" + src[end:]
}
