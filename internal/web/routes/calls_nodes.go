package routes

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"
)

// nodeView is one FreeSWITCH node as GET /api/telephony/nodes shows it.
type nodeView struct {
	Name      string `json:"name"`
	Address   string `json:"address"`
	Connected bool   `json:"connected"`
	// Since is when Connected last changed on this replica.
	Since time.Time `json:"since,omitzero"`
	// LeaseHolder is the replica that consumes the node's events ("" when
	// none does); EventsHere is true when that is this replica.
	LeaseHolder  string    `json:"lease_holder"`
	EventsHere   bool      `json:"events_here"`
	CoreUUID     string    `json:"core_uuid"`
	LastEventAt  time.Time `json:"last_event_at,omitzero"`
	LiveChannels int64     `json:"live_channels"`
}

// listNodes answers GET /api/telephony/nodes (platform credentials only).
func (r *callRoutes) listNodes(c *fiber.Ctx) error {
	p := principal(c)
	if !p.Platform() || !p.Can("calls.read") {
		return newError(fiber.StatusForbidden, "forbidden", "the node list is for platform credentials")
	}
	out, err := r.nodeViews(c.UserContext())
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// nodeViews are the FreeSWITCH nodes as this replica sees them (the node
// list and the servers page).
func (d CallDeps) nodeViews(ctx context.Context) ([]nodeView, error) {
	out := []nodeView{}
	for _, n := range d.Control.Nodes() {
		v := nodeView{Name: n.Name, Address: n.Addr, Connected: n.Up, Since: n.Since, EventsHere: n.EventsHeld}
		if d.LeaseHolder != nil {
			holder, err := d.LeaseHolder(ctx, n.Name)
			if err != nil {
				return nil, err
			}
			v.LeaseHolder = holder
		}
		info, err := d.Tracker.NodeInfo(ctx, n.Name)
		if err != nil {
			return nil, err
		}
		v.CoreUUID, v.LiveChannels, v.LastEventAt = info.CoreUUID, info.LiveChannels, info.LastEventAt
		if n.LastEvent.After(v.LastEventAt) {
			v.LastEventAt = n.LastEvent.UTC()
		}
		out = append(out, v)
	}
	return out, nil
}
