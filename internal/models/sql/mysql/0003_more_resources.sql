-- The remaining configuration resources of resources.md: platform
-- organisation and webhooks, tenant telephony (agents, queues, menus,
-- conference rooms, devices, ...), collaboration and CRM. Generated with
-- switchboard schema-sql; tables come after the tables they reference.
-- Tenant singletons (branding, company_directory_settings) get a row for
-- every existing tenant; new tenants get theirs when created.

CREATE TABLE IF NOT EXISTS enterprises (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(64) NOT NULL,
  sites TEXT NULL,
  intersite_prefix VARCHAR(255) NULL,
  intersite_dialing TINYINT(1) NOT NULL DEFAULT 0,
  shared_directory TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  UNIQUE KEY uq_enterprises_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS resellers (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(64) NOT NULL,
  company VARCHAR(128) NULL,
  contact_email VARCHAR(254) NULL,
  contact_phone VARCHAR(255) NULL,
  max_tenants BIGINT NULL,
  max_extensions_total BIGINT NULL,
  max_concurrent_calls_total BIGINT NULL,
  branding TEXT NULL,
  billing_reference VARCHAR(64) NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  UNIQUE KEY uq_resellers_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS webhooks (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(64) NOT NULL,
  url VARCHAR(1024) NOT NULL,
  events TEXT NOT NULL,
  filter TEXT NULL,
  secret TEXT NULL,
  content_type VARCHAR(255) NULL,
  headers TEXT NULL,
  timeout_ms BIGINT NULL,
  max_attempts BIGINT NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  disabled_reason VARCHAR(255) NULL,
  consecutive_failures BIGINT NULL,
  last_success_at VARCHAR(32) NULL,
  last_failure_at VARCHAR(32) NULL,
  description VARCHAR(255) NULL,
  tenants TEXT NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  UNIQUE KEY uq_webhooks_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS system_webhooks (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name VARCHAR(64) NOT NULL,
  url VARCHAR(1024) NOT NULL,
  events TEXT NOT NULL,
  filter TEXT NULL,
  secret TEXT NULL,
  content_type VARCHAR(255) NULL,
  headers TEXT NULL,
  timeout_ms BIGINT NULL,
  max_attempts BIGINT NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  disabled_reason VARCHAR(255) NULL,
  consecutive_failures BIGINT NULL,
  last_success_at VARCHAR(32) NULL,
  last_failure_at VARCHAR(32) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  UNIQUE KEY uq_system_webhooks_name (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS voice_prompts (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  language VARCHAR(255) NULL,
  source VARCHAR(255) NULL,
  tts_text VARCHAR(2000) NULL,
  filename VARCHAR(255) NULL,
  format VARCHAR(16) NULL,
  duration_ms BIGINT NULL,
  size_bytes BIGINT NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE KEY uq_voice_prompts_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS music_on_hold (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  files TEXT NULL,
  rate BIGINT NULL,
  shuffle TINYINT(1) NOT NULL DEFAULT 0,
  chime_prompt_id BIGINT NULL,
  chime_frequency_seconds BIGINT NULL,
  chime_max BIGINT NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (chime_prompt_id) REFERENCES voice_prompts(id),
  UNIQUE KEY uq_music_on_hold_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS departments (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  parent_id BIGINT NULL,
  manager_extension VARCHAR(255) NULL,
  accountcode VARCHAR(32) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (parent_id) REFERENCES departments(id),
  UNIQUE KEY uq_departments_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS tags (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(32) NOT NULL,
  color VARCHAR(255) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE KEY uq_tags_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS agents (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  agent_number VARCHAR(255) NOT NULL,
  pin TEXT NULL,
  extension VARCHAR(255) NULL,
  contact_type VARCHAR(255) NULL,
  external_number VARCHAR(255) NULL,
  queues TEXT NULL,
  status VARCHAR(255) NULL,
  break_reason VARCHAR(64) NULL,
  max_no_answer BIGINT NULL,
  wrap_up_seconds BIGINT NULL,
  reject_delay_seconds BIGINT NULL,
  busy_delay_seconds BIGINT NULL,
  no_answer_delay_seconds BIGINT NULL,
  auto_logout_seconds BIGINT NULL,
  record TINYINT(1) NOT NULL DEFAULT 0,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE KEY uq_agents_agent_number (tenant_id, agent_number)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS queues (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  number VARCHAR(255) NOT NULL,
  strategy VARCHAR(255) NULL,
  greeting_prompt_id BIGINT NULL,
  moh_class_id BIGINT NULL,
  announce_prompt_id BIGINT NULL,
  announce_frequency_seconds BIGINT NULL,
  record TINYINT(1) NOT NULL DEFAULT 0,
  max_wait_seconds BIGINT NULL,
  max_wait_no_agent_seconds BIGINT NULL,
  max_wait_no_agent_reached_seconds BIGINT NULL,
  tier_rules_apply TINYINT(1) NOT NULL DEFAULT 0,
  tier_rule_wait_seconds BIGINT NULL,
  tier_rule_wait_multiply_level TINYINT(1) NOT NULL DEFAULT 0,
  tier_rule_no_agent_no_wait TINYINT(1) NOT NULL DEFAULT 0,
  discard_abandoned_after_seconds BIGINT NULL,
  abandoned_resume_allowed TINYINT(1) NOT NULL DEFAULT 0,
  time_base_score VARCHAR(255) NULL,
  exit_key VARCHAR(255) NULL,
  exit_destination TEXT NULL,
  timeout_destination TEXT NULL,
  callerid_name_prefix VARCHAR(16) NULL,
  service_level_seconds BIGINT NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (greeting_prompt_id) REFERENCES voice_prompts(id),
  FOREIGN KEY (moh_class_id) REFERENCES music_on_hold(id),
  FOREIGN KEY (announce_prompt_id) REFERENCES voice_prompts(id),
  UNIQUE KEY uq_queues_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS hunt_groups (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  number VARCHAR(255) NOT NULL,
  strategy VARCHAR(255) NULL,
  members TEXT NOT NULL,
  ring_seconds BIGINT NULL,
  timeout_destination TEXT NULL,
  callerid_name_prefix VARCHAR(16) NULL,
  ringback VARCHAR(255) NULL,
  skip_busy_members TINYINT(1) NOT NULL DEFAULT 0,
  respect_member_forwarding TINYINT(1) NOT NULL DEFAULT 0,
  confirm_external TINYINT(1) NOT NULL DEFAULT 0,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE KEY uq_hunt_groups_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS pickup_groups (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(255) NOT NULL,
  members TEXT NULL,
  pickers TEXT NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE KEY uq_pickup_groups_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS ivr_menus (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  number VARCHAR(255) NOT NULL,
  greeting_long_prompt_id BIGINT NULL,
  greeting_short_prompt_id BIGINT NULL,
  invalid_prompt_id BIGINT NULL,
  exit_prompt_id BIGINT NULL,
  timeout_ms BIGINT NULL,
  inter_digit_timeout_ms BIGINT NULL,
  max_failures BIGINT NULL,
  max_timeouts BIGINT NULL,
  digit_len BIGINT NULL,
  direct_dial TINYINT(1) NOT NULL DEFAULT 0,
  options TEXT NULL,
  exit_destination TEXT NULL,
  language VARCHAR(255) NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (greeting_long_prompt_id) REFERENCES voice_prompts(id),
  FOREIGN KEY (greeting_short_prompt_id) REFERENCES voice_prompts(id),
  FOREIGN KEY (invalid_prompt_id) REFERENCES voice_prompts(id),
  FOREIGN KEY (exit_prompt_id) REFERENCES voice_prompts(id),
  UNIQUE KEY uq_ivr_menus_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS special_endpoints (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  number VARCHAR(255) NOT NULL,
  kind VARCHAR(255) NOT NULL,
  external_number VARCHAR(255) NULL,
  sip_uri VARCHAR(255) NULL,
  application VARCHAR(255) NULL,
  ring_seconds BIGINT NULL,
  callerid_policy VARCHAR(255) NULL,
  fax_email VARCHAR(254) NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE KEY uq_special_endpoints_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS special_mailboxes (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  number VARCHAR(255) NOT NULL,
  pin TEXT NULL,
  emails TEXT NULL,
  attach_audio TINYINT(1) NOT NULL DEFAULT 0,
  delete_after_email TINYINT(1) NOT NULL DEFAULT 0,
  greeting_prompt_id BIGINT NULL,
  notify_extensions TEXT NULL,
  max_messages BIGINT NULL,
  max_message_seconds BIGINT NULL,
  language VARCHAR(255) NULL,
  timezone VARCHAR(64) NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (greeting_prompt_id) REFERENCES voice_prompts(id),
  UNIQUE KEY uq_special_mailboxes_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS conference_rooms (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  number VARCHAR(255) NOT NULL,
  pin TEXT NULL,
  moderator_pin TEXT NULL,
  max_members BIGINT NULL,
  wait_for_moderator TINYINT(1) NOT NULL DEFAULT 0,
  end_when_moderator_leaves TINYINT(1) NOT NULL DEFAULT 0,
  mute_on_join TINYINT(1) NOT NULL DEFAULT 0,
  announce_join_leave TINYINT(1) NOT NULL DEFAULT 0,
  announce_count TINYINT(1) NOT NULL DEFAULT 0,
  record TINYINT(1) NOT NULL DEFAULT 0,
  moh_class_id BIGINT NULL,
  quality VARCHAR(255) NULL,
  language VARCHAR(255) NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (moh_class_id) REFERENCES music_on_hold(id),
  UNIQUE KEY uq_conference_rooms_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS company_directory (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  display_name VARCHAR(64) NOT NULL,
  number VARCHAR(255) NOT NULL,
  speed_dial VARCHAR(255) NULL,
  department_id BIGINT NULL,
  visible_to_phones TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (department_id) REFERENCES departments(id),
  UNIQUE KEY uq_company_directory_speed_dial (tenant_id, speed_dial)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS company_directory_settings (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  number VARCHAR(255) NULL,
  search_by VARCHAR(255) NULL,
  min_search_digits BIGINT NULL,
  announce_extension TINYINT(1) NOT NULL DEFAULT 0,
  include_enterprise_sites TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS devices (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  mac_address VARCHAR(17) NOT NULL,
  vendor VARCHAR(255) NOT NULL,
  model VARCHAR(32) NULL,
  label VARCHAR(64) NULL,
  device_lines TEXT NULL,
  device_keys TEXT NULL,
  timezone VARCHAR(64) NULL,
  language VARCHAR(255) NULL,
  provisioning_username VARCHAR(255) NULL,
  provisioning_password TEXT NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  last_provisioned_at VARCHAR(32) NULL,
  last_provisioned_ip VARCHAR(45) NULL,
  last_user_agent VARCHAR(255) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE KEY uq_devices_mac_address (tenant_id, mac_address)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS click_to_call_widgets (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  mode VARCHAR(255) NULL,
  destination TEXT NOT NULL,
  allowed_origins TEXT NOT NULL,
  public_id VARCHAR(255) NULL,
  schedule_id BIGINT NULL,
  closed_message VARCHAR(255) NULL,
  button_label VARCHAR(32) NULL,
  button_color VARCHAR(255) NULL,
  callerid_name_prefix VARCHAR(16) NULL,
  ask_name TINYINT(1) NOT NULL DEFAULT 0,
  allowed_countries TEXT NULL,
  max_calls_per_hour_per_ip BIGINT NULL,
  require_captcha TINYINT(1) NOT NULL DEFAULT 0,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (schedule_id) REFERENCES schedules(id),
  UNIQUE KEY uq_click_to_call_widgets_name (tenant_id, name),
  UNIQUE KEY uq_click_to_call_widgets_public_id (tenant_id, public_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS chat_channels (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  display_name VARCHAR(64) NULL,
  topic VARCHAR(255) NULL,
  visibility VARCHAR(255) NULL,
  members TEXT NULL,
  read_only TINYINT(1) NOT NULL DEFAULT 0,
  archived TINYINT(1) NOT NULL DEFAULT 0,
  jid VARCHAR(255) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE KEY uq_chat_channels_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS branding (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  product_name VARCHAR(64) NULL,
  logo MEDIUMTEXT NULL,
  favicon MEDIUMTEXT NULL,
  primary_color VARCHAR(255) NULL,
  secondary_color VARCHAR(255) NULL,
  custom_domain VARCHAR(255) NULL,
  support_email VARCHAR(254) NULL,
  support_url VARCHAR(255) NULL,
  email_from_name VARCHAR(64) NULL,
  email_from_address VARCHAR(254) NULL,
  login_message VARCHAR(500) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE (tenant_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS messaging_channels (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  type VARCHAR(255) NOT NULL,
  provider VARCHAR(255) NOT NULL,
  sender VARCHAR(255) NULL,
  credentials TEXT NULL,
  template_only TINYINT(1) NOT NULL DEFAULT 0,
  templates TEXT NULL,
  default_country VARCHAR(255) NULL,
  inbound_destination TEXT NULL,
  max_body_chars BIGINT NULL,
  rate_per_second BIGINT NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE KEY uq_messaging_channels_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS incoming_webhooks (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  channel VARCHAR(64) NOT NULL,
  name VARCHAR(64) NOT NULL,
  description VARCHAR(255) NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  picture MEDIUMTEXT NULL,
  token VARCHAR(255) NULL,
  url VARCHAR(1024) NULL,
  created_by VARCHAR(255) NULL,
  last_used_at VARCHAR(32) NULL,
  message_count BIGINT NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS outbound_webhooks (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  url VARCHAR(1024) NOT NULL,
  events TEXT NOT NULL,
  filter TEXT NULL,
  secret TEXT NULL,
  content_type VARCHAR(255) NULL,
  headers TEXT NULL,
  timeout_ms BIGINT NULL,
  max_attempts BIGINT NULL,
  enabled TINYINT(1) NOT NULL DEFAULT 0,
  disabled_reason VARCHAR(255) NULL,
  consecutive_failures BIGINT NULL,
  last_success_at VARCHAR(32) NULL,
  last_failure_at VARCHAR(32) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE KEY uq_outbound_webhooks_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS accounts (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(128) NOT NULL,
  domain VARCHAR(255) NULL,
  industry VARCHAR(64) NULL,
  phone VARCHAR(255) NULL,
  address TEXT NULL,
  owner VARCHAR(255) NULL,
  parent_id BIGINT NULL,
  custom TEXT NULL,
  tags TEXT NULL,
  external_id VARCHAR(64) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (parent_id) REFERENCES accounts(id),
  UNIQUE KEY uq_accounts_name (tenant_id, name),
  UNIQUE KEY uq_accounts_external_id (tenant_id, external_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS contacts (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  first_name VARCHAR(64) NULL,
  last_name VARCHAR(64) NULL,
  company_name VARCHAR(128) NULL,
  account_id BIGINT NULL,
  title VARCHAR(64) NULL,
  role VARCHAR(64) NULL,
  phones TEXT NULL,
  emails TEXT NULL,
  addresses TEXT NULL,
  timezone VARCHAR(64) NULL,
  owner VARCHAR(255) NULL,
  source VARCHAR(32) NULL,
  opt_out_sms TINYINT(1) NOT NULL DEFAULT 0,
  opt_out_whatsapp TINYINT(1) NOT NULL DEFAULT 0,
  opt_out_calls TINYINT(1) NOT NULL DEFAULT 0,
  custom TEXT NULL,
  tags TEXT NULL,
  external_id VARCHAR(64) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (account_id) REFERENCES accounts(id),
  UNIQUE KEY uq_contacts_external_id (tenant_id, external_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS leads (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  contact_id BIGINT NULL,
  first_name VARCHAR(64) NULL,
  last_name VARCHAR(64) NULL,
  company_name VARCHAR(128) NULL,
  phone VARCHAR(255) NULL,
  email VARCHAR(254) NULL,
  status VARCHAR(255) NULL,
  source VARCHAR(32) NULL,
  score BIGINT NULL,
  owner VARCHAR(255) NULL,
  converted_deal_id BIGINT NULL,
  custom TEXT NULL,
  tags TEXT NULL,
  external_id VARCHAR(64) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (contact_id) REFERENCES contacts(id),
  UNIQUE KEY uq_leads_external_id (tenant_id, external_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS lists (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  kind VARCHAR(255) NULL,
  members TEXT NULL,
  filter TEXT NULL,
  purpose VARCHAR(255) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE KEY uq_lists_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS custom_fields (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  entity VARCHAR(255) NOT NULL,
  field_key VARCHAR(255) NOT NULL,
  label VARCHAR(64) NOT NULL,
  type VARCHAR(255) NOT NULL,
  options TEXT NULL,
  required TINYINT(1) NOT NULL DEFAULT 0,
  default_value VARCHAR(255) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  UNIQUE KEY uq_custom_fields_entity_field_key (tenant_id, entity, field_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS activities (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  kind VARCHAR(255) NOT NULL,
  subject VARCHAR(255) NULL,
  body MEDIUMTEXT NULL,
  occurred_at VARCHAR(255) NULL,
  duration_seconds BIGINT NULL,
  direction VARCHAR(255) NULL,
  related TEXT NULL,
  extension VARCHAR(255) NULL,
  cdr_id VARCHAR(64) NULL,
  recording_id VARCHAR(64) NULL,
  message_id VARCHAR(64) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS tasks (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  title VARCHAR(255) NOT NULL,
  due_at VARCHAR(255) NULL,
  status VARCHAR(255) NULL,
  priority VARCHAR(255) NULL,
  assignee VARCHAR(255) NULL,
  related TEXT NULL,
  kind VARCHAR(255) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS campaigns (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  kind VARCHAR(255) NOT NULL,
  list_id BIGINT NOT NULL,
  do_not_call_list_ids TEXT NULL,
  messaging_channel_id BIGINT NULL,
  template_id VARCHAR(255) NULL,
  destination TEXT NULL,
  callerid VARCHAR(255) NULL,
  dial_window TEXT NULL,
  pacing_per_minute BIGINT NULL,
  max_attempts BIGINT NULL,
  retry_after_minutes BIGINT NULL,
  status VARCHAR(255) NULL,
  starts_at VARCHAR(255) NULL,
  ends_at VARCHAR(255) NULL,
  stats TEXT NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (list_id) REFERENCES lists(id),
  FOREIGN KEY (messaging_channel_id) REFERENCES messaging_channels(id),
  UNIQUE KEY uq_campaigns_name (tenant_id, name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS deals (
  id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tenant_id BIGINT NOT NULL,
  name VARCHAR(64) NOT NULL,
  account_id BIGINT NULL,
  contact_id BIGINT NULL,
  amount VARCHAR(255) NULL,
  currency VARCHAR(255) NULL,
  stage VARCHAR(255) NULL,
  probability BIGINT NULL,
  expected_close_date VARCHAR(255) NULL,
  owner VARCHAR(255) NULL,
  lost_reason VARCHAR(255) NULL,
  custom TEXT NULL,
  tags TEXT NULL,
  external_id VARCHAR(64) NULL,
  description VARCHAR(255) NULL,
  created_at VARCHAR(32) NOT NULL,
  updated_at VARCHAR(32) NOT NULL,
  FOREIGN KEY (tenant_id) REFERENCES tenants(id),
  FOREIGN KEY (account_id) REFERENCES accounts(id),
  FOREIGN KEY (contact_id) REFERENCES contacts(id),
  UNIQUE KEY uq_deals_external_id (tenant_id, external_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

INSERT INTO branding (tenant_id, description, created_at, updated_at)
SELECT id, '', created_at, updated_at FROM tenants
WHERE NOT EXISTS (SELECT 1 FROM branding b WHERE b.tenant_id = tenants.id);

INSERT INTO company_directory_settings (tenant_id, search_by, min_search_digits, announce_extension, include_enterprise_sites, description, created_at, updated_at)
SELECT id, 'last_name', 3, 1, 1, '', created_at, updated_at FROM tenants
WHERE NOT EXISTS (SELECT 1 FROM company_directory_settings s WHERE s.tenant_id = tenants.id);
