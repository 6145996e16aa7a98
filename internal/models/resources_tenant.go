package models

// Tenant telephony resources (resources.md §2).

var forwardProps = []*Field{
	boolField("enabled", false, ""),
	{Name: "destination", Type: String, Pattern: `^[0-9+*#]{0,32}$`, Doc: "dialable"},
}

var extensionsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "extensions", Title: "extension", Scope: TenantScope, Table: "extensions", Key: "name",
	Hooks: extensionHooks{},
	// A tenant holds thousands of extensions: lists and pickers search them.
	Listing: &Listing{Search: []string{"name", "first_name", "last_name", "email"}, Filter: []string{"type"}, Sort: []string{"name", "last_name", "first_name"}},
	Fields: []*Field{
		{Name: "name", Type: String, Required: true, Pattern: patNumber, NumberPlan: true, Doc: "extension number; path id"},
		enumField("protocol", "SIP", "SIP"),
		{Name: "first_name", Type: String, MaxLen: 64, NoExpand: true},
		{Name: "last_name", Type: String, MaxLen: 64, NoExpand: true},
		{Name: "email", Type: String, MaxLen: 254, Pattern: patEmail},
		{Name: "callerid", Type: String, Pattern: patDisplayCID, NoExpand: true, Command: true, Doc: `display form "Name <ext>"; default first and last name with the extension`},
		{Name: "mobile", Type: String, Pattern: patE164, Doc: "the user's mobile; from of POST /api/telephony/call must equal it"},
		enumField("type", "user", "user", "ai_agent"),
		{Name: "sip_secret", Type: String, Secret: Encrypted, Pattern: `^[A-Za-z0-9!#%()*+,./:;=?@\[\]^_|~-]{12,64}$`, Generate: randomSecret24, Doc: "generated when omitted; returned once"},
		{Name: "sip_auth_id", Type: String, ReadOnly: true, Doc: "<name>-<tenant>"},
		{Name: "outbound_callerid", Type: String, Pattern: patDigitsCID},
		{Name: "emergency_location_id", Type: Int, Ref: "emergency_locations"},
		{Name: "language", Type: String, Pattern: patLanguage},
		{Name: "timezone", Type: String, MaxLen: 64},
		boolField("voicemail_enabled", true, ""),
		{Name: "voicemail_pin", Type: String, Secret: Encrypted, Pattern: patPIN, Generate: randomPIN, Doc: "generated when omitted; returned once"},
		{Name: "voicemail_email", Type: String, MaxLen: 254, Pattern: patEmail},
		boolField("voicemail_attach_audio", true, ""),
		boolField("voicemail_delete_after_email", false, ""),
		intField("ring_seconds", 5, 300, 30, "before no-answer handling"),
		{Name: "forward_all", Type: Object, Props: forwardProps},
		{Name: "forward_busy", Type: Object, Props: forwardProps},
		{Name: "forward_no_answer", Type: Object, Props: forwardProps},
		{Name: "forward_unregistered", Type: Object, Props: forwardProps},
		boolField("dnd", false, ""),
		boolField("call_waiting", true, ""),
		intField("max_registrations", 1, 20, 5, ""),
		enumField("call_permission", "national", "internal", "local", "national", "international"),
		enumField("record", "", "none", "inbound", "outbound", "all"),
		{Name: "accountcode", Type: String, MaxLen: 32, Pattern: `^[A-Za-z0-9_.-]{0,32}$`},
		boolField("directory_visible", true, ""),
		boolField("directory_extension_visible", true, ""),
		{Name: "moh_class_id", Type: Int, Ref: "music_on_hold", Doc: "hold music a caller hears while this extension holds the call (its directory user's hold_music); default the tenant's"},
		enabledField(),
		{Name: "tags", Type: StringList, MaxItems: 20, MaxLen: 32},
		descriptionField(),
	},
}

var emergencyLocationsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "emergency_locations", Title: "emergency location", Scope: TenantScope, Table: "emergency_locations",
	Hooks:     emergencyLocHooks{},
	CloneFlag: "tenant_routes",
	Fields: []*Field{
		nameField(),
		{Name: "address_line1", Type: String, Required: true, MaxLen: 128},
		{Name: "address_line2", Type: String, MaxLen: 128},
		{Name: "city", Type: String, MaxLen: 64},
		{Name: "region", Type: String, MaxLen: 64},
		{Name: "postal_code", Type: String, MaxLen: 16},
		{Name: "country", Type: String, Required: true, Pattern: patCountry},
		{Name: "dispatchable_location", Type: String, MaxLen: 128},
		{Name: "latitude", Type: Number},
		{Name: "longitude", Type: Number},
		{Name: "emergency_callerid", Type: String, Required: true, Pattern: patE164},
		{Name: "notify_extensions", Type: StringList, Pattern: patNumber, MaxItems: 50, Ref: "extensions"},
		{Name: "notify_emails", Type: StringList, Pattern: patEmail, MaxItems: 10},
		boolField("is_default", false, "at most one per tenant"),
		descriptionField(),
	},
}

var schedulesResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "schedules", Title: "schedule", Scope: TenantScope, Table: "schedules", CloneFlag: "tenant_schedules",
	Hooks: scheduleHooks{},
	Fields: []*Field{
		nameField(),
		{Name: "timezone", Type: String, MaxLen: 64, Doc: "IANA; default the tenant's"},
		{Name: "open_periods", Type: ObjectList, MaxItems: 50, Props: []*Field{
			{Name: "days", Type: StringList, Required: true, Enum: []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"}, MaxItems: 7},
			{Name: "start", Type: String, Required: true, Pattern: `^([01][0-9]|2[0-3]):[0-5][0-9]$`},
			{Name: "end", Type: String, Required: true, Pattern: `^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$`},
		}},
		{Name: "holidays", Type: ObjectList, MaxItems: 366, Props: []*Field{
			{Name: "name", Type: String, MaxLen: 64},
			{Name: "date", Type: String, Required: true, Pattern: `^\d{4}-\d{2}-\d{2}$`},
			{Name: "end_date", Type: String, Pattern: `^\d{4}-\d{2}-\d{2}$`},
			boolField("all_day", true, ""),
			{Name: "start", Type: String, Pattern: `^([01][0-9]|2[0-3]):[0-5][0-9]$`},
			{Name: "end", Type: String, Pattern: `^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$`},
			boolField("yearly", false, ""),
		}},
		enabledField(),
		descriptionField(),
	},
}

var inboundRoutesResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "inbound_routes", Title: "inbound route", Scope: TenantScope, Table: "inbound_routes", CloneFlag: "tenant_routes",
	Hooks: inboundRouteHooks{},
	Fields: []*Field{
		nameField(),
		{Name: "did", Type: String, Pattern: patE164, Ref: "dids", RefKey: "number", Doc: "a DID assigned to this tenant"},
		{Name: "caller_match", Type: String, Pattern: `^([0-9+*#]{1,32}|anonymous)$`},
		{Name: "destination", Type: Destination, Required: true},
		{Name: "routing_condition_id", Type: Int, Ref: "routing_conditions"},
		{Name: "day_destination", Type: Destination},
		{Name: "night_destination", Type: Destination},
		{Name: "holiday_destination", Type: Destination},
		{Name: "callerid_name_prefix", Type: String, MaxLen: 16, NoExpand: true},
		boolField("record", false, ""),
		{Name: "distinctive_ring", Type: String, MaxLen: 64, Pattern: `^[A-Za-z0-9 <>:;=/._-]{0,64}$`},
		{Name: "language", Type: String, Pattern: patLanguage},
		// Enabled, a route needs a DID assigned to its tenant.
		withExample(enabledField(), false),
		descriptionField(),
	},
}

var outboundRoutesResource = &Resource{
	Unique: [][]string{{"name"}, {"priority"}},
	Name:   "outbound_routes", Title: "outbound route", Scope: TenantScope, Table: "outbound_routes", Order: "priority",
	Hooks:     outboundRouteHooks{},
	CloneFlag: "tenant_routes",
	Fields: []*Field{
		nameField(),
		intField("priority", 1, 1000, 100, "lower first; unique per tenant"),
		{Name: "patterns", Type: ObjectList, Required: true, MaxItems: 50, Props: []*Field{
			{Name: "match", Type: String, Required: true, Pattern: `^_?[0-9XZNxzn.!\[\]*#+-]{1,40}$`},
			intField("strip_digits", 0, 20, 0, ""),
			{Name: "prepend", Type: String, Pattern: `^[0-9+*#]{0,32}$`, Default: ""},
		}},
		{Name: "trunks", Type: StringList, Required: true, MaxItems: 10, Pattern: `^[a-z0-9_]{1,40}$`, Ref: "sip_trunks", RefKey: "name", Doc: "trunk names in failover order"},
		enumField("callerid_policy", "extension", "extension", "tenant", "fixed", "passthrough"),
		{Name: "callerid_fixed", Type: String, Pattern: patDigitsCID},
		enumField("min_permission", "national", "local", "national", "international"),
		boolField("emergency", false, "ignores permissions and limits; sets the emergency caller id"),
		boolField("record", false, ""),
		intField("max_duration_seconds", 0, 86400, 0, "0 = unlimited"),
		{Name: "allowed_extensions", Type: StringList, MaxItems: 1000, Pattern: patNumber, Doc: "empty = every extension"},
		enabledField(),
		descriptionField(),
	},
}

var routingConditionsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "routing_conditions", Title: "routing condition", Scope: TenantScope, Table: "routing_conditions",
	Hooks:     routingConditionHooks{},
	CloneFlag: "tenant_routes",
	Fields: []*Field{
		nameField(),
		{Name: "number", Type: String, Pattern: patNumber, NumberPlan: true},
		withExample(required(enumField("kind", "", "schedule", "office_mode", "caller", "manual")), "manual"),
		{Name: "schedule_id", Type: Int, Ref: "schedules"},
		{Name: "office_modes", Type: StringList, Enum: []string{"day", "night", "holiday", "break"}, MaxItems: 4},
		{Name: "caller_prefixes", Type: StringList, Pattern: patDialable, MaxItems: 100},
		{Name: "match_destination", Type: Destination, Required: true},
		{Name: "nomatch_destination", Type: Destination, Required: true},
		enumField("override", "none", "none", "force_match", "force_nomatch"),
		{Name: "override_until", Type: String, Pattern: patRFC3339},
		{Name: "toggle_code", Type: String, Pattern: `^\*[0-9]{2,6}$`},
		{Name: "toggle_pin", Type: String, Secret: Encrypted, Pattern: patPIN},
		enabledField(),
		descriptionField(),
	},
}

// featureCodes are the default star codes every tenant starts with (resources.md §2.11).
var featureCodes = [][2]string{
	{"voicemail_own", "*97"}, {"voicemail_any", "*98"}, {"voicemail_direct", "*99"},
	{"group_pickup", "*8"}, {"directed_pickup", "**"}, {"dnd_toggle", "*78"},
	{"forward_all_on", "*72"}, {"forward_all_off", "*73"}, {"office_mode_toggle", "*30"},
	{"office_mode_day", "*31"}, {"office_mode_night", "*32"}, {"agent_login_logout", "*22"},
	{"agent_pause_toggle", "*23"}, {"record_prompt", "*732"}, {"echo_test", "*9196"},
	{"moh_test", "*9664"}, {"park", "*70"},
}

func featureNames() []string {
	names := make([]string, len(featureCodes))
	for i, fc := range featureCodes {
		names[i] = fc[0]
	}
	return names
}

var featureExtensionsResource = &Resource{
	Unique: [][]string{{"feature"}, {"code"}},
	Name:   "feature_extensions", Title: "feature extension", Scope: TenantScope, Table: "feature_extensions",
	Order: "feature", CloneFlag: "tenant_routes",
	Fields: []*Field{
		required(enumField("feature", "", featureNames()...)),
		{Name: "code", Type: String, Required: true, Pattern: `^\*{1,2}[0-9]{0,6}$`},
		boolField("pin_required", false, ""),
		enabledField(),
		descriptionField(),
	},
}

var officeModeResource = &Resource{
	Name: "office_mode", Title: "office mode", Scope: TenantScope, Table: "office_modes", Singleton: true,
	Hooks:     officeModeHooks{},
	CloneFlag: "tenant_schedules",
	Fields: []*Field{
		enumField("mode", "auto", "auto", "day", "night", "holiday", "break"),
		{Name: "schedule_id", Type: Int, Ref: "schedules"},
		{Name: "until", Type: String, Pattern: patRFC3339},
		{Name: "toggle_pin", Type: String, Secret: Encrypted, Pattern: patPIN},
		{Name: "allowed_extensions", Type: StringList, Pattern: patNumber, MaxItems: 1000},
		{Name: "changed_by", Type: String, ReadOnly: true},
		{Name: "changed_at", Type: Time, ReadOnly: true},
		descriptionField(),
	},
}
