package dialplan

import (
	"cmp"
	"slices"
	"sort"
)

// extension returns the extension named name, nil when there is none. From
// a packed snapshot it is a copy of its own.
func (s *TenantSnapshot) extension(name string) *Extension {
	if p := s.packed(); p != nil {
		i, ok := p.find(name)
		if !ok {
			return nil
		}
		x := new(Extension)
		p.unpack(i, x)
		return x
	}
	if s.prepared != nil && s.prepared.extensions != nil {
		byName := s.prepared.extensions
		i, ok := slices.BinarySearchFunc(byName, name, func(j int32, name string) int {
			return cmp.Compare(s.Extensions[j].Name, name)
		})
		if !ok {
			return nil
		}
		return &s.Extensions[byName[i]]
	}
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
	if s.prepared != nil {
		return s.prepared.outbound
	}
	out := make([]*OutboundRoute, 0, len(s.OutboundRoutes))
	for i := range s.OutboundRoutes {
		if s.OutboundRoutes[i].Enabled {
			out = append(out, &s.OutboundRoutes[i])
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Priority < out[j].Priority })
	return out
}

// snapIndex is what Prepare computes once for a snapshot that many renders
// share.
type snapIndex struct {
	// packed holds the extensions (packed.go) when they could be packed;
	// the snapshot's Extensions is then nil.
	packed *packedExtensions
	// extensions are the positions in Extensions ordered by name (the
	// first of equal names first) when they are held as structs, nil when
	// Extensions was not indexed.
	extensions []int32
	outbound   []*OutboundRoute // enabled, by priority, patterns compiled
}

// Prepare indexes the snapshot for repeated renders: its extensions packed
// and indexed by name (Extensions is then nil: read them through
// ExtensionCount, ExtensionNamed and ExtensionList), the enabled outbound
// routes by priority with their patterns compiled. A prepared snapshot
// must not be modified afterwards; concurrent renders may share it. Use
// Bind for per-render trunks or extensions.
func (s *TenantSnapshot) Prepare() {
	ix := &snapIndex{}
	switch {
	case s.Extensions == nil && s.packed() != nil:
		ix.packed = s.packed() // prepared before
	default:
		ix.packed, ix.extensions = indexExtensions(s.Extensions)
		if ix.packed != nil {
			s.Extensions = nil
		}
	}
	for i := range s.OutboundRoutes {
		r := &s.OutboundRoutes[i]
		for j := range r.Patterns {
			r.Patterns[j].compiled = compile(r.Patterns[j].Match)
		}
	}
	s.prepared = nil
	ix.outbound = s.sortedOutbound()
	s.prepared = ix
}

// indexExtensions packs exts, or when they cannot be packed orders their
// positions by name, equal names in their order in exts (a lookup finds
// the first).
func indexExtensions(exts []Extension) (*packedExtensions, []int32) {
	if p, ok := packExtensions(exts); ok {
		return p, nil
	}
	byName := make([]int32, len(exts))
	for i := range byName {
		byName[i] = int32(i)
	}
	slices.SortStableFunc(byName, func(a, b int32) int { return cmp.Compare(exts[a].Name, exts[b].Name) })
	return nil, byName
}

// Bind returns a shallow copy of a (prepared) snapshot with the tenant's
// usable trunks set and, when extensions is not nil, its extensions
// replaced (for tenants too large to hold every extension in memory). The
// original is not modified.
func (s *TenantSnapshot) Bind(trunks []SIPTrunk, extensions []Extension) *TenantSnapshot {
	c := *s
	c.Trunks = trunks
	if extensions != nil {
		c.Extensions = extensions
		if c.prepared != nil {
			ix := *c.prepared
			ix.packed, ix.extensions = nil, nil
			c.prepared = &ix
		}
	}
	return &c
}

// WithExtensions returns a prepared copy of a prepared snapshot with its
// extensions replaced and indexed, sharing everything else (the outbound
// routes' compiled patterns included): a model updated after an extension
// changed. The original is not modified.
func (s *TenantSnapshot) WithExtensions(extensions []Extension) *TenantSnapshot {
	packed, byName := indexExtensions(extensions)
	if packed != nil {
		extensions = nil
	}
	return s.withExtensions(extensions, packed, byName)
}

// WithExtensionsOf returns a prepared copy of a prepared snapshot holding
// the extensions of from, a prepared snapshot, (shared, not copied)
// instead of its own: the routing part of a tenant model updated with its
// directory part.
func (s *TenantSnapshot) WithExtensionsOf(from *TenantSnapshot) *TenantSnapshot {
	if from.prepared == nil {
		return s.WithExtensions(from.Extensions)
	}
	return s.withExtensions(from.Extensions, from.prepared.packed, from.prepared.extensions)
}

// withExtensions is a prepared copy of s with these extensions, packed or
// indexed by name, and s's outbound routes.
func (s *TenantSnapshot) withExtensions(exts []Extension, packed *packedExtensions, byName []int32) *TenantSnapshot {
	c := *s
	c.Extensions = exts
	ix := &snapIndex{packed: packed, extensions: byName}
	if s.prepared != nil {
		ix.outbound = s.prepared.outbound
	} else {
		c.prepared = nil
		ix.outbound = c.sortedOutbound()
	}
	c.prepared = ix
	return &c
}

// ShareIndex makes a prepared snapshot hold the extensions of from, a
// prepared snapshot built from the very same extensions (s was given
// from's Extensions after from was prepared), instead of its own: a tenant
// model's directory and routing parts then hold and index their extensions
// once. Otherwise nothing changes. Call it before the snapshot is shared.
func (s *TenantSnapshot) ShareIndex(from *TenantSnapshot) {
	if s.prepared == nil || from == nil || from.prepared == nil ||
		len(s.Extensions) != len(from.Extensions) || len(s.Extensions) > 0 && &s.Extensions[0] != &from.Extensions[0] {
		return
	}
	if from.prepared.packed == nil && from.prepared.extensions == nil {
		return
	}
	s.prepared.packed, s.prepared.extensions = from.prepared.packed, from.prepared.extensions
}
