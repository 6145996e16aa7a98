package fakefs

import (
	"context"
	"encoding/xml"
	"regexp"
	"slices"
	"strings"
	"time"
)

// The fake's mod_sofia: two running profiles, internal and external, and
// the gateways loaded on them. Only the gateway management commands are
// implemented, with mod_sofia 1.10's replies (mod_sofia.c cmd_profile):
//
//	sofia profile <name> rescan   re-reads sofia.conf (fetched from the
//	                              mod_xml_curl URL with profile=<name> and
//	                              reconfig=true) and adds the profile's
//	                              gateways it does not hold; a gateway it
//	                              holds is left as it is, changed or not
//	sofia profile <name> killgw <gw>|_all_
//	sofia profile <name> startgw <gw>
//
// Anything else under "sofia profile <name>" is "-ERR Unknown command!".
// Of "sofia xmlstatus" (mod_sofia.c cmd_xml_status) the gateway forms:
//
//	sofia xmlstatus gateway       every gateway of every running profile
//	sofia xmlstatus gateway <gw>  one gateway (sofia_reg_find_gateway)

const sofiaUsage = "USAGE:\n" +
	"--------------------------------------------------------------------------------\n" +
	"sofia profile <name> [start | stop | restart | rescan] [wait]\n" +
	"                     killgw <gateway name>\n" +
	"--------------------------------------------------------------------------------\n"

// gatewayNameRe is parse_gateways' check of a gateway name.
var gatewayNameRe = regexp.MustCompile(`^[\w.\-_]+$`)

// sofia answers the sofia API command.
func (s *Server) sofia(args string) string {
	argv := separateString(args, ' ', 1024)
	if len(argv) == 0 {
		return sofiaUsage
	}
	switch strings.ToLower(argv[0]) {
	case "help":
		return sofiaUsage
	case "profile":
		return s.sofiaProfile(argv[1:])
	case "xmlstatus":
		return s.sofiaXMLStatus(argv[1:])
	}
	return "Unknown Command [" + argv[0] + "]\n"
}

func (s *Server) sofiaProfile(argv []string) string {
	if len(argv) < 2 {
		return "Invalid Args!\n"
	}
	profile := argv[0]
	if profile != "internal" && profile != "external" {
		return "Invalid Profile [" + profile + "]"
	}
	switch strings.ToLower(argv[1]) {
	case "killgw":
		if len(argv) < 3 {
			return "-ERR missing gw name\n"
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if argv[2] == "_all_" {
			for _, g := range s.gateways {
				if g.profile == profile {
					s.killGatewayLocked(g)
				}
			}
			return "+OK every gateway marked for deletion.\n"
		}
		// sofia_reg_find_gateway looks the name up across profiles.
		g, ok := s.gateways[argv[2]]
		if !ok {
			return "-ERR no such gateway.\n"
		}
		s.killGatewayLocked(g)
		return "+OK gateway marked for deletion.\n"
	case "startgw":
		if len(argv) < 3 {
			return "-ERR missing gw name\n"
		}
		if !s.loadGateways(profile, argv[2]) {
			return "Reload XML [Success]\n-ERR cannot add gateway " + argv[2] + " for profile " + profile + "\n"
		}
		return "Reload XML [Success]\n+OK start gateway " + argv[2] + " complete\n"
	case "rescan":
		if !s.loadGateways(profile, "") {
			return "Reload XML [Success]\n-ERR cannot find config for profile " + profile + "\n"
		}
		return "Reload XML [Success]\n+OK scan complete\n"
	}
	return "-ERR Unknown command!\n"
}

// Gateways returns the loaded gateways as "<profile>::<name>", sorted.
func (s *Server) Gateways() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for name, g := range s.gateways {
		out = append(out, g.profile+"::"+name)
	}
	slices.Sort(out)
	return out
}

// sofiaDocument is sofia.conf as mod_sofia reads its gateways.
type sofiaDocument struct {
	Sections []struct {
		Configurations []struct {
			Name     string `xml:"name,attr"`
			Profiles []struct {
				Name     string `xml:"name,attr"`
				Gateways []struct {
					Name   string       `xml:"name,attr"`
					Params []xmlNameVal `xml:"param"`
				} `xml:"gateways>gateway"`
				Settings []xmlNameVal `xml:"settings>param"`
			} `xml:"profiles>profile"`
		} `xml:"configuration"`
	} `xml:"section"`
}

// loadGateways fetches sofia.conf for profile as config_sofia does on a
// rescan and adds the gateways it lists (only the one named only, when set)
// that are not loaded;
// false when the answer has no such profile. Without a mod_xml_curl URL
// the fake has no configuration to read and reports success.
func (s *Server) loadGateways(profile, only string) bool {
	if s.xmlCurlURL() == "" {
		return true
	}
	form := s.fetchForm("configuration", "configuration", "name", "sofia.conf")
	form.Set("profile", profile)
	form.Set("reconfig", "true")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	body, err := s.postFetch(ctx, form)
	if err != nil {
		return false
	}
	var doc sofiaDocument
	if xml.Unmarshal(body, &doc) != nil {
		return false
	}
	found := false
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sec := range doc.Sections {
		for _, c := range sec.Configurations {
			if c.Name != "sofia.conf" {
				continue
			}
			for _, p := range c.Profiles {
				if p.Name != profile {
					continue
				}
				found = true
				for _, g := range p.Gateways {
					if !gatewayNameRe.MatchString(g.Name) || (only != "" && g.Name != only) {
						continue
					}
					if _, dup := s.gateways[g.Name]; !dup { // else "Ignoring duplicate gateway"
						gw := newSofiaGateway(g.Name, profile, g.Params, p.Settings)
						s.gateways[g.Name] = gw
						s.fireGatewayAddLocked(gw)
					}
				}
			}
		}
	}
	return found
}
