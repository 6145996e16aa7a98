-- Received faxes (special endpoint application fax_to_email) and their
-- e-mail delivery queue: a row is written with the stored file when a node
-- uploads the fax, and the fax worker sends it, retrying with backoff
-- (next_attempt_at, attempts) under a lease so one replica sends it.
-- One fax per call: a repeated upload of the same call is the same row.
CREATE TABLE IF NOT EXISTS fax_deliveries (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  endpoint_id BIGINT NOT NULL,
  call_uuid VARCHAR(36) NOT NULL,
  email VARCHAR(254) NOT NULL,
  file VARCHAR(255) NOT NULL,
  size_bytes BIGINT NOT NULL,
  pages INT NOT NULL,
  status VARCHAR(16) NOT NULL,
  attempts INT NOT NULL DEFAULT 0,
  last_error VARCHAR(255) NOT NULL DEFAULT '',
  next_attempt_at VARCHAR(32) NOT NULL,
  lease_owner VARCHAR(64) NOT NULL DEFAULT '',
  lease_until VARCHAR(32) NOT NULL DEFAULT '',
  created_at VARCHAR(32) NOT NULL,
  sent_at VARCHAR(32) NOT NULL DEFAULT '',
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE KEY uq_fax_deliveries_call (tenant_id, call_uuid),
  KEY ix_fax_deliveries_due (status, next_attempt_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
