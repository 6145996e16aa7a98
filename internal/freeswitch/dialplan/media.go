package dialplan

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MediaURLs forms the addresses FreeSWITCH nodes play tenant audio from:
// the control plane's /fs/media files through mod_http_cache
// (http_cache://<Base>/<tenant>/<file>?sig=<signature>), so a node needs
// no shared mount and fetches each file once into its cache.
//
// The signature, not HTTP Basic in the URL, is the node's credential: a
// URL is written into the dialplan, channel variables and the node's log,
// and Basic credentials there would open every /fs/xml answer (directory
// hashes included) to whoever reads them. A signature opens one file.
// It carries no expiry on purpose: mod_http_cache keys its cache by the
// whole URL, and rendered documents are cached by generation, not time.
type MediaURLs struct {
	// Base is the /fs/media address as the nodes reach it, e.g.
	// https://sb.example.com/fs/media; "" renders local paths under
	// Options.SoundsDir instead.
	Base string
	// Key signs each file's path (32 bytes, derived from the server key).
	Key []byte
}

// mediaSigLen is the signature's length in hex digits (128 bits).
const mediaSigLen = 32

// Sign is the signature of a library path <tenant>/<rel...>.
func (m MediaURLs) Sign(path string) string {
	mac := hmac.New(sha256.New, m.Key)
	mac.Write([]byte("fs-media\x00" + path))
	return hex.EncodeToString(mac.Sum(nil))[:mediaSigLen]
}

// Verify says whether sig is the signature of path; constant time.
func (m MediaURLs) Verify(path, sig string) bool {
	if len(m.Key) == 0 || len(sig) != mediaSigLen {
		return false
	}
	return hmac.Equal([]byte(m.Sign(path)), []byte(sig))
}

// URL is the http_cache:// address of the library file <tenant>/<rel...>,
// or "" when the base or a part is not safe to render (every part is a
// validToken, so nothing a user wrote can form ${ or leave the path).
func (m MediaURLs) URL(tenant string, rel ...string) string {
	if !validMediaBase(m.Base) || len(m.Key) == 0 || !validTenant(tenant) {
		return ""
	}
	path := tenant
	for _, r := range rel {
		if !validToken(r, "") {
			return ""
		}
		path += "/" + r
	}
	return "http_cache://" + strings.TrimRight(m.Base, "/") + "/" + path + "?sig=" + m.Sign(path)
}

// validMediaBase accepts an http(s) URL of URL-safe characters only: no
// $ { } (no expansion), no quotes, spaces, commas or !, which separate
// list items in file_string:// and chime lists.
func validMediaBase(s string) bool {
	rest, ok := strings.CutPrefix(s, "http://")
	if !ok {
		rest, ok = strings.CutPrefix(s, "https://")
	}
	if !ok || rest == "" || len(s) > 200 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._~:/-[]", c) >= 0) {
			return false
		}
	}
	return true
}

// ValidMediaBase reports whether base can be rendered as MediaURLs.Base
// (configuration checks it at start).
func ValidMediaBase(base string) bool { return validMediaBase(base) }

// promptFile is where a node plays a tenant's voice prompt file from: its
// signed media URL when a media base is configured, else
// <SoundsDir>/<tenant>/<filename> on a mount; "" when unknown or unsafe.
func (p *planner) promptFile(filename string) string {
	if !validToken(filename, "") {
		return ""
	}
	if p.opts.Media.Base != "" {
		return p.opts.Media.URL(p.tenant, filename)
	}
	dir := strings.TrimRight(p.opts.SoundsDir, "/")
	if dir != "" && !validToken(strings.ReplaceAll(dir, "/", "_"), "") {
		return ""
	}
	return dir + "/" + p.tenant + "/" + filename
}
