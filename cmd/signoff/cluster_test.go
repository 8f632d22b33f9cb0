package main_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/approval"
	"github.com/signoff-dev/signoff/change"
	"github.com/signoff-dev/signoff/changedesk"
	"github.com/signoff-dev/signoff/channelrules"
	"github.com/signoff-dev/signoff/keys"
	"github.com/signoff-dev/signoff/netguard"
	"github.com/signoff-dev/signoff/pgtest"
	"github.com/signoff-dev/signoff/postgres"
	"github.com/signoff-dev/signoff/secretbox"
	"github.com/signoff-dev/signoff/sqlite"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/webhook"
)

// The cluster tests run the real binary as several processes over one
// database, drive a mixed workload through all of them, kill processes
// with SIGKILL at scripted random moments and restart them, and then check
// what must hold whatever happened: the ledger verifies, every report the
// client was told was accepted exists exactly once, every approved change
// was applied at most once (exactly once when it reports executed), and
// every notification was delivered at least once under its one id.

// proc is one signoff process the test runs.
type proc struct {
	t    *testing.T
	name string
	args []string
	env  []string // besides PATH and a HOME of its own
	addr string   // serve: host:port

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	log  *bytes.Buffer
}

func (p *proc) start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd := exec.Command(bin, p.args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + p.t.TempDir()}, p.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &syncWriter{w: &out}, &syncWriter{w: &out}
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start %s: %v", p.name, err)
	}
	done := make(chan struct{})
	p.cmd, p.log, p.done = cmd, &out, done
	go func() { _ = cmd.Wait(); close(done) }() // the exit is the test's doing
}

// kill sends SIGKILL: no shutdown, no cleanup, like a machine dying.
func (p *proc) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
}

