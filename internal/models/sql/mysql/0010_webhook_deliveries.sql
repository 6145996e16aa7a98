-- Outbound webhook deliveries (tenant, platform and system webhooks): one
-- row per event and webhook, written by the webhooks outbox subscriber
-- (the unique key makes a redelivered event a no-op) and attempted by the
-- dispatching replica until it succeeds, runs out of attempts ("dead") or
-- its webhook is disabled ("held" until re-enabled). next_attempt_at is the
-- persisted backoff, so retries survive a restart. hook_group keeps test
-- servers sharing one database apart (the outbox group).

CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  hook_group VARCHAR(64) NOT NULL DEFAULT '',
  hook_kind VARCHAR(32) NOT NULL,
  hook_id BIGINT NOT NULL,
  tenant VARCHAR(64) NOT NULL DEFAULT '',
  event_id VARCHAR(64) NOT NULL,
  event_type VARCHAR(64) NOT NULL,
  body MEDIUMTEXT NOT NULL,
  status VARCHAR(16) NOT NULL,
  attempts INT NOT NULL DEFAULT 0,
  next_attempt_at VARCHAR(32) NOT NULL,
  last_attempt_at VARCHAR(32) NULL,
  last_status_code INT NOT NULL DEFAULT 0,
  last_latency_ms INT NOT NULL DEFAULT 0,
  last_error VARCHAR(512) NOT NULL DEFAULT '',
  last_response VARCHAR(1024) NOT NULL DEFAULT '',
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  UNIQUE KEY uq_webhook_deliveries_event (hook_kind, hook_id, event_id),
  KEY ix_webhook_deliveries_due (hook_group, status, next_attempt_at),
  KEY ix_webhook_deliveries_hook (hook_kind, hook_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
