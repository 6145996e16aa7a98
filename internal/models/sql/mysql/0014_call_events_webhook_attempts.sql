-- Call lifecycle events and per-attempt webhook history.
--
-- call_events: one row per (node, uuid, event) for call.started and
-- call.answered, inserted with the event's outbox row in one transaction;
-- the unique key makes a retried hand-off from the tracker's pending list
-- (a crash after the commit, before the list entry was removed) a no-op,
-- as cdrs (node, uuid) does for call.ended. Rows are pruned after a day.
--
-- webhook_attempts: every attempt of a delivery (time, HTTP status,
-- latency, error, the answer's first KiB), written with the delivery's new
-- state; deleted with their delivery.
--
-- webhook_deliveries.subject: what the event is about (a call's channel
-- id); deliveries of one subject to one webhook are sent one at a time, in
-- order.

CREATE TABLE IF NOT EXISTS call_events (
  node VARCHAR(128) NOT NULL,
  uuid VARCHAR(64) NOT NULL,
  event VARCHAR(32) NOT NULL,
  created_at VARCHAR(32) NOT NULL,
  PRIMARY KEY (node, uuid, event),
  KEY ix_call_events_created (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS webhook_attempts (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  delivery_id BIGINT NOT NULL,
  attempt INT NOT NULL,
  attempted_at VARCHAR(32) NOT NULL,
  status_code INT NOT NULL DEFAULT 0,
  latency_ms INT NOT NULL DEFAULT 0,
  error VARCHAR(512) NOT NULL DEFAULT '',
  response VARCHAR(1024) NOT NULL DEFAULT '',
  KEY ix_webhook_attempts_delivery (delivery_id, id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

ALTER TABLE webhook_deliveries ADD COLUMN IF NOT EXISTS subject VARCHAR(128) NOT NULL DEFAULT '';
