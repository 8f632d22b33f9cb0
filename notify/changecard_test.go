package notify

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/chat"
	"github.com/signoff-dev/signoff/outbox"
)

const testCaseID = "case_01jb2k3m4n5p6q7r8s9t0v1w2x"

// changeSubject makes a stored plan of kind on target with params and
// returns it as the change desk would, with its digest.
func changeSubject(t *testing.T, target string, params, before, rollback string) (ChangeSubject, string) {
	t.Helper()
	tg, err := change.ParseTarget(target)
	if err != nil {
		t.Fatal(err)
	}
	p := change.Plan{Kind: tg.Kind, Target: target, Params: json.RawMessage(params),
		BeforeStateDigest: strings.Repeat("a", 64), AfterStateDigest: strings.Repeat("b", 64),
		HealthCheck: change.HealthCheck{Kind: change.HealthHTTP, Method: "GET", URL: "http://127.0.0.1:9/healthz", ExpectStatus: 200, WindowSeconds: 30, IntervalSeconds: 10},
		ExpiresAt:   time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)}
	if rollback != "" {
		p.Rollback = json.RawMessage(rollback)
	}
	raw, err := canonical.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	d, err := change.PlanDigest(p)
	if err != nil {
		t.Fatal(err)
	}
	var b json.RawMessage
	if before != "" {
		b = json.RawMessage(before)
	}
	return ChangeSubject{Digest: d, Plan: raw, Before: b, Reason: "Disable it: <!here> checkout answers 500 *now* [see](https://evil.example)"}, d
}

// rendered is every string a message builder put in its JSON.
func rendered(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return strings.Join(out, "\n")
}

// TestChangeCardShowsTheChange: a change approval card, on Slack and on
// Mattermost, shows the target, its environment, the before and after
// values (a file's diff, a runbook's steps), the reason, the digest and
// the command that approves it, for every kind; and whatever the values
// hold cannot mention, link or break out of a code block.
func TestChangeCardShowsTheChange(t *testing.T) {
	t.Parallel()
	fileBefore := `{"exists":true,"sha256":"` + strings.Repeat("c", 64) + `","size":24,"text":"version 1.2.3\nchannel stable\n"}`
	tests := []struct {
		name, target, params, before, rollback string
		// want holds per builder what must appear (escaped as shown).
		slack, mm []string
	}{
		{
			name: "flag", target: "flag:prod/checkout_v2",
			params: `{"value":"<!channel> @here <https://evil.example|click>"}`, before: `{"type":"string","value":"off","version":3}`,
			rollback: `{"value":"off"}`,
			slack:    []string{"`flag:prod/checkout_v2` (flag)", "*Environment:* prod", "*Before → after:* `\"off\"` → `\"&lt;!channel&gt; @\u200dhere &lt;https://evil.example|click&gt;\"`"},
			mm:       []string{"`flag:prod/checkout_v2` (flag)", "prod", "`\"off\"` → `\"‹!channel› @\u200dhere ‹https://evil.example|click›\"`"},
		},
		{
			name: "file", target: "file:docs/@channel.md",
			params: `{"content":"version 1.2.4\n` + "```" + ` <!channel>\nchannel stable\n"}`, before: fileBefore,
			rollback: `{"content":"version 1.2.3\nchannel stable\n"}`,
			slack: []string{"`file:docs/@\u200dchannel.md` (file)", "none: a file of the project's repository",
				"`24 bytes, sha256 cccccccccccc` → `", "*Diff:* 1 line(s) removed, 2 added, from line 1",
				"- version 1.2.3", "+ version 1.2.4", "+ ′′′ &lt;!channel&gt;"},
			mm: []string{"`file:docs/@\u200dchannel.md` (file)", "none: a file of the project's repository",
				"`24 bytes, sha256 cccccccccccc` → `", "1 line(s) removed, 2 added, from line 1",
				"- version 1.2.3", "+ version 1.2.4", "+ ′′′ ‹!channel›"},
		},
		{
			// The environment the params set is shown with the command:
			// it changes what the script does, and the digest covers it.
			name: "runbook env", target: "runbook:restart-cache",
			params: `{"args":["--flush"],"env":{"PATH":"/tmp","DRY_RUN":"0 now"}}`, before: `{"path":"runbooks/restart-cache.sh","sha256":"` + strings.Repeat("d", 64) + `","size":120}`,
			slack: []string{"`runs DRY_RUN=\"0 now\" PATH=/tmp sh runbooks/restart-cache.sh --flush`", "1. DRY_RUN=\"0 now\" PATH=/tmp sh runbooks/restart-cache.sh --flush"},
			mm:    []string{"`runs DRY_RUN=\"0 now\" PATH=/tmp sh runbooks/restart-cache.sh --flush`"},
		},
		{
			name: "runbook", target: "runbook:restart-cache",
			params: `{"args":["--flush","<!channel>"],"network":false}`, before: `{"path":"runbooks/restart-cache.sh","sha256":"` + strings.Repeat("d", 64) + `","size":120}`,
			slack: []string{"`runbook:restart-cache` (runbook)", "none: a runbook of the project's repository",
				"`script runbooks/restart-cache.sh, 120 bytes, sha256 dddddddddddd` → `runs sh runbooks/restart-cache.sh --flush \"&lt;!channel&gt;\"`",
				"1. sh runbooks/restart-cache.sh", "2. health check: GET http://127.0.0.1:9/healthz expects 200, for 30 s", "3. on failure: nothing is restored"},
			mm: []string{"`runbook:restart-cache` (runbook)", "none: a runbook of the project's repository",
				"`script runbooks/restart-cache.sh, 120 bytes, sha256 dddddddddddd` → `runs sh runbooks/restart-cache.sh --flush \"‹!channel›\"`",
				"2. health check: GET http://127.0.0.1:9/healthz expects 200, for 30 s", "3. on failure: nothing is restored"},
		},
	}
	hint := "signoff approve --case " + testCaseID
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sub, digest := changeSubject(t, tt.target, tt.params, tt.before, tt.rollback)
			cd, err := changeData(sub, "sha256:"+digest)
			if err != nil {
				t.Fatal(err)
			}
			ev := outbox.Event{ID: "0b8f1c2e-1d2a-5b3c-8d4e-5f6a7b8c9d0e", Type: "card.opened", Data: outbox.EventData{CaseID: testCaseID, Seq: 7, Hash: strings.Repeat("9", 64),
				Card: &outbox.CardData{ID: "7c9e6679-7425-50de-944b-e07fc1f90ae7", Kind: card.ChangeApproval, SubjectDigest: digest, Options: []string{"approve", "reject"},
					Addressee: "role:owner,operator", ExpiresAt: time.Date(2026, 12, 7, 8, 0, 0, 0, time.UTC), AnswerHint: AnswerHint(card.ChangeApproval, testCaseID), Change: cd}}}
			m := chatMessage(ev, signoff.Channel{})
			slack, err := chat.SlackIncoming(m)
			if err != nil {
				t.Fatal(err)
			}
			mm, err := chat.MattermostIncoming(m, "")
			if err != nil {
				t.Fatal(err)
			}
			common := []string{digest[:12], "sha256:" + digest, "2026-12-07T08:00:00Z", "2026-12-07T09:00:00Z", "checkout answers 500"}
			for _, r := range []struct {
				name string
				out  string
				want []string
				hint string
				bad  []string // a link in the platform's own syntax
			}{
				{"slack", rendered(t, slack), append(tt.slack, common...), "run `" + hint + "`", nil},
				{"mattermost", rendered(t, mm), append(tt.mm, common...), "run `" + hint + "`", []string{"[see]("}},
			} {
				for _, w := range append(r.want, r.hint) {
					if !strings.Contains(r.out, w) {
						t.Errorf("%s: missing %q in\n%s", r.name, w, r.out)
					}
				}
				// Nothing untrusted pings, links or formats: no raw < from
				// any value, every @ followed by the joiner, no Markdown
				// link, and each code block closed by its own fence only.
				for _, bad := range append([]string{"<!", "<https://evil"}, r.bad...) {
					if strings.Contains(r.out, bad) {
						t.Errorf("%s: unescaped %q in\n%s", r.name, bad, r.out)
					}
				}
				if regexp.MustCompile("@[^\u200d]").MatchString(r.out) {
					t.Errorf("%s: an @ without the joiner in\n%s", r.name, r.out)
				}
				if n := strings.Count(r.out, "```"); n%2 != 0 {
					t.Errorf("%s: %d code fences: a value ended its code block", r.name, n)
				}
			}
		})
	}
}

