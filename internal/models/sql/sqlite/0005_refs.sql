-- References between configuration objects, kept like the number plan:
-- every reference a resource declares (by id, by name or number, inside
-- destinations and nested lists) is one row, written in the transaction
-- that writes its referrer, so deleting or renaming a referenced object is
-- refused (409) with its referrers listed. tenant_id is the referrer's
-- tenant (0 for platform objects); to_tenant_id the target's (0 for
-- platform targets). Rows for existing objects are filled in at start.

CREATE TABLE IF NOT EXISTS refs (
  tenant_id INTEGER NOT NULL DEFAULT 0,
  from_resource TEXT NOT NULL,
  from_key TEXT NOT NULL,
  from_label TEXT NOT NULL DEFAULT '',
  field TEXT NOT NULL,
  to_tenant_id INTEGER NOT NULL DEFAULT 0,
  to_resource TEXT NOT NULL,
  to_col TEXT NOT NULL,
  to_key TEXT NOT NULL,
  PRIMARY KEY (tenant_id, from_resource, from_key, field, to_resource, to_col, to_key)
);

CREATE INDEX IF NOT EXISTS ix_refs_target ON refs (to_tenant_id, to_resource, to_col, to_key);

-- One-off data steps a migration leaves for the binary (written in Go):
-- the row is deleted in the transaction that does the step, so a crash
-- in between only makes the next start do it again.
CREATE TABLE IF NOT EXISTS pending_steps (
  name TEXT NOT NULL PRIMARY KEY
);
INSERT OR IGNORE INTO pending_steps (name) VALUES ('backfill_refs');
