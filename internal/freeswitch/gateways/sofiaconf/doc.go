// Package sofiaconf renders sofia.conf, the configuration mod_sofia
// fetches through mod_xml_curl: each node's internal and external SIP
// profiles and, on the external profile, one sofia gateway per SIP trunk
// the node carries. A gateway's XML is written here (writeGateway).
//
// It sits under package gateways, which keeps the gateways loaded on every
// node in step with the trunks (killgw, rescan, resync); package fsxml
// serves what this package renders, and gateways compares a node's
// gateways with it. It is pure: a snapshot in (servers, trunks, the
// installation's options), bytes out.
package sofiaconf
