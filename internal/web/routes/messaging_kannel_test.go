package routes_test

import (
	"fmt"
	"maps"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/comms/messaging/providertest"
)

// TestKannelEndToEnd sends an SMS through a real Kannel (bearerbox +
// smsbox) to Kannel's SMSC simulator, applies the delivery reports Kannel
// posts back, and receives an MO message from the simulator. Without the
// kannel and kannel-extras packages it skips, unless CI is set.
//
// It runs alone (before the parallel tests): beside them on a two-core CI
// host, Kannel's start and the send racing the MO callback on SQLite timed
// out (a 500 on the send).
func TestKannelEndToEnd(t *testing.T) {
	if err := providertest.KannelAvailable(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("kannel is required in CI: %v", err)
		}
		t.Skipf("kannel not installed: %v", err)
	}
	env := apptest.AnyEnv(t)
	port := providertest.FreePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	cfg := map[string]string{"SWITCHBOARD_LISTEN": fmt.Sprintf("127.0.0.1:%d", port), "SWITCHBOARD_BASE_URL": base}
	maps.Copy(cfg, kannelEnv)
	s := apptest.Start(t, env, cfg)
	tenant := s.Tenant(t, "kannel")
	sendsmsPort := providertest.FreePort(t)
	const secret = "e2e-callback-secret-0123"
	ch := s.Do(t, "POST", "/api/tenants/"+tenant+"/messaging_channels/", s.Key, map[string]any{
		"name": "kannel", "type": "sms", "provider": "kannel", "sender": "+27115550000", "rate_per_second": 10,
		"credentials": map[string]any{"sendsms_url": fmt.Sprintf("http://127.0.0.1:%d/cgi-bin/sendsms", sendsmsPort), "username": "switchboard", "password": "sendsms-pw", "callback_secret": secret},
	}).Expect(t, 201).Map(t)["id"]

	// smsbox forwards every MO message to the channel's callback URL.
	mo := fmt.Sprintf("%s/integration/messaging/kannel/%v?secret=%s&from=%%p&to=%%P&text=%%a&id=%%I", base, ch, url.QueryEscape(secret))
	k := providertest.StartKannel(t, providertest.KannelConfig{SendsmsPort: sendsmsPort, Username: "switchboard", Password: "sendsms-pw", MOURL: mo},
		2*time.Second, "+27825550009 +27115550000 text Reply from a handset")

	id := s.Do(t, "POST", "/api/messaging/send", s.Key, map[string]any{"channel_id": ch, "to": "+27825550001", "body": "Hello through Kannel"}).Expect(t, 202).Map(t)["id"]
	deadline := time.Now().Add(20 * time.Second)
	var msg map[string]any
	for time.Now().Before(deadline) {
		msg = s.Do(t, "GET", fmt.Sprintf("/api/messaging/messages/%v", id), s.Key, nil).Expect(t, 200).Map(t)
		if msg["status"] == "delivered" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if msg["status"] != "delivered" || msg["delivered_at"] == nil || msg["sent_at"] == nil {
		t.Fatalf("message through Kannel: %v\n%s", msg, k.Logs())
	}
	if out := k.FakesmscOutput(); !strings.Contains(out, "+27115550000 +27825550001 text Hello through Kannel") {
		t.Errorf("the SMSC simulator did not get the message:\n%s", out)
	}

	// UCS-2 text goes as coding=2 and is delivered too.
	uid := s.Do(t, "POST", "/api/messaging/send", s.Key, map[string]any{"channel_id": ch, "to": "+27825550002", "body": "Olá, ваш заказ готов"}).Expect(t, 202).Map(t)
	if uid["encoding"] != "ucs2" {
		t.Errorf("encoding %v", uid["encoding"])
	}
	// Wrong sendsms credentials: Kannel answers 403, the message fails at once.
	bad := s.Do(t, "POST", "/api/tenants/"+tenant+"/messaging_channels/", s.Key, map[string]any{
		"name": "kannel-bad", "type": "sms", "provider": "kannel", "sender": "+27115550000",
		"credentials": map[string]any{"sendsms_url": fmt.Sprintf("http://127.0.0.1:%d/cgi-bin/sendsms", sendsmsPort), "username": "switchboard", "password": "wrong", "callback_secret": secret},
	}).Expect(t, 201).Map(t)["id"]
	bid := s.Do(t, "POST", "/api/messaging/send", s.Key, map[string]any{"channel_id": bad, "to": "+27825550001", "body": "never"}).Expect(t, 202).Map(t)["id"]
	for _, want := range []struct {
		id     any
		status string
	}{{uid["id"], "delivered"}, {bid, "failed"}} {
		var m map[string]any
		for time.Now().Before(deadline) {
			m = s.Do(t, "GET", fmt.Sprintf("/api/messaging/messages/%v", want.id), s.Key, nil).Expect(t, 200).Map(t)
			if m["status"] == want.status {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if m["status"] != want.status {
			t.Fatalf("message %v: %v, want %s\n%s", want.id, m, want.status, k.Logs())
		}
		if want.status == "failed" && (m["error_code"] != "provider_auth_failed" || m["attempts"] != float64(1)) {
			t.Errorf("refused by Kannel: %v", m)
		}
	}
	if out := k.FakesmscOutput(); !strings.Contains(out, "+27115550000 +27825550002 ") {
		t.Errorf("the SMSC simulator did not get the UCS-2 message:\n%s", out)
	}

	var inbound []map[string]any
	for time.Now().Before(deadline) {
		s.Do(t, "GET", "/api/messaging/messages?direction=inbound&tenant="+tenant, s.Key, nil).Expect(t, 200).JSON(t, &inbound)
		if len(inbound) > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(inbound) != 1 || inbound[0]["from"] != "+27825550009" || inbound[0]["to"] != "+27115550000" || inbound[0]["body"] != "Reply from a handset" {
		t.Fatalf("inbound through Kannel: %v\n%s", inbound, k.Logs())
	}
}
