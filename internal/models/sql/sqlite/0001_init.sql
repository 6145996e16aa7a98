-- Initial schema: tenants, extensions, administrators, API keys and the
-- call-routing resources. Every statement is re-runnable (IF NOT EXISTS).

CREATE TABLE IF NOT EXISTS locations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT COLLATE NOCASE NOT NULL,
  code TEXT COLLATE NOCASE NOT NULL,
  timezone TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (name),
  UNIQUE (code)
);

CREATE TABLE IF NOT EXISTS tenants (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant TEXT COLLATE NOCASE NOT NULL,
  callerid TEXT NULL,
  emergency_callerid TEXT NULL,
  description TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  timezone TEXT NULL,
  language TEXT NULL,
  country TEXT NULL,
  location_id INTEGER NULL,
  outbound_callerid_name TEXT NULL,
  emergency_numbers TEXT NULL,
  max_extensions INTEGER NULL,
  max_concurrent_calls INTEGER NULL,
  max_queues INTEGER NULL,
  max_ivr_menus INTEGER NULL,
  max_conference_rooms INTEGER NULL,
  max_storage_mb INTEGER NULL,
  recording_policy TEXT NULL,
  recording_retention_days INTEGER NULL,
  allow_sip_uri_endpoints INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (location_id) REFERENCES locations(id),
  UNIQUE (tenant)
);

CREATE TABLE IF NOT EXISTS numbers (
  tenant_id INTEGER NOT NULL REFERENCES tenants(id),
  number TEXT NOT NULL,
  resource TEXT NOT NULL,
  owner_key TEXT NOT NULL,
  PRIMARY KEY (tenant_id, number)
);

CREATE TABLE IF NOT EXISTS administrators (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  username TEXT COLLATE NOCASE NOT NULL,
  password TEXT NOT NULL,
  email TEXT NULL,
  full_name TEXT NULL,
  role TEXT NOT NULL,
  tenants TEXT NULL,
  permissions TEXT NULL,
  mfa_enabled INTEGER NOT NULL DEFAULT 0,
  enabled INTEGER NOT NULL DEFAULT 0,
  last_login_at TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (username)
);

CREATE TABLE IF NOT EXISTS emergency_locations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  address_line1 TEXT NOT NULL,
  address_line2 TEXT NULL,
  city TEXT NULL,
  region TEXT NULL,
  postal_code TEXT NULL,
  country TEXT NOT NULL,
  dispatchable_location TEXT NULL,
  latitude REAL NULL,
  longitude REAL NULL,
  emergency_callerid TEXT NOT NULL,
  notify_extensions TEXT NULL,
  notify_emails TEXT NULL,
  is_default INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS extensions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  protocol TEXT NULL,
  first_name TEXT NULL,
  last_name TEXT NULL,
  email TEXT NULL,
  callerid TEXT NULL,
  mobile TEXT NULL,
  type TEXT NULL,
  sip_secret TEXT NULL,
  sip_auth_id TEXT NULL,
  outbound_callerid TEXT NULL,
  emergency_location_id INTEGER NULL,
  language TEXT NULL,
  timezone TEXT NULL,
  voicemail_enabled INTEGER NOT NULL DEFAULT 0,
  voicemail_pin TEXT NULL,
  voicemail_email TEXT NULL,
  voicemail_attach_audio INTEGER NOT NULL DEFAULT 0,
  voicemail_delete_after_email INTEGER NOT NULL DEFAULT 0,
  ring_seconds INTEGER NULL,
  forward_all TEXT NULL,
  forward_busy TEXT NULL,
  forward_no_answer TEXT NULL,
  forward_unregistered TEXT NULL,
  dnd INTEGER NOT NULL DEFAULT 0,
  call_waiting INTEGER NOT NULL DEFAULT 0,
  max_registrations INTEGER NULL,
  call_permission TEXT NULL,
  record TEXT NULL,
  accountcode TEXT NULL,
  directory_visible INTEGER NOT NULL DEFAULT 0,
  directory_extension_visible INTEGER NOT NULL DEFAULT 0,
  enabled INTEGER NOT NULL DEFAULT 0,
  tags TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (emergency_location_id) REFERENCES emergency_locations(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS schedules (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  timezone TEXT NULL,
  open_periods TEXT NULL,
  holidays TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS routing_conditions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  number TEXT NULL,
  kind TEXT NOT NULL,
  schedule_id INTEGER NULL,
  office_modes TEXT NULL,
  caller_prefixes TEXT NULL,
  match_destination TEXT NOT NULL,
  nomatch_destination TEXT NOT NULL,
  override TEXT NULL,
  override_until TEXT NULL,
  toggle_code TEXT NULL,
  toggle_pin TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (schedule_id) REFERENCES schedules(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS feature_extensions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  feature TEXT COLLATE NOCASE NOT NULL,
  code TEXT COLLATE NOCASE NOT NULL,
  pin_required INTEGER NOT NULL DEFAULT 0,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, feature),
  UNIQUE (tenant_id, code)
);

CREATE TABLE IF NOT EXISTS office_modes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  mode TEXT NULL,
  schedule_id INTEGER NULL,
  until TEXT NULL,
  toggle_pin TEXT NULL,
  allowed_extensions TEXT NULL,
  changed_by TEXT NULL,
  changed_at TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (schedule_id) REFERENCES schedules(id),
  UNIQUE (tenant_id)
);

