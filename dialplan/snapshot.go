package dialplan

import "sort"

func (s *TenantSnapshot) extension(name string) *Extension {
	for i := range s.Extensions {
		if s.Extensions[i].Name == name {
			return &s.Extensions[i]
		}
	}
	return nil
}

func (s *TenantSnapshot) mailbox(number string) *SpecialMailbox {
	for i := range s.SpecialMailboxes {
		if s.SpecialMailboxes[i].Number == number {
			return &s.SpecialMailboxes[i]
		}
	}
	return nil
}

func (s *TenantSnapshot) schedule(id int64) *Schedule {
	for i := range s.Schedules {
		if s.Schedules[i].ID == id {
			return &s.Schedules[i]
		}
	}
	return nil
}

func (s *TenantSnapshot) condition(id int64) *RoutingCondition {
	for i := range s.RoutingConditions {
		if s.RoutingConditions[i].ID == id {
			return &s.RoutingConditions[i]
		}
	}
	return nil
}

func (s *TenantSnapshot) trunk(name string) *SIPTrunk {
	for i := range s.Trunks {
		if s.Trunks[i].Name == name {
			return &s.Trunks[i]
		}
	}
	return nil
}

func (s *TenantSnapshot) prompt(id int64) *VoicePrompt {
	for i := range s.VoicePrompts {
		if s.VoicePrompts[i].ID == id {
			return &s.VoicePrompts[i]
		}
	}
	return nil
}

// emergencyCallerID is the extension's location number, else the tenant's
// default location, else the tenant's emergency_callerid.
func (s *TenantSnapshot) emergencyCallerID(e *Extension) string {
	var loc, def string
	for _, l := range s.EmergencyLocations {
		if e != nil && e.EmergencyLocationID != 0 && l.ID == e.EmergencyLocationID {
			loc = l.EmergencyCallerID
		}
		if l.IsDefault {
			def = l.EmergencyCallerID
		}
	}
	return firstValid(validCallerNumber, loc, def, s.Tenant.EmergencyCallerID)
}

// sortedOutbound returns the enabled outbound routes, lowest priority first.
func (s *TenantSnapshot) sortedOutbound() []*OutboundRoute {
	out := make([]*OutboundRoute, 0, len(s.OutboundRoutes))
	for i := range s.OutboundRoutes {
		if s.OutboundRoutes[i].Enabled {
			out = append(out, &s.OutboundRoutes[i])
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Priority < out[j].Priority })
	return out
}
