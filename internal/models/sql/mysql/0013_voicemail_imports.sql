-- Imported voicemail messages (package media, resources.md §5.2): one row per
-- message, its converted audio in the media library under
-- <tenant>/voicemail-imports/. The unique external_id per tenant makes
-- concurrent repeats one object. FreeSWITCH's mod_voicemail gets each
-- message through vm_inject on every node (the voicemail.imported event).
-- tenant_id has no foreign key, as with recordings.

CREATE TABLE IF NOT EXISTS voicemail_imports (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  external_id VARCHAR(128) NOT NULL,
  mailbox VARCHAR(16) NOT NULL,
  folder VARCHAR(8) NOT NULL,
  received_at VARCHAR(32) NOT NULL,
  caller_id_name VARCHAR(255) NOT NULL DEFAULT '',
  caller_id_number VARCHAR(64) NOT NULL DEFAULT '',
  duration BIGINT NOT NULL,
  is_read TINYINT(1) NOT NULL DEFAULT 0,
  path VARCHAR(512) NOT NULL,
  source_format VARCHAR(16) NOT NULL,
  size_bytes BIGINT NOT NULL,
  duration_ms BIGINT NOT NULL,
  content_sha256 CHAR(64) NOT NULL,
  created_at VARCHAR(32) NOT NULL,
  UNIQUE KEY uq_voicemail_imports_external (tenant_id, external_id),
  KEY ix_voicemail_imports_mailbox (tenant_id, mailbox)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
