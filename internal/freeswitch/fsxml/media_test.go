package fsxml_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/fsxml"
	"github.com/switchboard/switchboard/internal/media/mediatest"
)

// nodeMediaBase is SWITCHBOARD_MEDIA_URL in these tests: the address the
// nodes would use; the test sends the rendered path to its own server.
const nodeMediaBase = "http://media.node.test:9/fs/media"

// TestRenderedPromptURLsServeTheFileToNodes: the IVR's greeting, invalid
// and exit sounds and the queue's announcement render as signed
// http_cache:// URLs of /fs/media, and each URL, fetched as mod_http_cache
// fetches it (no Authorization header), answers the stored file, with
// Range; a changed signature, or one file's signature on another file,
// is refused, while the /fs/xml credentials still work.
func TestRenderedPromptURLsServeTheFileToNodes(t *testing.T) {
	env := map[string]string{"SWITCHBOARD_MEDIA_URL": nodeMediaBase, "SWITCHBOARD_XMLCURL_USER": "fs", "SWITCHBOARD_XMLCURL_PASSWORD": "node-secret-1"}
	apptest.Each(t, env, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		base := "/api/tenants/" + tenant
		prompt := func(name string, seconds int) map[string]any {
			return s.Do(t, "POST", base+"/voice_prompts/", s.Key, map[string]any{"name": name, "audio_base64": base64.StdEncoding.EncodeToString(mediatest.Tone(t, name+".wav", seconds))}).Expect(t, 201).Map(t)
		}
		greet, invalid, exit := prompt("greet", 1), prompt("invalid", 2), prompt("bye", 1)
		menu := s.Do(t, "POST", base+"/ivr_menus/", s.Key, map[string]any{
			"name": "main", "number": "631", "greeting_long_prompt_id": greet["id"], "invalid_prompt_id": invalid["id"], "exit_prompt_id": exit["id"],
		}).Expect(t, 201).Map(t)
		s.Do(t, "POST", base+"/queues/", s.Key, map[string]any{
			"name": "sales", "number": "641", "announce_prompt_id": invalid["id"], "announce_frequency_seconds": 30,
		}).Expect(t, 201)

		fetch := func(body []byte) node {
			r := post(t, s, body, "fs", "node-secret-1").Expect(t, 200)
			return parse(t, r.Body)
		}
		ivr := fetch(fakefs.FormWith(capture(t, "003"), "key_value", "ivr.conf", "Menu-Name", fmt.Sprintf("%s_%v", tenant, menu["id"])))
		m := ivr.all("menu")
		if len(m) != 1 {
			t.Fatalf("ivr.conf has %d menus", len(m))
		}
		queue := fetch(fakefs.FormWith(capture(t, "003"), "key_value", "callcenter.conf", "CC-Queue", "641@"+tenant))
		urls := map[string]map[string]any{
			m[0].attr("greet-long"):                greet,
			m[0].attr("greet-short"):               greet,
			m[0].attr("invalid-sound"):             invalid,
			m[0].attr("exit-sound"):                exit,
			queue.param("param", "announce-sound"): invalid,
		}
		if len(urls) != 3 {
			t.Fatalf("rendered URLs %q: want one per prompt", urls)
		}
		paths := map[string]string{}
		for u, p := range urls {
			file := p["filename"].(string)
			prefix := "http_cache://" + nodeMediaBase + "/" + tenant + "/" + file + "?sig="
			if !strings.HasPrefix(u, prefix) {
				t.Fatalf("rendered %q, want it under %q", u, prefix)
			}
			path := strings.TrimPrefix(u, "http_cache://"+strings.TrimSuffix(nodeMediaBase, "/fs/media"))
			paths[file] = path
			stored, err := os.ReadFile(filepath.Join(s.Cfg.Media.Dir, tenant, file))
			if err != nil {
				t.Fatal(err)
			}
			r := s.DoHeaders(t, "GET", path, nil, nil).Expect(t, 200)
			if !bytes.Equal(r.Body, stored) || r.Header.Get("Content-Type") != "audio/wav" {
				t.Fatalf("%s: %d bytes (%s), want the stored %d", path, len(r.Body), r.Header.Get("Content-Type"), len(stored))
			}
			r = s.DoHeaders(t, "GET", path, map[string]string{"Range": "bytes=0-99"}, nil).Expect(t, 206)
			if !bytes.Equal(r.Body, stored[:100]) {
				t.Fatalf("%s: range answered %d bytes", path, len(r.Body))
			}
			// One character of the signature changed: refused.
			bad := []byte(path)
			bad[len(bad)-1] ^= 1
			s.DoHeaders(t, "GET", string(bad), nil, nil).Expect(t, 401)
			s.DoHeaders(t, "GET", strings.Split(path, "?")[0], nil, nil).Expect(t, 401)
			s.DoHeaders(t, "GET", strings.Split(path, "?")[0], map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("fs:node-secret-1"))}, nil).Expect(t, 200)
		}
		// A signature opens its own file only.
		gp, ip := paths[greet["filename"].(string)], paths[invalid["filename"].(string)]
		swapped := strings.Split(gp, "?")[0] + "?" + strings.Split(ip, "?")[1]
		s.DoHeaders(t, "GET", swapped, nil, nil).Expect(t, 401)
	})
}

// TestSignedMediaStillHonoursTheAllowList: a valid signature replaces the
// Basic credentials, not the address allow list.
func TestSignedMediaStillHonoursTheAllowList(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	svc := fsxml.New(nil, nil, fsxml.Config{MediaURL: nodeMediaBase, MediaKey: key, User: "fs", Password: "pw", Allow: []*net.IPNet{{IP: net.IPv4(10, 0, 0, 0), Mask: net.CIDRMask(8, 32)}}}, nil)
	defer svc.Close()
	other := fsxml.New(nil, nil, fsxml.Config{MediaURL: nodeMediaBase, MediaKey: []byte("another key, another installation"), User: "fs", Password: "pw"}, nil)
	defer other.Close()
	// The signature the renderer of an installation with key would write.
	sig := strings.SplitN(dialplan.MediaURLs{Base: nodeMediaBase, Key: key}.URL("acme", "p1.wav"), "?sig=", 2)[1]
	if err := svc.AuthorizeMedia(net.IPv4(10, 1, 2, 3), "", "acme/p1.wav", sig); err != nil {
		t.Fatalf("signed fetch from an allowed node: %v", err)
	}
	if err := svc.AuthorizeMedia(net.IPv4(192, 0, 2, 1), "", "acme/p1.wav", sig); !errors.Is(err, fsxml.ErrForbidden) {
		t.Fatalf("signed fetch from outside the allow list: %v", err)
	}
	if err := svc.AuthorizeMedia(net.IPv4(10, 1, 2, 3), "", "acme/p2.wav", sig); !errors.Is(err, fsxml.ErrUnauthorized) {
		t.Fatalf("signature on another file: %v", err)
	}
	if err := other.AuthorizeMedia(net.IPv4(127, 0, 0, 1), "", "acme/p1.wav", sig); !errors.Is(err, fsxml.ErrUnauthorized) {
		t.Fatalf("signature of another key: %v", err)
	}
}
