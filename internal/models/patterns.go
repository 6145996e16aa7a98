package models

// Value rules shared by many resources (resources.md §0).
const (
	patTenant     = `^[A-Za-z0-9_]{2,32}$`
	patNumber     = `^[0-9]{2,10}$`
	patE164       = `^\+[1-9][0-9]{6,14}$`
	patDialable   = `^[0-9+*#]{1,32}$`
	patDigitsCID  = `^\+?[0-9]{3,15}$`
	patDisplayCID = `^"?[^"<>\r\n]{0,64}"?\s*<[0-9+*#]{1,20}>$`
	patLanguage   = `^[a-z]{2}(-[A-Z]{2})?$`
	// patTemplateLanguage also takes Meta's own form (en_US, pt_BR) and
	// three-letter codes (fil): WhatsApp templates are named that way.
	patTemplateLanguage = `^[a-z]{2,3}([-_][A-Z]{2})?$`
	patCountry          = `^[A-Z]{2}$`
	patPIN              = `^[0-9]{4,10}$`
	patHostname         = `^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$`
	patEmail            = `^[^@\s<>"]{1,64}@[A-Za-z0-9.-]{1,190}\.[A-Za-z]{2,}$`
	patRFC3339          = `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`
	patSlug             = `^[a-z0-9_]{1,40}$`
)

// destinationTypes is every destination a call can be sent to (resources.md §0).
var destinationTypes = []string{
	"extension", "voicemail", "special_mailbox", "queue", "hunt_group", "ivr",
	"conference", "routing_condition", "special_endpoint", "directory",
	"external", "prompt_then_hangup", "hangup",
}

func rng(min, max int64) (int64, int64, bool) { return min, max, true }

// intField declares an integer field with an inclusive range and a default.
func intField(name string, min, max, def int64, doc string) *Field {
	return &Field{Name: name, Type: Int, Min: min, Max: max, HasRange: true, Default: def, Doc: doc}
}

// boolField declares a boolean with a default.
func boolField(name string, def bool, doc string) *Field {
	return &Field{Name: name, Type: Bool, Default: def, Doc: doc}
}

// enumField declares a string restricted to values, defaulting to def ("" = no default).
func enumField(name, def string, values ...string) *Field {
	f := &Field{Name: name, Type: String, Enum: values}
	if def != "" {
		f.Default = def
	}
	return f
}

// nameField is the common required display name (1-64 chars).
func nameField() *Field {
	return &Field{Name: "name", Type: String, Required: true, MaxLen: 64, NoExpand: true, Doc: "display name"}
}

// descriptionField is on every stored resource.
func descriptionField() *Field {
	return &Field{Name: "description", Type: String, MaxLen: 255, Default: "", Doc: "free text"}
}

// enabledField is the common on/off switch.
func enabledField() *Field { return boolField("enabled", true, "") }

// required marks a declared field as required.
func required(f *Field) *Field {
	f.Required = true
	return f
}
