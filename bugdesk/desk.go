// Package bugdesk runs the bug loop on a real git repository, from a
// ticket to the reporter's last word (SPEC sections 3, 5, 6 and 7): it
// issues reproducer and fixer tasks, runs their proposals in the sandbox,
// verifies candidates with the frozen harness, checks signed approvals,
// merges on a person's command, reconciles deployments by ancestry, runs
// the smoke check and asks the reporter. Every step goes through the
// store's AdvanceLoop, so the case, the loop record, the ledger and the
// next job change together or not at all.
package bugdesk

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/agent"
	"github.com/signoff-dev/signoff/gitx"
	"github.com/signoff-dev/signoff/repair"
	"github.com/signoff-dev/signoff/sandbox"
	"github.com/signoff-dev/signoff/verify"
)

// Runtime roles of the bug loop, each run by the agent identity of the
// same name.
const (
	RoleReproducer = "reproducer"
	RoleFixer      = "fixer"
	RoleReviewer   = "reviewer"
)

// Deployer deploys a merged commit. The default runs the project's deploy
// hook; the demo deploys ShopLite in-process. A deployer reports what it
// deployed itself (through RecordDeployment or a signed webhook), because
// only the deployment, not the request, says what is live.
type Deployer interface {
	Deploy(ctx context.Context, req DeployRequest) error
}

// DeployRequest is one merged commit to deploy.
type DeployRequest struct {
	WorkspaceID, ProjectID string
	Settings               signoff.RepoSettings
	Commit                 string
}

// Desk runs the bug loop.
type Desk struct {
	Store   signoff.Store
	Runtime *agent.Runtime
	Tools   *agent.Registry
	Sandbox sandbox.Runner
	// CacheDir holds one Go build cache per project, so a hostile test of
	// one project cannot plant entries for another.
	CacheDir string
	Log      *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// HTTP runs the smoke checks (default: a client with a 10 s timeout).
	HTTP *http.Client
	// Deployers override the deploy hook per project id.
	Deployers map[string]Deployer
	// Key signs the evidence bundles of verifications (the server's key).
	// Without it no bundle is written, and the loop says so.
	Key ed25519.PrivateKey
	// Enqueue inserts a job outside any other change (after a webhook).
	// Nil runs the reconciliation inline instead.
	Enqueue func(ctx context.Context, args signoff.JobRequest) error
	// Budget tunes the verification job's timeout (VerifyTimeout); its
	// zero fields take the defaults. Tests shrink it.
	Budget VerifyBudget

	mu    sync.Mutex
	locks map[string]*sync.Mutex
	// ownPassing caches, per project and base commit, the base's own
	// tests that pass without any reproduction (baseOwnPassing).
	ownPassing map[string][]string
}

func (d *Desk) now() time.Time {
	if d.Now != nil {
		return d.Now().UTC()
	}
	return time.Now().UTC()
}

func (d *Desk) log() *slog.Logger {
	if d.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Log
}

