-- TOTP secrets of administrators, sealed with the server key; one row per
-- enrolled administrator, gone with it.
CREATE TABLE IF NOT EXISTS admin_mfa (
  admin_id INTEGER NOT NULL PRIMARY KEY REFERENCES administrators(id) ON DELETE CASCADE,
  secret TEXT NOT NULL,
  created_at TEXT NOT NULL
);
