package command

import (
	"fmt"
	"strings"
)

// The commands below keep a node's modules in step with the configuration
// (mod_callcenter, mod_sofia, mod_voicemail, mod_local_stream). Their
// arguments are names Switchboard derives from validated records (queue,
// agent and gateway names, mailbox ids, library paths), so they carry no
// quoting beyond what each module parses.

// callcenter is "callcenter_config <args>".
func callcenter(format string, args ...any) Command {
	return Command{"callcenter_config " + fmt.Sprintf(format, args...)}
}

// CallcenterList lists one section of mod_callcenter's state ("queue",
// "agent" or "tier"): callcenter_config <section> list.
func CallcenterList(section string) Command { return callcenter("%s list", section) }

// QueueLoad makes mod_callcenter fetch callcenter.conf for a new queue.
func QueueLoad(name string) Command { return callcenter("queue load %s", name) }

// QueueReload re-reads an existing queue's settings (its tiers stay).
func QueueReload(name string) Command { return callcenter("queue reload %s", name) }

// QueueUnload stops serving a queue.
func QueueUnload(name string) Command { return callcenter("queue unload %s", name) }

// AgentAdd adds a callback agent: callcenter_config agent add <name> callback.
func AgentAdd(name string) Command { return callcenter("agent add %s callback", name) }

// AgentDel deletes an agent and its tiers.
func AgentDel(name string) Command { return callcenter("agent del %s", name) }

// AgentSet sets one of an agent's settings. mod_callcenter splits its
// arguments at spaces and single quotes group, so a value with spaces
// (a status such as "On Break") is quoted.
func AgentSet(key, agent, value string) Command {
	if strings.Contains(value, " ") {
		value = "'" + value + "'"
	}
	return callcenter("agent set %s %s %s", key, agent, value)
}

// TierAdd puts an agent in a queue at a level and position.
func TierAdd(queue, agent string, level, position int) Command {
	return callcenter("tier add %s %s %d %d", queue, agent, level, position)
}

// TierSetLevel changes an existing tier's level.
func TierSetLevel(queue, agent string, level int) Command {
	return callcenter("tier set level %s %s %d", queue, agent, level)
}

// TierSetPosition changes an existing tier's position.
func TierSetPosition(queue, agent string, position int) Command {
	return callcenter("tier set position %s %s %d", queue, agent, position)
}

// TierDel takes an agent out of a queue.
func TierDel(queue, agent string) Command { return callcenter("tier del %s %s", queue, agent) }

// GatewayStatus lists every gateway a node's sofia profiles hold, as XML.
func GatewayStatus() Command { return Command{"sofia xmlstatus gateway"} }

// GatewayStatusOf reports one gateway, whichever profile holds it:
// sofia xmlstatus gateway <name> (mod_sofia answers "Invalid Gateway!"
// when none does). The name is one argument.
func GatewayStatusOf(name string) (Command, error) {
	if _, err := SafeArg(name); err != nil {
		return Command{}, &ValueError{Name: "gateway", Err: err}
	}
	return Command{"sofia xmlstatus gateway " + name}, nil
}

// KillGateway unregisters and removes a gateway from a profile:
// sofia profile <profile> killgw <name>.
func KillGateway(profile, name string) Command {
	return Command{"sofia profile " + profile + " killgw " + name}
}

// Rescan makes a sofia profile fetch sofia.conf again and start the
// gateways it does not hold yet: sofia profile <profile> rescan.
func Rescan(profile string) Command { return Command{"sofia profile " + profile + " rescan"} }

// IsKillGateway and IsRescan tell the two gateway commands apart, for the
// caller that judges mod_sofia's different replies to each.
func IsKillGateway(c Command) bool { return strings.Contains(c.line, " killgw ") }

// IsRescan: see IsKillGateway.
func IsRescan(c Command) bool { return strings.HasSuffix(c.line, " rescan") }

// VMList lists a mailbox's messages: vm_list <box>@<domain>.
func VMList(id string) Command { return Command{"vm_list " + id} }

// VMInject files an audio file as a new message of a mailbox, from a
// caller: vm_inject <box>@<domain>@<profile> <file> <cid number>
// ['<cid name>']. The name is dropped when empty.
func VMInject(id, profile, file, cidNumber, cidName string) Command {
	line := "vm_inject " + id + "@" + profile + " " + file + " " + cidNumber
	if cidName != "" {
		line += " '" + cidName + "'"
	}
	return Command{line}
}

// VMRead marks a message heard: vm_read <box>@<domain> read <uuid>.
func VMRead(id, uuid string) Command { return Command{"vm_read " + id + " read " + uuid} }

// LocalStreamStop stops a music-on-hold stream.
func LocalStreamStop(name string) Command { return Command{"local_stream stop " + name} }

// LocalStreamReload (re)loads a stream from local_stream.conf by name.
func LocalStreamReload(name string) Command { return Command{"local_stream reload " + name} }

// Event is one "sendevent" message: an event fired on a node (for example
// MESSAGE_WAITING, which mod_sofia turns into a NOTIFY to the account's
// phones). Build it with SendEvent.
type Event struct {
	name  string
	lines string
}

// Name is the event's name.
func (e Event) Name() string { return e.name }

// Label is the message's first line ("sendevent <name>"), for errors.
func (e Event) Label() string { return "sendevent " + e.name }

// String is the whole message as sent: "sendevent <name>" and one
// "Header: value" line per header, every line ended by CRLF framing (the
// last without), because mod_event_socket ends the command at the first
// CR and eslgo ends every message with CRLF CRLF.
func (e Event) String() string { return "sendevent " + e.name + e.lines }

// SendEvent builds the sendevent message of event name with headers; a
// name or value with a line break, or a header name with a colon, is a
// *ValueError.
func SendEvent(name string, headers [][2]string) (Event, error) {
	if name == "" || strings.ContainsAny(name, " \r\n") {
		return Event{}, &ValueError{Name: "event", Err: fmt.Errorf("bad event name %q", name)}
	}
	var b strings.Builder
	for _, h := range headers {
		if h[0] == "" || strings.ContainsAny(h[0], "\r\n: ") || strings.ContainsAny(h[1], "\r\n") {
			return Event{}, &ValueError{Name: h[0], Err: fmt.Errorf("line break or bad header name")}
		}
		b.WriteString("\r\n" + h[0] + ": " + h[1])
	}
	return Event{name: name, lines: b.String()}, nil
}
