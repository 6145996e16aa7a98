package models

// Tenant telephony resources beyond routing (resources.md §2.2–§2.5, §2.9,
// §2.13–§2.18, §2.20–§2.23). Cross-field rules live in rules hooks
// (resources_rules.go); field rules are declared here.

// optInt declares an optional integer with an inclusive range and no default.
func optInt(name string, min, max int64, doc string) *Field {
	return &Field{Name: name, Type: Int, Min: min, Max: max, HasRange: true, Doc: doc}
}

// promptRef declares an optional reference to a voice prompt of the tenant.
func promptRef(name, doc string) *Field {
	return &Field{Name: name, Type: Int, Ref: "voice_prompts", Doc: doc}
}

// numberField is a required number in the tenant's shared number plan.
func numberField() *Field {
	return &Field{Name: "number", Type: String, Required: true, Pattern: patNumber, NumberPlan: true, Doc: "dial number; shares the tenant number plan"}
}

// extensionRef names an extension of the tenant by its number.
func extensionRef(name, doc string) *Field {
	return &Field{Name: name, Type: String, Pattern: patNumber, Ref: "extensions", Doc: doc}
}

const (
	patColor   = `^#[0-9A-Fa-f]{6}$`
	patTagName = `^[A-Za-z0-9 _.-]{1,32}$`
	patOrigin  = `^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$`
	patSIPURI  = `^sips?:[^@\s<>"]+@[A-Za-z0-9.-]+(:[0-9]{1,5})?(;transport=(udp|tcp|tls))?$`
	patMAC     = `^([0-9A-Fa-f]{2}[:.-]?){5}[0-9A-Fa-f]{2}$`
	patCIDPfx  = `^[^"<>\r\n]{0,16}$`
)

var agentsResource = &Resource{
	Unique: [][]string{{"agent_number"}},
	Name:   "agents", Title: "agent", Scope: TenantScope, Table: "agents", Order: "agent_number",
	Hooks: rules{checks: []check{requireWhen("external_number", "contact_type", "external")}},
	Fields: []*Field{
		nameField(),
		{Name: "agent_number", Type: String, Required: true, Pattern: `^[0-9]{2,8}$`, Doc: "login id for the agent feature code; its own space, not the number plan"},
		{Name: "pin", Type: String, Secret: Encrypted, Pattern: patPIN, Doc: "login PIN"},
		extensionRef("extension", "where calls ring by default"),
		enumField("contact_type", "extension", "extension", "external"),
		{Name: "external_number", Type: String, Pattern: patE164, Doc: "remote agent; required when contact_type is external"},
		{Name: "queues", Type: ObjectList, MaxItems: 100, Doc: "mod_callcenter tiers", Props: []*Field{
			{Name: "queue_id", Type: Int, Required: true, Min: 1, Max: 1 << 62, HasRange: true, Ref: "queues"},
			intField("level", 1, 9, 1, ""),
			intField("position", 1, 99, 1, ""),
		}},
		enumField("status", "logged_out", "logged_out", "available", "available_on_demand", "on_break"),
		{Name: "break_reason", Type: String, MaxLen: 64, NoExpand: true},
		intField("max_no_answer", 0, 1000, 3, "0 = never pause"),
		intField("wrap_up_seconds", 0, 3600, 10, ""),
		intField("reject_delay_seconds", 0, 3600, 10, ""),
		intField("busy_delay_seconds", 0, 3600, 60, ""),
		intField("no_answer_delay_seconds", 0, 3600, 60, ""),
		intField("auto_logout_seconds", 0, 86400, 0, "0 = off"),
		boolField("record", false, ""),
		enabledField(),
		descriptionField(),
	},
}

var queuesResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "queues", Title: "queue", Scope: TenantScope, Table: "queues", Order: "number",
	CloneFlag: "tenant_queues",
	Hooks:     rules{name: "queues", checks: []check{requireWhen("exit_destination", "exit_key", "*")}},
	Fields: []*Field{
		nameField(),
		numberField(),
		enumField("strategy", "longest-idle-agent", "ring-all", "longest-idle-agent", "round-robin", "top-down",
			"agent-with-least-talk-time", "agent-with-fewest-calls", "sequentially-by-agent-order", "random", "ring-progressively"),
		promptRef("greeting_prompt_id", "played once on entry"),
		{Name: "moh_class_id", Type: Int, Ref: "music_on_hold", Doc: "default the tenant's"},
		promptRef("announce_prompt_id", "periodic announcement"),
		intField("announce_frequency_seconds", 0, 3600, 0, "0 = off"),
		boolField("record", false, ""),
		intField("max_wait_seconds", 0, 86400, 0, "0 = unlimited"),
		intField("max_wait_no_agent_seconds", 0, 86400, 0, ""),
		intField("max_wait_no_agent_reached_seconds", 0, 86400, 5, ""),
		boolField("tier_rules_apply", false, ""),
		intField("tier_rule_wait_seconds", 0, 86400, 300, ""),
		boolField("tier_rule_wait_multiply_level", true, ""),
		boolField("tier_rule_no_agent_no_wait", false, ""),
		intField("discard_abandoned_after_seconds", 0, 86400, 60, ""),
		boolField("abandoned_resume_allowed", false, ""),
		enumField("time_base_score", "queue", "queue", "system"),
		{Name: "exit_key", Type: String, Pattern: `^[0-9*#]$`, Doc: "one DTMF digit"},
		{Name: "exit_destination", Type: Destination, Doc: "required when exit_key is set"},
		{Name: "timeout_destination", Type: Destination, Doc: "after max wait; default hangup"},
		{Name: "callerid_name_prefix", Type: String, MaxLen: 16, Pattern: patCIDPfx, NoExpand: true},
		intField("service_level_seconds", 0, 3600, 20, "reporting only"),
		enabledField(),
		descriptionField(),
	},
}

var huntGroupsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "hunt_groups", Title: "hunt group", Scope: TenantScope, Table: "hunt_groups", Order: "number",
	CloneFlag: "tenant_queues",
	Hooks:     huntGroupRules{rules{name: "hunt_groups"}},
	Fields: []*Field{
		nameField(),
		numberField(),
		enumField("strategy", "simultaneous", "simultaneous", "sequential", "random", "round_robin", "enterprise"),
		{Name: "members", Type: ObjectList, Required: true, MaxItems: 100, Doc: "order = ring order", Props: []*Field{
			required(enumField("type", "", "extension", "external")),
			{Name: "target", Type: String, Required: true, Pattern: patDialable, Ref: "extensions", RefWhen: [2]string{"type", "extension"}},
			intField("delay_seconds", 0, 300, 0, ""),
			intField("timeout_seconds", 5, 300, 20, ""),
		}},
		intField("ring_seconds", 5, 600, 30, "whole group"),
		{Name: "timeout_destination", Type: Destination, Doc: "default hangup"},
		{Name: "callerid_name_prefix", Type: String, MaxLen: 16, Pattern: patCIDPfx, NoExpand: true},
		enumField("ringback", "ring", "ring", "moh"),
		boolField("skip_busy_members", true, ""),
		boolField("respect_member_forwarding", false, ""),
		boolField("confirm_external", true, "external members press 1 to accept"),
		enabledField(),
		descriptionField(),
	},
}

var pickupGroupsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "pickup_groups", Title: "pickup group", Scope: TenantScope, Table: "pickup_groups", Order: "name",
	Fields: []*Field{
		{Name: "name", Type: String, Required: true, Pattern: `^[a-z0-9_]{1,32}$`, Doc: "rendered as pickup/<tenant>_<name>"},
		{Name: "members", Type: StringList, Pattern: patNumber, MaxItems: 500, Ref: "extensions", Doc: "extensions whose ringing calls can be picked up"},
		{Name: "pickers", Type: StringList, Pattern: patNumber, MaxItems: 500, Ref: "extensions", Doc: "who may pick up; empty = members"},
		enabledField(),
		descriptionField(),
	},
}

var ivrMenusResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "ivr_menus", Title: "IVR menu", Scope: TenantScope, Table: "ivr_menus", Order: "number",
	CloneFlag: "tenant_menus",
	// greeting_long_prompt_id is required by a rule, not by the column, so
	// a menu cloned without its prompts keeps a cleared (NULL) greeting.
	Hooks: rules{name: "ivr_menus", checks: []check{requireWhen("greeting_long_prompt_id", "", ""), uniqueItems("options", "digits")}},
	Fields: []*Field{
		nameField(),
		numberField(),
		promptRef("greeting_long_prompt_id", "required; greet-long"),
		promptRef("greeting_short_prompt_id", "greet-short; default the long greeting"),
		promptRef("invalid_prompt_id", "default system sound"),
		promptRef("exit_prompt_id", "default system sound"),
		intField("timeout_ms", 1000, 60000, 5000, ""),
		intField("inter_digit_timeout_ms", 500, 10000, 2000, ""),
		intField("max_failures", 1, 10, 3, ""),
		intField("max_timeouts", 1, 10, 3, ""),
		intField("digit_len", 1, 10, 5, ""),
		boolField("direct_dial", false, "callers may dial any extension number"),
		{Name: "options", Type: ObjectList, MaxItems: 20, Props: []*Field{
			{Name: "digits", Type: String, Required: true, Pattern: `^[0-9*#]{1,5}$`},
			{Name: "destination", Type: Destination, Required: true},
		}},
		{Name: "exit_destination", Type: Destination, Doc: "after failures or timeouts; default hangup"},
		{Name: "language", Type: String, Pattern: patLanguage},
		enabledField(),
		descriptionField(),
	},
}

var specialEndpointsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "special_endpoints", Title: "special endpoint", Scope: TenantScope, Table: "special_endpoints", Order: "number",
	Hooks: specialEndpointRules{rules{checks: []check{
		requireWhen("external_number", "kind", "external"),
		requireWhen("sip_uri", "kind", "sip_uri"),
		requireWhen("application", "kind", "application"),
		requireWhen("fax_email", "application", "fax_to_email"),
	}}},
	Fields: []*Field{
		nameField(),
		numberField(),
		required(enumField("kind", "", "external", "sip_uri", "application")),
		{Name: "external_number", Type: String, Pattern: patDialable, Doc: "dialled through the tenant's outbound routes"},
		{Name: "sip_uri", Type: String, Pattern: patSIPURI, NoExpand: true, Doc: "only when the tenant allows SIP URI endpoints"},
		enumField("application", "", "echo_test", "moh_test", "voicemail_main", "company_directory", "fax_to_email", "speaking_clock"),
		intField("ring_seconds", 5, 300, 30, ""),
		enumField("callerid_policy", "passthrough", "passthrough", "tenant"),
		{Name: "fax_email", Type: String, MaxLen: 254, Pattern: patEmail},
		enabledField(),
		descriptionField(),
	},
}

var specialMailboxesResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "special_mailboxes", Title: "special mailbox", Scope: TenantScope, Table: "special_mailboxes", Order: "number",
	Hooks: rules{},
	Fields: []*Field{
		nameField(),
		numberField(),
		{Name: "pin", Type: String, Secret: Encrypted, Pattern: patPIN, Generate: randomPIN, Doc: "generated when omitted; returned once"},
		{Name: "emails", Type: StringList, Pattern: patEmail, MaxItems: 10},
		boolField("attach_audio", true, ""),
		boolField("delete_after_email", false, ""),
		promptRef("greeting_prompt_id", ""),
		{Name: "notify_extensions", Type: StringList, Pattern: patNumber, MaxItems: 50, Doc: "phones that get the message-waiting light"},
		intField("max_messages", 1, 1000, 100, ""),
		intField("max_message_seconds", 10, 3600, 300, ""),
		{Name: "language", Type: String, Pattern: patLanguage},
		{Name: "timezone", Type: String, MaxLen: 64},
		enabledField(),
		descriptionField(),
	},
}

var conferenceRoomsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "conference_rooms", Title: "conference room", Scope: TenantScope, Table: "conference_rooms", Order: "number",
	Hooks: rules{checks: []check{differentSecrets("moderator_pin", "pin")}},
	Fields: []*Field{
		nameField(),
		numberField(),
		{Name: "pin", Type: String, Secret: Encrypted, Pattern: `^[0-9]{3,10}$`, Doc: "participants"},
		{Name: "moderator_pin", Type: String, Secret: Encrypted, Pattern: `^[0-9]{3,10}$`, Doc: "different from pin"},
		intField("max_members", 0, 500, 0, "0 = unlimited"),
		boolField("wait_for_moderator", false, ""),
		boolField("end_when_moderator_leaves", false, ""),
		boolField("mute_on_join", false, ""),
		boolField("announce_join_leave", false, ""),
		boolField("announce_count", true, ""),
		boolField("record", false, ""),
		{Name: "moh_class_id", Type: Int, Ref: "music_on_hold", Doc: "while alone or waiting"},
		enumField("quality", "wideband", "narrowband", "wideband", "superwideband"),
		{Name: "language", Type: String, Pattern: patLanguage},
		enabledField(),
		descriptionField(),
	},
}

