-- held_call_events: batches of live-call events a replica could not apply
-- because Redis was unreachable, kept until they are applied. The replica
-- holding them retries from memory; a row left by a replica that died
-- meanwhile is applied by another once Redis answers (applying an event
-- twice is a no-op), so every call that ended still gets its CDR.
CREATE TABLE IF NOT EXISTS held_call_events (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  events MEDIUMTEXT NOT NULL,
  created_at VARCHAR(32) NOT NULL,
  KEY held_call_events_created (created_at)
);
