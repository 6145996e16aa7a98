package fakefs

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// The fake's gateway events, as mod_sofia fires them (sofia_reg.c):
//
//	sofia::gateway_state   sofia_reg_fire_custom_gateway_state_event:
//	                       Gateway, State, Ping-Status, then
//	                       Register-Network-IP and -Port when the
//	                       registration's address is known, Phrase when
//	                       not empty, Status when not 0
//	sofia::gateway_add     sofia_reg_add_gateway: Gateway, profile-name
//	sofia::gateway_delete  sofia_reg_check_gateway, once a killed gateway
//	                       is DOWN or NOREG: profile-name, Gateway
//
// A CUSTOM event is built as switch_event_create_subclass and
// switch_event_fire build it: Event-Subclass first, the module's headers,
// then the standard block (switch_event_prep_for_delivery appends it).
//
// The fake never registers by itself: a gateway stays as loaded (UNREGED,
// or NOREG and UP) until a test moves it with SetGatewayState.

// GatewayState is a change SetGatewayState applies to a loaded gateway.
type GatewayState struct {
	// State is a sofia_state_names word (REGED, FAILED, FAIL_WAIT, ...);
	// Ping is the gateway status (UP, DOWN).
	State, Ping string
	// Status and Phrase are the SIP answer that caused the change (0 and
	// "" for a change of the gateway's own timers).
	Status int
	Phrase string
	// NetworkIP and NetworkPort are where the registration went.
	NetworkIP   string
	NetworkPort int
}

// sofiaStates are sofia_state_names (mod_sofia.c).
var sofiaStates = []string{"UNREGED", "TRYING", "REGISTER", "REGED", "UNREGISTER", "FAILED", "FAIL_WAIT", "EXPIRED", "NOREG", "DOWN", "TIMEOUT"}

// SetGatewayState moves a loaded gateway to st and fires its
// sofia::gateway_state as mod_sofia does on a change. It refuses a gateway
// the fake does not hold and a state mod_sofia does not have.
func (s *Server) SetGatewayState(name string, st GatewayState) error {
	if !slices.Contains(sofiaStates, st.State) {
		return fmt.Errorf("fakefs: no sofia state %q", st.State)
	}
	if st.Ping != "UP" && st.Ping != "DOWN" {
		return fmt.Errorf("fakefs: no gateway status %q", st.Ping)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, ok := s.gateways[name]
	if !ok {
		return fmt.Errorf("fakefs: no gateway %q", name)
	}
	if st.Ping == "UP" && g.status != "UP" {
		g.upSince = time.Now()
	}
	g.state, g.status = st.State, st.Ping
	if st.State == "TRYING" || st.State == "FAIL_WAIT" {
		g.retryAt = time.Now().Add(time.Duration(g.retrySeconds) * time.Second)
	}
	if st.NetworkIP != "" {
		g.networkIP, g.networkPort = st.NetworkIP, st.NetworkPort
	}
	s.fireGatewayStateLocked(g, st.Status, st.Phrase)
	return nil
}

// fireGatewayStateLocked is sofia_reg_fire_custom_gateway_state_event.
func (s *Server) fireGatewayStateLocked(g *sofiaGateway, status int, phrase string) {
	h := []Header{{"Gateway", g.name}, {"State", g.state}, {"Ping-Status", g.status}}
	if g.networkIP != "" {
		h = append(h, Header{"Register-Network-IP", g.networkIP}, Header{"Register-Network-Port", strconv.Itoa(g.networkPort)})
	}
	if phrase != "" {
		h = append(h, Header{"Phrase", phrase})
	}
	if status != 0 {
		h = append(h, Header{"Status", strconv.Itoa(status)})
	}
	s.fireCustomLocked("sofia::gateway_state", "sofia_reg.c", "sofia_reg_fire_custom_gateway_state_event", h)
}

// fireGatewayAddLocked is sofia_reg_add_gateway's event.
func (s *Server) fireGatewayAddLocked(g *sofiaGateway) {
	s.fireCustomLocked("sofia::gateway_add", "sofia_reg.c", "sofia_reg_add_gateway",
		[]Header{{"Gateway", g.name}, {"profile-name", g.profile}})
}

// killGatewayLocked is what follows "killgw" (sofia_glue_del_gateway,
// then sofia_reg_check_gateway): a gateway that registers goes to
// UNREGISTER, then DOWN (one state event, DOWN and ping DOWN), and is
// removed with a gateway_delete; a NOREG one is removed at once.
func (s *Server) killGatewayLocked(g *sofiaGateway) {
	if g.state != "NOREG" {
		g.state, g.status = "DOWN", "DOWN"
		s.fireGatewayStateLocked(g, 0, "")
	}
	delete(s.gateways, g.name)
	s.fireCustomLocked("sofia::gateway_delete", "sofia_reg.c", "sofia_reg_check_gateway",
		[]Header{{"profile-name", g.profile}, {"Gateway", g.name}})
}

// fireCustomLocked fires a CUSTOM event of subclass with the module's
// headers h, as switch_event_fire orders them. Caller holds s.mu.
func (s *Server) fireCustomLocked(subclass, file, function string, h []Header) {
	if !s.anyWantsLocked("CUSTOM") {
		s.seq++
		return
	}
	all := append([]Header{{"Event-Subclass", subclass}}, h...)
	all = s.appendStdHeadersLocked(all, "CUSTOM")
	for i := len(all) - 13; i < len(all); i++ {
		switch all[i].Name {
		case "Event-Calling-File":
			all[i].Value = file
		case "Event-Calling-Function":
			all[i].Value = function
		}
	}
	s.deliverLocked("CUSTOM", all, "")
}
