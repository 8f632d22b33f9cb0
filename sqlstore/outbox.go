package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/signoff-dev/signoff"
)

// Sealer seals channel secrets at rest (secretbox.Box). aad binds a sealed
// value to its row.
type Sealer interface {
	Seal(plaintext []byte, aad string) string
	Open(sealed, aad string) ([]byte, error)
	KeyID() string
}

// SetSealer gives the store the key that seals channel secrets. Without
// one, channels with secrets cannot be stored or delivered to.
func (s *DB) SetSealer(b Sealer) { s.sealer = b }

// notifyMaxAttempts is River's bound for a notification job. The outbox
// parks a message as dead by its own count (outbox.Retry.Attempts, in the notify desk) well
// before it, and cancels the job; River's bound is only a backstop.
const notifyMaxAttempts = 1000

const channelColumns = `id, workspace_id, name, kind, events, settings, sealed, key_id, chat_approval, enabled, created_by, created_at, updated_at`

type channelRow struct {
	signoff.Channel
	sealed string
}

func scanChannel(sc scanner, c *channelRow) error {
	var events, settings, chat string
	var enabled int64
	var ca, ua int64
	if err := sc.Scan(&c.ID, &c.WorkspaceID, &c.Name, &c.Kind, &events, &settings, &c.sealed, &c.KeyID, &chat, &enabled, &c.CreatedBy, &ca, &ua); err != nil {
		return err
	}
	c.Enabled, c.CreatedAt, c.UpdatedAt = enabled != 0, fromMicros(ca), fromMicros(ua)
	if err := json.Unmarshal([]byte(events), &c.Events); err != nil {
		return fmt.Errorf("channel %s events: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(settings), &c.Settings); err != nil {
		return fmt.Errorf("channel %s settings: %w", c.ID, err)
	}
	return json.Unmarshal([]byte(chat), &c.ChatApproval)
}

// PutChannel implements signoff.OutboxService.
func (s *DB) PutChannel(ctx context.Context, by signoff.Actor, in signoff.ChannelInput) (signoff.Channel, error) {
	if by.Role != signoff.RoleOwner && !isServer(by) {
		return signoff.Channel{}, signoff.Errorf(signoff.EFORBIDDEN, "only owners configure notification channels")
	}
	if len(in.Events) == 0 {
		in.Events = s.outbox.DefaultEvents()
	}
	if in.ChatApproval == nil {
		in.ChatApproval = []string{}
	}
	if err := s.outbox.CheckChannel(in); err != nil {
		return signoff.Channel{}, err
	}
	if err := s.outbox.CheckHosts(ctx, in); err != nil {
		return signoff.Channel{}, err
	}
	if s.sealer == nil {
		return signoff.Channel{}, signoff.Errorf(signoff.EUNAVAILABLE, "no secret key: set SIGNOFF_SECRET_KEY or give the server its key file")
	}
	if u, err := url.Parse(in.Secrets.URL); err == nil {
		in.Settings.URLHost = u.Host
	}
	events, _ := json.Marshal(in.Events)
	settings, _ := json.Marshal(in.Settings)
	chat, _ := json.Marshal(in.ChatApproval)
	secrets, _ := json.Marshal(in.Secrets)
	enabled := in.Enabled == nil || *in.Enabled
	var out signoff.Channel
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		now := s.clock()
		var id string
		err := tx.QueryRowContext(ctx, `SELECT id FROM notify_channels WHERE workspace_id = $1 AND name = $2`, by.WorkspaceID, in.Name).Scan(&id)
		fresh := errors.Is(err, sql.ErrNoRows)
		if err != nil && !fresh {
			return err
		}
		if fresh {
			id = signoff.NewID(signoff.PrefixChannel)
		}
		sealed := s.sealer.Seal(secrets, id)
		if fresh {
			_, err = tx.ExecContext(ctx, `INSERT INTO notify_channels (`+channelColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)`,
				id, by.WorkspaceID, in.Name, in.Kind, string(events), string(settings), sealed, s.sealer.KeyID(), string(chat), boolInt(enabled), by.ID, micros(now))
		} else {
			_, err = tx.ExecContext(ctx, `UPDATE notify_channels SET kind = $1, events = $2, settings = $3, sealed = $4, key_id = $5, chat_approval = $6, enabled = $7, updated_at = $8
				WHERE id = $9 AND workspace_id = $10`, in.Kind, string(events), string(settings), sealed, s.sealer.KeyID(), string(chat), boolInt(enabled), micros(now), id, by.WorkspaceID)
		}
		if err != nil {
			return fmt.Errorf("put channel %s: %w", in.Name, err)
		}
		// The ledger records the configuration, never the secrets.
		if _, err := s.appendEvent(ctx, tx, by.WorkspaceID, "", "channel.put", by.ID, map[string]any{
			"channel_id": id, "name": in.Name, "kind": in.Kind, "events": in.Events, "chat_approval": in.ChatApproval,
			"enabled": enabled, "secrets": in.Secrets.Names(), "key_id": s.sealer.KeyID(),
		}); err != nil {
			return err
		}
		row, err := s.getChannel(ctx, tx, by.WorkspaceID, id)
		out = row.Channel
		out.Secrets = in.Secrets.Names()
		return err
	})
	return out, err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *DB) getChannel(ctx context.Context, q queryer, ws, id string) (channelRow, error) {
	var c channelRow
	err := scanChannel(q.QueryRowContext(ctx, `SELECT `+channelColumns+` FROM notify_channels WHERE id = $1 AND workspace_id = $2`, id, ws), &c)
	if errors.Is(err, sql.ErrNoRows) {
		return c, signoff.Errorf(signoff.ENOTFOUND, "channel not found")
	}
	return c, err
}

// ListChannels implements signoff.OutboxService: owners, operators and
// viewers see channels, never their secrets.
func (s *DB) ListChannels(ctx context.Context, by signoff.Actor) ([]signoff.Channel, error) {
	if !isStaff(by) {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not read channels", by.Role)
	}
	rows, err := queryAll(ctx, s.db, scanChannel, `SELECT `+channelColumns+` FROM notify_channels WHERE workspace_id = $1 ORDER BY name`, by.WorkspaceID)
	if err != nil {
		return nil, fmt.Errorf("list channels: %w", err)
	}
	out := make([]signoff.Channel, len(rows))
	for i, r := range rows {
		out[i] = r.Channel
		if sec, err := s.openSecrets(r); err == nil {
			out[i].Secrets = sec.Names()
		}
	}
	return out, nil
}

// ChannelWithSecrets returns channel id of ws with its secrets opened, for
// the deliverer and the inbound chat endpoints. It is not on any API path.
func (s *DB) ChannelWithSecrets(ctx context.Context, ws, id string) (signoff.Channel, signoff.ChannelSecrets, error) {
	r, err := s.getChannel(ctx, s.db, ws, id)
	if err != nil {
		return signoff.Channel{}, signoff.ChannelSecrets{}, err
	}
	sec, err := s.openSecrets(r)
	return r.Channel, sec, err
}

// ChannelByID finds a channel by id alone (inbound chat requests name
// only the channel; its workspace follows from it).
func (s *DB) ChannelByID(ctx context.Context, id string) (signoff.Channel, signoff.ChannelSecrets, error) {
	if err := signoff.CheckID("channel", signoff.PrefixChannel, id); err != nil {
		return signoff.Channel{}, signoff.ChannelSecrets{}, err
	}
	var ws string
	err := s.db.QueryRowContext(ctx, `SELECT workspace_id FROM notify_channels WHERE id = $1`, id).Scan(&ws)
	if errors.Is(err, sql.ErrNoRows) {
		return signoff.Channel{}, signoff.ChannelSecrets{}, signoff.Errorf(signoff.ENOTFOUND, "channel not found")
	} else if err != nil {
		return signoff.Channel{}, signoff.ChannelSecrets{}, err
	}
	return s.ChannelWithSecrets(ctx, ws, id)
}

func (s *DB) openSecrets(r channelRow) (signoff.ChannelSecrets, error) {
	var sec signoff.ChannelSecrets
	if s.sealer == nil {
		return sec, signoff.Errorf(signoff.EUNAVAILABLE, "no secret key to open channel %s", r.ID)
	}
	pt, err := s.sealer.Open(r.sealed, r.ID)
	if err != nil {
		return sec, signoff.Errorf(signoff.EUNAVAILABLE, "channel %s: secrets do not open with this server's key (sealed with key %s, this is %s)", r.ID, r.KeyID, s.sealer.KeyID())
	}
	if err := json.Unmarshal(pt, &sec); err != nil {
		return sec, fmt.Errorf("channel %s secrets: %w", r.ID, err)
	}
	return sec, nil
}

// subscriber is what the enqueue hook needs of a channel.
type subscriber struct {
	id, kind string
	events   []string
}

// notifyAppended runs in every ledger append's transaction, after the
// events are written: it enqueues one notification job (and outbox row)
// per event and subscribed channel (subs, read before the append took the
// ledger head), opens card jobs for decisions that became pending, and
// closes cards whose case or decision moved on. The messages therefore
// exist exactly when the events do. Jobs and rows are written in one
// statement each, because the ledger head stays locked until commit.
// Without a job queue (a store opened without River) nothing is enqueued.
func (s *DB) notifyAppended(ctx context.Context, tx *sql.Tx, evs []signoff.Event, subs []subscriber) error {
	if s.river == nil {
		return nil
	}
	var msgs []outboxMsg
	for i := range evs {
		e := &evs[i]
		if err := s.cardsOnEvent(ctx, tx, *e); err != nil {
			return err
		}
		for _, c := range subs {
			if s.wants(c, *e) {
				msgs = append(msgs, outboxMsg{e, c.id})
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(msgs))
	for i, m := range msgs {
		params[i] = river.InsertManyParams{Args: signoff.NotifyJob{WorkspaceID: m.e.WorkspaceID, ChannelID: m.ch, Seq: m.e.Seq},
			InsertOpts: &river.InsertOpts{MaxAttempts: notifyMaxAttempts, Queue: NotifyQueue}}
	}
	res, err := s.insertManyTx(ctx, tx, params)
	if err != nil {
		return fmt.Errorf("enqueue %d notifications: %w", len(msgs), err)
	}
	if len(res) != len(msgs) {
		return fmt.Errorf("enqueue notifications: %d jobs for %d messages", len(res), len(msgs))
	}
	// Match jobs to messages by their arguments, not by the order River
	// answers in.
	jobs := make(map[outboxKey]*rivertype.JobRow, len(res))
	for _, r := range res {
		var a signoff.NotifyJob
		if err := json.Unmarshal(r.Job.EncodedArgs, &a); err != nil {
			return fmt.Errorf("enqueue notifications: job %d: %w", r.Job.ID, err)
		}
		jobs[outboxKey{a.ChannelID, a.Seq}] = r.Job
	}
	now := micros(s.clock())
	for len(msgs) > 0 {
		n := min(len(msgs), insertChunk)
		if err := s.insertOutboxRows(ctx, tx, msgs[:n], jobs, now); err != nil {
			return err
		}
		msgs = msgs[n:]
	}
	return nil
}

// insertChunk bounds the rows of one multi-row INSERT (PostgreSQL takes
// at most 65,535 parameters a statement).
const insertChunk = 1000

type outboxMsg struct {
	e  *signoff.Event
	ch string
}

type outboxKey struct {
	ch  string
	seq int64
}

func (s *DB) insertOutboxRows(ctx context.Context, tx *sql.Tx, msgs []outboxMsg, jobs map[outboxKey]*rivertype.JobRow, now int64) error {
	var q strings.Builder
	q.WriteString(`INSERT INTO outbox (message_id, job_id, workspace_id, channel_id, case_id, seq, event_type, card_id, state,
		attempts, budget_from, last_error, lease_token, lease_holder, lease_until, next_at, created_at) VALUES `)
	args := make([]any, 0, 9*len(msgs))
	for i, m := range msgs {
		job, ok := jobs[outboxKey{m.ch, m.e.Seq}]
		if !ok {
			return fmt.Errorf("enqueue notification %d for %s: no job", m.e.Seq, m.ch)
		}
		cardID := ""
		if strings.HasPrefix(m.e.Type, "card.") {
			var p struct {
				CardID string `json:"card_id"`
			}
			if json.Unmarshal(m.e.Payload, &p) == nil {
				cardID = p.CardID
			}
		}
		if i > 0 {
			q.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, 'pending', 0, 0, '', '', '', 0, 0, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8, n+9)
		args = append(args, s.outbox.MessageID(job.ID, job.CreatedAt), job.ID, m.e.WorkspaceID, m.ch, m.e.CaseID, m.e.Seq, m.e.Type, cardID, now)
	}
	if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
		return fmt.Errorf("enqueue %d notifications: %w", len(msgs), err)
	}
	return nil
}

const subscribersQuery = `SELECT id, kind, events FROM notify_channels WHERE workspace_id = $1 AND enabled = 1 ORDER BY id`

// subscribers reads ws's enabled channels in tx. It runs in every append,
// so a store from Open uses the statement it prepared; inside tx it is
// prepared on tx's own connection, never on another one.
func (s *DB) subscribers(ctx context.Context, tx *sql.Tx, ws string) ([]subscriber, error) {
	var rows *sql.Rows
	var err error
	if s.subsStmt != nil {
		rows, err = tx.StmtContext(ctx, s.subsStmt).QueryContext(ctx, ws)
	} else {
		rows, err = tx.QueryContext(ctx, subscribersQuery, ws)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []subscriber
	for rows.Next() {
		var c subscriber
		var events string
		if err := rows.Scan(&c.id, &c.kind, &events); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(events), &c.events); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// reporterStates are the moves an e-mail channel tells reporters about.
var reporterStates = []string{"needs_info", "awaiting_reporter_repro", "awaiting_reporter_confirmation", "verified", "reopened", "closed", "dropped", "duplicate"}

// wants reports whether channel c is told about e. An e-mail channel
// writes to reporters, so it only carries their case's moves that concern
// them, whatever its event patterns say.
func (s *DB) wants(c subscriber, e signoff.Event) bool {
	if c.kind != signoff.ChannelEmail {
		return s.outbox.Match(c.events, e.Type)
	}
	if e.Type != "case.transitioned" || e.CaseID == "" {
		return false
	}
	var p struct {
		To string `json:"to"`
	}
	return json.Unmarshal(e.Payload, &p) == nil && slices.Contains(reporterStates, p.To)
}

// NotifyQueue is the River queue notifications are delivered from, so
// that slow agent jobs never hold them up.
const NotifyQueue = signoff.QueueOutbox

// Claim is a message leased to one deliverer (signoff.OutboxClaim).
type Claim = signoff.OutboxClaim

// ErrSettled: the message is delivered, dead or skipped
// (signoff.ErrSettled).
var ErrSettled = signoff.ErrSettled

// WaitError says a message cannot be delivered yet (signoff.WaitError).
type WaitError = signoff.WaitError

const outboxColumns = `message_id, job_id, workspace_id, channel_id, case_id, seq, event_type, card_id, state, attempts, budget_from, last_error, lease_holder, lease_until, created_at, delivered_at`

func scanOutbox(sc scanner, m *signoff.OutboxMessage) error {
	var lease, ca int64
	var budget int
	var da sql.NullInt64
	if err := sc.Scan(&m.MessageID, &m.JobID, &m.WorkspaceID, &m.ChannelID, &m.CaseID, &m.Seq, &m.EventType, &m.CardID, &m.State,
		&m.Attempts, &budget, &m.LastError, &m.LeaseHolder, &lease, &ca, &da); err != nil {
		return err
	}
	m.CreatedAt = fromMicros(ca)
	if lease != 0 {
		t := fromMicros(lease)
		m.LeaseUntil = &t
	}
	if da.Valid {
		t := fromMicros(da.Int64)
		m.DeliveredAt = &t
	}
	return nil
}

// MessageFor returns the outbox message of a notification job.
func (s *DB) MessageFor(ctx context.Context, j signoff.NotifyJob) (signoff.OutboxMessage, error) {
	var m signoff.OutboxMessage
	err := scanOutbox(s.db.QueryRowContext(ctx, `SELECT `+outboxColumns+` FROM outbox WHERE workspace_id = $1 AND channel_id = $2 AND seq = $3`,
		j.WorkspaceID, j.ChannelID, j.Seq), &m)
	if errors.Is(err, sql.ErrNoRows) {
		return m, signoff.Errorf(signoff.ENOTFOUND, "no outbox message for event %d on %s", j.Seq, j.ChannelID)
	}
	return m, err
}

// ClaimMessage leases message id to holder for lease and records the
// attempt's start. It refuses (WaitError) while another holder's lease
// runs, or while an earlier message of the same case to the same channel
// is still pending: a case's messages go out in ledger order. A message
// parked as dead does not hold back the ones after it.
func (s *DB) ClaimMessage(ctx context.Context, id, holder string, lease time.Duration) (Claim, error) {
	var c Claim
	ctx = context.WithoutCancel(ctx)
	err := s.grouped(ctx, func(tx *sql.Tx) error {
		now := s.clock()
		var m signoff.OutboxMessage
		var token string
		var budget int
		var lu, ca int64
		var da sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT message_id, job_id, workspace_id, channel_id, case_id, seq, event_type, card_id, state, attempts, budget_from,
			last_error, lease_holder, lease_until, created_at, delivered_at, lease_token FROM outbox WHERE message_id = $1`+s.d.ForUpdate, id).Scan(
			&m.MessageID, &m.JobID, &m.WorkspaceID, &m.ChannelID, &m.CaseID, &m.Seq, &m.EventType, &m.CardID, &m.State, &m.Attempts, &budget,
			&m.LastError, &m.LeaseHolder, &lu, &ca, &da, &token)
		if errors.Is(err, sql.ErrNoRows) {
			return signoff.Errorf(signoff.ENOTFOUND, "outbox message %s not found", id)
		} else if err != nil {
			return err
		}
		m.CreatedAt = fromMicros(ca)
		if m.State != signoff.OutboxPending {
			return ErrSettled
		}
		if token != "" && lu > micros(now) {
			return &WaitError{Until: fromMicros(lu), Reason: fmt.Sprintf("message %s is leased to %s", id, m.LeaseHolder)}
		}
		if m.CaseID != "" {
			// Wait for the earlier messages: at least a moment, and as long
			// as the latest retry time among them, so a case stuck behind a
			// failing receiver waits with it instead of polling.
			var earlier int
			var next sql.NullInt64
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*), MAX(next_at) FROM outbox WHERE channel_id = $1 AND case_id = $2 AND seq < $3 AND state = 'pending'`,
				m.ChannelID, m.CaseID, m.Seq).Scan(&earlier, &next); err != nil {
				return err
			}
			if earlier > 0 {
				until := now.Add(200 * time.Millisecond)
				if next.Valid && next.Int64 > micros(until) {
					until = fromMicros(next.Int64)
				}
				return &WaitError{Until: until, Reason: fmt.Sprintf("%d earlier message(s) of case %s are pending", earlier, m.CaseID)}
			}
		}
		var b [16]byte
		rand.Read(b[:])
		token = hex.EncodeToString(b[:])
		until := now.Add(lease)
		m.Attempts++
		if _, err := tx.ExecContext(ctx, `UPDATE outbox SET attempts = $1, lease_token = $2, lease_holder = $3, lease_until = $4 WHERE message_id = $5`,
			m.Attempts, token, holder, micros(until), id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO outbox_attempts (message_id, attempt, holder, started_at, status, error) VALUES ($1, $2, $3, $4, 0, '')`,
			id, m.Attempts, holder, micros(now)); err != nil {
			return err
		}
		m.LeaseHolder, m.LeaseUntil = holder, &until
		c = Claim{Message: m, Token: token, Attempt: m.Attempts, Budget: m.Attempts - budget}
		return nil
	})
	return c, err
}

