package routes_test

import (
	"bytes"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/esl/fakefs"
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
		eventually(t, 5*time.Second, "answered call no longer picked up", func() bool { return refused(fetch("1002", "**1001")) })

		if doc := fetch("1002", "*8"); !strings.Contains(doc, `application="pickup" data="`+e.tenant+`_sales"`) {
			t.Fatalf("group pickup\n%s", doc)
		}
		if doc := fetch("1002", "1001"); !strings.Contains(doc, ",pickup/"+e.tenant+"_sales\"") {
			t.Fatalf("a call to a member rings the group's pickup leg\n%s", doc)
		}
	})
}
