-- Media imports (package media). recordings indexes imported call
-- recordings (one row per file in the media library; unique external_id per
-- tenant makes concurrent repeats one object). moh_files lists the files of
-- a music-on-hold class. import_jobs and import_errors track bulk CDR
-- imports: rows_done and byte_offset move in the transaction that inserts a
-- batch, so a resumed job starts exactly after the last committed batch.
-- tenant_id has no foreign key, as with CDRs and messages: history outlives
-- a tenant and never blocks deleting it.

CREATE TABLE IF NOT EXISTS recordings (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  external_id VARCHAR(128) NOT NULL,
  started_at VARCHAR(32) NOT NULL,
  type VARCHAR(16) NOT NULL,
  src VARCHAR(64) NOT NULL,
  dst VARCHAR(64) NOT NULL,
  extension VARCHAR(64) NOT NULL DEFAULT '',
  direction VARCHAR(16) NOT NULL DEFAULT '',
  duration BIGINT NOT NULL,
  path VARCHAR(512) NOT NULL,
  source_format VARCHAR(16) NOT NULL,
  size_bytes BIGINT NOT NULL,
  duration_ms BIGINT NOT NULL,
  content_sha256 CHAR(64) NOT NULL,
  created_at VARCHAR(32) NOT NULL,
  UNIQUE KEY uq_recordings_external (tenant_id, external_id),
  KEY ix_recordings_started (tenant_id, started_at),
  KEY ix_recordings_extension (tenant_id, extension, started_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS moh_files (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  moh_id BIGINT NOT NULL,
  external_id VARCHAR(128) NOT NULL,
  filename VARCHAR(128) NOT NULL,
  path VARCHAR(512) NOT NULL,
  source_format VARCHAR(16) NOT NULL,
  duration_ms BIGINT NOT NULL,
  size_bytes BIGINT NOT NULL,
  content_sha256 CHAR(64) NOT NULL,
  created_at VARCHAR(32) NOT NULL,
  UNIQUE KEY uq_moh_files_external (tenant_id, external_id),
  KEY ix_moh_files_class (moh_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS import_jobs (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  tenant VARCHAR(64) NOT NULL,
  kind VARCHAR(16) NOT NULL,
  format VARCHAR(8) NOT NULL,
  source VARCHAR(512) NOT NULL,
  source_bytes BIGINT NOT NULL DEFAULT 0,
  status VARCHAR(16) NOT NULL,
  byte_offset BIGINT NOT NULL DEFAULT 0,
  rows_done BIGINT NOT NULL DEFAULT 0,
  created_rows BIGINT NOT NULL DEFAULT 0,
  duplicate_rows BIGINT NOT NULL DEFAULT 0,
  failed_rows BIGINT NOT NULL DEFAULT 0,
  error VARCHAR(512) NOT NULL DEFAULT '',
  lease_owner VARCHAR(64) NOT NULL DEFAULT '',
  lease_until VARCHAR(32) NOT NULL DEFAULT '',
  claims BIGINT NOT NULL DEFAULT 0,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  finished_at VARCHAR(32) NULL,
  KEY ix_import_jobs_status (status, lease_until)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS import_errors (
  job_id BIGINT NOT NULL,
  row_no BIGINT NOT NULL,
  external_id VARCHAR(128) NOT NULL DEFAULT '',
  code VARCHAR(64) NOT NULL,
  error VARCHAR(512) NOT NULL,
  PRIMARY KEY (job_id, row_no)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