// ErrLeaseLost: the acknowledgement came after the lease ran out and
// another worker took the message; the attempt is recorded, the message's
// state is the new holder's to set.
var ErrLeaseLost = errors.New("outbox: lease lost")

// Result is how a delivery attempt ended (signoff.OutboxResult).
type Result = signoff.OutboxResult

// FinishMessage records how the attempt of claim c ended and, if c's
// lease is still the message's, settles or releases it. Only the lease
// holder's token acknowledges.
func (s *DB) FinishMessage(ctx context.Context, c Claim, r Result) error {
	lost := false
	ctx = context.WithoutCancel(ctx)
	err := s.grouped(ctx, func(tx *sql.Tx) error {
		lost = false
		now := s.clock()
		errText := ""
		if r.Err != nil {
			errText = truncate(r.Err.Error(), 2000)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE outbox_attempts SET finished_at = $1, status = $2, error = $3 WHERE message_id = $4 AND attempt = $5`,
			micros(now), r.Status, errText, c.Message.MessageID, c.Attempt); err != nil {
			return err
		}
		state := signoff.OutboxPending
		var delivered any
		switch {
		case r.Skipped:
			state = signoff.OutboxSkipped
		case r.Err == nil:
			state, delivered = signoff.OutboxDelivered, micros(now)
		case r.Dead:
			state = signoff.OutboxDead
		}
		var next int64
		if state == signoff.OutboxPending && !r.NextAt.IsZero() {
			next = micros(r.NextAt)
		}
		res, err := tx.ExecContext(ctx, `UPDATE outbox SET state = $1, last_error = $2, delivered_at = $3, lease_token = '', lease_holder = '', lease_until = 0, next_at = $4
			WHERE message_id = $5 AND lease_token = $6`, state, errText, delivered, next, c.Message.MessageID, c.Token)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			// The attempt stays on record; the message is the new holder's.
			lost = true
		}
		return nil
	})
	if err == nil && lost {
		return ErrLeaseLost
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// ListOutbox implements signoff.OutboxService.
func (s *DB) ListOutbox(ctx context.Context, by signoff.Actor, f signoff.OutboxFilter) ([]signoff.OutboxMessage, error) {
	if !isStaff(by) {
		return nil, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not read the outbox", by.Role)
	}
	q := `SELECT ` + outboxColumns + ` FROM outbox WHERE workspace_id = $1`
	args := []any{by.WorkspaceID}
	if f.State != "" {
		if !slices.Contains([]string{signoff.OutboxPending, signoff.OutboxDelivered, signoff.OutboxDead, signoff.OutboxSkipped}, f.State) {
			return nil, signoff.Errorf(signoff.EINVALID, "state must be pending, delivered, dead or skipped")
		}
		args = append(args, f.State)
		q += fmt.Sprintf(` AND state = $%d`, len(args))
	}
	if f.ChannelID != "" {
		args = append(args, f.ChannelID)
		q += fmt.Sprintf(` AND channel_id = $%d`, len(args))
	}
	if f.CaseID != "" {
		args = append(args, f.CaseID)
		q += fmt.Sprintf(` AND case_id = $%d`, len(args))
	}
	args = append(args, clampLimit(f.Limit))
	q += fmt.Sprintf(` ORDER BY created_at DESC, seq DESC LIMIT $%d`, len(args))
	out, err := queryAll(ctx, s.db, scanOutbox, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list outbox: %w", err)
	}
	return out, nil
}

// GetOutbox implements signoff.OutboxService.
func (s *DB) GetOutbox(ctx context.Context, by signoff.Actor, id string) (signoff.OutboxMessage, []signoff.DeliveryAttempt, error) {
	if !isStaff(by) {
		return signoff.OutboxMessage{}, nil, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not read the outbox", by.Role)
	}
	var m signoff.OutboxMessage
	err := scanOutbox(s.db.QueryRowContext(ctx, `SELECT `+outboxColumns+` FROM outbox WHERE message_id = $1 AND workspace_id = $2`, id, by.WorkspaceID), &m)
	if errors.Is(err, sql.ErrNoRows) {
		return m, nil, signoff.Errorf(signoff.ENOTFOUND, "outbox message not found")
	} else if err != nil {
		return m, nil, err
	}
	atts, err := s.attempts(ctx, id)
	return m, atts, err
}

func (s *DB) attempts(ctx context.Context, id string) ([]signoff.DeliveryAttempt, error) {
	return queryAll(ctx, s.db, func(sc scanner, a *signoff.DeliveryAttempt) error {
		var st int64
		var fin sql.NullInt64
		if err := sc.Scan(&a.Attempt, &a.Holder, &st, &fin, &a.Status, &a.Error); err != nil {
			return err
		}
		a.StartedAt = fromMicros(st)
		if fin.Valid {
			t := fromMicros(fin.Int64)
			a.FinishedAt = &t
		}
		return nil
	}, `SELECT attempt, holder, started_at, finished_at, status, error FROM outbox_attempts WHERE message_id = $1 ORDER BY attempt`, id)
}

// RetryOutbox implements signoff.OutboxService: a dead message gets a
// fresh retry schedule and its job is made available again, in one
// transaction. Operators and owners re-drive.
func (s *DB) RetryOutbox(ctx context.Context, by signoff.Actor, id string) (signoff.OutboxMessage, error) {
	if !canIssue(by) && by.ID != cliActorID {
		return signoff.OutboxMessage{}, signoff.Errorf(signoff.EFORBIDDEN, "role %s may not re-drive messages", by.Role)
	}
	if s.river == nil {
		return signoff.OutboxMessage{}, signoff.Errorf(signoff.EUNAVAILABLE, "this store has no job queue")
	}
	var m signoff.OutboxMessage
	err := s.InTx(ctx, func(tx *sql.Tx) error {
		err := scanOutbox(tx.QueryRowContext(ctx, `SELECT `+outboxColumns+` FROM outbox WHERE message_id = $1 AND workspace_id = $2`+s.d.ForUpdate, id, by.WorkspaceID), &m)
		if errors.Is(err, sql.ErrNoRows) {
			return signoff.Errorf(signoff.ENOTFOUND, "outbox message not found")
		} else if err != nil {
			return err
		}
		if m.State != signoff.OutboxDead {
			return &signoff.Error{Code: signoff.ECONFLICT, State: m.State, Message: fmt.Sprintf("message %s is %s: only dead messages are re-driven", id, m.State)}
		}
		var enabled int64
		if err := tx.QueryRowContext(ctx, `SELECT enabled FROM notify_channels WHERE id = $1`, m.ChannelID).Scan(&enabled); err != nil {
			return err
		}
		if enabled == 0 {
			return &signoff.Error{Code: signoff.ECONFLICT, State: m.State, Message: fmt.Sprintf("channel %s is disabled: enable it before re-driving its messages", m.ChannelID)}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE outbox SET state = 'pending', budget_from = attempts, next_at = 0 WHERE message_id = $1`, id); err != nil {
			return err
		}
		job, err := s.retryTx(ctx, tx, m.JobID)
		if err != nil {
			return fmt.Errorf("re-drive job %d: %w", m.JobID, err)
		}
		// River leaves a running job alone: the worker that parked the
		// message has not let go of it yet.
		if job.State != rivertype.JobStateAvailable && job.State != rivertype.JobStateScheduled {
			return &signoff.Error{Code: signoff.ECONFLICT, State: m.State, Message: fmt.Sprintf("message %s's job is still %s; try again in a moment", id, job.State)}
		}
		// The receiver's own words (last_error) stay in the outbox: they
		// do not belong on the signed ledger.
		if _, err := s.appendEvent(ctx, tx, by.WorkspaceID, m.CaseID, "outbox.redriven", by.ID, map[string]any{
			"message_id": id, "channel_id": m.ChannelID, "seq": m.Seq, "attempts": m.Attempts,
		}); err != nil {
			return err
		}
		m.State = signoff.OutboxPending
		return nil
	})
	return m, err
}

// replayKeep is how long a taken chat request is remembered: Slack's
// signatures expire after five minutes; Mattermost's requests carry no
// time, so theirs are kept for a month.
const replayKeep = 31 * 24 * time.Hour

// FirstChatRequest records key (a request's signature or body digest) and
// reports whether it had not been taken before, in any process sharing
// the database. Old keys are pruned as new ones come.
func (s *DB) FirstChatRequest(ctx context.Context, key string) (bool, error) {
	first := false
	err := s.InTx(context.WithoutCancel(ctx), func(tx *sql.Tx) error {
		now := s.clock()
		if _, err := tx.ExecContext(ctx, `DELETE FROM chat_replays WHERE seen_at < $1`, micros(now.Add(-replayKeep))); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO chat_replays (key, seen_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`, key, micros(now))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		first = n == 1
		return err
	})
	return first, err
}
