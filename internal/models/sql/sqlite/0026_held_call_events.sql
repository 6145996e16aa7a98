-- held_call_events: batches of live-call events a replica could not apply
-- because Redis was unreachable, kept until they are applied. The replica
-- holding them retries from memory; a row left by a replica that died
-- meanwhile is applied by another once Redis answers (applying an event
-- twice is a no-op), so every call that ended still gets its CDR.
CREATE TABLE IF NOT EXISTS held_call_events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  events TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS held_call_events_created ON held_call_events (created_at);