// TestChangeDataRefusesAnotherPlan: values of a plan other than the
// card's are never shown beside the card's digest.
func TestChangeDataRefusesAnotherPlan(t *testing.T) {
	t.Parallel()
	sub, digest := changeSubject(t, "flag:prod/checkout_v2", `{"value":false}`, "", "")
	tests := []struct {
		name   string
		sub    ChangeSubject
		digest string
	}{
		{"the case has a newer plan", sub, strings.Repeat("e", 64)},
		{"the stored plan is not the digest's", ChangeSubject{Digest: digest, Plan: json.RawMessage(strings.Replace(string(sub.Plan), "false", "true", 1))}, digest},
	}
	for _, tt := range tests {
		if cd, err := changeData(tt.sub, tt.digest); err == nil {
			t.Errorf("%s: shown %+v", tt.name, cd)
		}
	}
	if _, err := changeData(sub, "sha256:"+digest); err != nil {
		t.Fatalf("the card's own plan: %v", err)
	}
}

// TestAnswerHints: signed approvals name the CLI command alone, so that it
// runs as pasted (cmd/signoff runs it); the rest say where to answer.
func TestAnswerHints(t *testing.T) {
	t.Parallel()
	for kind, want := range map[string]string{
		card.CandidateApproval: "signoff approve --case " + testCaseID,
		card.ChangeApproval:    "signoff approve --case " + testCaseID,
		card.FixConfirmation:   "the reporter, on their tracking page",
	} {
		if got := AnswerHint(kind, testCaseID); got != want {
			t.Errorf("AnswerHint(%s) = %q, want %q", kind, got, want)
		}
		// The reply to a refused chat answer names the same place.
		if got := answerWhere(kind, testCaseID); !strings.HasSuffix(got, want) && !strings.HasSuffix(got, want+"`") {
			t.Errorf("answerWhere(%s) = %q, want it to end in %q", kind, got, want)
		}
	}
}
