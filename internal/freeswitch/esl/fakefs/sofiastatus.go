package fakefs

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// xmlNameVal is a <param name="" value=""/> of sofia.conf.
type xmlNameVal struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// sofiaGateway is what the fake keeps of a loaded gateway: the fields
// "sofia xmlstatus gateway" reports, derived from its params as
// parse_gateways (sofia.c) derives them. The fake never registers, so a
// gateway with register=true stays UNREGED (state 0) and DOWN.
type sofiaGateway struct {
	name, profile                        string
	scheme, realm, username, password    string
	from, contact, exten, to, proxy, ctx string
	expires                              string
	freq, pingFreq, pingMin, pingMax     int
	state, status                        string
	// retrySeconds is the retry-seconds param; retryAt when a failed or
	// trying registration is retried (set by SetGatewayState).
	retrySeconds int
	retryAt      time.Time
	// networkIP and networkPort are where the registration went.
	networkIP   string
	networkPort int
	// upSince is when the status last went UP (uptime-usec).
	upSince time.Time
}

func newSofiaGateway(name, profile string, params, settings []xmlNameVal) *sofiaGateway {
	get := func(list []xmlNameVal, key, def string) string {
		for _, p := range list {
			if p.Name == key && p.Value != "" {
				return p.Value
			}
		}
		return def
	}
	g := &sofiaGateway{name: name, profile: profile, scheme: get(params, "scheme", "Digest"),
		ctx: get(params, "context", get(settings, "context", "default")), state: "UNREGED", status: "DOWN"}
	register := get(params, "register", "true")
	proxy := get(params, "proxy", "")
	realm := get(params, "realm", "")
	if realm == "" {
		realm = proxy
		if realm == "" {
			realm = name
		}
	}
	if proxy == "" {
		proxy = realm
	}
	g.realm = realm
	g.username = get(params, "username", "")
	g.password = get(params, "password", "")
	if !isTrue(register) {
		g.state, g.status, g.upSince = "NOREG", "UP", time.Now()
		if g.username == "" {
			g.username = "FreeSWITCH"
		}
	}
	fromUser := get(params, "from-user", g.username)
	g.from = "<sip:" + fromUser + "@" + get(params, "from-domain", proxy) + ">"
	g.exten = get(params, "extension", g.username)
	if strings.HasPrefix(strings.ToLower(proxy), "sip:") {
		g.proxy, g.to = proxy, "sip:"+g.username+"@"+proxy[4:]
	} else {
		g.proxy, g.to = "sip:"+proxy, "sip:"+g.username+"@"+proxy
	}
	transport := get(params, "register-transport", "udp")
	sipIP := get(settings, "ext-sip-ip", get(settings, "sip-ip", "127.0.0.1"))
	if sipIP == "auto" {
		sipIP = "127.0.0.1"
	}
	port := get(settings, "sip-port", "5060")
	user := "gw+" + name
	if isTrue(get(params, "extension-in-contact", "false")) {
		user = g.exten
	}
	g.contact = "<sip:" + user + "@" + sipIP + ":" + port + ";transport=" + transport + ";gw=" + name + ">"
	g.expires = get(params, "expire-seconds", "3600")
	if _, err := fmt.Sscan(g.expires, &g.freq); err != nil || g.freq < 5 {
		g.freq = 3600
	}
	if _, err := fmt.Sscan(get(params, "retry-seconds", "30"), &g.retrySeconds); err != nil || g.retrySeconds < 5 {
		g.retrySeconds = 30
	}
	var ping int
	if _, err := fmt.Sscan(get(params, "ping", "0"), &ping); err == nil && ping >= 5 {
		g.pingFreq, g.pingMin, g.pingMax = ping, 1, 1
	}
	return g
}

func isTrue(v string) bool {
	switch strings.ToLower(v) {
	case "yes", "on", "true", "t", "enabled", "active", "allow", "1":
		return true
	}
	return false
}

// ampEncode is switch_amp_encode: & < > " ' as entities.
func ampEncode(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&quot;", "'", "&apos;").Replace(s)
}

