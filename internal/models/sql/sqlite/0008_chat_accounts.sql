-- Chat accounts: which extensions have an XMPP account on the chat server.
-- The password is stored only as a bcrypt hash (ejabberd keeps its own
-- SCRAM form); it is shown once, in the provisioning or rotate answer.
-- Deleting the tenant deletes its accounts.

CREATE TABLE IF NOT EXISTS chat_accounts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  extension TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (tenant_id, extension)
);
