package models

// Platform resources (resources.md §1).

var tenantsResource = &Resource{
	Unique: [][]string{{"tenant"}},
	Name:   "tenants", Title: "tenant", Scope: Platform, Table: "tenants", Key: "tenant",
	Hooks: tenantHooks{},
	CreateAnswer: []*Field{
		{Name: "clone_report", Type: StringList, Doc: "with tenant_to_clone: each reference that was cleared because its target was not copied, and each media file copied (voice prompts, music-on-hold class files)"},
	},
	Fields: []*Field{
		{Name: "tenant", Type: String, Required: true, Pattern: patTenant, Immutable: true, Doc: "tenant name; path id"},
		{Name: "callerid", Type: String, Pattern: patDigitsCID, Doc: "default outbound caller id number"},
		{Name: "emergency_callerid", Type: String, Pattern: patDigitsCID, Doc: "fallback number on emergency calls"},
		{Name: "tenant_to_clone", Type: String, Input: true, Pattern: patTenant, Doc: "existing tenant to clone from"},
		{Name: "tenant_limits", Type: String, Input: true, MaxLen: 1, Doc: `"1" copies limits`},
		{Name: "tenant_routes", Type: String, Input: true, MaxLen: 1, Doc: `"1" copies routes`},
		{Name: "tenant_schedules", Type: String, Input: true, MaxLen: 1, Doc: `"1" copies schedules`},
		{Name: "tenant_menus", Type: String, Input: true, MaxLen: 1, Doc: `"1" copies IVR menus`},
		{Name: "tenant_queues", Type: String, Input: true, MaxLen: 1, Doc: `"1" copies queues`},
		{Name: "tenant_voiceprompts", Type: String, Input: true, MaxLen: 1, Doc: `"1" copies voice prompts`},
		descriptionField(),
		enabledField(),
		{Name: "timezone", Type: String, MaxLen: 64, Default: "UTC", Doc: "IANA time zone"},
		{Name: "language", Type: String, Pattern: patLanguage, Default: "en"},
		{Name: "country", Type: String, Pattern: patCountry},
		{Name: "reseller_id", Type: Int, Ref: "resellers", Doc: "the reseller that owns the tenant; its limits are checked when the tenant is created, moved or its limits raised"},
		{Name: "location_id", Type: Int, Ref: "locations"},
		{Name: "outbound_callerid_name", Type: String, MaxLen: 32, NoExpand: true, Command: true},
		{Name: "emergency_numbers", Type: StringList, MaxItems: 10, Pattern: patDialable, Doc: "numbers routed as emergency calls"},
		intField("max_extensions", 0, 1000000, 0, "0 = unlimited"),
		intField("max_concurrent_calls", 0, 1000000, 0, "0 = unlimited"),
		intField("max_queues", 0, 1000000, 0, "0 = unlimited"),
		intField("max_ivr_menus", 0, 1000000, 0, "0 = unlimited"),
		intField("max_conference_rooms", 0, 1000000, 0, "0 = unlimited"),
		intField("max_storage_mb", 0, 100000000, 0, "0 = unlimited"),
		enumField("recording_policy", "none", "none", "inbound", "outbound", "all"),
		intField("recording_retention_days", 0, 36500, 0, "0 = keep"),
		boolField("allow_sip_uri_endpoints", false, "gates special endpoints of type sip_uri"),
		{Name: "moh_class_id", Type: Int, Ref: "music_on_hold", Doc: "the tenant's default hold music (one of its music-on-hold classes, set once the class exists): what a held caller hears from extensions without their own class, and queues and conference rooms without one; none: the platform's local_stream://moh"},
		boolField("crm_caller_name_lookup", false, "inbound calls from a contact's number carry the contact's name as caller id name"),
	},
}

var administratorsResource = &Resource{
	Unique: [][]string{{"username"}},
	Name:   "administrators", Title: "administrator", Scope: Platform, Table: "administrators", Order: "username",
	Hooks: adminHooks{},
	Fields: []*Field{
		{Name: "username", Type: String, Required: true, Pattern: `^[a-z0-9._@-]{3,64}$`},
		{Name: "password", Type: String, Required: true, Secret: Hashed, MaxLen: 256, Pattern: `^.{12,}$`, Doc: "at least 12 characters; stored with bcrypt"},
		{Name: "email", Type: String, MaxLen: 254, Pattern: patEmail},
		{Name: "full_name", Type: String, MaxLen: 128},
		required(enumField("role", "", "platform_admin", "reseller_admin", "tenant_admin", "read_only")),
		{Name: "tenants", Type: StringList, Pattern: patTenant, MaxItems: 1000, Doc: "scope of tenant_admin and read_only"},
		{Name: "permissions", Type: StringList, MaxItems: 50, Pattern: `^[a-z_.]{1,64}$`},
		boolField("mfa_enabled", false, "TOTP required at sign-in; the administrator enrols with POST /api/mfa; false forgets the authenticator"),
		enabledField(),
		{Name: "last_login_at", Type: Time, ReadOnly: true},
		descriptionField(),
	},
}

