-- node_gateways: per FreeSWITCH node, the fingerprint of each sofia
-- gateway (sip_trunks record) it was last given, so that the resync on
-- reconnect kills only gateways that changed while the node was away
-- (gateways/resync.go).
CREATE TABLE IF NOT EXISTS node_gateways (
  node VARCHAR(128) NOT NULL,
  gateway VARCHAR(64) NOT NULL,
  fingerprint CHAR(64) NOT NULL,
  PRIMARY KEY (node, gateway)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
