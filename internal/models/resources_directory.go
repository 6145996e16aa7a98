package models

// The company directory, departments and tags.

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
