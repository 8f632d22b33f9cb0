package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/signoff-dev/signoff"
)

// Provider names a role may be configured with.
const (
	ProviderOpenAI   = "openai"   // an OpenAI-compatible endpoint
	ProviderBuiltin  = "builtin"  // deterministic Go code, offline
	ProviderAuthored = "authored" // human-written fixtures, labelled authored
	// ProviderExternal means an outside agent (Claude Code, Codex, a team's
	// bot) takes the role's tasks over MCP; no worker here runs them.
	ProviderExternal = "external"
)

// SettingKey is where a workspace keeps its role configuration.
const SettingKey = "agent.roles"

// Defaults for a role that leaves them unset.
const (
	DefaultMaxTurns        = 6
	DefaultMaxTokens       = 60_000
	DefaultMaxOutputTokens = 1_024
	DefaultTimeout         = 60 * time.Second
	maxMaxTurns            = 32
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	InputPerMTok  float64 `yaml:"input_per_mtok" json:"input_per_mtok"`
	OutputPerMTok float64 `yaml:"output_per_mtok" json:"output_per_mtok"`
}

// RoleConfig is one runtime role: who runs it, with which provider and model,
// which tools it may call, whom it may hand off to, and its budgets.
type RoleConfig struct {
	// Name is the role's key in the configuration. Tasks name it as their
	// kind, so a runtime role may be finer than an actor role (the triage
	// crew's intake, investigator, triage and writer all run as triager).
	Name string `yaml:"-" json:"name"`
	// Actor is the agent role whose identity runs this role. It defaults to
	// Name when Name is an agent role.
	Actor signoff.Role `yaml:"actor" json:"actor"`
	// Provider is explicit: there is no fallback to another one.
	Provider string `yaml:"provider" json:"provider"`
	Model    string `yaml:"model" json:"model,omitempty"`
	// BaseURL and APIKeyEnv configure the openai provider. The key itself
	// never appears in configuration, only the variable that holds it.
	BaseURL   string `yaml:"base_url" json:"base_url,omitempty"`
	APIKeyEnv string `yaml:"api_key_env" json:"api_key_env,omitempty"`
	// Instructions are the role's system prompt.
	Instructions string   `yaml:"instructions" json:"instructions,omitempty"`
	Tools        []string `yaml:"tools" json:"tools"`
	Handoffs     []string `yaml:"handoffs" json:"handoffs"`
	MaxTurns     int      `yaml:"max_turns" json:"max_turns"`
	// MaxTokens bounds prompt plus completion tokens over the whole task;
	// MaxCostUSD bounds its cost (0: no cost bound).
	MaxTokens       int64   `yaml:"max_tokens" json:"max_tokens"`
	MaxCostUSD      float64 `yaml:"max_cost_usd" json:"max_cost_usd"`
	MaxOutputTokens int     `yaml:"max_output_tokens" json:"max_output_tokens"`
	Price           Price   `yaml:"price" json:"price"`
	// Timeout bounds one model call.
	Timeout     time.Duration `yaml:"timeout" json:"timeout"`
	Temperature *float64      `yaml:"temperature" json:"temperature,omitempty"`
}

// Config is a workspace's role configuration.
type Config struct {
	Roles map[string]RoleConfig `yaml:"roles" json:"roles"`
}

// commonTools every role has unless its configuration lists tools itself.
var commonTools = []string{"get_task", "post_message", "record_note"}

// defaultHandoffs is the built-in flow between the actor roles.
var defaultHandoffs = map[signoff.Role][]string{
	signoff.RoleConcierge:  {"triager"},
	signoff.RoleTriager:    {"reproducer"},
	signoff.RoleReproducer: {"fixer"},
	signoff.RoleFixer:      {"reviewer"},
	signoff.RolePlanner:    {"reviewer"},
}

// Defaults is the configuration a workspace has before it sets its own:
// every agent role is taken by an external agent over MCP. Deterministic
// builtin roles are added by the capabilities that ship them.
func Defaults() Config {
	c := Config{Roles: map[string]RoleConfig{}}
	for _, r := range signoff.AgentRoles {
		rc := RoleConfig{Name: string(r), Actor: r, Provider: ProviderExternal,
			Tools: slices.Clone(commonTools), Handoffs: slices.Clone(defaultHandoffs[r])}
		c.Roles[string(r)] = rc.withDefaults()
	}
	return c
}

