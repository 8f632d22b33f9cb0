package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/airlock"
)

// Names of the tools the runtime itself provides to every role.
const (
	HandoffTool = "handoff"
	GiveUpTool  = "give_up"
)

// Env is what a tool handler may use: the task it serves, the identity it
// acts as, and the store. Handlers act as the agent, never as a person, so
// the store's own role checks apply to everything they do.
type Env struct {
	Task   signoff.Task
	Actor  signoff.Actor
	Role   RoleConfig
	Store  signoff.Store
	Config Config
	// Evidence is the evidence type of the provider driving this run; a
	// recorded result carries it.
	Evidence string
}

// Result is what a tool answers. Text goes back to the model. A non-nil
// Output records the task's result (record_* tools); Next names the role the
// model should hand off to next, when the tool knows it.
type Result struct {
	Text   string
	Output any
	Next   string
	// Final ends the task as done even when the role could hand off.
	Final bool
	// Park ends the run without finishing the task: it waits, open, for a
	// person (a human gate) and is run again once they have answered. The
	// worker is released meanwhile.
	Park bool
	// Quotes are the public-derived texts the answer shows the model: a
	// ticket's title, an earlier report, a reporter's answer, a search hit.
	// Text holds only the server's own words (refusals, ids, scores,
	// labels, next steps) and names each quote by its Ref; the model
	// reads the quotes after Text, each inside its own spotlighted block
	// (see RenderResult). Add them with Quote.
	Quotes []Quote
}

// Quote is one public-derived text in a tool's answer. Ref and What are
// the server's words (what the quote is, e.g. "title of ticket ORB-12");
// Text comes from outside and reaches a model only through the airlock.
type Quote struct {
	Ref  string `json:"ref"`
	What string `json:"what"`
	Text string `json:"text"`
}

// Quote adds text, described by what, to the result's quotes and returns
// the name Text should use for it ("U1", "U2", ...). Empty text adds
// nothing and returns "".
func (r *Result) Quote(what, text string) string {
	if strings.TrimSpace(text) == "" {
		return ""
	}
	ref := fmt.Sprintf("U%d", len(r.Quotes)+1)
	r.Quotes = append(r.Quotes, Quote{Ref: ref, What: what, Text: text})
	return ref
}

// RenderResult is the answer a model reads for a tool result: the
// server's text as it is, then every quote in a block of its own, behind
// the airlock (normalized, redacted, signals named, datamarked, fresh
// boundary). Server-made text stays outside the blocks, so a model (and a
// builtin policy) can read it as the server's word.
func RenderResult(r Result) string {
	return r.Text + renderQuotes(r.Quotes)
}

func renderQuotes(qs []Quote) string {
	if len(qs) == 0 {
		return ""
	}
	aq := make([]airlock.Quote, len(qs))
	for i, q := range qs {
		aq[i] = airlock.Quote{Ref: q.Ref, What: q.What, Dossier: airlock.Sanitize(q.Text)}
	}
	return "\n\n" + airlock.SpotlightQuotes(aq)
}

// QuotedRefusal is a refusal (err is a signoff error) whose explanation
// needs public-derived or run-derived text: a test's output, a build
// error, a reporter's words. The model reads the refusal's message as the
// server's, then the quotes in their blocks.
type QuotedRefusal struct {
	Err    error
	Quotes []Quote
}

func (e *QuotedRefusal) Error() string { return e.Err.Error() }
func (e *QuotedRefusal) Unwrap() error { return e.Err }

// Refuse returns err with text quoted after its message, described by
// what; the message should name the quote ("see U1 below").
func Refuse(err error, what, text string) error {
	var r Result
	r.Quote(what, text)
	return &QuotedRefusal{Err: err, Quotes: r.Quotes}
}

// ServerPart is the part of a rendered tool answer the server wrote: what
// comes before its quoted public text. A reader that acts on an answer
// (a builtin policy looking for its next step) reads only this part.
func ServerPart(answer string) string {
	if i := strings.Index(answer, "\n\n"+airlock.QuotesHeader); i >= 0 {
		return answer[:i]
	}
	return answer
}

// OutcomeParked is a run's outcome when a tool parked the task at a human
// gate. The task stays open; it is not a task outcome.
const OutcomeParked = "parked"

