package fakefs

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/platform/wait"
)

// outboundXML is a tenant's outbound route as Switchboard renders it: the
// number matches, then ${toll_allow} must contain national, else
// hangup(CALL_REJECTED).
const outboundXML = `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<document type="freeswitch/xml"><section name="dialplan"><context name="acme">
<extension name="to-carrier">
<condition field="destination_number" expression="^\+15550001001&#36;"/>
<condition field="&#36;{toll_allow}" expression="(^|,)national(,|&#36;)">
<action application="set" data="effective_caller_id_number=+15550000000"/>
<action application="bridge" data="sofia/gateway/carrier/+15550001001"/>
<anti-action application="hangup" data="CALL_REJECTED"/>
</condition></extension></context></section></document>`

func dialplanServer(t *testing.T, forms *[]map[string]string) string {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f := map[string]string{}
		for k, v := range r.PostForm {
			f[k] = v[0]
		}
		mu.Lock()
		*forms = append(*forms, f)
		mu.Unlock()
		if f["Hunt-Destination-Number"] == "+15550001001" {
			_, _ = w.Write([]byte(outboundXML))
			return
		}
		_, _ = w.Write([]byte(`<document type="freeswitch/xml"><section name="result"><result status="not found"/></section></document>`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestLoopbackOriginateRoutedWithTheChannelsVariables(t *testing.T) {
	var forms []map[string]string
	s := startFake(t, Options{XMLCurlURL: dialplanServer(t, &forms)})
	rc := dialAuthed(t, s.Addr())

	// No toll_allow among the originate's variables: refused as the real
	// dialplan refuses it.
	if got := rc.api("originate {sb_tenant=acme}loopback/+15550001001/acme 1002 XML acme"); got != "-ERR CALL_REJECTED\n" {
		t.Fatalf("without toll_allow: %q", got)
	}
	if n := len(s.Channels()); n != 0 {
		t.Fatalf("%d channels left after the refusal", n)
	}
	if f := forms[0]; f["Hunt-Context"] != "acme" || f["variable_sb_tenant"] != "acme" || f["Channel-Name"] != "loopback/+15550001001-b" {
		t.Errorf("fetch form %v", f)
	}

	// Single quotes do not group a list: the originate API's space split
	// strips them, so toll_allow arrives as "internal" (as FreeSWITCH
	// 1.10.12 does) and the route refuses the call.
	if got := rc.api("originate {toll_allow='internal,local,national'}loopback/+15550001001/acme 1002 XML acme"); got != "-ERR CALL_REJECTED\n" {
		t.Fatalf("quoted toll_allow: %q", got)
	}
	if f := forms[len(forms)-1]; f["variable_toll_allow"] != "internal" {
		t.Errorf("quoted toll_allow reached the dialplan as %q", f["variable_toll_allow"])
	}

	// With the list intact (the ^^; delimiter override) the far leg is
	// dialled with the route's caller id and the originate answers; the
	// destination then has no route.
	got := rc.api("originate {^^;origination_uuid=0b6e4c2e-1f52-4a8e-9a57-4a3c6f1f0c11;toll_allow=internal,local,national}loopback/+15550001001/acme 1002 XML acme")
	if got != "+OK 0b6e4c2e-1f52-4a8e-9a57-4a3c6f1f0c11\n" {
		t.Fatalf("with toll_allow: %q", got)
	}
	var names []string
	for _, c := range s.Channels() {
		names = append(names, c.Name)
		if strings.HasPrefix(c.Name, "sofia/external/") && c.CIDNum != "+15550000000" {
			t.Errorf("carrier leg caller id %q", c.CIDNum)
		}
	}
	if strings.Join(names, " ") != "loopback/+15550001001/acme-a loopback/+15550001001-b sofia/external/+15550001001" &&
		len(names) != 0 { // the -a leg may already have failed its destination
		t.Errorf("legs %q", names)
	}
	wait.Until(t, 5*time.Second, "legs hung up after NO_ROUTE_DESTINATION for 1002", func() bool { return len(s.Channels()) == 0 })
}
