package routes

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/models"
)

// WidgetSIPUserTTL is how long a webrtc widget's visitor user is known to
// the directory (fixed): long enough for a browser to register and place
// its call, short enough that a copied password is soon worthless. A call
// in progress outlives it: FreeSWITCH authenticates only the REGISTER and
// the INVITE.
const WidgetSIPUserTTL = 10 * time.Minute

// widgetSession issues a webrtc widget's visitor a SIP user: a random user
// id in the tenant's part of the SIP domain and a random password, shown
// once (only the digest hash is stored, in the database so that every
// replica's XML service answers it at once and a restart loses none). Its
// context reaches only the widget's destination (fsxml, dialplan/widget.go).
func (r *callRoutes) widgetSession(c *fiber.Ctx, o models.Owner, publicID, target, visitor string) error {
	token, password := make([]byte, 12), make([]byte, 16)
	if _, err := rand.Read(token); err != nil {
		return err
	}
	if _, err := rand.Read(password); err != nil {
		return err
	}
	user := naming.WidgetUserID(hex.EncodeToString(token), o.Tenant)
	pass := hex.EncodeToString(password)
	now := time.Now()
	expires := now.Add(WidgetSIPUserTTL)
	err := r.Store.IssueWidgetSIPUser(c.UserContext(), models.WidgetSIPUser{
		Username: user, Tenant: o.Tenant, Widget: publicID, CallerName: visitor,
		A1Hash: naming.A1Hash(user, r.SIPDomain, pass), ExpiresAt: expires.Unix(),
	}, now)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{
		"mode": "webrtc",
		"sip": fiber.Map{
			"username":      user,
			"password":      pass,
			"domain":        r.SIPDomain,
			"uri":           "sip:" + user + "@" + r.SIPDomain,
			"websocket_url": r.SIPWSURL,
		},
		"dial":       target,
		"dial_uri":   "sip:" + target + "@" + r.SIPDomain,
		"expires_at": expires.UTC().Format(time.RFC3339),
		"expires_in": int(WidgetSIPUserTTL.Seconds()),
	})
}
