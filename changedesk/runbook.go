package changedesk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/canonical"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/sandbox"
)

// Bounds of a runbook run.
const (
	MaxRunbookArgs   = 32
	MaxRunbookEnv    = 32
	maxRunbookArgLen = 4 << 10
	// MaxRunbookScript bounds the script a runbook may be.
	MaxRunbookScript = 256 << 10
	// DefaultRunbookTimeout bounds one run (wall and CPU time).
	DefaultRunbookTimeout = 60 * time.Second
	// runbookOutput bounds each of stdout and stderr: past it the run is
	// killed. The state keeps only the tails.
	runbookOutput = 1 << 20
	runbookTail   = 4 << 10
	runbookMemory = 512 << 20
	runbookProcs  = 256
	// RunbookDir is where a project's runbooks live in its repository.
	RunbookDir = "runbooks"
	// runbookMount is where the script is shown inside the sandbox.
	runbookMount = "/runbook"
)

var runbookEnvRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// runbookFixedEnv are the variables Signoff sets for every run, and
// runbookLoaderEnv those that make the shell or the dynamic loader run
// something other than the script people read: a plan may set neither,
// so what runs is the script in the repository with its arguments, not
// whatever a PATH, BASH_ENV or LD_PRELOAD in the params points at.
var (
	runbookFixedEnv  = []string{"PATH", "HOME", "LANG"}
	runbookLoaderEnv = []string{"BASH_ENV", "ENV", "IFS", "CDPATH", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "GLOBIGNORE",
		"GCONV_PATH", "HOSTALIASES", "LOCPATH", "NLSPATH", "MALLOC_CHECK_", "TMPDIR", "PYTHONPATH", "PYTHONSTARTUP", "PERL5LIB", "PERL5OPT",
		"RUBYLIB", "RUBYOPT", "NODE_OPTIONS", "NODE_PATH"}
)

// reservedRunbookEnv says why a plan may not set name, or "".
func reservedRunbookEnv(name string) string {
	switch {
	case strings.HasPrefix(name, "SIGNOFF_"):
		return "SIGNOFF_ variables are set by Signoff"
	case slices.Contains(runbookFixedEnv, name):
		return "Signoff sets it for every run"
	case strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "BASH_FUNC_") || slices.Contains(runbookLoaderEnv, name):
		return "it changes what the shell or the loader runs, not only the script's input"
	}
	return ""
}

// ErrRunbookFailed is wrapped (together with an EUNAVAILABLE
// *signoff.Error) by Apply and Restore when the script ran but did not
// succeed: a non-zero exit, a signal or a limit. The state returned with
// it shows how the run ended.
var ErrRunbookFailed = errors.New("runbook failed")

// RunbookActuator runs an allowlisted script of the project's repository
// ("runbook:<name>"): runbooks/<name>, or else runbooks/<name>.sh, at the
// head of the main branch, as `sh <script> args...` in the sandbox.
//
// Only the script runs, not the repository: the run sees a copy of exactly
// the bytes whose digest was approved, read-only at /runbook, with /tmp
// (also the working directory) as its only writable place, so nothing the
// digest does not cover (a helper the script sources, say) can change what
// runs. Its environment is PATH, HOME=/tmp, LANG=C.UTF-8,
// SIGNOFF_RUNBOOK, SIGNOFF_CASE_ID and the params' env, nothing else.
//
// Params are {"args": [string, ...], "env": {"NAME": "value"}, "network":
// bool}, every member optional: at most MaxRunbookArgs args and
// MaxRunbookEnv variables named [A-Z_][A-Z0-9_]* (SIGNOFF_* is reserved).
// Network is used only when params ask for it: the desk has checked that
// the policy grants it.
//
// A runbook promises no state: its state digest (State.Digest and
// State.Content) is the canonical digest of {kind: "runbook", name,
// sha256} of the script, so Draft's Before and After are equal and the
// gate's drift check is a check that the script is still the approved
// one.
//
// A rollback is optional and names a compensating run:
// {"runbook": "<name, default the plan's>", "args": [...], "env": {...},
// "network": bool}.
type RunbookActuator struct {
	Repo RepoFunc
	// Runner runs scripts without network (sandbox.Default()). Nil
	// makes every run EUNAVAILABLE.
	Runner sandbox.Runner
	// NetworkRunner runs the scripts whose params ask for network. The
	// sandbox package has no backend with network yet, so it is nil
	// unless the server wires one, and such runs are then EUNAVAILABLE
	// (fail closed) rather than run unisolated or without what they need.
	NetworkRunner sandbox.Runner
	// Allowed, when set, is asked before Restore runs a rollback: whether
	// the policy allowlists runbook name (and grants it network). Without
	// it Restore runs only the plan's own runbook, with network only if
	// the plan's params asked for it (what the review checked).
	Allowed func(ctx context.Context, sc Scope, name string, network bool) error
	// Timeout bounds a run (default DefaultRunbookTimeout).
	Timeout time.Duration
}

