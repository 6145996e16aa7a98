// Package webclient is the team-chat web client served at the provisioning
// bundle's login_url: converse.js (an XMPP web client, vendored from npm at
// the version in dist/VERSION, see vendor.sh) with a start script that
// reads the installation's settings from a generated config.json. Nothing
// is loaded from elsewhere: the files are embedded in the binary.
package webclient

import (
	"embed"
	"encoding/json"
	"io/fs"
	"mime"
	"path"
	"strings"
)

//go:embed index.html start.js dist
var files embed.FS

// Settings are what the client needs to know about the installation.
type Settings struct {
	WebSocketURL string `json:"websocket_url"`
	Domain       string `json:"domain"`
	MUCDomain    string `json:"muc_domain"`
}

// ConfigJSON is the generated config.json.
func (s Settings) ConfigJSON() []byte {
	b, _ := json.Marshal(s) // three strings: cannot fail
	return b
}

// ContentSecurityPolicy is the policy the client runs under: its own
// scripts and styles only (converse.js sets style attributes, so inline
// styles are allowed), images also as data: and blob: URLs (avatars,
// uploads), and connections to this server and the chat WebSocket.
func (s Settings) ContentSecurityPolicy() string {
	connect := "'self'"
	if s.WebSocketURL != "" {
		connect += " " + s.WebSocketURL
	}
	return strings.Join([]string{
		"default-src 'none'",
		"script-src 'self'",
		"style-src 'self' 'unsafe-inline'",
		"img-src 'self' data: blob:",
		"font-src 'self'",
		"media-src 'self' blob:",
		"connect-src " + connect,
		"worker-src 'self' blob:",
		"manifest-src 'self'",
		"base-uri 'none'",
		"form-action 'self'",
		"frame-ancestors 'none'",
	}, "; ")
}

// File returns an embedded file by its path under the client's root
// ("index.html", "start.js", "dist/converse.min.js") and its content type;
// ok is false for anything else (directories included).
func File(name string) (body []byte, contentType string, ok bool) {
	name = path.Clean("/" + name)[1:]
	if name == "" || name == "." {
		return nil, "", false
	}
	b, err := fs.ReadFile(files, name)
	if err != nil {
		return nil, "", false
	}
	ct := mime.TypeByExtension(path.Ext(name))
	switch path.Ext(name) {
	case ".js":
		ct = "text/javascript; charset=utf-8"
	case ".ttf":
		ct = "font/ttf"
	case "", ".md":
		ct = "text/plain; charset=utf-8"
	}
	if ct == "" {
		ct = "application/octet-stream"
	}
	return b, ct, true
}

// Version is the vendored converse.js release ("converse.js@14.0.0").
func Version() string {
	b, _ := fs.ReadFile(files, "dist/VERSION")
	return strings.TrimSpace(string(b))
}
