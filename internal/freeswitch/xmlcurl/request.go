package xmlcurl

import (
	"bytes"
	"net/url"
)

// Request is one mod_xml_curl fetch. The fields routing needs are decoded
// once; everything else stays in the raw body for Get. When a name occurs
// twice the last value wins: FreeSWITCH appends its own key/user/domain after
// the dial-string variables of a user_call, so a dial string cannot spoof them.
type Request struct {
	Hostname, Section, TagName, KeyName, KeyValue string

	Action, User, Domain, Key, Profile, Purpose, Group string

	// IPv4 is FreeSWITCH-IPv4: the node's own address.
	IPv4 string

	huntContext, huntDest, huntCaller       string
	callerContext, callerDest, callerCaller string
	callerName                              string

	// Tenant and Ext are the channel variables sb_tenant and sb_ext that our
	// directory sets on every user, when the call has them.
	Tenant, Ext string
	// EmergencyCallerID is the caller's emergency_caller_id_number variable.
	EmergencyCallerID string
	// TollAllow is the caller's toll_allow variable.
	TollAllow string

	forwardChain string

	body []byte
	form url.Values
}

// ParseRequest decodes a mod_xml_curl POST body (freeswitch.md §1.2). It scans
// the body once and unescapes only the fields it keeps, because the dialplan
// body of a call is ~6 KB with ~200 fields and arrives for every call.
// The body is copied, so the caller may reuse its buffer.
func ParseRequest(body []byte) Request { return ParseRequestShared(bytes.Clone(body)) }

// ParseRequestShared is ParseRequest without the copy: body must not
// change while the Request is in use (a handler parsing the request body it
// is answering).
func ParseRequestShared(body []byte) Request {
	r := Request{body: body}
	rest := r.body
	for len(rest) > 0 {
		var pair []byte
		pair, rest = nextPair(rest)
		if !mayKeep(pair) {
			continue
		}
		eq := bytes.IndexByte(pair, '=')
		if eq < 0 {
			continue
		}
		if dst := r.field(pair[:eq]); dst != nil {
			*dst = unescape(pair[eq+1:])
		}
	}
	return r
}

// ParseForm builds a Request from already decoded form values (for callers
// whose HTTP framework parsed the body). The last value of each name is used.
func ParseForm(form url.Values) Request {
	r := Request{form: form}
	for name, vals := range form {
		if dst := r.field([]byte(name)); dst != nil && len(vals) > 0 {
			*dst = vals[len(vals)-1]
		}
	}
	return r
}

// fieldNames are the form names field keeps (TestFieldNamesReachEveryField
// checks the list against the struct).
var fieldNames = []string{
	"hostname", "section", "tag_name", "key_name", "key_value", "action", "user", "domain", "key",
	"profile", "purpose", "group", "FreeSWITCH-IPv4",
	"Hunt-Context", "Hunt-Destination-Number", "Hunt-Caller-ID-Number",
	"Caller-Context", "Caller-Destination-Number", "Caller-Caller-ID-Number", "Caller-Caller-ID-Name",
	"variable_sb_tenant", "variable_sb_ext", "variable_emergency_caller_id_number",
	"variable_toll_allow", "variable_sb_forward_chain",
}

// keepFilter rules out, from two bytes, most of the ~180 fields of a call's
// form that field would not keep (channel variables, most Caller- and Hunt-
// fields), before the name is even delimited: per first byte, nil when no
// kept name starts with it, else the bytes a kept name has at offset
// filterAt (every byte when one of them is shorter than that).
var keepFilter [256]*[256]bool

const filterAt = 10

var anyByte = func() *[256]bool {
	var all [256]bool
	for i := range all {
		all[i] = true
	}
	return &all
}()

func init() {
	for _, name := range fieldNames {
		f := keepFilter[name[0]]
		switch {
		case len(name) <= filterAt:
			keepFilter[name[0]] = anyByte
		case f == anyByte:
		case f == nil:
			f = new([256]bool)
			keepFilter[name[0]] = f
			fallthrough
		default:
			f[name[filterAt]] = true
		}
	}
}

// mayKeep reports whether pair's name can be one field keeps; false only
// when it certainly is not.
func mayKeep(pair []byte) bool {
	if len(pair) == 0 {
		return false
	}
	f := keepFilter[pair[0]]
	return f != nil && (len(pair) <= filterAt || f[pair[filterAt]])
}

