-- Extensions are listed, searched and sorted like the CRM's objects
-- (their Listing in resources_tenant.go): each sort and filter column
-- is indexed after tenant_id, so a tenant's page of 50 out of thousands
-- is read from an index.
CREATE INDEX IF NOT EXISTS ix_extensions_first_name ON extensions (tenant_id, first_name);
CREATE INDEX IF NOT EXISTS ix_extensions_last_name ON extensions (tenant_id, last_name);
CREATE INDEX IF NOT EXISTS ix_extensions_type ON extensions (tenant_id, type);
CREATE INDEX IF NOT EXISTS ix_extensions_created_at ON extensions (tenant_id, created_at);
CREATE INDEX IF NOT EXISTS ix_extensions_updated_at ON extensions (tenant_id, updated_at);
