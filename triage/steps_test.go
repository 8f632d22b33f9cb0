package triage_test

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/triage"
)

func TestSplitSteps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"1. add two items 2. apply SAVE10 3. pay", []string{"add two items", "apply SAVE10", "pay"}},
		{"1) open the app\n2) tap Shop\n3) buy coins", []string{"open the app", "tap Shop", "buy coins"}},
		{"- open settings\n- choose dark\n\n- restart", []string{"open settings", "choose dark", "restart"}},
		{"Step 1: log in Step 2: open the cart", []string{"log in", "open the cart"}},
		{"update to 2.4.1. then open the shop", []string{"update to 2.4.1. then open the shop"}},
		{"open the cart; pay", []string{"open the cart; pay"}},
		{"  ", nil},
		{"", nil},
		{"first I open the app\n1. tap pay", []string{"first I open the app", "tap pay"}},
	}
	for _, tt := range tests {
		got := triage.SplitSteps(tt.in)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("SplitSteps(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// The form's steps count for intake and for the actionability guard.
func TestClassifyUsesFormSteps(t *testing.T) {
	t.Parallel()
	it := triage.Item{Text: "The total at checkout is wrong.", Steps: []string{"add two items", "apply SAVE10", "look at the total"}}
	in := triage.Classify(it)
	if len(in.Steps) != 3 || in.Steps[0] != "add two items" {
		t.Fatalf("intake steps %q", in.Steps)
	}
	if err := triage.CheckActionable(in, ""); err != nil {
		t.Fatalf("a report with three form steps: %v", err)
	}
	it.Steps = nil
	if err := triage.CheckActionable(triage.Classify(it), ""); err == nil {
		t.Fatal("the same report without steps passed the guard: the test proves nothing")
	}
	if got := triage.MergeSteps([]string{"a", "B"}, []string{"b", "c", " "}); strings.Join(got, "|") != "a|B|c" {
		t.Fatalf("MergeSteps = %q", got)
	}
}
