-- CRM lists (resources.md §4): an index on (tenant_id, column) for every
-- column a CRM list filters or sorts by (the resources' Listing
-- declarations; the schema test checks each has one), the contacts' phone
-- numbers normalised to E.164 in their own indexed table (an inbound
-- call's caller is matched to a contact in one lookup: call activity and
-- caller name lookup), and the tenant switch for caller name lookup.
-- Data steps: the phone index of existing contacts, and the references of
-- existing CRM objects newly declared (list members, related objects).

CREATE INDEX IF NOT EXISTS ix_accounts_created_at ON accounts (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS ix_accounts_industry ON accounts (tenant_id, industry);
CREATE INDEX IF NOT EXISTS ix_accounts_owner ON accounts (tenant_id, owner);
CREATE INDEX IF NOT EXISTS ix_accounts_parent_id ON accounts (tenant_id, parent_id);
CREATE INDEX IF NOT EXISTS ix_accounts_updated_at ON accounts (tenant_id, updated_at);
CREATE INDEX IF NOT EXISTS ix_contacts_account_id ON contacts (tenant_id, account_id);
CREATE INDEX IF NOT EXISTS ix_contacts_company_name ON contacts (tenant_id, company_name);
CREATE INDEX IF NOT EXISTS ix_contacts_created_at ON contacts (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS ix_contacts_first_name ON contacts (tenant_id, first_name);
CREATE INDEX IF NOT EXISTS ix_contacts_last_name ON contacts (tenant_id, last_name);
CREATE INDEX IF NOT EXISTS ix_contacts_owner ON contacts (tenant_id, owner);
CREATE INDEX IF NOT EXISTS ix_contacts_source ON contacts (tenant_id, source);
CREATE INDEX IF NOT EXISTS ix_contacts_updated_at ON contacts (tenant_id, updated_at);
CREATE INDEX IF NOT EXISTS ix_leads_contact_id ON leads (tenant_id, contact_id);
CREATE INDEX IF NOT EXISTS ix_leads_created_at ON leads (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS ix_leads_last_name ON leads (tenant_id, last_name);
CREATE INDEX IF NOT EXISTS ix_leads_owner ON leads (tenant_id, owner);
CREATE INDEX IF NOT EXISTS ix_leads_score ON leads (tenant_id, score);
CREATE INDEX IF NOT EXISTS ix_leads_source ON leads (tenant_id, source);
CREATE INDEX IF NOT EXISTS ix_leads_status ON leads (tenant_id, status);
CREATE INDEX IF NOT EXISTS ix_leads_updated_at ON leads (tenant_id, updated_at);
CREATE INDEX IF NOT EXISTS ix_lists_created_at ON lists (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS ix_lists_kind ON lists (tenant_id, kind);
CREATE INDEX IF NOT EXISTS ix_lists_purpose ON lists (tenant_id, purpose);
CREATE INDEX IF NOT EXISTS ix_lists_updated_at ON lists (tenant_id, updated_at);
CREATE INDEX IF NOT EXISTS ix_custom_fields_created_at ON custom_fields (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS ix_custom_fields_field_key ON custom_fields (tenant_id, field_key);
CREATE INDEX IF NOT EXISTS ix_custom_fields_type ON custom_fields (tenant_id, type);
CREATE INDEX IF NOT EXISTS ix_custom_fields_updated_at ON custom_fields (tenant_id, updated_at);
CREATE INDEX IF NOT EXISTS ix_activities_cdr_id ON activities (tenant_id, cdr_id);
CREATE INDEX IF NOT EXISTS ix_activities_created_at ON activities (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS ix_activities_direction ON activities (tenant_id, direction);
CREATE INDEX IF NOT EXISTS ix_activities_extension ON activities (tenant_id, extension);
CREATE INDEX IF NOT EXISTS ix_activities_kind ON activities (tenant_id, kind);
CREATE INDEX IF NOT EXISTS ix_activities_occurred_at ON activities (tenant_id, occurred_at);
CREATE INDEX IF NOT EXISTS ix_activities_updated_at ON activities (tenant_id, updated_at);
CREATE INDEX IF NOT EXISTS ix_tasks_assignee ON tasks (tenant_id, assignee);
CREATE INDEX IF NOT EXISTS ix_tasks_created_at ON tasks (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS ix_tasks_due_at ON tasks (tenant_id, due_at);
CREATE INDEX IF NOT EXISTS ix_tasks_kind ON tasks (tenant_id, kind);
CREATE INDEX IF NOT EXISTS ix_tasks_priority ON tasks (tenant_id, priority);
CREATE INDEX IF NOT EXISTS ix_tasks_status ON tasks (tenant_id, status);
CREATE INDEX IF NOT EXISTS ix_tasks_updated_at ON tasks (tenant_id, updated_at);
CREATE INDEX IF NOT EXISTS ix_campaigns_created_at ON campaigns (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS ix_campaigns_kind ON campaigns (tenant_id, kind);
CREATE INDEX IF NOT EXISTS ix_campaigns_list_id ON campaigns (tenant_id, list_id);
CREATE INDEX IF NOT EXISTS ix_campaigns_status ON campaigns (tenant_id, status);
CREATE INDEX IF NOT EXISTS ix_campaigns_updated_at ON campaigns (tenant_id, updated_at);
CREATE INDEX IF NOT EXISTS ix_deals_account_id ON deals (tenant_id, account_id);
CREATE INDEX IF NOT EXISTS ix_deals_contact_id ON deals (tenant_id, contact_id);
CREATE INDEX IF NOT EXISTS ix_deals_created_at ON deals (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS ix_deals_expected_close_date ON deals (tenant_id, expected_close_date);
CREATE INDEX IF NOT EXISTS ix_deals_name ON deals (tenant_id, name);
CREATE INDEX IF NOT EXISTS ix_deals_owner ON deals (tenant_id, owner);
CREATE INDEX IF NOT EXISTS ix_deals_probability ON deals (tenant_id, probability);
CREATE INDEX IF NOT EXISTS ix_deals_stage ON deals (tenant_id, stage);
CREATE INDEX IF NOT EXISTS ix_deals_updated_at ON deals (tenant_id, updated_at);

CREATE TABLE IF NOT EXISTS contact_phones (
  tenant_id BIGINT NOT NULL,
  number VARCHAR(16) NOT NULL,
  contact_id BIGINT NOT NULL,
  PRIMARY KEY (tenant_id, number, contact_id),
  KEY ix_contact_phones_contact (contact_id),
  FOREIGN KEY (contact_id) REFERENCES contacts(id) ON DELETE CASCADE
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

ALTER TABLE tenants ADD COLUMN IF NOT EXISTS crm_caller_name_lookup TINYINT(1) NOT NULL DEFAULT 0;

INSERT IGNORE INTO pending_steps (name) VALUES ('backfill_contact_phones');
INSERT IGNORE INTO pending_steps (name) VALUES ('backfill_refs');