var _ Actuator = (*RunbookActuator)(nil)

// Kind is change.KindRunbook.
func (a *RunbookActuator) Kind() string { return change.KindRunbook }

// Read returns the runbook's script digest at the head of the main
// branch. Returns ENOTFOUND when the project has no such runbook, EINVALID
// when it is a symbolic link (or under one) or not a regular file.
func (a *RunbookActuator) Read(ctx context.Context, sc Scope, t change.Target) (State, error) {
	name, err := runbookName(t)
	if err != nil {
		return State{}, err
	}
	s, err := a.script(ctx, sc, name)
	if err != nil {
		return State{}, err
	}
	return s.state()
}

// Draft checks params and returns Before = the live script digest, After
// equal to it and no rollback: a runbook has no general inverse, so a
// compensating run is the caller's to add to the plan. Params asking for
// network are EUNAVAILABLE without a NetworkRunner.
func (a *RunbookActuator) Draft(ctx context.Context, sc Scope, t change.Target, params json.RawMessage) (Draft, error) {
	name, err := runbookName(t)
	if err != nil {
		return Draft{}, err
	}
	call, err := parseRunbookCall("params", params, name, false)
	if err != nil {
		return Draft{}, err
	}
	if call.Network && a.NetworkRunner == nil {
		// Better refused now than approved and then never runnable.
		return Draft{}, signoff.Errorf(signoff.EUNAVAILABLE, "runbook %s asks for the network, and this server has no sandbox with network", name)
	}
	s, err := a.script(ctx, sc, name)
	if err != nil {
		return Draft{}, err
	}
	st, err := s.state()
	if err != nil {
		return Draft{}, err
	}
	return Draft{Before: st, After: st.Digest}, nil
}

// Apply runs the runbook with p.Params if its script is still the one in
// before (ECONFLICT otherwise, nothing run). It returns the state with
// Value {"exit", "stdout_tail", "stderr_tail", "duration_ms", ...}; a run
// that did not succeed returns that state and an error wrapping
// ErrRunbookFailed (code EUNAVAILABLE).
func (a *RunbookActuator) Apply(ctx context.Context, sc Scope, p change.Plan, before State) (State, error) {
	name, err := planRunbookName(p)
	if err != nil {
		return State{}, err
	}
	call, err := parseRunbookCall("params", p.Params, name, false)
	if err != nil {
		return State{}, err
	}
	s, err := a.script(ctx, sc, name)
	if err != nil {
		return State{}, err
	}
	st, err := s.state()
	if err != nil {
		return State{}, err
	}
	if st.Digest != before.Digest {
		return st, signoff.Errorf(signoff.ECONFLICT, "runbook %s changed since it was approved (script %s, approved %s): nothing was run",
			name, shortDigest(st.Digest), shortDigest(before.Digest))
	}
	return a.run(ctx, sc, st, s, call)
}