// companyDirectoryResource holds the extra phone-book entries; extensions
// appear in the directory by themselves when directory_visible.
var companyDirectoryResource = &Resource{
	Unique: [][]string{{"speed_dial"}},
	Name:   "company_directory", Title: "directory entry", Scope: TenantScope, Table: "company_directory", Order: "display_name",
	Fields: []*Field{
		{Name: "display_name", Type: String, Required: true, MaxLen: 64, NoExpand: true},
		{Name: "number", Type: String, Required: true, Pattern: patDialable},
		{Name: "speed_dial", Type: String, Pattern: `^[0-9]{1,3}$`},
		{Name: "department_id", Type: Int, Ref: "departments"},
		boolField("visible_to_phones", true, "in the provisioning phone book"),
		descriptionField(),
	},
}

// companyDirectorySettingsResource is the dial-by-name singleton the guide
// puts at …/company_directory/settings; the generic router mounts
// singletons at their name, so it lives at …/company_directory_settings.
var companyDirectorySettingsResource = &Resource{
	Name: "company_directory_settings", Title: "company directory settings", Scope: TenantScope,
	Table: "company_directory_settings", Singleton: true,
	Fields: []*Field{
		{Name: "number", Type: String, Pattern: patNumber, NumberPlan: true, Doc: "dial-by-name entry point"},
		enumField("search_by", "last_name", "first_name", "last_name", "both"),
		intField("min_search_digits", 1, 10, 3, ""),
		boolField("announce_extension", true, ""),
		boolField("include_enterprise_sites", true, ""),
		descriptionField(),
	},
}

var devicesResource = &Resource{
	Unique: [][]string{{"mac_address"}},
	Name:   "devices", Title: "device", Scope: TenantScope, Table: "devices", Order: "mac_address",
	Hooks: rules{prepare: normaliseMAC, checks: []check{uniqueItems("device_lines", "line"), uniqueItems("device_keys", "position")}},
	Fields: []*Field{
		{Name: "mac_address", Type: String, Required: true, MaxLen: 17, Pattern: patMAC, Doc: "stored as 12 lower-case hex digits"},
		required(enumField("vendor", "", "yealink", "polycom", "grandstream", "snom", "fanvil", "cisco", "other")),
		{Name: "model", Type: String, MaxLen: 32},
		{Name: "label", Type: String, MaxLen: 64},
		{Name: "device_lines", Type: ObjectList, MaxItems: 16, Doc: "the guide's lines (a reserved word in SQL)", Props: []*Field{
			{Name: "line", Type: Int, Required: true, Min: 1, Max: 16, HasRange: true},
			{Name: "extension", Type: String, Required: true, Pattern: patNumber, Ref: "extensions"},
			{Name: "label", Type: String, MaxLen: 32},
			boolField("shared", false, ""),
		}},
		{Name: "device_keys", Type: ObjectList, MaxItems: 100, Doc: "the guide's keys (a reserved word in SQL)", Props: []*Field{
			{Name: "position", Type: Int, Required: true, Min: 1, Max: 100, HasRange: true},
			required(enumField("type", "", "blf", "speed_dial", "line", "park", "dnd", "office_mode")),
			{Name: "value", Type: String, MaxLen: 64},
			{Name: "label", Type: String, MaxLen: 32},
		}},
		{Name: "timezone", Type: String, MaxLen: 64},
		{Name: "language", Type: String, Pattern: patLanguage},
		{Name: "provisioning_username", Type: String, Pattern: `^[A-Za-z0-9._@-]{1,64}$`},
		{Name: "provisioning_password", Type: String, Secret: Encrypted, Pattern: `^[!-~]{12,64}$`, Generate: randomSecret24, Doc: "HTTP auth for config downloads; generated when omitted; returned once"},
		enabledField(),
		{Name: "last_provisioned_at", Type: Time, ReadOnly: true},
		{Name: "last_provisioned_ip", Type: String, ReadOnly: true, MaxLen: 45},
		{Name: "last_user_agent", Type: String, ReadOnly: true},
		descriptionField(),
	},
}

var departmentsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "departments", Title: "department", Scope: TenantScope, Table: "departments", Order: "name",
	Hooks: rules{name: "departments", tree: "parent_id"},
	Fields: []*Field{
		nameField(),
		{Name: "parent_id", Type: Int, Ref: "departments", Doc: "no cycles"},
		extensionRef("manager_extension", ""),
		{Name: "accountcode", Type: String, MaxLen: 32, Pattern: `^[A-Za-z0-9_.-]{0,32}$`, Doc: "default for member extensions without their own"},
		descriptionField(),
	},
}

var tagsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "tags", Title: "tag", Scope: TenantScope, Table: "tags", Order: "name",
	Fields: []*Field{
		{Name: "name", Type: String, Required: true, MaxLen: 32, Pattern: patTagName},
		{Name: "color", Type: String, Pattern: patColor, Default: "#808080"},
		descriptionField(),
	},
}

