-- widget_sip_users: the short-lived SIP users of webrtc click-to-call
-- widgets. POST /widgets/<public_id>/call on a webrtc widget issues one; the
-- XML service answers it as a directory user (package fsxml) until
-- expires_at (Unix seconds) and as unknown after. Kept in the database, not
-- Redis, because the directory is answered from the database (also while
-- Redis is away), every replica sees a row at once and a restart loses
-- none. Only the digest hash (a1_hash, md5 of user:domain:password) is
-- stored; the password is shown once to the visitor's browser. Expired rows
-- are deleted when new ones are issued.
CREATE TABLE IF NOT EXISTS widget_sip_users (
  username VARCHAR(64) NOT NULL PRIMARY KEY,
  tenant VARCHAR(32) NOT NULL,
  widget VARCHAR(64) NOT NULL,
  a1_hash CHAR(32) NOT NULL,
  caller_name VARCHAR(64) NOT NULL DEFAULT '',
  expires_at BIGINT NOT NULL,
  KEY ix_widget_sip_users_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
