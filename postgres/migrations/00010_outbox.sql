-- +goose Up
-- Where a workspace's notifications go. Secrets (webhook URLs that carry
-- tokens, signing secrets, bot tokens, SMTP passwords) are sealed with the
-- server's secret key, bound to the channel's id; settings hold what may
-- be shown. chat_approval lists the card kinds a chat command may answer
-- as an approval through this channel.
CREATE TABLE notify_channels (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    name          TEXT NOT NULL,
    kind          TEXT NOT NULL,
    events        TEXT NOT NULL,
    settings      TEXT NOT NULL,
    sealed        TEXT NOT NULL,
    key_id        TEXT NOT NULL,
    chat_approval TEXT NOT NULL,
    enabled       BIGINT NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE UNIQUE INDEX notify_channels_name ON notify_channels (workspace_id, name);

-- One row per message: a ledger event (seq) for one channel, enqueued in
-- the transaction that appended the event. The message id is the UUIDv5 of
-- its River job. A worker delivers only under its lease and acknowledges
-- only with its lease token; state is pending, delivered, dead or skipped.
CREATE TABLE outbox (
    message_id   TEXT PRIMARY KEY,
    job_id       BIGINT NOT NULL,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    channel_id   TEXT NOT NULL REFERENCES notify_channels (id),
    case_id      TEXT NOT NULL,
    seq          BIGINT NOT NULL,
    event_type   TEXT NOT NULL,
    card_id      TEXT NOT NULL,
    state        TEXT NOT NULL,
    attempts     BIGINT NOT NULL,
    -- budget_from is attempts when the message was last re-driven: each
    -- re-drive gets a full retry schedule again.
    budget_from  BIGINT NOT NULL,
    last_error   TEXT NOT NULL,
    lease_token  TEXT NOT NULL,
    lease_holder TEXT NOT NULL,
    lease_until  BIGINT NOT NULL,
    -- next_at is when a failed message is tried again (0: now), so the
    -- messages of its case behind it wait that long, not in a busy loop.
    next_at      BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    delivered_at BIGINT
);
CREATE UNIQUE INDEX outbox_event ON outbox (channel_id, seq);
CREATE INDEX outbox_order ON outbox (channel_id, case_id, seq);
CREATE INDEX outbox_state ON outbox (workspace_id, state, created_at);
CREATE INDEX outbox_job ON outbox (job_id);

-- Every delivery attempt, as it ended (or began, for one still running or
-- cut short by a crash).
CREATE TABLE outbox_attempts (
    message_id  TEXT NOT NULL REFERENCES outbox (message_id),
    attempt     BIGINT NOT NULL,
    holder      TEXT NOT NULL,
    started_at  BIGINT NOT NULL,
    finished_at BIGINT,
    status      BIGINT NOT NULL,
    error       TEXT NOT NULL,
    PRIMARY KEY (message_id, attempt)
);

-- Approval cards: one per pending human decision, opened by a job whose
-- UUIDv5 is the card's id, so a retried job reopens the same card.
CREATE TABLE cards (
    id             TEXT PRIMARY KEY,
    workspace_id   TEXT NOT NULL REFERENCES workspaces (id),
    case_id        TEXT NOT NULL REFERENCES cases (id),
    kind           TEXT NOT NULL,
    cause_seq      BIGINT NOT NULL,
    case_state     TEXT NOT NULL,
    case_version   BIGINT NOT NULL,
    decision_id    TEXT NOT NULL,
    subject_digest TEXT NOT NULL,
    options        TEXT NOT NULL,
    addressee      TEXT NOT NULL,
    status         TEXT NOT NULL,
    asked          BIGINT NOT NULL,
    reasked_at     BIGINT NOT NULL,
    opened_at      BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    closed_at      BIGINT,
    answer         TEXT NOT NULL
);
CREATE UNIQUE INDEX cards_cause ON cards (workspace_id, cause_seq);
CREATE INDEX cards_case ON cards (workspace_id, case_id, opened_at);
CREATE INDEX cards_open ON cards (status, expires_at);

-- Every answer a card received, kept whatever its outcome (accepted,
-- wrong_responder, stale, expired, refused).
CREATE TABLE card_answers (
    id            TEXT PRIMARY KEY,
    card_id       TEXT NOT NULL REFERENCES cards (id),
    workspace_id  TEXT NOT NULL REFERENCES workspaces (id),
    channel       TEXT NOT NULL,
    platform_user TEXT NOT NULL,
    actor_id      TEXT NOT NULL,
    option        TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    detail        TEXT NOT NULL,
    created_at    BIGINT NOT NULL
);
CREATE INDEX card_answers_card ON card_answers (card_id, created_at);

-- Chat users mapped to registered people. A chat answer from an unmapped
-- user decides nothing.
CREATE TABLE chat_users (
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    platform     TEXT NOT NULL,
    team_id      TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    actor_id     TEXT NOT NULL REFERENCES actors (id),
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (workspace_id, platform, team_id, user_id)
);

-- Chat requests already taken, so a replayed one is refused in every
-- process: Slack's by their signature, Mattermost's (which carry no
-- timestamp) by their whole body.
CREATE TABLE chat_replays (
    key     TEXT PRIMARY KEY,
    seen_at BIGINT NOT NULL
);
CREATE INDEX chat_replays_seen ON chat_replays (seen_at);

-- +goose Down
DROP TABLE chat_replays;
DROP TABLE chat_users;
DROP TABLE card_answers;
DROP TABLE cards;
DROP TABLE outbox_attempts;
DROP TABLE outbox;
DROP TABLE notify_channels;