// Restore runs the plan's rollback, a compensating run, and returns the
// state of the plan's target with the run's outcome. Returns EINVALID when
// the plan has none ("this runbook has no rollback"), EFORBIDDEN when the
// rollback is not allowed (see Allowed), ECONFLICT when the plan's script
// is no longer in state current, and the same run failures as Apply.
func (a *RunbookActuator) Restore(ctx context.Context, sc Scope, p change.Plan, current State) (State, error) {
	name, err := planRunbookName(p)
	if err != nil {
		return State{}, err
	}
	if isNullJSON(p.Rollback) {
		return State{}, signoff.Errorf(signoff.EINVALID, "this runbook has no rollback")
	}
	call, err := parseRunbookCall("rollback", p.Rollback, name, true)
	if err != nil {
		return State{}, err
	}
	planCall, err := parseRunbookCall("params", p.Params, name, false)
	if err != nil {
		return State{}, err
	}
	if a.Allowed != nil {
		if err := a.Allowed(ctx, sc, call.Name, call.Network); err != nil {
			return State{}, err
		}
	} else if call.Name != name || call.Network && !planCall.Network {
		return State{}, signoff.Errorf(signoff.EFORBIDDEN, "the rollback of runbook %s runs %s (network %t), which no policy check has allowed", name, call.Name, call.Network)
	}
	s, err := a.script(ctx, sc, name)
	if err != nil {
		return State{}, err
	}
	st, err := s.state()
	if err != nil {
		return State{}, err
	}
	if current.Digest != "" && st.Digest != current.Digest {
		return st, signoff.Errorf(signoff.ECONFLICT, "runbook %s changed (script %s, expected %s): its rollback was not run",
			name, shortDigest(st.Digest), shortDigest(current.Digest))
	}
	rs := s
	if call.Name != name {
		if rs, err = a.script(ctx, sc, call.Name); err != nil {
			return st, err
		}
	}
	return a.run(ctx, sc, st, rs, call)
}

// RunbookCall is one run of a runbook: a plan's params, or its rollback.
type RunbookCall struct {
	Name    string            `json:"runbook"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	Network bool              `json:"network"`
}

// ParseRunbookRollback reads a runbook plan's rollback as Restore will
// run it, so the service can check the policy for it (the runbook it names
// and whether it asks for network). planRunbook is the plan's runbook,
// the default. A null rollback is EINVALID.
func ParseRunbookRollback(rollback json.RawMessage, planRunbook string) (RunbookCall, error) {
	if isNullJSON(rollback) {
		return RunbookCall{}, signoff.Errorf(signoff.EINVALID, "this runbook has no rollback")
	}
	return parseRunbookCall("rollback", rollback, planRunbook, true)
}

// parseRunbookCall reads params (or, withName, a rollback that may name
// another runbook) strictly.
func parseRunbookCall(what string, raw json.RawMessage, name string, withName bool) (RunbookCall, error) {
	call := RunbookCall{Name: name}
	if isNullJSON(raw) && !withName {
		return call, nil // no params: no args, no env, no network
	}
	m, err := strictObject(what, raw)
	if err != nil {
		return call, err
	}
	for k, v := range m {
		switch k {
		case "runbook":
			if !withName {
				return call, signoff.Errorf(signoff.EINVALID, "%s.runbook: the plan's target names the runbook", what)
			}
			if err := json.Unmarshal(v, &call.Name); err != nil {
				return call, signoff.Errorf(signoff.EINVALID, "%s.runbook must be a runbook name", what)
			}
			if _, err := change.ParseTarget(change.KindRunbook + ":" + call.Name); err != nil {
				return call, signoff.Errorf(signoff.EINVALID, "%s.runbook: %s", what, signoff.ErrorMessage(err))
			}
		case "args":
			if err := json.Unmarshal(v, &call.Args); err != nil {
				return call, signoff.Errorf(signoff.EINVALID, "%s.args must be an array of strings", what)
			}
			if len(call.Args) > MaxRunbookArgs {
				return call, signoff.Errorf(signoff.EINVALID, "%s.args has %d arguments, at most %d", what, len(call.Args), MaxRunbookArgs)
			}
			for i, a := range call.Args {
				if len(a) > maxRunbookArgLen || strings.ContainsRune(a, 0) {
					return call, signoff.Errorf(signoff.EINVALID, "%s.args[%d] must be at most %d bytes without NUL", what, i, maxRunbookArgLen)
				}
			}
		case "env":
			if err := json.Unmarshal(v, &call.Env); err != nil {
				return call, signoff.Errorf(signoff.EINVALID, "%s.env must be an object of strings", what)
			}
			if len(call.Env) > MaxRunbookEnv {
				return call, signoff.Errorf(signoff.EINVALID, "%s.env has %d variables, at most %d", what, len(call.Env), MaxRunbookEnv)
			}
			for k, v := range call.Env {
				switch {
				case !runbookEnvRE.MatchString(k) || len(k) > 128:
					return call, signoff.Errorf(signoff.EINVALID, "%s.env name %q must match %s", what, k, runbookEnvRE)
				case reservedRunbookEnv(k) != "":
					return call, signoff.Errorf(signoff.EINVALID, "%s.env name %s is reserved: %s", what, k, reservedRunbookEnv(k))
				case len(v) > maxRunbookArgLen || strings.ContainsRune(v, 0):
					return call, signoff.Errorf(signoff.EINVALID, "%s.env %s must be at most %d bytes without NUL", what, k, maxRunbookArgLen)
				}
			}
		case "network":
			if err := json.Unmarshal(v, &call.Network); err != nil || string(bytes.TrimSpace(v)) == "null" {
				return call, signoff.Errorf(signoff.EINVALID, "%s.network must be true or false", what)
			}
		default:
			return call, signoff.Errorf(signoff.EINVALID, "%s.%s: a runbook takes only args, env and network", what, k)
		}
	}
	return call, nil
}

// runbookScript is a runbook's script as one commit has it.
type runbookScript struct {
	name    string
	path    string
	content []byte
	sum     string
}

// runbookStateDoc is what a runbook's state digest covers.
type runbookStateDoc struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

func (s runbookScript) state() (State, error) {
	d, err := canonical.Digest(runbookStateDoc{Kind: change.KindRunbook, Name: s.name, SHA256: s.sum})
	if err != nil {
		return State{}, fmt.Errorf("runbook %s state digest: %w", s.name, err)
	}
	v, err := json.Marshal(map[string]any{"path": s.path, "sha256": s.sum, "size": len(s.content)})
	if err != nil {
		return State{}, err
	}
	return State{Digest: d, Content: d, Value: v}, nil
}

// script reads runbooks/<name>, else runbooks/<name>.sh, at the head of
// the main branch.
func (a *RunbookActuator) script(ctx context.Context, sc Scope, name string) (runbookScript, error) {
	g, pr, err := openProjectRepo(ctx, a.Repo, sc)
	if err != nil {
		return runbookScript{}, err
	}
	head, err := branchHead(ctx, g, pr)
	if err != nil {
		return runbookScript{}, err
	}
	for _, p := range []string{RunbookDir + "/" + name, RunbookDir + "/" + name + ".sh"} {
		f, err := readRepoFile(ctx, g, head, p)
		if err != nil {
			return runbookScript{}, err
		}
		if !f.exists {
			continue
		}
		if f.size > MaxRunbookScript {
			return runbookScript{}, signoff.Errorf(signoff.EINVALID, "runbook %s: %s is %d bytes, over %d", name, p, f.size, MaxRunbookScript)
		}
		return runbookScript{name: name, path: p, content: f.content, sum: f.sum}, nil
	}
	return runbookScript{}, signoff.Errorf(signoff.ENOTFOUND, "project %s has no runbook %s (%s/%s or %s/%s.sh on %s)", sc.ProjectID, name, RunbookDir, name, RunbookDir, name, pr.Branch)
}

// runbookResult is State.Value after a run.
type runbookResult struct {
	Runbook    string `json:"runbook"`
	Script     string `json:"script"`
	SHA256     string `json:"script_sha256"`
	Exit       int    `json:"exit"`
	Signal     string `json:"signal,omitempty"`
	Killed     string `json:"killed,omitempty"`
	StdoutTail string `json:"stdout_tail"`
	StderrTail string `json:"stderr_tail"`
	Truncated  bool   `json:"truncated,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	Network    bool   `json:"network"`
	Backend    string `json:"backend"`
}

