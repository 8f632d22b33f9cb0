package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/bugdesk"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/crew"
	"github.com/signoff-dev/signoff/notify"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/sqlstore"
)

// stack is what a serving process runs: the tools, the providers, the
// runtime, the triage crew and the bug desk, wired once so the API, the
// MCP endpoint and the job workers share them.
type stack struct {
	reg     *agent.Registry
	fac     agent.Factory
	runtime *agent.Runtime
	crew    *crew.Runner
	desk    *bugdesk.Desk
	change  *changedesk.Desk
	notify  *notify.Desk
}

// newStack wires the stack over s. authored, when set, serves the roles
// configured with the authored provider (the demo's fixtures).
func newStack(e *env, s *sqlstore.DB, log *slog.Logger, authored *agent.Authored) (*stack, error) {
	return newStackWith(e, s, log, authored, nil)
}

// newStackWith is newStack recording or replaying the model exchanges as
// rr says (see openRecordReplay; nil does neither). The caller closes rr
// when the stack is done.
func newStackWith(e *env, s *sqlstore.DB, log *slog.Logger, authored *agent.Authored, rr *recordReplay) (*stack, error) {
	fac, err := providers(e, "", s)
	if err != nil {
		return nil, err
	}
	if authored != nil {
		fac.Authored = authored
	}
	rr.apply(e, &fac)
	desk := &bugdesk.Desk{Store: s, Log: log, Key: s.Signer()}
	cd := newChangeDesk(s, log)
	// Health probes reach loopback only unless the operator names more
	// hosts: plans come from agents, and a probe is a request the server
	// makes for them.
	// The review checks plans' probe hosts against the same list.
	if hosts := strings.Fields(strings.ReplaceAll(e.getenv("SIGNOFF_HEALTH_HOSTS"), ",", " ")); len(hosts) > 0 {
		if _, err := change.HealthPolicy(hosts); err != nil {
			return nil, fmt.Errorf("SIGNOFF_HEALTH_HOSTS: %w", err)
		}
		cd.Health = changedesk.Probers{HTTP: changedesk.HTTPProber{Hosts: hosts}}
	}
	reg := toolRegistryFor(desk, cd)
	rt := &agent.Runtime{Store: s, Tools: reg, Providers: fac.Make, Log: log}
	desk.Runtime, desk.Tools = rt, reg
	cd.Runtime, cd.Tools = rt, reg
	if runner, err := sandbox.Default(); err == nil {
		desk.Sandbox = runner
		cd.Actuators[change.KindRunbook].(*changedesk.RunbookActuator).Runner = runner
		p := cd.Health.(changedesk.Probers)
		p.Command = changedesk.CommandProber{Runner: runner}
		cd.Health = p
	} else {
		// Fail closed: without an isolated sandbox no reproduction or
		// candidate is run, and the loop says why.
		log.Warn("no isolated sandbox: the bug loop cannot run reproductions or verifications", "err", err)
	}
	if dir, err := os.UserCacheDir(); err == nil {
		desk.CacheDir = filepath.Join(dir, "signoff", "projects")
	}
	if s.River() != nil {
		// Through the store, so this process's job client starts the job
		// on commit (a River Insert here would wait for the fallback poll).
		desk.Enqueue = func(ctx context.Context, j signoff.JobRequest) error {
			return s.EnqueueAt(ctx, j.Args, j.At)
		}
	}
	nd := &notify.Desk{Store: s, Log: log, Subjects: cardSubjects(desk, cd), Changes: cardChanges(cd)}
	return &stack{reg: reg, fac: fac, runtime: rt, desk: desk, change: cd, notify: nd,
		crew: &crew.Runner{Store: s, Runtime: rt, Tools: reg}}, nil
}

// newChangeDesk wires the change desk's actuators: the flag store, files
// of the project's repository, and allowlisted runbooks (which get a
// sandbox runner once one is found; without one they cannot run). Health
// checks probe loopback HTTP only; command checks need the sandbox too.
func newChangeDesk(s *sqlstore.DB, log *slog.Logger) *changedesk.Desk {
	repo := changedesk.SettingsRepo(s)
	cd := &changedesk.Desk{Store: s, Log: log, Key: s.Signer(), Health: changedesk.Probers{}}
	if ro := s.ReadOnly(); ro != nil {
		cd.Read = ro
	}
	cd.Actuators = map[string]changedesk.Actuator{
		change.KindFlag: changedesk.FlagActuator{Flags: s},
		change.KindFile: &changedesk.FileActuator{Repo: repo},
		change.KindRunbook: &changedesk.RunbookActuator{Repo: repo, Allowed: func(ctx context.Context, sc changedesk.Scope, name string, network bool) error {
			pol, _, err := cd.Policy(ctx, sc.WorkspaceID)
			if err != nil {
				return err
			}
			rb, ok := pol.Runbooks[name]
			switch {
			case !ok:
				return signoff.Errorf(signoff.EFORBIDDEN, "runbook %s is not allowlisted by the policy", name)
			case network && !rb.Network:
				return signoff.Errorf(signoff.EFORBIDDEN, "the policy does not grant runbook %s the network", name)
			}
			return nil
		}},
	}
	return cd
}

