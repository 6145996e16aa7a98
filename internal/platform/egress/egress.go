// Package egress is how the server makes HTTP requests (and SMTP dials)
// to addresses that tenants, administrators or operators name: outbound
// webhooks, messaging providers, the captcha verifier. Its client checks
// the address actually connected to (after name resolution, so neither
// "localhost" nor a name that resolves to a public address when checked
// and to a private one when used gets through), follows no redirects,
// bounds every request in time and every answer in size, and uses no
// proxy while it guards (a proxy would dial for it, past the guard).
package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrRefused marks a connection or URL the guard refused.
var ErrRefused = errors.New("refused target")

// ErrTooLarge is returned by a read past an answer's size cap.
var ErrTooLarge = errors.New("answer too large")

// sharedSpace is RFC 6598's carrier-grade NAT range, private in practice.
var sharedSpace = netip.MustParsePrefix("100.64.0.0/10")

// ForbiddenReason says why ip is not a target by default, or "".
func ForbiddenReason(ip netip.Addr) string {
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

// Guard decides which addresses a connection may reach: public ones,
// plus the refused ranges the operator opens.
type Guard struct {
	// AllowAll lets connections reach every address: targets the operator
	// names (SWITCHBOARD_TWILIO_URL) and development setups.
	AllowAll bool
	// Nets are otherwise refused ranges connections may reach (a Kannel
	// host on the operator's network).
	Nets []netip.Prefix
}

// Check refuses ip unless it is public or in the guard's ranges.
func (g Guard) Check(ip netip.Addr) error {
	if g.AllowAll {
		return nil
	}
	ip = ip.Unmap()
	why := ForbiddenReason(ip)
	if why == "" {
		return nil
	}
	for _, n := range g.Nets {
		if n.Contains(ip) {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is a %s address", ErrRefused, ip, why)
}

// control is the dialer hook: it sees every address actually connected
// to (each resolved address, each reconnect).
func (g Guard) control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: address %q", ErrRefused, address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%w: address %q", ErrRefused, address)
	}
	return g.Check(ip)
}

// Dialer is a net.Dialer with the guard in its Control hook, for
// protocols other than HTTP (SMTP relays).
func (g Guard) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: g.control}
}

// ParseNets reads a comma-separated list of CIDRs (a bare address is one
// host).
func ParseNets(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			ip, aerr := netip.ParseAddr(f)
			if aerr != nil {
				return nil, fmt.Errorf("%q is not a CIDR or an IP address", f)
			}
			p = netip.PrefixFrom(ip, ip.BitLen())
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Options configure a client.
type Options struct {
	Guard Guard
	// Timeout bounds a whole request, the answer's body included (15s).
	Timeout time.Duration
	// MaxBody is the most of an answer a read gets; further reads fail
	// with ErrTooLarge (1 MiB).
	MaxBody int64
}

// NewClient is the client every request to a named address goes through.
// Redirects are not followed: a 3xx answer is the answer.
func NewClient(o Options) *http.Client {
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Second
	}
	if o.MaxBody <= 0 {
		o.MaxBody = 1 << 20
	}
	dialer := o.Guard.Dialer(min(o.Timeout, 10*time.Second))
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    64,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ResponseHeaderTimeout:  o.Timeout,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	if o.Guard.AllowAll {
		// Nothing to guard (the operator's own URLs): an operator's
		// HTTPS_PROXY applies, as it did before this package.
		tr.Proxy = http.ProxyFromEnvironment
	}
	return &http.Client{
		Transport:     capped{rt: tr, max: o.MaxBody},
		Timeout:       o.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// capped bounds every answer's body.
type capped struct {
	rt  http.RoundTripper
	max int64
}

func (c capped) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: c.max}
	return resp, nil
}

type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, ErrTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// CheckURL refuses what is never a target: other schemes than https (and
// http when allowed), credentials in the URL, no host.
func CheckURL(raw string, allowHTTP bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("%w: not an absolute URL", ErrRefused)
	}
	switch {
	case u.User != nil:
		return nil, fmt.Errorf("%w: the URL carries credentials", ErrRefused)
	case u.Scheme == "https":
	case u.Scheme == "http" && allowHTTP:
	default:
		if allowHTTP {
			return nil, fmt.Errorf("%w: scheme %s is not allowed (http or https only)", ErrRefused, u.Scheme)
		}
		return nil, fmt.Errorf("%w: scheme %s is not allowed (https only)", ErrRefused, u.Scheme)
	}
	return u, nil
}

// Hosts are the hosts the operator lets tenants name in provider URLs:
// exact names or addresses, "*.example.net" for the names under a domain,
// "*" for any host. Empty allows none.
type Hosts []string

// ParseHosts reads a comma-separated list.
func ParseHosts(s string) (Hosts, error) {
	var out Hosts
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f == "" {
			continue
		}
		h := strings.TrimPrefix(f, "*.")
		if f != "*" && (h == "" || strings.ContainsAny(h, "/:@*?# ") && !isIPv6(h)) {
			return nil, fmt.Errorf("%q is not a host name, an address, *.domain or *", f)
		}
		out = append(out, strings.Trim(f, "[]"))
	}
	return out, nil
}

func isIPv6(s string) bool {
	ip, err := netip.ParseAddr(strings.Trim(s, "[]"))
	return err == nil && ip.Is6()
}

// Allows says whether host (a URL's Hostname) is on the list.
func (h Hosts) Allows(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return false
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.Unmap().String()
	}
	for _, p := range h {
		switch {
		case p == "*":
			return true
		case strings.HasPrefix(p, "*."):
			if strings.HasSuffix(host, p[1:]) {
				return true
			}
		case p == host:
			return true
		default:
			if ip, err := netip.ParseAddr(p); err == nil && ip.Unmap().String() == host {
				return true
			}
		}
	}
	return false
}

// CheckURL is CheckURL (http allowed) with the host on the list.
func (h Hosts) CheckURL(raw string) (*url.URL, error) {
	u, err := CheckURL(raw, true)
	if err != nil {
		return nil, err
	}
	if !h.Allows(u.Hostname()) {
		return nil, fmt.Errorf("%w: host %s is not in this installation's allowed provider hosts", ErrRefused, u.Hostname())
	}
	return u, nil
}

// Kind is what became of a failed request, for a fixed message instead
// of the error's text.
type Kind string

// The kinds of failure.
const (
	Refused     Kind = "refused"     // the guard refused the address
	Timeout     Kind = "timeout"     // no answer in time
	TooLarge    Kind = "too_large"   // the answer exceeded the cap
	Unreachable Kind = "unreachable" // name, connection or TLS failure
)

// KindOf classifies a request's error.
func KindOf(err error) Kind {
	var ne net.Error
	switch {
	case errors.Is(err, ErrRefused):
		return Refused
	case errors.Is(err, ErrTooLarge):
		return TooLarge
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return Timeout
	}
	return Unreachable
}
