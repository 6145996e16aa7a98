-- Call detail records, one per ended channel, written by the live-call
-- tracker. The tenant is kept by name without a foreign key: a CDR outlives
-- its tenant and its channel may belong to none. UNIQUE (node, uuid) makes
-- a retried delivery a no-op.

CREATE TABLE IF NOT EXISTS cdrs (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant VARCHAR(64) NOT NULL DEFAULT '',
  channel_id VARCHAR(128) NOT NULL,
  uuid VARCHAR(64) NOT NULL,
  node VARCHAR(128) NOT NULL,
  direction VARCHAR(16) NOT NULL DEFAULT '',
  caller_id_name VARCHAR(128) NOT NULL DEFAULT '',
  caller_id_number VARCHAR(64) NOT NULL DEFAULT '',
  destination VARCHAR(64) NOT NULL DEFAULT '',
  extension VARCHAR(64) NOT NULL DEFAULT '',
  started_at VARCHAR(32) NOT NULL,
  answered_at VARCHAR(32) NULL,
  ended_at VARCHAR(32) NOT NULL,
  duration_seconds BIGINT NOT NULL DEFAULT 0,
  billsec BIGINT NOT NULL DEFAULT 0,
  hangup_cause VARCHAR(64) NOT NULL DEFAULT '',
  recording_path VARCHAR(512) NOT NULL DEFAULT '',
  created_at VARCHAR(32) NOT NULL,
  UNIQUE KEY uq_cdrs_node_uuid (node, uuid),
  KEY ix_cdrs_tenant_started (tenant, started_at),
  KEY ix_cdrs_started (started_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
