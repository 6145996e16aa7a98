package models

// CRM resources (resources.md §4): tenant data only, nothing reaches
// FreeSWITCH except call campaigns (originated over ESL).

const (
	patDate  = `^\d{4}-\d{2}-\d{2}$`
	patMoney = `^[0-9]{1,12}(\.[0-9]{1,4})?$`
)

var (
	phoneProps = []*Field{
		enumField("label", "", "mobile", "work", "home", "fax", "other"),
		{Name: "number", Type: String, Required: true, Pattern: patE164},
		boolField("primary", false, ""),
	}
	emailProps = []*Field{
		enumField("label", "", "work", "home", "other"),
		{Name: "address", Type: String, Required: true, MaxLen: 254, Pattern: patEmail},
		boolField("primary", false, ""),
	}
	addressProps = []*Field{
		enumField("label", "", "work", "home", "billing", "shipping", "other"),
		{Name: "street", Type: String, MaxLen: 128},
		{Name: "city", Type: String, MaxLen: 64},
		{Name: "region", Type: String, MaxLen: 64},
		{Name: "postal_code", Type: String, MaxLen: 16},
		{Name: "country", Type: String, Pattern: patCountry},
	}
	relatedProps = []*Field{
		required(enumField("type", "", "contact", "account", "lead", "deal")),
		{Name: "id", Type: Int, Required: true, Min: 1, Max: 1 << 62, HasRange: true, RefBy: "type", RefTargets: map[string]string{
			"contact": "contacts", "account": "accounts", "lead": "leads", "deal": "deals",
		}},
	}
)

// crmCommon are the custom, tags and external_id fields most CRM objects carry.
func crmCommon() []*Field {
	return []*Field{
		{Name: "custom", Type: Map, MaxItems: 50, MaxLen: 1024, MapLists: true, Doc: "values of the tenant's custom fields for this entity, by key, checked against their definitions (custom_fields)"},
		{Name: "tags", Type: StringList, Pattern: patTagName, MaxItems: 20},
		{Name: "external_id", Type: String, MaxLen: 64, Doc: "unique per tenant; import idempotency"},
		descriptionField(),
	}
}

// ownerField names the extension that owns a CRM object.
func ownerField(name string) *Field { return extensionRef(name, "extension name") }

// withCommon appends crmCommon to fields.
func withCommon(fields ...*Field) []*Field { return append(fields, crmCommon()...) }

// contactNamed requires at least one of the contact's names.
func contactNamed(rec, _ Record) error {
	if isEmpty(rec["first_name"]) && isEmpty(rec["last_name"]) && isEmpty(rec["company_name"]) {
		return FieldError("first_name", "first_name, last_name or company_name is required")
	}
	return nil
}

var accountsResource = &Resource{
	Unique: [][]string{{"name"}, {"external_id"}},
	Name:   "accounts", Title: "account", Scope: TenantScope, Table: "accounts", Order: "name",
	Listing: &Listing{Search: []string{"name", "domain", "phone"}, Filter: []string{"owner", "tags", "industry", "parent_id"}, Sort: []string{"name", "industry"}},
	Hooks:   crmHooks{rules: rules{name: "accounts", tree: "parent_id"}, entity: "account"},
	Fields: withCommon(
		&Field{Name: "name", Type: String, Required: true, MaxLen: 128},
		&Field{Name: "domain", Type: String, Pattern: patHostname},
		&Field{Name: "industry", Type: String, MaxLen: 64},
		&Field{Name: "phone", Type: String, Pattern: patE164},
		&Field{Name: "address", Type: Object, Props: addressProps},
		ownerField("owner"),
		&Field{Name: "parent_id", Type: Int, Ref: "accounts", Doc: "no cycles"},
	),
}

var contactsResource = &Resource{
	Unique: [][]string{{"external_id"}},
	Name:   "contacts", Title: "contact", Scope: TenantScope, Table: "contacts",
	Listing: &Listing{Search: []string{"first_name", "last_name", "company_name", "phones", "emails"}, Filter: []string{"owner", "tags", "account_id", "source", "external_id"}, Sort: []string{"last_name", "first_name", "company_name"}},
	Hooks:   crmHooks{rules: rules{checks: []check{contactNamed}}, entity: "contact", phones: true},
	Fields: withCommon(
		&Field{Name: "first_name", Type: String, MaxLen: 64, Example: "Ada"},
		&Field{Name: "last_name", Type: String, MaxLen: 64, Example: "Lovelace"},
		&Field{Name: "company_name", Type: String, MaxLen: 128},
		&Field{Name: "account_id", Type: Int, Ref: "accounts"},
		&Field{Name: "title", Type: String, MaxLen: 64},
		&Field{Name: "role", Type: String, MaxLen: 64},
		&Field{Name: "phones", Type: ObjectList, MaxItems: 10, Props: phoneProps},
		&Field{Name: "emails", Type: ObjectList, MaxItems: 10, Props: emailProps},
		&Field{Name: "addresses", Type: ObjectList, MaxItems: 5, Props: addressProps},
		&Field{Name: "timezone", Type: String, MaxLen: 64},
		ownerField("owner"),
		&Field{Name: "source", Type: String, MaxLen: 32},
		boolField("opt_out_sms", false, ""),
		boolField("opt_out_whatsapp", false, ""),
		boolField("opt_out_calls", false, ""),
	),
}

