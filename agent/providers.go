package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/signoff-dev/signoff"
)

// Unmetered is implemented by providers that run no model and so consume
// no tokens (builtin code, fixtures). A provider that does not implement it
// and reports no usage has its usage estimated: a model is never free.
type Unmetered interface{ Unmetered() bool }

// Policy is a deterministic implementation of one role's decisions: given
// the conversation so far (the task input and earlier tool results), it
// answers with the next tool calls, exactly as a model would, so its calls
// pass the same schema guards and leave the same transcripts.
type Policy func(ctx context.Context, req Request) (Response, error)

// Builtin holds the roles that have deterministic Go implementations. Its
// outputs are live evidence: the code really ran here.
type Builtin struct {
	mu       sync.RWMutex
	policies map[string]Policy
}

// NewBuiltin returns an empty set of builtin policies.
func NewBuiltin() *Builtin { return &Builtin{policies: map[string]Policy{}} }

// Register sets the policy for a runtime role.
func (b *Builtin) Register(role string, p Policy) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.policies[role] = p
}

// Roles lists the roles with a builtin implementation.
func (b *Builtin) Roles() []string {
	b.mu.RLock()
	defer b.mu.RUnlock()
	var out []string
	for r := range b.policies {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// For returns the provider for role. A role without a builtin
// implementation is an error, never a fallback to something else.
func (b *Builtin) For(role string) (Provider, error) {
	b.mu.RLock()
	p, ok := b.policies[role]
	b.mu.RUnlock()
	if !ok {
		return nil, signoff.Errorf(signoff.EINVALID, "no builtin implementation for role %q (have: %s)", role, strings.Join(b.Roles(), ", "))
	}
	return builtinProvider{p}, nil
}

type builtinProvider struct{ p Policy }

func (builtinProvider) Name() string     { return ProviderBuiltin }
func (builtinProvider) Evidence() string { return signoff.EvidenceLive }
func (builtinProvider) Unmetered() bool  { return true }
func (b builtinProvider) Complete(ctx context.Context, req Request) (Response, error) {
	return b.p(ctx, req)
}

// Fixture is a human-written script for one known task: the assistant
// messages to answer with, turn by turn. Match selects the tasks it is for:
// each key is a JSON pointer into the task input and the value must equal
// the string found there.
type Fixture struct {
	Name  string            `json:"name"`
	Role  string            `json:"role"`
	Match map[string]string `json:"match"`
	Turns []Message         `json:"turns"`
}

// Authored answers from fixtures and labels everything it produces
// authored: it is never presented as a model's work.
type Authored struct {
	fixtures []Fixture
}

// LoadAuthored reads every *.json fixture under dir of fsys.
func LoadAuthored(fsys fs.FS, dir string) (*Authored, error) {
	a := &Authored{}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".json" {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		var f Fixture
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return fmt.Errorf("fixture %s: %w", p, err)
		}
		if f.Role == "" || len(f.Turns) == 0 {
			return fmt.Errorf("fixture %s: role and turns are required", p)
		}
		if f.Name == "" {
			f.Name = p
		}
		a.fixtures = append(a.fixtures, f)
		return nil
	})
	return a, err
}

// NewAuthored holds the given fixtures.
func NewAuthored(fixtures ...Fixture) *Authored { return &Authored{fixtures: fixtures} }

// For returns the authored provider for role.
func (a *Authored) For(role string) (Provider, error) {
	return authoredProvider{a: a, role: role}, nil
}

type authoredProvider struct {
	a    *Authored
	role string
}

func (authoredProvider) Name() string     { return ProviderAuthored }
func (authoredProvider) Evidence() string { return signoff.EvidenceAuthored }
func (authoredProvider) Unmetered() bool  { return true }

func (p authoredProvider) Complete(ctx context.Context, req Request) (Response, error) {
	f, err := p.a.match(p.role, req.Task.Input)
	if err != nil {
		return Response{}, err
	}
	turn := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			turn++
		}
	}
	if turn >= len(f.Turns) {
		return Response{}, signoff.Errorf(signoff.ECONFLICT, "authored fixture %s has no turn %d", f.Name, turn+1)
	}
	msg := f.Turns[turn]
	msg.Role = "assistant"
	return Response{Message: msg, FinishReason: "authored"}, nil
}

func (a *Authored) match(role string, input json.RawMessage) (Fixture, error) {
	var doc any
	if err := json.Unmarshal(input, &doc); err != nil {
		return Fixture{}, fmt.Errorf("task input: %w", err)
	}
	for _, f := range a.fixtures {
		if f.Role != role {
			continue
		}
		ok := true
		for ptr, want := range f.Match {
			if got, found := pointer(doc, ptr); !found || fmt.Sprint(got) != want {
				ok = false
				break
			}
		}
		if ok {
			return f, nil
		}
	}
	return Fixture{}, signoff.Errorf(signoff.ENOTFOUND, "no authored fixture for role %s matches this task", role)
}

// pointer resolves an RFC 6901 JSON pointer in a decoded document.
func pointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			var i int
			if _, err := fmt.Sscanf(tok, "%d", &i); err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// Factory builds providers for roles from the three kinds this package and
// its callers know. OpenAI is set by the caller (package openai implements
// it); a nil entry makes that provider unavailable, with an error saying
// so.
type Factory struct {
	Builtin  *Builtin
	Authored *Authored
	OpenAI   func(rc RoleConfig) (Provider, error)
	// Record, when set, records every exchange of every provider Make
	// returns except builtin code (which runs again, deterministically).
	Record *Recorder
	// Replay, when set, answers every role whose provider is openai or
	// authored from the transcript instead (evidence replayed, or authored
	// for authored roles); builtin and external roles are unchanged.
	Replay *Replay
}

// Make implements ProviderFactory.
func (f Factory) Make(rc RoleConfig) (Provider, error) {
	p, err := f.make(rc)
	if err != nil {
		return nil, err
	}
	if f.Record != nil && rc.Provider != ProviderBuiltin {
		p = f.Record.Wrap(rc, p)
	}
	return p, nil
}

func (f Factory) make(rc RoleConfig) (Provider, error) {
	if f.Replay != nil && (rc.Provider == ProviderOpenAI || rc.Provider == ProviderAuthored) {
		return f.Replay.For(rc)
	}
	switch rc.Provider {
	case ProviderBuiltin:
		if f.Builtin == nil {
			return nil, signoff.Errorf(signoff.EUNAVAILABLE, "builtin provider not available")
		}
		return f.Builtin.For(rc.Name)
	case ProviderAuthored:
		if f.Authored == nil {
			return nil, signoff.Errorf(signoff.EUNAVAILABLE, "no authored fixtures loaded")
		}
		return f.Authored.For(rc.Name)
	case ProviderOpenAI:
		if f.OpenAI == nil {
			return nil, signoff.Errorf(signoff.EUNAVAILABLE, "openai provider not available")
		}
		return f.OpenAI(rc)
	case ProviderExternal:
		return nil, signoff.Errorf(signoff.ECONFLICT, "role %s is served by an external agent over MCP", rc.Name)
	}
	return nil, signoff.Errorf(signoff.EINVALID, "unknown provider %q", rc.Provider)
}
