-- limit_alerts: when each mod_hash limit of a node was last reported at its
-- maximum (see the MySQL migration of the same number).
CREATE TABLE IF NOT EXISTS limit_alerts (
  node TEXT NOT NULL,
  realm TEXT NOT NULL,
  limit_key TEXT NOT NULL,
  reported_at TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (node, realm, limit_key)
);