var locationsResource = &Resource{
	Unique: [][]string{{"name"}, {"code"}},
	Name:   "locations", Title: "location", Scope: Platform, Table: "locations", Order: "name",
	Fields: []*Field{
		nameField(),
		{Name: "code", Type: String, Required: true, Pattern: `^[a-z0-9-]{2,16}$`},
		{Name: "timezone", Type: String, MaxLen: 64},
		descriptionField(),
	},
}

var sipProfileProps = []*Field{
	required(enumField("name", "", "internal", "external")),
	{Name: "sip_ip", Type: String, Pattern: patHostname},
	intField("sip_port", 1, 65535, 0, "default 5060 internal, 5080 external"),
	{Name: "ext_sip_ip", Type: String, Pattern: patHostname},
	{Name: "ext_rtp_ip", Type: String, Pattern: patHostname},
	intField("tls_port", 0, 65535, 0, "0 = off"),
	intField("wss_port", 0, 65535, 0, "0 = off"),
}

var serversResource = &Resource{
	Unique: [][]string{{"name"}, {"hostname"}},
	Name:   "servers", Title: "server", Scope: Platform, Table: "servers", Order: "name",
	Fields: []*Field{
		nameField(),
		{Name: "hostname", Type: String, Required: true, Pattern: patHostname, Doc: "the hostname FreeSWITCH sends in mod_xml_curl posts"},
		{Name: "location_id", Type: Int, Ref: "locations"},
		{Name: "esl_host", Type: String, Required: true, Pattern: patHostname},
		intField("esl_port", 1, 65535, 8021, ""),
		{Name: "esl_password", Type: String, Secret: Encrypted, MaxLen: 128},
		{Name: "sip_profiles", Type: ObjectList, MaxItems: 2, Props: sipProfileProps},
		intField("weight", 0, 100, 50, "share of new originates"),
		intField("max_calls", 0, 1000000, 0, "0 = unlimited"),
		enabledField(),
		descriptionField(),
	},
}

var didsResource = &Resource{
	Unique: [][]string{{"number"}},
	Name:   "dids", Title: "DID", Scope: Platform, Table: "dids", Order: "number",
	Hooks: didHooks{},
	Fields: []*Field{
		{Name: "number", Type: String, Required: true, Pattern: patE164},
		{Name: "tenant", Type: String, Pattern: patTenant, Ref: "tenants", Doc: "assigned tenant; empty = unassigned pool"},
		{Name: "trunk_id", Type: Int, Ref: "sip_trunks"},
		{Name: "inbound_route_id", Type: Int, Ref: "inbound_routes", Doc: "default route of the assigned tenant"},
		{Name: "caller_id_name", Type: String, MaxLen: 32, NoExpand: true},
		boolField("sms_enabled", false, ""),
		enabledField(),
		descriptionField(),
	},
}

var sipTrunksResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "sip_trunks", Title: "SIP trunk", Scope: Platform, Table: "sip_trunks", Order: "name",
	Fields: []*Field{
		{Name: "name", Type: String, Required: true, Pattern: `^[a-z0-9_]{1,40}$`, Doc: "also the sofia gateway name"},
		{Name: "tenants", Type: StringList, Pattern: patTenant, MaxItems: 1000, Doc: "who may use it; empty = all"},
		{Name: "host", Type: String, Required: true, Pattern: patHostname},
		intField("port", 1, 65535, 5060, ""),
		enumField("transport", "udp", "udp", "tcp", "tls"),
		boolField("register", false, ""),
		{Name: "username", Type: String, MaxLen: 64, Pattern: `^[A-Za-z0-9+._@-]{0,64}$`},
		{Name: "password", Type: String, Secret: Encrypted, MaxLen: 128, NoExpand: true},
		{Name: "auth_username", Type: String, MaxLen: 64, Pattern: `^[A-Za-z0-9+._@-]{0,64}$`},
		{Name: "realm", Type: String, Pattern: patHostname},
		{Name: "from_user", Type: String, MaxLen: 64, Pattern: `^[A-Za-z0-9+._@-]{0,64}$`},
		{Name: "from_domain", Type: String, Pattern: patHostname},
		{Name: "outbound_proxy", Type: String, MaxLen: 255, Pattern: `^[A-Za-z0-9.:-]{1,255}$`},
		intField("expire_seconds", 60, 86400, 3600, ""),
		intField("retry_seconds", 5, 3600, 30, ""),
		intField("ping_seconds", 0, 3600, 0, "0 = off"),
		boolField("caller_id_in_from", false, ""),
		enumField("callerid_format", "e164", "e164", "e164_no_plus", "national"),
		{Name: "codecs", Type: StringList, MaxItems: 5, Enum: []string{"PCMA", "PCMU", "G722", "OPUS", "G729"}, Default: []any{"PCMA", "PCMU"}},
		enumField("dtmf_mode", "rfc2833", "rfc2833", "info", "inband"),
		intField("max_channels", 0, 100000, 0, "0 = unlimited"),
		{Name: "inbound_ips", Type: StringList, MaxItems: 50, Pattern: `^[0-9a-fA-F.:]+(/[0-9]{1,3})?$`},
		{Name: "servers", Type: StringList, MaxItems: 100, MaxLen: 64, Doc: "server names that load the gateway; empty = all"},
		enabledField(),
		descriptionField(),
	},
}