// lock serializes the desk's work on one key (a case or a project's
// repository) in this process. The store's versions guard across
// processes; this only avoids needless conflicts.
func (d *Desk) lock(key string) func() {
	d.mu.Lock()
	if d.locks == nil {
		d.locks = map[string]*sync.Mutex{}
	}
	m, ok := d.locks[key]
	if !ok {
		m = &sync.Mutex{}
		d.locks[key] = m
	}
	d.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// project is what the desk needs of a project: its settings and its
// repository.
type project struct {
	ID       string
	WS       string
	Settings signoff.RepoSettings
	Repo     *gitx.Repo
}

func (d *Desk) project(ctx context.Context, ws, projectID string) (project, error) {
	s, err := d.Store.GetRepoSettings(ctx, signoff.SystemActor(ws), projectID)
	if err != nil {
		return project{}, fmt.Errorf("project %s repository: %w", projectID, err)
	}
	if _, err := os.Stat(filepath.Join(s.Path, ".git")); err != nil {
		if s.URL == "" {
			return project{}, signoff.Errorf(signoff.EUNAVAILABLE, "project %s: %s is not a git repository", projectID, s.Path)
		}
		unlock := d.lock("clone:" + projectID)
		defer unlock()
		if _, err := os.Stat(filepath.Join(s.Path, ".git")); err != nil {
			if _, err := gitx.Clone(ctx, s.URL, s.Path); err != nil {
				return project{}, fmt.Errorf("project %s: clone %s: %w", projectID, s.URL, err)
			}
		}
	}
	return project{ID: projectID, WS: ws, Settings: s, Repo: &gitx.Repo{Dir: s.Path}}, nil
}

// loop returns the case and its loop record; a case without one gets a
// zero record at version 0 (AdvanceLoop creates it).
func (d *Desk) loop(ctx context.Context, by signoff.Actor, caseID string) (signoff.Case, signoff.BugLoop, error) {
	c, err := d.Store.GetCase(ctx, by, caseID)
	if err != nil {
		return c, signoff.BugLoop{}, err
	}
	if c.Kind != signoff.KindBug {
		return c, signoff.BugLoop{}, signoff.Errorf(signoff.EINVALID, "case %s is not a bug", caseID)
	}
	l, err := d.Store.GetLoop(ctx, signoff.SystemActor(c.WorkspaceID), caseID)
	if signoff.ErrorCode(err) == signoff.ENOTFOUND {
		return c, signoff.BugLoop{CaseID: c.ID, WorkspaceID: c.WorkspaceID, ProjectID: c.ProjectID}, nil
	}
	return c, l, err
}

// harnessOf decodes a harness record's spec.
func harnessOf(h *signoff.HarnessRecord) (verify.Harness, error) {
	return verify.ParseHarness(h.Spec)
}

// reportOf decodes a candidate's stored verification report.
func reportOf(c *signoff.Candidate) (verify.Report, error) {
	var r verify.Report
	if len(c.Report) == 0 {
		return r, fmt.Errorf("candidate %s has no report", c.ID)
	}
	return r, json.Unmarshal(c.Report, &r)
}

// cacheFor is the project's own build cache.
func (d *Desk) cacheFor(projectID string) string {
	if d.CacheDir == "" {
		return ""
	}
	// Each project's build cache sits in a folder of its own, beside
	// which the verifier keeps its base-run and dependency caches: no
	// project reads another's.
	return filepath.Join(d.CacheDir, projectID, "go-build")
}

// card returns the current approval card of a case and its digest. The
// card carries the harness's test source, read at its tests_from commit
// and checked against the harness digest.
func (d *Desk) card(ctx context.Context, c signoff.Case, l signoff.BugLoop) (repair.Card, string, *signoff.Candidate, error) {
	h := repair.FrozenHarness(l.State)
	cand := repair.LatestCandidate(l.State)
	if h == nil || cand == nil {
		return repair.Card{}, "", nil, signoff.Errorf(signoff.ECONFLICT, "case %s has no verified candidate to approve", c.ID)
	}
	rep, err := reportOf(cand)
	if err != nil {
		return repair.Card{}, "", nil, err
	}
	src, err := d.harnessSource(ctx, c, h)
	if err != nil {
		return repair.Card{}, "", nil, fmt.Errorf("card of %s: %w", c.ID, err)
	}
	card, err := repair.NewCard(c, *h, *cand, rep, src)
	if err != nil {
		return repair.Card{}, "", nil, err
	}
	dg, err := card.Digest()
	return card, dg, cand, err
}

// EnqueueJob inserts a job through Enqueue, logging a failure: the
// loop's jobs are idempotent, and the next event heals a lost one.
func (d *Desk) EnqueueJob(ctx context.Context, job signoff.JobRequest) { d.enqueue(ctx, job) }

func (d *Desk) enqueue(ctx context.Context, job signoff.JobRequest) {
	if d.Enqueue == nil {
		return
	}
	if err := d.Enqueue(ctx, job); err != nil {
		d.log().ErrorContext(ctx, "enqueue", "kind", job.Args.Kind(), "err", err)
	}
}

// sys is the server acting in ws.
func sys(ws string) signoff.Actor { return signoff.SystemActor(ws) }

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
