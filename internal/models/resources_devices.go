package models

// Managed desk phones (provisioning).

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
