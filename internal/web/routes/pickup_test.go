package routes_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// TestDirectedPickupFromLiveCalls: **<ext> fetched by a node is rendered
// from the live channels the tracker keeps from the node's events: refused
// while nothing rings there or only another tenant's phone does, an
// intercept of the ringing leg's partner once the extension rings, and
// refused again once that leg is answered (the answer is never cached).
// Group pickup and the member's pickup leg come from the same pickup group.
func TestDirectedPickupFromLiveCalls(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		base := "/api/tenants/" + e.tenant
		e.Do(t, "POST", base+"/pickup_groups/", e.Key, map[string]any{"name": "sales", "members": []string{"1001", "1002"}}).Expect(t, 201)
		fetch := func(ext, number string) string {
			t.Helper()
			form := url.Values{
				"section": {"dialplan"}, "Caller-Context": {e.tenant}, "Caller-Destination-Number": {number},
				"Caller-Caller-ID-Number": {ext}, "variable_sb_tenant": {e.tenant}, "variable_sb_ext": {ext},
			}
			req, err := http.NewRequest("POST", e.URL+"/fs/xml", bytes.NewReader([]byte(form.Encode())))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			return string(e.Send(t, req).Expect(t, 200).Body)
		}
		refused := func(doc string) bool {
			return !strings.Contains(doc, `application="intercept"`) && strings.Contains(doc, `application="hangup"`)
		}
		if doc := fetch("1002", "**1001"); !refused(doc) {
			t.Fatalf("nothing rings: want a refusal\n%s", doc)
		}
		// Another tenant's phone 1001 rings: not ours to pick up.
		other := e.Tenant(t, "pko")
		e.Do(t, "POST", "/api/tenants/"+other+"/extensions/", e.Key, map[string]any{"name": "1001"}).Expect(t, 201)
		foreign, err := e.fs.CreateChannel(fakefs.ChannelSpec{Direction: "outbound", Name: "sofia/internal/1001-" + other,
			CIDNum: "1002", Dest: "1001", Context: other,
			Vars: []fakefs.Header{{Name: "sb_tenant", Value: other}, {Name: "sb_ext", Value: "1001"}}})
		if err != nil {
			t.Fatal(err)
		}
		e.waitChannel(t, foreign)
		if doc := fetch("1002", "**1001"); !refused(doc) || strings.Contains(doc, foreign) {
			t.Fatalf("another tenant's ringing phone: want a refusal\n%s", doc)
		}
		// Our 1001 rings.
		ringing, err := e.fs.CreateChannel(fakefs.ChannelSpec{Direction: "outbound", Name: "sofia/internal/1001-" + e.tenant,
			CIDNum: "1002", Dest: "1001", Context: e.tenant,
			Vars: []fakefs.Header{{Name: "sb_tenant", Value: e.tenant}, {Name: "sb_ext", Value: "1001"}}})
		if err != nil {
			t.Fatal(err)
		}
		e.waitChannel(t, ringing)
		if doc := fetch("1002", "**1001"); !strings.Contains(doc, `application="intercept" data="-bleg `+ringing+`"`) {
			t.Fatalf("1001 rings: want an intercept of its call\n%s", doc)
		}
		// 1003 is in no group: refused although the phone rings.
		e.Do(t, "POST", base+"/extensions/", e.Key, map[string]any{"name": "1003"}).Expect(t, 201)
		if doc := fetch("1003", "**1001"); !refused(doc) {
			t.Fatalf("picker in no group: want a refusal\n%s", doc)
		}
		// Answered: nothing to pick up any more.
		if err := e.fs.Answer(ringing); err != nil {
			t.Fatal(err)
		}
		wait.Until(t, 5*time.Second, "answered call no longer picked up", func() bool { return refused(fetch("1002", "**1001")) })

		if doc := fetch("1002", "*8"); !strings.Contains(doc, `application="pickup" data="`+e.tenant+`_sales"`) {
			t.Fatalf("group pickup\n%s", doc)
		}
		if doc := fetch("1002", "1001"); !strings.Contains(doc, ",pickup/"+e.tenant+"_sales\"") {
			t.Fatalf("a call to a member rings the group's pickup leg\n%s", doc)
		}
	})
}

// TestSIPURIEndpointNeedsTenantOptIn: a sip_uri special endpoint (created,
// or an endpoint changed to that kind) is refused with 422 and a clear code
// while the tenant does not allow SIP URI endpoints, and nothing is
// stored; once the tenant allows them the same write succeeds.
func TestSIPURIEndpointNeedsTenantOptIn(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "sipuri")
		base := "/api/tenants/" + tenant + "/special_endpoints/"
		bot := map[string]any{"name": "Bot", "number": "9001", "kind": "sip_uri", "sip_uri": "sip:bot@example.com"}
		r := s.Do(t, "POST", base, s.Key, bot).Expect(t, 422)
		if r.Code(t) != "sip_uri_not_allowed" || !strings.Contains(string(r.Body), "allow_sip_uri_endpoints") {
			t.Fatalf("refusal %s", r.Body)
		}
		var list []map[string]any
		s.Do(t, "GET", base, s.Key, nil).Expect(t, 200).JSON(t, &list)
		if len(list) != 0 {
			t.Fatalf("refused endpoint stored: %v", list)
		}
		echo := s.Do(t, "POST", base, s.Key, map[string]any{"name": "Echo", "number": "9002", "kind": "application", "application": "echo_test"}).Expect(t, 201).Map(t)
		if r := s.Do(t, "PUT", fmt.Sprintf("%s%v", base, echo["id"]), s.Key, map[string]any{"kind": "sip_uri", "sip_uri": "sip:bot@example.com"}).Expect(t, 422); r.Code(t) != "sip_uri_not_allowed" {
			t.Fatalf("update refusal %s", r.Body)
		}
		if got := s.Do(t, "GET", fmt.Sprintf("%s%v", base, echo["id"]), s.Key, nil).Expect(t, 200).Map(t); got["kind"] != "application" {
			t.Fatalf("refused update changed the endpoint: %v", got)
		}
		s.Do(t, "PUT", "/api/tenants/"+tenant, s.Key, map[string]any{"allow_sip_uri_endpoints": true}).Expect(t, 200)
		s.Do(t, "POST", base, s.Key, bot).Expect(t, 201)
	})
}
