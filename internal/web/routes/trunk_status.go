package routes

import (
	"context"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/freeswitch/gateways/gwstate"
	"github.com/switchboard/switchboard/internal/models"
)

// A SIP trunk's live state: what each FreeSWITCH node last said of the
// trunk's sofia gateway (gwstate keeps it in Redis from mod_sofia's
// events and status answers). Read-only, beside the trunk's object, with
// the access of reading the trunk.

// trunkStatus is GET /api/sip_trunks/:key/status.
type trunkStatus struct {
	TrunkID  int64           `json:"trunk_id"`
	Name     string          `json:"name"`
	Enabled  bool            `json:"enabled"`
	Gateways []gwstate.State `json:"gateways"`
}

func (s *server) trunkStatusRoutes() []Route {
	res := resourceNamed("sip_trunks")
	return []Route{
		{Method: "GET", Path: resourcePath(res) + "/:key/status", Summary: "A SIP trunk's live gateway state on each FreeSWITCH node: registered, failed, down, up (not registering), registering or unknown (the node is not connected), with FreeSWITCH's own state and since when", Tag: res.Name, Auth: AuthAPI, Access: crudAccess(res, "get"), Response: "TrunkStatus", Handler: s.trunkStatus},
	}
}

func trunkStatusSchemas() map[string]any {
	str := obj{"type": "string"}
	ts := obj{"type": "string", "format": "date-time"}
	return map[string]any{
		"TrunkStatus": obj{"type": "object", "additionalProperties": false, "required": []string{"trunk_id", "name", "enabled", "gateways"}, "properties": obj{
			"trunk_id": obj{"type": "integer"}, "name": obj{"type": "string", "description": "the trunk's name, also its sofia gateway's"},
			"enabled":  obj{"type": "boolean"},
			"gateways": obj{"type": "array", "description": "one entry per node that reported the gateway, by node name; empty when no connected node holds it", "items": obj{"$ref": "#/components/schemas/GatewayState"}},
		}},
		"GatewayState": obj{"type": "object", "additionalProperties": false, "required": []string{"gateway", "node", "condition", "state", "ping_status", "since", "updated_at"}, "properties": obj{
			"gateway":     str,
			"node":        obj{"type": "string", "description": "the FreeSWITCH node (server name)"},
			"profile":     obj{"type": "string", "description": "the sofia profile that holds the gateway"},
			"condition":   obj{"type": "string", "enum": gwstate.Conditions, "description": "registered (REGED); failed (FAILED, FAIL_WAIT, TIMEOUT); down (DOWN, UNREGISTER, or not registering and its pings fail); up (not registering, usable); registering (UNREGED, TRYING, REGISTER, EXPIRED); unknown (the node's event connection is down)"},
			"state":       obj{"type": "string", "description": "mod_sofia's registration state, the last the node reported (UNREGED, TRYING, REGISTER, REGED, UNREGISTER, FAILED, FAIL_WAIT, EXPIRED, NOREG, DOWN, TIMEOUT)"},
			"ping_status": obj{"type": "string", "description": "mod_sofia's gateway status: UP or DOWN (INVALID when unset)"},
			"sip_status":  obj{"type": "integer", "description": "the SIP answer that caused the last change, when one did (e.g. 403)"},
			"sip_phrase":  str,
			"register_ip": obj{"type": "string", "description": "where the registration went"}, "register_port": obj{"type": "integer"},
			"since":      obj{"type": "string", "format": "date-time", "description": "when the condition last changed"},
			"updated_at": ts,
		}},
	}
}

// gatewayStates is the live gateway state the pages and the API read.
func (s *server) gatewayStates() *gwstate.Store { return gwstate.New(s.Redis, s.KeyPrefix) }

func (s *server) trunkStatus(c *fiber.Ctx) error {
	rec, err := s.Store.Get(c.UserContext(), resourceNamed("sip_trunks"), models.Owner{}, c.Params("key"))
	if err != nil {
		return err
	}
	out, err := s.trunkStatusOf(c.UserContext(), rec)
	if err != nil {
		return err
	}
	return c.JSON(out)
}

// trunkStatusOf is a trunk record's live state.
func (s *server) trunkStatusOf(ctx context.Context, rec models.Record) (trunkStatus, error) {
	out := trunkStatus{Name: str(rec["name"]), Gateways: []gwstate.State{}}
	out.TrunkID, _ = rec["id"].(int64)
	out.Enabled, _ = rec["enabled"].(bool)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	states, err := s.gatewayStates().Gateway(ctx, out.Name)
	if err != nil {
		return out, err
	}
	out.Gateways = append(out.Gateways, states...)
	return out, nil
}
