package xmlcurl

import (
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
)

func TestParseRequestCaptures(t *testing.T) {
	tests := []struct {
		name    string
		capture string
		check   func(t *testing.T, r Request)
	}{
		{"sip_auth REGISTER", "009", func(t *testing.T, r Request) {
			want := map[string]string{"Hostname": r.Hostname, "Section": r.Section, "TagName": r.TagName, "KeyName": r.KeyName, "KeyValue": r.KeyValue, "Action": r.Action, "User": r.User, "Domain": r.Domain, "Key": r.Key, "IPv4": r.IPv4}
			exp := map[string]string{"Hostname": "vm", "Section": "directory", "TagName": "domain", "KeyName": "name", "KeyValue": "127.0.0.1", "Action": "sip_auth", "User": "1000", "Domain": "127.0.0.1", "Key": "id", "IPv4": "192.0.2.2"}
			for k, v := range exp {
				if want[k] != v {
					t.Errorf("%s = %q, want %q", k, want[k], v)
				}
			}
			if got := r.Get("sip_auth_uri"); got != "sip:127.0.0.1:5060" {
				t.Errorf("sip_auth_uri = %q", got)
			}
			if got := r.Get("sip_auth_method"); got != "REGISTER" {
				t.Errorf("sip_auth_method = %q", got)
			}
		}},
		{"sip_auth INVITE", "010", func(t *testing.T, r Request) {
			if r.Action != "sip_auth" || r.Get("sip_request_user") != "2000" || r.Get("sip_auth_method") != "INVITE" {
				t.Errorf("got action %q request_user %q", r.Action, r.Get("sip_request_user"))
			}
		}},
		{"dialplan SIP call", "011", func(t *testing.T, r Request) {
			if r.Section != "dialplan" || r.Context() != "default" || r.DestinationNumber() != "2000" || r.CallerNumber() != "1000" {
				t.Errorf("section %q context %q dest %q caller %q", r.Section, r.Context(), r.DestinationNumber(), r.CallerNumber())
			}
			if r.TagName != "" || r.KeyName != "" || r.KeyValue != "" {
				t.Errorf("empty basics not empty: %q %q %q", r.TagName, r.KeyName, r.KeyValue)
			}
			if got := r.Get("variable_sip_full_from"); got != "<sip:1000@127.0.0.1>;tag=26989SIPpTag011" {
				t.Errorf("variable_sip_full_from = %q", got)
			}
			if got := r.Get("variable_switch_r_sdp"); !strings.HasPrefix(got, "v=0\r\no=sipp ") {
				t.Errorf("sdp = %q", got)
			}
		}},
		{"dialplan loopback", "012", func(t *testing.T, r Request) {
			if r.DestinationNumber() != "3000" || r.CallerNumber() != "9999" || r.Get("Caller-Callee-ID-Name") != "Outbound Call" {
				t.Errorf("dest %q caller %q", r.DestinationNumber(), r.CallerNumber())
			}
		}},
		{"no action", "013", func(t *testing.T, r Request) {
			if r.Action != "" || r.User != "1000" || r.Key != "id" {
				t.Errorf("action %q user %q", r.Action, r.User)
			}
		}},
		{"user_call", "014", func(t *testing.T, r Request) {
			if r.Action != "user_call" || r.Get("as_channel") != "true" || r.Get("originate_timeout") != "3" {
				t.Errorf("action %q", r.Action)
			}
		}},
		{"sofia global", "003", func(t *testing.T, r Request) {
			if r.KeyValue != "sofia.conf" || r.Profile != "" || r.Get("Event-Date-GMT") != "Sun, 22 Nov 2026 17:54:09 GMT" {
				t.Errorf("key_value %q profile %q gmt %q", r.KeyValue, r.Profile, r.Get("Event-Date-GMT"))
			}
		}},
		{"sofia profile", "004", func(t *testing.T, r Request) {
			if r.Profile != "internal" || r.Get("FreeSWITCH-IPv6") != "fd00::2" {
				t.Errorf("profile %q ipv6 %q", r.Profile, r.Get("FreeSWITCH-IPv6"))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, ParseRequest(capture(t, tt.capture)))
		})
	}
}

