-- Imported voicemail messages (package media, resources.md §5.2): one row per
-- message, its converted audio in the media library under
-- <tenant>/voicemail-imports/. The unique external_id per tenant makes
-- concurrent repeats one object. FreeSWITCH's mod_voicemail gets each
-- message through vm_inject on every node (the voicemail.imported event).
-- tenant_id has no foreign key, as with recordings.

CREATE TABLE IF NOT EXISTS voicemail_imports (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  external_id TEXT NOT NULL,
  mailbox TEXT NOT NULL,
  folder TEXT NOT NULL,
  received_at TEXT NOT NULL,
  caller_id_name TEXT NOT NULL DEFAULT '',
  caller_id_number TEXT NOT NULL DEFAULT '',
  duration INTEGER NOT NULL,
  is_read INTEGER NOT NULL DEFAULT 0,
  path TEXT NOT NULL,
  source_format TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  content_sha256 TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (tenant_id, external_id)
);
