-- Received faxes and their e-mail delivery queue (see the MySQL migration).
CREATE TABLE IF NOT EXISTS fax_deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  endpoint_id INTEGER NOT NULL,
  call_uuid TEXT NOT NULL,
  email TEXT NOT NULL,
  file TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  pages INTEGER NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT NOT NULL DEFAULT '',
  next_attempt_at TEXT NOT NULL,
  lease_owner TEXT NOT NULL DEFAULT '',
  lease_until TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  sent_at TEXT NOT NULL DEFAULT '',
  UNIQUE (tenant_id, call_uuid)
);
CREATE INDEX IF NOT EXISTS ix_fax_deliveries_due ON fax_deliveries (status, next_attempt_at);
