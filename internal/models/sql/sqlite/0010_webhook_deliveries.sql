-- Outbound webhook deliveries (tenant, platform and system webhooks): one
-- row per event and webhook, written by the webhooks outbox subscriber
-- (the unique key makes a redelivered event a no-op) and attempted by the
-- dispatching replica until it succeeds, runs out of attempts ("dead") or
-- its webhook is disabled ("held" until re-enabled). next_attempt_at is the
-- persisted backoff, so retries survive a restart. hook_group keeps test
-- servers sharing one database apart (the outbox group).

CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  hook_group TEXT NOT NULL DEFAULT '',
  hook_kind TEXT NOT NULL,
  hook_id INTEGER NOT NULL,
  tenant TEXT NOT NULL DEFAULT '',
  event_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  body TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at TEXT NOT NULL,
  last_attempt_at TEXT NULL,
  last_status_code INTEGER NOT NULL DEFAULT 0,
  last_latency_ms INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT '',
  last_response TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE UNIQUE INDEX IF NOT EXISTS uq_webhook_deliveries_event ON webhook_deliveries (hook_kind, hook_id, event_id);
CREATE INDEX IF NOT EXISTS ix_webhook_deliveries_due ON webhook_deliveries (hook_group, status, next_attempt_at);
CREATE INDEX IF NOT EXISTS ix_webhook_deliveries_hook ON webhook_deliveries (hook_kind, hook_id, id);
