-- References between configuration objects, kept like the number plan:
-- every reference a resource declares (by id, by name or number, inside
-- destinations and nested lists) is one row, written in the transaction
-- that writes its referrer, so deleting or renaming a referenced object is
-- refused (409) with its referrers listed. tenant_id is the referrer's
-- tenant (0 for platform objects); to_tenant_id the target's (0 for
-- platform targets). Rows for existing objects are filled in at start.

CREATE TABLE IF NOT EXISTS refs (
  tenant_id BIGINT NOT NULL DEFAULT 0,
  from_resource VARCHAR(64) NOT NULL,
  from_key VARCHAR(128) NOT NULL,
  from_label VARCHAR(255) NOT NULL DEFAULT '',
  field VARCHAR(128) NOT NULL,
  to_tenant_id BIGINT NOT NULL DEFAULT 0,
  to_resource VARCHAR(64) NOT NULL,
  to_col VARCHAR(64) NOT NULL,
  to_key VARCHAR(128) NOT NULL,
  PRIMARY KEY (tenant_id, from_resource, from_key, field, to_resource, to_col, to_key),
  KEY ix_refs_target (to_tenant_id, to_resource, to_col, to_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- One-off data steps a migration leaves for the binary (written in Go):
-- the row is deleted in the transaction that does the step, so a crash
-- in between only makes the next start do it again.
CREATE TABLE IF NOT EXISTS pending_steps (
  name VARCHAR(64) NOT NULL PRIMARY KEY
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
INSERT IGNORE INTO pending_steps (name) VALUES ('backfill_refs');
