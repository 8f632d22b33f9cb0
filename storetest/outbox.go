package storetest

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/signoff-dev/signoff"
	"github.com/signoff-dev/signoff/card"
	"github.com/signoff-dev/signoff/channelrules"
	"github.com/signoff-dev/signoff/netguard"
	"github.com/signoff-dev/signoff/notify"
	"github.com/signoff-dev/signoff/outbox"
	"github.com/signoff-dev/signoff/secretbox"
	"github.com/signoff-dev/signoff/sqlstore"
	"github.com/signoff-dev/signoff/webhook"
)

// outboxKit is a workspace with a webhook channel pointed at url.
type outboxKit struct {
	*bundle
	ch     signoff.Channel
	secret string
}

func newOutboxKit(t testing.TB, b Backend, url string, realClock bool) *outboxKit {
	t.Helper()
	var tb *bundle
	if realClock {
		tb = setupWith(t, b, nil)
	} else {
		clock := NewClock()
		tb = setupWith(t, b, clock.Now)
		tb.clock = clock
	}
	key := make([]byte, 32)
	rand.Read(key)
	box, err := secretbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	tb.store.SetSealer(box)
	// The receivers here listen on loopback, which channels reach only
	// when the operator allowlists it.
	tb.store.SetChannelRules(channelrules.WithHosts(netguard.MustAllowlist("127.0.0.1"), nil))
	secret := webhook.NewSecret()
	ch, err := tb.store.PutChannel(tb.ctx, tb.owner, signoff.ChannelInput{Name: "hooks", Kind: signoff.ChannelWebhook,
		Events: []string{"case.*", "decision.*", "card.*", "probe.*"}, Secrets: signoff.ChannelSecrets{URL: url, WebhookSecret: secret}})
	if err != nil {
		t.Fatalf("PutChannel: %v", err)
	}
	return &outboxKit{bundle: tb, ch: ch, secret: secret}
}

// setupWith is setup with a given clock (nil: the real one, for tests that
// run River, which keeps real time).
func setupWith(t testing.TB, b Backend, now func() time.Time) *bundle {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(nil)
	s := b.Open(t, sqlstore.Options{Signer: key, Now: now})
	ctx := context.Background()
	ws, owner, err := s.CreateWorkspace(ctx, "Acme", "alice")
	if err != nil {
		t.Fatalf("CreateWorkspace: %v", err)
	}
	proj, err := s.CreateProject(ctx, owner, signoff.ProjectInput{Name: "shoplite", RepoURL: "https://example.com/shoplite.git"})
	if err != nil {
		t.Fatalf("CreateProject: %v", err)
	}
	return &bundle{store: s, clock: NewClock(), key: key, ws: ws, owner: owner, proj: proj, ctx: ctx, tamper: b.Tamper}
}

