package change_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/change"
)

func TestParseTarget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want change.Target
		bad  string // a substring of the error, "" for valid
	}{
		{"flag:prod/checkout_v2_new_payment_flow", change.Target{Kind: "flag", Env: "prod", Name: "checkout_v2_new_payment_flow"}, ""},
		{"flag:staging/new-search.v2", change.Target{Kind: "flag", Env: "staging", Name: "new-search.v2"}, ""},
		{"file:VERSION", change.Target{Kind: "file", Name: "VERSION"}, ""},
		{"file:config/app.yaml", change.Target{Kind: "file", Name: "config/app.yaml"}, ""},
		{"file:.github/CODEOWNERS", change.Target{Kind: "file", Name: ".github/CODEOWNERS"}, ""},
		{"runbook:restart-cache", change.Target{Kind: "runbook", Name: "restart-cache"}, ""},

		{"", change.Target{}, "must start with"},
		{"prod/checkout", change.Target{}, "must start with"},
		{"deploy:prod", change.Target{}, "must start with"},
		{"FLAG:prod/x", change.Target{}, "must start with"},
		{"flag:checkout", change.Target{}, "flag:<environment>/<key>"},
		{"flag:/checkout", change.Target{}, "environment must match"},
		{"flag:Prod/checkout", change.Target{}, "environment must match"},
		{"flag:prod/", change.Target{}, "flag key must match"},
		{"flag:prod/..", change.Target{}, "flag key must match"},
		{"flag:_internal/.hidden-flag", change.Target{Kind: "flag", Env: "_internal", Name: ".hidden-flag"}, ""},
		{"flag:" + strings.Repeat("e", 65) + "/k", change.Target{}, "environment must match"},
		{"flag:prod/" + strings.Repeat("k", 129), change.Target{}, "flag key must match"},
		{"flag:prod/a/b", change.Target{}, "flag key must match"},
		{"flag:prod/check out", change.Target{}, "flag key must match"},
		{"file:", change.Target{}, "file path is empty"},
		{"file:/etc/passwd", change.Target{}, "relative"},
		{"file:a//b", change.Target{}, "relative"},
		{"file:a/", change.Target{}, "relative"},
		{"file:../secrets", change.Target{}, ". or .."},
		{"file:a/./b", change.Target{}, ". or .."},
		{"file:.git/config", change.Target{}, ".git"},
		{"file:sub/.GIT/hooks/pre-commit", change.Target{}, ".git"},
		{"file:-rf", change.Target{}, "segment"},
		{`file:a\b`, change.Target{}, "segment"},
		{"file:a b", change.Target{}, "segment"},
		{"file:a\x00b", change.Target{}, "segment"},
		{"runbook:", change.Target{}, "runbook name"},
		{"runbook:Restart", change.Target{}, "runbook name"},
		{"runbook:a/b", change.Target{}, "runbook name"},
		{"file:" + strings.Repeat("a", 300), change.Target{}, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := change.ParseTarget(tt.in)
			if tt.bad == "" {
				if err != nil || got != tt.want {
					t.Fatalf("ParseTarget(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
				}
				if got.String() != tt.in {
					t.Fatalf("String() = %q, want %q", got.String(), tt.in)
				}
				return
			}
			if code := signoff.ErrorCode(err); code != signoff.EINVALID || !strings.Contains(signoff.ErrorMessage(err), tt.bad) {
				t.Fatalf("ParseTarget(%q) = %v (code %s); want EINVALID containing %q", tt.in, err, code, tt.bad)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, target string
		want            bool
	}{
		{"flag:prod/checkout_v2", "flag:prod/checkout_v2", true},
		{"flag:prod/checkout_v2", "flag:prod/checkout_v3", false},
		{"flag:prod/*", "flag:prod/checkout_v2", true},
		{"flag:prod/*", "flag:staging/checkout_v2", false},
		{"flag:*/checkout_*", "flag:staging/checkout_v2", true},
		{"flag:*/checkout_*", "flag:prod/search", false},
		{"flag:*", "flag:prod/x", false}, // '*' stops at '/'
		{"flag:**", "flag:prod/x", true},
		{"file:*", "file:VERSION", true},
		{"file:*", "file:config/app.yaml", false},
		{"file:**", "file:config/app.yaml", true},
		{"file:config/**", "file:config/a/b/c.yaml", true},
		{"file:config/**", "file:configs/a", false},
		{"file:**.yaml", "file:a/b.yaml", true},
		{"file:**.yaml", "file:a/b.yml", false},
		{"runbook:restart-?", "runbook:restart-x", true},
		{"runbook:restart-?", "runbook:restart-xy", false},
		{"file:a?b", "file:a/b", false},
		{"*", "", true},
		{"", "", true},
		{"", "x", false},
		{"file:**/**/**/**/**/**/**/**z", "file:" + strings.Repeat("a/", 100) + "b", false},
	}
	for _, tt := range tests {
		if got := change.Match(tt.pattern, tt.target); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.target, got, tt.want)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"flag:prod/x", "file:a/b.txt", "runbook:r", "file:../x", "flag:a/b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := change.ParseTarget(s)
		if err != nil {
			return
		}
		if got.String() != s {
			t.Fatalf("ParseTarget(%q).String() = %q: a target must have one spelling", s, got.String())
		}
		if !change.Match(s, s) {
			t.Fatalf("a target does not match itself as a pattern: %q", s)
		}
	})
}

func ExampleParseTarget() {
	t, _ := change.ParseTarget("flag:prod/checkout_v2_new_payment_flow")
	fmt.Println(t.Kind, t.Env, t.Name)
	_, err := change.ParseTarget("file:../etc/passwd")
	fmt.Println(err)
	// Output:
	// flag prod checkout_v2_new_payment_flow
	// signoff error: code=invalid message=target "file:../etc/passwd": file path may not contain . or .. segments
}
