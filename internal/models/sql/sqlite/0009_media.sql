-- Media imports (package media). recordings indexes imported call
-- recordings (one row per file in the media library; unique external_id per
-- tenant makes concurrent repeats one object). moh_files lists the files of
-- a music-on-hold class. import_jobs and import_errors track bulk CDR
-- imports: rows_done and byte_offset move in the transaction that inserts a
-- batch, so a resumed job starts exactly after the last committed batch.
-- tenant_id has no foreign key, as with CDRs and messages: history outlives
-- a tenant and never blocks deleting it.

CREATE TABLE IF NOT EXISTS recordings (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  external_id TEXT NOT NULL,
  started_at TEXT NOT NULL,
  type TEXT NOT NULL,
  src TEXT NOT NULL,
  dst TEXT NOT NULL,
  extension TEXT NOT NULL DEFAULT '',
  direction TEXT NOT NULL DEFAULT '',
  duration INTEGER NOT NULL,
  path TEXT NOT NULL,
  source_format TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  content_sha256 TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (tenant_id, external_id)
);

CREATE TABLE IF NOT EXISTS moh_files (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  moh_id INTEGER NOT NULL,
  external_id TEXT NOT NULL,
  filename TEXT NOT NULL,
  path TEXT NOT NULL,
  source_format TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  size_bytes INTEGER NOT NULL,
  content_sha256 TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (tenant_id, external_id)
);

CREATE TABLE IF NOT EXISTS import_jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  tenant TEXT NOT NULL,
  kind TEXT NOT NULL,
  format TEXT NOT NULL,
  source TEXT NOT NULL,
  source_bytes INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL,
  byte_offset INTEGER NOT NULL DEFAULT 0,
  rows_done INTEGER NOT NULL DEFAULT 0,
  created_rows INTEGER NOT NULL DEFAULT 0,
  duplicate_rows INTEGER NOT NULL DEFAULT 0,
  failed_rows INTEGER NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT '',
  lease_owner TEXT NOT NULL DEFAULT '',
  lease_until TEXT NOT NULL DEFAULT '',
  claims INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  finished_at TEXT NULL
);

CREATE TABLE IF NOT EXISTS import_errors (
  job_id INTEGER NOT NULL,
  row_no INTEGER NOT NULL,
  external_id TEXT NOT NULL DEFAULT '',
  code TEXT NOT NULL,
  error TEXT NOT NULL,
  PRIMARY KEY (job_id, row_no)
);

CREATE INDEX IF NOT EXISTS ix_recordings_started ON recordings (tenant_id, started_at);
CREATE INDEX IF NOT EXISTS ix_recordings_extension ON recordings (tenant_id, extension, started_at);
CREATE INDEX IF NOT EXISTS ix_moh_files_class ON moh_files (moh_id);
CREATE INDEX IF NOT EXISTS ix_import_jobs_status ON import_jobs (status, lease_until);
