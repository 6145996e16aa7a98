-- The transactional outbox: every configuration write records its changes
-- here in the same transaction (ids handed out in commit order through the
-- outbox_seq row), a dispatcher on one replica at a time (the
-- outbox_leases row) delivers them to in-process subscribers, and each
-- subscriber's progress is kept in outbox_progress.

CREATE TABLE IF NOT EXISTS outbox (
  id INTEGER NOT NULL PRIMARY KEY,
  resource TEXT NOT NULL,
  op TEXT NOT NULL,
  tenant TEXT NOT NULL DEFAULT '',
  obj_key TEXT NOT NULL,
  before_json TEXT NULL,
  after_json TEXT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS outbox_seq (
  name TEXT NOT NULL PRIMARY KEY,
  next_id INTEGER NOT NULL
);

INSERT OR IGNORE INTO outbox_seq (name, next_id) VALUES ('outbox', 1);

CREATE TABLE IF NOT EXISTS outbox_progress (
  subscriber TEXT NOT NULL PRIMARY KEY,
  last_id INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT '',
  updated_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS outbox_leases (
  name TEXT NOT NULL PRIMARY KEY,
  holder TEXT NOT NULL DEFAULT '',
  expires_ms INTEGER NOT NULL DEFAULT 0
);
