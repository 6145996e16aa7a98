package dialplan

import "strings"

// Special endpoints (resources.md §2.13): numbers of the tenant's plan that
// ring something other than a registered phone. There are no free-form dial
// strings: each kind renders a fixed shape from validated fields only.

func (s *TenantSnapshot) specialEndpoint(number string) *SpecialEndpoint {
	for i := range s.SpecialEndpoints {
		if s.SpecialEndpoints[i].Number == number {
			return &s.SpecialEndpoints[i]
		}
	}
	return nil
}

// specialEndpointActions renders one endpoint, or nil (with the trace's
// reason) when it cannot be served.
func (p *planner) specialEndpointActions(e *SpecialEndpoint) []action {
	switch e.Kind {
	case "external":
		if !validDialable(e.ExternalNumber) {
			p.trace.Reason = "special endpoint: external number invalid"
			return nil
		}
		// Through the tenant's outbound routes (their caller-id policy,
		// permission and limits apply), on the tenant's behalf: the
		// number is the administrator's choice, not the caller's, as a
		// hunt group's external member is.
		acts := append(p.endpointCallerID(e), set("call_timeout", itoa(clampInt(e.RingSeconds, 5, 300, 30))),
			set("toll_allow", tollAllow("international")))
		return append(acts, p.transfer(e.ExternalNumber))
	case "sip_uri":
		if !p.snap.Tenant.AllowSIPURIEndpoints {
			p.trace.Reason = "special endpoint: sip_uri endpoints not allowed for the tenant"
			return nil
		}
		if !validSIPURI(e.SIPURI) {
			p.trace.Reason = "special endpoint: sip_uri invalid"
			return nil
		}
		acts := append(p.endpointCallerID(e), set("call_timeout", itoa(clampInt(e.RingSeconds, 5, 300, 30))),
			set("hangup_after_bridge", "true"))
		return append(acts, act("bridge", "sofia/external/"+e.SIPURI), act("hangup", "NO_ANSWER"))
	case "application":
		return p.endpointApplication(e)
	}
	p.trace.Reason = "special endpoint: unknown kind"
	return nil
}

// endpointCallerID presents the tenant's main number for callerid_policy
// "tenant"; passthrough keeps the caller's.
func (p *planner) endpointCallerID(e *SpecialEndpoint) []action {
	if e.CallerIDPolicy != "tenant" {
		return nil
	}
	t := &p.snap.Tenant
	var acts []action
	if num := firstValid(validCallerNumber, t.CallerID); num != "" {
		acts = append(acts, set("effective_caller_id_number", num))
	}
	if name := sanitizeName(t.OutboundCallerIDName); name != "" {
		acts = append(acts, set("effective_caller_id_name", name))
	}
	return acts
}

// endpointApplication renders a built-in application endpoint.
func (p *planner) endpointApplication(e *SpecialEndpoint) []action {
	switch e.Application {
	case "echo_test":
		return []action{act("answer", ""), act("echo", "")}
	case "moh_test":
		return []action{act("answer", ""), act("playback", "local_stream://moh")}
	case "voicemail_main":
		return p.voicemailAny()
	case "company_directory":
		cd := p.snap.CompanyDirectory
		if cd == nil {
			cd = &CompanyDirectory{}
		}
		return p.companyDirectoryActions(cd)
	case "speaking_clock":
		return p.speakingClock()
	case "fax_to_email":
		return p.faxReceive(e)
	}
	p.trace.Reason = "special endpoint: unknown application"
	return nil
}

// speakingClock says the current time in the tenant's zone and language.
// mod_say reads the zone from the "timezone" channel variable; strepoch is
// FreeSWITCH's own clock, no user data is expanded.
func (p *planner) speakingClock() []action {
	acts := []action{act("answer", "")}
	if z := p.zone(); validToken(z, "/+") {
		acts = append(acts, set("timezone", z))
	}
	lang := "en"
	if l := p.snap.Tenant.Language; validLanguage(l) {
		lang = l[:2]
	}
	return append(acts, act("sleep", "500"), act("say", lang+" CURRENT_TIME pronounced ${strepoch()}"), act("hangup", "NORMAL_CLEARING"))
}

// validSIPURI accepts sip:/sips: user@host[:port][;transport=udp|tcp|tls]
// with a user part of characters that mean nothing in a dial string or to
// FreeSWITCH's expansion (no $ { } , | [ ] spaces or quotes).
func validSIPURI(s string) bool {
	rest, ok := strings.CutPrefix(s, "sip:")
	if !ok {
		if rest, ok = strings.CutPrefix(s, "sips:"); !ok {
			return false
		}
	}
	if len(s) > 255 {
		return false
	}
	if i := strings.IndexByte(rest, ';'); i >= 0 {
		switch rest[i:] {
		case ";transport=udp", ";transport=tcp", ";transport=tls":
			rest = rest[:i]
		default:
			return false
		}
	}
	user, hostport, ok := strings.Cut(rest, "@")
	if !ok || user == "" || !allIn(user, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+*#-") {
		return false
	}
	host, port, hasPort := strings.Cut(hostport, ":")
	if host == "" || !allIn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") {
		return false
	}
	return !hasPort || len(port) >= 1 && len(port) <= 5 && allIn(port, "0123456789")
}
