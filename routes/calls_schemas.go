package routes

// CallSchemas are the OpenAPI shapes of CallRoutes, for Deps.Schemas.
func CallSchemas() map[string]any {
	str := obj{"type": "string"}
	num := obj{"type": "integer"}
	ts := obj{"type": "string", "format": "date-time"}
	ref := func(n string) obj { return obj{"$ref": "#/components/schemas/" + n} }
	return map[string]any{
		"Channel": obj{"type": "object", "additionalProperties": false, "required": []string{"id", "node", "uuid", "tenant", "direction", "state",
			"caller_id_name", "caller_id_number", "destination", "extension", "bridged_to", "peer_uuid", "recording", "recording_path",
			"call_uuid", "context", "last_seq"}, "properties": obj{
			"id":   obj{"type": "string", "description": "<technology>/<name>-<tenant>-<sequence>, e.g. SIP/1001-acme-0000002a"},
			"node": str, "uuid": str, "tenant": str, "direction": str,
			"state":          obj{"type": "string", "enum": []string{"ringing", "early", "answered", "bridged", "held", "hangup"}},
			"caller_id_name": str, "caller_id_number": str, "destination": str, "extension": str,
			"started_at": ts, "answered_at": ts, "bridged_at": ts, "bridged_to": str, "peer_uuid": str,
			"recording": obj{"type": "boolean"}, "recording_path": str, "call_uuid": str, "context": str,
			"last_seq":   obj{"type": "integer", "minimum": 0, "description": "sequence of the last event applied (orders the event stream)"},
			"updated_at": ts,
		}},
		"ChannelList": obj{"type": "array", "items": ref("Channel")},
		"CDR": obj{"type": "object", "additionalProperties": false, "required": []string{"id", "tenant", "channel_id", "uuid", "node", "direction",
			"caller_id_name", "caller_id_number", "destination", "extension", "started_at", "answered_at", "ended_at", "duration_seconds",
			"billsec", "hangup_cause", "recording_path"}, "properties": obj{
			"id": num, "tenant": str, "channel_id": str, "uuid": str, "node": str, "direction": str,
			"caller_id_name": str, "caller_id_number": str, "destination": str, "extension": str,
			"started_at": ts, "answered_at": obj{"type": []string{"string", "null"}, "format": "date-time"}, "ended_at": ts,
			"duration_seconds": num, "billsec": num, "hangup_cause": str, "recording_path": str,
		}},
		"CDRList": obj{"type": "array", "items": ref("CDR")},
		"CallRequest": obj{"type": "object", "required": []string{"from", "to"}, "properties": obj{
			"from":      obj{"type": "string", "description": "the caller's mobile (E.164); must equal the extension's configured mobile"},
			"to":        obj{"type": "string", "pattern": `^[0-9+*#]{1,32}$`},
			"extension": obj{"type": "string", "description": "the calling extension (tenant and platform keys; user keys are bound to one)"},
			"tenant":    obj{"type": "string", "description": "platform keys only"},
		}},
		"CallPlaced": obj{"type": "object", "properties": obj{
			"status": obj{"type": "string", "enum": []string{"dialing"}}, "channel": str, "uuid": str, "node": str,
			"tenant": str, "extension": str, "from": str, "to": str,
		}},
		"ChannelAction": obj{"type": "object", "required": []string{"channel"}, "properties": obj{"channel": str}},
		"TransferRequest": obj{"type": "object", "required": []string{"channel", "to"}, "properties": obj{
			"channel": str, "to": obj{"type": "string", "pattern": `^[0-9+*#]{1,32}$`},
		}},
		"RecordRequest": obj{"type": "object", "required": []string{"channel"}, "properties": obj{
			"channel":  str,
			"action":   obj{"type": "string", "enum": []string{"start", "stop"}, "default": "start"},
			"filename": obj{"type": "string", "pattern": `^[A-Za-z0-9._-]{1,100}$`},
		}},
		"ActionDone": obj{"type": "object", "properties": obj{"status": str, "channel": str, "to": str, "path": str}},
	}
}
