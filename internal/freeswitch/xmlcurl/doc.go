// Package xmlcurl parses the requests FreeSWITCH's mod_xml_curl POSTs to
// /fs/xml: the section, the key, the directory user and domain, the
// dialplan context and numbers, and the channel variables routing needs,
// decoded once; any other field on demand (Request.Get).
//
// It is pure and imports nothing of Switchboard's: the renderer (package
// dialplan) and the configuration renderers take its Request, and package
// fsxml parses the body with it to choose what to load.
//
// The real request bodies the tests use, captured from FreeSWITCH, are in
// testdata/captures; the renderers' and fsxml's tests read them from there.
package xmlcurl
