// Package dialplan renders the XML FreeSWITCH fetches through mod_xml_curl:
// directory users, dialplan extensions and the tenants' configuration
// files (callcenter.conf, conference.conf, ivr.conf, voicemail.conf,
// local_stream.conf, directory.conf). It is pure: it takes a
// configuration snapshot (plain structs that package fsxml fills straight
// from the database, with columns derived from their json tags), the parsed
// request (package xmlcurl) and the current time, and returns bytes. No
// database, Redis, HTTP or clock is touched here.
//
// What it does not hold: the names it gives FreeSWITCH objects (package
// naming, which callers needing only a name import instead), the request
// parser (package xmlcurl), the escaping XML writer (package xmldoc) and
// sofia.conf with the trunks' gateways (package gateways/sofiaconf).
//
// Typical use by the /fs/xml handler:
//
//	req := xmlcurl.ParseRequest(body)
//	switch req.Section {
//	case "directory":     // load the tenant named by naming.SplitUserID(req.User) or req.Group
//		doc = dialplan.Directory(opts, req, snap)
//	case "dialplan":      // "public": load the DID for req.DestinationNumber(); else the tenant req.Context()
//		doc, trace = dialplan.Dialplan(opts, req, pub, snap, now)
//	case "configuration": // sofia.conf: sofiaconf.Configuration(opts, req, servers, trunks)
//		doc = dialplan.CallcenterConf(opts, req, snaps) // or ConferenceConf, IVRConf, …
//	}
//
// # Caching
//
// Directory documents depend only on the snapshot and the request's
// action/user/domain/group, so they cache per tenant generation. Dialplan
// documents may also depend on the time and on the caller (number, name,
// sb_ext); Trace.TimeDependent and Trace.CallerDependent say when, and a cache
// key must then include those inputs (or the render must not be cached past
// the current minute).
//
// # Safety
//
// Every value is XML-escaped and '$' is written as &#36; (see xmldoc.EscapeTo), so
// FreeSWITCH's preprocessor never sees "$${". Values that FreeSWITCH expands
// at run time (action data, dial strings, channel variables) only ever carry
// whitelisted numbers, tenant names and fixed words; the only "${...}"
// references in output are our own fixed variable names (sb_ext, toll_allow,
// originate_disposition, uuid). Display names lose every "$" that starts "${" or "$$", and
// control characters (sanitizeName). Outbound patterns are matched in
// Go; FreeSWITCH only sees the escaped dialled number.
package dialplan
