package sofiaconf

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// SIPProfile is one sofia profile of a server.
type SIPProfile struct {
	Name     string `json:"name"`
	SIPIP    string `json:"sip_ip"`
	SIPPort  int    `json:"sip_port"`
	ExtSIPIP string `json:"ext_sip_ip"`
	ExtRTPIP string `json:"ext_rtp_ip"`
	TLSPort  int    `json:"tls_port"`
	WSSPort  int    `json:"wss_port"`
}

// Server is a FreeSWITCH node (resources.md §1.5).
type Server struct {
	ID          int64        `json:"id"`
	Name        string       `json:"name"`
	Hostname    string       `json:"hostname"`
	SIPProfiles []SIPProfile `json:"sip_profiles"`
	Enabled     bool         `json:"enabled"`
}

// Configuration renders a platform configuration fetch. Only sofia.conf is
// served here (conference.conf, per tenant, is dialplan.ConferenceConf); every other
// file gets NotFound, so FreeSWITCH uses its static copy.
func Configuration(opts dialplan.Options, req xmlcurl.Request, servers []Server, trunks []dialplan.SIPTrunk) []byte {
	if req.Section != "configuration" || req.KeyValue != "sofia.conf" {
		return xmldoc.NotFound()
	}
	return Sofia(opts, req, servers, trunks)
}

// Sofia renders sofia.conf for the node that asks (matched on req.Hostname):
// its internal and external profiles and, on the external profile, one
// gateway per enabled trunk the node carries (trunk servers empty = all
// nodes). With profile=<name> in the request only that profile is rendered.
//
// An unknown node gets the default profiles, internal on 5060 and external
// on 5080, bound to the FreeSWITCH-IPv4 it reported, and only the trunks
// meant for every node: a new node then works before an administrator has
// registered it, without receiving trunks pinned to other nodes.
func Sofia(opts dialplan.Options, req xmlcurl.Request, servers []Server, trunks []dialplan.SIPTrunk) []byte {
	srv := defaultServer(req)
	known := false
	for i := range servers {
		if servers[i].Hostname != "" && servers[i].Hostname == req.Hostname {
			srv, known = &servers[i], true
			break
		}
	}
	w := xmldoc.NewWriter(2048 + 512*len(trunks))
	w.Raw(xmldoc.DocOpen)
	w.Raw("<section name=\"configuration\">\n<configuration name=\"sofia.conf\" description=\"sofia Endpoint\">\n")
	w.Raw("<global_settings>\n")
	w.Param("param", "log-level", "0")
	w.Param("param", "debug-presence", "0")
	w.Raw("</global_settings>\n<profiles>\n")
	for _, prof := range srv.SIPProfiles {
		if prof.Name != "internal" && prof.Name != "external" {
			continue
		}
		if req.Profile != "" && req.Profile != prof.Name {
			continue
		}
		writeProfile(w, opts, prof, srv.Name, known, trunks)
	}
	w.Raw("</profiles>\n</configuration>\n")
	xmldoc.CloseSection(w)
	return w.Bytes()
}

func defaultServer(req xmlcurl.Request) *Server {
	ip := req.IPv4
	if !naming.ValidHost(ip) {
		ip = "auto"
	}
	return &Server{Name: "", SIPProfiles: []SIPProfile{
		{Name: "internal", SIPIP: ip, SIPPort: 5060},
		{Name: "external", SIPIP: ip, SIPPort: 5080},
	}}
}

func writeProfile(w *xmldoc.Writer, opts dialplan.Options, prof SIPProfile, server string, known bool, trunks []dialplan.SIPTrunk) {
	internal := prof.Name == "internal"
	w.Raw("<profile")
	w.Attr("name", prof.Name)
	w.Raw(">\n<gateways>\n")
	if !internal {
		for i := range trunks {
			t := &trunks[i]
			if !t.Enabled || !naming.ValidGatewayName(t.Name) || !naming.ValidHost(t.Host) || !carries(t, server, known) {
				continue
			}
			writeGateway(w, t)
		}
	}
	w.Raw("</gateways>\n<domains>\n<domain name=\"all\" alias=\"false\" parse=\"false\"/>\n</domains>\n<settings>\n")
	port := prof.SIPPort
	if port <= 0 {
		port = map[bool]int{true: 5060, false: 5080}[internal]
	}
	ip := cmp.Or(prof.SIPIP, "auto")
	w.Param("param", "context", "public")
	w.Param("param", "dialplan", "XML")
	w.Param("param", "sip-ip", ip)
	w.Param("param", "rtp-ip", ip)
	w.Param("param", "sip-port", strconv.Itoa(port))
	if prof.ExtSIPIP != "" {
		w.Param("param", "ext-sip-ip", prof.ExtSIPIP)
	}
	if prof.ExtRTPIP != "" {
		w.Param("param", "ext-rtp-ip", prof.ExtRTPIP)
	}
	if prof.TLSPort > 0 {
		w.Param("param", "tls", "true")
		w.Param("param", "tls-sip-port", strconv.Itoa(prof.TLSPort))
	}
	if internal && opts.SIPWSPort > 0 {
		w.Param("param", "ws-binding", ":"+strconv.Itoa(opts.SIPWSPort))
	}
	switch {
	case prof.WSSPort > 0:
		w.Param("param", "wss-binding", ":"+strconv.Itoa(prof.WSSPort))
	case internal && opts.SIPWSSPort > 0:
		w.Param("param", "wss-binding", ":"+strconv.Itoa(opts.SIPWSSPort))
	}
	// Declared codecs: an inbound leg negotiates from these. A leg
	// FreeSWITCH dials for a call (an originator's B leg) offers only the
	// caller's codec unless media_mix_inbound_outbound_codecs is true on
	// it, so these alone do not transcode: the directory's dial-string sets
	// that variable on every user/ leg, which then offers the caller's codec
	// and these (a PCMA-only caller bridged to a phone answering PCMU).
	// Phones get G.722 first; carriers the G.711 pair (a trunk's own codecs
	// are its absolute_codec_string).
	prefs := "PCMA,PCMU"
	if internal {
		prefs = "G722,PCMU,PCMA"
	}
	w.Param("param", "inbound-codec-prefs", prefs)
	w.Param("param", "outbound-codec-prefs", prefs)
	w.Param("param", "auth-calls", strconv.FormatBool(internal))
	if internal {
		w.Param("param", "apply-nat-acl", "nat.auto")
		w.Param("param", "force-register-domain", opts.Domain)
		w.Param("param", "force-subscription-domain", opts.Domain)
		w.Param("param", "force-register-db-domain", opts.Domain)
		w.Param("param", "challenge-realm", "auto_from")
		w.Param("param", "inbound-reg-force-matching-username", "true")
	}
	w.Raw("</settings>\n</profile>\n")
}

