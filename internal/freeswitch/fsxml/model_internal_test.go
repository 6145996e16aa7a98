package fsxml

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestLargeTenantExtensionsPerFetch: a tenant with more extensions than a
// model holds is still answered correctly; its extensions are read per
// fetch, only those the fetch involves.
func TestLargeTenantExtensionsPerFetch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		tenant := storetest.Name("big")
		if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": tenant}); err != nil {
			t.Fatal(err)
		}
		o, err := st.Tenant(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		secrets := map[string]string{"1000": "Secret-1000-abcdef", "1001": "Secret-1001-abcdef", "1002": "Secret-1002-abcdef"}
		for name, secret := range secrets {
			if _, err := st.Create(ctx, st.Registry().Resource("extensions"), o, map[string]any{"name": name, "sip_secret": secret}); err != nil {
				t.Fatal(err)
			}
		}
		rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
		defer rdb.Close()
		// modelExtensions 2: fewer than the tenant has.
		svc := New(st, rdb, Config{Domain: "sip.test", modelExtensions: 2}, nil)
		defer svc.Close()

		body := func(capture string, kv ...string) []byte {
			raw, err := readCapture(capture)
			if err != nil {
				t.Fatal(err)
			}
			return fakefs.FormWith(raw, kv...)
		}
		for name, secret := range secrets {
			user := name + "-" + tenant
			doc, err := svc.Fetch(ctx, body("009", "user", user, "domain", "sip.test", "key_value", "sip.test"))
			if err != nil {
				t.Fatal(err)
			}
			sum := md5.Sum([]byte(user + ":sip.test:" + secret))
			if !strings.Contains(string(doc), `name="a1-hash" value="`+hex.EncodeToString(sum[:])+`"`) {
				t.Errorf("%s: wrong or missing a1-hash\n%s", user, doc)
			}
		}
		m, err := svc.tenantModel(ctx, tenant, svc.gens.current(tenant))
		if err != nil || m.allExtensions || len(m.snap.Extensions) != 0 {
			t.Fatalf("the model should not hold the extensions: %+v %v", m, err)
		}
		call := body("011", "Caller-Context", tenant, "Hunt-Context", tenant, "Caller-Destination-Number", "1002",
			"Hunt-Destination-Number", "1002", "Caller-Caller-ID-Number", "1000", "Hunt-Caller-ID-Number", "1000")
		doc, err := svc.Fetch(ctx, call)
		if err != nil || !strings.Contains(string(doc), "user/1002-"+tenant+"@sip.test") {
			t.Errorf("call to 1002: %v\n%s", err, doc)
		}
		group := append(body("013", "domain", "sip.test", "key_value", "sip.test", "user", ""), []byte("&action=group_call&group="+tenant)...)
		doc, err = svc.Fetch(ctx, group)
		if err != nil || strings.Count(string(doc), `type="pointer"`) != 3 {
			t.Errorf("group_call lists every extension: %v\n%s", err, doc)
		}
	})
}

// TestWeightedLRU: entries go least recently used first once the weights
// exceed the budget; the newest entry always stays.
func TestWeightedLRU(t *testing.T) {
	c := newWeightedLRU[int](10)
	c.put("a", 1, 4)
	c.put("b", 2, 4)
	c.get("a") // b is now the least recently used
	c.put("c", 3, 4)
	if _, ok := c.get("b"); ok {
		t.Error("b should have gone")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.get(k); !ok {
			t.Errorf("%s should stay", k)
		}
	}
	c.put("huge", 4, 100)
	if n, w := c.stats(); n != 1 || w != 100 {
		t.Errorf("after a value over the budget: %d entries, weight %d; want only it", n, w)
	}
	c.put("huge", 5, 1)
	if v, _ := c.get("huge"); v != 5 {
		t.Errorf("replaced value %d", v)
	}
	if _, w := c.stats(); w != 1 {
		t.Errorf("weight after replacing %d", w)
	}
}

// readCapture returns the form body of a real mod_xml_curl request.
func readCapture(prefix string) ([]byte, error) {
	m, err := filepath.Glob(filepath.Join("..", "xmlcurl", "testdata", "captures", prefix+"-*.http"))
	if err != nil || len(m) != 1 {
		return nil, fmt.Errorf("capture %s: %v %v", prefix, m, err)
	}
	raw, err := os.ReadFile(m[0])
	if err != nil {
		return nil, err
	}
	_, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		return nil, fmt.Errorf("capture %s: no body", prefix)
	}
	return body, nil
}

// TestPolledExtensionChangePatchesTheModel: a replica that learns of a
// write to one extension from its outbox poll (before, or instead of, the
// writer's notice) updates the tenant's model by reading that extension
// only. Seen in CI under load: the poll saw the change first, recorded it
// as "anything in the tenant changed" and the model was rebuilt.
func TestPolledExtensionChangePatchesTheModel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		tenant := storetest.Name("poll")
		o := seedTenant(t, st, tenant, map[string]any{"name": "1000", "callerid": "Ann <1000>"})
		exts := st.Registry().Resource("extensions")
		rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
		defer rdb.Close()
		svc := New(st, rdb, Config{Domain: "sip.test"}, nil)
		defer svc.Close()
		waitLive(t, svc)
		dir := func() string { return fetchUser(t, svc, "1000-"+tenant) }
		if err := svc.pollHeads(ctx); err != nil {
			t.Fatal(err)
		}
		dir()
		before := ReadStats()
		if _, err := st.Update(ctx, exts, o, "1000", map[string]any{"callerid": "Bob <1000>"}); err != nil {
			t.Fatal(err)
		}
		if err := svc.pollHeads(ctx); err != nil {
			t.Fatal(err)
		}
		if doc := dir(); !strings.Contains(doc, `name="effective_caller_id_name" value="Bob"`) {
			t.Errorf("the polled update is not served:\n%s", doc)
		}
		after := ReadStats()
		if patches, builds := after.TenantPatches-before.TenantPatches, after.TenantBuilds-before.TenantBuilds; patches != 1 || builds != 0 {
			t.Errorf("after a polled one-extension update: %d patches, %d builds (want 1 patch, no build)", patches, builds)
		}
	})
}