var clickToCallWidgetsResource = &Resource{
	Unique: [][]string{{"name"}, {"public_id"}},
	Name:   "click_to_call_widgets", Title: "click-to-call widget", Scope: TenantScope, Table: "click_to_call_widgets",
	Hooks: rules{name: "click_to_call_widgets"},
	Fields: []*Field{
		nameField(),
		enumField("mode", "callback", "callback", "webrtc"),
		{Name: "destination", Type: Destination, Required: true, DestTypes: []string{"extension", "queue", "hunt_group", "ivr"}},
		{Name: "allowed_origins", Type: StringList, Required: true, MaxItems: 20, Pattern: patOrigin, Doc: "CORS and embed check"},
		{Name: "public_id", Type: String, ReadOnly: true, Generate: randomPublicID, Doc: "used in the embed snippet"},
		{Name: "schedule_id", Type: Int, Ref: "schedules", Doc: "outside open periods the button shows closed_message"},
		{Name: "closed_message", Type: String, MaxLen: 255},
		{Name: "button_label", Type: String, MaxLen: 32, Default: "Call us"},
		{Name: "button_color", Type: String, Pattern: patColor},
		{Name: "callerid_name_prefix", Type: String, MaxLen: 16, Pattern: patCIDPfx, NoExpand: true, Default: "Web:"},
		boolField("ask_name", true, ""),
		{Name: "allowed_countries", Type: StringList, Pattern: patCountry, MaxItems: 250, Doc: "callback mode: only call visitors in these countries"},
		intField("max_calls_per_hour_per_ip", 1, 100, 5, ""),
		boolField("require_captcha", true, ""),
		enabledField(),
		descriptionField(),
	},
}

// voicePromptsResource declares a prompt. audio_base64 (or a multipart
// "audio" part) is converted by the store's AudioSink (package media) into
// <media dir>/<tenant>/<filename>, a 16 kHz mono WAV, before the row is
// written; filename, format, duration_ms and size_bytes describe that file.
var voicePromptsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "voice_prompts", Title: "voice prompt", Scope: TenantScope, Table: "voice_prompts", Order: "name",
	CloneFlag: "tenant_voiceprompts",
	Hooks:     rules{checks: []check{requireWhen("tts_text", "source", "tts")}},
	Fields: []*Field{
		nameField(),
		{Name: "language", Type: String, Pattern: patLanguage},
		enumField("source", "upload", "upload", "tts", "phone"),
		{Name: "audio_base64", Type: String, Input: true, MaxLen: 22369624, Pattern: `^[A-Za-z0-9+/]*={0,2}$`, Doc: "WAV, MP3, OGG or FLAC, decoded at most 16 MiB; create only; not empty. 413 audio_too_long past the longest prompt (SWITCHBOARD_MEDIA_MAX_PROMPT_DURATION), audio_too_large past the largest stored file, storage_quota_exceeded past the tenant's max_storage_mb"},
		{Name: "tts_text", Type: String, MaxLen: 2000, Doc: "required when source is tts"},
		{Name: "filename", Type: String, ReadOnly: true, Doc: "server-chosen"},
		{Name: "format", Type: String, ReadOnly: true, MaxLen: 16},
		{Name: "duration_ms", Type: Int, ReadOnly: true},
		{Name: "size_bytes", Type: Int, ReadOnly: true},
		descriptionField(),
	},
}

var musicOnHoldResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "music_on_hold", Title: "music-on-hold class", Scope: TenantScope, Table: "music_on_hold", Order: "name",
	CloneFlag: "tenant_voiceprompts",
	Hooks:     mohHooks{rules{checks: []check{intOneOf("rate", 8000, 16000, 32000, 48000)}}},
	Fields: []*Field{
		{Name: "name", Type: String, Required: true, Pattern: `^[a-z0-9_]{1,32}$`, Doc: "rendered as local_stream://<tenant>_<name>"},
		{Name: "files", Type: ObjectList, ReadOnly: true, Doc: "added by POST …/files", Props: []*Field{
			{Name: "filename", Type: String},
			{Name: "duration_ms", Type: Int},
		}},
		intField("rate", 8000, 48000, 8000, "one of 8000, 16000, 32000, 48000"),
		boolField("shuffle", false, ""),
		promptRef("chime_prompt_id", ""),
		intField("chime_frequency_seconds", 0, 3600, 30, ""),
		intField("chime_max", 0, 1000, 0, ""),
		descriptionField(),
	},
}
