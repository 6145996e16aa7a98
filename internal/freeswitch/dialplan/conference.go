package dialplan

import (
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
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

func (p *planner) conferenceActions(c *ConferenceRoom) []action {
	name := naming.TenantObjectName(p.tenant, c.ID)
	data := name + "@" + name
	if c.MuteOnJoin {
		data += "+flags{mute}"
	}
	acts := []action{act("answer", "")}
	if lang := firstValid(validLanguage, c.Language); lang != "" {
		acts = append(acts, set("default_language", lang))
	}
	if moderatedRoom(c) {
		// mod_conference makes a member moderator by the moderator PIN,
		// but ends the conference on a member's exit only by the endconf
		// member flag, which the conference application's data sets before
		// it asks for a PIN. So the PIN is asked here, three tries at most,
		// accepting only the PINs mod_conference accepts, and
		// conference-pin-<number> joins with the flags that PIN earns;
		// mod_conference checks it again (supplied_pin). Were a wrong PIN
		// let through, mod_conference would ask again itself and admit the
		// moderator PIN there without endconf.
		return append(acts,
			act("play_and_get_digits", "3 10 3 10000 # conference/conf-pin.wav conference/conf-bad-pin.wav "+confPINVar+" "+roomPINsExpr(c)+" 5000"),
			p.transfer(confPINPrefix+c.Number))
	}
	return append(acts, act("conference", data))
}

// confPINPrefix marks the internal number a moderated room's caller is
// transferred to once the PIN is read into confPINVar: a second dialplan
// lookup whose conditions compare it with the moderator PIN. It contains a
// '-', so no number-plan object collides with it.
const confPINPrefix = "conference-pin-"

// confPINVar holds the PIN a moderated room's caller entered (digits:
// play_and_get_digits accepts nothing else).
const confPINVar = "sb_conf_pin"

// moderatedRoom reports whether the room ends when a moderator leaves: it
// needs a moderator PIN to tell moderators apart.
func moderatedRoom(c *ConferenceRoom) bool {
	return c.EndWhenModeratorLeaves && conferencePIN(c.ModeratorPIN)
}

// roomPINsExpr matches the PINs mod_conference admits to a moderated room:
// the moderator PIN, and the member PIN when the room has one (with none,
// mod_conference admits only the moderator PIN).
func roomPINsExpr(c *ConferenceRoom) string {
	if conferencePIN(c.PIN) {
		return "^(?:" + regexQuote(c.PIN) + "|" + regexQuote(c.ModeratorPIN) + ")$"
	}
	return numberExpr(c.ModeratorPIN)
}

// conferencePINCheck renders "conference-pin-<number>": the moderator PIN
// joins with moderator|endconf (the conference ends when a moderator
// leaves), the member PIN as a member (mod_conference checks either again
// through supplied_pin, so it never asks itself), and anything else (the
// caller failed the three tries) is refused.
func (p *planner) conferencePINCheck(num string) *ext {
	c := p.snap.conferenceRoom(num)
	if !validNumber(num) || c == nil || !c.Enabled || !moderatedRoom(c) {
		return nil
	}
	p.trace.Match = "conference"
	name := naming.TenantObjectName(p.tenant, c.ID)
	member := name + "@" + name
	if c.MuteOnJoin {
		member += "+flags{mute}"
	}
	supplied := set("supplied_pin", "${"+confPINVar+"}")
	self := numberExpr(confPINPrefix + num)
	conds := []cond{
		{field: "destination_number", expr: self},
		{field: "${" + confPINVar + "}", expr: numberExpr(c.ModeratorPIN), brk: "on-true",
			actions: []action{supplied, act("conference", name+"@"+name+"+flags{moderator|endconf}")}},
	}
	if conferencePIN(c.PIN) {
		conds = append(conds, cond{field: "${" + confPINVar + "}", expr: numberExpr(c.PIN), brk: "on-true",
			actions: []action{supplied, act("conference", member)}})
	}
	return &ext{name: confPINPrefix + num, conds: append(conds,
		cond{field: "destination_number", expr: self, actions: []action{act("hangup", "CALL_REJECTED")}})}
}

// conferencePIN matches ^[0-9]{3,10}$ (the registry's rule).
func conferencePIN(s string) bool { return len(s) >= 3 && len(s) <= 10 && allIn(s, "0123456789") }

// ConferenceConf renders conference.conf for a fetch naming one profile
// (profile_name, else conference_name) of snap's tenant: that room's
// profile, or NotFound when the room is unknown or disabled. A fetch
// naming none (module load) gets an empty profile list, so no tenant's
// rooms are listed to FreeSWITCH at once.
func ConferenceConf(opts Options, req xmlcurl.Request, snap *TenantSnapshot) []byte {
	if req.Get("Action") == "request-controls" {
		// Caller controls (DTMF maps) are not ours: FreeSWITCH's own file.
		return xmldoc.NotFound()
	}
	name := req.ConferenceProfile()
	var room *ConferenceRoom
	if name != "" {
		tenant, id, ok := naming.SplitTenantObjectName(name)
		if !ok || snap == nil || !strings.EqualFold(tenant, snap.Tenant.Tenant) || !snap.Tenant.Enabled {
			return xmldoc.NotFound()
		}
		for i := range snap.ConferenceRooms {
			if snap.ConferenceRooms[i].ID == id && snap.ConferenceRooms[i].Enabled {
				room = &snap.ConferenceRooms[i]
			}
		}
		if room == nil {
			return xmldoc.NotFound()
		}
	}
	w := xmldoc.NewWriter(1024)
	w.Raw(xmldoc.DocOpen)
	w.Raw("<section name=\"configuration\">\n<configuration name=\"conference.conf\" description=\"Audio Conference\">\n<profiles>\n")
	if room != nil {
		writeConferenceProfile(w, opts, snap, naming.TenantObjectName(snap.Tenant.Tenant, room.ID), room)
	}
	w.Raw("</profiles>\n</configuration>\n")
	xmldoc.CloseSection(w)
	return w.Bytes()
}

func writeConferenceProfile(w *xmldoc.Writer, opts Options, snap *TenantSnapshot, name string, c *ConferenceRoom) {
	w.Raw("<profile")
	w.Attr("name", name)
	w.Raw(">\n")
	rate := map[string]string{"narrowband": "8000", "superwideband": "32000"}[c.Quality]
	w.Param("param", "rate", firstNonEmpty(rate, "16000"))
	w.Param("param", "interval", "20")
	w.Param("param", "energy-level", "100")
	w.Param("param", "comfort-noise", "true")
	if conferencePIN(c.PIN) {
		w.Param("param", "pin", c.PIN)
	}
	if conferencePIN(c.ModeratorPIN) {
		w.Param("param", "moderator-pin", c.ModeratorPIN)
	}
	if c.MaxMembers > 0 {
		w.Param("param", "max-members", itoa(clampInt(c.MaxMembers, 1, 500, 0)))
	}
	if c.AnnounceCount {
		w.Param("param", "announce-count", "2")
	}
	// What a member alone (or waiting for the moderator) hears: the room's
	// class, else the tenant's, else the platform's.
	w.Param("param", "moh-sound", firstNonEmpty(firstNonEmpty(snap.classMOH(c.MOHClassID), snap.tenantMOH()), DefaultMOH))
	if c.Record {
		w.Param("param", "auto-record", conferenceRecording(opts, snap.Tenant.Tenant, c.ID))
	}
	var flags []string
	if c.WaitForModerator {
		flags = append(flags, "wait-mod")
	}
	if len(flags) > 0 {
		w.Param("param", "conference-flags", strings.Join(flags, "|"))
	}
	if c.AnnounceJoinLeave {
		// Without these params a profile plays no join or leave sound.
		w.Param("param", "enter-sound", "tone_stream://%(200,0,500,600,700)")
		w.Param("param", "exit-sound", "tone_stream://%(500,0,300,200,100,50,25)")
	}
	w.Raw("</profile>\n")
}

// conferenceRecording is the file a recorded room's conference is written
// to: in the tenant's recordings of the media library as the nodes mount
// it (<MediaDir>/<tenant>/recordings/conference-<id>-<uuid>.wav), else
// under FreeSWITCH's recordings_dir as queue recordings are. ${uuid} is
// the first member's channel (mod_conference expands the name on it when
// the recording starts, and creates the directory).
func conferenceRecording(opts Options, tenant string, id int64) string {
	file := "conference-" + i64toa(id) + "-${uuid}.wav"
	if dir, ok := naming.NodeMediaDir(opts.MediaDir); ok {
		return dir + "/" + tenant + "/recordings/" + file
	}
	return "${recordings_dir}/" + tenant + "/" + file
}
