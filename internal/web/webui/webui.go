// Package webui holds the files the configuration manager's pages load in
// the browser: the vendored Swagger UI (an exact npm release of
// swagger-ui-dist, see swagger-ui/update.sh), the pages' own scripts and
// style, and their HTML templates. Everything is embedded in the binary:
// installations are often offline, and a page must never load code from a
// CDN.
package webui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"path"
	"strings"
)

// SwaggerUIVersion is the vendored swagger-ui-dist release (swagger-ui/VERSION).
const SwaggerUIVersion = "5.35.0"

//go:embed swagger-ui/swagger-ui-bundle.js swagger-ui/swagger-ui.css static/* templates/*.html
var files embed.FS

// The configuration manager's server-rendered pages (sign-in, menu, API
// keys, the resource pages): a stylesheet of their own, usable on a phone;
// the resource forms' one script (manage.js) sends them to the API.
//
//go:embed pages/*.html pages/web.css pages/*.js
var pageFiles embed.FS

var (
	// Pages holds the templates of the server-rendered pages (layout, login, menu).
	Pages = template.Must(template.ParseFS(pageFiles, "pages/*.html"))
	// PagesCSS is their stylesheet, served at /web.css.
	PagesCSS, _ = pageFiles.ReadFile("pages/web.css")
	// ManageJS is the resource pages' script, served at /static/manage.js.
	ManageJS, _ = pageFiles.ReadFile("pages/manage.js")
	// ManageLiveJS refreshes the live state on the resource pages, served
	// at /static/manage_live.js.
	ManageLiveJS, _ = pageFiles.ReadFile("pages/manage_live.js")
	// ManageTouchesJS is the per-resource touches' script, served at
	// /static/manage_touches.js.
	ManageTouchesJS, _ = pageFiles.ReadFile("pages/manage_touches.js")
)

// Asset is one file served under /assets/.
type Asset struct {
	Body        []byte
	ContentType string
	// ETag is a strong validator of Body, so browsers revalidate cheaply.
	ETag string
}

// assets maps the name after /assets/ to its file. The Swagger UI files
// carry their version in the name ("swagger-ui-5.35.0/…"), so a new
// release never meets an old copy in a browser cache.
var assets = map[string]Asset{}

// pages are the parsed HTML templates, by file name.
var pages = template.Must(template.New("").ParseFS(files, "templates/*.html"))

func init() {
	add := func(name, file string) {
		body, err := files.ReadFile(file)
		if err != nil {
			panic(fmt.Sprintf("webui: embedded file %s: %v", file, err)) // the embed list and this table disagree: a build mistake
		}
		sum := sha256.Sum256(body)
		ct := mime.TypeByExtension(path.Ext(name))
		if strings.HasSuffix(name, ".js") {
			ct = "text/javascript; charset=utf-8" // the host's mime table may lack it or say application/javascript
		}
		assets[name] = Asset{Body: body, ContentType: ct, ETag: `"` + hex.EncodeToString(sum[:12]) + `"`}
	}
	for _, f := range []string{"swagger-ui-bundle.js", "swagger-ui.css"} {
		add(SwaggerPath(f), "swagger-ui/"+f)
	}
	static, err := fs.ReadDir(files, "static")
	if err != nil {
		panic(err)
	}
	for _, e := range static {
		add(e.Name(), "static/"+e.Name())
	}
}

// SwaggerPath is the asset name of a vendored Swagger UI file.
func SwaggerPath(file string) string {
	return "swagger-ui-" + SwaggerUIVersion + "/" + file
}

// Lookup returns the asset served at /assets/<name>.
func Lookup(name string) (Asset, bool) {
	a, ok := assets[name]
	return a, ok
}

// Page is what every page template reads.
type Page struct {
	// SignedIn is set when the request carries a configuration-manager
	// session; User names its administrator.
	SignedIn bool
	User     string
	// Platform is set for a platform administrator (every tenant).
	Platform bool
	// CSRFHeader and CSRFToken are the header the page's scripts add to
	// every write, and its value.
	CSRFHeader, CSRFToken string
	// LoginURL offers the login to a visitor without a session; it comes
	// back to the page afterwards.
	LoginURL string
	// SwaggerUI is the asset directory of the vendored Swagger UI.
	SwaggerUI string
}

// Render executes the page template name (e.g. "apiref.html").
func Render(name string, p Page) ([]byte, error) {
	p.SwaggerUI = "swagger-ui-" + SwaggerUIVersion
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, p); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	return buf.Bytes(), nil
}
