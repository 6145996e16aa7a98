package models

// Hunt groups and pickup groups (resources.md §2.4).

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
