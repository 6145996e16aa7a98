-- A tenant belongs to at most one reseller, whose limits (max_tenants,
-- max_extensions_total, max_concurrent_calls_total) are checked when the
-- tenant is created, moved or its own limits raised.
ALTER TABLE tenants ADD COLUMN reseller_id INTEGER NULL REFERENCES resellers(id);
-- limit_event_windows holds one row per limit and minute in which a
-- tenant.limit_reached event was emitted: the first refusal of a window
-- inserts it and emits, the others find it and stay quiet.
CREATE TABLE IF NOT EXISTS limit_event_windows (
  bucket TEXT NOT NULL,
  window_start INTEGER NOT NULL,
  PRIMARY KEY (bucket, window_start)
);
