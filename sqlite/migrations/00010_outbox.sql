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
    enabled       INTEGER NOT NULL,
    created_by    TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE UNIQUE INDEX notify_channels_name ON notify_channels (workspace_id, name);

-- One row per message: a ledger event (seq) for one channel, enqueued in
-- the transaction that appended the event. The message id is the UUIDv5 of
-- its River job. A worker delivers only under its lease and acknowledges
-- only with its lease token; state is pending, delivered, dead or skipped.
CREATE TABLE outbox (
    message_id   TEXT PRIMARY KEY,
    job_id       INTEGER NOT NULL,
    workspace_id TEXT NOT NULL REFERENCES workspaces (id),
    channel_id   TEXT NOT NULL REFERENCES notify_channels (id),
    case_id      TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    event_type   TEXT NOT NULL,
    card_id      TEXT NOT NULL,
    state        TEXT NOT NULL,
    attempts     INTEGER NOT NULL,
    -- budget_from is attempts when the message was last re-driven: each
    -- re-drive gets a full retry schedule again.
    budget_from  INTEGER NOT NULL,
    last_error   TEXT NOT NULL,
    lease_token  TEXT NOT NULL,
    lease_holder TEXT NOT NULL,
    lease_until  INTEGER NOT NULL,
    -- next_at is when a failed message is tried again (0: now), so the
    -- messages of its case behind it wait that long, not in a busy loop.
    next_at      INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    delivered_at INTEGER
);
CREATE UNIQUE INDEX outbox_event ON outbox (channel_id, seq);
CREATE INDEX outbox_order ON outbox (channel_id, case_id, seq);
CREATE INDEX outbox_state ON outbox (workspace_id, state, created_at);
CREATE INDEX outbox_job ON outbox (job_id);

-- Every delivery attempt, as it ended (or began, for one still running or
-- cut short by a crash).
CREATE TABLE outbox_attempts (
    message_id  TEXT NOT NULL REFERENCES outbox (message_id),
    attempt     INTEGER NOT NULL,
    holder      TEXT NOT NULL,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    status      INTEGER NOT NULL,
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
    cause_seq      INTEGER NOT NULL,
    case_state     TEXT NOT NULL,
    case_version   INTEGER NOT NULL,
    decision_id    TEXT NOT NULL,
    subject_digest TEXT NOT NULL,
    options        TEXT NOT NULL,
    addressee      TEXT NOT NULL,
    status         TEXT NOT NULL,
    asked          INTEGER NOT NULL,
    reasked_at     INTEGER NOT NULL,
    opened_at      INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    closed_at      INTEGER,
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
    created_at    INTEGER NOT NULL
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
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (workspace_id, platform, team_id, user_id)
);

-- Chat requests already taken, so a replayed one is refused in every
-- process: Slack's by their signature, Mattermost's (which carry no
-- timestamp) by their whole body.
CREATE TABLE chat_replays (
    key     TEXT PRIMARY KEY,
    seen_at INTEGER NOT NULL
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