// writeXMLStatus is xml_gateway_status (mod_sofia.c): name, profile,
// realm, username, to, proxy and context unescaped; from, contact and
// exten amp-encoded; the password only as yes/no.
func (g *sofiaGateway) writeXMLStatus(b *strings.Builder) {
	password := "yes"
	if g.password == "" {
		password = "no"
	}
	var uptime int64
	if g.status == "UP" {
		uptime = time.Since(g.upSince).Microseconds()
	}
	b.WriteString("  <gateway>\n")
	fmt.Fprintf(b, "    <name>%s</name>\n", g.name)
	fmt.Fprintf(b, "    <profile>%s</profile>\n", g.profile)
	fmt.Fprintf(b, "    <scheme>%s</scheme>\n", g.scheme)
	fmt.Fprintf(b, "    <realm>%s</realm>\n", g.realm)
	fmt.Fprintf(b, "    <username>%s</username>\n", g.username)
	fmt.Fprintf(b, "    <password>%s</password>\n", password)
	fmt.Fprintf(b, "    <from>%s</from>\n", ampEncode(g.from))
	fmt.Fprintf(b, "    <contact>%s</contact>\n", ampEncode(g.contact))
	fmt.Fprintf(b, "    <exten>%s</exten>\n", ampEncode(g.exten))
	fmt.Fprintf(b, "    <to>%s</to>\n", g.to)
	fmt.Fprintf(b, "    <proxy>%s</proxy>\n", g.proxy)
	fmt.Fprintf(b, "    <context>%s</context>\n", g.ctx)
	fmt.Fprintf(b, "    <expires>%s</expires>\n", g.expires)
	fmt.Fprintf(b, "    <freq>%d</freq>\n", g.freq)
	fmt.Fprintf(b, "    <ping>%d</ping>\n", 0)
	fmt.Fprintf(b, "    <pingfreq>%d</pingfreq>\n", g.pingFreq)
	fmt.Fprintf(b, "    <pingmin>%d</pingmin>\n", g.pingMin)
	fmt.Fprintf(b, "    <pingcount>%d</pingcount>\n", 0)
	fmt.Fprintf(b, "    <pingmax>%d</pingmax>\n", g.pingMax)
	fmt.Fprintf(b, "    <pingtime>%0.2f</pingtime>\n", 0.0)
	fmt.Fprintf(b, "    <pinging>%d</pinging>\n", 0)
	fmt.Fprintf(b, "    <state>%s</state>\n", g.state)
	fmt.Fprintf(b, "    <status>%s</status>\n", g.status)
	fmt.Fprintf(b, "    <uptime-usec>%d</uptime-usec>\n", uptime)
	fmt.Fprintf(b, "    <calls-in>%d</calls-in>\n", 0)
	fmt.Fprintf(b, "    <calls-out>%d</calls-out>\n", 0)
	fmt.Fprintf(b, "    <failed-calls-in>%d</failed-calls-in>\n", 0)
	fmt.Fprintf(b, "    <failed-calls-out>%d</failed-calls-out>\n", 0)
	if g.state == "FAILED" || g.state == "FAIL_WAIT" || g.state == "TRYING" {
		if left := int(time.Until(g.retryAt).Seconds()); left >= 0 {
			fmt.Fprintf(b, "    <retry>%ds</retry>\n", left)
		} else {
			b.WriteString("    <retry>NEVER</retry>\n")
		}
	}
	b.WriteString("  </gateway>\n")
}

const xmlStatusHeader = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n"

// sofiaXMLStatus answers "sofia xmlstatus ..." (cmd_xml_status): with one
// argument, whatever it is, every gateway of every running profile (the
// fake's profiles in name order, gateways in name order); "gateway <gw>"
// one gateway or "Invalid Gateway!"; two or more arguments other than
// those "Invalid Syntax!". The profile forms are not modelled.
func (s *Server) sofiaXMLStatus(argv []string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	switch {
	case len(argv) == 1:
		b.WriteString(xmlStatusHeader)
		b.WriteString("<gateways>\n")
		gws := make([]*sofiaGateway, 0, len(s.gateways))
		for _, g := range s.gateways {
			gws = append(gws, g)
		}
		slices.SortFunc(gws, func(a, c *sofiaGateway) int {
			return strings.Compare(a.profile+"::"+a.name, c.profile+"::"+c.name)
		})
		for _, g := range gws {
			g.writeXMLStatus(&b)
		}
		b.WriteString("</gateways>\n")
	case len(argv) >= 2 && strings.EqualFold(argv[0], "gateway"):
		g, ok := s.gateways[argv[1]]
		if !ok {
			return "Invalid Gateway!\n"
		}
		b.WriteString(xmlStatusHeader)
		g.writeXMLStatus(&b)
	case len(argv) >= 2 && !strings.EqualFold(argv[0], "profile"):
		return "Invalid Syntax!\n"
	default:
		return "-ERR xmlstatus " + strings.Join(argv, " ") + " is not modelled by the fake\n"
	}
	return b.String()
}

// GatewayProxy returns a loaded gateway's proxy as xmlstatus reports it
// ("sip:<proxy param>").
func (s *Server) GatewayProxy(name string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.gateways[name]
	if !ok {
		return "", false
	}
	return g.proxy, true
}
