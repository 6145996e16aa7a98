package models

// Special endpoints (external numbers, SIP URIs, fax to e-mail) and special mailboxes.

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
		{Name: "external_number", Type: String, Pattern: patDialable, Doc: "dialled through the tenant's outbound routes", Example: "+14155550123"},
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
