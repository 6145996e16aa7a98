-- node_states: the last known state of each FreeSWITCH node (see the
-- MySQL migration of the same number).

CREATE TABLE IF NOT EXISTS node_states (
  node TEXT NOT NULL PRIMARY KEY,
  esl_up INTEGER NOT NULL DEFAULT -1,
  esl_changed_at TEXT NOT NULL DEFAULT '',
  server_up INTEGER NOT NULL DEFAULT -1,
  server_changed_at TEXT NOT NULL DEFAULT ''
);

CREATE TABLE IF NOT EXISTS trunk_states (
  node TEXT NOT NULL,
  trunk TEXT NOT NULL,
  failed INTEGER NOT NULL DEFAULT 0,
  changed_at TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (node, trunk)
);

-- A lead's converted_deal_id refers to the tenant's deals. SQLite adds a
-- foreign key only by rebuilding the table (nothing refers to leads), with
-- the same columns and indexes as before.
CREATE TABLE leads_rebuilt (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  contact_id INTEGER NULL,
  first_name TEXT NULL,
  last_name TEXT NULL,
  company_name TEXT NULL,
  phone TEXT NULL,
  email TEXT NULL,
  status TEXT NULL,
  source TEXT NULL,
  score INTEGER NULL,
  owner TEXT NULL,
  converted_deal_id INTEGER NULL,
  custom TEXT NULL,
  tags TEXT NULL,
  external_id TEXT COLLATE NOCASE NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (contact_id) REFERENCES contacts(id),
  FOREIGN KEY (converted_deal_id) REFERENCES deals(id),
  UNIQUE (tenant_id, external_id)
);
INSERT INTO leads_rebuilt SELECT id, tenant_id, contact_id, first_name, last_name, company_name, phone, email, status, source, score, owner,
  converted_deal_id, custom, tags, external_id, description, created_at, updated_at FROM leads;
DROP TABLE leads;
ALTER TABLE leads_rebuilt RENAME TO leads;
CREATE INDEX IF NOT EXISTS ix_leads_contact_id ON leads (tenant_id, contact_id);
CREATE INDEX IF NOT EXISTS ix_leads_created_at ON leads (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS ix_leads_last_name ON leads (tenant_id, last_name);
CREATE INDEX IF NOT EXISTS ix_leads_owner ON leads (tenant_id, owner);
CREATE INDEX IF NOT EXISTS ix_leads_score ON leads (tenant_id, score);
CREATE INDEX IF NOT EXISTS ix_leads_source ON leads (tenant_id, source);
CREATE INDEX IF NOT EXISTS ix_leads_status ON leads (tenant_id, status);
CREATE INDEX IF NOT EXISTS ix_leads_updated_at ON leads (tenant_id, updated_at);