// Tool is one capability offered to a model, with the JSON schema its
// arguments must satisfy.
type Tool struct {
	Name        string
	Description string
	schema      *jsonschema.Schema
	resolved    *jsonschema.Resolved
	params      json.RawMessage
	run         func(ctx context.Context, env *Env, args json.RawMessage) (Result, error)
}

// NewTool builds a tool whose arguments are In. The schema is inferred from
// In's fields (json names, `jsonschema:"..."` descriptions); every field
// without omitempty is required and unknown properties are refused.
func NewTool[In any](name, description string, fn func(ctx context.Context, env *Env, in In) (Result, error)) *Tool {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("agent: schema for tool %s: %v", name, err))
	}
	return newTool(name, description, s, func(ctx context.Context, env *Env, args json.RawMessage) (Result, error) {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return Result{}, signoff.Errorf(signoff.EINVALID, "arguments: %v", err)
		}
		return fn(ctx, env, in)
	})
}

// NewToolWithSchema builds a tool over a schema of its own, for enums and
// bounds the inferred schema cannot express.
func NewToolWithSchema[In any](name, description string, s *jsonschema.Schema, fn func(ctx context.Context, env *Env, in In) (Result, error)) *Tool {
	return newTool(name, description, s, func(ctx context.Context, env *Env, args json.RawMessage) (Result, error) {
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return Result{}, signoff.Errorf(signoff.EINVALID, "arguments: %v", err)
		}
		return fn(ctx, env, in)
	})
}

func newTool(name, description string, s *jsonschema.Schema, run func(context.Context, *Env, json.RawMessage) (Result, error)) *Tool {
	r, err := s.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("agent: resolve schema for tool %s: %v", name, err))
	}
	params, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("agent: marshal schema for tool %s: %v", name, err))
	}
	return &Tool{Name: name, Description: description, schema: s, resolved: r, params: params, run: run}
}

// Spec is what the model is told about the tool.
func (t *Tool) Spec() ToolSpec {
	return ToolSpec{Name: t.Name, Description: t.Description, Parameters: t.params}
}

// Schema returns the tool's argument schema.
func (t *Tool) Schema() *jsonschema.Schema { return t.schema }

// Prepare turns a model's raw argument text into arguments that satisfy the
// schema, or explains why it cannot. Coercions applied on the way are
// returned so the transcript shows them.
func (t *Tool) Prepare(raw string) (json.RawMessage, []string, error) {
	v, notes, err := Coerce(t.schema, raw)
	if err != nil {
		return nil, notes, err
	}
	if err := t.resolved.Validate(v); err != nil {
		return nil, notes, fmt.Errorf("%s", cleanValidation(err))
	}
	b, err := json.Marshal(v)
	return b, notes, err
}

// cleanValidation shortens the validator's message to what a model can act
// on.
func cleanValidation(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "validating root: ")
	msg = strings.ReplaceAll(msg, "validating /properties/", "field ")
	return msg
}

// Call runs the tool on prepared arguments.
func (t *Tool) Call(ctx context.Context, env *Env, args json.RawMessage) (Result, error) {
	return t.run(ctx, env, args)
}

// Registry holds the tools a runtime can offer. It is safe for concurrent
// use; capabilities register their tools at start-up.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*Tool
	roles []RoleConfig
}

// AddDefaultRoles adds runtime roles a capability ships with to the
// built-in defaults (a workspace's own configuration still overrides
// them).
func (r *Registry) AddDefaultRoles(rcs ...RoleConfig) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.roles = append(r.roles, rcs...)
}

// Defaults is the configuration before a workspace sets its own: one
// external role per agent role, plus the roles capabilities added.
func (r *Registry) Defaults() Config {
	c := Defaults()
	if r == nil {
		return c
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, rc := range r.roles {
		c.Roles[rc.Name] = rc.withDefaults()
	}
	return c
}

// NewRegistry returns a registry holding tools.
func NewRegistry(tools ...*Tool) *Registry {
	r := &Registry{tools: map[string]*Tool{}}
	for _, t := range tools {
		r.Register(t)
	}
	return r
}

// Register adds a tool; a second tool of the same name is a programming
// error.
func (r *Registry) Register(t *Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[t.Name]; dup {
		panic("agent: tool registered twice: " + t.Name)
	}
	r.tools[t.Name] = t
}

// Get returns the named tool or nil.
func (r *Registry) Get(name string) *Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tools[name]
}

// Names lists the registered tools in order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Sorted(maps.Keys(r.tools))
}
