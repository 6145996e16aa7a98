package models

// IVR menus: a greeting and a digit per destination (resources.md §2.5).

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
		withExample(promptRef("greeting_long_prompt_id", "required; greet-long"), Derived),
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
