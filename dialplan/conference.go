package dialplan

import (
	"strconv"
	"strings"
)

// Conference rooms (resources.md §2.15): the tenant context answers the
// room's number by joining conference <tenant>_<id> with the profile of the
// same name, and conference.conf serves that profile (its PINs, limits and
// flags) when mod_conference asks for it by profile_name. Both names are
// built from the whitelisted tenant and the numeric id only.

func (s *TenantSnapshot) conferenceRoom(number string) *ConferenceRoom {
	for i := range s.ConferenceRooms {
		if s.ConferenceRooms[i].Number == number {
			return &s.ConferenceRooms[i]
		}
	}
	return nil
}

// TenantObjectName is "<tenant>_<id>": the conference and profile name of a
// room, the menu name of an IVR.
func TenantObjectName(tenant string, id int64) string { return tenant + "_" + i64toa(id) }

// SplitTenantObjectName splits "<tenant>_<id>" (tenant names may contain '_':
// the split is at the last one).
func SplitTenantObjectName(name string) (tenant string, id int64, ok bool) {
	i := strings.LastIndexByte(name, '_')
	if i < 0 || !validTenant(name[:i]) || !allIn(name[i+1:], "0123456789") || len(name)-i-1 > 18 {
		return "", 0, false
	}
	id, err := strconv.ParseInt(name[i+1:], 10, 64)
	return name[:i], id, err == nil && id > 0
}

// ConferenceProfile is the profile a conference.conf fetch asks for
// (profile_name, else conference_name; "" at module load).
func (r *Request) ConferenceProfile() string {
	return firstNonEmpty(r.Get("profile_name"), r.Get("conference_name"))
}

func (p *planner) conferenceActions(c *ConferenceRoom) []action {
	name := TenantObjectName(p.tenant, c.ID)
	data := name + "@" + name
	if c.MuteOnJoin {
		data += "+flags{mute}"
	}
	acts := []action{act("answer", "")}
	if lang := firstValid(validLanguage, c.Language); lang != "" {
		acts = append(acts, set("default_language", lang))
	}
	return append(acts, act("conference", data))
}

// conferencePIN matches ^[0-9]{3,10}$ (the registry's rule).
func conferencePIN(s string) bool { return len(s) >= 3 && len(s) <= 10 && allIn(s, "0123456789") }

// ConferenceConf renders conference.conf for a fetch naming one profile
// (profile_name, else conference_name) of snap's tenant: that room's
// profile, or NotFound when the room is unknown or disabled. A fetch
// naming none (module load) gets an empty profile list, so no tenant's
// rooms are listed to FreeSWITCH at once.
func ConferenceConf(req Request, snap *TenantSnapshot) []byte {
	if req.Get("Action") == "request-controls" {
		// Caller controls (DTMF maps) are not ours: FreeSWITCH's own file.
		return NotFound()
	}
	name := req.ConferenceProfile()
	var room *ConferenceRoom
	if name != "" {
		tenant, id, ok := SplitTenantObjectName(name)
		if !ok || snap == nil || !strings.EqualFold(tenant, snap.Tenant.Tenant) || !snap.Tenant.Enabled {
			return NotFound()
		}
		for i := range snap.ConferenceRooms {
			if snap.ConferenceRooms[i].ID == id && snap.ConferenceRooms[i].Enabled {
				room = &snap.ConferenceRooms[i]
			}
		}
		if room == nil {
			return NotFound()
		}
	}
	w := newXW(1024)
	w.raw(docOpen)
	w.raw("<section name=\"configuration\">\n<configuration name=\"conference.conf\" description=\"Audio Conference\">\n<profiles>\n")
	if room != nil {
		writeConferenceProfile(w, TenantObjectName(snap.Tenant.Tenant, room.ID), room)
	}
	w.raw("</profiles>\n</configuration>\n")
	closeSection(w)
	return w.bytes()
}

func writeConferenceProfile(w *xw, name string, c *ConferenceRoom) {
	w.raw("<profile")
	w.attr("name", name)
	w.raw(">\n")
	rate := map[string]string{"narrowband": "8000", "superwideband": "32000"}[c.Quality]
	w.param("param", "rate", firstNonEmpty(rate, "16000"))
	w.param("param", "interval", "20")
	w.param("param", "energy-level", "100")
	w.param("param", "comfort-noise", "true")
	if conferencePIN(c.PIN) {
		w.param("param", "pin", c.PIN)
	}
	if conferencePIN(c.ModeratorPIN) {
		w.param("param", "moderator-pin", c.ModeratorPIN)
	}
	if c.MaxMembers > 0 {
		w.param("param", "max-members", itoa(clampInt(c.MaxMembers, 1, 500, 0)))
	}
	if c.AnnounceCount {
		w.param("param", "announce-count", "2")
	}
	var flags []string
	if c.WaitForModerator {
		flags = append(flags, "wait-mod")
	}
	if len(flags) > 0 {
		w.param("param", "conference-flags", strings.Join(flags, "|"))
	}
	if c.AnnounceJoinLeave {
		// Without these params a profile plays no join or leave sound.
		w.param("param", "enter-sound", "tone_stream://%(200,0,500,600,700)")
		w.param("param", "exit-sound", "tone_stream://%(500,0,300,200,100,50,25)")
	}
	w.raw("</profile>\n")
}
