package routes

import (
	"sort"
	"strings"

	"github.com/switchboard/switchboard/internal/models"
)

// The reference's sections. Routes carry a tag (a resource's name, or a
// name of the hand-written routes); the document names each tag for
// people, describes it, and orders the tags in groups (x-tagGroups, which
// Redoc and others draw; Swagger UI follows the order of the tags list):
// platform, tenant configuration, calls, messaging, chat, CRM, and the web
// pages last.
type tagGroup struct {
	name, description string
}

var tagGroups = []tagGroup{
	{"Platform", "Platform"},
	{"Tenant", "Tenant configuration"},
	{"Calls", "Calls"},
	{"Messaging", "Messaging"},
	{"Chat", "Chat"},
	{"CRM", "CRM"},
	{"Web", "Web pages"},
}

// tagInfo places a tag: its group, its name for people and what its
// section holds. Resource tags not listed here take their group from the
// resource's scope and a description from its title.
type tagInfo struct{ group, name, description string }

var tagInfos = map[string]tagInfo{
	"operations":         {"Platform", "Operations", "Health and readiness probes and this OpenAPI document."},
	"keys":               {"Platform", "API keys", "Platform, tenant and user API keys: created with the value shown once, listed, revoked."},
	"freeswitch":         {"Platform", "FreeSWITCH", "What FreeSWITCH nodes fetch: their XML configuration (mod_xml_curl) and media files."},
	"imports":            {"Tenant", "Imports", "Bulk imports into a tenant (CDRs, recordings) as jobs with progress and per-row errors."},
	"routing":            {"Calls", "Routing trace", "What the dialplan does with a call: the route, condition, schedule and destination that decide it, and the XML FreeSWITCH receives."},
	"telephony":          {"Calls", "Live calls", "Live channels and calls, their event stream (Server-Sent Events), callback calls, hang-up, transfer and recording."},
	"reports":            {"Calls", "Call reports", "Call detail records and recordings."},
	"click_to_call":      {"Calls", "Click-to-call", "The public endpoints of click-to-call widgets that visitors' browsers call."},
	"agents":             {"Calls", "Agents", "Call-centre agents of a tenant's queues, and their live status."},
	"devices":            {"Tenant", "Devices", "A tenant's desk phones and their provisioning files."},
	"music_on_hold":      {"Tenant", "Music on hold", "A tenant's music-on-hold classes and their files."},
	"messaging":          {"Messaging", "Messages", "SMS and WhatsApp messages: send, list, and the providers' inbound callbacks."},
	"messaging_channels": {"Messaging", "Messaging channels", "A tenant's SMS and WhatsApp numbers and their providers."},
	"outbound_webhooks":  {"Messaging", "Outbound webhooks", "A tenant's webhooks: the events delivered to other systems, the delivery log and replay."},
	"chat":               {"Chat", "Chat", "The chat client, agents' chat accounts and messages sent into chat."},
	"chat_channels":      {"Chat", "Chat channels", "A tenant's chat channels (rooms)."},
	"incoming_webhooks":  {"Chat", "Incoming webhooks", "Slack-compatible webhooks that post into a tenant's chat channels."},
	"branding":           {"Chat", "Branding", "A tenant's name, colours and logo in the chat client."},
	"web":                {"Web", "Web pages", "The configuration manager's pages: sign-in, menu, API reference, live-calls dashboard and their assets."},
}

// crmResources are the resources of the CRM section.
var crmResources = map[string]bool{"accounts": true, "contacts": true, "leads": true, "lists": true, "custom_fields": true,
	"activities": true, "tasks": true, "campaigns": true, "deals": true}

// describeTag places a tag of the document.
func describeTag(tag string, byName map[string]*models.Resource) tagInfo {
	if info, ok := tagInfos[tag]; ok {
		return info
	}
	res := byName[tag]
	if res == nil {
		return tagInfo{"Tenant", humanTag(tag), ""}
	}
	info := tagInfo{name: humanTag(tag)}
	switch {
	case crmResources[tag]:
		info.group = "CRM"
		info.description = "A tenant's CRM " + pluralTitle(res.Title) + "."
	case res.Scope == models.Platform:
		info.group = "Platform"
		info.description = "The platform's " + pluralTitle(res.Title) + " (platform administrators and keys)."
	default:
		info.group = "Tenant"
		if res.Singleton {
			info.description = "A tenant's " + res.Title + " (one per tenant)."
		} else {
			info.description = "A tenant's " + pluralTitle(res.Title) + "."
		}
	}
	return info
}

// humanTag names a resource tag for people: "ivr_menus" is "IVR menus".
func humanTag(tag string) string {
	words := strings.Split(tag, "_")
	for i, w := range words {
		switch w {
		case "ivr", "sip", "did", "dids", "crm":
			words[i] = strings.ToUpper(strings.TrimSuffix(w, "s"))
			if strings.HasSuffix(w, "s") {
				words[i] += "s"
			}
		}
	}
	s := strings.Join(words, " ")
	return strings.ToUpper(s[:1]) + s[1:]
}

// documentTags renames every operation's tag for people and returns the
// document's tags list (grouped, in the groups' order) and x-tagGroups.
func documentTags(paths obj, resources []*models.Resource) ([]obj, []obj) {
	byName := map[string]*models.Resource{}
	order := map[string]int{}
	for i, r := range resources {
		byName[r.Name] = r
		order[r.Name] = i
	}
	seen := map[string]tagInfo{}
	for _, item := range paths {
		for _, op := range item.(obj) {
			o := op.(obj)
			tags := o["tags"].([]string)
			info := describeTag(tags[0], byName)
			if _, ok := seen[tags[0]]; !ok {
				seen[tags[0]] = info
			}
			o["tags"] = []string{info.name}
		}
	}
	raw := make([]string, 0, len(seen))
	for t := range seen {
		raw = append(raw, t)
	}
	// Within a group: resources in the registry's order, then the rest by name.
	rank := func(t string) int {
		if i, ok := order[t]; ok {
			return i
		}
		return len(resources)
	}
	sort.Slice(raw, func(i, j int) bool {
		ri, rj := rank(raw[i]), rank(raw[j])
		if ri != rj {
			return ri < rj
		}
		return seen[raw[i]].name < seen[raw[j]].name
	})
	var tags, groups []obj
	for _, g := range tagGroups {
		var names []string
		for _, t := range raw {
			if info := seen[t]; info.group == g.name {
				tags = append(tags, obj{"name": info.name, "description": g.description + ": " + info.description})
				names = append(names, info.name)
			}
		}
		if len(names) > 0 {
			groups = append(groups, obj{"name": g.description, "tags": names})
		}
	}
	return tags, groups
}
