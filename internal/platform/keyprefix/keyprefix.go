// Package keyprefix names the start of every Redis key and channel of one
// installation, so installations sharing a Redis server (a Redis Cluster
// has only database 0) keep to their own state.
package keyprefix

// Default starts the keys of a component built without an installation's
// prefix (its own tests, tools).
const Default = "sb:"

// For is the prefix of the installation with this id: "sb:<id>:".
func For(installationID string) string { return Default + installationID + ":" }

// OrDefault is prefix, or Default when it is empty.
func OrDefault(prefix string) string {
	if prefix == "" {
		return Default
	}
	return prefix
}
