-- Chat accounts: which extensions have an XMPP account on the chat server.
-- The password is stored only as a bcrypt hash (ejabberd keeps its own
-- SCRAM form); it is shown once, in the provisioning or rotate answer.
-- Deleting the tenant deletes its accounts.

CREATE TABLE IF NOT EXISTS chat_accounts (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  extension VARCHAR(10) NOT NULL,
  password_hash VARCHAR(255) NOT NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  UNIQUE KEY uq_chat_accounts_ext (tenant_id, extension),
  CONSTRAINT fk_chat_accounts_tenant FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Incoming webhook tokens are now Digest secrets (their SHA-256): secret
-- columns are TEXT.
ALTER TABLE incoming_webhooks MODIFY token TEXT NULL;
