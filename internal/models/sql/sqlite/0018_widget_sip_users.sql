-- widget_sip_users: the short-lived SIP users of webrtc click-to-call
-- widgets (see the MySQL migration of the same number).
CREATE TABLE IF NOT EXISTS widget_sip_users (
  username TEXT NOT NULL PRIMARY KEY,
  tenant TEXT NOT NULL,
  widget TEXT NOT NULL,
  a1_hash TEXT NOT NULL,
  caller_name TEXT NOT NULL DEFAULT '',
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ix_widget_sip_users_expires ON widget_sip_users (expires_at);
