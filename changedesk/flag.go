package changedesk

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/change"
)

// FlagActuator changes a flag of the built-in flag store. Params and
// rollback are both {"value": <new value>}; the value must match the
// flag's type. Writes are compare-and-swap on the flag's version, so a
// write made by anyone between the gate's read and Apply fails the apply.
type FlagActuator struct {
	Flags signoff.FlagService
}

// Kind is change.KindFlag.
func (FlagActuator) Kind() string { return change.KindFlag }

type flagParams struct {
	Value json.RawMessage `json:"value"`
}

// decodeFlagParams reads {"value": X} strictly: exactly one member.
func decodeFlagParams(what string, raw json.RawMessage) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, signoff.Errorf(signoff.EINVALID, "%s of a flag change must be an object {\"value\": ...}", what)
	}
	v, ok := m["value"]
	if !ok || len(m) != 1 {
		return nil, signoff.Errorf(signoff.EINVALID, "%s of a flag change must have exactly one member, value", what)
	}
	c, err := canonical.Transform(v)
	if err != nil {
		return nil, signoff.Errorf(signoff.EINVALID, "%s.value: %v", what, err)
	}
	return c, nil
}

func (a FlagActuator) get(ctx context.Context, sc Scope, t change.Target) (signoff.Flag, error) {
	if t.Kind != change.KindFlag {
		return signoff.Flag{}, signoff.Errorf(signoff.EINVALID, "target %s is not a flag", t)
	}
	return a.Flags.GetFlag(ctx, signoff.SystemActor(sc.WorkspaceID), sc.ProjectID, t.Env, t.Name)
}

// flagContent is what a flag holds, without its version: equal before and
// after a write-and-restore.
func flagContent(f signoff.Flag) (string, error) {
	return canonical.Digest(map[string]any{"project": f.ProjectID, "environment": f.Environment, "key": f.Key, "type": f.Type, "value": f.Value})
}

func flagStateOf(f signoff.Flag) (State, error) {
	d, err := signoff.FlagState(f)
	if err != nil {
		return State{}, err
	}
	c, err := flagContent(f)
	if err != nil {
		return State{}, err
	}
	v, _ := json.Marshal(map[string]any{"type": f.Type, "value": f.Value, "version": f.Version})
	return State{Digest: d, Content: c, Value: v}, nil
}

// Read returns the flag's state.
func (a FlagActuator) Read(ctx context.Context, sc Scope, t change.Target) (State, error) {
	f, err := a.get(ctx, sc, t)
	if err != nil {
		return State{}, err
	}
	return flagStateOf(f)
}

// Draft predicts the flag after one write of params.value: the next
// version holding the new value; the rollback writes the old value back.
func (a FlagActuator) Draft(ctx context.Context, sc Scope, t change.Target, params json.RawMessage) (Draft, error) {
	v, err := decodeFlagParams("params", params)
	if err != nil {
		return Draft{}, err
	}
	f, err := a.get(ctx, sc, t)
	if err != nil {
		return Draft{}, err
	}
	before, err := flagStateOf(f)
	if err != nil {
		return Draft{}, err
	}
	if err := checkFlagValue(f.Type, v); err != nil {
		return Draft{}, err
	}
	next := f
	next.Value, next.Version = v, f.Version+1
	after, err := signoff.FlagState(next)
	if err != nil {
		return Draft{}, err
	}
	rb, err := json.Marshal(flagParams{Value: f.Value})
	if err != nil {
		return Draft{}, err
	}
	return Draft{Before: before, After: after, Rollback: rb}, nil
}

// checkFlagValue refuses a value of another type than the flag's, before a
// plan is drafted around it (the store refuses it again at write time).
func checkFlagValue(typ signoff.FlagType, v json.RawMessage) error {
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return signoff.Errorf(signoff.EINVALID, "value is not JSON")
	}
	ok := false
	switch typ {
	case signoff.FlagBoolean:
		_, ok = x.(bool)
	case signoff.FlagString:
		_, ok = x.(string)
	case signoff.FlagNumber:
		_, ok = x.(float64)
	case signoff.FlagObject:
		_, ok = x.(map[string]any)
	}
	if !ok {
		return signoff.Errorf(signoff.EINVALID, "the flag is of type %s; value %s is not", typ, bytes.TrimSpace(v))
	}
	return nil
}

// Apply writes params.value if the flag is still in state before.
func (a FlagActuator) Apply(ctx context.Context, sc Scope, p change.Plan, before State) (State, error) {
	return a.write(ctx, sc, p, "params", p.Params, before)
}

// Restore writes rollback.value if the flag is still in state current.
func (a FlagActuator) Restore(ctx context.Context, sc Scope, p change.Plan, current State) (State, error) {
	if len(p.Rollback) == 0 || string(p.Rollback) == "null" {
		return State{}, signoff.Errorf(signoff.EINVALID, "the plan has no rollback")
	}
	return a.write(ctx, sc, p, "rollback", p.Rollback, current)
}

func (a FlagActuator) write(ctx context.Context, sc Scope, p change.Plan, what string, raw json.RawMessage, expect State) (State, error) {
	t, err := change.ParseTarget(p.Target)
	if err != nil {
		return State{}, err
	}
	v, err := decodeFlagParams(what, raw)
	if err != nil {
		return State{}, err
	}
	f, err := a.get(ctx, sc, t)
	if err != nil {
		return State{}, err
	}
	cur, err := flagStateOf(f)
	if err != nil {
		return State{}, err
	}
	if cur.Digest != expect.Digest {
		return State{}, &signoff.Error{Code: signoff.ECONFLICT, Message: fmt.Sprintf("flag %s changed (state %s, expected %s): nothing written", t, short(cur.Digest), short(expect.Digest))}
	}
	_, after, err := a.Flags.SetFlag(ctx, signoff.SystemActor(sc.WorkspaceID), signoff.FlagWrite{
		ProjectID: sc.ProjectID, Env: t.Env, Key: t.Name, Value: v, ExpectedVersion: f.Version,
		Reason: fmt.Sprintf("change %s: %s of plan for %s", sc.CaseID, what, t),
	})
	if err != nil {
		return State{}, fmt.Errorf("write flag %s: %w", t, err)
	}
	return flagStateOf(after)
}

func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}