// field maps a form name to the struct field that keeps it.
func (r *Request) field(name []byte) *string {
	switch string(name) { // no allocation: the compiler optimises this conversion
	case "hostname":
		return &r.Hostname
	case "section":
		return &r.Section
	case "tag_name":
		return &r.TagName
	case "key_name":
		return &r.KeyName
	case "key_value":
		return &r.KeyValue
	case "action":
		return &r.Action
	case "user":
		return &r.User
	case "domain":
		return &r.Domain
	case "key":
		return &r.Key
	case "profile":
		return &r.Profile
	case "purpose":
		return &r.Purpose
	case "group":
		return &r.Group
	case "FreeSWITCH-IPv4":
		return &r.IPv4
	case "Hunt-Context":
		return &r.huntContext
	case "Hunt-Destination-Number":
		return &r.huntDest
	case "Hunt-Caller-ID-Number":
		return &r.huntCaller
	case "Caller-Context":
		return &r.callerContext
	case "Caller-Destination-Number":
		return &r.callerDest
	case "Caller-Caller-ID-Number":
		return &r.callerCaller
	case "Caller-Caller-ID-Name":
		return &r.callerName
	case "variable_sb_tenant":
		return &r.Tenant
	case "variable_sb_ext":
		return &r.Ext
	case "variable_emergency_caller_id_number":
		return &r.EmergencyCallerID
	case "variable_toll_allow":
		return &r.TollAllow
	case "variable_sb_forward_chain":
		return &r.forwardChain
	}
	return nil
}

// Context is the dialplan context being hunted (Hunt-Context, else Caller-Context).
func (r *Request) Context() string { return firstNonEmpty(r.huntContext, r.callerContext) }

// DestinationNumber is the number being routed (Hunt-, else Caller-Destination-Number).
func (r *Request) DestinationNumber() string { return firstNonEmpty(r.huntDest, r.callerDest) }

// CallerName is the caller id name (Caller-Caller-ID-Name), as sent.
func (r *Request) CallerName() string { return r.callerName }

// CallerNumber is the caller id number (Hunt-, else Caller-Caller-ID-Number).
func (r *Request) CallerNumber() string { return firstNonEmpty(r.huntCaller, r.callerCaller) }

// Get returns the decoded value of any field ("" when absent; last one wins).
func (r *Request) Get(name string) string {
	if r.form != nil {
		v := r.form[name]
		if len(v) == 0 {
			return ""
		}
		return v[len(v)-1]
	}
	var val []byte
	found := false
	rest := r.body
	for len(rest) > 0 {
		var pair []byte
		pair, rest = nextPair(rest)
		if len(pair) > len(name) && pair[len(name)] == '=' && string(pair[:len(name)]) == name {
			val, found = pair[len(name)+1:], true
		}
	}
	if !found {
		return ""
	}
	return unescape(val)
}

// unescape decodes %XX sequences. A '+' stays a '+' (FreeSWITCH encodes
// spaces as %20 and never produces '+' for a space), and a malformed escape
// is kept literally.
func unescape(v []byte) string {
	if bytes.IndexByte(v, '%') < 0 {
		return string(v)
	}
	out := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		if v[i] == '%' && i+2 < len(v) && isHex(v[i+1]) && isHex(v[i+2]) {
			out = append(out, unhex(v[i+1])<<4|unhex(v[i+2]))
			i += 2
			continue
		}
		out = append(out, v[i])
	}
	return string(out)
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// nextPair splits the first name=value pair off a form body.
func nextPair(body []byte) (pair, rest []byte) {
	if i := bytes.IndexByte(body, '&'); i >= 0 {
		return body[:i], body[i+1:]
	}
	return body, nil
}

// ForwardChain is the call's sb_forward_chain variable: the extensions that
// forwarded it so far (set by the dialplan's forwards).
// It is decoded with the other routing fields: the cache key reads it on
// every dialplan fetch, and Get would scan the whole body again.
func (r *Request) ForwardChain() string { return r.forwardChain }

// ConferenceProfile is the profile a conference.conf fetch asks for
// (profile_name, else conference_name; "" at module load).
func (r *Request) ConferenceProfile() string {
	return firstNonEmpty(r.Get("profile_name"), r.Get("conference_name"))
}

// CallcenterQueue is the queue a callcenter.conf fetch names (CC-Queue);
// "" at module load.
func (r *Request) CallcenterQueue() string { return r.Get("CC-Queue") }
