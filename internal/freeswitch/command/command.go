// Package command builds the text of the FreeSWITCH API commands
// Switchboard sends over the event socket, and quotes the values inside
// them. Everything here is pure (no I/O, no clock): a builder takes values
// and returns the exact line the node receives, or an error naming the
// value no command can carry, and the tests hold each builder to its wire
// string. Callers send the line through the node pool (internal/freeswitch/esl).
package command

import (
	"errors"
	"fmt"
)

// Command is one API command line for a node. Only this package's
// builders make one, and the node pool (esl.Pool.API, BgAPI) sends
// nothing else: no FreeSWITCH command text is written anywhere else.
type Command struct{ line string }

// String is the line as the node receives it after "api " or "bgapi ".
func (c Command) String() string { return c.line }

// IsZero reports whether c was built by no builder.
func (c Command) IsZero() bool { return c.line == "" }

// ValueError names the variable or argument whose value no FreeSWITCH
// command can carry (see QuoteListVar and SafeArg).
type ValueError struct {
	Name string // the channel variable or argument
	Err  error
}

func (e *ValueError) Error() string { return fmt.Sprintf("%s: %v", e.Name, e.Err) }
func (e *ValueError) Unwrap() error { return e.Err }

// IsValueError reports whether err is a ValueError, and returns it.
func IsValueError(err error) (*ValueError, bool) {
	var ve *ValueError
	return ve, errors.As(err, &ve)
}

// displayVars are the originate variables that are only shown (caller
// names): what a command cannot carry is dropped from them (DisplayText)
// rather than failing the call, since a name derived from first and last
// names may well be "O'Brien". Names written through the API are refused
// when written, so for them this changes nothing.
var displayVars = map[string]bool{"effective_caller_id_name": true, "origination_caller_id_name": true, "outbound_caller_id_name": true}

// Callback builds the originate of a callback call (and of a click-to-call
// widget's call): the first leg is a loopback into the tenant's context,
// so the tenant's outbound routes dial the mobile; only the originate's {}
// variables reach that routed (-b) leg, so userVars carry the calling
// user's own directory variables (toll_allow, caller ids, sb_tenant, ...)
// and the routes treat the call as one the user placed. The block uses the
// ^^; separator (VarBlock) so toll_allow's commas survive; every value goes
// through QuoteListVar or SafeArg even though the inputs were validated.
//
//	originate {^^;origination_uuid=<id>;...}loopback/<mobile>/<tenant> <to> XML <tenant>
func Callback(id string, userVars [][2]string, mobile, to string) (Command, error) {
	var tenant, cidName, cidNum string
	for _, kv := range userVars {
		switch kv[0] {
		case "sb_tenant":
			tenant = kv[1]
		case "effective_caller_id_name":
			cidName = kv[1]
		case "effective_caller_id_number":
			cidNum = kv[1]
		}
	}
	vars := append([][2]string{{"origination_uuid", id}}, userVars...)
	vars = append(vars,
		[2]string{"sb_callback", "true"},
		[2]string{"origination_caller_id_name", cidName},
		[2]string{"origination_caller_id_number", cidNum},
		[2]string{"ignore_early_media", "true"},
		[2]string{"originate_timeout", "30"},
		[2]string{"hangup_after_bridge", "true"},
	)
	parts := make([]string, 0, len(vars))
	for _, kv := range vars {
		if displayVars[kv[0]] {
			kv[1] = DisplayText(kv[1])
		}
		if kv[1] == "" {
			continue
		}
		v, err := QuoteListVar(kv[1])
		if err != nil {
			return Command{}, &ValueError{Name: kv[0], Err: err}
		}
		parts = append(parts, kv[0]+"="+v)
	}
	for _, a := range [][2]string{{"to", mobile}, {"sb_tenant", tenant}, {"to", to}} {
		if _, err := SafeArg(a[1]); err != nil {
			return Command{}, &ValueError{Name: a[0], Err: err}
		}
	}
	return Command{fmt.Sprintf("originate %sloopback/%s/%s %s XML %s", VarBlock(parts), mobile, tenant, to, tenant)}, nil
}

// UUIDKill hangs up a channel: uuid_kill <uuid>.
func UUIDKill(uuid string) (Command, error) {
	if _, err := SafeArg(uuid); err != nil {
		return Command{}, &ValueError{Name: "uuid", Err: err}
	}
	return Command{"uuid_kill " + uuid}, nil
}

// UUIDTransfer blind-transfers a channel to dest in the XML dialplan's
// context: uuid_transfer <uuid> <dest> XML <context>.
func UUIDTransfer(uuid, dest, context string) (Command, error) {
	for _, a := range [][2]string{{"uuid", uuid}, {"to", dest}, {"context", context}} {
		if _, err := SafeArg(a[1]); err != nil {
			return Command{}, &ValueError{Name: a[0], Err: err}
		}
	}
	return Command{fmt.Sprintf("uuid_transfer %s %s XML %s", uuid, dest, context)}, nil
}

// UUIDRecord starts or stops recording a channel into path (an absolute
// file on the node; "all" when stopping every recording of the channel):
// uuid_record <uuid> start|stop <path>.
func UUIDRecord(uuid, action, path string) (Command, error) {
	if action != "start" && action != "stop" {
		return Command{}, &ValueError{Name: "action", Err: fmt.Errorf("must be start or stop, not %q", action)}
	}
	if path == "all" && action != "stop" {
		return Command{}, &ValueError{Name: "filename", Err: errors.New(`"all" names every recording and only stops`)}
	}
	for _, a := range [][2]string{{"uuid", uuid}, {"filename", path}} {
		if _, err := SafeArg(a[1]); err != nil {
			return Command{}, &ValueError{Name: a[0], Err: err}
		}
	}
	return Command{fmt.Sprintf("uuid_record %s %s %s", uuid, action, path)}, nil
}

// CoreUUID asks a node for the UUID of its running FreeSWITCH process
// (a new one after every restart).
func CoreUUID() Command { return Command{"global_getvar core_uuid"} }

// ShowChannels lists a node's channels as JSON (the resync after a
// reconnect).
func ShowChannels() Command { return Command{"show channels as json"} }

// FlushDirectory empties a node's whole XML cache (mod_xml_curl answers
// FreeSWITCH keeps per user).
func FlushDirectory() Command { return Command{"xml_flush_cache"} }

// FlushUser drops one user's cached directory entry:
// xml_flush_cache id <user> <domain>.
func FlushUser(user, domain string) (Command, error) {
	for _, a := range [][2]string{{"user", user}, {"domain", domain}} {
		if _, err := SafeArg(a[1]); err != nil {
			return Command{}, &ValueError{Name: a[0], Err: err}
		}
	}
	return Command{"xml_flush_cache id " + user + " " + domain}, nil
}
