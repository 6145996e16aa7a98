-- Messages sent and received through messaging channels, and the send
-- outbox. A send writes its message and its outbox row in one transaction;
-- a worker claims outbox rows with a lease (so one replica sends each
-- message), and deletes the row in the transaction that records the
-- provider's answer. tenant_id has no foreign key: like CDRs, message
-- history outlives a deleted tenant or channel and never blocks deleting it.

CREATE TABLE IF NOT EXISTS messages (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  channel_id BIGINT NOT NULL,
  direction VARCHAR(8) NOT NULL,
  to_number VARCHAR(32) NOT NULL,
  from_number VARCHAR(32) NOT NULL DEFAULT '',
  body TEXT NOT NULL,
  template_id VARCHAR(64) NOT NULL DEFAULT '',
  variables TEXT NOT NULL,
  contact_id BIGINT NULL,
  encoding VARCHAR(8) NOT NULL DEFAULT '',
  segments INT NOT NULL DEFAULT 0,
  status VARCHAR(16) NOT NULL,
  status_rank INT NOT NULL DEFAULT 0,
  provider_message_id VARCHAR(128) NOT NULL DEFAULT '',
  error_code VARCHAR(64) NOT NULL DEFAULT '',
  error_message VARCHAR(512) NOT NULL DEFAULT '',
  attempts INT NOT NULL DEFAULT 0,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  sent_at VARCHAR(32) NULL,
  delivered_at VARCHAR(32) NULL,
  KEY ix_messages_tenant_created (tenant_id, created_at),
  KEY ix_messages_window (channel_id, direction, from_number, created_at),
  KEY ix_messages_provider_id (channel_id, provider_message_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS messaging_outbox (
  message_id BIGINT NOT NULL PRIMARY KEY,
  channel_id BIGINT NOT NULL,
  next_attempt_at VARCHAR(32) NOT NULL,
  lease_owner VARCHAR(64) NOT NULL DEFAULT '',
  lease_until VARCHAR(32) NOT NULL DEFAULT '',
  KEY ix_messaging_outbox_due (next_attempt_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
