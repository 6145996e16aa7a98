package routes

import (
	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/models"
)

// Agent status (resources.md §2.2): an agent logs in, out or takes a break
// by this endpoint (or a feature code). It is a write of the agent's
// status through the store like any other, so the change reaches every
// FreeSWITCH node as "callcenter_config agent set status" through the
// outbox (package callcenter) and dashboards see it as a change event.

// agentRoutes declares the agent status route.
func (s *server) agentRoutes() []Route {
	return []Route{
		{Method: "POST", Path: "/api/tenants/:tenant/agents/:id/status", Summary: "Set a queue agent's status (mod_callcenter's Logged Out, Available, Available (On Demand), On Break) and break reason; applied on every FreeSWITCH node", Tag: "agents",
			Auth: AuthAPI, Access: Access{Perm: "config.write", Scope: ScopeTenant}, Request: "AgentStatusChange", Response: "Agent", Handler: s.setAgentStatus},
	}
}

// agentSchemas are the shapes of agentRoutes; the status values are the
// agents resource's own enum.
func agentSchemas() obj {
	var values []string
	for _, res := range models.Resources {
		if f := res.Field("status"); res.Name == "agents" && f != nil {
			values = f.Enum
		}
	}
	return obj{
		"AgentStatusChange": obj{"type": "object", "additionalProperties": false, "required": []string{"status"}, "properties": obj{
			"status":       obj{"type": "string", "enum": values, "description": "logged_out, available, available_on_demand (rung only when asked) or on_break"},
			"break_reason": obj{"type": []string{"string", "null"}, "maxLength": 64, "description": "shown in dashboards; cleared when omitted"},
		}},
	}
}

func (s *server) setAgentStatus(c *fiber.Ctx) error {
	in, err := decodeObject(c)
	if err != nil {
		return err
	}
	bad := map[string]string{}
	for k := range in {
		if k != "status" && k != "break_reason" {
			bad[k] = "unknown field"
		}
	}
	if _, ok := in["status"]; !ok {
		bad["status"] = "required"
	}
	if len(bad) > 0 {
		return &models.ValidationError{Fields: bad}
	}
	if _, ok := in["break_reason"]; !ok {
		in["break_reason"] = nil
	}
	rec, err := s.Store.Update(c.UserContext(), s.Store.Registry().Resource("agents"), tenantOwner(c), c.Params("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(rec)
}
