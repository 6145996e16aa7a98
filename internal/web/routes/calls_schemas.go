package routes

// callSchemas are the OpenAPI shapes of callAPIRoutes.
func callSchemas() map[string]any {
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
		"Node": obj{"type": "object", "properties": obj{
			"name": str, "address": str, "connected": obj{"type": "boolean"}, "since": ts,
			"lease_holder":  obj{"type": "string", "description": "replica consuming the node's events; empty when none"},
			"events_here":   obj{"type": "boolean", "description": "this replica holds the event lease"},
			"core_uuid":     obj{"type": "string", "description": "the running FreeSWITCH process (changes at every start)"},
			"last_event_at": ts, "live_channels": num,
		}},
		"NodeList": obj{"type": "array", "items": ref("Node")},
		"CDR": obj{"type": "object", "additionalProperties": false, "required": []string{"id", "tenant", "channel_id", "uuid", "node", "direction",
			"caller_id_name", "caller_id_number", "destination", "extension", "started_at", "answered_at", "ended_at", "duration_seconds",
			"billsec", "hangup_cause", "recording_path", "imported"}, "properties": obj{
			"id": num, "tenant": str, "channel_id": str, "uuid": str, "node": str, "direction": str,
			"caller_id_name": str, "caller_id_number": str, "destination": str, "extension": str,
			"started_at": ts, "answered_at": obj{"type": []string{"string", "null"}, "format": "date-time"}, "ended_at": ts,
			"duration_seconds": num, "billsec": num, "hangup_cause": str,
			"recording_path": obj{"type": "string", "description": "the file the call was recorded to, on the FreeSWITCH node (empty: not recorded)"},
			"recording_url":  obj{"type": "string", "description": "GET /api/tenants/<tenant>/cdrs/<id>/recording: present when this server reaches the recording (SWITCHBOARD_RECORDINGS_MOUNT) and its file is there"},
			"imported":       obj{"type": "boolean", "description": "true for CDRs from POST /api/tenants/<tenant>/imports/cdrs (node \"import\", channel_id the external_id)"},
		}},
		"CDRList": obj{"type": "array", "items": ref("CDR")},
		"CallRequest": obj{"type": "object", "required": []string{"from", "to"}, "properties": obj{
			"from":      obj{"type": "string", "description": "the caller's mobile (E.164); must equal the extension's configured mobile"},
			"to":        obj{"type": "string", "pattern": `^[0-9+*#]{1,32}$`},
			"extension": obj{"type": "string", "description": "the calling extension (tenant and platform keys; user keys are bound to one)"},
			"tenant":    obj{"type": "string", "description": "platform keys only"},
		}},
		"WidgetCallRequest": obj{"type": "object", "additionalProperties": false, "properties": obj{
			"number":        obj{"type": "string", "pattern": `^\+[1-9][0-9]{6,14}$`, "description": "callback mode, required: the visitor's phone (E.164), in one of the widget's allowed_countries (default the tenant's country); webrtc mode ignores it"},
			"name":          obj{"type": "string", "maxLength": 40, "description": "required when the widget's ask_name; letters, digits, spaces, dots and hyphens; shown after callerid_name_prefix"},
			"captcha_token": obj{"type": "string", "maxLength": 4096, "description": "required when the widget's require_captcha: the token the captcha widget (Cloudflare Turnstile, hCaptcha) gave the page, checked with the provider's siteverify endpoint (SWITCHBOARD_CAPTCHA_VERIFY_URL, SWITCHBOARD_CAPTCHA_SECRET); without that configuration such a widget answers 501 captcha_not_supported; a rejected token is 403 captcha_failed, an unreachable provider 503 captcha_unavailable"},
		}},
		"WidgetCallPlaced": obj{"type": "object", "required": []string{"status"}, "properties": obj{
			"status": obj{"type": "string", "enum": []string{"dialing"}, "description": "the visitor's phone is being rung"},
		}},
		"WidgetWebRTCSession": obj{"type": "object", "additionalProperties": false, "required": []string{"mode", "sip", "dial", "dial_uri", "expires_at", "expires_in"},
			"description": "What the page's SIP client (SIP.js, JsSIP) needs to call the widget's destination from the browser. The user is known to FreeSWITCH until expires_at; its calls reach only the widget's destination; the password is shown only here (Cache-Control: no-store).",
			"properties": obj{
				"mode": obj{"type": "string", "enum": []string{"webrtc"}},
				"sip": obj{"type": "object", "additionalProperties": false, "required": []string{"username", "password", "domain", "uri", "websocket_url"}, "properties": obj{
					"username":      obj{"type": "string", "description": "authorization user and user part of the SIP URI"},
					"password":      obj{"type": "string", "description": "digest password, random; shown once"},
					"domain":        obj{"type": "string", "description": "the SIP domain (realm), SWITCHBOARD_SIP_DOMAIN"},
					"uri":           obj{"type": "string", "description": "sip:<username>@<domain>"},
					"websocket_url": obj{"type": "string", "format": "uri", "description": "SIP over WebSocket (SWITCHBOARD_SIP_WS_URL), as in the provisioning bundle"},
				}},
				"dial":       obj{"type": "string", "description": "the number to call: the widget's destination"},
				"dial_uri":   obj{"type": "string", "description": "sip:<dial>@<domain>"},
				"expires_at": ts,
				"expires_in": obj{"type": "integer", "description": "seconds the user stays valid (600)"},
			}},
		"CallPlaced": obj{"type": "object", "description": "The Location header names the call resource", "properties": obj{
			"status": obj{"type": "string", "enum": []string{"dialing"}},
			"id":     obj{"type": "string", "description": "the call's id: GET /api/telephony/calls/<id>"},
			"state":  obj{"type": "string", "enum": []string{"queued"}}, "location": str,
			"channel": str, "uuid": str, "node": str,
			"tenant": str, "extension": str, "from": str, "to": str,
		}},
		"Call": obj{"type": "object", "properties": obj{
			"id": str, "node": str, "tenant": str, "extension": str, "from": str, "to": str,
			"state":          obj{"type": "string", "enum": []string{"queued", "ringing_origin", "origin_answered", "ringing_destination", "bridged", "ended", "failed"}},
			"failed_leg":     obj{"type": "string", "enum": []string{"origin", "destination"}, "description": "set once failed: the mobile (origin) or the dialled number (destination)"},
			"hangup_cause":   obj{"type": "string", "description": "FreeSWITCH's hangup cause, e.g. CALL_REJECTED, NO_ROUTE_DESTINATION, USER_BUSY"},
			"reason":         obj{"type": "string", "description": "FreeSWITCH's text when it refused the originate, e.g. -ERR CALL_REJECTED"},
			"origin_channel": str, "origin_uuid": str, "destination_channel": str, "destination_uuid": str,
			"created_at": ts, "ringing_origin_at": ts, "origin_answered_at": ts, "ringing_destination_at": ts,
			"bridged_at": ts, "ended_at": ts, "updated_at": ts,
		}},
		"ChannelAction": obj{"type": "object", "required": []string{"channel"}, "properties": obj{"channel": str}},
		"TransferRequest": obj{"type": "object", "required": []string{"channel", "to"}, "properties": obj{
			"channel": str, "to": obj{"type": "string", "pattern": `^[0-9+*#]{1,32}$`},
		}},
		"RecordRequest": obj{"type": "object", "required": []string{"channel"}, "properties": obj{
			"channel":  str,
			"action":   obj{"type": "string", "enum": []string{"start", "stop"}, "description": "start when left out"},
			"filename": obj{"type": "string", "pattern": `^[A-Za-z0-9._-]{1,100}$`},
		}},
		"ActionDone": obj{"type": "object", "properties": obj{"status": str, "channel": str, "to": str, "path": str}},
	}
}