var leadsResource = &Resource{
	Unique: [][]string{{"external_id"}},
	Name:   "leads", Title: "lead", Scope: TenantScope, Table: "leads",
	Hooks:   crmHooks{entity: "lead"},
	Listing: &Listing{Search: []string{"first_name", "last_name", "company_name", "phone", "email"}, Filter: []string{"owner", "tags", "status", "source", "contact_id"}, Sort: []string{"last_name", "status", "score"}},
	Fields: withCommon(
		&Field{Name: "contact_id", Type: Int, Ref: "contacts"},
		&Field{Name: "first_name", Type: String, MaxLen: 64},
		&Field{Name: "last_name", Type: String, MaxLen: 64},
		&Field{Name: "company_name", Type: String, MaxLen: 128},
		&Field{Name: "phone", Type: String, Pattern: patE164},
		&Field{Name: "email", Type: String, MaxLen: 254, Pattern: patEmail},
		enumField("status", "new", "new", "contacted", "qualified", "unqualified", "converted"),
		&Field{Name: "source", Type: String, MaxLen: 32},
		optInt("score", 0, 100, ""),
		ownerField("owner"),
		&Field{Name: "converted_deal_id", Type: Int, Ref: "deals", Doc: "the deal this lead became; must exist in the tenant, and that deal cannot be deleted while a lead names it"},
	),
}

var listsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "lists", Title: "list", Scope: TenantScope, Table: "lists", Order: "name",
	Listing: &Listing{Search: []string{"name"}, Filter: []string{"kind", "purpose"}, Sort: []string{"name"}},
	Fields: []*Field{
		nameField(),
		enumField("kind", "static", "static", "dynamic"),
		{Name: "members", Type: IntList, MaxItems: 5000, Ref: "contacts", Doc: "contact ids of a static list"},
		{Name: "filter", Type: Object, Doc: "dynamic lists; evaluated when used", Props: []*Field{
			{Name: "tags", Type: StringList, Pattern: patTagName, MaxItems: 20},
			extensionRef("owner", ""),
			{Name: "account_id", Type: Int, Min: 1, Max: 1 << 62, HasRange: true, Ref: "accounts"},
			{Name: "custom", Type: Map, MaxItems: 20, MaxLen: 255},
		}},
		enumField("purpose", "general", "general", "campaign", "do_not_call"),
		descriptionField(),
	},
}

var customFieldsResource = &Resource{
	Unique: [][]string{{"entity", "field_key"}},
	Name:   "custom_fields", Title: "custom field", Scope: TenantScope, Table: "custom_fields", Order: "field_key",
	Listing: &Listing{Search: []string{"field_key", "label"}, Filter: []string{"entity", "type"}, Sort: []string{"field_key"}},
	Hooks:   customFieldHooks{rules{checks: []check{requireWhen("options", "type", "select", "multi_select")}}},
	Fields: []*Field{
		required(enumField("entity", "", "contact", "account", "lead", "deal", "task")),
		{Name: "field_key", Type: String, Required: true, Pattern: `^[a-z][a-z0-9_]{0,31}$`, Doc: "the guide's key (a reserved word in SQL): the key inside custom"},
		{Name: "label", Type: String, Required: true, MaxLen: 64},
		required(enumField("type", "", "string", "number", "boolean", "date", "select", "multi_select")),
		{Name: "options", Type: StringList, MaxItems: 100, MaxLen: 64, Doc: "required for select types"},
		boolField("required", false, ""),
		{Name: "default_value", Type: String, MaxLen: 255, Doc: "the guide's default (a reserved word in SQL), as text"},
		descriptionField(),
	},
}

// activityDefaults stamps a new activity with the current time.
func activityDefaults(old, patch Record) {
	if old == nil && patch["occurred_at"] == nil {
		patch["occurred_at"] = now()
	}
}

var activitiesResource = &Resource{
	Name: "activities", Title: "activity", Scope: TenantScope, Table: "activities",
	Listing: &Listing{Search: []string{"subject", "body"}, Filter: []string{"kind", "direction", "extension", "cdr_id"}, Sort: []string{"occurred_at"}},
	Hooks:   rules{prepare: activityDefaults},
	Fields: []*Field{
		required(enumField("kind", "", "call", "sms", "whatsapp", "email", "chat", "note", "meeting")),
		{Name: "subject", Type: String, MaxLen: 255},
		{Name: "body", Type: String, MaxLen: 10000},
		{Name: "occurred_at", Type: String, Pattern: patRFC3339, Doc: "default now"},
		optInt("duration_seconds", 0, 31536000, ""),
		enumField("direction", "", "inbound", "outbound", "internal"),
		{Name: "related", Type: Object, Props: relatedProps},
		extensionRef("extension", "who"),
		{Name: "cdr_id", Type: String, MaxLen: 64},
		{Name: "recording_id", Type: String, MaxLen: 64},
		{Name: "message_id", Type: String, MaxLen: 64},
		descriptionField(),
	},
}

