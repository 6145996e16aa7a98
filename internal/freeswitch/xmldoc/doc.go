// Package xmldoc writes the XML documents FreeSWITCH fetches through
// mod_xml_curl: a small append-only writer whose every value is escaped so
// that FreeSWITCH's preprocessor never sees "$${" ('$' is written as
// &#36;), the document frame, and the "not found" document.
//
// The renderers (package dialplan, package sofiaconf) write with it; what
// a value may hold before it is written (the whitelists against run-time
// expansion) is theirs. It is pure and imports nothing of Switchboard's.
package xmldoc
