package models

// Field constructors and patterns shared by the tenant telephony resources
// (resources_queues.go, resources_ivr.go, …). Cross-field rules live in
// rules hooks (resources_rules.go).

// optInt declares an optional integer with an inclusive range and no default.
func optInt(name string, min, max int64, doc string) *Field {
	return &Field{Name: name, Type: Int, Min: min, Max: max, HasRange: true, Doc: doc}
}

// promptRef declares an optional reference to a voice prompt of the tenant.
func promptRef(name, doc string) *Field {
	return &Field{Name: name, Type: Int, Ref: "voice_prompts", Doc: doc}
}

// numberField is a required number in the tenant's shared number plan.
func numberField() *Field {
	return &Field{Name: "number", Type: String, Required: true, Pattern: patNumber, NumberPlan: true, Doc: "dial number; shares the tenant number plan", Example: "600"}
}

// extensionRef names an extension of the tenant by its number.
func extensionRef(name, doc string) *Field {
	return &Field{Name: name, Type: String, Pattern: patNumber, Ref: "extensions", Doc: doc}
}

const (
	patColor   = `^#[0-9A-Fa-f]{6}$`
	patTagName = `^[A-Za-z0-9 _.-]{1,32}$`
	patOrigin  = `^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$`
	patSIPURI  = `^sips?:[^@\s<>"]+@[A-Za-z0-9.-]+(:[0-9]{1,5})?(;transport=(udp|tcp|tls))?$`
	patMAC     = `^([0-9A-Fa-f]{2}[:.-]?){5}[0-9A-Fa-f]{2}$`
	patCIDPfx  = `^[^"<>\r\n]{0,16}$`
)
