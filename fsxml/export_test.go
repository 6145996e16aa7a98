package fsxml

// Key names for the external tests that drop generations to simulate a
// fresh or emptied Redis.
var (
	GenKey   = genKey
	EpochKey = epochKey
)
