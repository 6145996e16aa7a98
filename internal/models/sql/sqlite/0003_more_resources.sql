-- The remaining configuration resources of resources.md: platform
-- organisation and webhooks, tenant telephony (agents, queues, menus,
-- conference rooms, devices, ...), collaboration and CRM. Generated with
-- switchboard schema-sql; tables come after the tables they reference.
-- Tenant singletons (branding, company_directory_settings) get a row for
-- every existing tenant; new tenants get theirs when created.

CREATE TABLE IF NOT EXISTS enterprises (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT COLLATE NOCASE NOT NULL,
  sites TEXT NULL,
  intersite_prefix TEXT NULL,
  intersite_dialing INTEGER NOT NULL DEFAULT 0,
  shared_directory INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (name)
);

CREATE TABLE IF NOT EXISTS resellers (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT COLLATE NOCASE NOT NULL,
  company TEXT NULL,
  contact_email TEXT NULL,
  contact_phone TEXT NULL,
  max_tenants INTEGER NULL,
  max_extensions_total INTEGER NULL,
  max_concurrent_calls_total INTEGER NULL,
  branding TEXT NULL,
  billing_reference TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (name)
);

CREATE TABLE IF NOT EXISTS webhooks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT COLLATE NOCASE NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  filter TEXT NULL,
  secret TEXT NULL,
  content_type TEXT NULL,
  headers TEXT NULL,
  timeout_ms INTEGER NULL,
  max_attempts INTEGER NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  disabled_reason TEXT NULL,
  consecutive_failures INTEGER NULL,
  last_success_at TEXT NULL,
  last_failure_at TEXT NULL,
  description TEXT NULL,
  tenants TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (name)
);

CREATE TABLE IF NOT EXISTS system_webhooks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT COLLATE NOCASE NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  filter TEXT NULL,
  secret TEXT NULL,
  content_type TEXT NULL,
  headers TEXT NULL,
  timeout_ms INTEGER NULL,
  max_attempts INTEGER NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  disabled_reason TEXT NULL,
  consecutive_failures INTEGER NULL,
  last_success_at TEXT NULL,
  last_failure_at TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (name)
);