// stop asks for a graceful shutdown and waits for it.
func (p *proc) stop() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(45 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

// freeAddr returns a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitReady waits until the serve process answers /readyz.
func waitReady(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became ready", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// receiver is the webhook endpoint: it verifies every delivery's
// signature and counts deliveries by message id.
type receiver struct {
	secret []byte
	mu     sync.Mutex
	seen   map[string]int
	bad    int
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id, _, err := webhook.Verify(rc.secret, r.Header, body, time.Now(), 5*time.Minute)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if err != nil {
		rc.bad++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	rc.seen[id]++
	w.WriteHeader(http.StatusNoContent)
}

// clusterEnv is the workspace every process serves.
type clusterEnv struct {
	t        *testing.T
	db, key  string
	store    *sqlstore.DB
	owner    signoff.Actor
	ownerTok string
	opTok    string
	operator signoff.Actor
	opKey    ed25519.PrivateKey
	project  string
	health   string
	rcv      *receiver
	procEnv  []string  // the environment every process gets
	bugs     *bugSetup // the bug cases waiting for fixes, if any
}

// newClusterEnv creates, through a store of its own, the workspace the
// processes will serve: an owner and an operator with tokens, the
// operator's approval key, a project, flags, a change policy, and a
// webhook channel to a receiver in the test.
func newClusterEnv(t *testing.T, db string, open func(ctx context.Context, key ed25519.PrivateKey) (*sqlstore.DB, error), flags int) *clusterEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	e := &clusterEnv{t: t, db: db, key: filepath.Join(dir, "signoff.key")}
	key, _, err := keys.LoadOrCreate(e.key)
	if err != nil {
		t.Fatal(err)
	}
	if e.store, err = open(ctx, key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.store.Close() })
	box, err := secretbox.FromEnvOrSeed("", key.Seed())
	if err != nil {
		t.Fatal(err)
	}
	e.store.SetSealer(box)
	// The receiver listens on loopback, which channels reach only when the
	// operator allows it: here, and in every process.
	e.store.SetChannelRules(channelrules.WithHosts(netguard.MustAllowlist("127.0.0.1"), nil))
	e.procEnv = append(e.procEnv, "SIGNOFF_CHANNEL_HOSTS=127.0.0.1")
	ws, owner, err := e.store.CreateWorkspace(ctx, "Cluster", "olivia")
	if err != nil {
		t.Fatal(err)
	}
	e.owner = owner
	cli := signoff.CLIActor(ws.ID)
	if e.operator, err = e.store.CreateActor(ctx, owner, "oscar", signoff.RoleOperator); err != nil {
		t.Fatal(err)
	}
	if _, e.ownerTok, err = e.store.CreateToken(ctx, cli, owner.ID, "cluster", nil); err != nil {
		t.Fatal(err)
	}
	if _, e.opTok, err = e.store.CreateToken(ctx, cli, e.operator.ID, "cluster", nil); err != nil {
		t.Fatal(err)
	}
	if _, e.opKey, err = ed25519.GenerateKey(nil); err != nil {
		t.Fatal(err)
	}
	pub, err := keys.EncodePublic(e.opKey.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.RegisterKey(ctx, e.operator, string(pub)); err != nil {
		t.Fatal(err)
	}
	p, err := e.store.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shop"})
	if err != nil {
		t.Fatal(err)
	}
	e.project = p.ID
	for i := range flags {
		if _, err := e.store.CreateFlag(ctx, owner, p.ID, "prod", fmt.Sprintf("flag_%d", i), signoff.FlagBoolean, json.RawMessage("false")); err != nil {
			t.Fatal(err)
		}
	}
	policy := `allowed_targets: ["flag:prod/*"]
environments: [prod]
min_reason_length: 10
approvals:
  required: 1
  group: [` + e.operator.ID + `]
no_self_approval: true
proposer_cannot_approve: true
windows:
  - days: [mon, tue, wed, thu, fri, sat, sun]
    from: "00:00"
    to: "24:00"
    tz: UTC
approval_ttl_hours: 2
`
	if _, err := e.store.SetChangePolicy(ctx, cli, policy, 0, change.PolicyDigest); err != nil {
		t.Fatal(err)
	}
	health := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	t.Cleanup(health.Close)
	e.health = health.URL + "/healthz"
	secret := webhook.NewSecret()
	raw, err := webhook.ParseSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	e.rcv = &receiver{secret: raw, seen: map[string]int{}}
	hooks := httptest.NewServer(e.rcv)
	t.Cleanup(hooks.Close)
	if _, err := e.store.PutChannel(ctx, owner, signoff.ChannelInput{Name: "cluster-hooks", Kind: signoff.ChannelWebhook,
		Secrets: signoff.ChannelSecrets{URL: hooks.URL, WebhookSecret: secret}}); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *clusterEnv) serve(name string, queues string) *proc {
	addr := freeAddr(e.t)
	p := &proc{t: e.t, name: name, addr: addr, args: []string{"serve", "--db", e.db, "--key", e.key, "--addr", addr, "--queues", queues,
		"--intake-per-minute", "1000000", "--intake-project-per-second", "100000"}, env: e.procEnv}
	p.start()
	return p
}

func (e *clusterEnv) worker(name string) *proc {
	p := &proc{t: e.t, name: name, args: []string{"worker", "--db", e.db, "--key", e.key}, env: e.procEnv}
	p.start()
	return p
}

// call sends one API request; a transport error is status 0.
func call(ctx context.Context, method, url, token string, in, out any) (int, []byte) {
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0, nil
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 {
		_ = json.Unmarshal(raw, out)
	}
	return resp.StatusCode, raw
}

// workload is what the client drove and what it was told.
type workload struct {
	mu       sync.Mutex
	accepted map[string]string // case id → report text
	failed   int               // reports not acknowledged (refused, connection lost)
	statuses map[int]int       // the answers of those, by status (0: no answer)
	sample   map[int]string    // one answer body per status
	changes  []changeRun
	bugs     []bugRun
	sent     atomic.Int64
}

type changeRun struct {
	caseID   string
	flag     string
	executed int    // 200 answers to execute
	outcome  string // the executed answer's outcome
	failed   string // why the flow stopped, if it did
}

// reports files reports at a fixed rate through the serve processes in
// turn until ctx ends.
func (w *workload) reports(ctx context.Context, e *clusterEnv, serves []*proc, rate int) {
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p := serves[i%len(serves)]
		text := fmt.Sprintf("cluster report %d: the basket total is wrong after removing an item", i)
		wg.Go(func() {
			w.sent.Add(1)
			var out struct {
				CaseID string `json:"case_id"`
			}
			rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			st, raw := call(rctx, "POST", "http://"+p.addr+"/api/v1/projects/"+e.project+"/reports", "", map[string]string{"text": text, "app_version": "1.0"}, &out)
			w.mu.Lock()
			defer w.mu.Unlock()
			if st == http.StatusCreated && out.CaseID != "" {
				w.accepted[out.CaseID] = text
				return
			}
			w.failed++
			if w.statuses == nil {
				w.statuses, w.sample = map[int]int{}, map[int]string{}
			}
			w.statuses[st]++
			if _, ok := w.sample[st]; !ok {
				w.sample[st] = string(raw)
			}
		})
	}
}

// change runs one change through the desk: requested on one instance,
// planned on the next, signed and approved on the third, then executed on
// all three at once. A step that fails on a dead instance is tried on the
// next one.
func (w *workload) change(ctx context.Context, e *clusterEnv, serves []*proc, n int) {
	run := changeRun{flag: fmt.Sprintf("flag_%d", n)}
	defer func() { w.mu.Lock(); w.changes = append(w.changes, run); w.mu.Unlock() }()
	try := func(start int, f func(base string) (int, []byte)) (int, []byte) { return tryServes(serves, start, f) }
	var req struct {
		Case signoff.Case `json:"case"`
	}
	st, raw := try(n, func(base string) (int, []byte) {
		return call(ctx, "POST", base+"/api/v1/projects/"+e.project+"/changes", e.ownerTok, map[string]string{"reason": "cluster test: turn " + run.flag + " on"}, &req)
	})
	if st != http.StatusCreated {
		run.failed = fmt.Sprintf("request: %d %s", st, raw)
		return
	}
	run.caseID = req.Case.ID
	proposal := map[string]any{"target": "flag:prod/" + run.flag, "params": json.RawMessage(`{"value":true}`),
		"health_check": change.HealthCheck{Kind: "http", Method: "GET", URL: e.health, ExpectStatus: 200, ExpectBody: "ok", WindowSeconds: 1, IntervalSeconds: 1}}
	if st, raw = try(n+1, func(base string) (int, []byte) {
		return call(ctx, "POST", base+"/api/v1/cases/"+run.caseID+"/plan", e.ownerTok, proposal, nil)
	}); st >= 300 {
		run.failed = fmt.Sprintf("plan: %d %s", st, raw)
		return
	}
	var card struct {
		changedesk.Card
	}
	if st, raw = try(n+2, func(base string) (int, []byte) {
		return call(ctx, "GET", base+"/api/v1/cases/"+run.caseID+"/approval", e.opTok, nil, &card)
	}); st != http.StatusOK {
		run.failed = fmt.Sprintf("card: %d %s", st, raw)
		return
	}
	plan, err := change.DecodePlan(card.Plan)
	if err != nil {
		run.failed = "decode plan: " + err.Error()
		return
	}
	digest, err := change.PlanDigest(plan)
	if err != nil || digest != card.SubjectDigest {
		run.failed = fmt.Sprintf("the card's plan digests to %s, the card says %s (%v)", digest, card.SubjectDigest, err)
		return
	}
	env, err := approval.Sign(approval.NewStatement(run.caseID, digest, approval.Approve, card.PolicyDigest, e.operator.ID, time.Now(), card.Policy.TTL()), e.opKey)
	if err != nil {
		run.failed = "sign: " + err.Error()
		return
	}
	if st, raw = try(n+2, func(base string) (int, []byte) {
		return call(ctx, "POST", base+"/api/v1/cases/"+run.caseID+"/approvals", e.opTok, map[string]any{"envelope": env, "via": "cli-signed-yes"}, nil)
	}); st >= 300 && st != http.StatusConflict {
		run.failed = fmt.Sprintf("approve: %d %s", st, raw)
		return
	}
	// The same approval executed through every instance at once: one
	// apply, the rest refused.
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, p := range serves {
		wg.Go(func() {
			var x changedesk.Execution
			st, raw := call(ctx, "POST", "http://"+p.addr+"/api/v1/cases/"+run.caseID+"/execute", e.opTok, map[string]string{}, &x)
			for deadline := time.Now().Add(30 * time.Second); refused(st, raw) && time.Now().Before(deadline); {
				time.Sleep(200 * time.Millisecond)
				st, raw = call(ctx, "POST", "http://"+p.addr+"/api/v1/cases/"+run.caseID+"/execute", e.opTok, map[string]string{}, &x)
			}
			if st == http.StatusOK {
				mu.Lock()
				run.executed++
				run.outcome = x.Outcome
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// chaos kills one serve and one worker at random moments of the window
// and restarts each after a pause; it returns how many kills it made.
func chaos(ctx context.Context, t *testing.T, rng *rand.Rand, victims [][]*proc, restartAfter time.Duration) int {
	kills := 0
	var wg sync.WaitGroup
	for _, group := range victims {
		p := group[rng.IntN(len(group))]
		at := time.Duration(rng.Int64N(int64(4*time.Second))) + time.Second
		wg.Go(func() {
			select {
			case <-ctx.Done():
				return
			case <-time.After(at):
			}
			p.kill()
			t.Logf("chaos: killed %s (SIGKILL) at +%v", p.name, at.Round(time.Millisecond))
			time.Sleep(restartAfter)
			p.start()
			t.Logf("chaos: restarted %s", p.name)
		})
		kills++
	}
	wg.Wait()
	return kills
}

// check verifies the invariants over the database and the receiver.
func (e *clusterEnv) check(w *workload, drain time.Duration) {
	t := e.t
	ctx := context.Background()
	w.mu.Lock()
	defer w.mu.Unlock()
	// Every acknowledged report exists exactly once, with its text.
	lost := 0
	for id, text := range w.accepted {
		var n int
		if err := e.store.SQL().QueryRowContext(ctx, `SELECT count(*) FROM reporter_texts WHERE case_id = $1 AND kind = 'report'`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			lost++
			t.Errorf("accepted report %s: %d rows", id, n)
		}
		var dup int
		if err := e.store.SQL().QueryRowContext(ctx, `SELECT count(*) FROM reporter_texts WHERE original = $1 AND kind = 'report'`, text).Scan(&dup); err != nil {
			t.Fatal(err)
		}
		if dup != 1 {
			t.Errorf("report %q stored %d times", text, dup)
		}
	}
	t.Logf("reports: %d sent, %d acknowledged, %d not acknowledged (by status: %v), %d acknowledged but lost", w.sent.Load(), len(w.accepted), w.failed, w.statuses, lost)
	for st, body := range w.sample {
		t.Logf("  a %d answer: %.200s", st, body)
	}
	// Every approved change applied at most once; exactly once when an
	// execute answered executed. A flow a crash stopped is allowed; most
	// must get through.
	through := 0
	for _, c := range w.changes {
		if c.executed == 1 && c.outcome == changedesk.OutcomeExecuted {
			through++
		}
	}
	t.Logf("changes: %d of %d executed", through, len(w.changes))
	if through*2 < len(w.changes) {
		t.Errorf("only %d of %d changes got through", through, len(w.changes))
	}
	for _, c := range w.changes {
		if c.failed != "" {
			t.Logf("change %s (%s) stopped early: %s", c.caseID, c.flag, c.failed)
		} else if c.executed != 1 || c.outcome != changedesk.OutcomeExecuted {
			cs, _ := e.store.GetCase(ctx, signoff.SystemActor(e.operator.WorkspaceID), c.caseID)
			t.Logf("change %s (%s): %d execute answers of 200 (%s); the case is %s", c.caseID, c.flag, c.executed, c.outcome, cs.State)
		}
		if c.executed > 1 {
			t.Errorf("change %s executed %d times", c.caseID, c.executed)
		}
		if c.caseID == "" {
			continue
		}
		var receipts int
		if err := e.store.SQL().QueryRowContext(ctx, `SELECT count(*) FROM change_receipts WHERE case_id = $1 AND kind = 'execute'`, c.caseID).Scan(&receipts); err != nil {
			t.Fatal(err)
		}
		f, err := e.store.GetFlag(ctx, signoff.SystemActor(e.operator.WorkspaceID), e.project, "prod", c.flag)
		if err != nil {
			t.Fatal(err)
		}
		writes := int(f.Version) - 1
		switch {
		case writes > 1:
			t.Errorf("change %s: flag %s written %d times", c.caseID, c.flag, writes)
		case c.executed == 1 && c.outcome == changedesk.OutcomeExecuted && (writes != 1 || receipts != 1):
			t.Errorf("change %s answered executed, but the flag has %d writes and %d receipts", c.caseID, writes, receipts)
		case receipts > 1:
			t.Errorf("change %s has %d execute receipts", c.caseID, receipts)
		}
	}
	// Every notification delivered at least once under its one id.
	deadline := time.Now().Add(drain)
	for {
		var pending int
		if err := e.store.SQL().QueryRowContext(ctx, `SELECT count(*) FROM outbox WHERE state <> 'delivered'`).Scan(&pending); err != nil {
			t.Fatal(err)
		}
		if pending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d notifications not delivered after %v", pending, drain)
		}
		time.Sleep(500 * time.Millisecond)
	}
	rows, err := e.store.SQL().QueryContext(ctx, `SELECT message_id FROM outbox`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	ids := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[id] = true
	}
	e.rcv.mu.Lock()
	defer e.rcv.mu.Unlock()
	dups := 0
	for id := range ids {
		switch n := e.rcv.seen[id]; {
		case n == 0:
			t.Errorf("message %s is delivered in the database but never reached the receiver", id)
		case n > 1:
			dups += n - 1
		}
	}
	for id := range e.rcv.seen {
		if !ids[id] {
			t.Errorf("the receiver got message %s, which the outbox does not have", id)
		}
	}
	if e.rcv.bad > 0 {
		t.Errorf("%d deliveries had a bad signature", e.rcv.bad)
	}
	t.Logf("notifications: %d messages, all delivered; %d repeated deliveries (same id)", len(ids), dups)
	// The ledger verifies, checked by the CLI as an operator would.
	out, code := signoffCmd(t, "ledger", "verify", "--db", e.db, "--key", e.key)
	if code != 0 {
		t.Fatalf("ledger verify: %d\n%s", code, out)
	}
	t.Logf("ledger verify: %s", strings.TrimSpace(firstLine(out)))
}

func firstLine(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	if sc.Scan() {
		return sc.Text()
	}
	return ""
}

// TestClusterPostgres: 3 serve processes (API only) and 2 workers on one
// PostgreSQL; reports, signed changes, and fixes verified in the workers'
// sandboxes then approved, through all three; one serve killed with
// SIGKILL at a random moment and one worker while it runs a
// verification, both restarted.
func TestClusterPostgres(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	const changes = 6
	e := newClusterEnv(t, url, func(ctx context.Context, key ed25519.PrivateKey) (*sqlstore.DB, error) {
		return postgres.Open(ctx, url, sqlstore.Options{Signer: key})
	}, changes)
	e.addBugs(3)
	var serves []*proc
	for i := range 3 {
		serves = append(serves, e.serve(fmt.Sprintf("serve-%d", i+1), "none"))
	}
	workers := []*proc{e.worker("worker-1"), e.worker("worker-2")}
	t.Cleanup(func() {
		for _, p := range append(serves, workers...) {
			p.stop()
		}
	})
	for _, p := range serves {
		waitReady(t, p.addr)
	}
	seed := rand.Uint64()
	t.Logf("chaos seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	w := &workload{accepted: map[string]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { w.reports(ctx, e, serves, 40) })
	wg.Go(func() { chaos(ctx, t, rng, [][]*proc{serves}, time.Second) })
	var wk *workerKill
	if e.bugs != nil {
		wg.Go(func() { wk = killVerifyingWorker(ctx, t, e, workers, rng, time.Second) })
		wg.Go(func() { w.bugsFlow(context.Background(), e, serves) })
	} else {
		wg.Go(func() { chaos(ctx, t, rng, [][]*proc{workers}, time.Second) })
	}
	if os.Getenv("SIGNOFF_CLUSTER_LOGS") != "" {
		wg.Go(func() {
			for range 8 {
				time.Sleep(time.Second)
				rows, err := e.store.SQL().Query(`SELECT pid, state, coalesce(wait_event_type,''), coalesce(wait_event,''), extract(epoch from now()-xact_start)::int, left(query, 120) FROM pg_stat_activity WHERE state <> 'idle' AND xact_start < now() - interval '1 second'`)
				if err != nil {
					t.Log(err)
					continue
				}
				for rows.Next() {
					var pid, age int
					var st, wt, we, q string
					_ = rows.Scan(&pid, &st, &wt, &we, &age, &q)
					t.Logf("pg: pid %d %s wait %s/%s age %ds: %s", pid, st, wt, we, age, q)
				}
				rows.Close()
			}
		})
	}
	for n := range changes {
		wg.Go(func() {
			time.Sleep(time.Duration(n) * time.Second)
			w.change(context.Background(), e, serves, n)
		})
	}
	wg.Wait()
	for _, p := range serves {
		waitReady(t, p.addr)
	}
	if os.Getenv("SIGNOFF_CLUSTER_LOGS") != "" {
		for _, p := range append(serves, workers...) {
			p.mu.Lock()
			t.Logf("---- %s\n%s", p.name, p.log.String())
			p.mu.Unlock()
		}
	}
	start := time.Now()
	e.check(w, 4*time.Minute)
	e.checkBugs(w)
	if wk != nil && wk.retried > 0 {
		t.Logf("a killed worker's verification was retried elsewhere %v after the kill", wk.retried.Round(time.Second))
	}
	t.Logf("checked in %v", time.Since(start).Round(time.Millisecond))
}

// TestClusterSQLite: one serve process with its jobs on SQLite, killed
// with SIGKILL while it runs a verification (at a random moment when
// there is no sandbox) and restarted on the same address.
func TestClusterSQLite(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "signoff.db")
	const changes = 3
	e := newClusterEnv(t, db, func(ctx context.Context, key ed25519.PrivateKey) (*sqlstore.DB, error) {
		return sqlite.Open(ctx, db, sqlstore.Options{Signer: key})
	}, changes)
	e.addBugs(1)
	s := e.serve("serve", "all")
	t.Cleanup(s.stop)
	waitReady(t, s.addr)
	seed := rand.Uint64()
	t.Logf("chaos seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	w := &workload{accepted: map[string]string{}}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	serves := []*proc{s}
	var wg sync.WaitGroup
	wg.Go(func() { w.reports(ctx, e, serves, 20) })
	var wk *workerKill
	if e.bugs != nil {
		// The one process runs the verification too: it dies in the
		// middle of it.
		wg.Go(func() { wk = killVerifyingWorker(ctx, t, e, serves, rng, time.Second) })
		wg.Go(func() { w.bugsFlow(context.Background(), e, serves) })
	} else {
		wg.Go(func() { chaos(ctx, t, rng, [][]*proc{serves}, time.Second) })
	}
	for n := range changes {
		wg.Go(func() {
			time.Sleep(time.Duration(2*n) * time.Second)
			w.change(context.Background(), e, serves, n)
		})
	}
	wg.Wait()
	waitReady(t, s.addr)
	e.check(w, 4*time.Minute)
	e.checkBugs(w)
	if wk != nil && wk.retried > 0 {
		t.Logf("the killed process's verification was retried %v after the kill", wk.retried.Round(time.Second))
	}
}
