package command

import (
	"strings"
	"testing"
)

// The exact lines FreeSWITCH receives.
func TestWireStrings(t *testing.T) {
	must := func(c Command, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return c.String()
	}
	for _, c := range []struct{ got, want string }{
		{must(UUIDKill("6f0c3a2e-1b7d-4b7e-9f3a-0c1d2e3f4a5b")), "uuid_kill 6f0c3a2e-1b7d-4b7e-9f3a-0c1d2e3f4a5b"},
		{must(UUIDTransfer("u1", "1002", "acme")), "uuid_transfer u1 1002 XML acme"},
		{must(UUIDRecord("u1", "start", "/rec/acme/all.wav")), "uuid_record u1 start /rec/acme/all.wav"},
		{must(UUIDRecord("u1", "stop", "all")), "uuid_record u1 stop all"},
		{must(FlushUser("1001-acme", "sip.example.net")), "xml_flush_cache id 1001-acme sip.example.net"},
		{FlushDirectory().String(), "xml_flush_cache"},
		{CoreUUID().String(), "global_getvar core_uuid"},
		{ShowChannels().String(), "show channels as json"},
		{CallcenterList("tier").String(), "callcenter_config tier list"},
		{QueueLoad("650@acme").String(), "callcenter_config queue load 650@acme"},
		{QueueReload("650@acme").String(), "callcenter_config queue reload 650@acme"},
		{QueueUnload("650@acme").String(), "callcenter_config queue unload 650@acme"},
		{AgentAdd("41@acme").String(), "callcenter_config agent add 41@acme callback"},
		{AgentDel("41@acme").String(), "callcenter_config agent del 41@acme"},
		{AgentSet("status", "41@acme", "On Break").String(), "callcenter_config agent set status 41@acme 'On Break'"},
		{AgentSet("max_no_answer", "41@acme", "3").String(), "callcenter_config agent set max_no_answer 41@acme 3"},
		{TierAdd("650@acme", "41@acme", 2, 3).String(), "callcenter_config tier add 650@acme 41@acme 2 3"},
		{TierSetLevel("650@acme", "41@acme", 2).String(), "callcenter_config tier set level 650@acme 41@acme 2"},
		{TierSetPosition("650@acme", "41@acme", 3).String(), "callcenter_config tier set position 650@acme 41@acme 3"},
		{TierDel("650@acme", "41@acme").String(), "callcenter_config tier del 650@acme 41@acme"},
		{GatewayStatus().String(), "sofia xmlstatus gateway"},
		{must(GatewayStatusOf("carrier_1")), "sofia xmlstatus gateway carrier_1"},
		{KillGateway("external", "carrier").String(), "sofia profile external killgw carrier"},
		{Rescan("external").String(), "sofia profile external rescan"},
		{VMList("1001-acme@sip.test").String(), "vm_list 1001-acme@sip.test"},
		{VMInject("1001-acme@sip.test", "default", "/media/vm/a.wav", "+2782", "Ann Lee").String(), "vm_inject 1001-acme@sip.test@default /media/vm/a.wav +2782 'Ann Lee'"},
		{VMInject("1001-acme@sip.test", "default", "/media/vm/a.wav", "anonymous", "").String(), "vm_inject 1001-acme@sip.test@default /media/vm/a.wav anonymous"},
		{VMRead("1001-acme@sip.test", "u1").String(), "vm_read 1001-acme@sip.test read u1"},
		{LocalStreamStop("acme_jazz").String(), "local_stream stop acme_jazz"},
		{LocalStreamReload("acme_jazz").String(), "local_stream reload acme_jazz"},
		{mustEvent(t, "MESSAGE_WAITING", [][2]string{{"MWI-Messages-Waiting", "yes"}, {"MWI-Message-Account", "1001-acme@sip.test"}}).String(),
			"sendevent MESSAGE_WAITING\r\nMWI-Messages-Waiting: yes\r\nMWI-Message-Account: 1001-acme@sip.test"},
		{
			must(Callback("c1", [][2]string{
				{"sb_tenant", "acme"}, {"toll_allow", "internal,local"},
				{"effective_caller_id_name", "Eve Smith"}, {"effective_caller_id_number", "1001"}, {"sb_call", "c1"},
			}, "+27825550001", "1002")),
			"originate {^^;origination_uuid=c1;sb_tenant=acme;toll_allow=internal,local;effective_caller_id_name='Eve Smith';" +
				"effective_caller_id_number=1001;sb_call=c1;sb_callback=true;origination_caller_id_name='Eve Smith';" +
				"origination_caller_id_number=1001;ignore_early_media=true;originate_timeout=30;hangup_after_bridge=true}" +
				"loopback/+27825550001/acme 1002 XML acme",
		},
		// A derived name keeps what a command can carry.
		{
			must(Callback("c2", [][2]string{{"sb_tenant", "acme"}, {"effective_caller_id_name", "Seán O'Brien"}}, "+2782", "1002")),
			"originate {^^;origination_uuid=c2;sb_tenant=acme;effective_caller_id_name='Seán OBrien';sb_callback=true;" +
				"origination_caller_id_name='Seán OBrien';ignore_early_media=true;originate_timeout=30;hangup_after_bridge=true}" +
				"loopback/+2782/acme 1002 XML acme",
		},
	} {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
	}
}

// Values no command can carry are refused, naming what carried them.
func TestRefusedValuesNamed(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
	}{
		{"uuid", second(UUIDKill("u1 &hupall()"))},
		{"to", second(UUIDTransfer("u1", "1002 XML default", "acme"))},
		{"context", second(UUIDTransfer("u1", "1002", ""))},
		{"action", second(UUIDRecord("u1", "pause", "/rec/a.wav"))},
		{"filename", second(UUIDRecord("u1", "start", "all"))},
		{"filename", second(UUIDRecord("u1", "start", "/rec/a b.wav"))},
		{"toll_allow", second(Callback("c1", [][2]string{{"sb_tenant", "acme"}, {"toll_allow", "a;b"}}, "+2782", "1002"))},
		{"to", second(Callback("c1", [][2]string{{"sb_tenant", "acme"}}, "+2782", "1002 XML default"))},
		{"domain", second(FlushUser("1001-acme", "a b"))},
		{"gateway", second(GatewayStatusOf("carrier profile external"))},
	} {
		ve, ok := IsValueError(c.err)
		if !ok || ve.Name != c.name {
			t.Errorf("got %v, want a ValueError naming %s", c.err, c.name)
		}
		if ok && !strings.Contains(ve.Error(), c.name) {
			t.Errorf("message %q does not name %s", ve.Error(), c.name)
		}
	}
}

func second(_ Command, err error) error { return err }

func mustEvent(t *testing.T, name string, headers [][2]string) Event {
	t.Helper()
	ev, err := SendEvent(name, headers)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// An event with a line break in a value, a colon in a header name or a
// bad name is refused: it would add lines to the message.
func TestSendEventRefusesLineBreaks(t *testing.T) {
	for _, c := range []struct {
		name    string
		headers [][2]string
	}{
		{"MESSAGE_WAITING", [][2]string{{"MWI-Messages-Waiting", "yes\r\nX: y"}}},
		{"MESSAGE_WAITING", [][2]string{{"MWI:Account", "x"}}},
		{"MESSAGE WAITING", nil},
		{"", nil},
	} {
		if _, err := SendEvent(c.name, c.headers); err == nil {
			t.Errorf("%q %q accepted", c.name, c.headers)
		}
	}
}
