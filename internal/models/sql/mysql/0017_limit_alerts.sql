-- limit_alerts: when each mod_hash limit of a node (realm and key, as the
-- dialplan counts them: "trunk"/<trunk> for a trunk's max_channels,
-- <tenant>/"outbound" for a tenant's max_concurrent_calls) was last
-- reported at its maximum. The report is a conditional UPDATE (reported_at
-- older than a minute) in the transaction that records its system event
-- (trunk.capacity_reached, tenant.limit_reached), so a limit is reported
-- once a minute at most, however many replicas or calls see it.
CREATE TABLE IF NOT EXISTS limit_alerts (
  node VARCHAR(128) NOT NULL,
  realm VARCHAR(128) NOT NULL,
  limit_key VARCHAR(128) NOT NULL,
  reported_at VARCHAR(32) NOT NULL DEFAULT '',
  PRIMARY KEY (node, realm, limit_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
