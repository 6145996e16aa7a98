package routes_test

import (
	"context"
	"maps"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// callEnv is a running server wired to one fake FreeSWITCH node.
type callEnv struct {
	*apptest.Server
	fs     *fakefs.Server
	tenant string
	// user is a user key bound to extension 1001 (mobile +27825550001);
	// tenantKey a tenant key of the same tenant.
	user, tenantKey string
}

const testMobile = "+27825550001"

// startFake starts a fake FreeSWITCH node on a free port.
func startFake(t *testing.T) *fakefs.Server {
	t.Helper()
	fs := fakefs.New(fakefs.Options{Hostname: "fs1"})
	if err := fs.Start("127.0.0.1:0"); err != nil {
		t.Fatalf("start fake freeswitch: %v", err)
	}
	t.Cleanup(func() { fs.Close() })
	return fs
}

// eachCallEnv runs fn per backend pairing with a fresh fake node, server,
// tenant, extension 1001 and keys, in parallel with other tests (as
// apptest.Each does). What a call test shares with the tests beside it:
// the MySQL database and the Redis of its backend half (its node is its
// own: a node is named by its fake's address), so every server dispatches
// every tenant's changes to its own node. A call test therefore counts
// only the commands naming its own tenant, channels of its own tenant,
// and metrics of its own server.
func eachCallEnv(t *testing.T, fn func(t *testing.T, e *callEnv)) {
	t.Helper()
	t.Parallel()
	callEnvs(t, true, nil, fn)
}

// eachCallEnvWith is eachCallEnv with more configuration for the servers.
func eachCallEnvWith(t *testing.T, env map[string]string, fn func(t *testing.T, e *callEnv)) {
	t.Helper()
	t.Parallel()
	callEnvs(t, true, env, fn)
}

// eachCallEnvAlone is eachCallEnv for a test that must be the only live
// server (the reason is the caller's to give): it runs before the
// parallel tests start.
func eachCallEnvAlone(t *testing.T, fn func(t *testing.T, e *callEnv)) {
	t.Helper()
	callEnvs(t, false, nil, fn)
}

func callEnvs(t *testing.T, parallel bool, env map[string]string, fn func(t *testing.T, e *callEnv)) {
	t.Helper()
	for _, be := range apptest.Envs(t) {
		t.Run(be.Name, func(t *testing.T) {
			if parallel {
				t.Parallel()
			}
			fs := startFake(t)
			all := map[string]string{"SWITCHBOARD_ESL_NODES": fs.Addr(), "SWITCHBOARD_RECORDINGS_DIR": "/rec"}
			maps.Copy(all, env)
			s := apptest.Start(t, be, all)
			e := setupCallEnv(t, s, fs)
			waitEvents(t, fs, 1)
			fn(t, e)
		})
	}
}

func setupCallEnv(t *testing.T, s *apptest.Server, fs *fakefs.Server) *callEnv {
	t.Helper()
	e := &callEnv{Server: s, fs: fs, tenant: s.Tenant(t, "calls")}
	s.Do(t, "POST", "/api/tenants/"+e.tenant+"/extensions/", s.Key, map[string]any{"name": "1001", "mobile": testMobile}).Expect(t, 201)
	s.Do(t, "POST", "/api/tenants/"+e.tenant+"/extensions/", s.Key, map[string]any{"name": "1002"}).Expect(t, 201)
	e.user = s.KeyFor(t, map[string]any{"tenant": e.tenant, "extension": "1001"})
	e.tenantKey = s.KeyFor(t, map[string]any{"tenant": e.tenant})
	return e
}

// waitEvents waits until n connections subscribed to channel events (the
// command connections subscribe to BACKGROUND_JOB only) and some command
// connection is authenticated.
func waitEvents(t *testing.T, fs *fakefs.Server, n int) {
	t.Helper()
	wait.Until(t, 10*time.Second, "event subscriptions", func() bool {
		subs, authed := 0, 0
		for _, c := range fs.Conns() {
			if c.Authed {
				authed++
			}
			if slices.Contains(c.Events, "CHANNEL_CREATE") {
				subs++
			}
		}
		return subs == n && authed > n
	})
}

// liveChannel creates an inbound channel of tenant on the fake and waits
// until the API lists it; it returns the channel's id and UUID.
func (e *callEnv) liveChannel(t *testing.T, tenant, ext string) (id, uuid string) {
	t.Helper()
	uuid, err := e.fs.CreateChannel(fakefs.ChannelSpec{
		CIDNum: ext, Dest: "5551234", Context: tenant, Answer: true,
		Vars: []fakefs.Header{{Name: "sb_tenant", Value: tenant}, {Name: "sb_ext", Value: ext}},
	})
	if err != nil {
		t.Fatal(err)
	}
	id = e.waitChannel(t, uuid)
	return id, uuid
}

// waitChannel waits until the platform list shows the channel with uuid.
func (e *callEnv) waitChannel(t *testing.T, uuid string) string {
	t.Helper()
	var id string
	wait.Until(t, 5*time.Second, "channel "+uuid+" listed", func() bool {
		var list []map[string]any
		e.Do(t, "GET", "/api/telephony/channels?limit=1000", e.Key, nil).Expect(t, 200).JSON(t, &list)
		for _, ch := range list {
			if ch["uuid"] == uuid {
				id, _ = ch["id"].(string)
				return true
			}
		}
		return false
	})
	return id
}

// waitCommand returns the next command the fake received with prefix.
func waitCommand(t *testing.T, fs *fakefs.Server, prefix string) string {
	t.Helper()
	// Generous: a change reaches the node through the outbox, which each
	// test server reads for the whole shared CI database; under -race on
	// two busy cores that took over 5 s once.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd, err := fs.WaitCommand(ctx, prefix)
	if err != nil {
		t.Fatalf("fake never received %q: %v (got %q)", prefix, err, fs.Commands())
	}
	return cmd
}

func esc(id string) string { return url.PathEscape(id) }