func (k *outboxKit) messages(t *testing.T, state string) []signoff.OutboxMessage {
	t.Helper()
	ms, err := k.store.ListOutbox(k.ctx, k.owner, signoff.OutboxFilter{State: state, ChannelID: k.ch.ID, Limit: 500})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func (k *outboxKit) jobs(t *testing.T, kind string) []*rivertype.JobRow {
	t.Helper()
	res, err := k.store.River().JobList(k.ctx, river.NewJobListParams().Kinds(kind).First(1000))
	if err != nil {
		t.Fatal(err)
	}
	return res.Jobs
}

// testOutboxTransactional: a notification exists exactly when the event
// that causes it commits; a rolled-back state change leaves no job and no
// message behind.
func testOutboxTransactional(t *testing.T, b Backend) {
	k := newOutboxKit(t, b, "http://127.0.0.1:9/hook", false)
	before, jobsBefore := len(k.messages(t, "")), len(k.jobs(t, "notify"))
	boom := errors.New("boom")
	err := k.store.InTx(k.ctx, func(tx *sql.Tx) error {
		if _, err := k.store.AppendTx(k.ctx, tx, k.ws.ID, sqlstore.EventInput{Type: "probe.rolled_back", ActorID: k.owner.ID, Payload: map[string]any{"n": 1}}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v", err)
	}
	if got, jobs := len(k.messages(t, "")), len(k.jobs(t, "notify")); got != before || jobs != jobsBefore {
		t.Fatalf("after rollback: %d messages (was %d), %d jobs (was %d)", got, before, jobs, jobsBefore)
	}
	err = k.store.InTx(k.ctx, func(tx *sql.Tx) error {
		_, err := k.store.AppendTx(k.ctx, tx, k.ws.ID, sqlstore.EventInput{Type: "probe.committed", ActorID: k.owner.ID, Payload: map[string]any{"n": 2}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	ms := k.messages(t, "")
	if len(ms) != before+1 || ms[0].EventType != "probe.committed" || len(k.jobs(t, "notify")) != jobsBefore+1 {
		t.Fatalf("after commit: %d messages, want %d with probe.committed first", len(ms), before+1)
	}
	// The message id is the UUIDv5 of its job (and the job's creation).
	var job *rivertype.JobRow
	for _, j := range k.jobs(t, "notify") {
		if j.ID == ms[0].JobID {
			job = j
		}
	}
	if job == nil || outbox.MessageID(job.ID, job.CreatedAt) != ms[0].MessageID {
		t.Fatalf("message id %s is not the UUIDv5 of job %d", ms[0].MessageID, ms[0].JobID)
	}
	// A workspace without channels enqueues nothing; a disabled channel
	// neither.
	off := false
	if _, err := k.store.PutChannel(k.ctx, k.owner, signoff.ChannelInput{Name: "hooks", Kind: signoff.ChannelWebhook, Enabled: &off,
		Secrets: signoff.ChannelSecrets{URL: "http://127.0.0.1:9/hook", WebhookSecret: k.secret}}); err != nil {
		t.Fatal(err)
	}
	n := len(k.messages(t, ""))
	k.bug(t, "")
	if got := len(k.messages(t, "")); got != n {
		t.Fatalf("a disabled channel got %d new messages", got-n)
	}
}

// testOutboxLease: a claim is a lease; only its holder's token
// acknowledges; a second worker waits for the lease to run out; a case's
// messages go out in ledger order; a parked message is re-driven under
// the same id.
func testOutboxLease(t *testing.T, b Backend) {
	k := newOutboxKit(t, b, "http://127.0.0.1:9/hook", false)
	c := k.bug(t, "")
	if _, _, err := k.store.TransitionCase(k.ctx, k.owner, c.ID, signoff.TransitionInput{Command: "start_triage"}); err != nil {
		t.Fatal(err)
	}
	ms := k.messages(t, signoff.OutboxPending)
	slices.SortFunc(ms, func(a, b signoff.OutboxMessage) int { return int(a.Seq - b.Seq) })
	if len(ms) != 2 || ms[0].CaseID != c.ID || ms[1].CaseID != c.ID {
		t.Fatalf("pending = %+v, want case.created and case.transitioned of %s", ms, c.ID)
	}
	first, second := ms[0], ms[1]
	// Ledger order: the second waits while the first is pending.
	var wait *sqlstore.WaitError
	if _, err := k.store.ClaimMessage(k.ctx, second.MessageID, "w1", time.Minute); !errors.As(err, &wait) {
		t.Fatalf("claim of the later message = %v, want a wait", err)
	}
	a, err := k.store.ClaimMessage(k.ctx, first.MessageID, "w1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.store.ClaimMessage(k.ctx, first.MessageID, "w2", time.Minute); !errors.As(err, &wait) || !wait.Until.Equal(k.clock.Now().Add(time.Minute)) {
		t.Fatalf("second claim under a live lease = %v, want a wait until the lease ends", err)
	}
	// w1 dies without acknowledging; after the lease w2 takes over.
	k.clock.Advance(time.Minute + time.Second)
	b2, err := k.store.ClaimMessage(k.ctx, first.MessageID, "w2", time.Minute)
	if err != nil || b2.Attempt != 2 || b2.Token == a.Token {
		t.Fatalf("claim after the lease = %+v, %v", b2, err)
	}
	if err := k.store.FinishMessage(k.ctx, a, sqlstore.Result{Status: 200}); !errors.Is(err, sqlstore.ErrLeaseLost) {
		t.Fatalf("late ack with the old lease = %v, want ErrLeaseLost", err)
	}
	if err := k.store.FinishMessage(k.ctx, b2, sqlstore.Result{Status: 200}); err != nil {
		t.Fatal(err)
	}
	if _, err := k.store.ClaimMessage(k.ctx, first.MessageID, "w3", time.Minute); !errors.Is(err, sqlstore.ErrSettled) {
		t.Fatalf("claim of a delivered message = %v", err)
	}
	m, atts, err := k.store.GetOutbox(k.ctx, k.owner, first.MessageID)
	if err != nil || m.State != signoff.OutboxDelivered || len(atts) != 2 || atts[0].FinishedAt == nil || atts[0].Holder != "w1" || atts[1].Status != 200 {
		t.Fatalf("delivered message = %+v, attempts %+v, %v", m, atts, err)
	}
	// The second may go now. It fails and waits for its next attempt; a
	// later message of the case waits as long, not in a busy loop.
	c2, err := k.store.ClaimMessage(k.ctx, second.MessageID, "w1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	next := k.clock.Now().Add(10 * time.Minute)
	if err := k.store.FinishMessage(k.ctx, c2, sqlstore.Result{Status: 503, Err: errors.New("receiver answered 503"), NextAt: next}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := k.store.TransitionCase(k.ctx, k.owner, c.ID, signoff.TransitionInput{Command: "request_info"}); err != nil {
		t.Fatal(err)
	}
	var third signoff.OutboxMessage
	for _, m := range k.messages(t, signoff.OutboxPending) {
		if m.Seq > second.Seq {
			third = m
		}
	}
	if _, err := k.store.ClaimMessage(k.ctx, third.MessageID, "w1", time.Minute); !errors.As(err, &wait) || !wait.Until.Equal(next) {
		t.Fatalf("a message behind a failing one = %v, want a wait until its retry at %s", err, next)
	}
	if c2, err = k.store.ClaimMessage(k.ctx, second.MessageID, "w1", time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := k.store.FinishMessage(k.ctx, c2, sqlstore.Result{Status: 410, Err: errors.New("receiver answered 410 Gone"), Dead: true}); err != nil {
		t.Fatal(err)
	}
	dead := k.messages(t, signoff.OutboxDead)
	if len(dead) != 1 || dead[0].LastError != "receiver answered 410 Gone" {
		t.Fatalf("dead = %+v", dead)
	}
	if _, err := k.store.RetryOutbox(k.ctx, k.owner, first.MessageID); signoff.ErrorCode(err) != signoff.ECONFLICT {
		t.Fatalf("re-drive of a delivered message = %v, want conflict", err)
	}
	viewer := k.actor(t, "vera", signoff.RoleViewer)
	if _, err := k.store.RetryOutbox(k.ctx, viewer, second.MessageID); signoff.ErrorCode(err) != signoff.EFORBIDDEN {
		t.Fatalf("viewer re-drive = %v, want forbidden", err)
	}
	// While the worker that parked it still holds its job, River would
	// not make it available: the re-drive is refused, not lost.
	if _, err := k.store.SQL().ExecContext(k.ctx, `UPDATE river_job SET state = 'running' WHERE id = $1`, second.JobID); err != nil {
		t.Fatal(err)
	}
	if _, err := k.store.RetryOutbox(k.ctx, k.owner, second.MessageID); signoff.ErrorCode(err) != signoff.ECONFLICT {
		t.Fatalf("re-drive while the job runs = %v, want conflict", err)
	}
	if m, _, _ := k.store.GetOutbox(k.ctx, k.owner, second.MessageID); m.State != signoff.OutboxDead {
		t.Fatalf("a refused re-drive left the message %s", m.State)
	}
	if _, err := k.store.SQL().ExecContext(k.ctx, `UPDATE river_job SET state = 'cancelled', finalized_at = created_at WHERE id = $1`, second.JobID); err != nil {
		t.Fatal(err)
	}
	r, err := k.store.RetryOutbox(k.ctx, k.owner, second.MessageID)
	if err != nil || r.State != signoff.OutboxPending {
		t.Fatalf("re-drive = %+v, %v", r, err)
	}
	c3, err := k.store.ClaimMessage(k.ctx, second.MessageID, "w1", time.Minute)
	if err != nil || c3.Message.MessageID != second.MessageID || c3.Budget != 1 || c3.Attempt != 3 {
		t.Fatalf("claim after re-drive = %+v, %v (want a fresh budget under the same id)", c3, err)
	}
}

// testCards: a requested decision opens one card however often its job
// runs; wrong responders are discarded and the card asked again; a stale
// answer is dropped; an expired card fails closed.
func testCards(t *testing.T, b Backend) {
	k := newOutboxKit(t, b, "http://127.0.0.1:9/hook", false)
	d := &notify.Desk{Store: k.store, Now: k.clock.Now}
	op := k.actor(t, "olga", signoff.RoleOperator)
	viewer := k.actor(t, "vera", signoff.RoleViewer)
	c := k.bug(t, "")
	dec, err := k.store.RequestDecision(k.ctx, k.owner, c.ID, "release", json.RawMessage(`{"version":"1.4.2"}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	var job *rivertype.JobRow
	for _, j := range k.jobs(t, "card_open") {
		var a signoff.CardJob
		if json.Unmarshal(j.EncodedArgs, &a) == nil && a.CaseID == c.ID {
			job = j
		}
	}
	if job == nil {
		t.Fatal("no card job was enqueued with the decision")
	}
	var args signoff.CardJob
	_ = json.Unmarshal(job.EncodedArgs, &args)
	// The same job twice (a retry) opens one card, under the job's UUIDv5.
	cd, opened, err := d.OpenCard(k.ctx, job.ID, job.CreatedAt, args)
	if err != nil || !opened || cd.ID != outbox.CardID(job.ID, job.CreatedAt) {
		t.Fatalf("OpenCard = %+v, %v, %v", cd, opened, err)
	}
	again, opened, err := d.OpenCard(k.ctx, job.ID, job.CreatedAt, args)
	if err != nil || opened || again.ID != cd.ID {
		t.Fatalf("second OpenCard = %+v, %v, %v", again, opened, err)
	}
	// A different job for the same cause cannot open a second card either.
	if _, opened, _ := d.OpenCard(k.ctx, job.ID+1000, job.CreatedAt, args); opened {
		t.Fatal("a second job for the same decision opened a second card")
	}
	cards, err := k.store.CardsOfCase(k.ctx, k.ws.ID, c.ID)
	if err != nil || len(cards) != 1 {
		t.Fatalf("cards = %d, %v; want exactly one", len(cards), err)
	}
	if got := k.eventsOf(t, "card.opened"); len(got) != 1 {
		t.Fatalf("card.opened events = %d", len(got))
	}
	if cd.Kind != "decision:release" || cd.SubjectDigest != dec.SubjectDigest || cd.DecisionID != dec.ID || !cd.ExpiresAt.Equal(dec.ExpiresAt) {
		t.Fatalf("card = %+v, want the release decision over %s", cd, dec.SubjectDigest)
	}
	answer := func(r card.Responder, option, prefix string) card.Outcome {
		t.Helper()
		_, o, err := k.store.AnswerCard(k.ctx, sqlstore.CardAnswerInput{WorkspaceID: k.ws.ID, CardID: cd.ID, Channel: "slack:" + k.ch.ID,
			PlatformUser: "T1/U1", Responder: r, Option: option, DigestPrefix: prefix, Allowed: true, Evaluate: card.Evaluate})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	// Wrong responders: the viewer, an unmapped chat user. Each is
	// discarded and the card asked again.
	if o := answer(card.Responder{ActorID: viewer.ID, Role: viewer.Role}, "approve", dec.SubjectDigest[:12]); o != card.WrongResponder {
		t.Fatalf("viewer's answer = %s", o)
	}
	// Re-asking is throttled: another wrong answer at once is recorded but
	// asks nobody again; after sqlstore.ReaskEvery it does.
	if o := answer(card.Responder{}, "approve", dec.SubjectDigest[:12]); o != card.WrongResponder {
		t.Fatalf("unmapped answer = %s", o)
	}
	if got, _ := k.store.CardByID(k.ctx, k.ws.ID, cd.ID); got.Asked != 2 || len(k.eventsOf(t, "card.reasked")) != 1 {
		t.Fatalf("a second wrong answer at once re-asked: asked %d", got.Asked)
	}
	k.clock.Advance(sqlstore.ReaskEvery)
	if o := answer(card.Responder{}, "approve", dec.SubjectDigest[:12]); o != card.WrongResponder {
		t.Fatalf("unmapped answer = %s", o)
	}
	got, err := k.store.CardByID(k.ctx, k.ws.ID, cd.ID)
	if err != nil || got.Status != signoff.CardOpen || got.Asked != 3 || len(k.eventsOf(t, "card.reasked")) != 2 {
		t.Fatalf("after three wrong answers: %+v, %v", got, err)
	}
	// The re-ask notifies the channel again, carrying the card.
	reasks := 0
	for _, m := range k.messages(t, "") {
		if m.EventType == "card.reasked" && m.CardID == cd.ID {
			reasks++
		}
	}
	if reasks != 2 {
		t.Fatalf("re-ask messages = %d, want 2", reasks)
	}
	// The rule is handed in by the desk: an answer nobody judges is
	// refused before anything is written, even from the right person
	// quoting the right digest (the answers listed below stay five).
	if _, o, err := k.store.AnswerCard(k.ctx, sqlstore.CardAnswerInput{WorkspaceID: k.ws.ID, CardID: cd.ID, Channel: "slack:" + k.ch.ID,
		PlatformUser: "T1/U1", Responder: card.Responder{ActorID: op.ID, Role: op.Role}, Option: "approve", DigestPrefix: dec.SubjectDigest[:12], Allowed: true}); err == nil || o == card.Accepted {
		t.Fatalf("an answer without a rule = %s, %v; want refused", o, err)
	}
	// The operator quoting the digest is accepted; the decision is then
	// made elsewhere (the notify desk does it), and a later answer is
	// stale.
	if o := answer(card.Responder{ActorID: op.ID, Role: op.Role}, "approve", dec.SubjectDigest[:12]); o != card.Accepted {
		t.Fatalf("operator's answer = %s", o)
	}
	if _, err := k.store.Decide(k.ctx, op, dec.ID, dec.SubjectDigest, true, "ok"); err != nil {
		t.Fatal(err)
	}
	if got, _ := k.store.CardByID(k.ctx, k.ws.ID, cd.ID); got.Status != signoff.CardClosed {
		t.Fatalf("card after its decision = %s, want closed", got.Status)
	}
	if o := answer(card.Responder{ActorID: op.ID, Role: op.Role}, "reject", dec.SubjectDigest[:12]); o != card.Stale {
		t.Fatalf("answer after the decision = %s, want stale", o)
	}
	// Expiry fails closed, whoever answers.
	c2 := k.bug(t, "")
	dec2, err := k.store.RequestDecision(k.ctx, k.owner, c2.ID, "merge", json.RawMessage(`{"x":1}`), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var job2 *rivertype.JobRow
	for _, j := range k.jobs(t, "card_open") {
		var a signoff.CardJob
		if json.Unmarshal(j.EncodedArgs, &a) == nil && a.CaseID == c2.ID {
			job2, args = j, a
		}
	}
	cd2, _, err := d.OpenCard(k.ctx, job2.ID, job2.CreatedAt, args)
	if err != nil || cd2.Kind != "decision:merge" {
		t.Fatalf("second card = %+v, %v", cd2, err)
	}
	k.clock.Advance(time.Hour)
	_, o, err := k.store.AnswerCard(k.ctx, sqlstore.CardAnswerInput{WorkspaceID: k.ws.ID, CardID: cd2.ID, Channel: "web",
		Responder: card.Responder{ActorID: op.ID, Role: op.Role}, Option: "approve", DigestPrefix: dec2.SubjectDigest, Allowed: true, Evaluate: card.Evaluate})
	if err != nil || o != card.ExpiredCard {
		t.Fatalf("answer at expiry = %s, %v", o, err)
	}
	if got, _ := k.store.CardByID(k.ctx, k.ws.ID, cd2.ID); got.Status != signoff.CardExpired || len(k.eventsOf(t, "card.expired")) != 1 {
		t.Fatalf("expired card = %+v", got)
	}
	// The expiry job: nothing before the card's time, expired after it.
	c3 := k.bug(t, "")
	if _, err := k.store.RequestDecision(k.ctx, k.owner, c3.ID, "merge", json.RawMessage(`{"y":1}`), time.Hour); err != nil {
		t.Fatal(err)
	}
	var job3 *rivertype.JobRow
	for _, j := range k.jobs(t, "card_open") {
		var a signoff.CardJob
		if json.Unmarshal(j.EncodedArgs, &a) == nil && a.CaseID == c3.ID {
			job3, args = j, a
		}
	}
	cd3, _, err := d.OpenCard(k.ctx, job3.ID, job3.CreatedAt, args)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.store.ExpireCard(k.ctx, k.ws.ID, cd3.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := k.store.CardByID(k.ctx, k.ws.ID, cd3.ID); got.Status != signoff.CardOpen {
		t.Fatalf("card expired early: %s", got.Status)
	}
	k.clock.Advance(time.Hour)
	if err := k.store.ExpireCard(k.ctx, k.ws.ID, cd3.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := k.store.CardByID(k.ctx, k.ws.ID, cd3.ID); got.Status != signoff.CardExpired || got.ClosedAt == nil || len(k.eventsOf(t, "card.expired")) != 2 {
		t.Fatalf("card after its expiry job = %+v", got)
	}
	// Every answer is on record with its outcome.
	_, answers, err := k.store.ListCards(k.ctx, k.owner, c.ID)
	if err != nil || len(answers) != 5 || answers[0].Outcome != string(card.WrongResponder) || answers[3].Outcome != string(card.Accepted) || answers[4].Outcome != string(card.Stale) {
		t.Fatalf("answers = %+v, %v", answers, err)
	}
	k.verify(t)
}

// receiver is a webhook endpoint on 127.0.0.1 that verifies every request
// and answers from a script.
type receiver struct {
	t      testing.TB
	srv    *httptest.Server
	key    []byte
	mu     sync.Mutex
	seen   []received
	script func(n int, id string) (status int, delay time.Duration)
	// block, when set, holds the first request until it is closed.
	block chan struct{}
}

type received struct {
	id   string
	at   time.Time
	body []byte
}

func newReceiver(t testing.TB, secret string, script func(n int, id string) (int, time.Duration)) *receiver {
	key, err := webhook.ParseSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{t: t, key: key, script: script}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	id, _, err := webhook.Verify(r.key, req.Header, body, time.Now(), 0)
	if err != nil {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	r.mu.Lock()
	n := len(r.seen)
	r.seen = append(r.seen, received{id: id, at: time.Now(), body: body})
	block := r.block
	r.mu.Unlock()
	status, delay := http.StatusOK, time.Duration(0)
	if r.script != nil {
		status, delay = r.script(n, id)
	}
	if block != nil && n == 0 {
		select {
		case <-block:
		case <-req.Context().Done():
		}
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-req.Context().Done():
			return
		}
	}
	w.WriteHeader(status)
}

func (r *receiver) got() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// testOutboxDelivery: a receiver that fails three times, times out once,
// then succeeds gets the message delivered through River, with the same
// id each time, each attempt on record, and the waits growing.
func testOutboxDelivery(t *testing.T, b Backend) {
	rcv := newReceiver(t, webhook.NewSecret(), nil)
	k := newOutboxKit(t, b, rcv.srv.URL+"/hook", true)
	key, _ := webhook.ParseSecret(k.secret)
	rcv.key = key
	rcv.script = func(n int, _ string) (int, time.Duration) {
		switch {
		case n < 3:
			return http.StatusInternalServerError, 0
		case n == 3:
			return http.StatusOK, 2 * time.Second // longer than an attempt may take
		}
		return http.StatusOK, 0
	}
	base := 100 * time.Millisecond
	d := &notify.Desk{Store: k.store, Retry: outbox.Retry{Base: base, Max: 5 * time.Second, Attempts: 10}, AttemptTimeout: 300 * time.Millisecond, Lease: 5 * time.Second}
	w := river.NewWorkers()
	d.AddWorkers(w)
	stop, err := k.store.StartJobsWith(k.ctx, w, sqlstore.JobsConfig{Workers: 1, Notify: 4, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer stop(context.Background())
	err = k.store.InTx(k.ctx, func(tx *sql.Tx) error {
		_, err := k.store.AppendTx(k.ctx, tx, k.ws.ID, sqlstore.EventInput{Type: "probe.delivery", ActorID: k.owner.ID, Payload: map[string]any{"n": 1}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var m signoff.OutboxMessage
	deadline := time.Now().Add(30 * time.Second)
	for {
		ms := k.messages(t, "")
		if len(ms) > 0 && ms[0].EventType == "probe.delivery" && ms[0].State == signoff.OutboxDelivered {
			m = ms[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not delivered in time: %+v", ms)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, atts, err := k.store.GetOutbox(k.ctx, k.owner, m.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if len(atts) != 5 {
		t.Fatalf("attempts = %d, want 5: %+v", len(atts), atts)
	}
	wantStatus := []int{500, 500, 500, 0, 200}
	for i, a := range atts {
		if a.Status != wantStatus[i] || a.FinishedAt == nil || (i < 4) != (a.Error != "") {
			t.Errorf("attempt %d = %+v, want status %d", i+1, a, wantStatus[i])
		}
	}
	seen := rcv.got()
	if len(seen) != 5 {
		t.Fatalf("receiver saw %d requests, want 5", len(seen))
	}
	for _, s := range seen {
		if s.id != m.MessageID {
			t.Fatalf("receiver saw id %s, want %s every time", s.id, m.MessageID)
		}
		var ev outbox.Event
		if err := json.Unmarshal(s.body, &ev); err != nil || ev.ID != m.MessageID || ev.Type != "probe.delivery" || ev.Data.Seq != m.Seq {
			t.Fatalf("body = %s (%v)", s.body, err)
		}
	}
	// The wait before retry n is at least half of base·2^(n-1): it grows.
	for i := 1; i < len(atts); i++ {
		gap := atts[i].StartedAt.Sub(*atts[i-1].FinishedAt)
		low := base << (i - 1) / 2
		t.Logf("wait before attempt %d: %s (schedule at least %s)", i+1, gap, low)
		if gap < low-5*time.Millisecond {
			t.Errorf("wait before attempt %d = %s, below the schedule's %s", i+1, gap, low)
		}
	}
}

// testOutboxCrash: a worker cut off mid-delivery acknowledges nothing;
// once its lease runs out another worker delivers; the receiver sees the
// same id both times and nothing is lost.
func testOutboxCrash(t *testing.T, b Backend) {
	rcv := newReceiver(t, webhook.NewSecret(), nil)
	rcv.block = make(chan struct{})
	k := newOutboxKit(t, b, rcv.srv.URL+"/hook", true)
	rcv.key, _ = webhook.ParseSecret(k.secret)
	lease := 700 * time.Millisecond
	a := &notify.Desk{Store: k.store, Holder: "worker-a", Lease: lease, AttemptTimeout: 10 * time.Second}
	bw := &notify.Desk{Store: k.store, Holder: "worker-b", Lease: lease, AttemptTimeout: 10 * time.Second}
	k.bug(t, "")
	ms := k.messages(t, signoff.OutboxPending)
	if len(ms) != 1 {
		t.Fatalf("pending = %d", len(ms))
	}
	id := ms[0].MessageID
	ctx, crash := context.WithCancel(k.ctx)
	done := make(chan error, 1)
	go func() { _, err := a.Deliver(ctx, id); done <- err }()
	for len(rcv.got()) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	crash() // worker a dies mid-delivery
	if err := <-done; !errors.Is(err, notify.ErrNoAck) {
		t.Fatalf("crashed delivery = %v, want ErrNoAck", err)
	}
	close(rcv.block)
	var wait *sqlstore.WaitError
	if _, err := bw.Deliver(k.ctx, id); !errors.As(err, &wait) {
		t.Fatalf("delivery under a live lease = %v, want a wait", err)
	}
	time.Sleep(time.Until(wait.Until) + 10*time.Millisecond)
	res, err := bw.Deliver(k.ctx, id)
	if err != nil || res.Err != nil || res.Attempt != 2 {
		t.Fatalf("delivery after the lease = %+v, %v", res, err)
	}
	m, atts, err := k.store.GetOutbox(k.ctx, k.owner, id)
	if err != nil || m.State != signoff.OutboxDelivered || len(atts) != 2 || atts[0].FinishedAt != nil || atts[0].Holder != "worker-a" || atts[1].Holder != "worker-b" {
		t.Fatalf("after the crash: %+v, attempts %+v, %v", m, atts, err)
	}
	seen := rcv.got()
	if len(seen) != 2 || seen[0].id != id || seen[1].id != id {
		t.Fatalf("receiver saw %+v, want the same id twice", seen)
	}
}

// BenchDeliver measures, through River with its default notify queue
// size, deliveries per second to a loopback receiver (a backlog of b.N
// messages drained) and the latency from a state change's commit to the
// receiver (events appended at about 100 a second while workers run).
func BenchDeliver(b *testing.B, bk Backend) {
	rcv := newReceiver(b, webhook.NewSecret(), nil)
	k := newOutboxKit(b, bk, rcv.srv.URL+"/hook", true)
	rcv.key, _ = webhook.ParseSecret(k.secret)
	d := &notify.Desk{Store: k.store}
	w := river.NewWorkers()
	d.AddWorkers(w)
	appendOne := func(n int) signoff.Event {
		evs, err := k.store.Append(k.ctx, k.ws.ID, sqlstore.EventInput{Type: "probe.bench", ActorID: k.owner.ID, Payload: map[string]any{"n": n}})
		if err != nil {
			b.Fatal(err)
		}
		return evs[0]
	}
	for i := range b.N {
		appendOne(i)
	}
	waitFor := func(n int) {
		deadline := time.Now().Add(10 * time.Minute)
		for len(rcv.got()) < n {
			if time.Now().After(deadline) {
				b.Fatalf("delivered %d of %d", len(rcv.got()), n)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	b.ResetTimer()
	start := time.Now()
	stop, err := k.store.StartJobsWith(k.ctx, w, sqlstore.JobsConfig{Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer stop(context.Background())
	waitFor(b.N)
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
	// Latency: commit to arrival, one event every 10 ms.
	const probes = 200
	commits := map[int64]time.Time{}
	for i := range probes {
		e := appendOne(i)
		commits[e.Seq] = time.Now()
		time.Sleep(10 * time.Millisecond)
	}
	waitFor(b.N + probes)
	var lat []time.Duration
	for _, r := range rcv.got()[b.N:] {
		var ev outbox.Event
		if err := json.Unmarshal(r.body, &ev); err != nil {
			b.Fatal(err)
		}
		if at, ok := commits[ev.Data.Seq]; ok {
			lat = append(lat, r.at.Sub(at))
		}
	}
	slices.Sort(lat)
	if len(lat) == 0 {
		b.Fatal("no latency samples")
	}
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.Log(fmt.Sprintf("%d deliveries in %s; latency p50 %s p99 %s over %d", b.N, elapsed, lat[len(lat)/2], lat[len(lat)*99/100], len(lat)))
}
