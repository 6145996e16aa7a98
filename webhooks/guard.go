package webhooks

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrRefusedTarget marks a delivery refused by the SSRF guard.
var ErrRefusedTarget = errors.New("refused target")

// sharedSpace is RFC 6598's carrier-grade NAT range, private in practice.
var sharedSpace = netip.MustParsePrefix("100.64.0.0/10")

// forbiddenReason says why ip may not be a webhook target, or "".
func forbiddenReason(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsPrivate(), sharedSpace.Contains(ip):
		return "private"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	}
	return ""
}

// checkURL refuses what is never a target: other schemes than https (and
// http when allowed), userinfo, no host.
func checkURL(raw string, allowHTTP bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: not an absolute URL", ErrRefusedTarget)
	}
	switch {
	case u.User != nil:
		return nil, fmt.Errorf("%w: the URL carries credentials", ErrRefusedTarget)
	case u.Scheme == "https":
	case u.Scheme == "http" && allowHTTP:
	default:
		return nil, fmt.Errorf("%w: scheme %s is not allowed (https only)", ErrRefusedTarget, u.Scheme)
	}
	return u, nil
}

// newClient is the HTTP client deliveries use. The guard sits in the
// dialer's Control hook, which sees the address actually connected to
// after name resolution (every resolved address, every redirect, every
// reconnect), so a name that resolves to a public address when checked and
// to a private one when used gets nowhere. Redirects are not followed: a
// 3xx answer is a failed delivery.
func newClient(allowPrivate bool) *http.Client {
	dialer := &net.Dialer{
		Timeout: 10 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			if allowPrivate {
				return nil
			}
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return fmt.Errorf("%w: address %q", ErrRefusedTarget, address)
			}
			ip, err := netip.ParseAddr(host)
			if err != nil {
				return fmt.Errorf("%w: address %q", ErrRefusedTarget, address)
			}
			if why := forbiddenReason(ip); why != "" {
				return fmt.Errorf("%w: %s is a %s address", ErrRefusedTarget, ip, why)
			}
			return nil
		},
	}
	tr := &http.Transport{
		Proxy:                 nil, // a proxy would dial for us, past the guard
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
