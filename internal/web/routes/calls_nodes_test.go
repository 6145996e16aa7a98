package routes_test

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/platform/wait"
)

// TestNodesFollowTheServersResource: a server added through the API is
// connected without a restart and listed by GET /api/telephony/nodes with
// its lease holder, Core-UUID and live channels; deleting it drops it.
//
// It runs alone: the servers resource is platform-wide, so every server
// live on the shared database would connect to fs2 too and could hold its
// event lease (events_here) or keep it connected after the delete.
func TestNodesFollowTheServersResource(t *testing.T) {
	eachCallEnvAlone(t, func(t *testing.T, e *callEnv) {
		fs2 := startFake(t)
		_, port, _ := net.SplitHostPort(fs2.Addr())
		p, _ := strconv.Atoi(port)
		srv := e.Do(t, "POST", "/api/servers/", e.Key, map[string]any{"name": "fs2", "hostname": "fs2.example", "esl_host": "127.0.0.1", "esl_port": p, "enabled": true}).Expect(t, 201).Map(t)
		var fs2View map[string]any
		wait.Until(t, 10*time.Second, "fs2 connected and listed", func() bool {
			var list []map[string]any
			e.Do(t, "GET", "/api/telephony/nodes", e.Key, nil).Expect(t, 200).JSON(t, &list)
			for _, n := range list {
				if n["name"] == "fs2" && n["connected"] == true && n["core_uuid"] == fs2.CoreUUID() && n["lease_holder"] != "" {
					fs2View = n
					return true
				}
			}
			return false
		})
		if fs2View["address"] != fs2.Addr() || fs2View["live_channels"] != float64(0) || fs2View["events_here"] != true {
			t.Errorf("fs2 %v", fs2View)
		}
		e.Do(t, "GET", "/api/telephony/nodes", e.tenantKey, nil).Expect(t, 403)

		e.Do(t, "DELETE", "/api/servers/"+fmt.Sprint(srv["id"]), e.Key, nil).Expect(t, 204)
		wait.Until(t, 10*time.Second, "fs2 dropped", func() bool {
			var list []map[string]any
			e.Do(t, "GET", "/api/telephony/nodes", e.Key, nil).Expect(t, 200).JSON(t, &list)
			for _, n := range list {
				if n["name"] == "fs2" {
					return false
				}
			}
			return len(fs2.Conns()) == 0
		})
	})
}