CREATE TABLE IF NOT EXISTS servers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT COLLATE NOCASE NOT NULL,
  hostname TEXT COLLATE NOCASE NOT NULL,
  location_id INTEGER NULL,
  esl_host TEXT NOT NULL,
  esl_port INTEGER NULL,
  esl_password TEXT NULL,
  sip_profiles TEXT NULL,
  weight INTEGER NULL,
  max_calls INTEGER NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (location_id) REFERENCES locations(id),
  UNIQUE (name),
  UNIQUE (hostname)
);

CREATE TABLE IF NOT EXISTS sip_trunks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT COLLATE NOCASE NOT NULL,
  tenants TEXT NULL,
  host TEXT NOT NULL,
  port INTEGER NULL,
  transport TEXT NULL,
  register INTEGER NOT NULL DEFAULT 0,
  username TEXT NULL,
  password TEXT NULL,
  auth_username TEXT NULL,
  realm TEXT NULL,
  from_user TEXT NULL,
  from_domain TEXT NULL,
  outbound_proxy TEXT NULL,
  expire_seconds INTEGER NULL,
  retry_seconds INTEGER NULL,
  ping_seconds INTEGER NULL,
  caller_id_in_from INTEGER NOT NULL DEFAULT 0,
  callerid_format TEXT NULL,
  codecs TEXT NULL,
  dtmf_mode TEXT NULL,
  max_channels INTEGER NULL,
  inbound_ips TEXT NULL,
  servers TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (name)
);

CREATE TABLE IF NOT EXISTS inbound_routes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  did TEXT NULL,
  caller_match TEXT NULL,
  destination TEXT NOT NULL,
  routing_condition_id INTEGER NULL,
  day_destination TEXT NULL,
  night_destination TEXT NULL,
  holiday_destination TEXT NULL,
  callerid_name_prefix TEXT NULL,
  record INTEGER NOT NULL DEFAULT 0,
  distinctive_ring TEXT NULL,
  language TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (routing_condition_id) REFERENCES routing_conditions(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS outbound_routes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  priority INTEGER NULL,
  patterns TEXT NOT NULL,
  trunks TEXT NOT NULL,
  callerid_policy TEXT NULL,
  callerid_fixed TEXT NULL,
  min_permission TEXT NULL,
  emergency INTEGER NOT NULL DEFAULT 0,
  record INTEGER NOT NULL DEFAULT 0,
  max_duration_seconds INTEGER NULL,
  allowed_extensions TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, name),
  UNIQUE (tenant_id, priority)
);

CREATE TABLE IF NOT EXISTS dids (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  number TEXT COLLATE NOCASE NOT NULL,
  tenant TEXT NULL,
  trunk_id INTEGER NULL,
  inbound_route_id INTEGER NULL,
  caller_id_name TEXT NULL,
  sms_enabled INTEGER NOT NULL DEFAULT 0,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (trunk_id) REFERENCES sip_trunks(id),
  FOREIGN KEY (inbound_route_id) REFERENCES inbound_routes(id),
  UNIQUE (number)
);

CREATE TABLE IF NOT EXISTS api_keys (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  tenant TEXT COLLATE NOCASE NULL,
  tenant_id INTEGER NULL REFERENCES tenants(id),
  extension TEXT NULL,
  permissions TEXT NULL,
  key_hash TEXT NOT NULL UNIQUE,
  key_prefix TEXT NOT NULL,
  expires_at TEXT NULL,
  last_used_at TEXT NULL,
  revoked_at TEXT NULL,
  created_by TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ix_api_keys_tenant ON api_keys (tenant);
CREATE INDEX IF NOT EXISTS ix_dids_tenant ON dids (tenant);
CREATE INDEX IF NOT EXISTS ix_inbound_routes_did ON inbound_routes (did);
