-- The transactional outbox: every configuration write records its changes
-- here in the same transaction (ids handed out in commit order through the
-- locked outbox_seq row), a dispatcher on one replica at a time (the
-- outbox_leases row) delivers them to in-process subscribers, and each
-- subscriber's progress is kept in outbox_progress.

CREATE TABLE IF NOT EXISTS outbox (
  id BIGINT NOT NULL PRIMARY KEY,
  resource VARCHAR(64) NOT NULL,
  op VARCHAR(8) NOT NULL,
  tenant VARCHAR(64) NOT NULL DEFAULT '',
  obj_key VARCHAR(255) NOT NULL,
  before_json LONGTEXT NULL,
  after_json LONGTEXT NULL,
  created_at VARCHAR(32) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS outbox_seq (
  name VARCHAR(32) NOT NULL PRIMARY KEY,
  next_id BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

INSERT IGNORE INTO outbox_seq (name, next_id) VALUES ('outbox', 1);

CREATE TABLE IF NOT EXISTS outbox_progress (
  subscriber VARCHAR(64) NOT NULL PRIMARY KEY,
  last_id BIGINT NOT NULL,
  attempts BIGINT NOT NULL DEFAULT 0,
  last_error VARCHAR(512) NOT NULL DEFAULT '',
  updated_at VARCHAR(32) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS outbox_leases (
  name VARCHAR(64) NOT NULL PRIMARY KEY,
  holder VARCHAR(128) NOT NULL DEFAULT '',
  expires_ms BIGINT NOT NULL DEFAULT 0
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