func (rc RoleConfig) withDefaults() RoleConfig {
	if rc.Actor == "" && signoff.Role(rc.Name).IsAgent() {
		rc.Actor = signoff.Role(rc.Name)
	}
	if rc.MaxTurns == 0 {
		rc.MaxTurns = DefaultMaxTurns
	}
	if rc.MaxTokens == 0 {
		rc.MaxTokens = DefaultMaxTokens
	}
	if rc.MaxOutputTokens == 0 {
		rc.MaxOutputTokens = DefaultMaxOutputTokens
	}
	if rc.Timeout == 0 {
		rc.Timeout = DefaultTimeout
	}
	if rc.Tools == nil {
		rc.Tools = slices.Clone(commonTools)
	}
	if rc.Handoffs == nil {
		rc.Handoffs = []string{}
	}
	return rc
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,63}$`)

// ParseConfig reads a YAML role configuration, fills defaults and checks it
// against the tools that exist. Roles it does not name keep their built-in
// defaults (tools.Defaults()). Unknown keys are errors, so a typo cannot silently drop a limit.
func ParseConfig(b []byte, tools *Registry) (Config, error) {
	var raw Config
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, signoff.Errorf(signoff.EINVALID, "role configuration: %s", yamlMessage(err))
	}
	c := tools.Defaults()
	for name, rc := range raw.Roles {
		rc.Name = name
		c.Roles[name] = rc.withDefaults()
	}
	if err := c.Validate(tools); err != nil {
		return Config{}, err
	}
	return c, nil
}

func yamlMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// Validate checks every role: a known actor role, an explicit provider with
// what it needs, tools that exist, handoffs to roles that exist, and sane
// budgets.
func (c Config) Validate(tools *Registry) error {
	for _, name := range slices.Sorted(maps.Keys(c.Roles)) {
		if err := c.Roles[name].validate(c, tools); err != nil {
			return signoff.Errorf(signoff.EINVALID, "role %q: %s", name, err)
		}
	}
	return nil
}

func (rc RoleConfig) validate(c Config, tools *Registry) error {
	switch {
	case !nameRE.MatchString(rc.Name):
		return fmt.Errorf("name must match %s", nameRE)
	case !rc.Actor.IsAgent():
		return fmt.Errorf("actor %q is not an agent role (one of %v)", rc.Actor, signoff.AgentRoles)
	case rc.MaxTurns < 1 || rc.MaxTurns > maxMaxTurns:
		return fmt.Errorf("max_turns must be 1..%d", maxMaxTurns)
	case rc.MaxTokens < 1:
		return fmt.Errorf("max_tokens must be positive")
	case rc.MaxOutputTokens < 1 || int64(rc.MaxOutputTokens) > rc.MaxTokens:
		return fmt.Errorf("max_output_tokens must be positive and at most max_tokens")
	case rc.MaxCostUSD < 0 || rc.Price.InputPerMTok < 0 || rc.Price.OutputPerMTok < 0:
		return fmt.Errorf("costs and prices must not be negative")
	case rc.Timeout < time.Second || rc.Timeout > 30*time.Minute:
		return fmt.Errorf("timeout must be between 1s and 30m")
	}
	switch rc.Provider {
	case ProviderOpenAI:
		u, err := url.Parse(rc.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("provider openai needs base_url, an http(s) URL")
		}
		if rc.Model == "" {
			return fmt.Errorf("provider openai needs a model")
		}
		if rc.APIKeyEnv != "" && !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(rc.APIKeyEnv) {
			return fmt.Errorf("api_key_env must name an environment variable")
		}
	case ProviderBuiltin, ProviderAuthored, ProviderExternal:
	case "":
		return fmt.Errorf("provider is required (openai, builtin, authored or external)")
	default:
		return fmt.Errorf("unknown provider %q (openai, builtin, authored or external)", rc.Provider)
	}
	for _, t := range rc.Tools {
		if t == HandoffTool || t == GiveUpTool {
			return fmt.Errorf("tool %q is given to every role; do not list it", t)
		}
		if tools != nil && tools.Get(t) == nil {
			return fmt.Errorf("unknown tool %q", t)
		}
	}
	for _, h := range rc.Handoffs {
		if _, ok := c.Roles[h]; !ok {
			return fmt.Errorf("handoff target %q is not a configured role", h)
		}
		if h == rc.Name {
			return fmt.Errorf("a role cannot hand off to itself")
		}
	}
	return nil
}

// ForTask returns the configuration of the role a task runs as: the role
// named by its kind when that role runs as the task's actor role, else the
// actor role's own entry.
func (c Config) ForTask(t signoff.Task) (RoleConfig, error) {
	if rc, ok := c.Roles[t.Kind]; ok && rc.Actor == t.Role {
		return rc, nil
	}
	if rc, ok := c.Roles[string(t.Role)]; ok && rc.Actor == t.Role {
		return rc, nil
	}
	return RoleConfig{}, signoff.Errorf(signoff.ENOTFOUND, "no role configured for task kind %q as %s", t.Kind, t.Role)
}

// CanHandOff reports whether role from may hand off to role to.
func (c Config) CanHandOff(from, to string) bool {
	rc, ok := c.Roles[from]
	return ok && slices.Contains(rc.Handoffs, to)
}

// Marshal renders the configuration as YAML, for `signoff roles show`.
func (c Config) Marshal() ([]byte, error) {
	return yaml.Marshal(c)
}
