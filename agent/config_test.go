package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	reg := NewRegistry(BaseTools()...)
	tests := []struct {
		name, yaml, wantErr string
		check               func(t *testing.T, c Config)
	}{
		{name: "empty keeps defaults", yaml: "", check: func(t *testing.T, c Config) {
			if len(c.Roles) != len(signoff.AgentRoles) || c.Roles["fixer"].Provider != ProviderExternal || c.Roles["fixer"].MaxTurns != DefaultMaxTurns {
				t.Errorf("defaults = %+v", c.Roles["fixer"])
			}
		}},
		{name: "ollama role", yaml: `
roles:
  triager:
    provider: openai
    base_url: http://localhost:11434/v1
    model: llama3.1:8b
    max_turns: 8
    timeout: 90s
    handoffs: [reproducer]
`, check: func(t *testing.T, c Config) {
			rc := c.Roles["triager"]
			if rc.Actor != signoff.RoleTriager || rc.MaxTurns != 8 || rc.Timeout != 90*time.Second || rc.MaxTokens != DefaultMaxTokens {
				t.Errorf("triager = %+v", rc)
			}
		}},
		{name: "finer runtime role", yaml: `
roles:
  investigator:
    actor: triager
    provider: builtin
    tools: [record_note]
`, check: func(t *testing.T, c Config) {
			rc, err := c.ForTask(signoff.Task{Kind: "investigator", Role: signoff.RoleTriager})
			if err != nil || rc.Name != "investigator" {
				t.Errorf("ForTask = %+v, %v", rc, err)
			}
			if _, err := c.ForTask(signoff.Task{Kind: "investigator", Role: signoff.RoleFixer}); err != nil {
				t.Errorf("fixer task falls back to the fixer entry: %v", err)
			}
		}},
		{name: "unknown key", yaml: "roles:\n  triager:\n    provider: builtin\n    max_turn: 3\n", wantErr: "max_turn"},
		{name: "provider required", yaml: "roles:\n  helper:\n    actor: triager\n", wantErr: "provider is required"},
		{name: "unknown provider", yaml: "roles:\n  triager:\n    provider: magic\n", wantErr: "unknown provider"},
		{name: "openai needs url", yaml: "roles:\n  triager:\n    provider: openai\n    model: m\n", wantErr: "base_url"},
		{name: "openai needs model", yaml: "roles:\n  triager:\n    provider: openai\n    base_url: http://x\n", wantErr: "model"},
		{name: "api key env name", yaml: "roles:\n  triager:\n    provider: openai\n    base_url: http://x\n    model: m\n    api_key_env: 'sk-abc def'\n", wantErr: "api_key_env"},
		{name: "unknown tool", yaml: "roles:\n  triager:\n    provider: builtin\n    tools: [approve]\n", wantErr: `unknown tool "approve"`},
		{name: "handoff listed as tool", yaml: "roles:\n  triager:\n    provider: builtin\n    tools: [handoff]\n", wantErr: "given to every role"},
		{name: "handoff target unknown", yaml: "roles:\n  triager:\n    provider: builtin\n    handoffs: [merger]\n", wantErr: "not a configured role"},
		{name: "self handoff", yaml: "roles:\n  triager:\n    provider: builtin\n    handoffs: [triager]\n", wantErr: "itself"},
		{name: "human actor", yaml: "roles:\n  boss:\n    actor: owner\n    provider: builtin\n", wantErr: "not an agent role"},
		{name: "turn bound", yaml: "roles:\n  triager:\n    provider: builtin\n    max_turns: 100\n", wantErr: "max_turns"},
		{name: "negative cost", yaml: "roles:\n  triager:\n    provider: builtin\n    max_cost_usd: -1\n", wantErr: "negative"},
		{name: "output over budget", yaml: "roles:\n  triager:\n    provider: builtin\n    max_tokens: 100\n    max_output_tokens: 200\n", wantErr: "max_output_tokens"},
		{name: "bad name", yaml: "roles:\n  Bad Name:\n    actor: triager\n    provider: builtin\n", wantErr: "name must match"},
		{name: "timeout bound", yaml: "roles:\n  triager:\n    provider: builtin\n    timeout: 10ms\n", wantErr: "timeout"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := ParseConfig([]byte(tc.yaml), reg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || signoff.ErrorCode(err) != signoff.EINVALID {
					t.Fatalf("err = %v, want EINVALID containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestDefaultsValid(t *testing.T) {
	t.Parallel()
	if err := Defaults().Validate(NewRegistry(BaseTools()...)); err != nil {
		t.Fatal(err)
	}
	c := Defaults()
	if !c.CanHandOff("triager", "reproducer") || c.CanHandOff("triager", "fixer") || c.CanHandOff("reviewer", "fixer") {
		t.Error("default handoff graph")
	}
}
