-- installation: one row naming this installation (every replica on this
-- database shares it). It namespaces what replicas tell each other through
-- Redis (the XML change channel), so installations sharing a Redis server
-- never hear each other.
CREATE TABLE IF NOT EXISTS installation (
  id INT NOT NULL PRIMARY KEY,
  installation_id VARCHAR(32) NOT NULL
);
INSERT IGNORE INTO installation (id, installation_id) VALUES (1, REPLACE(UUID(), '-', ''));
