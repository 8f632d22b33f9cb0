// Package storetest is the storage conformance suite. Every backend runs
// the same tests: SQLite always, PostgreSQL wherever a server can be
// started (always in CI).
package storetest

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/ledger"
	"github.com/signoff-dev/signoff/sqlstore"
)

// Backend opens fresh, empty stores of one kind.
type Backend struct {
	Name string
	// Open returns a new store on an empty database, closed at cleanup.
	Open func(tb testing.TB, o sqlstore.Options) *sqlstore.DB
	// OpenPair returns two stores on one new database, as two processes
	// sharing it would have.
	OpenPair func(tb testing.TB, o sqlstore.Options) (*sqlstore.DB, *sqlstore.DB)
	// Tamper disables the append-only triggers so a test can play an
	// attacker with database access.
	Tamper func(tb testing.TB, db *sql.DB)
}

// Clock is a settable clock for expiry tests.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts a clock at a fixed instant.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)} }

// Now returns the current fake time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type bundle struct {
	store  *sqlstore.DB
	clock  *Clock
	key    ed25519.PrivateKey
	ws     signoff.Workspace
	owner  signoff.Actor
	proj   signoff.Project
	ctx    context.Context
	tamper func(tb testing.TB, db *sql.DB)
}

func setup(t *testing.T, b Backend) *bundle {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(nil)
	clock := NewClock()
	// Small verification segments make every test's ledger check run in
	// parallel pieces, so the joins between them are always exercised.
	s := b.Open(t, sqlstore.Options{Signer: key, Now: clock.Now, VerifySegment: 3, VerifyParallelism: 4})
	ctx := context.Background()
	ws, owner, err := s.CreateWorkspace(ctx, "Acme", "alice")
	if err != nil {
		t.Fatalf("CreateWorkspace: %v", err)
	}
	proj, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shoplite", RepoURL: "https://example.com/shoplite.git"})
	if err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	return &bundle{store: s, clock: clock, key: key, ws: ws, owner: owner, proj: proj, ctx: ctx, tamper: b.Tamper}
}

func (tb *bundle) actor(t *testing.T, name string, role signoff.Role) signoff.Actor {
	t.Helper()
	a, err := tb.store.CreateActor(tb.ctx, tb.owner, name, role)
	if err != nil {
		t.Fatalf("CreateActor(%s): %v", role, err)
	}
	return a
}

func (tb *bundle) bug(t *testing.T, reporter string) signoff.Case {
	t.Helper()
	c, err := tb.store.CreateCase(tb.ctx, tb.owner, signoff.CaseInput{ProjectID: tb.proj.ID, Kind: signoff.KindBug, Title: "coupon applied twice", ReporterID: reporter})
	if err != nil {
		t.Fatalf("CreateCase: %v", err)
	}
	return c
}

func (tb *bundle) verify(t *testing.T) ledger.Result {
	t.Helper()
	res, err := tb.store.VerifyLedger(tb.ctx, tb.ws.ID, ledger.Trust(tb.key.Public().(ed25519.PublicKey)))
	if err != nil {
		t.Fatalf("VerifyLedger: %v", err)
	}
	return res
}

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := signoff.ErrorCode(err); got != code {
		t.Fatalf("error code = %q (%v), want %q", got, err, code)
	}
}

// Run runs the whole suite against b.
func Run(t *testing.T, b Backend) {
	tests := []struct {
		name string
		fn   func(*testing.T, Backend)
	}{
		{"Workspaces", testWorkspaces},
		{"Actors", testActors},
		{"Tokens", testTokens},
		{"KeyRevoke", testKeyRevoke},
		{"KeysPerWorkspace", testKeysPerWorkspace},
		{"ActorDisable", testActorDisable},
		{"ActorDisableLastOwner", testActorDisableLastOwner},
		{"Projects", testProjects},
		{"CaseCreateAndList", testCaseCreateAndList},
		{"Transitions", testTransitions},
		{"AgentAuthority", testAgentAuthority},
		{"AgentEventsLikeStream", testAgentEventsLikeStream},
		{"AgentKeepsSignatures", testAgentKeepsSignatures},
		{"ReporterOwnsCase", testReporterOwnsCase},
		{"DecisionsNeedTheirOwnPath", testDecisionsNeedTheirOwnPath},
		{"LoopStepsNeedTheirOwnPath", testLoopStepsNeedTheirOwnPath},
		{"ConcurrentSameCommand", testConcurrentSameCommand},
		{"ConcurrentMixedCommands", testConcurrentMixedCommands},
		{"LedgerCheckpoints", testLedgerCheckpoints},
		{"JobsWakeOnCommit", testJobsWakeOnCommit},
		{"TwoProcessesOneChain", testTwoProcessesOneChain},
		{"OneConnectionEnough", testOneConnectionEnough},
		{"VerifyWhileAppending", testVerifyWhileAppending},
		{"LedgerTamper", testLedgerTamper},
		{"AppendOnly", testAppendOnly},
		{"TransactionalEnqueue", testTransactionalEnqueue},
		{"Ready", testReady},
		{"Intake", testIntake},
		{"NeedsInfo", testNeedsInfo},
		{"ProvideInfoQueuesTriage", testProvideInfoQueuesTriage},
		{"IntakeSplitInjection", testIntakeSplitInjection},
		{"TaskCreate", testTaskCreate},
		{"TaskReceipts", testTaskReceipts},
		{"TaskConcurrentSubmit", testTaskConcurrentSubmit},
		{"TaskHandoff", testTaskHandoff},
		{"TaskClose", testTaskClose},
		{"Transcripts", testTranscripts},
		{"AgentOwners", testAgentOwners},
		{"Addressing", testAddressing},
		{"Decisions", testDecisions},
		{"Presence", testPresence},
		{"Settings", testSettings},
		{"TrackerImport", testTrackerImport},
		{"ProjectData", testProjectData},
		{"CrashBulk", testCrashBulk},
		{"TriageRuns", testTriageRuns},
		{"TriageGateDecision", testTriageGateDecision},
		{"RequestDecisionMoving", testRequestDecisionMoving},
		{"TriageAhead", testTriageAhead},
		{"BugLoop", testBugLoop},
		{"Flags", testFlags},
		{"Change", testChange},
		{"OutboxTransactional", testOutboxTransactional},
		{"OutboxLease", testOutboxLease},
		{"OutboxDelivery", testOutboxDelivery},
		{"OutboxCrash", testOutboxCrash},
		{"Cards", testCards},
		{"ChannelHosts", testChannelHosts},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, b)
		})
	}
}

func timeFromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }
