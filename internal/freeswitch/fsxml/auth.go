package fsxml

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net"
	"strings"
)

// Refusals of Authorize; the HTTP layer maps them to 401 and 403.
var (
	// ErrUnauthorized means the Basic credentials are missing or wrong.
	ErrUnauthorized = errors.New("xml fetch: credentials missing or wrong")
	// ErrForbidden means the peer address may not fetch.
	ErrForbidden = errors.New("xml fetch: address not allowed")
)

// Authorize decides whether a fetch from the TCP peer with the given
// Authorization header may be served. Every configured check must pass:
// the allow list (on the peer address, never a forwarded header) and the
// Basic credentials. With neither configured only loopback may fetch.
func (s *Service) Authorize(peer net.IP, authorization string) error {
	if !s.allowed(peer) {
		return ErrForbidden
	}
	if s.cfg.User != "" {
		user, pass, ok := parseBasic(authorization)
		// Both compared, always, so timing says nothing about which was wrong.
		u := equalSecret(user, s.cfg.User)
		p := equalSecret(pass, s.cfg.Password)
		if !ok || !u || !p {
			return ErrUnauthorized
		}
		return nil
	}
	if len(s.cfg.Allow) == 0 && (peer == nil || !peer.IsLoopback()) {
		return ErrForbidden
	}
	return nil
}

// AuthorizeMedia decides whether a node may fetch the media library file
// at path (<tenant>/<file> or <tenant>/moh/<class>/<file>): with the
// rendered URL's signature (the credential mod_http_cache has, since it
// sends no Authorization header), or else as a fetch of /fs/xml. The
// allow list, when configured, applies either way.
func (s *Service) AuthorizeMedia(peer net.IP, authorization, path, sig string) error {
	if sig == "" || !s.opts.Media.Verify(path, sig) {
		return s.Authorize(peer, authorization)
	}
	if !s.allowed(peer) {
		return ErrForbidden
	}
	return nil
}

// allowed applies the allow list (true when none is configured).
func (s *Service) allowed(peer net.IP) bool {
	if len(s.cfg.Allow) == 0 {
		return true
	}
	for _, n := range s.cfg.Allow {
		if peer != nil && n.Contains(peer) {
			return true
		}
	}
	return false
}

// parseBasic splits an "Authorization: Basic ..." header.
func parseBasic(h string) (user, pass string, ok bool) {
	const prefix = "basic "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h[len(prefix):]))
	if err != nil {
		return "", "", false
	}
	return strings.Cut(string(raw), ":")
}

// equalSecret compares in constant time, independent of either length.
func equalSecret(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// AuthorizeFax decides whether a node may upload the fax of one call: only
// with the signature rendered into that call's api_hangup_hook (path
// <tenant>/<endpoint id>/<call uuid>, see dialplan.FaxUploadURL), and from
// an allowed address. The /fs/xml credentials do not stand in for it: the
// signature is what ties an upload to the call it was rendered for.
func (s *Service) AuthorizeFax(peer net.IP, path, sig string) error {
	if sig == "" || !s.opts.Media.VerifyFax(path, sig) {
		return ErrUnauthorized
	}
	if !s.allowed(peer) {
		return ErrForbidden
	}
	return nil
}
