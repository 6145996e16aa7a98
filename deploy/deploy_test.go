// Package deploy_test checks the deployment files (docker-compose.yml, the
// Dockerfile, the FreeSWITCH configuration) without a container engine:
// the compose file against the Compose Specification's JSON schema, and the
// properties operators rely on (start order, healthchecks, no default
// secrets, FreeSWITCH fetching from Switchboard) against their text.
package deploy_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type compose struct {
	Services map[string]struct {
		Image       string
		NetworkMode string `yaml:"network_mode"`
		Entrypoint  []string
		DependsOn   map[string]struct{ Condition string } `yaml:"depends_on"`
		Environment map[string]string
		Ports       []string
		Volumes     []string
		Healthcheck struct {
			Test []string
		}
	}
	Networks map[string]struct {
		Ipam struct {
			Config []struct{ Subnet string }
		}
	}
}

func loadCompose(t *testing.T) compose {
	t.Helper()
	var c compose
	if err := yaml.Unmarshal([]byte(read(t, "../docker-compose.yml")), &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

func TestComposeFileMatchesTheComposeSpecification(t *testing.T) {
	var doc any
	if err := yaml.Unmarshal([]byte(read(t, "../docker-compose.yml")), &doc); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		t.Fatalf("compose file as JSON: %v", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	schemaDoc, err := jsonschema.UnmarshalJSON(strings.NewReader(read(t, "testdata/compose-spec.json")))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("compose-spec.json", schemaDoc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("compose-spec.json")
	if err != nil {
		t.Fatalf("compile the compose schema: %v", err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Fatalf("docker-compose.yml does not match the Compose Specification:\n%v", err)
	}
	// The schema catches mistakes: a misspelt key fails.
	bad := strings.Replace(string(js), `"depends_on"`, `"depend_on"`, 1)
	badInst, _ := jsonschema.UnmarshalJSON(strings.NewReader(bad))
	if schema.Validate(badInst) == nil {
		t.Fatal("the schema accepted a misspelt service key")
	}
}

func TestComposeStartsInOrderWithHealthchecks(t *testing.T) {
	c := loadCompose(t)
	for _, name := range []string{"mariadb", "redis", "switchboard", "freeswitch"} {
		s, ok := c.Services[name]
		if !ok {
			t.Fatalf("service %s missing", name)
		}
		if len(s.Healthcheck.Test) == 0 {
			t.Errorf("service %s has no healthcheck", name)
		}
	}
	want := map[string][]string{
		"switchboard": {"mariadb", "redis"},
		"freeswitch":  {"switchboard"}, // FreeSWITCH asks for sofia.conf as it starts
	}
	for svc, deps := range want {
		for _, d := range deps {
			if got := c.Services[svc].DependsOn[d].Condition; got != "service_healthy" {
				t.Errorf("%s depends on %s with condition %q, want service_healthy", svc, d, got)
			}
		}
	}
	if hc := c.Services["switchboard"].Healthcheck.Test; !slices.Equal(hc, []string{"CMD", "/switchboard", "health"}) {
		t.Errorf("switchboard healthcheck %v: the distroless image has no shell; use the binary's health command", hc)
	}
}

func TestComposeHasNoDefaultSecrets(t *testing.T) {
	raw := read(t, "../docker-compose.yml")
	secretRef := regexp.MustCompile(`\$\{([A-Z_]*(?:PASSWORD|SECRET)[A-Z_]*)([^}]*)\}`)
	refs := secretRef.FindAllStringSubmatch(raw, -1)
	if len(refs) < 4 {
		t.Fatalf("found %d secret references, want the secret key, database, XML and event socket passwords", len(refs))
	}
	for _, m := range refs {
		if !strings.HasPrefix(m[2], ":?") {
			t.Errorf("${%s%s}: a secret must be required (${%s:?message}), never defaulted", m[1], m[2], m[1])
		}
	}
	c := loadCompose(t)
	for name, s := range c.Services {
		for k, v := range s.Environment {
			if (strings.Contains(k, "PASSWORD") || strings.Contains(k, "SECRET")) && k != "MARIADB_RANDOM_ROOT_PASSWORD" {
				if !strings.HasPrefix(v, "${") {
					t.Errorf("%s: %s has a literal value", name, k)
				}
			}
		}
	}
}

func TestFreeSWITCHFetchesFromSwitchboard(t *testing.T) {
	c := loadCompose(t)
	fs := c.Services["freeswitch"]
	modules := read(t, "freeswitch/static/modules.conf.xml")
	curl, sofia, esl := strings.Index(modules, `"mod_xml_curl"`), strings.Index(modules, `"mod_sofia"`), strings.Index(modules, `"mod_event_socket"`)
	if curl < 0 || sofia < 0 || esl < 0 || curl > sofia {
		t.Errorf("modules.conf must load mod_xml_curl before mod_sofia, and mod_event_socket")
	}
	// Call parking (the park feature code) renders valet_park.
	if !strings.Contains(modules, `<load module="mod_valet_parking"/>`) {
		t.Errorf("modules.conf must load mod_valet_parking: the park feature code runs valet_park")
	}
	binding := read(t, "freeswitch/templates/xml_curl.conf.xml")
	if !strings.Contains(binding, `bindings="directory|dialplan|configuration"`) {
		t.Errorf("xml_curl binding does not fetch directory, dialplan and configuration")
	}
	// Every placeholder is rendered by the entrypoint from a variable compose sets.
	entry := read(t, "freeswitch/entrypoint.sh")
	placeholders := regexp.MustCompile(`@([A-Z_]+)@`)
	for _, tmpl := range []string{"xml_curl.conf.xml", "event_socket.conf.xml"} {
		for _, m := range placeholders.FindAllStringSubmatch(read(t, "freeswitch/templates/"+tmpl), -1) {
			if !strings.Contains(entry, "s|@"+m[1]+"@|$"+m[1]+"|g") {
				t.Errorf("%s: @%s@ is not rendered by entrypoint.sh", tmpl, m[1])
			}
			if fs.Environment[m[1]] == "" {
				t.Errorf("%s: compose does not give freeswitch %s", tmpl, m[1])
			}
		}
	}
	if out, err := exec.Command("sh", "-n", "freeswitch/entrypoint.sh").CombinedOutput(); err != nil {
		t.Errorf("entrypoint.sh: %v %s", err, out)
	}
	if info, err := os.Stat("freeswitch/entrypoint.sh"); err != nil || info.Mode()&0o111 == 0 {
		t.Errorf("entrypoint.sh must be executable: %v", err)
	}
	if !slices.Equal(fs.Entrypoint, []string{"/switchboard/entrypoint.sh"}) || !slices.Contains(fs.Volumes, "./deploy/freeswitch:/switchboard:ro") {
		t.Errorf("freeswitch must run the entrypoint from the mounted deploy/freeswitch: %v %v", fs.Entrypoint, fs.Volumes)
	}
	// The static directory and dialplan are empty includes.
	empty := read(t, "freeswitch/empty/00-empty.xml")
	if regexp.MustCompile(`<(user|extension|domain|condition)\b`).MatchString(empty) {
		t.Errorf("the static fallback is not empty")
	}
	if !strings.Contains(entry, `for d in directory dialplan`) {
		t.Errorf("entrypoint.sh does not replace the static directory and dialplan")
	}
	// SIP and the whole RTP range FreeSWITCH uses are published.
	sw := read(t, "freeswitch/static/switch.conf.xml")
	start := regexp.MustCompile(`rtp-start-port" value="(\d+)"`).FindStringSubmatch(sw)
	end := regexp.MustCompile(`rtp-end-port" value="(\d+)"`).FindStringSubmatch(sw)
	if start == nil || end == nil {
		t.Fatal("switch.conf.xml does not fix the RTP range")
	}
	// FreeSWITCH's port allocator (switch_core_port_allocator.c) rounds
	// an odd start up and an odd end down ("Rounding odd end port"), gives
	// RTP the even ports start..end and RTCP the odd port above each: both
	// ends must be even and compose must publish start..end+1, no more.
	lo, _ := strconv.Atoi(start[1])
	hi, _ := strconv.Atoi(end[1])
	if lo%2 != 0 || hi%2 != 0 || hi <= lo {
		t.Errorf("RTP range %d-%d: both ends must be even (FreeSWITCH rounds odd ones)", lo, hi)
	}
	rtp := fmt.Sprintf("%d-%d:%d-%d/udp", lo, hi+1, lo, hi+1)
	for _, p := range fs.Ports {
		if strings.HasSuffix(p, "/udp") && strings.Contains(p, "-") && p != rtp {
			t.Errorf("freeswitch publishes the port range %s, want exactly %s", p, rtp)
		}
	}
	for _, p := range []string{"5060:5060/udp", "5060:5060/tcp", rtp} {
		if !slices.Contains(fs.Ports, p) {
			t.Errorf("freeswitch does not publish %s (ports %v)", p, fs.Ports)
		}
	}
	// The rendered XML calls API functions through ${…} (sofia_contact in
	// the user dial string, vm_boxcount, expr, cond, strepoch): off, each
	// reads "<API Execute Permission Denied>" (TestRenderedXMLHasItsModules
	// lists them).
	if !strings.Contains(sw, `"api-expansion" value="true"`) {
		t.Errorf("switch.conf.xml must keep api-expansion on: the rendered dialplan calls API functions")
	}
	// The event socket ACL and the XML allow list are the compose network.
	subnet := c.Networks["switchboard"].Ipam.Config[0].Subnet
	if !strings.Contains(read(t, "freeswitch/static/acl.conf.xml"), `cidr="`+subnet+`"`) {
		t.Errorf("acl.conf control-plane list does not allow the compose subnet %s", subnet)
	}
	if got := c.Services["switchboard"].Environment["SWITCHBOARD_XMLCURL_ALLOW"]; got != subnet {
		t.Errorf("SWITCHBOARD_XMLCURL_ALLOW %q, want the compose subnet %s", got, subnet)
	}
	if !strings.Contains(read(t, "freeswitch/templates/event_socket.conf.xml"), `"apply-inbound-acl" value="control-plane"`) {
		t.Errorf("the event socket does not apply the control-plane ACL")
	}
}

func TestImageRunsAsNonRootWithAWritableDataDirectory(t *testing.T) {
	df := read(t, "../Dockerfile")
	for _, want := range []string{
		"FROM gcr.io/distroless/static-debian12:nonroot",
		"COPY --from=build --chown=65532:65532 /out/data /data",
		"WORKDIR /data",
		"USER 65532:65532",
		`HEALTHCHECK`,
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	ignore := strings.Fields(read(t, "../.dockerignore"))
	for _, want := range []string{".git", "data/", "bin/"} {
		if !slices.Contains(ignore, want) {
			t.Errorf(".dockerignore does not exclude %s", want)
		}
	}
}

// moduleOf names the module that provides each dialplan application, API
// function (${name(…)} and api_hangup_hook), stream or endpoint the
// renderer uses. A name missing here fails the test: add it with its
// module (and load the module in modules.conf.xml).
var moduleOf = map[string]string{
	// applications (mod_dptools unless noted)
	"answer": "mod_dptools", "bridge": "mod_dptools", "transfer": "mod_dptools", "set": "mod_dptools",
	"export": "mod_dptools", "hangup": "mod_dptools", "playback": "mod_dptools", "ivr": "mod_dptools",
	"pickup": "mod_dptools", "intercept": "mod_dptools", "echo": "mod_dptools", "sleep": "mod_dptools",
	"sched_hangup": "mod_dptools", "record": "mod_dptools", "read": "mod_dptools", "event": "mod_dptools",
	"play_and_get_digits": "mod_dptools", "park": "mod_dptools", "limit": "mod_dptools",
	"limit_execute": "mod_dptools", "say": "mod_say_en",
	"voicemail": "mod_voicemail", "conference": "mod_conference", "callcenter": "mod_callcenter",
	"directory": "mod_directory", "rxfax": "mod_spandsp", "valet_park": "mod_valet_parking",
	// API functions
	"sofia_contact": "mod_sofia", "vm_boxcount": "mod_voicemail", "expr": "mod_expr",
	"cond": "mod_commands", "strepoch": "mod_commands", "http_put": "mod_http_cache",
	// streams and endpoints
	"local_stream://": "mod_local_stream", "tone_stream://": "mod_tone_stream",
	"http_cache://": "mod_http_cache", "silence_stream://": "core", "loopback/": "mod_loopback",
	"user/": "mod_dptools", "pickup/": "mod_dptools", "sofia/": "mod_sofia",
	// limit's backend and the configuration documents /fs/xml serves
	"limit hash": "mod_hash", "callcenter.conf": "mod_callcenter", "conference.conf": "mod_conference",
	"voicemail.conf": "mod_voicemail", "directory.conf": "mod_directory", "local_stream.conf": "mod_local_stream",
	"ivr.conf": "mod_dptools", "sofia.conf": "mod_sofia",
}

// TestRenderedXMLHasItsModules: every application, API function, stream
// and endpoint the renderer writes (read from its golden files and from
// its source, so one only some configuration reaches counts too) has its
// module loaded by the shipped modules.conf.xml, and mod_http_cache has
// the configuration it needs to load.
func TestRenderedXMLHasItsModules(t *testing.T) {
	loaded := map[string]bool{"core": true}
	for _, m := range regexp.MustCompile(`<load module="(mod_[a-z0-9_]+)"/>`).FindAllStringSubmatch(read(t, "freeswitch/static/modules.conf.xml"), -1) {
		loaded[m[1]] = true
	}
	used := map[string]string{} // name -> where first seen
	note := func(name, where string) {
		if _, ok := used[name]; !ok {
			used[name] = where
		}
	}
	// The renderers: dialplan, and sofiaconf for sofia.conf.
	var golden, source []string
	for _, dir := range []string{"../internal/freeswitch/dialplan", "../internal/freeswitch/gateways/sofiaconf"} {
		g, err := filepath.Glob(dir + "/testdata/golden/*.xml")
		if err != nil || len(g) == 0 {
			t.Fatalf("golden files in %s: %d, %v", dir, len(g), err)
		}
		src, err := filepath.Glob(dir + "/*.go")
		if err != nil {
			t.Fatal(err)
		}
		golden, source = append(golden, g...), append(source, src...)
	}
	if len(golden) < 50 {
		t.Fatalf("golden files: %d", len(golden))
	}
	goldenPatterns := []*regexp.Regexp{
		regexp.MustCompile(`application="([a-z_]+)"`),
		regexp.MustCompile(`action="menu-exec-app"[^>]*param="([a-z_]+) `),
		regexp.MustCompile(`&#36;\{([a-z_]+)\(`),
		regexp.MustCompile(`"(http_put) `),
		regexp.MustCompile(`<configuration name="([a-z_]+\.conf)"`),
	}
	sourcePatterns := []*regexp.Regexp{
		regexp.MustCompile(`\bact\("([a-z_]+)"`),
		regexp.MustCompile(`\bapp: "([a-z_]+)"`),
		regexp.MustCompile(`\$\{([a-z_]+)\(`),
		regexp.MustCompile(`"(http_put) `),
		regexp.MustCompile(`configuration name=\\"([a-z_]+\.conf)\\"`),
	}
	streams := regexp.MustCompile(`\b(local_stream://|tone_stream://|http_cache://|silence_stream://|loopback/|user/|pickup/|sofia/|limit hash)`)
	comment := regexp.MustCompile(`(?m)^\s*//.*$`)
	scan := func(path string, patterns []*regexp.Regexp) {
		text := comment.ReplaceAllString(read(t, path), "")
		for _, re := range patterns {
			for _, m := range re.FindAllStringSubmatch(text, -1) {
				note(m[1], path)
			}
		}
		for _, m := range streams.FindAllString(text, -1) {
			note(m, path)
		}
	}
	for _, g := range golden {
		scan(g, goldenPatterns)
	}
	for _, src := range source {
		if !strings.HasSuffix(src, "_test.go") {
			scan(src, sourcePatterns)
		}
	}
	for _, want := range []string{"callcenter", "conference", "ivr", "directory", "voicemail", "local_stream://", "http_cache://", "sofia_contact"} {
		if _, ok := used[want]; !ok {
			t.Errorf("%s not found in the renderer's output: the scan is broken", want)
		}
	}
	for name, where := range used {
		mod, ok := moduleOf[name]
		switch {
		case !ok:
			t.Errorf("%s (in %s): unknown to this test; add it to moduleOf with its module", name, where)
		case !loaded[mod]:
			t.Errorf("%s (in %s) needs %s, which modules.conf.xml does not load", name, where, mod)
		}
	}
	if loaded["mod_http_cache"] {
		conf := read(t, "freeswitch/static/http_cache.conf.xml")
		for _, p := range []string{`name="max-urls"`, `name="location"`, `name="default-max-age"`, `name="ssl-cacert"`} {
			if !strings.Contains(conf, p) {
				t.Errorf("http_cache.conf.xml lacks %s", p)
			}
		}
	}
}

// TestFreeSWITCHMountsTheMediaLibrary: FreeSWITCH sees the media library
// where Switchboard renders it (SWITCHBOARD_MEDIA_NODE_DIR, by default
// SWITCHBOARD_MEDIA_DIR): music-on-hold folders, voicemail storage, faxes
// and conference recordings; both containers share one volume and its
// files stay writable by both; prompts are fetched from a URL FreeSWITCH
// can reach.
func TestFreeSWITCHMountsTheMediaLibrary(t *testing.T) {
	c := loadCompose(t)
	sb, fs := c.Services["switchboard"], c.Services["freeswitch"]
	dir := sb.Environment["SWITCHBOARD_MEDIA_DIR"]
	nodeDir := sb.Environment["SWITCHBOARD_MEDIA_NODE_DIR"]
	if nodeDir == "" {
		nodeDir = dir
	}
	if !strings.HasPrefix(dir, "/") || !strings.HasPrefix(nodeDir, "/") {
		t.Fatalf("SWITCHBOARD_MEDIA_DIR %q / NODE_DIR %q must be absolute", dir, nodeDir)
	}
	volumeAt := func(vols []string, path string) string {
		for _, v := range vols {
			parts := strings.Split(v, ":")
			if len(parts) >= 2 && parts[1] == path {
				return parts[0]
			}
		}
		return ""
	}
	sv, fv := volumeAt(sb.Volumes, dir), volumeAt(fs.Volumes, nodeDir)
	if sv == "" || sv != fv {
		t.Fatalf("switchboard mounts %q at %s, freeswitch %q at %s: they must share one volume", sv, dir, fv, nodeDir)
	}
	for _, v := range fs.Volumes {
		if strings.HasPrefix(v, sv+":") && strings.HasSuffix(v, ":ro") {
			t.Errorf("freeswitch mounts the media library read-only: voicemail, faxes and recordings are written there")
		}
	}
	if u := sb.Environment["SWITCHBOARD_MEDIA_URL"]; !strings.HasPrefix(u, "http://switchboard:") && !strings.HasPrefix(u, "https://") {
		t.Errorf("SWITCHBOARD_MEDIA_URL %q: FreeSWITCH must reach it (not localhost)", u)
	}
	if df := read(t, "../Dockerfile"); !strings.Contains(df, "--chown=65532:65532 /out/media "+dir) || !strings.Contains(df, "chmod 2775 /out/media") {
		t.Errorf("the image must hold %s owned by 65532 with setgid, so a new volume is writable by Switchboard", dir)
	}
	if !strings.Contains(read(t, "freeswitch/entrypoint.sh"), "umask 0002") {
		t.Errorf("entrypoint.sh must set umask 0002 so Switchboard can write where FreeSWITCH created directories")
	}
}

// TestComposePublishesTheChatWebSocket: the XMPP WebSocket that bundles
// (connect.websocket_url) and the web chat client hand to chat clients is
// reachable from outside compose: ejabberd, in switchboard's network
// namespace, listens for /ws on every interface of it, switchboard
// publishes that port, and the default URL names it. The admin API stays on
// loopback and unpublished.
func TestComposePublishesTheChatWebSocket(t *testing.T) {
	c := loadCompose(t)
	sb, ej := c.Services["switchboard"], c.Services["ejabberd"]
	if ej.NetworkMode != "service:switchboard" {
		t.Fatalf("ejabberd network_mode %q, want service:switchboard (its admin API answers switchboard on loopback)", ej.NetworkMode)
	}
	if len(ej.Ports) > 0 {
		t.Errorf("ejabberd publishes %v itself; ports of a shared namespace belong to switchboard", ej.Ports)
	}
	// The shipped configuration: /ws on SB_WS_IP, /api on 127.0.0.1.
	conf := read(t, "ejabberd/ejabberd.yml")
	macro := func(name string) string {
		m := regexp.MustCompile(`(?m)^  ` + name + `: "?([^"\n]*)"?$`).FindStringSubmatch(conf)
		if m == nil {
			t.Fatalf("ejabberd.yml has no macro %s", name)
		}
		return m[1]
	}
	listener := func(handler string) string {
		for _, l := range strings.Split(conf, "\n  -\n")[1:] {
			if strings.Contains(l, handler) {
				return l
			}
		}
		t.Fatalf("ejabberd.yml has no listener for %s", handler)
		return ""
	}
	if ws := listener("/ws: ejabberd_http_ws"); !strings.Contains(ws, "port: SB_WS_PORT") || !strings.Contains(ws, "ip: SB_WS_IP") {
		t.Errorf("the WebSocket listener does not use SB_WS_PORT and SB_WS_IP:\n%s", ws)
	}
	if api := listener("/api: mod_http_api"); !strings.Contains(api, `ip: "127.0.0.1"`) || strings.Contains(api, "/ws") {
		t.Errorf("the admin API listener is not loopback-only, or serves /ws too:\n%s", api)
	}
	if ip := macro("SB_WS_IP"); ip != "127.0.0.1" {
		t.Errorf("SB_WS_IP %q in the shipped file: installations outside compose stay loopback-only", ip)
	}
	// The image opens /ws to switchboard's namespace, and nothing else.
	docker := read(t, "ejabberd/Dockerfile")
	if !strings.Contains(docker, `s/^  SB_WS_IP: .*/  SB_WS_IP: "0.0.0.0"/`) || strings.Contains(docker, "SB_API") {
		t.Errorf("the ejabberd image must set SB_WS_IP to 0.0.0.0 and leave the API alone:\n%s", docker)
	}
	wsPort, apiPort := macro("SB_WS_PORT"), macro("SB_API_PORT")
	if !slices.Contains(sb.Ports, wsPort+":"+wsPort) {
		t.Errorf("switchboard does not publish ejabberd's WebSocket port %s (ports %v)", wsPort, sb.Ports)
	}
	for _, p := range sb.Ports {
		if strings.Contains(p, apiPort) {
			t.Errorf("switchboard publishes ejabberd's admin API port: %s", p)
		}
	}
	if got := sb.Environment["SWITCHBOARD_CHAT_API_URL"]; got != "http://127.0.0.1:"+apiPort+"/api" {
		t.Errorf("SWITCHBOARD_CHAT_API_URL %q, want the loopback admin API", got)
	}
	// The default URL a client gets names the published port on the host.
	ws := sb.Environment["SWITCHBOARD_CHAT_WS_URL"]
	m := regexp.MustCompile(`^\$\{SWITCHBOARD_CHAT_WS_URL:-(wss?://[^/]+:(\d+)/ws)\}$`).FindStringSubmatch(ws)
	if m == nil || m[2] != wsPort || strings.Contains(m[1], "127.0.0.1") {
		t.Errorf("SWITCHBOARD_CHAT_WS_URL %q: want an overridable default naming the published port %s on the host", ws, wsPort)
	}
}
