-- Messages sent and received through messaging channels, and the send
-- outbox. A send writes its message and its outbox row in one transaction;
-- a worker claims outbox rows with a lease (so one replica sends each
-- message), and deletes the row in the transaction that records the
-- provider's answer. tenant_id has no foreign key: like CDRs, message
-- history outlives a deleted tenant or channel and never blocks deleting it.

CREATE TABLE IF NOT EXISTS messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  channel_id INTEGER NOT NULL,
  direction TEXT NOT NULL,
  to_number TEXT NOT NULL,
  from_number TEXT NOT NULL DEFAULT '',
  body TEXT NOT NULL DEFAULT '',
  template_id TEXT NOT NULL DEFAULT '',
  variables TEXT NOT NULL DEFAULT '[]',
  contact_id INTEGER NULL,
  encoding TEXT NOT NULL DEFAULT '',
  segments INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  status_rank INTEGER NOT NULL DEFAULT 0,
  provider_message_id TEXT NOT NULL DEFAULT '',
  error_code TEXT NOT NULL DEFAULT '',
  error_message TEXT NOT NULL DEFAULT '',
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  sent_at TEXT NULL,
  delivered_at TEXT NULL
);

CREATE INDEX IF NOT EXISTS ix_messages_tenant_created ON messages (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS ix_messages_window ON messages (channel_id, direction, from_number, created_at);
CREATE INDEX IF NOT EXISTS ix_messages_provider_id ON messages (channel_id, provider_message_id);

CREATE TABLE IF NOT EXISTS messaging_outbox (
  message_id INTEGER NOT NULL PRIMARY KEY,
  channel_id INTEGER NOT NULL,
  next_attempt_at TEXT NOT NULL,
  lease_owner TEXT NOT NULL DEFAULT '',
  lease_until TEXT NOT NULL DEFAULT ''
);

CREATE INDEX IF NOT EXISTS ix_messaging_outbox_due ON messaging_outbox (next_attempt_at);