// carries reports whether the node loads the trunk.
func carries(t *dialplan.SIPTrunk, server string, known bool) bool {
	if len(t.Servers) == 0 {
		return true
	}
	return known && slices.ContainsFunc(t.Servers, func(s string) bool { return strings.EqualFold(s, server) })
}

// writeGateway renders a trunk as a sofia gateway (resources.md §1.8). The
// password is carried verbatim (escaped, '$' as &#36;).
func writeGateway(w *xmldoc.Writer, t *dialplan.SIPTrunk) {
	w.Raw("<gateway")
	w.Attr("name", t.Name)
	w.Raw(">\n")
	port := t.Port
	if port <= 0 {
		port = 5060
	}
	proxy := t.Host
	if port != 5060 {
		proxy += ":" + strconv.Itoa(port)
	}
	w.Param("param", "proxy", proxy)
	w.Param("param", "register", strconv.FormatBool(t.Register))
	user := cmp.Or(t.Username, "switchboard")
	w.Param("param", "username", user)
	w.Param("param", "password", cmp.Or(t.Password, "none"))
	optional := [][2]string{
		{"auth-username", t.AuthUsername}, {"realm", t.Realm}, {"from-user", t.FromUser},
		{"from-domain", t.FromDomain}, {"outbound-proxy", t.OutboundProxy},
	}
	for _, kv := range optional {
		if kv[1] != "" {
			w.Param("param", kv[0], kv[1])
		}
	}
	switch t.Transport {
	case "tcp", "tls":
		w.Param("param", "register-transport", t.Transport)
	default:
		w.Param("param", "register-transport", "udp")
	}
	expire := t.ExpireSeconds
	if expire <= 0 {
		expire = 3600
	}
	retry := t.RetrySeconds
	if retry <= 0 {
		retry = 30
	}
	w.Param("param", "expire-seconds", strconv.Itoa(expire))
	w.Param("param", "retry-seconds", strconv.Itoa(retry))
	if t.PingSeconds > 0 {
		w.Param("param", "ping", strconv.Itoa(t.PingSeconds))
	}
	w.Param("param", "caller-id-in-from", strconv.FormatBool(t.CallerIDInFrom))
	codecs := t.Codecs
	if len(codecs) == 0 {
		codecs = []string{"PCMA", "PCMU"}
	}
	var ok []string
	for _, c := range codecs {
		switch c {
		case "PCMA", "PCMU", "G722", "OPUS", "G729":
			ok = append(ok, c)
		}
	}
	w.Raw("<variables>\n")
	outboundVar(w, "absolute_codec_string", strings.Join(ok, ","))
	// DTMF towards the carrier: sofia reads dtmf_type (rfc2833, info or
	// none) on the leg; inband is none on the wire plus tones generated
	// into the audio from the moment the carrier answers.
	switch t.DTMFMode {
	case "info":
		outboundVar(w, "dtmf_type", "info")
	case "inband":
		outboundVar(w, "dtmf_type", "none")
		outboundVar(w, "execute_on_answer", "start_dtmf_generate")
	default:
		outboundVar(w, "dtmf_type", "rfc2833")
	}
	w.Raw("</variables>\n</gateway>\n")
}

// outboundVar is a gateway variable set on calls out through it.
func outboundVar(w *xmldoc.Writer, name, value string) {
	w.Raw("<variable")
	w.Attr("name", name)
	w.Attr("value", value)
	w.Raw(" direction=\"outbound\"/>\n")
}