// workers are the stack's job workers: triage, decisions and the bug loop.
func (st *stack) workers(log *slog.Logger) *river.Workers {
	w := st.crew.Workers(log)
	st.desk.AddWorkers(w)
	st.change.AddWorkers(w)
	st.notify.AddWorkers(w)
	return w
}

// cardSubjects resolves the subject of a state card from the desk that
// owns it: the candidate's or the plan's approval card, or the question
// on the reporter's page.
func cardSubjects(desk *bugdesk.Desk, cd *changedesk.Desk) notify.Subjects {
	return func(ctx context.Context, c signoff.Case, spec card.Spec) (string, time.Time, error) {
		sys := signoff.SystemActor(c.WorkspaceID)
		switch spec.Kind {
		case card.CandidateApproval:
			v, err := desk.Card(ctx, sys, c.ID)
			return v.SubjectDigest, time.Time{}, err
		case card.ChangeApproval:
			v, err := cd.Card(ctx, sys, c.ID)
			return v.SubjectDigest, time.Time{}, err
		case card.ReproConfirmation, card.FixConfirmation:
			d, ok, err := desk.QuestionDigest(ctx, c.WorkspaceID, c.ID)
			if err == nil && !ok {
				err = signoff.Errorf(signoff.ECONFLICT, "case %s asks its reporter nothing now", c.ID)
			}
			return d, time.Time{}, err
		}
		return "", time.Time{}, fmt.Errorf("no subject for %s cards", spec.Kind)
	}
}

// cardChanges reads, for a change approval card's messages, the plan the
// card asks about and the target's live state.
func cardChanges(cd *changedesk.Desk) notify.Changes {
	return func(ctx context.Context, ws, caseID string) (notify.ChangeSubject, error) {
		v, err := cd.Card(ctx, signoff.SystemActor(ws), caseID)
		if err != nil {
			return notify.ChangeSubject{}, err
		}
		sub := notify.ChangeSubject{Digest: v.SubjectDigest, Plan: v.Plan, Reason: v.Reason}
		if v.BeforeState != nil {
			sub.Before = v.BeforeState.Value
		}
		return sub, nil
	}
}

// toolRegistryFor is every agent tool: the base tools, the triage crew's,
// the bug desk's (bound to d) and the change desk's planner (bound to cd).
func toolRegistryFor(d *bugdesk.Desk, cd *changedesk.Desk) *agent.Registry {
	reg := agent.NewRegistry(agent.BaseTools()...)
	crew.Register(reg)
	d.Register(reg, nil)
	cd.Register(reg, nil)
	reg.AddDefaultRoles(reviewerRole(agent.ProviderBuiltin))
	return reg
}

// reviewerRole is the advisory reviewer of both desks: it notes bug fix
// candidates (record_review) and change plans (record_change_review).
func reviewerRole(provider string) agent.RoleConfig {
	cfg, err := agent.ParseConfig([]byte(reviewerYAML(provider)), nil)
	if err != nil {
		panic(fmt.Sprintf("reviewer role: %v", err))
	}
	return cfg.Roles[string(signoff.RoleReviewer)]
}

func reviewerYAML(provider string) string {
	return fmt.Sprintf(`roles:
  reviewer:
    actor: reviewer
    provider: %s
    tools: [record_review, %s]
    handoffs: []
    max_turns: 3
`, provider, changedesk.ToolRecordReview)
}

// reviewPolicy is the builtin reviewer: the bug desk's for candidates, the
// change desk's for plans.
func reviewPolicy(ctx context.Context, req agent.Request) (agent.Response, error) {
	if req.Task.Kind == changedesk.TaskKindReview {
		return changedesk.BuiltinReviewer(ctx, req)
	}
	return bugdesk.ReviewPolicy(ctx, req)
}
