package routes

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/provision"
	"github.com/switchboard/switchboard/internal/models"
)

// Desk phones fetch their configuration from /provision/<file> (the
// provisioning server address configured on the phone, or handed out by
// DHCP option 66). The credential is the device's own: HTTP Basic with its
// provisioning_username (default its MAC) and provisioning_password, never
// an API key or administrator; Yealink and Poly phones both send Basic when
// challenged. Put TLS in front: phones send it in the clear otherwise.

const provisionRealm = `Basic realm="switchboard provisioning", charset="UTF-8"`

func (s *server) provisionRoutes() []Route {
	return []Route{
		{Method: "GET", Path: "/provision/:file", Summary: "A managed device's configuration file, by MAC address (12 hex digits, separators allowed): Yealink <mac>.cfg, Poly <mac>.cfg (master) and <mac>-phone.cfg; HTTP Basic with the device's provisioning_username (default the MAC) and provisioning_password", Tag: "devices", Auth: AuthCustom, Produces: "text/plain, application/xml", Handler: s.provisionFile},
	}
}

// provisionFile answers a phone's file. Without credentials it challenges
// before any lookup, so probing MACs costs a credential guess; an unknown
// MAC and wrong credentials both count as failed authentications of the
// address (the API's limit), so neither can be enumerated quickly.
func (s *server) provisionFile(c *fiber.Ctx) error {
	mac, kind := provision.FileMAC(c.Params("file"))
	if mac == "" {
		return models.ErrNotFound
	}
	user, pass, ok := parseBasic(c.Get(fiber.HeaderAuthorization))
	if !ok || !strings.HasPrefix(c.Get(fiber.HeaderAuthorization), "Basic ") {
		return provisionChallenge(c)
	}
	ctx := c.UserContext()
	addr := c.IP()
	if retry, blocked := s.auth.limit.authBlocked(ctx, addr); blocked {
		return tooMany(c, retry, "failed authentications from this address")
	}
	failed := func(err error) error {
		if retry, blocked := s.auth.limit.authFailed(ctx, addr); blocked {
			return tooMany(c, retry, "failed authentications from this address")
		}
		return err
	}
	o, dev, err := s.Store.DeviceByMAC(ctx, mac)
	if errors.Is(err, models.ErrNotFound) {
		return failed(models.ErrNotFound)
	} else if err != nil {
		return err
	}
	wantUser, _ := dev["provisioning_username"].(string)
	if wantUser == "" {
		wantUser = mac
	}
	wantPass, _ := dev["provisioning_password"].(string)
	userOK := subtle.ConstantTimeCompare([]byte(user), []byte(wantUser))
	passOK := subtle.ConstantTimeCompare([]byte(pass), []byte(wantPass))
	if userOK&passOK != 1 || wantPass == "" {
		return failed(provisionChallenge(c))
	}
	if enabled, _ := dev["enabled"].(bool); !enabled {
		return models.ErrNotFound
	}
	d, err := s.deviceSnapshot(c, o, dev)
	if err != nil {
		return err
	}
	body, ctype, err := provision.Render(d, kind)
	if errors.Is(err, provision.ErrNoFile) {
		return models.ErrNotFound
	} else if err != nil {
		return err
	}
	id, _ := dev["id"].(int64)
	if err := s.Store.NoteProvisioned(ctx, o, id, time.Now(), addr, c.Get(fiber.HeaderUserAgent)); err != nil {
		logger(c).Warn("provisioning: recording the download failed", "device", id, "error", err)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, ctype)
	return c.Send(body)
}

func provisionChallenge(c *fiber.Ctx) error {
	c.Set(fiber.HeaderWWWAuthenticate, provisionRealm)
	return newError(fiber.StatusUnauthorized, "unauthorized", "this file needs the device's provisioning credentials")
}

// deviceSnapshot is the device with its own lines' SIP accounts: each line
// names an extension of the device's tenant, read with its SIP secret.
func (s *server) deviceSnapshot(c *fiber.Ctx, o models.Owner, dev models.Record) (provision.Device, error) {
	d := provision.Device{
		MAC: str(dev["mac_address"]), Vendor: str(dev["vendor"]), Model: str(dev["model"]), Label: str(dev["label"]),
		Server: s.SIPDomain,
	}
	exts := s.Store.Registry().Resource("extensions")
	lines, _ := dev["device_lines"].([]any)
	for _, it := range lines {
		l, _ := it.(map[string]any)
		ext := str(l["extension"])
		recs, err := s.Store.Records(c.UserContext(), exts, o, map[string]any{"name": ext})
		if err != nil {
			return d, fmt.Errorf("device line %v: %w", l["line"], err)
		}
		if len(recs) == 0 {
			continue // references are checked on write; gone only mid-change
		}
		e := recs[0]
		shared, _ := l["shared"].(bool)
		d.Lines = append(d.Lines, provision.Line{
			Index: intOf(l["line"]), User: naming.UserID(o.Tenant, ext), Password: str(e["sip_secret"]),
			DisplayName: displayName(e), Label: str(l["label"]), Shared: shared,
		})
	}
	keys, _ := dev["device_keys"].([]any)
	for _, it := range keys {
		k, _ := it.(map[string]any)
		d.Keys = append(d.Keys, provision.Key{Position: intOf(k["position"]), Type: str(k["type"]), Value: str(k["value"]), Label: str(k["label"])})
	}
	return d, nil
}

// displayName is the name part of an extension's caller id ("Ann <1001>"),
// else its first and last name, else its number.
func displayName(e models.Record) string {
	if name, _, ok := strings.Cut(str(e["callerid"]), "<"); ok && strings.TrimSpace(name) != "" {
		return strings.TrimSpace(name)
	}
	if n := strings.TrimSpace(str(e["first_name"]) + " " + str(e["last_name"])); n != "" {
		return n
	}
	return str(e["name"])
}

func intOf(v any) int {
	switch n := v.(type) {
	case int64:
		return int(n)
	case float64:
		return int(n)
	case int:
		return n
	}
	return 0
}
