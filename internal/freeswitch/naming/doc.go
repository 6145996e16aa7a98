// Package naming holds the names Switchboard gives FreeSWITCH objects and
// the parts those names are made of: directory user ids ("<ext>-<tenant>"),
// mod_callcenter queue and agent names ("<number>@<tenant>"), mod_voicemail
// boxes and storage directories, conference and IVR names
// ("<tenant>_<id>"), local_stream names, the valet lot and its slots, the
// widget users and contexts, the dial-by-name domains, the signed fax
// upload path and the a1-hash a directory user carries.
//
// Every package that only needs a name imports this one, not the renderer
// (package dialplan), which builds its documents from the same functions.
// Each Split* function is the inverse of its builder and refuses anything
// the builder would not produce. The package is pure and imports nothing
// of Switchboard's.
package naming
