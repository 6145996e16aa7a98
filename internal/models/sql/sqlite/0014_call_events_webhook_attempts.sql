-- Call lifecycle events and per-attempt webhook history (see the MySQL
-- migration of the same number for what each holds).

CREATE TABLE IF NOT EXISTS call_events (
  node TEXT NOT NULL,
  uuid TEXT NOT NULL,
  event TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (node, uuid, event)
);

CREATE INDEX IF NOT EXISTS ix_call_events_created ON call_events (created_at);

CREATE TABLE IF NOT EXISTS webhook_attempts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  attempted_at TEXT NOT NULL,
  status_code INTEGER NOT NULL DEFAULT 0,
  latency_ms INTEGER NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT '',
  response TEXT NOT NULL DEFAULT ''
);

CREATE INDEX IF NOT EXISTS ix_webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

ALTER TABLE webhook_deliveries ADD COLUMN subject TEXT NOT NULL DEFAULT '';
