package models

// Bounds the validator applies to fields that declare none, exported so
// the OpenAPI document states the same limits.
const (
	// DefaultMaxLen bounds strings without MaxLen (in characters).
	DefaultMaxLen = defaultMaxLen
	// DefaultMapKeys bounds Map fields without MaxItems.
	DefaultMapKeys = defaultMapKeys
)

// MapKeyPattern is what every key of a Map field must match.
var MapKeyPattern = mapKeyRE.String()

// InputPattern is the pattern raw input must match: Pattern, except for
// values the validator rewrites into Pattern's form (E.164 numbers are
// taken with spaces, brackets and dashes), which take any text it parses.
func (f *Field) InputPattern() string {
	if f.Pattern == patE164 {
		return ""
	}
	return f.Pattern
}
