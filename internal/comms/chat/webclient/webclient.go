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

// Settings are what the client needs to know about the installation and,
// when the page names one, the tenant whose people log in.
type Settings struct {
	WebSocketURL string `json:"websocket_url"`
	Domain       string `json:"domain"`
	MUCDomain    string `json:"muc_domain"`
	// Name is what the client is called: the tenant's product name, else
	// the installation's.
	Name     string    `json:"name"`
	Branding *Branding `json:"branding,omitempty"`
}

// Branding is the part of a tenant's branding the client shows (its own,
// else its reseller's, field by field).
type Branding struct {
	PrimaryColor   string `json:"primary_color,omitempty"`
	SecondaryColor string `json:"secondary_color,omitempty"`
	Logo           string `json:"logo,omitempty"`
	Favicon        string `json:"favicon,omitempty"`
	LoginMessage   string `json:"login_message,omitempty"`
	SupportURL     string `json:"support_url,omitempty"`
	SupportEmail   string `json:"support_email,omitempty"`
}

// ConfigJSON is the generated config.json.
func (s Settings) ConfigJSON() []byte {
	b, _ := json.Marshal(s) // strings only: cannot fail
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