var tasksResource = &Resource{
	Name: "tasks", Title: "task", Scope: TenantScope, Table: "tasks",
	Listing: &Listing{Search: []string{"title"}, Filter: []string{"status", "priority", "assignee", "kind"}, Sort: []string{"due_at", "status"}},
	Fields: []*Field{
		{Name: "title", Type: String, Required: true, MaxLen: 255},
		{Name: "due_at", Type: String, Pattern: patRFC3339},
		enumField("status", "open", "open", "in_progress", "done", "cancelled"),
		enumField("priority", "normal", "low", "normal", "high"),
		extensionRef("assignee", ""),
		{Name: "related", Type: Object, Props: relatedProps},
		enumField("kind", "todo", "todo", "callback"),
		descriptionField(),
	},
}

var campaignsResource = &Resource{
	Unique: [][]string{{"name"}},
	Name:   "campaigns", Title: "campaign", Scope: TenantScope, Table: "campaigns", Order: "name",
	Listing: &Listing{Search: []string{"name"}, Filter: []string{"kind", "status", "list_id"}, Sort: []string{"name", "status"}},
	Hooks: rules{name: "campaigns", checks: []check{
		requireWhen("destination", "kind", "call"),
		requireWhen("messaging_channel_id", "kind", "sms", "whatsapp"),
		requireWhen("template_id", "kind", "sms", "whatsapp"),
	}},
	Fields: []*Field{
		nameField(),
		required(enumField("kind", "", "call", "sms", "whatsapp")),
		{Name: "list_id", Type: Int, Required: true, Ref: "lists"},
		{Name: "do_not_call_list_ids", Type: IntList, MaxItems: 20, Ref: "lists"},
		{Name: "messaging_channel_id", Type: Int, Ref: "messaging_channels", Doc: "required for message campaigns"},
		{Name: "template_id", Type: String, Pattern: `^[A-Za-z0-9_.:-]{1,64}$`, Doc: "required for message campaigns"},
		{Name: "destination", Type: Destination, Doc: "required for call campaigns: where answered calls go", Example: Derived},
		{Name: "callerid", Type: String, Pattern: patDigitsCID},
		{Name: "dial_window", Type: Object, Doc: "the guide's window (a reserved word in SQL)", Props: []*Field{
			{Name: "schedule_id", Type: Int, Required: true, Min: 1, Max: 1 << 62, HasRange: true, Ref: "schedules"},
		}},
		intField("pacing_per_minute", 1, 600, 10, ""),
		intField("max_attempts", 1, 10, 3, ""),
		intField("retry_after_minutes", 1, 1440, 60, ""),
		enumField("status", "draft", "draft", "scheduled", "running", "paused", "completed", "cancelled"),
		{Name: "starts_at", Type: String, Pattern: patRFC3339},
		{Name: "ends_at", Type: String, Pattern: patRFC3339},
		{Name: "stats", Type: Object, ReadOnly: true, Props: []*Field{
			{Name: "attempted", Type: Int}, {Name: "answered", Type: Int},
			{Name: "failed", Type: Int}, {Name: "remaining", Type: Int},
		}},
		descriptionField(),
	},
}

var dealsResource = &Resource{
	Unique: [][]string{{"external_id"}},
	Name:   "deals", Title: "deal", Scope: TenantScope, Table: "deals",
	Listing: &Listing{Search: []string{"name"}, Filter: []string{"owner", "tags", "stage", "account_id", "contact_id"}, Sort: []string{"name", "stage", "probability", "expected_close_date"}},
	Hooks:   crmHooks{rules: rules{checks: []check{requireWhen("lost_reason", "stage", "lost")}}, entity: "deal"},
	Fields: withCommon(
		&Field{Name: "name", Type: String, Required: true, MaxLen: 64},
		&Field{Name: "account_id", Type: Int, Ref: "accounts"},
		&Field{Name: "contact_id", Type: Int, Ref: "contacts"},
		&Field{Name: "amount", Type: String, Pattern: patMoney, Doc: "decimal string; no floats for money"},
		&Field{Name: "currency", Type: String, Pattern: `^[A-Z]{3}$`, Doc: "ISO 4217"},
		enumField("stage", "prospecting", "prospecting", "qualification", "proposal", "negotiation", "won", "lost"),
		optInt("probability", 0, 100, ""),
		&Field{Name: "expected_close_date", Type: String, Pattern: patDate},
		ownerField("owner"),
		&Field{Name: "lost_reason", Type: String, MaxLen: 255, Doc: "required when stage is lost"},
	),
}
