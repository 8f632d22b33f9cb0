package web

import (
	"bytes"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/tamper"
	"github.com/signoff-dev/signoff/verify"
)

// TestApprovalAttackCardHidden: on a bug's approval page, what the fixer
// agent controls (its diff, the paths of the test files it edited, a
// static finding quoting its code) and the reporter's title are shown
// with every hidden character marked: a right-to-left override in the
// diff is the Trojan Source attack, code that reads one way and runs
// another, on the very page the person signs from.
func TestApprovalAttackCardHidden(t *testing.T) {
	t.Parallel()
	pages := parsePages()
	const rlo = "\u202e"
	defences := repair.Defences{
		Protected: verify.DefaultProtected,
		TestEdits: []verify.TestEdit{{Path: "cart/cart" + rlo + "og.tset_.go", Change: verify.EditModified}},
		Findings:  []tamper.Finding{{Rule: "env-probe", Severity: tamper.Flag, Path: "cart/cart.go", Line: 3, Detail: "reads " + rlo + "EMOH"}},
		Cache:     "shielded",
	}
	v := approvalView{Case: signoff.Case{ID: "case_1", Kind: signoff.KindBug, Title: "coupon" + rlo + "deppets"}, SubjectKind: "candidate card",
		Subject: `{"diff":"+ if admin ` + rlo + ` { return }"}`, Diff: "+\tif isAdmin " + rlo + "{ /* } */ return true\n",
		Digest: strings.Repeat("a", 64), Defences: &defences}
	var buf bytes.Buffer
	if err := pages["approval"].ExecuteTemplate(&buf, "base", page{Title: "Approval", Me: &signoff.Actor{ID: "act_op", Name: "op", Role: signoff.RoleOperator}, Body: v}); err != nil {
		t.Fatal(err)
	}
	body := buf.String()
	main := body[strings.Index(body, "<main"):]
	for _, id := range []string{"subject", "diff", "test-edits", "findings"} {
		el := approvalAttackElement(body, id)
		if el == "" {
			t.Errorf("no element %s", id)
			continue
		}
		if strings.Contains(el, rlo) {
			t.Errorf("%s holds a right-to-left override unmarked: %s", id, el)
		}
	}
	if h1 := main[:strings.Index(main, "</h1>")]; strings.Contains(h1, rlo) {
		t.Errorf("the heading holds the title's override unmarked: %s", h1)
	}
}

// approvalAttackElement is the element with id in body, up to its end
// tag (none nested of the same name in the pages it reads).
func approvalAttackElement(body, id string) string {
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		return ""
	}
	start := strings.LastIndex(body[:i], "<")
	tag := body[start+1:]
	tag = tag[:strings.IndexAny(tag, " >")]
	end := strings.Index(body[i:], "</"+tag+">")
	if end < 0 {
		return body[start:]
	}
	return body[start : i+end+len(tag)+3]
}

// TestApprovalAttackCaseDiffHidden: the bug case page, read before the
// approval page, shows the fixer agent's diff (file names, each side of
// the side-by-side table, the unified text) with every hidden character
// marked, as the change case page already did for a file plan.
func TestApprovalAttackCaseDiffHidden(t *testing.T) {
	t.Parallel()
	pages := parsePages()
	const rlo = "\u202e"
	unified := "--- a/cart/cart.go\n+++ b/cart/cart" + rlo + ".go\n@@ -1,1 +1,1 @@\n-\treturn false\n+\tif isAdmin " + rlo + "{ /* } */ return true\n"
	cand := candidateView{Candidate: signoff.Candidate{ID: "cand_1", Attempt: 1, Diff: unified}, Files: sideBySide(unified)}
	if len(cand.Files) == 0 {
		t.Fatal("the diff parsed into no file")
	}
	body := struct {
		Case signoff.Case
		Bug  *bugView
	}{Case: signoff.Case{ID: "case_1", Kind: signoff.KindBug}, Bug: &bugView{Candidates: []candidateView{cand}, Names: map[string]string{}}}
	var buf bytes.Buffer
	if err := pages["case"].ExecuteTemplate(&buf, "bug-section", struct{ Body any }{body}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "isAdmin") {
		t.Fatalf("the section shows no diff: %s", out)
	}
	if strings.Contains(out, rlo) {
		i := strings.Index(out, rlo)
		t.Errorf("the case page's diff holds a right-to-left override unmarked: …%s…", out[max(0, i-80):min(len(out), i+40)])
	}
}
