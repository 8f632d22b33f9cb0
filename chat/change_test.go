package chat_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/signoff-dev/signoff/chat"
)

// TestChangeCardWithinLimits: however long a change's values are (and
// however much escaping lengthens them), every Slack section stays within
// Slack's limit, so the post is not refused, and the card still ends with
// the command to run.
func TestChangeCardWithinLimits(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("&<>`@", 4000)
	var excerpt []string
	for range 50 {
		excerpt = append(excerpt, long)
	}
	tests := []struct {
		name string
		ch   chat.Change
	}{
		{"empty values", chat.Change{Kind: "flag", Target: "flag:prod/x"}},
		{"every value at its worst", chat.Change{Kind: long, Target: long, Environment: long, Before: long, After: long, Summary: long,
			Excerpt: excerpt, Reason: long, PlanExpiresAt: time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := with(func(m *chat.Message) {
				m.Card.Kind, m.Card.ChatApproval = "change_approval", false
				ch := tt.ch
				m.Card.Change = &ch
			})
			out, err := chat.SlackIncoming(m)
			if err != nil {
				t.Fatal(err)
			}
			var s struct {
				Blocks []struct {
					Type string
					Text *struct{ Text string }
				}
			}
			if err := json.Unmarshal(out, &s); err != nil {
				t.Fatal(err)
			}
			for i, b := range s.Blocks {
				if b.Type == "section" && b.Text != nil {
					if n := len(utf16.Encode([]rune(b.Text.Text))); n > chat.SlackSectionLimit {
						t.Errorf("section %d is %d characters", i, n)
					}
				}
			}
			if !strings.Contains(string(out), "run `signoff approve --case "+caseID+"`") {
				t.Errorf("the command is gone:\n%s", out)
			}
			if strings.Contains(string(out), "(none)") != (tt.ch.Before == "") {
				t.Errorf("an empty value is not shown as (none)")
			}
			if _, err := chat.MattermostIncoming(m, actionURL); err != nil {
				t.Fatal(err)
			}
		})
	}
}