// TestParseRequestMatchesParseQuery decodes every field of every capture
// and compares with net/url (no capture contains a '+').
func TestParseRequestMatchesParseQuery(t *testing.T) {
	for _, c := range []string{"003", "004", "009", "010", "011", "012", "013", "014"} {
		body := capture(t, c)
		if strings.Contains(string(body), "+") {
			t.Fatalf("capture %s contains '+': comparison with ParseQuery invalid", c)
		}
		form, err := url.ParseQuery(string(body))
		if err != nil {
			t.Fatalf("ParseQuery %s: %v", c, err)
		}
		r := ParseRequest(body)
		f := ParseForm(form)
		for name, vals := range form {
			want := vals[len(vals)-1]
			if got := r.Get(name); got != want {
				t.Errorf("%s: Get(%q) = %q, want %q", c, name, got, want)
			}
			if got := f.Get(name); got != want {
				t.Errorf("%s: ParseForm Get(%q) = %q, want %q", c, name, got, want)
			}
		}
		if f.User != r.User || f.Action != r.Action || f.DestinationNumber() != r.DestinationNumber() {
			t.Errorf("%s: ParseForm and ParseRequest disagree", c)
		}
	}
}

func TestParseRequestEdgeCases(t *testing.T) {
	tests := []struct {
		name, body, field, want string
	}{
		{"plus stays plus", "user=a+b", "user", "a+b"},
		{"lowercase hex", "user=%3a%3A", "user", "::"},
		{"bad escape kept", "user=100%ZZ%4", "user", "100%ZZ%4"},
		{"last value wins", "user=evil&key=id&user=1001-acme", "user", "1001-acme"},
		{"missing value", "user", "user", ""},
		{"empty", "", "user", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ParseRequest([]byte(tt.body))
			if r.User != tt.want || r.Get(tt.field) != tt.want {
				t.Fatalf("User = %q, Get = %q, want %q", r.User, r.Get(tt.field), tt.want)
			}
		})
	}
}

// Every name in fieldNames is kept, and together they reach every decoded
// field of Request: a field added to the switch but not to the list (which
// the scan's quick filter is built from) fails here.
func TestFieldNamesReachEveryField(t *testing.T) {
	var body []string
	for i, name := range fieldNames {
		var r Request
		if r.field([]byte(name)) == nil {
			t.Errorf("field(%q) keeps nothing", name)
		}
		if !mayKeep([]byte(name + "=v")) {
			t.Errorf("mayKeep rules out %q", name)
		}
		body = append(body, fmt.Sprintf("%s=v%d", name, i))
	}
	r := ParseRequest([]byte(strings.Join(body, "&")))
	v := reflect.ValueOf(r)
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Kind() == reflect.String && f.String() == "" {
			t.Errorf("no name in fieldNames sets Request.%s", v.Type().Field(i).Name)
		}
	}
}

// The quick filter changes nothing: the one-pass parse of each capture, and
// of a form of near misses (the kept names with one byte changed), decodes
// what ParseForm decodes from url.ParseQuery, which consults no filter.
func TestParseRequestFilterKeepsEverything(t *testing.T) {
	bodies := map[string][]byte{}
	for _, c := range []string{"003", "004", "009", "010", "011", "012", "013", "014"} {
		bodies[c] = capture(t, c)
	}
	var near []string
	for i, name := range fieldNames {
		for j := range name {
			b := []byte(name)
			b[j] ^= 0x20
			near = append(near, fmt.Sprintf("%s=n%d", b, i), fmt.Sprintf("%s=k%d", name, i))
		}
	}
	bodies["near misses"] = []byte(strings.Join(near, "&"))
	for c, body := range bodies {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			t.Fatalf("ParseQuery %s: %v", c, err)
		}
		got, want := ParseRequest(body), ParseForm(form)
		gv, wv := reflect.ValueOf(got), reflect.ValueOf(want)
		for i := 0; i < gv.NumField(); i++ {
			if gv.Field(i).Kind() == reflect.String && gv.Field(i).String() != wv.Field(i).String() {
				t.Errorf("%s: Request.%s = %q, ParseForm has %q", c, gv.Type().Field(i).Name, gv.Field(i).String(), wv.Field(i).String())
			}
		}
	}
}

func BenchmarkParseRequestDialplan(b *testing.B) {
	body := capture(b, "011")
	b.ReportAllocs()
	for b.Loop() {
		r := ParseRequest(body)
		if r.DestinationNumber() != "2000" {
			b.Fatal("bad parse")
		}
	}
}
