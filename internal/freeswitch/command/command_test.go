package command

import (
	"strings"
	"testing"
)

// The exact lines FreeSWITCH receives.
func TestWireStrings(t *testing.T) {
	must := func(s string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, c := range []struct{ got, want string }{
		{must(UUIDKill("6f0c3a2e-1b7d-4b7e-9f3a-0c1d2e3f4a5b")), "uuid_kill 6f0c3a2e-1b7d-4b7e-9f3a-0c1d2e3f4a5b"},
		{must(UUIDTransfer("u1", "1002", "acme")), "uuid_transfer u1 1002 XML acme"},
		{must(UUIDRecord("u1", "start", "/rec/acme/all.wav")), "uuid_record u1 start /rec/acme/all.wav"},
		{must(UUIDRecord("u1", "stop", "all")), "uuid_record u1 stop all"},
		{must(FlushUser("1001-acme", "sip.example.net")), "xml_flush_cache id 1001-acme sip.example.net"},
		{FlushDirectory, "xml_flush_cache"},
		{CoreUUID, "global_getvar core_uuid"},
		{ShowChannels, "show channels as json"},
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

func second(_ string, err error) error { return err }
