-- System events of nodes and trunks, and the deals reference of leads.
--
-- node_states: the last known state of each FreeSWITCH node, shared by
-- every replica: whether its event socket is connected (esl_up) and whether
-- the node as a whole is considered up (server_up); -1 is not known yet.
-- A state change is a conditional UPDATE in the transaction that records
-- its system event (esl.connected/esl.disconnected, server.up/server.down),
-- so an occurrence seen by several replicas, or again after a restart, is
-- reported once.

CREATE TABLE IF NOT EXISTS node_states (
  node VARCHAR(128) NOT NULL PRIMARY KEY,
  esl_up INT NOT NULL DEFAULT -1,
  esl_changed_at VARCHAR(32) NOT NULL DEFAULT '',
  server_up INT NOT NULL DEFAULT -1,
  server_changed_at VARCHAR(32) NOT NULL DEFAULT ''
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- trunk_states: whether each trunk's registration from each node is
-- failing (1), registered (0) or not known yet (no row), from mod_sofia's
-- sofia::gateway_state events; changes record
-- trunk.registration_failed / trunk.registration_recovered.
CREATE TABLE IF NOT EXISTS trunk_states (
  node VARCHAR(128) NOT NULL,
  trunk VARCHAR(64) NOT NULL,
  failed INT NOT NULL DEFAULT 0,
  changed_at VARCHAR(32) NOT NULL DEFAULT '',
  PRIMARY KEY (node, trunk)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- A lead's converted_deal_id refers to the tenant's deals (a declared
-- reference: the database refuses a dangling id as a second guard).
ALTER TABLE leads ADD CONSTRAINT fk_leads_converted_deal FOREIGN KEY (converted_deal_id) REFERENCES deals(id);
