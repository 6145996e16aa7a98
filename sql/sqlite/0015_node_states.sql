-- node_states: the last known state of each FreeSWITCH node (see the
-- MySQL migration of the same number).

CREATE TABLE IF NOT EXISTS node_states (
  node TEXT NOT NULL PRIMARY KEY,
  esl_up INTEGER NOT NULL DEFAULT -1,
  esl_changed_at TEXT NOT NULL DEFAULT '',
  server_up INTEGER NOT NULL DEFAULT -1,
  server_changed_at TEXT NOT NULL DEFAULT ''
);

CREATE TABLE IF NOT EXISTS trunk_states (
  node TEXT NOT NULL,
  trunk TEXT NOT NULL,
  failed INTEGER NOT NULL DEFAULT 0,
  changed_at TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (node, trunk)
);
