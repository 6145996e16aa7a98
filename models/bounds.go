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
