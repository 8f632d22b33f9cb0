package web

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/tamper"
	"github.com/signoff-dev/signoff/verify"
)

// TestApprovalPageShowsTheDefences renders a bug's approval page with a
// card as the bug desk builds it: the harness source, who approved it,
// and what the verification did against a counterfeit verdict, escaped.
func TestApprovalPageShowsTheDefences(t *testing.T) {
	t.Parallel()
	pages := parsePages()
	review := signoff.HarnessReview{HarnessID: "har_1", By: "act_pia", Decision: signoff.HarnessApprove, ReviewDigest: strings.Repeat("e", 64), At: time.Unix(1_800_000_000, 0)}
	defences := repair.Defences{
		Protected:    verify.DefaultProtected,
		Unprotected:  []verify.Exemption{{Glob: "test/**", Reason: "fixtures <not tests>"}},
		TestEdits:    []verify.TestEdit{{Path: "cart/cart_test.go", Change: verify.EditModified}},
		Findings:     []tamper.Finding{{Rule: "env-probe", Severity: tamper.Flag, Path: "cart/cart.go", Line: 3, Detail: "reads <HOME>"}},
		BuildChanges: verify.BuildRefuse, Cache: "shielded",
		Witness: []string{"run 1: all 10 harness results carried the witness of their pass (10 test functions instrumented)"},
	}
	v := approvalView{Case: signoff.Case{ID: "case_1", Kind: signoff.KindBug, Title: "coupon"}, SubjectKind: "candidate card", Subject: "{}",
		Digest: strings.Repeat("a", 64), Source: repair.Sources(map[string][]byte{"cart/coupon_repro_test.go": []byte("package cart // <b>x</b>\n")}),
		Review: &review, Defences: &defences}
	var buf bytes.Buffer
	if err := pages["approval"].ExecuteTemplate(&buf, "base", page{Title: "Approval", Me: &signoff.Actor{ID: "act_op", Name: "op", Role: signoff.RoleOperator}, Body: v}); err != nil {
		t.Fatal(err)
	}
	body := buf.String()
	for _, want := range []string{
		`id="defences"`, `id="harness-source"`, "cart/cart_test.go</code> (modified)", "env-probe", "reads &lt;HOME&gt;",
		"fixtures &lt;not tests&gt;", "carried the witness of their pass", "confined by Landlock", "&lt;b&gt;x&lt;/b&gt;", "act_pia",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(body, "<b>x</b>") || strings.Contains(body, "<HOME>") {
		t.Error("the page shows card text unescaped")
	}
}
