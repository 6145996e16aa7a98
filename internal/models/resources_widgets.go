package models

// Click-to-call widgets for web sites.

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
