-- TOTP secrets of administrators, sealed with the server key; one row per
-- enrolled administrator, gone with it.
CREATE TABLE IF NOT EXISTS admin_mfa (
  admin_id BIGINT NOT NULL PRIMARY KEY,
  secret VARCHAR(255) NOT NULL,
  created_at VARCHAR(32) NOT NULL,
  CONSTRAINT fk_admin_mfa_admin FOREIGN KEY (admin_id) REFERENCES administrators(id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
