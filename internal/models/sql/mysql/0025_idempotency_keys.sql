-- idempotency_keys: the answer of each configuration write made with an
-- Idempotency-Key, stored in the write's own transaction, so a client's
-- retry after a lost answer (on any replica, after any crash) is answered
-- again instead of applied twice. id_key is a hash of the credential and
-- the key; rows older than a day are pruned.
CREATE TABLE IF NOT EXISTS idempotency_keys (
  id_key CHAR(64) NOT NULL PRIMARY KEY,
  request_hash CHAR(64) NOT NULL,
  status INT NOT NULL,
  location VARCHAR(1000) NOT NULL DEFAULT '',
  body MEDIUMTEXT NULL,
  created_at VARCHAR(32) NOT NULL,
  KEY idempotency_keys_created (created_at)
);