CREATE TABLE IF NOT EXISTS voice_prompts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  language TEXT NULL,
  source TEXT NULL,
  tts_text TEXT NULL,
  filename TEXT NULL,
  format TEXT NULL,
  duration_ms INTEGER NULL,
  size_bytes INTEGER NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS music_on_hold (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  files TEXT NULL,
  rate INTEGER NULL,
  shuffle INTEGER NOT NULL DEFAULT 0,
  chime_prompt_id INTEGER NULL,
  chime_frequency_seconds INTEGER NULL,
  chime_max INTEGER NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (chime_prompt_id) REFERENCES voice_prompts(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS departments (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  parent_id INTEGER NULL,
  manager_extension TEXT NULL,
  accountcode TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (parent_id) REFERENCES departments(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS tags (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  color TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS agents (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  agent_number TEXT COLLATE NOCASE NOT NULL,
  pin TEXT NULL,
  extension TEXT NULL,
  contact_type TEXT NULL,
  external_number TEXT NULL,
  queues TEXT NULL,
  status TEXT NULL,
  break_reason TEXT NULL,
  max_no_answer INTEGER NULL,
  wrap_up_seconds INTEGER NULL,
  reject_delay_seconds INTEGER NULL,
  busy_delay_seconds INTEGER NULL,
  no_answer_delay_seconds INTEGER NULL,
  auto_logout_seconds INTEGER NULL,
  record INTEGER NOT NULL DEFAULT 0,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, agent_number)
);

CREATE TABLE IF NOT EXISTS queues (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  number TEXT NOT NULL,
  strategy TEXT NULL,
  greeting_prompt_id INTEGER NULL,
  moh_class_id INTEGER NULL,
  announce_prompt_id INTEGER NULL,
  announce_frequency_seconds INTEGER NULL,
  record INTEGER NOT NULL DEFAULT 0,
  max_wait_seconds INTEGER NULL,
  max_wait_no_agent_seconds INTEGER NULL,
  max_wait_no_agent_reached_seconds INTEGER NULL,
  tier_rules_apply INTEGER NOT NULL DEFAULT 0,
  tier_rule_wait_seconds INTEGER NULL,
  tier_rule_wait_multiply_level INTEGER NOT NULL DEFAULT 0,
  tier_rule_no_agent_no_wait INTEGER NOT NULL DEFAULT 0,
  discard_abandoned_after_seconds INTEGER NULL,
  abandoned_resume_allowed INTEGER NOT NULL DEFAULT 0,
  time_base_score TEXT NULL,
  exit_key TEXT NULL,
  exit_destination TEXT NULL,
  timeout_destination TEXT NULL,
  callerid_name_prefix TEXT NULL,
  service_level_seconds INTEGER NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (greeting_prompt_id) REFERENCES voice_prompts(id),
  FOREIGN KEY (moh_class_id) REFERENCES music_on_hold(id),
  FOREIGN KEY (announce_prompt_id) REFERENCES voice_prompts(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS hunt_groups (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  number TEXT NOT NULL,
  strategy TEXT NULL,
  members TEXT NOT NULL,
  ring_seconds INTEGER NULL,
  timeout_destination TEXT NULL,
  callerid_name_prefix TEXT NULL,
  ringback TEXT NULL,
  skip_busy_members INTEGER NOT NULL DEFAULT 0,
  respect_member_forwarding INTEGER NOT NULL DEFAULT 0,
  confirm_external INTEGER NOT NULL DEFAULT 0,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS pickup_groups (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  members TEXT NULL,
  pickers TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS ivr_menus (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  number TEXT NOT NULL,
  greeting_long_prompt_id INTEGER NULL,
  greeting_short_prompt_id INTEGER NULL,
  invalid_prompt_id INTEGER NULL,
  exit_prompt_id INTEGER NULL,
  timeout_ms INTEGER NULL,
  inter_digit_timeout_ms INTEGER NULL,
  max_failures INTEGER NULL,
  max_timeouts INTEGER NULL,
  digit_len INTEGER NULL,
  direct_dial INTEGER NOT NULL DEFAULT 0,
  options TEXT NULL,
  exit_destination TEXT NULL,
  language TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (greeting_long_prompt_id) REFERENCES voice_prompts(id),
  FOREIGN KEY (greeting_short_prompt_id) REFERENCES voice_prompts(id),
  FOREIGN KEY (invalid_prompt_id) REFERENCES voice_prompts(id),
  FOREIGN KEY (exit_prompt_id) REFERENCES voice_prompts(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS special_endpoints (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  number TEXT NOT NULL,
  kind TEXT NOT NULL,
  external_number TEXT NULL,
  sip_uri TEXT NULL,
  application TEXT NULL,
  ring_seconds INTEGER NULL,
  callerid_policy TEXT NULL,
  fax_email TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS special_mailboxes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  number TEXT NOT NULL,
  pin TEXT NULL,
  emails TEXT NULL,
  attach_audio INTEGER NOT NULL DEFAULT 0,
  delete_after_email INTEGER NOT NULL DEFAULT 0,
  greeting_prompt_id INTEGER NULL,
  notify_extensions TEXT NULL,
  max_messages INTEGER NULL,
  max_message_seconds INTEGER NULL,
  language TEXT NULL,
  timezone TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (greeting_prompt_id) REFERENCES voice_prompts(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS conference_rooms (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  number TEXT NOT NULL,
  pin TEXT NULL,
  moderator_pin TEXT NULL,
  max_members INTEGER NULL,
  wait_for_moderator INTEGER NOT NULL DEFAULT 0,
  end_when_moderator_leaves INTEGER NOT NULL DEFAULT 0,
  mute_on_join INTEGER NOT NULL DEFAULT 0,
  announce_join_leave INTEGER NOT NULL DEFAULT 0,
  announce_count INTEGER NOT NULL DEFAULT 0,
  record INTEGER NOT NULL DEFAULT 0,
  moh_class_id INTEGER NULL,
  quality TEXT NULL,
  language TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (moh_class_id) REFERENCES music_on_hold(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS company_directory (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  display_name TEXT NOT NULL,
  number TEXT NOT NULL,
  speed_dial TEXT COLLATE NOCASE NULL,
  department_id INTEGER NULL,
  visible_to_phones INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (department_id) REFERENCES departments(id),
  UNIQUE (tenant_id, speed_dial)
);

CREATE TABLE IF NOT EXISTS company_directory_settings (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  number TEXT NULL,
  search_by TEXT NULL,
  min_search_digits INTEGER NULL,
  announce_extension INTEGER NOT NULL DEFAULT 0,
  include_enterprise_sites INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id)
);

CREATE TABLE IF NOT EXISTS devices (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  mac_address TEXT COLLATE NOCASE NOT NULL,
  vendor TEXT NOT NULL,
  model TEXT NULL,
  label TEXT NULL,
  device_lines TEXT NULL,
  device_keys TEXT NULL,
  timezone TEXT NULL,
  language TEXT NULL,
  provisioning_username TEXT NULL,
  provisioning_password TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  last_provisioned_at TEXT NULL,
  last_provisioned_ip TEXT NULL,
  last_user_agent TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, mac_address)
);

CREATE TABLE IF NOT EXISTS click_to_call_widgets (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  mode TEXT NULL,
  destination TEXT NOT NULL,
  allowed_origins TEXT NOT NULL,
  public_id TEXT COLLATE NOCASE NULL,
  schedule_id INTEGER NULL,
  closed_message TEXT NULL,
  button_label TEXT NULL,
  button_color TEXT NULL,
  callerid_name_prefix TEXT NULL,
  ask_name INTEGER NOT NULL DEFAULT 0,
  allowed_countries TEXT NULL,
  max_calls_per_hour_per_ip INTEGER NULL,
  require_captcha INTEGER NOT NULL DEFAULT 0,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (schedule_id) REFERENCES schedules(id),
  UNIQUE (tenant_id, name),
  UNIQUE (tenant_id, public_id)
);

CREATE TABLE IF NOT EXISTS chat_channels (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  display_name TEXT NULL,
  topic TEXT NULL,
  visibility TEXT NULL,
  members TEXT NULL,
  read_only INTEGER NOT NULL DEFAULT 0,
  archived INTEGER NOT NULL DEFAULT 0,
  jid TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS branding (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  product_name TEXT NULL,
  logo TEXT NULL,
  favicon TEXT NULL,
  primary_color TEXT NULL,
  secondary_color TEXT NULL,
  custom_domain TEXT NULL,
  support_email TEXT NULL,
  support_url TEXT NULL,
  email_from_name TEXT NULL,
  email_from_address TEXT NULL,
  login_message TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id)
);

CREATE TABLE IF NOT EXISTS messaging_channels (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  type TEXT NOT NULL,
  provider TEXT NOT NULL,
  sender TEXT NULL,
  credentials TEXT NULL,
  template_only INTEGER NOT NULL DEFAULT 0,
  templates TEXT NULL,
  default_country TEXT NULL,
  inbound_destination TEXT NULL,
  max_body_chars INTEGER NULL,
  rate_per_second INTEGER NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS incoming_webhooks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  channel TEXT NOT NULL,
  name TEXT NOT NULL,
  description TEXT NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  picture TEXT NULL,
  token TEXT NULL,
  url TEXT NULL,
  created_by TEXT NULL,
  last_used_at TEXT NULL,
  message_count INTEGER NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id)
);

CREATE TABLE IF NOT EXISTS outbound_webhooks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  url TEXT NOT NULL,
  events TEXT NOT NULL,
  filter TEXT NULL,
  secret TEXT NULL,
  content_type TEXT NULL,
  headers TEXT NULL,
  timeout_ms INTEGER NULL,
  max_attempts INTEGER NULL,
  enabled INTEGER NOT NULL DEFAULT 0,
  disabled_reason TEXT NULL,
  consecutive_failures INTEGER NULL,
  last_success_at TEXT NULL,
  last_failure_at TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS accounts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  domain TEXT NULL,
  industry TEXT NULL,
  phone TEXT NULL,
  address TEXT NULL,
  owner TEXT NULL,
  parent_id INTEGER NULL,
  custom TEXT NULL,
  tags TEXT NULL,
  external_id TEXT COLLATE NOCASE NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (parent_id) REFERENCES accounts(id),
  UNIQUE (tenant_id, name),
  UNIQUE (tenant_id, external_id)
);

CREATE TABLE IF NOT EXISTS contacts (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  first_name TEXT NULL,
  last_name TEXT NULL,
  company_name TEXT NULL,
  account_id INTEGER NULL,
  title TEXT NULL,
  role TEXT NULL,
  phones TEXT NULL,
  emails TEXT NULL,
  addresses TEXT NULL,
  timezone TEXT NULL,
  owner TEXT NULL,
  source TEXT NULL,
  opt_out_sms INTEGER NOT NULL DEFAULT 0,
  opt_out_whatsapp INTEGER NOT NULL DEFAULT 0,
  opt_out_calls INTEGER NOT NULL DEFAULT 0,
  custom TEXT NULL,
  tags TEXT NULL,
  external_id TEXT COLLATE NOCASE NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (account_id) REFERENCES accounts(id),
  UNIQUE (tenant_id, external_id)
);

CREATE TABLE IF NOT EXISTS leads (
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
  UNIQUE (tenant_id, external_id)
);

CREATE TABLE IF NOT EXISTS lists (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  kind TEXT NULL,
  members TEXT NULL,
  filter TEXT NULL,
  purpose TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS custom_fields (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  entity TEXT COLLATE NOCASE NOT NULL,
  field_key TEXT COLLATE NOCASE NOT NULL,
  label TEXT NOT NULL,
  type TEXT NOT NULL,
  options TEXT NULL,
  required INTEGER NOT NULL DEFAULT 0,
  default_value TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id, entity, field_key)
);

CREATE TABLE IF NOT EXISTS activities (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  kind TEXT NOT NULL,
  subject TEXT NULL,
  body TEXT NULL,
  occurred_at TEXT NULL,
  duration_seconds INTEGER NULL,
  direction TEXT NULL,
  related TEXT NULL,
  extension TEXT NULL,
  cdr_id TEXT NULL,
  recording_id TEXT NULL,
  message_id TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id)
);

CREATE TABLE IF NOT EXISTS tasks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  title TEXT NOT NULL,
  due_at TEXT NULL,
  status TEXT NULL,
  priority TEXT NULL,
  assignee TEXT NULL,
  related TEXT NULL,
  kind TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id)
);

CREATE TABLE IF NOT EXISTS campaigns (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT COLLATE NOCASE NOT NULL,
  kind TEXT NOT NULL,
  list_id INTEGER NOT NULL,
  do_not_call_list_ids TEXT NULL,
  messaging_channel_id INTEGER NULL,
  template_id TEXT NULL,
  destination TEXT NULL,
  callerid TEXT NULL,
  dial_window TEXT NULL,
  pacing_per_minute INTEGER NULL,
  max_attempts INTEGER NULL,
  retry_after_minutes INTEGER NULL,
  status TEXT NULL,
  starts_at TEXT NULL,
  ends_at TEXT NULL,
  stats TEXT NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (list_id) REFERENCES lists(id),
  FOREIGN KEY (messaging_channel_id) REFERENCES messaging_channels(id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE IF NOT EXISTS deals (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  account_id INTEGER NULL,
  contact_id INTEGER NULL,
  amount TEXT NULL,
  currency TEXT NULL,
  stage TEXT NULL,
  probability INTEGER NULL,
  expected_close_date TEXT NULL,
  owner TEXT NULL,
  lost_reason TEXT NULL,
  custom TEXT NULL,
  tags TEXT NULL,
  external_id TEXT COLLATE NOCASE NULL,
  description TEXT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (account_id) REFERENCES accounts(id),
  FOREIGN KEY (contact_id) REFERENCES contacts(id),
  UNIQUE (tenant_id, external_id)
);

INSERT INTO branding (tenant_id, description, created_at, updated_at)
SELECT id, '', created_at, updated_at FROM tenants
WHERE NOT EXISTS (SELECT 1 FROM branding b WHERE b.tenant_id = tenants.id);

INSERT INTO company_directory_settings (tenant_id, search_by, min_search_digits, announce_extension, include_enterprise_sites, description, created_at, updated_at)
SELECT id, 'last_name', 3, 1, 1, '', created_at, updated_at FROM tenants
WHERE NOT EXISTS (SELECT 1 FROM company_directory_settings s WHERE s.tenant_id = tenants.id);
