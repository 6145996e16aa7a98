-- node_gateways: per FreeSWITCH node, the fingerprint of each sofia
-- gateway (sip_trunks record) it was last given, so that the resync on
-- reconnect kills only gateways that changed while the node was away
-- (gateways/resync.go).
CREATE TABLE IF NOT EXISTS node_gateways (
  node TEXT NOT NULL,
  gateway TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  PRIMARY KEY (node, gateway)
);
