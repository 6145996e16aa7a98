package fakefs

import (
	"strconv"
	"strings"
	"testing"
)

func TestURLEncode(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty is undef", "", "_undef_"},
		{"date local", "2025-01-15 10:00:00", "2025-01-15%2010%3A00%3A00"},
		{"gmt keeps commas", "Wed, 15 Jan 2025 10:00:00 GMT", "Wed,%2015%20Jan%202025%2010%3A00%3A00%20GMT"},
		{"ipv6", "::1", "%3A%3A1"},
		{"job arg from reference", "{origination_uuid=5c2a8f0e-8b1d-4c7e-9f3a-2b6d1e0a9c47}user/1000 &park()",
			"%7Borigination_uuid%3D5c2a8f0e-8b1d-4c7e-9f3a-2b6d1e0a9c47%7Duser/1000%20%26park()"},
		{"plus is encoded", "+442071234567", "%2B442071234567"},
		{"existing escape kept", "50%25 off", "50%25%20off"},
		{"lone percent encoded", "100%", "100%25"},
		{"utf8 bytes uppercase", "Zoë", "Zo%C3%AB"},
		{"control and newline", "a\tb\nc", "a%09b%0Ac"},
		{"safe punctuation", "/()-_.~!*'$,", "/()-_.~!*'$,"},
		{"unsafe set", "#&;<>?@[\\]^`{|}\"", "%23%26%3B%3C%3E%3F%40%5B%5C%5D%5E%60%7B%7C%7D%22"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := URLEncode(tt.in); got != tt.want {
				t.Errorf("URLEncode(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPlainEventFrame(t *testing.T) {
	got := string(plainEvent([]Header{{"Event-Name", "BACKGROUND_JOB"}, {"Job-Owner-UUID", ""}}, "+OK é\n"))
	inner := "Event-Name: BACKGROUND_JOB\nJob-Owner-UUID: _undef_\nContent-Length: 7\n\n+OK é\n"
	want := "Content-Length: 77\nContent-Type: text/event-plain\n\n" + inner
	if len(inner) != 77 {
		t.Fatalf("test bug: inner is %d bytes", len(inner))
	}
	if got != want {
		t.Errorf("frame:\n%q\nwant\n%q", got, want)
	}
	noBody := string(plainEvent([]Header{{"Event-Name", "CUSTOM"}}, ""))
	if !strings.HasSuffix(noBody, "\n\nEvent-Name: CUSTOM\n\n") || !strings.HasPrefix(noBody, "Content-Length: 20\n") {
		t.Errorf("frame without body: %q", noBody)
	}
}

func TestJSONEventFrame(t *testing.T) {
	got := string(jsonEvent([]Header{{"Event-Name", "X"}, {"A", "a b:c"}, {"A", "dup"}}, "ok\n"))
	inner := `{"Event-Name":"X","A":"a b:c","Content-Length":"3","_body":"ok\n"}`
	want := "Content-Length: " + strconv.Itoa(len(inner)) + "\nContent-Type: text/event-json\n\n" + inner
	if got != want {
		t.Errorf("json frame:\n%q\nwant\n%q", got, want)
	}
}

func TestParseDial(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		endpoint string
		vars     []Header
	}{
		// In app data (bridge) {} honours quotes: switch_separate_string
		// groups on them and strips them.
		{"globals and leg vars", "{a=1,b='x, y'}[origination_uuid=u1]sofia/gateway/gw1/4477",
			"sofia/gateway/gw1/4477", []Header{{"a", "1"}, {"b", "x, y"}, {"origination_uuid", "u1"}}},
		{"no vars", "user/1000@example.com", "user/1000@example.com", nil},
		{"first leg only", "{x=1}sofia/gateway/gw1/1,sofia/gateway/gw2/1", "sofia/gateway/gw1/1", []Header{{"x", "1"}}},
		{"first failover group", "user/1|user/2", "user/1", nil},
		{"delimiter override", "{^^;a=x,y;b=z}user/1", "user/1", []Header{{"a", "x,y"}, {"b", "z"}}},
		{"colon override", "{^^:a=1:b=2}user/1", "user/1", []Header{{"a", "1"}, {"b", "2"}}},
		{"escaped comma", `{a=x\,y,b=z}user/1`, "user/1", []Header{{"a", "x,y"}, {"b", "z"}}},
		{"value keeps later =", "{a=b=c}user/1", "user/1", []Header{{"a", "b=c"}}},
		{"empty value dropped", "{a=,b=1}user/1", "user/1", []Header{{"b", "1"}}},
		{"two blocks", "{a=1}{b=2}user/1", "user/1", []Header{{"a", "1"}, {"b", "2"}}},
		// The '|' split strips quotes before [] is read, so a quoted
		// comma in a leg block splits there.
		{"leg block quoted comma", "[a='x,y']user/1", "user/1", []Header{{"a", "x"}}},
		{"leg block override", "[^^;a=x,y]user/1,user/2", "user/1", []Header{{"a", "x,y"}}},
		{"hunt legs", "[leg_timeout=20,leg_delay_start=5]user/1@d,[leg_timeout=20]user/2@d", "user/1@d",
			[]Header{{"leg_timeout", "20"}, {"leg_delay_start", "5"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := parseDial(tt.in)
			if !ok {
				t.Fatalf("parse error")
			}
			if d.endpoint != tt.endpoint {
				t.Errorf("endpoint %q, want %q", d.endpoint, tt.endpoint)
			}
			if len(d.vars) != len(tt.vars) {
				t.Fatalf("vars %v, want %v", d.vars, tt.vars)
			}
			for i := range d.vars {
				if d.vars[i] != tt.vars[i] {
					t.Errorf("var %d = %v, want %v", i, d.vars[i], tt.vars[i])
				}
			}
		})
	}
	if _, ok := parseDial("{a=1user/1"); ok {
		t.Error("unclosed {} block accepted")
	}
}

// TestOriginateArgsSplitLikeFreeSWITCH: mod_commands splits the originate
// line at spaces with switch_separate_string, which groups on single
// quotes and strips them, so a quoted list reaches the {} parser bare and
// is cut at its first comma (checked on FreeSWITCH 1.10.12:
// toll_allow='internal,local,national' arrived as "internal").
func TestOriginateArgsSplitLikeFreeSWITCH(t *testing.T) {
	got := separateString("{a='x y',t='p,q'}user/1 &park() XML 'my ctx'", ' ', 10)
	want := []string{"{a=x y,t=p,q}user/1", "&park()", "XML", "my ctx"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("argv = %q, want %q", got, want)
	}
	d, _ := parseDial(got[0])
	if d.get("a") != "x y" || d.get("t") != "p" {
		t.Errorf("vars %v: want a=x y and t=p", d.vars)
	}
	got = separateString(`{^^;t=p,q;n='A B'}user/1 &park()`, ' ', 10)
	d, _ = parseDial(got[0])
	if d.get("t") != "p,q" || d.get("n") != "A B" {
		t.Errorf("override vars %v", d.vars)
	}
}