// run runs s with call in the sandbox; st is the state to report (the
// plan target's), given the run's outcome as its Value.
func (a *RunbookActuator) run(ctx context.Context, sc Scope, st State, s runbookScript, call RunbookCall) (State, error) {
	runner := a.Runner
	if call.Network {
		runner = a.NetworkRunner
	}
	if runner == nil {
		what := "a sandbox"
		if call.Network {
			what = "a sandbox with network"
		}
		return st, signoff.Errorf(signoff.EUNAVAILABLE, "runbook %s needs %s, which this server does not have: nothing was run", s.name, what)
	}
	dir, err := os.MkdirTemp("", "signoff-runbook-")
	if err != nil {
		return st, fmt.Errorf("runbook %s: %w", s.name, err)
	}
	defer os.RemoveAll(dir)
	// The sandbox user must read the copy whoever runs the server.
	if err := os.Chmod(dir, 0o755); err != nil {
		return st, fmt.Errorf("runbook %s: %w", s.name, err)
	}
	file := filepath.Base(s.path)
	if err := os.WriteFile(filepath.Join(dir, file), s.content, 0o644); err != nil {
		return st, fmt.Errorf("runbook %s: %w", s.name, err)
	}
	env := map[string]string{}
	for k, v := range call.Env {
		env[k] = v
	}
	for k, v := range map[string]string{
		"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8",
	} {
		if _, set := env[k]; !set {
			env[k] = v
		}
	}
	env["SIGNOFF_RUNBOOK"] = s.name
	env["SIGNOFF_CASE_ID"] = sc.CaseID
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = DefaultRunbookTimeout
	}
	spec := sandbox.Spec{
		Command:  append([]string{"/bin/sh", runbookMount + "/" + file}, call.Args...),
		Workdir:  "/tmp",
		Env:      env,
		ReadOnly: []sandbox.Mount{{Host: dir, Target: runbookMount}},
		Limits: sandbox.Limits{WallTime: timeout, CPUTime: timeout, OutputBytes: runbookOutput,
			MemoryBytes: runbookMemory, Processes: runbookProcs},
	}
	res, err := runner.Run(ctx, spec)
	if err != nil {
		return st, signoff.Errorf(signoff.EUNAVAILABLE, "runbook %s could not run in the sandbox: %v", s.name, err)
	}
	out := runbookResult{
		Runbook: s.name, Script: s.path, SHA256: s.sum, Exit: res.ExitCode, Signal: res.Signal, Killed: res.Killed,
		StdoutTail: outputTail(res.Stdout), StderrTail: outputTail(res.Stderr), Truncated: res.Truncated,
		DurationMS: res.Duration.Milliseconds(), Network: call.Network, Backend: res.Backend,
	}
	if st.Value, err = json.Marshal(out); err != nil {
		return st, err
	}
	if res.ExitCode == 0 && res.Killed == "" && !res.TimedOut {
		return st, nil
	}
	how := fmt.Sprintf("exited with status %d", res.ExitCode)
	switch {
	case res.Killed != "":
		how = "was killed (" + res.Killed + ")"
	case res.Signal != "":
		how = "was ended by " + res.Signal
	}
	tail := strings.TrimSpace(out.StderrTail)
	if tail == "" {
		tail = strings.TrimSpace(out.StdoutTail)
	}
	if len(tail) > 300 {
		tail = "..." + strings.ToValidUTF8(tail[len(tail)-300:], "")
	}
	return st, fmt.Errorf("%w: %w", ErrRunbookFailed, signoff.Errorf(signoff.EUNAVAILABLE, "runbook %s %s: %s", s.name, how, tail))
}

// outputTail is the last runbookTail bytes of b as valid UTF-8.
func outputTail(b []byte) string {
	if len(b) > runbookTail {
		b = b[len(b)-runbookTail:]
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func runbookName(t change.Target) (string, error) {
	if t.Kind != change.KindRunbook {
		return "", signoff.Errorf(signoff.EINVALID, "the runbook actuator does not run %s targets", t.Kind)
	}
	if pt, err := change.ParseTarget(t.String()); err != nil {
		return "", err
	} else if pt != t {
		return "", signoff.Errorf(signoff.EINVALID, "target %s is not in its canonical form", t)
	}
	return t.Name, nil
}

func planRunbookName(p change.Plan) (string, error) {
	t, err := change.ParseTarget(p.Target)
	if err != nil {
		return "", err
	}
	if p.Kind != t.Kind {
		return "", signoff.Errorf(signoff.EINVALID, "plan kind %q does not match target %s", p.Kind, p.Target)
	}
	return runbookName(t)
}
