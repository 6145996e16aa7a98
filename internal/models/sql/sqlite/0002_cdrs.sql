-- Call detail records, one per ended channel, written by the live-call
-- tracker. The tenant is kept by name without a foreign key: a CDR outlives
-- its tenant and its channel may belong to none. UNIQUE (node, uuid) makes
-- a retried delivery a no-op.

CREATE TABLE IF NOT EXISTS cdrs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant TEXT COLLATE NOCASE NOT NULL DEFAULT '',
  channel_id TEXT NOT NULL,
  uuid TEXT NOT NULL,
  node TEXT NOT NULL,
  direction TEXT NOT NULL DEFAULT '',
  caller_id_name TEXT NOT NULL DEFAULT '',
  caller_id_number TEXT NOT NULL DEFAULT '',
  destination TEXT NOT NULL DEFAULT '',
  extension TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL,
  answered_at TEXT NULL,
  ended_at TEXT NOT NULL,
  duration_seconds INTEGER NOT NULL DEFAULT 0,
  billsec INTEGER NOT NULL DEFAULT 0,
  hangup_cause TEXT NOT NULL DEFAULT '',
  recording_path TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  UNIQUE (node, uuid)
);

CREATE INDEX IF NOT EXISTS ix_cdrs_tenant_started ON cdrs (tenant, started_at);
CREATE INDEX IF NOT EXISTS ix_cdrs_started ON cdrs (started_at);
