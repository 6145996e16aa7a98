package models

// Conference rooms (mod_conference; resources.md).

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
