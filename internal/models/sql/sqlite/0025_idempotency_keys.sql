-- idempotency_keys: the answer of each configuration write made with an
-- Idempotency-Key, stored in the write's own transaction, so a client's
-- retry after a lost answer (on any replica, after any crash) is answered
-- again instead of applied twice. id_key is a hash of the credential and
-- the key; rows older than a day are pruned.
CREATE TABLE IF NOT EXISTS idempotency_keys (
  id_key TEXT NOT NULL PRIMARY KEY,
  request_hash TEXT NOT NULL,
  status INTEGER NOT NULL,
  location TEXT NOT NULL DEFAULT '',
  body TEXT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS idempotency_keys_created ON idempotency_keys (created_at);
